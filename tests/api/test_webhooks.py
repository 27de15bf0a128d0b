"""Outbound webhooks: events found by the sweep, signed deliveries checked as a receiver
checks them, retries after a failure, and the refusal of internal addresses."""

import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from annotation.models import QUALITY, Campaign
from api.models import Event, WebhookDelivery, WebhookEndpoint, new_webhook_secret
from api.webhooks import deliver, record_due_events, send_due, sign
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.factories import make_annotator, make_judged_hit
from tests.receivers import POLL_SECONDS


class Receiver:
    """An HTTP server on 127.0.0.1 answering with the given statuses in turn, recording
    each request's headers and body."""

    def __init__(self, statuses: list[int]):
        self.statuses, self.requests = list(statuses), []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append((dict(self.headers), body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"thanks" if status == 200 else b"broken")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/nlg?team=1"
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True
        ).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    made = []

    def start(*statuses):
        made.append(Receiver(list(statuses)))
        return made[-1]

    yield start
    for server in made:
        server.close()


def verified(secret: str, headers: dict, body: bytes) -> dict:
    """What a receiver does, by the Standard Webhooks reference library: check the timestamp
    (five minutes either way) and the signature, and parse the body."""
    return Webhook(secret).verify(body, headers)


def ranked(campaign) -> RankingRun:
    for item in campaign.items.all():
        make_judged_hit(list(item.outputs.order_by("system__name")), [300, 100, 50])
    quality = campaign.criteria.get(name=QUALITY)
    run = RankingRun.objects.create(campaign=campaign, criterion=quality, repetitions=10)
    execute_run(run)
    return run


def endpoint_for(campaign, url, events=None) -> WebhookEndpoint:
    endpoint = WebhookEndpoint(campaign=campaign, url=url, events=events or list(Event.values))
    endpoint.full_clean()
    endpoint.save()
    return endpoint


