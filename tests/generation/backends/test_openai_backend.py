"""The openai backend against a small OpenAI-compatible server on 127.0.0.1.

The server echoes the prompt; a prompt can script a failure: "503-once" fails the first
attempt, "503-always" every attempt, "429-once" rate-limits once with Retry-After,
"400-always" is a bad request, "slow" answers after the client's timeout, "500-page" is an
internal service's error page, "400-long" a long error message. With `redirect_to` set it
answers every request with a 302 to that URL.

The server is on loopback, which endpoints may reach only where the deployment allows the
host (HOSTED_ENDPOINT_ALLOWED_HOSTS): the backends here are built with LOOPBACK, and the
tests of the rule itself without.
"""

import json
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from generation.backends import (
    PUBLIC_ONLY,
    AddressPolicy,
    SecretEnvPolicy,
    TypedInput,
    check_settings,
    make_backend,
)
from generation.backends.openai_backend import OpenAIBackend, OpenAISettings
from outbound.bodies import MAX_CHARS as MAX_ERROR_CHARS

from .inputs import make_mr

RESPONSE_DELAY = 0.05  # seconds, so that concurrent requests overlap
TEST_SECRETS = SecretEnvPolicy(prefix="EVAL_TEST_")
LOOPBACK = AddressPolicy.allowing(["127.0.0.1"])
INTERNAL_PAGE = b"<html>db-password=hunter2 on redis://10.0.0.3</html>"


