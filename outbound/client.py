"""One HTTP request to a server outside the deployment, bounded in every way it can hang.

- Pinned: the host's addresses are checked (addresses.py) and the connection goes to one
  of those, whatever the name resolves to a moment later; TLS still checks the
  certificate against the host's name.
- No redirect is followed (http.client follows none): a 3xx is returned as it came, so a
  request's credentials (an API key, a token, a signature) never reach another host.
- A deadline for the whole request: connecting (at most `Limits.connect` of it), sending,
  and every byte of the answer. Each read waits only for what is left of it, so a server
  that sends one byte every few seconds is cut off at the deadline, not kept alive by
  each byte. Resolving the name is the system resolver's (resolv.conf's timeout and
  attempts) and comes before the deadline starts.
- Bytes bounded: the body is read up to `Limits.max_body` (Response.complete says
  whether it ended there), and at most HEAD_BYTES more come off the wire for the status
  line, headers, chunk framing and trailers.

What comes back is never shown whole: error_message() and excerpt() (bodies.py) keep a
short printable part.
"""

import http.client
import io
import re
import socket
import ssl
import time
from dataclasses import dataclass
from email.message import Message
from typing import Any
from urllib.parse import urlsplit

from .addresses import PUBLIC_ONLY, AddressPolicy, public_addresses
from .errors import (
    DeadlineExceeded,
    NotResolved,
    OutboundError,
    OutboundFailed,
    OutboundRefused,
)

HEAD_BYTES = 256 * 1024
UNSAFE = re.compile(r"[\x00-\x20\x7f]")


@dataclass(frozen=True)
class Limits:
    deadline: float  # seconds for the whole request: connect, send, the answer read whole
    connect: float = 5.0  # seconds to open the connection, within the deadline
    max_body: int = 1 << 20  # bytes of the answer's body read; the rest is left unread


@dataclass(frozen=True)
class Response:
    status: int
    headers: Message
    body: bytes  # at most Limits.max_body bytes
    complete: bool  # False: the body went on past max_body, and was cut there


