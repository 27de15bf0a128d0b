"""The JSON API, version 1 (/api/v1/): thin endpoints over the apps' own functions.

Every endpoint needs a token (Authorization: Bearer ...); access.py decides what it reaches.
The schema is at /api/v1/openapi.json and browsable at /api/v1/docs.
"""

import hashlib
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as ModelValidationError
from django.db import transaction
from django.http import HttpRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from ninja import NinjaAPI, Query, Status
from ninja.errors import HttpError, ValidationError
from ninja.parser import Parser
from ninja.security import HttpBearer

from annotation import rate_limits
from annotation.datafiles.ratings_import import SCORE_COLUMNS
from annotation.datafiles.ratings_layouts import IMPORTERS
from annotation.judging import FORMS
from annotation.models import Campaign, CampaignCriterion, System
from generation.models import GenerationJob, HostedSystem
from generation.service import request_generation
from nlgdata.datafiles import DECODER, DataFileError
from ranking.service import fitting_protocols

from . import bulk, campaigns, export, results
from .access import campaign_for, may_add_campaigns, require
from .campaigns import CampaignRefused
from .criteria import CriterionRefused, create_criterion
from .models import ApiToken, Event, ProlificHook, WebhookEndpoint
from .prolific_events import SignatureRefused, handle, verify
from .schemas import (
    MAX_RECORDS,
    CampaignIn,
    CampaignOut,
    CampaignPatch,
    CriterionIn,
    CriterionOut,
    Error,
    GenerationJobOut,
    Invalid,
    ItemsIn,
    MetricsOut,
    OutputsIn,
    ProgressOut,
    ProlificEventOut,
    RankingOut,
    RatingsOut,
    SystemsIn,
    WebhookIn,
    WebhookOut,
    WrittenOut,
)
from .strict import (
    ITEM_FIELDS,
    OUTPUT_FIELDS,
    SYSTEM_FIELDS,
    FieldsNotTaken,
    not_taken,
    not_taken_answer,
    query_fields_taken,
    record_fields_taken,
)
from .tokens import token_for


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        found = token_for(token)
        if found is not None:  # RateLimited beyond the token's rate: answered 429 below
            rate_limits.count("api", str(found.pk), settings.RATE_LIMIT_API)
        return found


class BoundedParser(Parser):
    """JSON as the data files' reader takes it: numbers the database cannot hold become
    values the record checks refuse, by name."""

    def parse_body(self, request: HttpRequest) -> Any:
        return DECODER.decode(request.body.decode("utf-8"))


class DocumentedApi(NinjaAPI):
    """Its schema also declares the answers that come from before an endpoint runs: a body
    over REQUEST_MAX_BYTES (413, from evalsite's middleware, plain text) on every operation,
    and a body that is not JSON (400) on those that read one."""

    def get_openapi_schema(self, **kwargs: Any) -> Any:
        schema = super().get_openapi_schema(**kwargs)
        for operations in schema["paths"].values():
            for operation in operations.values():
                operation["responses"]["413"] = TOO_LARGE
                if "requestBody" in operation:
                    operation["responses"]["400"] = NOT_JSON
        return schema


TOO_LARGE = {"description": "Request body too large", "content": {"text/plain": {}}}
NOT_JSON = {
    "description": "Cannot parse request body",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}

api = DocumentedApi(
    title="NLG evaluation platform",
    version="1",
    description="Campaigns, data, results and hosted generation, for pipelines and notebooks.",
    auth=TokenAuth(),
    parser=BoundedParser(),
    urls_namespace="api-v1",
)

ERRORS: dict[int, Any] = {
    400: Error,
    401: Error,
    403: Error,
    404: Error,
    422: Error | Invalid,
    429: Error,
}
STANDARD_FIELDS = ("standard_text", "standard_input_kind", "standard_input")


@api.exception_handler(FieldsNotTaken)
def fields_not_taken(request: HttpRequest, error: FieldsNotTaken):
    return api.create_response(request, not_taken_answer(error.names), status=400)


@api.exception_handler(DataFileError)
def data_error(request: HttpRequest, error: DataFileError):
    if error.file_name in bulk.COLLECTIONS:
        where = f"{error.file_name}[{error.line}]" + (f".{error.column}" if error.column else "")
        body = {"detail": f"{where}: {error.message}", "record": error.line}
    else:
        body = {"detail": str(error), "line": error.line}
    return api.create_response(request, {**body, "field": error.column or None}, status=422)


