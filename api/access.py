"""Who may do what through the API: the token's scope and level, and the admin's rule.

A request reaches a campaign only if its token names the campaign, the token's level allows
the action (a view token cannot change), and the token's user may still do it in the admin
(annotation.permissions.may). A campaign outside the token's scope is answered 404, as if it
did not exist; a campaign in scope that the token may only view is answered 403 on a change.
"""

from django.contrib.auth import get_permission_codename
from django.http import Http404
from ninja.errors import HttpError

from annotation.models import Campaign
from annotation.permissions import Action, may

from .models import ApiToken


def token_may(token: ApiToken, action: Action) -> bool:
    if action == "change" and token.level != ApiToken.Level.CHANGE:
        return False
    return may(token.user, action)


def require(token: ApiToken, action: Action) -> None:
    if not token_may(token, action):
        raise HttpError(403, f"this token may not {action} campaigns")


def campaign_for(token: ApiToken, slug: str, action: Action) -> Campaign:
    """The campaign `slug` if the token reaches it; 404 outside its scope, 403 if the
    token or its user may not take the action."""
    campaign = Campaign.objects.filter(slug=slug, pk__in=token.campaigns.values("pk")).first()
    if campaign is None:
        raise Http404("no such campaign in this token's scope")
    require(token, action)
    return campaign


def may_add_campaigns(token: ApiToken) -> bool:
    codename = get_permission_codename("add", Campaign._meta)
    return token_may(token, "change") and token.user.has_perm(f"annotation.{codename}")
