"""Which addresses are public: the IPv6 forms that carry an IPv4 address are judged by it."""

import pytest

from outbound import AddressPolicy, is_public
from outbound.bodies import MAX_CHARS, error_message, excerpt


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "100.64.0.1",
        "169.254.169.254",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "::",
        "fe80::1%eth0",
        "fc00::1",
        "::ffff:127.0.0.1",
        "64:ff9b::7f00:1",  # NAT64 (RFC 6052) of 127.0.0.1
        "64:ff9b::a00:1",  # of 10.0.0.1
        "64:ff9b::a9fe:a9fe",  # of 169.254.169.254
        "64:ff9b:1::808:808",  # local-use NAT64 (RFC 8215): internal whatever it holds
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::",  # 6to4 of 169.254.169.254
        "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
        "::7f00:1",  # IPv4-compatible (deprecated) 127.0.0.1
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
    ],
)
def test_internal_addresses_and_their_translations_are_not_public(address):
    assert not is_public(address)


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "93.184.215.14", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1"],
)
def test_public_addresses_and_their_translations_are_public(address):
    assert is_public(address)


def test_a_policy_allows_hosts_by_name_as_written():
    policy = AddressPolicy.allowing([" GPU-box.lab. ", "", "[::1]"])
    assert policy.allows("gpu-box.lab") and policy.allows("::1")
    assert not policy.allows("127.0.0.1")


def test_an_error_message_is_the_json_message_short_and_printable():
    assert error_message(b'{"error": {"message": "bad \\u001b[31m key"}}') == "bad [31m key"
    assert error_message(b'{"detail": "Not found."}') == "Not found."
    long = error_message(('{"error": "' + "x" * 5000 + '"}').encode())
    assert long == "x" * MAX_CHARS + "..."


def test_an_error_body_that_is_not_a_json_message_is_never_shown():
    page = b"<html>db-password=hunter2 on redis://10.0.0.3</html>"
    assert error_message(page) == f"no error message ({len(page)} bytes of body, not shown)"
    assert error_message(b"[" * 100_000).startswith("no error message")


def test_an_excerpt_is_short_and_printable():
    assert excerpt(b"thanks\r\n") == "thanks"
    assert excerpt(b"\x00\x1b[2J" + b"a" * 5000) == "[2J" + "a" * (MAX_CHARS - 3) + "..."
