"""Webhooks through the real processes: the worker's beat finds the event, the worker sends
it, a 500 is retried after its wait, and the receiver checks the signature."""

import pytest

from annotation.models import Campaign
from api.models import Event, WebhookDelivery
from evalsite.celery import app
from tests.api.test_webhooks import Receiver, endpoint_for, verified
from tests.conftest import wait_until, worker_environment
from tests.factories import make_campaign
from tests.processes import start_worker, stop

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def webhook_worker(django_db_setup, django_db_blocker, tmp_path_factory):
    """A worker with its beat that may send to loopback and retries after a second."""
    with django_db_blocker.unblock():
        env = worker_environment(WEBHOOK_ALLOW_PRIVATE="1", WEBHOOK_RETRY_SECONDS="1")
    app.control.purge()
    log = tmp_path_factory.mktemp("celery") / "worker.log"
    worker = start_worker(env, log, "--pool=solo")
    yield log
    stop(worker)


def test_worker_delivers_a_signed_event_and_retries_after_a_500(webhook_worker, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True  # to save the endpoint in this process
    receiver = Receiver([500])
    try:
        campaign = make_campaign()
        endpoint = endpoint_for(campaign, receiver.url, [Event.CAMPAIGN_COMPLETE])
        Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
        delivered = wait_until(
            lambda: WebhookDelivery.objects.filter(status="delivered").first(),
            timeout=60,
            message=f"no delivery:\n{webhook_worker.read_text()[-3000:]}",
        )
    finally:
        receiver.close()
    assert (delivered.attempts, delivered.response_code) == (2, 200)
    assert [h["webhook-id"] for h, _ in receiver.requests] == [delivered.message_id] * 2
    payload = verified(endpoint.secret, *receiver.requests[-1])
    assert payload == {**payload, "type": "campaign.complete"}
    assert payload["data"] == {"campaign": campaign.slug}
