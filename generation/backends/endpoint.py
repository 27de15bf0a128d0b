"""Where an endpoint written by organisers may point.

A hosted system's `base_url` is chosen by an organiser, and the worker that calls it sits
inside the deployment's network: without a rule, the URL could name the database, Redis,
an admin interface on loopback or the cloud's metadata service (169.254.169.254), and the
answer would come back into the job's errors or the task pool. So a host is refused when
any address it resolves to is not a public one (loopback, private, link-local, shared,
multicast, reserved, unspecified), unless the deployment allows that host by name:
HOSTED_ENDPOINT_ALLOWED_HOSTS, for a lab's own model server.

The check runs when the settings are saved and again before every request, on what the
name resolves to then; the request goes to the address checked (openai_backend pins its
connection to it), so a name that resolves elsewhere a moment later (DNS rebinding)
reaches nothing new.
"""

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass


class EndpointRefused(ValueError):
    """The endpoint's host is internal, and the deployment does not allow it."""


@dataclass(frozen=True)
class EndpointPolicy:
    """The hosts an endpoint may name although they are internal, as written in its URL
    (a name, or an IP address); by default none."""

    allowed_hosts: frozenset[str] = frozenset()

    @classmethod
    def allowing(cls, hosts: Iterable[str]) -> "EndpointPolicy":
        return cls(frozenset(normal_host(host) for host in hosts if host.strip()))

    def allows(self, host: str) -> bool:
        return normal_host(host) in self.allowed_hosts


PUBLIC_ONLY = EndpointPolicy()


def normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # without an IPv6 scope
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is loopback too
    return ip.is_global and not ip.is_multicast


def endpoint_addresses(host: str, port: int, policy: EndpointPolicy = PUBLIC_ONLY) -> list[str]:
    """The addresses `host` resolves to, to connect to one of them; EndpointRefused if one
    is internal and the policy does not allow the host, OSError if it does not resolve."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except UnicodeError as error:  # a label too long for IDNA
        raise socket.gaierror(str(error)) from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if policy.allows(host):
        return addresses
    internal = [address for address in addresses if not is_public(address)]
    if internal:
        raise EndpointRefused(
            f"{host} resolves to {', '.join(internal)}, not a public address (loopback, "
            "private, link-local or reserved): endpoints may not reach it unless the "
            "deployment allows the host by name in HOSTED_ENDPOINT_ALLOWED_HOSTS"
        )
    return addresses