def test_ranking_done_is_delivered_signed_and_retried_after_a_500(campaign, receiver, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    hook = receiver(500)
    endpoint = endpoint_for(campaign, hook.url, [Event.RANKING_DONE])
    run = ranked(campaign)
    assert record_due_events() == 1
    assert record_due_events() == 0  # found again: nothing new
    delivery = WebhookDelivery.objects.get()
    assert send_due() == 1 and send_due() == 0  # handed out once while its lease runs

    assert deliver(delivery.pk)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("pending", 1, 500)
    assert delivery.response_body == "broken"
    assert delivery.next_attempt_at > timezone.now() + timedelta(seconds=20)

    later = delivery.next_attempt_at + timedelta(seconds=1)
    assert send_due(now=later) == 1
    assert deliver(delivery.pk, now=later)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("delivered", 2, 200)
    assert not deliver(delivery.pk)  # done: a late message sends nothing

    (first_headers, first_body), (headers, body) = hook.requests
    assert first_headers["webhook-id"] == headers["webhook-id"] == delivery.message_id
    payload = verified(endpoint.secret, headers, body)
    assert payload["type"] == "ranking.done"
    assert payload["data"]["run"] == run.pk and payload["data"]["campaign"] == campaign.slug
    assert [row["system"] for row in payload["data"]["systems"]] == ["sys1", "sys2", "sys3"]
    with pytest.raises(WebhookVerificationError, match="No matching signature"):
        verified(endpoint.secret, headers, body.replace(b"sys1", b"sys9"))


def test_the_signature_is_the_one_standard_webhooks_makes():
    """The webhook-signature header as the reference library signs the same message."""
    secret, body = new_webhook_secret(), b'{"type": "ranking.done", "data": {"run": 7}}'
    sent_at = datetime(2026, 11, 26, 12, 30, 5, tzinfo=UTC)
    expected = Webhook(secret).sign("msg_2d1c", sent_at, body.decode())
    assert sign(secret, "msg_2d1c", int(sent_at.timestamp()), body) == expected


def test_a_delivery_gives_up_after_the_last_attempt(campaign, receiver, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    hook = receiver(503, 503, 503)
    endpoint_for(campaign, hook.url, [Event.CAMPAIGN_COMPLETE])
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    record_due_events()
    delivery = WebhookDelivery.objects.get()
    deliver(delivery.pk)
    deliver(delivery.pk)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.error) == ("failed", 2, "HTTP 503")
    assert not deliver(delivery.pk)
    assert len(hook.requests) == 2


def test_annotator_failing_qc_and_a_settled_criterion_are_events(campaign, receiver, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    endpoint = endpoint_for(campaign, receiver().url)
    annotator = make_annotator(campaign)
    annotator.failed_attention_at = timezone.now()
    annotator.save()
    campaign.criteria.filter(name=QUALITY).update(is_open=False, closed_as_stable_since=12)
    record_due_events()
    events = dict(WebhookDelivery.objects.values_list("event", "payload"))
    assert set(events) == {"annotator.failed_qc", "criterion.settled"}
    assert events["annotator.failed_qc"]["data"]["annotator"] == annotator.pk
    assert events["criterion.settled"]["data"]["criterion"] == "quality"
    assert WebhookDelivery.objects.filter(endpoint=endpoint).count() == 2


def test_endpoint_only_gets_the_events_it_asked_for(campaign, receiver, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    endpoint_for(campaign, receiver().url, [Event.CAMPAIGN_COMPLETE])
    ranked(campaign)
    assert record_due_events() == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/hook",
    ],
)
def test_internal_addresses_are_refused_by_default(campaign, url):
    with pytest.raises(ValidationError) as refused:
        endpoint_for(campaign, url)
    assert "not a public address" in str(refused.value)
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize("url", ["ftp://example.org/x", "file:///etc/passwd", "gopher://x/"])
def test_non_http_urls_are_refused(campaign, url, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    with pytest.raises(ValidationError):
        endpoint_for(campaign, url)


def test_a_host_that_became_internal_is_refused_at_send_time(campaign, receiver, settings):
    """Checked again before each delivery: saved while allowed, sent when no longer."""
    settings.WEBHOOK_ALLOW_PRIVATE = True
    hook = receiver()
    endpoint_for(campaign, hook.url, [Event.CAMPAIGN_COMPLETE])
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    record_due_events()
    settings.WEBHOOK_ALLOW_PRIVATE = False
    delivery = WebhookDelivery.objects.get()
    deliver(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == "failed" and "not a public address" in delivery.error
    assert hook.requests == []


def test_events_must_be_known(campaign, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    with pytest.raises(ValidationError):
        endpoint_for(campaign, "http://127.0.0.1/", ["ranking.maybe"])


def test_webhooks_are_registered_through_the_api(changer, looker, campaign, settings):
    url = f"/campaigns/{campaign.slug}/webhooks/"
    refused = changer.call("POST", url, {"url": "http://127.0.0.1:8/hook"})
    assert refused.status_code == 422 and refused.json()["field"] == "url"
    assert "not a public address" in refused.json()["detail"]
    settings.WEBHOOK_ALLOW_PRIVATE = True
    made = changer.call("POST", url, {"url": "http://127.0.0.1:8/hook", "events": ["ranking.done"]})
    assert made.status_code == 201
    endpoint = WebhookEndpoint.objects.get()
    assert made.json()["secret"] == endpoint.secret and endpoint.events == ["ranking.done"]
    assert [e["id"] for e in changer.call("GET", url).json()] == [endpoint.pk]
    bad = changer.call("POST", url, {"url": "http://127.0.0.1:8/", "events": ["sometimes"]})
    assert bad.status_code == 422 and bad.json()["field"] == "events"
    assert looker.call("GET", url).status_code == 403  # a view token sees no secrets
    assert WebhookEndpoint.objects.count() == 1
