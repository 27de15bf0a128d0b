"""The "openai" backend: any OpenAI-compatible HTTP server (vLLM, TGI, hosted APIs).

Requests go through the platform's outbound module (outbound/) and a thread pool: the two
endpoints and the retry policy are a few lines each, and the official client would add a
dependency for no gain here.

Retries: 429, 5xx, connection errors and timeouts are retried with exponential backoff
(Retry-After is honoured, capped at backoff_max); other 4xx answers fail that input at once.
The API key is read from the environment variable named by api_key_env, never stored in
settings, so it stays out of the database; only from a variable the deployment's
SecretEnvPolicy allows, checked when the settings are read and again when the key is.

The endpoint is the organiser's, so it is treated as hostile: its host must resolve to
public addresses only unless the deployment's AddressPolicy allows it (outbound/addresses.py),
checked when the settings are read and before each request, and the connection goes to the
address checked. A redirect is never followed (it would carry the key to another host); a
request has `timeout` seconds in all, connecting and reading included; an answer is read up
to MAX_RESPONSE_BYTES; of an error's body only the OpenAI-style error message is kept, cut
short, never the raw body (an internal service's page).
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import outbound
from nlgdata.inputs import InputError
from nlgdata.secrets import NO_SECRETS, SecretEnvPolicy
from outbound import (
    PUBLIC_ONLY,
    AddressPolicy,
    Limits,
    NotResolved,
    OutboundFailed,
    OutboundRefused,
    Target,
)

from .base import GenerationResult, Settings, TypedInput
from .linearize import linearize

logger = logging.getLogger(__name__)

ENDPOINTS = ("chat", "completions")
MAX_RESPONSE_BYTES = 4 << 20  # an answer is a few kB; outputs are cut at MAX_OUTPUT_CHARS
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class OpenAISettings:
    base_url: str  # up to and including the version, e.g. "http://gpu-host:8000/v1"
    model: str
    api_key_env: str | None = None  # name of the environment variable with the key
    endpoint: str = "chat"  # "chat" (/chat/completions) or "completions"
    prompt_template: str = "{input}"
    system_prompt: str | None = None  # chat only
    temperature: float = 0.0
    top_p: float | None = None
    max_tokens: int = 256
    seed: int | None = None
    timeout: float = 60.0  # seconds per request, all of it: connecting, sending, the answer
    max_retries: int = 4  # retries after the first attempt
    backoff_initial: float = 1.0  # seconds before the first retry, doubled each time
    backoff_max: float = 30.0
    max_concurrency: int = 4  # requests in flight at once

    @classmethod
    def from_settings(
        cls,
        values: Mapping[str, Any],
        secret_env: SecretEnvPolicy = NO_SECRETS,
        endpoints: AddressPolicy = PUBLIC_ONLY,
    ) -> OpenAISettings:
        s = Settings("openai", values)
        settings = cls(
            base_url=_base_url(s),
            model=s.string("model", required=True),
            api_key_env=_api_key_env(s, secret_env),
            endpoint=s.choice("endpoint", ENDPOINTS, "chat"),
            prompt_template=s.prompt_template(),
            system_prompt=s.string("system_prompt", None),
            temperature=s.number("temperature", 0.0, minimum=0.0, maximum=2.0),
            top_p=_top_p(s),
            max_tokens=s.integer("max_tokens", 256, minimum=1),
            seed=s.integer("seed", None),
            timeout=s.number("timeout", 60.0, minimum=0.001),
            max_retries=s.integer("max_retries", 4, minimum=0),
            backoff_initial=s.number("backoff_initial", 1.0, minimum=0.0),
            backoff_max=s.number("backoff_max", 30.0, minimum=0.0),
            max_concurrency=s.integer("max_concurrency", 4, minimum=1),
        )
        if settings.system_prompt and settings.endpoint != "chat":
            raise s.error("system_prompt", "only applies to the chat endpoint")
        s.reject_unknown()
        _check_endpoint(s, settings.url, endpoints)  # last: it asks DNS
        return settings

    @property
    def url(self) -> str:
        path = "/chat/completions" if self.endpoint == "chat" else "/completions"
        return self.base_url.rstrip("/") + path


def _base_url(s: Settings) -> str:
    url = s.string("base_url", required=True)
    # Only HTTP(S) to a named host is sent, never file:// or ftp://.
    try:
        parts = urllib.parse.urlsplit(url)
        host, _ = parts.hostname, parts.port
    except ValueError:  # e.g. an unclosed [IPv6 bracket, a port past 65535
        host = None
    if not url.startswith(("http://", "https://")) or not host or re.search(r"\s", url):
        raise s.error("base_url", f"must be an http:// or https:// URL with a host, got {url!r}")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise s.error("base_url", "must have no user, password, query or fragment")
    return url


ALLOWING_HINT = (
    ": endpoints may not reach it unless the deployment allows the host by name in"
    " HOSTED_ENDPOINT_ALLOWED_HOSTS"
)


def _check_endpoint(s: Settings, url: str, endpoints: AddressPolicy) -> None:
    try:
        target = Target.of(url)
        if endpoints.allows(target.host):
            return  # allowed by name, even if only the workers can resolve it
        outbound.check(url, endpoints)
    except OutboundRefused as error:
        raise s.error("base_url", str(error) + ALLOWING_HINT) from None
    except NotResolved as error:
        raise s.error(
            "base_url",
            f"{error.host} does not resolve from here ({error.reason}); a host only the "
            "workers can resolve may be allowed by name in HOSTED_ENDPOINT_ALLOWED_HOSTS",
        ) from None


def _api_key_env(s: Settings, secret_env: SecretEnvPolicy) -> str | None:
    name = s.string("api_key_env", None)
    if name is None:
        return None
    if not _ENV_NAME.match(name):
        raise s.error("api_key_env", f"must be the NAME of an environment variable, got {name!r}")
    if not secret_env.allows(name):
        raise s.error("api_key_env", secret_env.refusal(name))
    return name


def _top_p(s: Settings) -> float | None:
    if s.get("top_p") is None:
        return None
    return s.number("top_p", 1.0, minimum=0.0, maximum=1.0)


class RetryableError(Exception):
    """A failure worth another try: rate limit, server error, lost connection."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RequestFailed(Exception):
    """A failure that another try would not fix (bad request, auth, malformed answer)."""


