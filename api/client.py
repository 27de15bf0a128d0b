"""A small client of the platform's API (/api/v1/), for notebooks and training pipelines.

Standard library only: copy this file next to a notebook, or import it from an install of
the platform; it imports nothing of Django.

    from api.client import Client

    platform = Client("https://eval.example.org", token="nlgeval_...")
    platform.create_campaign("ckpt-eval", "Checkpoint evaluation")
    platform.add_criterion("ckpt-eval", "quality")
    platform.push_items("ckpt-eval", [{"id": "1", "kind": "mr", "input": {...}}])
    platform.push_systems("ckpt-eval", [{"name": "step-20000"}])
    platform.push_outputs("ckpt-eval", "step-20000", [{"item": "1", "text": "..."}])
    ranking = platform.wait_for_ranking("ckpt-eval", "quality")
    for row in ranking["run"]["systems"]:
        print(row["position"], row["system"], row["mu"], row["rank_lo"], row["rank_hi"])
    hook = platform.add_webhook("ckpt-eval", "https://ci.example.org/hook", ["ranking.done"])
    # in the receiver: payload = verify_webhook(hook["secret"], request_headers, request_body)

Records are sent in batches that stay under the server's request limits; sending the same
records again creates nothing (items are known by id, systems by name, outputs by item and
system), so a pipeline may simply retry.
"""

import base64
import csv as csv_module
import hashlib
import hmac
import io
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator
from typing import Any

# The events a webhook may ask for (api.models.Event; docs/api.md says what each carries).
WEBHOOK_EVENTS = ("ranking.done", "criterion.settled", "campaign.complete", "annotator.failed_qc")
# How old a delivery may be before a receiver refuses it as a replay (Standard Webhooks).
WEBHOOK_TOLERANCE_SECONDS = 300
# Under the server's default REQUEST_MAX_BYTES (2.5 MB) and its 5,000 records a request.
BATCH_RECORDS = 2000
BATCH_BYTES = 2_000_000


def segment(name: str) -> str:
    """A name as one segment of a path (a system's display name may hold spaces)."""
    return urllib.parse.quote(name, safe="")


class ApiError(Exception):
    """The server's refusal: its status and what it said (for a bad record, the record's
    index in the batch sent, and the field)."""

    def __init__(self, status: int, body: Any):
        self.status, self.body = status, body
        detail = body.get("detail") if isinstance(body, dict) else body
        super().__init__(f"HTTP {status}: {detail}")