@api.exception_handler(rate_limits.RateLimited)
def rate_limited(request: HttpRequest, limited: rate_limits.RateLimited):
    body = {"detail": f"this token made too many requests: try again in {limited.retry_after} s"}
    response = api.create_response(request, body, status=429)
    response["Retry-After"] = str(limited.retry_after)
    return response


@api.exception_handler(CampaignRefused)
def campaign_refused(request: HttpRequest, error: CampaignRefused):
    return api.create_response(request, {"detail": error.detail, "field": error.field}, status=422)


@api.exception_handler(ValidationError)
def invalid_request(request: HttpRequest, error: ValidationError):
    """A field the request may not send (unknown, or read-only) is 400 naming it; other
    faults of the request's shape stay django-ninja's 422 with its list of errors."""
    names = not_taken(error.errors)
    if names:
        return api.create_response(request, not_taken_answer(names), status=400)
    return api.create_response(request, {"detail": error.errors}, status=422)


def token(request: HttpRequest) -> ApiToken:
    return request.auth  # type: ignore[attr-defined]


def campaign_out(campaign: Campaign) -> dict:
    criteria = [criterion_out(c) for c in campaign.criteria.order_by("name")]
    fields = ["slug", "name", "description", "status", "outputs_per_hit", *STANDARD_FIELDS]
    fields.append("created_at")
    return {**{f: getattr(campaign, f) for f in fields}, "criteria": criteria}


def criterion_out(criterion: CampaignCriterion) -> dict:
    return {
        "name": criterion.name,
        "is_open": criterion.is_open,
        "question": criterion.question_text,
        "shows_input": criterion.shows_input,
        "form": criterion.form,
        "settings": criterion.settings,
        "protocols": fitting_protocols(criterion),
        "judgments_version": criterion.judgments_version,
    }


def criterion_named(campaign: Campaign, name: str) -> CampaignCriterion:
    return get_object_or_404(campaign.criteria, name=name)


# Campaigns ---------------------------------------------------------------------------------


@api.get("/campaigns/", response={200: list[CampaignOut], **ERRORS})
def list_campaigns(request):
    require(token(request), "view")
    scoped = token(request).campaigns.prefetch_related("criteria").order_by("slug")
    return [campaign_out(c) for c in scoped[:MAX_RECORDS]]


@api.post("/campaigns/", response={201: CampaignOut, 409: Error, **ERRORS})
def create_campaign(request, payload: CampaignIn):
    """A draft campaign (with its standard, where given), in the token's scope."""
    if not may_add_campaigns(token(request)):
        raise HttpError(403, "this token may not add campaigns")
    with transaction.atomic():
        campaign = campaigns.create_campaign(payload)
        if campaign is None:
            return Status(409, {"detail": f"a campaign '{payload.slug}' exists already"})
        token(request).campaigns.add(campaign)
    return Status(201, campaign_out(campaign))


@api.get("/campaigns/{slug}/", response={200: CampaignOut, **ERRORS})
def read_campaign(request, slug: str):
    return campaign_out(campaign_for(token(request), slug, "view"))


@api.patch("/campaigns/{slug}/", response={200: CampaignOut, **ERRORS})
def update_campaign(request, slug: str, payload: CampaignPatch):
    """Name, description, status, standard. Opening a campaign with a RankME criterion
    needs its standard (422 naming status otherwise)."""
    campaign = campaign_for(token(request), slug, "change")
    return campaign_out(campaigns.update_campaign(campaign, payload))


@api.get("/campaigns/{slug}/criteria/", response={200: list[CriterionOut], **ERRORS})
def list_criteria(request, slug: str):
    campaign = campaign_for(token(request), slug, "view")
    return [criterion_out(c) for c in campaign.criteria.order_by("name")]


@api.get("/campaigns/{slug}/criteria/{criterion}/", response={200: CriterionOut, **ERRORS})
def read_criterion(request, slug: str, criterion: str):
    return criterion_out(criterion_named(campaign_for(token(request), slug, "view"), criterion))


@api.post("/campaigns/{slug}/criteria/", response={201: CriterionOut, 409: Error, **ERRORS})
def add_criterion(request, slug: str, payload: CriterionIn):
    """A criterion judged with `form` (default rankme) and its `settings`; the model checks
    them (the form's own check for the settings) and a refusal names the field."""
    campaign = campaign_for(token(request), slug, "change")
    try:
        criterion = create_criterion(campaign, payload)
    except CriterionRefused as error:
        return Status(422, {"detail": error.detail, "field": error.field or None})
    if criterion is None:
        return Status(409, {"detail": f"the campaign has a criterion '{payload.name}' already"})
    return Status(201, criterion_out(criterion))