class OpenAIBackend:
    """Backend "openai": one HTTP request per input, max_concurrency of them at once."""

    def __init__(
        self,
        settings: OpenAISettings,
        secret_env: SecretEnvPolicy = NO_SECRETS,
        endpoints: AddressPolicy = PUBLIC_ONLY,
    ) -> None:
        self.settings = settings
        self.endpoints = endpoints
        self.api_key = self._read_api_key(secret_env)

    def _read_api_key(self, secret_env: SecretEnvPolicy) -> str | None:
        name = self.settings.api_key_env
        if name is None:
            return None
        # Again here, however the settings were built: never read a variable not allowed.
        if not secret_env.allows(name):
            raise ValueError(f"openai: setting 'api_key_env' {secret_env.refusal(name)}")
        key = os.environ.get(name)
        if not key:
            raise ValueError(f"openai: setting 'api_key_env' names {name}, which is not set")
        return key

    def generate(self, inputs: Sequence[TypedInput]) -> list[GenerationResult]:
        if not inputs:
            return []
        workers = min(self.settings.max_concurrency, len(inputs))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai") as pool:
            return list(pool.map(self._generate_one, inputs))

    def prompt(self, item: TypedInput) -> str:
        return self.settings.prompt_template.format(input=linearize(item))

    def _generate_one(self, item: TypedInput) -> GenerationResult:
        try:
            prompt = self.prompt(item)
        except InputError as exc:
            return GenerationResult(text=None, error=str(exc))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            return GenerationResult(text=None, error=f"invalid {item.kind} input: {exc!r}")
        try:
            return GenerationResult(text=self._request_with_retries(self.request_body(prompt)))
        except RetryableError as exc:
            attempts = self.settings.max_retries + 1
            return GenerationResult(text=None, error=f"failed after {attempts} attempts: {exc}")
        except RequestFailed as exc:
            return GenerationResult(text=None, error=str(exc))

    def request_body(self, prompt: str) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {
            "model": s.model,
            "temperature": s.temperature,
            "max_tokens": s.max_tokens,
        }
        if s.endpoint == "chat":
            messages = [{"role": "system", "content": s.system_prompt}] if s.system_prompt else []
            body["messages"] = [*messages, {"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        if s.top_p is not None:
            body["top_p"] = s.top_p
        if s.seed is not None:
            body["seed"] = s.seed
        return body

    def _request_with_retries(self, body: dict[str, Any]) -> str:
        attempt = 0
        while True:
            try:
                return self._parse(self._post(body))
            except RetryableError as exc:
                if attempt >= self.settings.max_retries:
                    raise
                delay = self._backoff(attempt, exc.retry_after)
                logger.info("openai request failed (%s); retry in %.2fs", exc, delay)
                time.sleep(delay)
                attempt += 1

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        delay = self.settings.backoff_initial * 2**attempt
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self.settings.backoff_max)

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        """One request, bounded as a whole by the settings' timeout; the host is checked
        again now (DNS may have changed since the settings were saved) and the connection
        pinned to the address checked."""
        limits = Limits(deadline=self.settings.timeout, max_body=MAX_RESPONSE_BYTES)
        try:
            response = outbound.request(
                "POST",
                self.settings.url,
                body=json.dumps(body).encode(),
                headers=self._headers(),
                policy=self.endpoints,
                limits=limits,
            )
        except OutboundRefused as exc:
            raise RequestFailed(str(exc) + ALLOWING_HINT) from None
        # Refused or reset connections, timeouts, the deadline, a reply cut short.
        except OutboundFailed as exc:
            raise RetryableError(f"connection failed: {exc}") from exc
        return _answer(response)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _parse(self, response: dict[str, Any]) -> str:
        try:
            choice = response["choices"][0]
            chat = self.settings.endpoint == "chat"
            text = choice["message"]["content"] if chat else choice["text"]
        except (KeyError, IndexError, TypeError):
            where = "choices[0].message.content" if chat else "choices[0].text"
            raise RequestFailed(f"unexpected response shape: no {where}") from None
        if not isinstance(text, str):
            raise RequestFailed("response has no text")
        return text.strip()


def _answer(response: outbound.Response) -> dict[str, Any]:
    status = response.status
    if 300 <= status < 400:
        raise RequestFailed(
            f"HTTP {status}: the endpoint redirects, and redirects are not followed (they "
            "would carry the API key elsewhere): set base_url to the final address"
        )
    if status >= 400:
        message = f"HTTP {status}: {outbound.error_message(response.body)}"
        if status == 429 or status >= 500:
            retry_after = _retry_after(response.headers.get("Retry-After"))
            raise RetryableError(message, retry_after=retry_after)
        raise RequestFailed(message)
    if not response.complete:
        raise RequestFailed(f"response larger than {MAX_RESPONSE_BYTES:,} bytes")
    try:
        answer = json.loads(response.body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        size = len(response.body)
        raise RequestFailed(f"response is not JSON ({size:,} bytes, not shown)") from None
    if not isinstance(answer, dict):
        raise RequestFailed("response is not a JSON object")
    return answer


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date; the exponential backoff applies instead
