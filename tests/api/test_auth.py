from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from annotation.models import Campaign
from api.models import ApiToken, digest
from api.tokens import TokenEnded, create_token, rotate_token
from tests.api.conftest import ApiClient
from tests.factories import make_campaign


def test_no_token_is_401(campaign):
    response = ApiClient().call("GET", f"/campaigns/{campaign.slug}/")
    assert response.status_code == 401


def test_unknown_token_is_401(campaign):
    response = ApiClient("nlgeval_not-a-token").call("GET", "/campaigns/")
    assert response.status_code == 401


def test_token_reads_its_campaign_and_records_its_use(changer, campaign):
    response = changer.call("GET", f"/campaigns/{campaign.slug}/")
    assert response.status_code == 200
    assert response.json()["slug"] == campaign.slug
    assert ApiToken.objects.get().last_used_at is not None


def test_secret_is_stored_hashed(organiser_user, campaign):
    token, secret = create_token(organiser_user, "x", [campaign])
    token.refresh_from_db()
    assert token.secret_sha256 == digest(secret) and secret not in token.secret_sha256
    assert secret.startswith(token.hint) and len(secret) > 40


def test_campaign_outside_the_scope_is_404(changer):
    other = make_campaign(slug="other")
    assert changer.call("GET", f"/campaigns/{other.slug}/").status_code == 404
    response = changer.call("PATCH", f"/campaigns/{other.slug}/", {"name": "taken"})
    assert response.status_code == 404
    other.refresh_from_db()
    assert other.name != "taken"


def test_token_without_campaigns_reaches_none(organiser_user, campaign):
    _, secret = create_token(organiser_user, "empty", [], change=True)
    client = ApiClient(secret)
    assert client.call("GET", "/campaigns/").json() == []
    assert client.call("GET", f"/campaigns/{campaign.slug}/").status_code == 404


def test_revoked_token_is_401(changer, campaign):
    ApiToken.objects.get().revoke()
    assert changer.call("GET", f"/campaigns/{campaign.slug}/").status_code == 401


def test_view_token_cannot_change(looker, campaign):
    response = looker.call("PATCH", f"/campaigns/{campaign.slug}/", {"status": "closed"})
    assert response.status_code == 403
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.OPEN
    items = {"items": [{"id": "new", "kind": "mr", "input": {"attributes": [["name", "X"]]}}]}
    assert looker.call("POST", f"/campaigns/{campaign.slug}/items/", items).status_code == 403
    assert not campaign.items.filter(external_id="new").exists()


def test_change_token_of_a_viewer_cannot_change(viewer_user, campaign):
    """The token's level is a ceiling: its user's permissions decide too."""
    _, secret = create_token(viewer_user, "wide", [campaign], change=True)
    client = ApiClient(secret)
    assert client.call("GET", f"/campaigns/{campaign.slug}/").status_code == 200
    response = client.call("PATCH", f"/campaigns/{campaign.slug}/", {"name": "renamed"})
    assert response.status_code == 403
    campaign.refresh_from_db()
    assert campaign.name != "renamed"


def test_token_of_a_user_who_lost_staff_status_is_refused(organiser_user, changer, campaign):
    organiser_user.is_staff = False
    organiser_user.save()
    assert changer.call("GET", f"/campaigns/{campaign.slug}/").status_code == 403


def test_token_of_an_inactive_user_is_401(organiser_user, changer, campaign):
    organiser_user.is_active = False
    organiser_user.save()
    assert changer.call("GET", f"/campaigns/{campaign.slug}/").status_code == 401


def test_api_token_command_prints_a_token_once(organiser_user, campaign, capsys):
    call_command("api_token", organiser_user.username, "--campaign", campaign.slug, "--change")
    secret = capsys.readouterr().out.strip()
    token = ApiToken.objects.get()
    assert token.secret_sha256 == digest(secret)
    assert token.level == ApiToken.Level.CHANGE
    assert list(token.campaigns.all()) == [campaign]
    assert ApiClient(secret).call("GET", f"/campaigns/{campaign.slug}/").status_code == 200


