"""Rate limits: how many requests one token, account or address may make in a window.

A limit is (requests, seconds) from the settings (RATE_LIMIT_*; None is off). Each request
counts in a fixed window of that many seconds, in Django's cache, which every web process
shares (Redis in production, files on one machine: evalsite/settings.py); the request
beyond the limit is refused until its window ends, and Retry-After says when. A window's
counter is a key of its own, so the cache's expiry, whatever its backend keeps, never
stretches a window.

The limits protect the site's capacity; they are not what makes anything correct. So a
cache that cannot be reached (Redis restarting) lets requests through, logged, rather
than stopping every annotator and organiser with it.
"""

import hashlib
import ipaddress
import logging
import math
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

logger = logging.getLogger(__name__)

Rate = tuple[int, int]  # (requests, seconds)


class RateLimited(Exception):
    """A request beyond its limit; `retry_after` seconds until the window ends."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many requests: try again in {retry_after} s")
        self.retry_after = retry_after


def count(scope: str, who: str, rate: Rate | None, now: float | None = None) -> None:
    """Count one request of `who` (a token, an account, an address) in `scope`; raise
    RateLimited if it is beyond `rate` in the current window."""
    if rate is None:
        return
    requests, seconds = rate
    now = time.time() if now is None else now
    window = int(now // seconds)
    name = hashlib.sha256(who.encode()).hexdigest()[:32]  # any text, a safe key
    key = f"rate:{settings.RATE_LIMIT_NAMESPACE}{scope}:{name}:{seconds}:{window}"
    try:
        cache.add(key, 0, timeout=seconds + 1)
        used = cache.incr(key)
    except Exception as error:  # noqa: BLE001 (whatever the backend raises: see above)
        logger.warning("rate limit %s not counted: %s", scope, error)
        return
    if used > requests:
        raise RateLimited(max(1, math.ceil((window + 1) * seconds - now)))


def client_address(request: HttpRequest) -> str:
    """The address a request came from: the last one in RATE_LIMIT_CLIENT_HEADER (the one
    our own proxy wrote), and for IPv6 its /64, which one machine usually holds whole."""
    forwarded = request.META.get(settings.RATE_LIMIT_CLIENT_HEADER, "")
    address = forwarded.split(",")[-1].strip()
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address  # a test client's or a socket's name: counted as written
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def too_many_requests(request: HttpRequest, limited: RateLimited, what: str) -> HttpResponse:
    """The page that refuses a request beyond its limit: 429, and when to come back."""
    context = {"what": what, "retry_after": limited.retry_after}
    response = render(request, "429.html", context, status=429)
    response["Retry-After"] = str(limited.retry_after)
    return response
