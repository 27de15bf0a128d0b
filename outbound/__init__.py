"""The platform's one door for HTTP requests to servers outside it: hosted models and
automatic judges (OpenAI-compatible endpoints), webhooks, Prolific's API.

No Django and nothing else of ours: the apps pass their settings in (the policy of which
internal hosts may be reached, the limits). `tests/evalsite/test_layers.py` holds that no
other module opens a connection of its own.

    response = outbound.request(
        "POST", url, body=data, headers=headers, policy=PUBLIC_ONLY, limits=Limits(deadline=10)
    )
"""

from .addresses import PUBLIC_ONLY, AddressPolicy, is_public, public_addresses
from .bodies import error_message, excerpt
from .client import Limits, Response, Target, check, request
from .errors import (
    AddressRefused,
    DeadlineExceeded,
    NotResolved,
    OutboundError,
    OutboundFailed,
    OutboundRefused,
)

__all__ = [
    "PUBLIC_ONLY",
    "AddressPolicy",
    "AddressRefused",
    "DeadlineExceeded",
    "Limits",
    "OutboundError",
    "OutboundFailed",
    "OutboundRefused",
    "NotResolved",
    "Response",
    "Target",
    "check",
    "error_message",
    "excerpt",
    "is_public",
    "public_addresses",
    "request",
]
