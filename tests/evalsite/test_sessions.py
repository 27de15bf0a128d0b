"""Sessions (evalsite/sessions.py): a login lasts until logout, even in a copied cookie;
annotators keep a signed cookie with nothing on the server."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from tests.world import Person

pytestmark = pytest.mark.django_db

COOKIE = settings.SESSION_COOKIE_NAME


def log_in(username: str = "organiser") -> Person:
    """A staff member logged in through the admin's login page, as a person does."""
    User.objects.create_user(username, password="pw", is_staff=True, is_superuser=True)
    person = Person()
    page = person.get(reverse("admin:login"))
    response = person.submit(page, {"username": username, "password": "pw"})
    assert response.status_code == 302, response.status_code
    return person


def replay(cookie: str) -> Person:
    thief = Person()
    thief.cookies[COOKIE] = cookie
    return thief


def test_session_copied_before_logout_is_refused_after_it():
    organiser = log_in()
    copied = organiser.cookies[COOKIE].value
    assert replay(copied).get(reverse("admin:index")).status_code == 200  # the attack, before
    index = organiser.get(reverse("admin:index"))
    assert organiser.submit(index, action=reverse("admin:logout")).status_code == 200
    assert not Session.objects.exists()
    response = replay(copied).get(reverse("admin:index"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))
    # The stale cookie is cleared rather than sent again.
    assert response.cookies[COOKIE].value == ""


def test_session_of_each_login_has_its_own_row_and_logout_ends_only_its_own():
    organiser = log_in()
    second = Person()
    page = second.get(reverse("admin:login"))
    second.submit(page, {"username": "organiser", "password": "pw"})
    assert Session.objects.count() == 2
    index = organiser.get(reverse("admin:index"))
    organiser.submit(index, action=reverse("admin:logout"))
    assert Session.objects.count() == 1
    assert second.get(reverse("admin:index")).status_code == 200


def test_session_from_before_login_does_not_carry_the_login():
    person = Person()
    page = person.get(reverse("admin:login"))
    before = person.cookies.get(COOKIE)
    User.objects.create_user("organiser", password="pw", is_staff=True)
    person.submit(page, {"username": "organiser", "password": "pw"})
    assert before is None or person.cookies[COOKIE].value != before.value
    assert Session.objects.count() == 1


def test_session_of_an_annotator_stays_a_signed_cookie_without_a_row(worker, campaign):
    signed = worker.cookies[COOKIE].value
    assert signed.count(":") >= 2  # Django's signed value: data:timestamp:signature
    with CaptureQueriesContext(connection) as queries:
        page = worker.get(reverse("annotation:entry", args=[campaign.slug, "quality"]))
    assert page.status_code in (200, 302)
    assert not [query for query in queries if "django_session" in query["sql"]]
    assert not Session.objects.exists()


def test_session_rows_expired_are_deleted_by_clearsessions():
    log_in()
    live = Session.objects.get()
    Session.objects.create(
        session_key="x" * 32, session_data="1", expire_date=timezone.now() - timedelta(days=1)
    )
    call_command("clearsessions")
    assert list(Session.objects.all()) == [live]
