"""Where a webhook may be sent: http or https, to a host whose every address is public
(not loopback, private, link-local, shared or reserved), unless WEBHOOK_ALLOW_PRIVATE is set.

The rule is the hosted systems' (generation/backends/endpoint.py, whose resolver and pinned
connections this reuses): checked when an endpoint is saved, and again before every
delivery on what the name resolves to then; the delivery connects to the address checked,
so a name that resolves elsewhere a moment later (DNS rebinding) reaches nothing new.
"""

import http.client
import socket
from urllib.parse import urlsplit

from django.conf import settings

from generation.backends.endpoint import EndpointPolicy, EndpointRefused, endpoint_addresses
from generation.backends.openai_backend import (
    PinnedHTTPConnection,
    PinnedHTTPSConnection,
    Target,
)


class WebhookRefused(ValueError):
    """The URL is not one the platform sends to (not retried)."""


def check_url(url: str) -> tuple[Target, list[str]]:
    """The URL's target and the addresses to connect to; WebhookRefused if it may not be
    reached, OSError if its host does not resolve now (retried later)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise WebhookRefused("only http:// and https:// URLs are sent to")
    if not parts.hostname:
        raise WebhookRefused("the URL names no host")
    target = Target.of(url)
    # Allowed: the host by name, so the resolver keeps every address it finds.
    policy = EndpointPolicy.allowing([target.host] if settings.WEBHOOK_ALLOW_PRIVATE else [])
    try:
        return target, endpoint_addresses(target.host, target.port, policy)
    except EndpointRefused:
        raise WebhookRefused(
            f"{target.host} is not a public address (loopback, private, link-local or"
            " reserved): webhooks are not sent there unless WEBHOOK_ALLOW_PRIVATE is set"
        ) from None
    except (socket.gaierror, UnicodeError) as error:
        raise OSError(f"{target.host} does not resolve ({error})") from None


def connection_to(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    """A connection pinned to an address of the URL's host checked now, and the path to
    request (with its query)."""
    target, addresses = check_url(url)
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    kind = PinnedHTTPSConnection if target.https else PinnedHTTPConnection
    return kind(target.host, target.port, addresses[0], timeout), path
