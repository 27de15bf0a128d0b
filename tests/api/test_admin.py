import re

from django.contrib.auth.models import Permission
from django.urls import reverse

from api.models import ApiToken, digest
from api.tokens import create_token
from tests.api.conftest import ApiClient

ADD = reverse("admin:api_apitoken_add")
LIST = reverse("admin:api_apitoken_changelist")


def test_admin_makes_a_token_shows_it_once_and_revokes_it(organiser, campaign):
    data = {"name": "pipeline", "level": "change", "campaigns": [campaign.pk]}
    data["user"] = organiser.user.pk
    page = organiser.submit(organiser.get(ADD), data, action=ADD)
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    secret = re.search(r'<code id="api-token">([^<]+)</code>', page.content.decode()).group(1)
    token = ApiToken.objects.get()
    assert token.secret_sha256 == digest(secret) and token.user == organiser.user
    change_page = organiser.get(reverse("admin:api_apitoken_change", args=[token.pk]))
    assert secret not in change_page.content.decode()
    assert ApiClient(secret).call("GET", f"/campaigns/{campaign.slug}/").status_code == 200
    chosen = {"action": "revoke", "_selected_action": [token.pk]}
    organiser.submit(organiser.get(LIST), chosen, action=LIST)
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert ApiClient(secret).call("GET", f"/campaigns/{campaign.slug}/").status_code == 401


def test_staff_make_tokens_for_themselves_only(viewer, organiser, campaign):
    viewer.user.user_permissions.add(*Permission.objects.filter(content_type__app_label="api"))
    data = {"name": "mine", "level": "view", "user": organiser.user.pk}
    page = viewer.submit(viewer.get(ADD), data, action=ADD)
    assert page.status_code == 200
    assert ApiToken.objects.get().user == viewer.user


def test_clerk_cannot_reach_the_tokens(clerk):
    assert clerk.get(ADD).status_code == 403
    assert clerk.send("POST", ADD, {"name": "x", "level": "change"}).status_code == 403
    assert not ApiToken.objects.exists()


def test_admin_rotates_a_token_shows_the_new_secret_once_and_ends_the_old(organiser, campaign):
    old, old_secret = create_token(organiser.user, "pipeline", [campaign], change=True)
    chosen = {"action": "rotate", "_selected_action": [old.pk]}
    page = organiser.submit(organiser.get(LIST), chosen, action=LIST)
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    text = page.content.decode()
    secret = re.search(r'<code id="api-token">([^<]+)</code>', text).group(1)
    assert f"replaces token {old.hint}" in text
    new = ApiToken.objects.live().get()
    assert new.secret_sha256 == digest(secret) and new.pk != old.pk
    assert (new.name, new.level, list(new.campaigns.all())) == ("pipeline", "change", [campaign])
    assert ApiClient(old_secret).call("GET", f"/campaigns/{campaign.slug}/").status_code == 401
    assert ApiClient(secret).call("GET", f"/campaigns/{campaign.slug}/").status_code == 200
    # Rotated already: a second rotation of it says so and makes nothing.
    page = organiser.submit(organiser.get(LIST), chosen, action=LIST, follow=True)
    assert "revoked or expired" in page.content.decode()
    assert ApiToken.objects.count() == 2


def test_admin_rotates_one_token_at_a_time(organiser, campaign):
    tokens = [create_token(organiser.user, name)[0] for name in ("a", "b")]
    chosen = {"action": "rotate", "_selected_action": [t.pk for t in tokens]}
    page = organiser.submit(organiser.get(LIST), chosen, action=LIST, follow=True)
    assert "Rotate one token at a time" in page.content.decode()
    assert ApiToken.objects.live().count() == 2 and ApiToken.objects.count() == 2
