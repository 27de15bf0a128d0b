import re

from django.contrib.auth.models import Permission
from django.urls import reverse

from api.models import ApiToken, ProlificHook, WebhookEndpoint, digest
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


# Webhooks and Prolific hooks: secrets shown once, the campaign's permission asked (issue 39)

WEBHOOK_ADD = reverse("admin:api_webhookendpoint_add")
HOOK_ADD = reverse("admin:api_prolifichook_add")


def with_api_permissions(person, *codenames: str):
    """`person` given every permission on the api app's models (or only `codenames`)."""
    permissions = Permission.objects.filter(content_type__app_label="api")
    if codenames:
        permissions = permissions.filter(codename__in=codenames)
    person.user.user_permissions.add(*permissions)
    return person


def add_webhook(person, campaign):
    data = {"campaign": campaign.pk, "url": "http://127.0.0.1:9/hook", "events": '["ranking.done"]'}
    data["is_active"] = "on"
    return person.submit(person.get(WEBHOOK_ADD), data, action=WEBHOOK_ADD)


def test_webhook_secret_is_shown_once_when_added_and_never_again(
    organiser, viewer, campaign, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    page = add_webhook(organiser, campaign)
    endpoint = WebhookEndpoint.objects.get()
    shown = re.search(r'<code id="webhook-secret">([^<]+)</code>', page.content.decode())
    assert shown.group(1) == endpoint.secret and endpoint.secret.startswith("whsec_")
    with_api_permissions(viewer, "view_webhookendpoint")
    change = reverse("admin:api_webhookendpoint_change", args=[endpoint.pk])
    for person in (organiser, viewer):
        for url in (change, reverse("admin:api_webhookendpoint_changelist")):
            response = person.get(url)
            assert response.status_code == 200
            assert endpoint.secret not in response.content.decode()
    api = ApiClient(create_token(organiser.user, "t", [campaign], change=True)[1])
    listed = api.call("GET", f"/campaigns/{campaign.slug}/webhooks/").json()
    assert [(e["id"], e["secret"]) for e in listed] == [(endpoint.pk, None)]


def test_webhook_cannot_be_added_on_a_campaign_whose_results_are_403(
    clerk, viewer, campaign, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    data = {"campaign": campaign.pk, "url": "http://127.0.0.1:9/", "events": '["ranking.done"]'}
    for person in (with_api_permissions(clerk), with_api_permissions(viewer)):
        # The clerk may not see the results; the viewer may, but not change the campaign.
        assert person.get(WEBHOOK_ADD).status_code == 403
        assert person.send("POST", WEBHOOK_ADD, data).status_code == 403
    results = reverse("ranking:results", args=[campaign.slug, "quality"])
    assert clerk.get(results).status_code == 403
    assert not WebhookEndpoint.objects.exists()


def test_prolific_hook_secret_is_written_never_shown(organiser, viewer, campaign):
    page = organiser.submit(
        organiser.get(HOOK_ADD),
        {"campaign": campaign.pk, "new_secret": "hook-secret-1"},
        action=HOOK_ADD,
    )
    assert page.status_code == 302
    hook = ProlificHook.objects.get()
    assert hook.secret == "hook-secret-1"
    change = reverse("admin:api_prolifichook_change", args=[hook.pk])
    with_api_permissions(viewer, "view_prolifichook")
    for person in (organiser, viewer):
        assert "hook-secret-1" not in person.get(change).content.decode()
    # Left empty, the secret is kept; typed again, replaced.
    for typed, stored in (("", "hook-secret-1"), ("hook-secret-2", "hook-secret-2")):
        data = {"campaign": campaign.pk, "new_secret": typed}
        assert organiser.submit(organiser.get(change), data, action=change).status_code == 302
        hook.refresh_from_db()
        assert hook.secret == stored
    assert hook.secret == "hook-secret-2"
    assert "hook-secret-2" not in organiser.get(change).content.decode()


def test_prolific_hook_needs_a_secret_when_added(organiser, campaign):
    page = organiser.submit(organiser.get(HOOK_ADD), {"campaign": campaign.pk}, action=HOOK_ADD)
    assert (
        page.status_code == 200
        and "Give the workspace&#x27;s hook secret." in page.content.decode()
    )
    assert not ProlificHook.objects.exists()


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


def test_webhook_url_typed_without_a_scheme_is_https(organiser, campaign, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True  # no name resolves here: the address is the host
    data = {"campaign": campaign.pk, "url": "127.0.0.1:9/hook", "events": '["ranking.done"]'}
    organiser.submit(organiser.get(WEBHOOK_ADD), data, action=WEBHOOK_ADD)
    assert WebhookEndpoint.objects.get().url == "https://127.0.0.1:9/hook"
