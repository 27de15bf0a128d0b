"""The "openai" backend: any OpenAI-compatible HTTP server (vLLM, TGI, hosted APIs).

Standard library only (urllib and a thread pool): the two endpoints and the retry policy are
a few lines each, and the official client would add a dependency for no gain here.

Retries: 429, 5xx, connection errors and timeouts are retried with exponential backoff
(Retry-After is honoured, capped at backoff_max); other 4xx answers fail that input at once.
The API key is read from the environment variable named by api_key_env, never stored in
settings, so it stays out of the database; only from a variable the deployment's
SecretEnvPolicy allows, checked when the settings are read and again when the key is.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nlgdata.inputs import InputError
from nlgdata.secrets import NO_SECRETS, SecretEnvPolicy

from .base import GenerationResult, Settings, TypedInput
from .linearize import linearize

logger = logging.getLogger(__name__)

ENDPOINTS = ("chat", "completions")
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
    timeout: float = 60.0  # seconds per request
    max_retries: int = 4  # retries after the first attempt
    backoff_initial: float = 1.0  # seconds before the first retry, doubled each time
    backoff_max: float = 30.0
    max_concurrency: int = 4  # requests in flight at once

    @classmethod
    def from_settings(
        cls, values: Mapping[str, Any], secret_env: SecretEnvPolicy = NO_SECRETS
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
        return settings

    @property
    def url(self) -> str:
        path = "/chat/completions" if self.endpoint == "chat" else "/completions"
        return self.base_url.rstrip("/") + path


def _base_url(s: Settings) -> str:
    url = s.string("base_url", required=True)
    # urllib would also open file:// and ftp:// URLs: only HTTP(S) to a named host is sent.
    try:
        host = urllib.parse.urlsplit(url).hostname
    except ValueError:  # e.g. an unclosed [IPv6 bracket
        host = None
    if not url.startswith(("http://", "https://")) or not host or re.search(r"\s", url):
        raise s.error("base_url", f"must be an http:// or https:// URL with a host, got {url!r}")
    return url


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

    def __init__(self, settings: OpenAISettings, secret_env: SecretEnvPolicy = NO_SECRETS) -> None:
        self.settings = settings
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
        request = urllib.request.Request(
            self.settings.url,
            data=json.dumps(body).encode("utf-8"),
            headers=self._headers(),
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.settings.timeout) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise _http_error(exc) from exc
        # URLError, refused or reset connections, timeouts (all OSError), a reply cut short.
        except (OSError, http.client.HTTPException) as exc:
            raise RetryableError(f"connection failed: {exc!r}") from exc
        except json.JSONDecodeError as exc:
            raise RequestFailed(f"response is not JSON: {exc}") from exc

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
        except (KeyError, IndexError, TypeError) as exc:
            raise RequestFailed(f"unexpected response shape: {str(response)[:200]}") from exc
        if not isinstance(text, str):
            raise RequestFailed(f"response has no text: {str(response)[:200]}")
        return text.strip()


def _http_error(exc: urllib.error.HTTPError) -> Exception:
    detail = _read_error_body(exc)
    message = f"HTTP {exc.code}: {detail}"
    if exc.code == 429 or exc.code >= 500:
        return RetryableError(message, retry_after=_retry_after(exc))
    return RequestFailed(message)


def _read_error_body(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read().decode("utf-8", errors="replace")[:300]
    except OSError:
        return exc.reason if isinstance(exc.reason, str) else ""


def _retry_after(exc: urllib.error.HTTPError) -> float | None:
    value = exc.headers.get("Retry-After") if exc.headers else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date; the exponential backoff applies instead
