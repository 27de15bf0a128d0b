"""The one door for outbound HTTP, against servers on 127.0.0.1 that behave as hostile or
broken ones do: a deadline for the whole request whatever the server trickles, answers
read up to their limit, no redirect followed, internal addresses refused."""

import socket
import threading

import pytest

import outbound
from outbound import AddressPolicy, DeadlineExceeded, Limits, OutboundFailed, OutboundRefused
from tests.receivers import reply

LOOPBACK = AddressPolicy.allowing(["127.0.0.1"])


@pytest.fixture
def raw_server():
    """`raw_server(answer)` listens on 127.0.0.1 and, in a thread, reads the first request
    and calls `answer(connection, stop)` (until the client hangs up, or `stop` is set when
    the test ends); the URL."""
    listeners, stop = [], threading.Event()

    def start(answer) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        listeners.append(listener)

        def serve_one():
            try:
                connection, _ = listener.accept()
                with connection:
                    connection.recv(65536)
                    answer(connection, stop)
            except OSError:  # the client hung up, or the test ended first
                return

        threading.Thread(target=serve_one, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}/"

    yield start
    stop.set()
    for listener in listeners:
        listener.close()


def test_a_request_gets_its_answer_under_the_hosts_name(serve):
    server = serve(reply(200, b'{"ok": true}'))
    response = outbound.request(
        "POST", server.url + "x?y=1", body=b"{}", policy=LOOPBACK, limits=Limits(deadline=5)
    )
    assert (response.status, response.body, response.complete) == (200, b'{"ok": true}', True)
    path, headers = server.requests[0]
    assert path == "/x?y=1" and headers["Host"] == f"127.0.0.1:{server.httpd.server_address[1]}"


def test_a_trickling_server_is_cut_off_at_the_deadline(slow):
    """`HTTP/1.1 200 OK`, then a byte every 0.2 s: each byte came well within any per-read
    timeout, so only a deadline for the whole request ends it (before: 10 s per read,
    for ever)."""
    receiver = slow("trickle", interval=0.2)
    with pytest.raises(DeadlineExceeded, match="within 1 s"):
        outbound.request("POST", receiver.url, body=b"{}", policy=LOOPBACK, limits=Limits(1))
    # It had sent what a second allows, not more, and it saw the client hang up.
    assert 1 <= receiver.bytes_sent <= len(b"HTTP/1.1 200 OK\r\n") + 1 / 0.2 + 1
    wait_for(lambda: receiver.hung_up == 1 and receiver.holding == 0)


def test_a_silent_server_is_cut_off_at_the_deadline(slow):
    receiver = slow("silent", interval=0.1)
    with pytest.raises(DeadlineExceeded):
        outbound.request("POST", receiver.url, body=b"{}", policy=LOOPBACK, limits=Limits(0.5))
    assert receiver.requests == 1
    wait_for(lambda: receiver.hung_up == 1)


def test_a_body_trickled_after_quick_headers_is_cut_off_at_the_deadline(raw_server):
    def headers_then_trickle(connection, stop):
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
        while not stop.wait(0.1):
            connection.sendall(b"x")

    url = raw_server(headers_then_trickle)
    with pytest.raises(DeadlineExceeded):
        outbound.request("GET", url, policy=LOOPBACK, limits=Limits(0.6))


def test_an_answer_is_read_up_to_its_limit_and_no_further(serve):
    server = serve(reply(200, b"x" * 3_000_000))
    response = outbound.request("GET", server.url, policy=LOOPBACK, limits=Limits(5, max_body=1000))
    assert (len(response.body), response.complete) == (1000, False)


def test_endless_headers_are_refused(raw_server):
    """Header lines as fast as the socket takes them: a few hundred kB at most are read."""

    def flood(connection, stop):
        connection.sendall(b"HTTP/1.1 200 OK\r\n")
        while True:
            connection.sendall(b"X-Filler: " + b"y" * 60_000 + b"\r\n")

    url = raw_server(flood)
    with pytest.raises(OutboundFailed):
        outbound.request("GET", url, policy=LOOPBACK, limits=Limits(10, max_body=1000))


def test_a_redirect_is_returned_not_followed(serve):
    elsewhere = serve(reply(200, b"secret page"))
    server = serve(reply(302, Location=elsewhere.url))
    response = outbound.request(
        "POST",
        server.url,
        headers={"Authorization": "Bearer sk-1"},
        policy=AddressPolicy.allowing(["127.0.0.1"]),
        limits=Limits(5),
    )
    assert response.status == 302
    assert elsewhere.requests == []


def test_a_refused_connection_fails_and_may_be_retried():
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(OutboundFailed, match="connection failed"):
        outbound.request("GET", f"http://127.0.0.1:{port}/", policy=LOOPBACK, limits=Limits(5))


@pytest.mark.parametrize(
    "url, reason",
    [
        ("http://127.0.0.1:99999/hook", "not a usable URL"),
        ("http://127.0.0.1:http/hook", "not a usable URL"),
        ("http://[::1/hook", "not a usable URL"),
        ("ftp://example.org/x", "only http:// and https://"),
        ("file:///etc/passwd", "only http:// and https://"),
        ("http:///path", "names no host"),
        ("http://example.org:0/", "port 0"),
        ("http://example.org/a b", "spaces or control characters"),
        ("http://example.org/\r\nX-Injected: 1", "spaces or control characters"),
    ],
)
def test_urls_that_are_not_http_targets_are_refused(url, reason):
    with pytest.raises(OutboundRefused, match=reason):
        outbound.request("GET", url, limits=Limits(5))


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "[::1]",
        "10.1.2.3",
        "169.254.169.254",
        "[::ffff:127.0.0.1]",
        "[64:ff9b::7f00:1]",  # NAT64 of 127.0.0.1
        "[64:ff9b::a9fe:a9fe]",  # NAT64 of 169.254.169.254
        "[2002:7f00:1::1]",  # 6to4 of 127.0.0.1
        "[2002:a00:1::]",  # 6to4 of 10.0.0.1
        "[::7f00:1]",  # IPv4-compatible 127.0.0.1
        "2130706433",  # 127.0.0.1 as one number
    ],
)
def test_internal_addresses_are_refused_before_connecting(host):
    with pytest.raises(outbound.AddressRefused, match="not a public address"):
        outbound.request("GET", f"http://{host}/", limits=Limits(5))


def test_a_host_allowed_by_name_is_reached_at_the_address_checked(serve, monkeypatch):
    """Checked, then pinned: the connection goes to the address the check saw, whatever
    the name resolves to by the time the connection opens."""
    server = serve(reply(204))
    port = server.httpd.server_address[1]
    resolve = socket.getaddrinfo
    answers = iter(["127.0.0.1", "192.0.2.1"])  # then a rebinding to somewhere else

    def rebinding(host, *args, **kwargs):
        if host == "hooks.test":
            return resolve(next(answers, "192.0.2.1"), *args, **kwargs)
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    response = outbound.request(
        "GET",
        f"http://hooks.test:{port}/",
        policy=AddressPolicy.allowing(["hooks.test"]),
        limits=Limits(5),
    )
    assert response.status == 204
    assert server.requests[0][1]["Host"] == f"hooks.test:{port}"


def wait_for(condition, seconds: float = 10) -> None:
    done = threading.Event()
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        done.wait(0.05)
    raise AssertionError("the receiver did not see the client go")
