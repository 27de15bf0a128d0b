"""Servers for outbound HTTP's tests, on 127.0.0.1. `SlowReceiver` holds a request as a
hostile or broken server does: it answers `HTTP/1.1 200 OK` and then one byte every
`interval` seconds (trickling), or reads the request and never answers (silent); it counts
the connections it holds: accepted, the request read, and the client not gone yet.
`Answering` answers every request at once with what `reply` makes. The fixtures `serve`
and `slow` (tests/conftest.py) start them and close them after the test. `serving` runs a
fake of an outside API (a request handler class) for a `with` block."""

import select
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class SlowReceiver:
    def __init__(self, mode: str, interval: float = 5.0) -> None:
        assert mode in ("trickle", "silent")
        self.mode, self.interval = mode, interval
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.lock = threading.Lock()
        self.requests = 0  # requests read whole
        self.holding = 0  # connections whose request was read and whose client is still there
        self.hung_up = 0  # connections the client closed while this receiver held them
        self.bytes_sent = 0
        self.stopped = threading.Event()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.hold, args=(connection,), daemon=True).start()

    def hold(self, connection: socket.socket) -> None:
        with connection:
            if not read_request(connection):
                return
            with self.lock:
                self.requests += 1
                self.holding += 1
            try:
                self.keep_waiting(connection)
            finally:
                with self.lock:
                    self.holding -= 1

    def keep_waiting(self, connection: socket.socket) -> None:
        if self.mode == "trickle":
            self.send(connection, b"HTTP/1.1 200 OK\r\n")
        while not self.stopped.is_set():
            readable, _, _ = select.select([connection], [], [], self.interval)
            if readable and not connection.recv(1024):  # the client hung up
                with self.lock:
                    self.hung_up += 1
                return
            if self.mode == "trickle" and not self.send(connection, b"X"):
                return

    def send(self, connection: socket.socket, data: bytes) -> bool:
        try:
            connection.sendall(data)
        except OSError:
            with self.lock:
                self.hung_up += 1
            return False
        with self.lock:
            self.bytes_sent += len(data)
        return True

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()


def read_request(connection: socket.socket) -> bool:
    """Read a request's head and its Content-Length of body; False if the client left."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            return False
        body += chunk
    return True


# How often a server's loop looks whether it is asked to stop: shutdown() waits for it, and
# socketserver's default (0.5 s) made each test's teardown wait about 0.4 s for nothing.
POLL_SECONDS = 0.05


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    """A threading HTTP server on a free port of 127.0.0.1, answering with `handler`."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True
    ).start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


class Answering:
    """An HTTP server answering every request with `answer(handler)`, recording paths and
    headers."""

    def __init__(self, answer) -> None:
        self.requests: list[tuple[str, dict]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append((self.path, dict(self.headers)))
                answer(self)

            do_POST = do_GET

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": POLL_SECONDS}
        ).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def reply(status: int, body: bytes = b"", **headers):
    """An answer for `Answering`: `status`, `body` and `headers` (`Content_Type` is sent as
    Content-Type)."""

    def answer(handler):
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name.replace("_", "-"), value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer
