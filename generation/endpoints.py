"""The deployment's rule for where hosted systems' endpoints may point: public hosts, and
the internal ones HOSTED_ENDPOINT_ALLOWED_HOSTS names (generation/backends/endpoint.py)."""

from django.conf import settings

from generation.backends import EndpointPolicy


def endpoint_policy() -> EndpointPolicy:
    return EndpointPolicy.allowing(settings.HOSTED_ENDPOINT_ALLOWED_HOSTS)