class FakeOpenAIServer:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.attempts: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.redirect_to: str | None = None
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.httpd.daemon_threads = True
        # A short poll interval: shutdown() waits for the next poll.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
                server.handle(self)

            def log_message(self, *args) -> None:
                pass

        return Handler

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        body = json.loads(request.rfile.read(int(request.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"] if "messages" in body else body["prompt"]
        with self.lock:
            self.requests.append({"path": request.path, "headers": dict(request.headers), **body})
            self.attempts[prompt] += 1
            attempt = self.attempts[prompt]
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        request.in_flight = True  # type: ignore[attr-defined]
        try:
            time.sleep(RESPONSE_DELAY)
            self._answer(request, prompt, attempt, chat="messages" in body)
        finally:
            self._landed(request)

    def _landed(self, request: BaseHTTPRequestHandler) -> None:
        """The request stops counting as in flight, once: before its response is written,
        since the client may send its next request as soon as it reads the response, before
        this handler's thread would get back to a `finally`."""
        with self.lock:
            if getattr(request, "in_flight", False):
                request.in_flight = False  # type: ignore[attr-defined]
                self.in_flight -= 1

    def _answer(self, request, prompt: str, attempt: int, *, chat: bool) -> None:
        if self.redirect_to:
            return self._send(request, 302, {}, location=self.redirect_to)
        if "500-page" in prompt:
            return self._send(request, 500, INTERNAL_PAGE)
        if "400-long" in prompt:
            return self._send(request, 400, {"error": {"message": "\x1b[31m" + "x" * 1000}})
        if "503-always" in prompt or ("503-once" in prompt and attempt == 1):
            return self._send(request, 503, {"error": {"message": "overloaded"}})
        if "429-once" in prompt and attempt == 1:
            return self._send(request, 429, {"error": {"message": "slow down"}}, retry_after="0")
        # Not a bare "400": the factories name inputs "Place <n>", n counting up over a
        # whole run, so "Place 400" or "Place 1400" would fail a job that expects none.
        if "400-always" in prompt:
            return self._send(request, 400, {"error": {"message": "bad request"}})
        if "slow" in prompt:
            time.sleep(0.25)
        text = f"echo: {prompt}"
        choice = {"message": {"role": "assistant", "content": text}} if chat else {"text": text}
        self._send(request, 200, {"choices": [choice]})

    def _send(
        self,
        request,
        status: int,
        payload: dict | bytes,
        retry_after: str | None = None,
        location: str | None = None,
    ) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self._landed(request)
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        if retry_after is not None:
            request.send_header("Retry-After", retry_after)
        if location is not None:
            request.send_header("Location", location)
        request.end_headers()
        request.wfile.write(data)


@pytest.fixture
def server(monkeypatch):
    # A proxy from the environment must not carry requests meant for 127.0.0.1.
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    fake = FakeOpenAIServer()
    fake.thread.start()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


@pytest.fixture
def other_server():
    """A second server, on another port: where a redirect would send the request."""
    fake = FakeOpenAIServer()
    fake.thread.start()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


def backend_for(server: FakeOpenAIServer, secret_env=TEST_SECRETS, endpoints=LOOPBACK, **settings):
    defaults = {"base_url": server.base_url, "model": "tiny", "backoff_initial": 0.01}
    return make_backend("openai", {**defaults, **settings}, secret_env, endpoints)


def prompt_input(text: str) -> TypedInput:
    """An mr whose linearisation is exactly `text`, as the prompt template is "{input}"."""
    return TypedInput("mr", {"attributes": [[text, "x"]]})


def test_openai_chat_returns_one_text_per_input_in_order(server):
    inputs = [make_mr(name=f"Place {i}") for i in range(5)]
    results = backend_for(server, prompt_template="Describe: {input}").generate(inputs)
    for i, result in enumerate(results):
        assert result.error == ""
        assert result.text.startswith(f"echo: Describe: name[Place {i}], eatType[pub]")
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["model"] == "tiny" and request["temperature"] == 0.0
    assert request["max_tokens"] == 256
    assert request["messages"][-1]["role"] == "user"


def test_openai_completions_endpoint_sends_a_prompt(server):
    backend = backend_for(server, endpoint="completions", max_tokens=20, seed=3)
    [result] = backend.generate([prompt_input("hello")])
    assert result.text == "echo: hello[x]"
    request = server.requests[0]
    assert request["path"] == "/v1/completions"
    assert request["prompt"] == "hello[x]" and request["max_tokens"] == 20 and request["seed"] == 3


def test_openai_chat_sends_the_system_prompt(server):
    backend_for(server, system_prompt="You describe restaurants.").generate([make_mr()])
    messages = server.requests[0]["messages"]
    assert messages[0] == {"role": "system", "content": "You describe restaurants."}


def test_openai_retries_after_a_503_then_succeeds(server):
    [result] = backend_for(server).generate([prompt_input("503-once")])
    assert result.text == "echo: 503-once[x]"
    assert server.attempts["503-once[x]"] == 2


def test_openai_retries_after_a_429(server):
    [result] = backend_for(server).generate([prompt_input("429-once")])
    assert result.text == "echo: 429-once[x]"
    assert server.attempts["429-once[x]"] == 2


def test_openai_exhausted_retries_fail_only_that_input(server):
    inputs = [prompt_input("fine"), prompt_input("503-always"), prompt_input("also fine")]
    results = backend_for(server, max_retries=2).generate(inputs)
    assert results[0].text == "echo: fine[x]" and results[2].text == "echo: also fine[x]"
    assert results[1].text is None
    assert "HTTP 503" in results[1].error and "3 attempts" in results[1].error
    assert server.attempts["503-always[x]"] == 3


def test_openai_bad_request_is_not_retried(server):
    [result] = backend_for(server).generate([prompt_input("400-always")])
    assert result.text is None and "HTTP 400" in result.error
    assert server.attempts["400-always[x]"] == 1


def test_openai_timeout_is_a_per_input_error(server):
    [result] = backend_for(server, timeout=0.1, max_retries=0).generate([prompt_input("slow")])
    assert result.text is None and "connection failed" in result.error


def test_openai_connection_refused_is_a_per_input_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again on leaving: nothing listens there
    backend = make_backend(
        "openai",
        {"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "max_retries": 1,
         "backoff_initial": 0.01},
        endpoints=LOOPBACK,
    )  # fmt: skip
    [result] = backend.generate([make_mr()])
    assert result.text is None and "connection failed" in result.error


def test_openai_reads_the_api_key_from_the_named_variable(server, monkeypatch):
    monkeypatch.setenv("EVAL_TEST_API_KEY", "sk-test-123")
    backend_for(server, api_key_env="EVAL_TEST_API_KEY").generate([make_mr()])
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-test-123"


def test_openai_sends_no_authorization_without_api_key_env(server):
    backend_for(server).generate([make_mr()])
    assert "Authorization" not in server.requests[0]["headers"]


def test_openai_unset_api_key_variable_names_the_setting(server, monkeypatch):
    monkeypatch.delenv("EVAL_TEST_API_KEY", raising=False)
    with pytest.raises(ValueError, match="'api_key_env'.*EVAL_TEST_API_KEY"):
        backend_for(server, api_key_env="EVAL_TEST_API_KEY")


def test_openai_key_variable_must_be_one_the_deployment_allows(server, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://user:db-password@db/evaluation")
    settings = {"base_url": server.base_url, "model": "m", "api_key_env": "DATABASE_URL"}
    for build in (check_settings, make_backend):
        with pytest.raises(ValueError, match="'api_key_env' names DATABASE_URL.*EVAL_TEST_"):
            build("openai", settings, TEST_SECRETS)
    assert server.requests == []


def test_openai_allows_no_key_variable_without_a_policy(server, monkeypatch):
    monkeypatch.setenv("EVAL_TEST_API_KEY", "sk-test-123")
    with pytest.raises(ValueError, match="'api_key_env' names EVAL_TEST_API_KEY"):
        backend_for(server, secret_env=SecretEnvPolicy(), api_key_env="EVAL_TEST_API_KEY")


def test_openai_backend_checks_the_policy_again_when_reading_the_key(server, monkeypatch):
    # Settings built without the check (by hand, or by an older release) are refused too.
    monkeypatch.setenv("DATABASE_URL", "postgres://user:db-password@db/evaluation")
    settings = OpenAISettings(base_url=server.base_url, model="m", api_key_env="DATABASE_URL")
    with pytest.raises(ValueError, match="does not allow"):
        OpenAIBackend(settings, TEST_SECRETS)
    assert server.requests == []


@pytest.mark.parametrize(
    "name, allowed",
    [("EVAL_SECRET_OPENAI", True), ("OPENAI_API_KEY", True), ("EVAL_SECRET", False),
     ("DATABASE_URL", False), ("SECRET_KEY", False)],
)  # fmt: skip
def test_secret_env_policy_allows_the_prefix_and_the_listed_names(name, allowed):
    policy = SecretEnvPolicy(prefix="EVAL_SECRET_", allowed=frozenset({"OPENAI_API_KEY"}))
    assert policy.allows(name) is allowed


def test_secret_env_policy_without_prefix_allows_only_listed_names():
    policy = SecretEnvPolicy(prefix="", allowed=frozenset({"OPENAI_API_KEY"}))
    assert policy.allows("OPENAI_API_KEY") and not policy.allows("DATABASE_URL")


def test_openai_respects_max_concurrency(server):
    inputs = [prompt_input(f"item {i}") for i in range(12)]
    results = backend_for(server, max_concurrency=3).generate(inputs)
    assert all(r.text for r in results)
    assert server.max_in_flight == 3


def test_openai_unknown_kind_is_a_per_input_error_without_a_request(server):
    results = backend_for(server).generate([TypedInput("audio", {}), make_mr()])
    assert results[0].text is None and "audio" in results[0].error
    assert results[1].text is not None
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "settings, setting_named",
    [
        ({"model": "m"}, "base_url"),
        ({"base_url": "gpu-host:8000/v1", "model": "m"}, "base_url"),
        ({"base_url": "file:///etc/passwd", "model": "m"}, "base_url"),
        ({"base_url": "ftp://gpu-host/v1", "model": "m"}, "base_url"),
        ({"base_url": "http:///v1", "model": "m"}, "base_url"),
        ({"base_url": "http://[::1/v1", "model": "m"}, "base_url"),
        ({"base_url": "http://gpu-host/v1 extra", "model": "m"}, "base_url"),
        ({"base_url": "http://h/v1"}, "model"),
        ({"base_url": "http://h/v1", "model": "m", "endpoint": "embeddings"}, "endpoint"),
        ({"base_url": "http://h/v1", "model": "m", "api_key_env": "sk-abc-123"}, "api_key_env"),
        ({"base_url": "http://h/v1", "model": "m", "max_concurrency": 0}, "max_concurrency"),
        ({"base_url": "http://h/v1", "model": "m", "temperature": -1}, "temperature"),
        ({"base_url": "http://h/v1", "model": "m", "timeout": "10"}, "timeout"),
        ({"base_url": "http://h/v1", "model": "m", "max_retries": -1}, "max_retries"),
        ({"base_url": "http://h/v1", "model": "m", "api_key": "sk-abc"}, "api_key"),
        (
            {"base_url": "http://h/v1", "model": "m", "endpoint": "completions",
             "system_prompt": "Be brief."},
            "system_prompt",
        ),
    ],
)  # fmt: skip
def test_openai_invalid_settings_name_the_setting(settings, setting_named):
    with pytest.raises(ValueError, match=f"'{setting_named}'"):
        check_settings("openai", settings)
    with pytest.raises(ValueError, match=f"'{setting_named}'"):
        make_backend("openai", settings)


# Endpoints that cannot reach inside ---------------------------------------------------------


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:{port}/v1",
        "http://localhost:{port}/v1",
        "http://[::1]:{port}/v1",
        "http://[::ffff:127.0.0.1]:{port}/v1",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.5/v1",
        "http://192.168.1.20:8000/v1",
        "http://100.64.0.1/v1",
        "http://0.0.0.0:{port}/v1",
        "https://224.0.0.1/v1",
        "http://[64:ff9b::7f00:1]:{port}/v1",  # NAT64 of 127.0.0.1
        "http://[2002:7f00:1::1]:{port}/v1",  # 6to4 of 127.0.0.1
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",  # NAT64 of the metadata service
    ],
)
def test_openai_refuses_an_internal_endpoint_without_the_setting(server, base_url):
    url = base_url.format(port=server.httpd.server_address[1])
    settings = {"base_url": url, "model": "m"}
    for build in (check_settings, make_backend):
        with pytest.raises(ValueError, match="'base_url' .* not a public address") as error:
            build("openai", settings, TEST_SECRETS, PUBLIC_ONLY)
        assert "HOSTED_ENDPOINT_ALLOWED_HOSTS" in str(error.value)
    assert server.requests == []


def test_openai_allows_an_internal_host_the_deployment_names(server):
    settings = {"base_url": server.base_url, "model": "m"}
    check_settings("openai", settings, TEST_SECRETS, AddressPolicy.allowing([" 127.0.0.1 "]))
    # By name as written in the URL: allowing localhost does not allow 127.0.0.1.
    with pytest.raises(ValueError, match="not a public address"):
        check_settings("openai", settings, TEST_SECRETS, AddressPolicy.allowing(["localhost"]))


def test_openai_unresolvable_host_is_refused_unless_allowed_by_name():
    settings = {"base_url": "http://gpu-box.invalid:8000/v1", "model": "m"}
    with pytest.raises(ValueError, match="'base_url' .*gpu-box.invalid does not resolve from here"):
        check_settings("openai", settings)
    check_settings("openai", settings, endpoints=AddressPolicy.allowing(["GPU-box.invalid"]))


def test_openai_worker_checks_the_endpoint_again_before_each_request(server):
    # Settings saved before the rule (or a name that resolves elsewhere now) reach nothing.
    backend = OpenAIBackend(OpenAISettings(base_url=server.base_url, model="m"), TEST_SECRETS)
    [result] = backend.generate([make_mr()])
    assert result.text is None
    assert "127.0.0.1 resolves to 127.0.0.1, not a public address" in result.error
    assert server.requests == []


def test_openai_checks_every_address_of_a_name_and_connects_to_the_one_checked(server, monkeypatch):
    port = server.httpd.server_address[1]
    resolve = socket.getaddrinfo

    def fake_dns(host, *args, **kwargs):  # DNS is outside: llm.test is public, then loopback
        if host == "llm.test":
            stream = (socket.AF_INET, socket.SOCK_STREAM, 6, "")
            return [(*stream, ("93.184.215.14", port)), (*stream, ("127.0.0.1", port))]
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    settings = {"base_url": f"http://llm.test:{port}/v1", "model": "m"}
    with pytest.raises(ValueError, match="llm.test resolves to 127.0.0.1, not a public"):
        check_settings("openai", settings)
    # Allowed by name, the request goes to the first address checked, under the host's name.
    backend = make_backend("openai", settings, endpoints=AddressPolicy.allowing(["llm.test"]))

    def rebound(host, *args, **kwargs):  # the name moved to loopback, allowed by name
        return resolve("127.0.0.1" if host == "llm.test" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebound)
    [result] = backend.generate([make_mr()])
    assert result.text.startswith("echo:"), result.error
    assert server.requests[0]["headers"]["Host"] == f"llm.test:{port}"


def test_openai_follows_no_redirect_and_sends_the_key_nowhere_else(
    server, other_server, monkeypatch
):
    monkeypatch.setenv("EVAL_TEST_API_KEY", "sk-test-123")
    server.redirect_to = other_server.base_url + "/chat/completions"
    backend = backend_for(server, api_key_env="EVAL_TEST_API_KEY")
    results = backend.generate([make_mr(name=f"Place {n}") for n in range(3)])
    assert all(result.text is None for result in results)
    assert "HTTP 302: the endpoint redirects, and redirects are not followed" in results[0].error
    assert len(server.requests) == 3  # not retried
    assert other_server.requests == []


def test_openai_error_bodies_are_never_shown_raw(server):
    page, long = backend_for(server, max_retries=0).generate(
        [prompt_input("500-page"), prompt_input("400-long")]
    )
    assert page.error == (
        f"failed after 1 attempts: HTTP 500: no error message ({len(INTERNAL_PAGE)} bytes of "
        "body, not shown)"
    )
    assert "hunter2" not in page.error
    assert long.error == "HTTP 400: " + "[31m" + "x" * (MAX_ERROR_CHARS - 4) + "..."