@dataclass(frozen=True)
class Target:
    """Where a request goes: scheme, host, port, and the path with its query."""

    https: bool
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, url: str) -> "Target":
        """OutboundRefused for anything but an http(s) URL with a host and a valid port."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as error:  # a port past 65535 or not a number, an open [bracket
            raise OutboundRefused(f"not a usable URL: {error}") from None
        if UNSAFE.search(url):
            raise OutboundRefused("the URL holds spaces or control characters")
        if parts.scheme not in ("http", "https"):
            raise OutboundRefused("only http:// and https:// URLs are sent to")
        if not parts.hostname:
            raise OutboundRefused("the URL names no host")
        if port == 0:
            raise OutboundRefused("port 0 is not a port to send to")
        https = parts.scheme == "https"
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(https, parts.hostname, port or (443 if https else 80), path)

    @property
    def origin(self) -> tuple[bool, str, int]:
        return self.https, self.host, self.port


def check(url: str, policy: AddressPolicy = PUBLIC_ONLY) -> Target:
    """The URL's target if it may be sent to now; OutboundRefused if not, OutboundFailed
    if its host does not resolve (it may later)."""
    target = Target.of(url)
    resolved(target, policy)
    return target


def request(
    method: str,
    url: str,
    *,
    limits: Limits,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    policy: AddressPolicy = PUBLIC_ONLY,
) -> Response:
    """Send one request and read its answer within the limits; OutboundRefused or
    OutboundFailed (DeadlineExceeded among them) when no answer came."""
    target = Target.of(url)
    addresses = resolved(target, policy)
    deadline = Deadline(limits.deadline)
    kind = PinnedHTTPSConnection if target.https else PinnedHTTPConnection
    connection = kind(target.host, target.port, addresses, limits, deadline)
    try:
        connection.request(method, target.path, body=body, headers=headers or {})
        answer = connection.getresponse()
        data = answer.read(limits.max_body + 1)
    except OutboundError:
        raise
    except (OSError, http.client.HTTPException) as error:
        raise OutboundFailed(f"connection failed: {error!r}") from None
    finally:
        connection.close()
    complete = len(data) <= limits.max_body
    return Response(answer.status, answer.headers, data[: limits.max_body], complete)


def resolved(target: Target, policy: AddressPolicy) -> list[str]:
    try:
        return public_addresses(target.host, target.port, policy)
    except OSError as error:  # gaierror: no such name now
        raise NotResolved(target.host, str(error)) from None


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left; DeadlineExceeded when none are."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded(f"no complete answer within {self.seconds:g} s")
        return left


class DeadlineSocket:
    """A connected socket whose every send and receive waits at most for what is left of
    the deadline, and which reads at most `budget` bytes. What http.client needs of a
    socket: sendall, makefile, close."""

    def __init__(self, sock: socket.socket, deadline: Deadline, budget: int) -> None:
        self.sock, self.deadline, self.budget = sock, deadline, budget

    def sendall(self, data: bytes) -> None:
        self.sock.settimeout(self.deadline.left())
        try:
            self.sock.sendall(data)
        except TimeoutError:
            raise DeadlineExceeded(f"not sent within {self.deadline.seconds:g} s") from None

    def receive(self, reader: io.RawIOBase, buffer: Any) -> int:
        self.sock.settimeout(self.deadline.left())
        try:
            count = reader.readinto(buffer) or 0
        except TimeoutError:
            raise DeadlineExceeded(
                f"no complete answer within {self.deadline.seconds:g} s"
            ) from None
        self.budget -= count
        if self.budget < 0:
            raise OutboundFailed("the answer's headers and framing are too large")
        return count

    def makefile(self, mode: str = "rb", *args: object, **kwargs: object) -> io.BufferedReader:
        return io.BufferedReader(SocketReader(self))

    def close(self) -> None:
        self.sock.close()


class SocketReader(io.RawIOBase):
    """Reads through the deadline. It holds the socket's own reader, which keeps the
    socket open until both are closed: http.client closes the connection as soon as a
    response that ends with it has begun, and reads the body afterwards."""

    def __init__(self, bounded: DeadlineSocket) -> None:
        self.bounded = bounded
        self.reader = bounded.sock.makefile("rb", buffering=0)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self.bounded.receive(self.reader, buffer)

    def close(self) -> None:
        self.reader.close()
        super().close()


def connect(addresses: list[str], port: int, limits: Limits, deadline: Deadline) -> socket.socket:
    """A connection to the first of the checked addresses that answers."""
    failure: OSError | None = None
    for address in addresses:
        try:
            return socket.create_connection(
                (address, port), timeout=min(limits.connect, deadline.left())
            )
        except OSError as error:
            failure = error
    raise OutboundFailed(f"connection failed: {failure!r}")


class PinnedHTTPConnection(http.client.HTTPConnection):
    """HTTP to the addresses checked, whatever the host resolves to by now; the Host
    header still names the host."""

    def __init__(
        self, host: str, port: int, addresses: list[str], limits: Limits, deadline: Deadline
    ) -> None:
        super().__init__(host, port, timeout=limits.connect)
        self.addresses, self.limits, self.deadline = addresses, limits, deadline

    def connect(self) -> None:
        sock = connect(self.addresses, self.port, self.limits, self.deadline)
        self.sock = self.bounded(sock)

    def bounded(self, sock: socket.socket) -> DeadlineSocket:
        return DeadlineSocket(sock, self.deadline, self.limits.max_body + HEAD_BYTES)


class PinnedHTTPSConnection(PinnedHTTPConnection):
    """HTTPS to the addresses checked, the certificate checked against the host's name."""

    default_port = http.client.HTTPS_PORT
    tls = ssl.create_default_context()

    def connect(self) -> None:
        sock = connect(self.addresses, self.port, self.limits, self.deadline)
        sock.settimeout(self.deadline.left())  # the handshake, within the deadline
        try:
            wrapped = self.tls.wrap_socket(sock, server_hostname=self.host)
        except TimeoutError:
            sock.close()
            raise DeadlineExceeded(f"no TLS handshake within {self.deadline.seconds:g} s") from None
        self.sock = self.bounded(wrapped)
