"""Which addresses an outbound request may reach.

A webhook's URL or a hosted system's `base_url` is chosen by an organiser, and the worker
that calls it sits inside the deployment's network: without a rule, the URL could name the
database, Redis, an admin interface on loopback or the cloud's metadata service
(169.254.169.254), and the answer would come back into a job's errors or the task pool. So a
host is refused when any address it resolves to is not a public one (loopback, private,
link-local, shared, multicast, reserved, unspecified), unless the policy allows that host
by name (a lab's own model server, a test's receiver on loopback).

IPv6 addresses that a gateway translates to IPv4 are judged by the IPv4 address inside:
NAT64 (64:ff9b::/96, RFC 6052), 6to4 (2002::/16), Teredo, IPv4-mapped (::ffff:0:0/96) and
the deprecated IPv4-compatible form (::/96). `64:ff9b::7f00:1` reaches 127.0.0.1 through a
NAT64 gateway, so it is loopback here. The local-use NAT64 prefix (64:ff9b:1::/48, RFC 8215)
is internal by definition.

The check runs on what the name resolves to now, and the request connects to the address
checked (client.py pins it), so a name that resolves elsewhere a moment later (DNS
rebinding) reaches nothing new.
"""

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import AddressRefused

NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


@dataclass(frozen=True)
class AddressPolicy:
    """The hosts a request may reach although they are internal, as written in the URL (a
    name, or an IP address); by default none."""

    allowed_hosts: frozenset[str] = frozenset()

    @classmethod
    def allowing(cls, hosts: Iterable[str]) -> "AddressPolicy":
        return cls(frozenset(normal_host(host) for host in hosts if host.strip()))

    def allows(self, host: str) -> bool:
        return normal_host(host) in self.allowed_hosts


PUBLIC_ONLY = AddressPolicy()


def normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def is_public(address: str) -> bool:
    """Whether `address` (IPv4 or IPv6, with or without a scope) is a public, unicast one,
    and so is any IPv4 address inside it that a translator would forward to."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # without an IPv6 scope
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in NAT64_LOCAL:
            return False
        inside = embedded_ipv4(ip)
        if inside is not None:
            return is_public_ip(inside)
    return is_public_ip(ip)


def is_public_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not ip.is_multicast


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address that a packet to `ip` ends up at, for the translation forms."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in NAT64 or ip in IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client's address, where the relay delivers
    return None


def public_addresses(host: str, port: int, policy: AddressPolicy = PUBLIC_ONLY) -> list[str]:
    """The addresses `host` resolves to, to connect to one of them; AddressRefused if one
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
        raise AddressRefused(host, internal)
    return addresses
