"""The "openai" backend: any OpenAI-compatible HTTP server (vLLM, TGI, hosted APIs).

Standard library only (urllib and a thread pool): the two endpoints and the retry policy are
a few lines each, and the official client would add a dependency for no gain here.

Retries: 429, 5xx, connection errors and timeouts are retried with exponential backoff
(Retry-After is honoured, capped at backoff_max); other 4xx answers fail that input at once.
The API key is read from the environment variable named by api_key_env, never stored in
settings, so it stays out of the database; only from a variable the deployment's
SecretEnvPolicy allows, checked when the settings are read and again when the key is.

The endpoint is the organiser's, so it is treated as hostile: its host must resolve to
public addresses only unless the deployment's EndpointPolicy allows it (endpoint.py),
checked when the settings are read and before each request, and the connection goes to the
address checked. A redirect is never followed (it would carry the key to another host); an
answer is read up to MAX_RESPONSE_BYTES; of an error's body only the OpenAI-style error
message is kept, cut short, never the raw body (an internal service's page).
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import socket
import ssl
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nlgdata.inputs import InputError
from nlgdata.secrets import NO_SECRETS, SecretEnvPolicy

from .base import GenerationResult, Settings, TypedInput
from .endpoint import PUBLIC_ONLY, EndpointPolicy, EndpointRefused, endpoint_addresses
from .linearize import linearize

logger = logging.getLogger(__name__)

ENDPOINTS = ("chat", "completions")
MAX_RESPONSE_BYTES = 4 << 20  # an answer is a few kB; outputs are cut at MAX_OUTPUT_CHARS
MAX_ERROR_CHARS = 200
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
        cls,
        values: Mapping[str, Any],
        secret_env: SecretEnvPolicy = NO_SECRETS,
        endpoints: EndpointPolicy = PUBLIC_ONLY,
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


def _check_endpoint(s: Settings, url: str, endpoints: EndpointPolicy) -> None:
    target = Target.of(url)
    if endpoints.allows(target.host):
        return  # allowed by name, even if only the workers can resolve it
    try:
        endpoint_addresses(target.host, target.port, endpoints)
    except EndpointRefused as error:
        raise s.error("base_url", str(error)) from None
    except OSError as error:
        raise s.error(
            "base_url",
            f"{target.host} does not resolve from here ({error}); a host only the workers "
            "can resolve may be allowed by name in HOSTED_ENDPOINT_ALLOWED_HOSTS",
        ) from None


@dataclass(frozen=True)
class Target:
    """Where a request goes: scheme, host, port, and path."""

    https: bool
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, url: str) -> Target:
        parts = urllib.parse.urlsplit(url)
        https = parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        return cls(https, parts.hostname or "", port, parts.path or "/")


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
        endpoints: EndpointPolicy = PUBLIC_ONLY,
    ) -> None:
        self.settings = settings
        self.endpoints = endpoints
        self.target = Target.of(settings.url)
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
        connection = self._connection()
        try:
            connection.request(
                "POST", self.target.path, body=json.dumps(body).encode(), headers=self._headers()
            )
            response = connection.getresponse()
            payload = response.read(MAX_RESPONSE_BYTES + 1)
        # Refused or reset connections, timeouts (all OSError), a reply cut short.
        except (OSError, http.client.HTTPException) as exc:
            raise RetryableError(f"connection failed: {exc!r}") from exc
        finally:
            connection.close()
        return _answer(response.status, response.headers.get("Retry-After"), payload)

    def _connection(self) -> http.client.HTTPConnection:
        """A connection to an address of the host checked now (DNS may have changed since
        the settings were saved), pinned to it."""
        target = self.target
        try:
            address = endpoint_addresses(target.host, target.port, self.endpoints)[0]
        except EndpointRefused as exc:
            raise RequestFailed(str(exc)) from None
        except OSError as exc:
            message = f"connection failed: {target.host} does not resolve ({exc})"
            raise RetryableError(message) from exc
        timeout = self.settings.timeout
        if target.https:
            return PinnedHTTPSConnection(target.host, target.port, address, timeout)
        return PinnedHTTPConnection(target.host, target.port, address, timeout)

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


class PinnedHTTPConnection(http.client.HTTPConnection):
    """HTTP to `address`, checked already, whatever the host resolves to by now; the Host
    header still names the host. http.client follows no redirect."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to `address`, its certificate checked against the host's name."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address
        self.tls = ssl.create_default_context()

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)


def _answer(status: int, retry_after: str | None, payload: bytes) -> dict[str, Any]:
    if 300 <= status < 400:
        raise RequestFailed(
            f"HTTP {status}: the endpoint redirects, and redirects are not followed (they "
            "would carry the API key elsewhere): set base_url to the final address"
        )
    if status >= 400:
        message = f"HTTP {status}: {_error_message(payload)}"
        if status == 429 or status >= 500:
            raise RetryableError(message, retry_after=_retry_after(retry_after))
        raise RequestFailed(message)
    if len(payload) > MAX_RESPONSE_BYTES:
        raise RequestFailed(f"response larger than {MAX_RESPONSE_BYTES:,} bytes")
    try:
        response = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise RequestFailed(f"response is not JSON ({len(payload):,} bytes, not shown)") from None
    if not isinstance(response, dict):
        raise RequestFailed("response is not a JSON object")
    return response


def _error_message(payload: bytes) -> str:
    """The message of an OpenAI-style error body ({"error": {"message": ...}}), cut short
    and with control characters replaced; nothing of any other body, which may be an
    internal service's page."""
    try:
        error = json.loads(payload.decode("utf-8"))["error"]
        message = error["message"] if isinstance(error, dict) else error
    except (ValueError, KeyError, TypeError):
        message = None
    if not isinstance(message, str) or not message.strip():
        return f"no error message ({len(payload):,} bytes of body, not shown)"
    printable = "".join(c if c.isprintable() else " " for c in message).strip()
    if len(printable) > MAX_ERROR_CHARS:
        printable = printable[:MAX_ERROR_CHARS] + "..."
    return printable


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date; the exponential backoff applies instead
