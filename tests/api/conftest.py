"""A pipeline's view of the platform: an organiser's token and a client that sends it."""

import json

import pytest
from django.contrib.auth.models import Permission, User
from django.http.response import HttpResponseBase

from api.tokens import create_token
from tests.api.openapi import assert_described, media_type_of
from tests.client import HttpsClient
from tests.factories import make_campaign, make_system_set


class ApiClient(HttpsClient):
    """Sends `Authorization: Bearer <secret>` and JSON bodies; every answer is checked
    against the schema the API serves (tests/api/openapi.py)."""

    def __init__(self, secret: str | None = None):
        super().__init__()
        self.secret = secret

    def call(self, method: str, path: str, body=None, **extra):
        if self.secret is not None:
            extra["HTTP_AUTHORIZATION"] = f"Bearer {self.secret}"
        if body is not None and not isinstance(body, bytes | str):
            body = json.dumps(body)
            extra.setdefault("content_type", "application/json")
        send = getattr(self, method.lower())
        response = (
            send(f"/api/v1{path}", body, **extra)
            if body is not None
            else send(f"/api/v1{path}", **extra)
        )
        check_against_schema(method, response)
        return response


def check_against_schema(method: str, response: HttpResponseBase) -> None:
    if response.streaming:  # read once here, then handed back to the test as it was
        body = b"".join(response.streaming_content)
        response.streaming_content = [body]
    else:
        body = response.content
    path = response.wsgi_request.path
    media_type = media_type_of(response.get("Content-Type"))
    assert_described(method, path, response.status_code, media_type, body)


@pytest.fixture
def organiser_user(db) -> User:
    return User.objects.create_user("pipeline-owner", is_staff=True, is_superuser=True)


@pytest.fixture
def viewer_user(db) -> User:
    user = User.objects.create_user("viewer", is_staff=True)
    user.user_permissions.add(
        Permission.objects.get(codename="view_campaign", content_type__app_label="annotation")
    )
    return user


@pytest.fixture
def campaign(db):
    campaign = make_campaign(slug="e2e-test", outputs_per_hit=3, min_seconds_per_hit=0)
    make_system_set(campaign, systems=3, items=4)
    return campaign


@pytest.fixture
def changer(organiser_user, campaign) -> ApiClient:
    """A change token of a superuser, scoped to `campaign`."""
    _, secret = create_token(organiser_user, "pipeline", [campaign], change=True)
    return ApiClient(secret)


@pytest.fixture
def looker(organiser_user, campaign) -> ApiClient:
    """A view token of the same superuser, scoped to `campaign`."""
    _, secret = create_token(organiser_user, "notebook", [campaign])
    return ApiClient(secret)
