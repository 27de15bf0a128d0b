"""What a webhook's receiver cannot do to the platform: hold a worker past the delivery's
deadline, get deliveries after its endpoint was switched off, have its answer stored whole;
and URLs that cannot be sent to are refused as form errors, never as a 500."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.models import Campaign
from api.models import Event, WebhookDelivery, WebhookEndpoint
from api.tasks import sweep
from api.webhooks import DROPPED, deliver, record_due_events, send_due
from outbound.bodies import MAX_CHARS
from tests.api.test_webhooks import endpoint_for
from tests.receivers import reply

ADD = reverse("admin:api_webhookendpoint_add")


def closed_with_a_delivery(campaign, url) -> WebhookDelivery:
    endpoint = endpoint_for(campaign, url, [Event.CAMPAIGN_COMPLETE])
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    record_due_events()
    return WebhookDelivery.objects.get(endpoint=endpoint)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:99999/hook",  # before: ValueError from urlsplit, a 500
        "http://[64:ff9b::7f00:1]/hook",  # NAT64 of 127.0.0.1: before, accepted
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",  # NAT64 of the metadata service
        "http://[2002:7f00:1::1]/hook",  # 6to4 of 127.0.0.1: before, accepted
        "http://[2002:a00:1::]:8080/hook",  # 6to4 of 10.0.0.1
    ],
)
def test_urls_that_cannot_be_sent_to_are_a_field_error(campaign, changer, url):
    with pytest.raises(ValidationError) as refused:
        endpoint_for(campaign, url)
    assert list(refused.value.message_dict) == ["url"]
    answer = changer.call("POST", f"/campaigns/{campaign.slug}/webhooks/", {"url": url})
    assert answer.status_code == 422 and answer.json()["field"] == "url"
    assert not WebhookEndpoint.objects.exists()


def test_the_admin_shows_a_port_past_65535_as_a_form_error(organiser, campaign):
    data = {"campaign": campaign.pk, "url": "http://example.org:99999/hook"}
    data["events"] = '["ranking.done"]'
    page = organiser.submit(organiser.get(ADD), data, action=ADD)
    assert page.status_code == 200  # the form again, with its errors: before, a 500
    assert "not a usable URL" in page.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_a_trickling_receiver_is_cut_off_at_the_delivery_deadline(campaign, slow, settings):
    """`200 OK` then a byte every 0.2 s: before, 10 s per read and no end."""
    settings.WEBHOOK_ALLOW_PRIVATE = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    receiver = slow("trickle", 0.2)
    delivery = closed_with_a_delivery(campaign, receiver.url)
    assert deliver(delivery.pk)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("pending", 1)  # tried again later
    assert delivery.error == "no complete answer within 1 s"
    assert receiver.requests == 1


def test_a_silent_receiver_is_cut_off_at_the_delivery_deadline(campaign, slow, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    delivery = closed_with_a_delivery(campaign, slow("silent", 0.1).url)
    assert deliver(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.error == "no complete answer within 1 s" and delivery.status == "pending"


def test_a_switched_off_endpoint_gets_nothing_more(campaign, serve, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    receiver = serve(reply(503))
    delivery = closed_with_a_delivery(campaign, receiver.url)
    assert send_due() == 1  # its message is on its way to a worker
    WebhookEndpoint.objects.update(is_active=False)
    assert not deliver(delivery.pk)  # the worker drops it instead of sending
    delivery.refresh_from_db()
    assert (delivery.status, delivery.error, delivery.attempts) == ("failed", DROPPED, 0)
    assert receiver.requests == []


def test_the_sweep_drops_the_pending_deliveries_of_a_switched_off_endpoint(
    campaign, serve, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    receiver = serve(reply(503))
    delivery = closed_with_a_delivery(campaign, receiver.url)
    deliver(delivery.pk)  # failed once: pending, to be tried again
    WebhookEndpoint.objects.update(is_active=False)
    sweep()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.error, delivery.attempts) == ("failed", DROPPED, 1)
    assert send_due() == 0
    assert len(receiver.requests) == 1


def test_a_receivers_answer_is_kept_short_and_printable(campaign, serve, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    receiver = serve(reply(200, b"\x1b[2J<html>" + b"a" * 100_000))
    delivery = closed_with_a_delivery(campaign, receiver.url)
    deliver(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == "delivered"
    assert delivery.response_body == "[2J<html>" + "a" * (MAX_CHARS - 9) + "..."
