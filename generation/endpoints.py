"""The deployment's rule for where hosted systems' endpoints may point: public hosts, and
the internal ones HOSTED_ENDPOINT_ALLOWED_HOSTS names (outbound/addresses.py)."""

from django.conf import settings

from outbound import AddressPolicy


def endpoint_policy() -> AddressPolicy:
    return AddressPolicy.allowing(settings.HOSTED_ENDPOINT_ALLOWED_HOSTS)