class Client:
    def __init__(self, base_url: str, token: str, timeout: float = 60):
        self.base = base_url.rstrip("/") + "/api/v1"
        self.token, self.timeout = token, timeout

    # Transport -------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: dict | None = None,
        data: bytes | None = None,
        content_type: str = "application/json",
    ):
        """The decoded JSON answer, or (for JSON Lines) the raw response's bytes and headers."""
        url = self.base + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        if body is not None:
            data = json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = response.read()
                if response.headers.get_content_type() == "application/x-ndjson":
                    return payload, response.headers
                return json.loads(payload) if payload else None
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                detail = json.loads(raw)
            except ValueError:
                detail = raw.decode(errors="replace")
            raise ApiError(error.code, detail) from None

    # Campaigns ---------------------------------------------------------------------------------

    def campaigns(self) -> list[dict]:
        return self.request("GET", "/campaigns/")

    def campaign(self, slug: str) -> dict:
        return self.request("GET", f"/campaigns/{slug}/")

    def create_campaign(self, slug: str, name: str, description: str = "", **standard) -> dict:
        """A draft; `standard`: standard_text, standard_input_kind, standard_input."""
        body = {"slug": slug, "name": name, "description": description, **standard}
        return self.request("POST", "/campaigns/", body)

    def update_campaign(self, slug: str, **fields) -> dict:
        """name, description, status ("draft", "open", "closed"), standard_text,
        standard_input_kind, standard_input (a campaign with a RankME criterion opens only
        with a standard). Another field is refused (ApiError 400 naming it)."""
        return self.request("PATCH", f"/campaigns/{slug}/", fields)

    def add_criterion(self, slug: str, name: str, **fields) -> dict:
        """fields: question (needed for names other than quality and naturalness), form (a
        judgment form, default rankme), settings (the form's), shows_input, is_open."""
        return self.request("POST", f"/campaigns/{slug}/criteria/", {"name": name, **fields})

    def criteria(self, slug: str) -> list[dict]:
        """The campaign's criteria, each with its form, settings and fitting views."""
        return self.request("GET", f"/campaigns/{slug}/criteria/")

    def criterion(self, slug: str, name: str) -> dict:
        return self.request("GET", f"/campaigns/{slug}/criteria/{segment(name)}/")

    # Data --------------------------------------------------------------------------------------

    def push_items(self, slug: str, items: Iterable[dict]) -> dict:
        return self._push(f"/campaigns/{slug}/items/", "items", items)

    def push_systems(self, slug: str, systems: Iterable[dict]) -> dict:
        return self._push(f"/campaigns/{slug}/systems/", "systems", systems)

    def push_outputs(self, slug: str, system: str, outputs: Iterable[dict]) -> dict:
        """`system`: its name (or its key, where the name holds a '/')."""
        path = f"/campaigns/{slug}/systems/{segment(system)}/outputs/"
        return self._push(path, "outputs", outputs)

    def import_ratings(
        self,
        slug: str,
        csv: bytes | str,
        name: str = "ratings.csv",
        criterion: str | None = None,
        form: str | None = None,
    ) -> dict:
        """An E2E CrowdFlower CSV, as `manage.py import_ratings` takes it, or with `form` a
        CSV in that judgment form's layout (`import_ratings --form`). A file larger than
        a request may be is sent in parts of whole rows, each with the header, each imported
        in its own transaction (sent again, a part already imported imports nothing); the
        answers, one per part."""
        text = csv.decode("utf-8") if isinstance(csv, bytes) else csv
        parts = csv_parts(text) if len(text.encode()) > BATCH_BYTES else [text]
        answers = []
        for number, part in enumerate(parts, start=1):
            part_name = name if len(parts) == 1 else f"{name} (part {number} of {len(parts)})"
            query = {"name": part_name, "criterion": criterion, "form": form}
            path = f"/campaigns/{slug}/ratings/"
            data = part.encode()
            answers.append(
                self.request("POST", path, query=query, data=data, content_type="text/csv")
            )
        return answers[0] if len(answers) == 1 else {"parts": answers}

    def _push(self, path: str, key: str, records: Iterable[dict]) -> dict:
        total = {"created": 0, "existing": 0}
        for batch in batches(records):
            written = self.request("POST", path, {key: batch})
            for count in total:
                total[count] += written[count]
        return total

    # Results -----------------------------------------------------------------------------------

    def ranking(self, slug: str, criterion: str) -> dict:
        """The views that fit the criterion's form, each with its latest run."""
        return self.request("GET", f"/campaigns/{slug}/criteria/{segment(criterion)}/ranking/")

    def wait_for_ranking(
        self,
        slug: str,
        criterion: str,
        protocol: str = "e2e",
        timeout: float = 600,
        every: float = 2,
    ) -> dict:
        """The protocol's view once its latest run covers every judgment the criterion has
        now (or says there is nothing to rank); TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            ranking = self.ranking(slug, criterion)
            views = {v["protocol"]: v for v in ranking["views"]}
            if protocol not in views:
                fitting = ", ".join(views)
                raise ValueError(f"{protocol} does not fit {criterion}'s form: use {fitting}")
            view = views[protocol]
            run = view["run"]
            current = run and run["judgments_version"] >= ranking["judgments_version"]
            if not view["pending"] and (current or view["nothing_to_rank"]):
                return view
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {protocol} ranking of {slug}/{criterion} in {timeout}s")
            time.sleep(every)

    def metrics(self, slug: str) -> dict:
        return self.request("GET", f"/campaigns/{slug}/metrics/")

    def monitor(self, slug: str) -> list[dict]:
        return self.request("GET", f"/campaigns/{slug}/monitor/")

    def judgments(
        self, slug: str, criterion: str | None = None, page: int = 1000
    ) -> Iterator[dict]:
        """Every submitted judgment, one dict each, fetched a page at a time."""
        after: int | None = 0
        while after is not None:
            query = {"after": after, "limit": page, "criterion": criterion}
            payload, headers = self.request("GET", f"/campaigns/{slug}/judgments/", query=query)
            for line in payload.splitlines():
                if line.strip():
                    yield json.loads(line)
            cursor = headers.get("X-Next-Cursor")
            after = int(cursor) if cursor else None

    # Webhooks ----------------------------------------------------------------------------------

    def webhooks(self, slug: str) -> list[dict]:
        """The campaign's webhook endpoints, each with its secret (a change token's)."""
        return self.request("GET", f"/campaigns/{slug}/webhooks/")

    def add_webhook(self, slug: str, url: str, events: list[str] | None = None) -> dict:
        """Register `url` for `events` (default: all of WEBHOOK_EVENTS); the answer holds
        the secret that signs each delivery (check them with `verify_webhook`)."""
        body: dict[str, Any] = {"url": url}
        if events is not None:
            body["events"] = list(events)
        return self.request("POST", f"/campaigns/{slug}/webhooks/", body)

    # Hosted generation -------------------------------------------------------------------------

    def start_generation(self, slug: str, system: str) -> dict:
        return self.request("POST", f"/campaigns/{slug}/systems/{segment(system)}/generation/")

    def generation_job(self, slug: str, job_id: int) -> dict:
        return self.request("GET", f"/campaigns/{slug}/generation/{job_id}/")


class WebhookRefused(Exception):
    """A delivery that does not come from the platform (bad signature) or is too old."""


def verify_webhook(
    secret: str,
    headers: dict[str, str],
    body: bytes,
    now: float | None = None,
    tolerance: float = WEBHOOK_TOLERANCE_SECONDS,
) -> dict:
    """A delivery checked as Standard Webhooks asks (its timestamp within `tolerance`, its
    `webhook-signature` a v1 HMAC-SHA256 of "id.timestamp.body" under the endpoint's
    secret), and its payload: {"type": one of WEBHOOK_EVENTS, "timestamp", "data"}.
    `headers` as received (any case); WebhookRefused otherwise."""
    found = {name.lower(): value for name, value in headers.items()}
    try:
        message_id, timestamp = found["webhook-id"], found["webhook-timestamp"]
        signatures = found["webhook-signature"]
    except KeyError as missing:
        raise WebhookRefused(f"no {missing.args[0]} header") from None
    moment = time.time() if now is None else now
    if not timestamp.isdigit() or abs(moment - int(timestamp)) > tolerance:
        raise WebhookRefused("too old or badly timed: a replay?")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    versions = [part.split(",", 1) for part in signatures.split()]
    if not any(
        len(v) == 2 and v[0] == "v1" and hmac.compare_digest(v[1], expected) for v in versions
    ):
        raise WebhookRefused("the signature does not match the secret")
    return json.loads(body)


def csv_parts(text: str) -> list[str]:
    """The CSV in parts of whole rows (quoted line breaks kept), each under BATCH_BYTES and
    starting with the header row."""
    rows = list(csv_module.reader(io.StringIO(text, newline="")))
    header, size = rows[0], 0
    parts: list[str] = []
    part: list[list[str]] = []
    for row in rows[1:]:
        line = written([row])
        if part and size + len(line.encode()) > BATCH_BYTES:
            parts.append(written([header, *part]))
            part, size = [], 0
        part.append(row)
        size += len(line.encode())
    if part:
        parts.append(written([header, *part]))
    return parts


def written(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv_module.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def batches(records: Iterable[dict]) -> Iterator[list[dict]]:
    """Records in lists of at most BATCH_RECORDS, and about BATCH_BYTES of JSON."""
    batch: list[dict] = []
    size = 0
    for record in records:
        length = len(json.dumps(record)) + 2
        if batch and (len(batch) >= BATCH_RECORDS or size + length > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(record)
        size += length
    if batch:
        yield batch
