"""The client (api/client.py) against a live server of the test database: batches,
idempotent pushes, errors, and the judgments' pages."""

import json
from pathlib import Path

import pytest
from django.test import override_settings
from pytest_django.live_server_helper import LiveServer

from annotation.models import Judgment
from api import client as client_module
from api.client import WEBHOOK_EVENTS, ApiError, Client, WebhookRefused, verify_webhook
from api.models import Event, WebhookEndpoint, new_webhook_secret
from api.tokens import create_token
from api.webhooks import sign
from tests.api.openapi import checked_urlopen
from tests.api.test_endpoints import ratings_csv
from tests.factories import make_judged_hit


@pytest.fixture(scope="module")
def live_server():
    """A live server on plain HTTP, as tests/browser/conftest.py starts one: its middleware
    is built once, when it starts, so the setting must be in place before."""
    with override_settings(SECURE_SSL_REDIRECT=False):
        server = LiveServer("localhost")
        yield server
        server.stop()


@pytest.fixture(autouse=True)
def answers_checked_against_the_schema(monkeypatch):
    """Every answer the client gets from the live server, checked (tests/api/openapi.py)."""
    monkeypatch.setattr(client_module.urllib.request, "urlopen", checked_urlopen)


@pytest.fixture
def platform(live_server, organiser_user, campaign) -> Client:
    _, secret = create_token(organiser_user, "notebook", [campaign], change=True)
    return Client(live_server.url, secret, timeout=20)


def test_client_pushes_in_batches_and_again_creates_nothing(platform, campaign, monkeypatch):
    monkeypatch.setattr(client_module, "BATCH_RECORDS", 3)
    items = [
        {"id": f"n{n}", "kind": "mr", "input": {"attributes": [["name", f"Inn {n}"]]}}
        for n in range(7)
    ]
    assert platform.push_items(campaign.slug, items) == {"created": 7, "existing": 0}
    assert platform.push_items(campaign.slug, items) == {"created": 0, "existing": 7}
    assert campaign.items.filter(external_id__startswith="n").count() == 7


def test_client_raises_the_servers_error(platform, campaign):
    with pytest.raises(ApiError) as refused:
        platform.push_items(campaign.slug, [{"id": "x", "kind": "poem", "input": {}}])
    assert refused.value.status == 422
    assert refused.value.body["record"] == 0 and refused.value.body["field"] == "kind"
    with pytest.raises(ApiError) as missing:
        platform.campaign("elsewhere")
    assert missing.value.status == 404


def test_client_reads_every_judgment_page_by_page(platform, campaign):
    for item in campaign.items.all():
        make_judged_hit(list(item.outputs.order_by("system__name")), [300, 100, 50])
    judgments = list(platform.judgments(campaign.slug, page=5))
    assert len(judgments) == 12
    assert len({j["judgment"] for j in judgments}) == 12


def test_client_sends_a_large_ratings_file_in_parts_once(platform, campaign, monkeypatch):
    monkeypatch.setattr(client_module, "BATCH_BYTES", 400)
    text = ratings_csv(6).replace("Pub 1 is a pub.", '"Pub 1 is\na pub."')
    first = platform.import_ratings(campaign.slug, text, name="big.csv")
    assert len(first["parts"]) > 1
    assert not any(part["repeated"] for part in first["parts"])
    judged = Judgment.objects.filter(assignment__hit__campaign=campaign)
    assert judged.count() == 12
    assert "Pub 1 is\na pub." in set(judged.values_list("slot__output__text", flat=True))
    again = platform.import_ratings(campaign.slug, text, name="big.csv")
    assert all(part["repeated"] for part in again["parts"])
    assert judged.count() == 12


def test_client_registers_and_lists_webhooks(platform, campaign, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    made = platform.add_webhook(campaign.slug, "http://127.0.0.1:9/hook", ["ranking.done"])
    assert made["events"] == ["ranking.done"] and made["secret"].startswith("whsec_")
    everything = platform.add_webhook(campaign.slug, "http://127.0.0.1:9/all")
    assert everything["events"] == list(WEBHOOK_EVENTS)
    listed = {hook["id"]: hook["url"] for hook in platform.webhooks(campaign.slug)}
    assert listed == {made["id"]: made["url"], everything["id"]: everything["url"]}
    with pytest.raises(ApiError) as refused:
        platform.add_webhook(campaign.slug, "http://127.0.0.1:9/x", ["ranking.maybe"])
    assert refused.value.status == 422 and refused.value.body["field"] == "events"
    assert WebhookEndpoint.objects.filter(campaign=campaign).count() == 2


def test_client_names_the_events_the_platform_sends():
    assert WEBHOOK_EVENTS == tuple(Event.values)


def test_client_verifies_a_delivery_as_the_platform_signs_it():
    secret, now = new_webhook_secret(), 1_800_000_000
    body = json.dumps({"type": "ranking.done", "timestamp": "t", "data": {"run": 7}}).encode()
    headers = {
        "Webhook-Id": "msg_1",
        "Webhook-Timestamp": str(now),
        "Webhook-Signature": sign(secret, "msg_1", now, body),
    }
    assert verify_webhook(secret, headers, body, now=now + 10)["data"] == {"run": 7}
    with pytest.raises(WebhookRefused, match="signature"):
        verify_webhook(secret, headers, body.replace(b"7", b"8"), now=now)
    with pytest.raises(WebhookRefused, match="signature"):
        verify_webhook(new_webhook_secret(), headers, body, now=now)
    with pytest.raises(WebhookRefused, match="replay"):
        verify_webhook(secret, headers, body, now=now + 301)
    with pytest.raises(WebhookRefused, match="no webhook-signature"):
        verify_webhook(secret, {"webhook-id": "m", "webhook-timestamp": str(now)}, body)


def test_the_api_docs_name_every_event_type():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    for event in Event.values:
        assert f"| `{event}` |" in docs, event