def test_api_token_command_refuses_an_unknown_campaign(organiser_user):
    with pytest.raises(CommandError, match="no campaign nowhere"):
        call_command("api_token", organiser_user.username, "--campaign", "nowhere")
    assert not ApiToken.objects.exists()


# Expiry and rotation ---------------------------------------------------------------------------


def test_token_ends_after_api_token_days(organiser_user, campaign, settings):
    settings.API_TOKEN_DAYS = 30
    token, secret = create_token(organiser_user, "pipeline", [campaign])
    lifetime = token.expires_at - token.created_at
    assert timedelta(days=30) - timedelta(minutes=1) < lifetime <= timedelta(days=30)
    client = ApiClient(secret)
    assert client.call("GET", f"/campaigns/{campaign.slug}/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.call("GET", f"/campaigns/{campaign.slug}/").status_code == 401
    token.refresh_from_db()
    assert token.revoked_at is None  # ended by its date alone


def test_token_days_may_be_fewer_never_more_than_the_setting(organiser_user, settings):
    settings.API_TOKEN_DAYS = 30
    token, _ = create_token(organiser_user, "short", days=1)
    assert token.expires_at - token.created_at <= timedelta(days=1)
    with pytest.raises(ValueError, match="1 to 30 days"):
        create_token(organiser_user, "long", days=31)
    with pytest.raises(CommandError, match="1 to 30 days"):
        call_command("api_token", organiser_user.username, "--days", "365")
    assert ApiToken.objects.count() == 1


def test_rotation_gives_a_new_token_in_the_old_ones_place(organiser_user, campaign):
    old, old_secret = create_token(organiser_user, "pipeline", [campaign], change=True)
    ApiToken.objects.filter(pk=old.pk).update(expires_at=timezone.now() + timedelta(days=2))
    new, new_secret = rotate_token(old)
    assert (new.user, new.name, new.level) == (organiser_user, "pipeline", "change")
    assert list(new.campaigns.all()) == [campaign]
    assert new.expires_at > timezone.now() + timedelta(days=80)  # a full API_TOKEN_DAYS
    assert ApiClient(old_secret).call("GET", f"/campaigns/{campaign.slug}/").status_code == 401
    assert ApiClient(new_secret).call("GET", f"/campaigns/{campaign.slug}/").status_code == 200
    old.refresh_from_db()
    assert old.revoked_at is not None
    with pytest.raises(TokenEnded):
        rotate_token(old)  # once ended, a token stays ended: make a new one
    assert ApiToken.objects.live().get() == new


def test_rotate_api_token_command_prints_the_new_secret_once(organiser_user, campaign, capsys):
    old, old_secret = create_token(organiser_user, "pipeline", [campaign])
    call_command("rotate_api_token", str(old.pk))
    new_secret = capsys.readouterr().out.strip()
    new = ApiToken.objects.live().get()
    assert new.secret_sha256 == digest(new_secret) and new.pk != old.pk
    assert ApiClient(old_secret).call("GET", "/campaigns/").status_code == 401
    with pytest.raises(CommandError, match="revoked or expired"):
        call_command("rotate_api_token", str(old.pk))
    with pytest.raises(CommandError, match="no API token"):
        call_command("rotate_api_token", "999999")
    assert ApiToken.objects.count() == 2


# Rate limit per token ------------------------------------------------------------------------


def test_token_beyond_its_rate_gets_429_with_retry_after(organiser_user, campaign, settings):
    # A day: windows are fixed on the clock, and a short one could end between the requests.
    settings.RATE_LIMIT_API = (3, 86_400)
    _, secret = create_token(organiser_user, "busy", [campaign])
    _, other_secret = create_token(organiser_user, "calm", [campaign])
    busy = ApiClient(secret)
    statuses = [busy.call("GET", f"/campaigns/{campaign.slug}/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = busy.call("PATCH", f"/campaigns/{campaign.slug}/", {"name": "changed"})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 86_400
    assert "too many requests" in refused.json()["detail"]
    campaign.refresh_from_db()
    assert campaign.name != "changed"  # refused before the endpoint ran
    # Per token: another token of the same user is not held back.
    assert ApiClient(other_secret).call("GET", "/campaigns/").status_code == 200