# Data --------------------------------------------------------------------------------------


def system_named(campaign: Campaign, system: str) -> System:
    """The campaign's system called `system`, or else the one whose key it is (a display
    name may hold characters an address cannot)."""
    found = campaign.systems.filter(name=system).first()
    return found or get_object_or_404(campaign.systems, key=system)


@api.post("/campaigns/{slug}/items/", response={200: WrittenOut, **ERRORS})
def add_items(request, slug: str, payload: ItemsIn):
    campaign = campaign_for(token(request), slug, "change")
    record_fields_taken(payload.items, "items", ITEM_FIELDS)
    return bulk.create_items(campaign, payload.items)


@api.post("/campaigns/{slug}/systems/", response={200: WrittenOut, **ERRORS})
def add_systems(request, slug: str, payload: SystemsIn):
    campaign = campaign_for(token(request), slug, "change")
    record_fields_taken(payload.systems, "systems", SYSTEM_FIELDS)
    return bulk.create_systems(campaign, payload.systems)


@api.post("/campaigns/{slug}/systems/{system}/outputs/", response={200: WrittenOut, **ERRORS})
def add_outputs(request, slug: str, system: str, payload: OutputsIn):
    campaign = campaign_for(token(request), slug, "change")
    record_fields_taken(payload.outputs, "outputs", OUTPUT_FIELDS)
    return bulk.create_outputs(campaign, system_named(campaign, system), payload.outputs)


CSV_BODY = {
    "requestBody": {
        "required": True,
        "content": {"text/csv": {"schema": {"type": "string"}}},
        "description": "E2E CrowdFlower CSV, as `manage.py import_ratings` reads it; with"
        " `form`, that judgment form's layout (`manage.py import_ratings --form`)",
    }
}

RATINGS_QUERY = ("criterion", "form", "name")
# The forms whose judgments a ratings file can bring (beside the E2E format).
RATING_FORMS = [name for name in FORMS if name in IMPORTERS]


@api.post(
    "/campaigns/{slug}/ratings/",
    response={200: RatingsOut, **ERRORS},
    openapi_extra=CSV_BODY,
)
def add_ratings(
    request,
    slug: str,
    criterion: str | None = None,
    form: str | None = None,
    name: str = "ratings.csv",
):
    """The request's body is the file; the same bytes sent again import nothing. Without
    `form`, the E2E CrowdFlower CSV (`criterion`: which of its scores to read when it has
    both); with `form`, that form's layout (whose rows name their criteria)."""
    campaign = campaign_for(token(request), slug, "change")
    query_fields_taken(request.GET, RATINGS_QUERY)
    if form is not None and form not in RATING_FORMS:
        known = ", ".join(RATING_FORMS) or "none"
        detail = f"form: no ratings import for {form!r}; one of {known} (or none: E2E)"
        return Status(422, {"detail": detail, "field": "form"})
    if form is not None and criterion is not None:
        detail = f"criterion: a {form} file names its criteria in its rows; leave it out"
        return Status(422, {"detail": detail, "field": "criterion"})
    if form is None and criterion is not None and criterion not in SCORE_COLUMNS:
        known = ", ".join(SCORE_COLUMNS)
        detail = f"criterion: the E2E format has scores for {known}, not {criterion!r}"
        return Status(422, {"detail": detail, "field": "criterion"})
    summary, repeated = bulk.import_ratings_body(
        campaign, request.body, name[:200], criterion, token(request).user, form
    )
    return {"summary": summary, "repeated": repeated}


# Results -----------------------------------------------------------------------------------


@api.get("/campaigns/{slug}/criteria/{criterion}/ranking/", response={200: RankingOut, **ERRORS})
def ranking(request, slug: str, criterion: str):
    campaign = campaign_for(token(request), slug, "view")
    return results.criterion_rankings(criterion_named(campaign, criterion))


@api.get("/campaigns/{slug}/metrics/", response={200: MetricsOut, **ERRORS})
def metrics(request, slug: str):
    return results.metrics(campaign_for(token(request), slug, "view"))


@api.get("/campaigns/{slug}/monitor/", response={200: list[ProgressOut], **ERRORS})
def monitor(request, slug: str):
    return results.monitor(campaign_for(token(request), slug, "view"))


