"""A DA page that writes another criterion's judgments, submitted while an organiser's
change locks the campaign's criteria (an exclusion: annotation.handout.loads.lock_criteria,
in id order), on PostgreSQL with real connections. The page's criterion has the higher id:
had the submission locked its own row first and the further one's after, each transaction
would hold the row the other waits for, and PostgreSQL would abort one of them."""

import threading
import time

import pytest
from django.db import connection, connections, transaction

from annotation.handout.loads import lock_criteria
from annotation.judging import clean_criterion
from annotation.models import NATURALNESS, QUALITY, Assignment, CampaignCriterion, Judgment
from tests.annotation.test_assignment import needs_postgres
from tests.annotation.test_da import DA, url
from tests.factories import make_campaign, make_system_set
from tests.world import Person


def naturalness_page_asking_quality():
    """Naturalness (made after quality: the higher id) is the DA page, asking quality."""
    campaign = make_campaign(outputs_per_hit=2, min_seconds_per_hit=0)
    make_system_set(campaign, systems=2, items=2)
    quality = campaign.criteria.get(name=QUALITY)
    naturalness = campaign.criteria.get(name=NATURALNESS)
    assert quality.pk < naturalness.pk
    quality.form = DA
    quality.save()
    naturalness.form, naturalness.settings = DA, {"also_asks": [QUALITY]}
    clean_criterion(naturalness)
    naturalness.save()
    return campaign, quality, naturalness


def waiting_on_a_lock(excluding_pid: int) -> bool:
    """Whether another connection to this database waits for a lock."""
    with connection.cursor() as cursor:
        # Inside a transaction the statistics views show a snapshot: take a fresh one.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> %s AND wait_event_type = 'Lock'",
            [excluding_pid],
        )
        return cursor.fetchone()[0] > 0


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_a_da_page_writing_another_criterion_never_deadlocks_with_an_exclusion():
    campaign, quality, naturalness = naturalness_page_asking_quality()
    person = Person()
    person.enter(campaign, NATURALNESS, pid="da-worker")
    person.submit(person.get(url(campaign, "entry", NATURALNESS)))
    assignment = Assignment.objects.get(annotator=person.annotator)
    page = person.get(url(campaign, "hit", NATURALNESS, assignment.pk))
    slots = list(assignment.hit.slots.order_by("position"))
    data = {"submission_key": "k"}
    for slot, score in zip(slots, (40, 60), strict=True):
        data[f"score_{slot.position}_0"] = data[f"score_{slot.position}_1"] = str(score)

    errors, responses = [], []
    organiser_holds_quality = threading.Event()

    def organiser():
        # Holds the lower id (quality), as an exclusion locking every criterion in id order
        # does before it reaches the next; takes naturalness once the submission waits.
        try:
            with transaction.atomic():
                lock_criteria(CampaignCriterion.objects.filter(pk=quality.pk))
                me = connection.connection.info.backend_pid
                organiser_holds_quality.set()
                deadline = time.monotonic() + 30
                while not waiting_on_a_lock(me) and time.monotonic() < deadline:
                    time.sleep(0.05)
                lock_criteria(CampaignCriterion.objects.filter(pk=naturalness.pk))
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    def annotator():
        try:
            organiser_holds_quality.wait(30)
            responses.append(person.submit(page, data))
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=organiser), threading.Thread(target=annotator)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors  # a deadlock: "deadlock detected" in one of them
    assert [response.status_code for response in responses] == [302]
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    judged = Judgment.objects.filter(assignment=assignment)
    assert sorted(judged.values_list("criterion__name", "score")) == [
        (NATURALNESS, 40.0),
        (NATURALNESS, 60.0),
        (QUALITY, 40.0),
        (QUALITY, 60.0),
    ]
