"""The people of the view tests, each with a browser (tests/client.py: HTTPS, CSRF checked).

- `organiser`: a staff user, logged in, who runs campaigns in the admin and reads results.
- `worker`: a crowd worker who came in through the Prolific link of `campaign`; the session
  recognises them as `worker.annotator`.
- `other_worker`: a second worker of the same campaign, with their own browser.
- `stranger`: a browser the site does not know: no annotator, no login.
- `non_staff`: a logged-in user without staff status.
- `clerk`: staff, so let into the admin, but without any model permission.
- `viewer`: staff with the one permission to view campaigns, not to change them.

Registered for the whole suite in tests/conftest.py. After healthchecks' hc/test.py, whose
base test case makes a project's owner, a team member and an outsider.
"""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import QUALITY, Annotator, Campaign
from tests.client import Browser
from tests.factories import make_campaign, make_system_set


class Person(Browser):
    """A browser and who uses it: an account (`user`) or a crowd worker (`annotator`)."""

    user: User | None = None
    annotator: Annotator | None = None

    def enter(self, campaign: Campaign, criterion: str = QUALITY, pid: str = "pid-1") -> Annotator:
        """Arrive through the Prolific link of `campaign`; return the annotator this browser's
        session now holds."""
        query = {"PROLIFIC_PID": pid, "STUDY_ID": "study-1", "SESSION_ID": "session-1"}
        response = self.get(reverse("annotation:entry", args=[campaign.slug, criterion]), query)
        assert response.status_code == 302, response.status_code
        self.annotator = Annotator.objects.get(campaign=campaign, external_id=pid)
        return self.annotator


def logged_in(username: str, **fields) -> Person:
    person = Person()
    person.user = User.objects.create_user(username, f"{username}@example.org", "pw", **fields)
    person.force_login(person.user)
    return person


@pytest.fixture
def campaign(db) -> Campaign:
    """An open campaign of 3 systems and 4 items, 3 outputs per HIT, no minimum time."""
    open_campaign = make_campaign(outputs_per_hit=3, min_seconds_per_hit=0)
    make_system_set(open_campaign, systems=3, items=4)
    return open_campaign


@pytest.fixture
def organiser(db) -> Person:
    return logged_in("organiser", is_staff=True, is_superuser=True)


@pytest.fixture
def non_staff(db) -> Person:
    return logged_in("member")


@pytest.fixture
def clerk(db) -> Person:
    return logged_in("clerk", is_staff=True)


@pytest.fixture
def viewer(db) -> Person:
    person = logged_in("viewer", is_staff=True)
    person.user.user_permissions.add(
        Permission.objects.get(codename="view_campaign", content_type__app_label="annotation")
    )
    return person


@pytest.fixture
def worker(campaign) -> Person:
    person = Person()
    person.enter(campaign, pid="worker-1")
    return person


@pytest.fixture
def other_worker(campaign) -> Person:
    person = Person()
    person.enter(campaign, pid="worker-2")
    return person


@pytest.fixture
def stranger(db) -> Person:
    return Person()