JSONL = {
    "responses": {
        200: {
            "description": "JSON Lines, one judgment a line; the header X-Next-Cursor, when"
            " present, is the `after` of the next page",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    }
}


@api.get("/campaigns/{slug}/judgments/", response={**ERRORS}, openapi_extra=JSONL)
def judgments(request, slug: str, page: Query[export.PageQuery]):
    campaign = campaign_for(token(request), slug, "view")
    lines, next_after = export.judgment_page(campaign, page)
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    if next_after is not None:
        response["X-Next-Cursor"] = str(next_after)
    return response


# Hosted generation -------------------------------------------------------------------------


@api.post(
    "/campaigns/{slug}/systems/{system}/generation/",
    response={202: GenerationJobOut, **ERRORS},
)
def start_generation(request, slug: str, system: str):
    """Queue a job for the outputs the hosted system lacks (or give back the one that is
    queued or running already)."""
    campaign = campaign_for(token(request), slug, "change")
    hosted_systems = HostedSystem.objects.select_related("system")
    found = system_named(campaign, system)
    hosted = get_object_or_404(hosted_systems, system=found)
    return Status(202, results.generation_job(request_generation(hosted)))


@api.get("/campaigns/{slug}/generation/{job_id}/", response={200: GenerationJobOut, **ERRORS})
def generation_progress(request, slug: str, job_id: int):
    campaign = campaign_for(token(request), slug, "view")
    job = get_object_or_404(
        GenerationJob.objects.select_related("hosted__system"),
        pk=job_id,
        hosted__system__campaign=campaign,
    )
    return results.generation_job(job)


# Webhooks ---------------------------------------------------------------------------------


def webhook_out(endpoint: WebhookEndpoint, *, with_secret: bool = False) -> dict:
    """The endpoint; its secret only in the answer that adds it (shown once, issue 39)."""
    fields = ("id", "url", "events", "is_active")
    shown = {f: getattr(endpoint, f) for f in fields}
    return {**shown, "secret": endpoint.secret if with_secret else None}


@api.get("/campaigns/{slug}/webhooks/", response={200: list[WebhookOut], **ERRORS})
def list_webhooks(request, slug: str):
    # Where the campaign's events go: for those who may change it. No secret in the list.
    campaign = campaign_for(token(request), slug, "change")
    return [webhook_out(e) for e in WebhookEndpoint.objects.filter(campaign=campaign)[:100]]


@api.post("/campaigns/{slug}/webhooks/", response={201: WebhookOut, **ERRORS})
def add_webhook(request, slug: str, payload: WebhookIn):
    """Register a URL for the campaign's events; it must be http(s) and resolve to public
    addresses (unless the deployment allows private ones)."""
    campaign = campaign_for(token(request), slug, "change")
    events = payload.events if payload.events is not None else list(Event.values)
    endpoint = WebhookEndpoint(campaign=campaign, url=payload.url, events=events)
    try:
        endpoint.full_clean()
    except ModelValidationError as error:
        field, messages = next(iter(error.message_dict.items()))
        return Status(422, {"detail": f"{field}: {' '.join(messages)}", "field": field})
    endpoint.save()
    return Status(201, webhook_out(endpoint, with_secret=True))


# Prolific's events ----------------------------------------------------------------------------


@api.post(
    "/prolific/{slug}/events/",
    auth=None,
    response={200: ProlificEventOut, 400: Error, 401: Error, 404: Error},
    openapi_extra={"security": []},
)
def prolific_event(request, slug: str):
    """Prolific's submission.status.change events for the campaign, signed with the
    workspace's hook secret (X-Prolific-Request-Signature and -Timestamp); no token."""
    hook = get_object_or_404(ProlificHook.objects.select_related("campaign"), campaign__slug=slug)
    headers = request.headers
    try:
        verify(
            hook.secret,
            headers.get("X-Prolific-Request-Timestamp", ""),
            headers.get("X-Prolific-Request-Signature", ""),
            request.body,
        )
    except SignatureRefused as error:
        return Status(401, {"detail": str(error)})
    try:
        payload = DECODER.decode(request.body.decode("utf-8"))
    except (ValueError, RecursionError):
        return Status(400, {"detail": "the body is not JSON"})
    if not isinstance(payload, dict):
        return Status(400, {"detail": "the body is not a JSON object"})
    event_id = headers.get("X-Event-ID") or hashlib.sha256(request.body).hexdigest()
    handled = handle(hook, event_id[:100], payload)
    return {"outcome": handled.outcome, "repeated": handled.repeated}
