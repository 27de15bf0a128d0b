"""Where a webhook may be sent: http or https, to a host whose every address is public
(not loopback, private, link-local, shared or reserved, nor one of those inside an IPv6
translation prefix), unless WEBHOOK_ALLOW_PRIVATE is set.

The rule and the connection are the outbound module's (outbound/), as for hosted systems:
checked when an endpoint is saved, and again before every delivery on what the name
resolves to then; the delivery connects to the address checked, so a name that resolves
elsewhere a moment later (DNS rebinding) reaches nothing new. A delivery has
WEBHOOK_TIMEOUT_SECONDS in all (connecting, sending, the answer), follows no redirect, and
reads at most RESPONSE_BYTES of the answer.
"""

from django.conf import settings

import outbound
from outbound import AddressPolicy, Limits, OutboundFailed, OutboundRefused, Target

RESPONSE_BYTES = 2048  # of the answer's body: a receiver says "ok", not more


class WebhookRefused(ValueError):
    """The URL is not one the platform sends to (not retried)."""


def policy_for(url: str) -> AddressPolicy:
    """Public addresses only, or, with WEBHOOK_ALLOW_PRIVATE, any: the URL's own host is
    allowed by name, so the resolver keeps every address it finds."""
    if not settings.WEBHOOK_ALLOW_PRIVATE:
        return outbound.PUBLIC_ONLY
    try:
        return AddressPolicy.allowing([Target.of(url).host])
    except OutboundRefused:
        return outbound.PUBLIC_ONLY  # refused anyway, by check_url or post


def check_url(url: str) -> None:
    """WebhookRefused if the URL may not be sent to, OSError if its host does not resolve
    now (retried later)."""
    try:
        outbound.check(url, policy_for(url))
    except OutboundRefused as error:
        raise WebhookRefused(refusal(error)) from None
    except OutboundFailed as error:
        raise OSError(str(error)) from None


def post(url: str, body: bytes, headers: dict[str, str]) -> outbound.Response:
    """One delivery; WebhookRefused if the URL may no longer be sent to, OutboundFailed if
    no answer came within the deadline."""
    limits = Limits(deadline=settings.WEBHOOK_TIMEOUT_SECONDS, max_body=RESPONSE_BYTES)
    try:
        return outbound.request(
            "POST", url, body=body, headers=headers, policy=policy_for(url), limits=limits
        )
    except OutboundRefused as error:
        raise WebhookRefused(refusal(error)) from None


def refusal(error: OutboundRefused) -> str:
    if isinstance(error, outbound.AddressRefused):
        return f"{error}: webhooks are not sent there unless WEBHOOK_ALLOW_PRIVATE is set"
    return str(error)
