"""What an outbound request can end in, besides an answer."""


class OutboundError(Exception):
    """An outbound request that gave no answer."""


class OutboundRefused(OutboundError, ValueError):
    """The URL, or the address its host resolves to, is not one the platform sends to:
    another try would be refused too."""


class AddressRefused(OutboundRefused):
    """The host resolves to an internal address, and the policy does not allow the host."""

    def __init__(self, host: str, internal: list[str]) -> None:
        super().__init__(
            f"{host} resolves to {', '.join(internal)}, not a public address (loopback, "
            "private, link-local or reserved, or one of those inside an IPv6 translation "
            "prefix)"
        )
        self.host = host


class OutboundFailed(OutboundError):
    """No answer this time (the host did not resolve, the connection was refused or reset,
    the answer was malformed or too large, the deadline passed): another try may do."""


class NotResolved(OutboundFailed):
    """The host's name does not resolve now."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"{host} does not resolve ({reason})")
        self.host, self.reason = host, reason


class DeadlineExceeded(OutboundFailed):
    """The request's deadline passed before its answer was read whole."""
