"""The site's front page: the one page that links to both the annotators' tasks and the
organisers' results, so it belongs to the project rather than to either app; and the
admin's login with its rate limits."""

from django.conf import settings
from django.contrib import admin
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_safe

from annotation import rate_limits
from annotation.models import Campaign
from annotation.permissions import may

from .forms import LoginAttemptForm

TOO_MANY_LOGINS = (
    "There have been too many attempts to log in to this account, or from this address."
)


@require_safe
def home(request):
    # Campaign names and descriptions are the organisers' business (an annotator reaches a
    # task through the link of a study or an invitation), so only those who may see
    # campaigns in the admin find them listed here.
    organiser = may(request.user, "view")
    campaigns = (
        Campaign.objects.prefetch_related("criteria") if organiser else Campaign.objects.none()
    )
    return render(request, "home.html", {"campaigns": campaigns, "organiser": organiser})


@sensitive_post_parameters("password")
@never_cache
def admin_login(request, extra_context=None):
    """The admin's login page, with each attempt (a POST) counted per address and per
    account: beyond RATE_LIMIT_LOGIN_ADDRESS or RATE_LIMIT_LOGIN_ACCOUNT it is refused (429)
    before the password is checked."""
    if request.method == "POST":
        try:
            count_login_attempt(request)
        except rate_limits.RateLimited as limited:
            return rate_limits.too_many_requests(request, limited, TOO_MANY_LOGINS)
    return admin.site.login(request, extra_context)


def count_login_attempt(request) -> None:
    address = rate_limits.client_address(request)
    rate_limits.count("login-address", address, settings.RATE_LIMIT_LOGIN_ADDRESS)
    account = LoginAttemptForm(request.POST).account()
    if account:
        rate_limits.count("login-account", account, settings.RATE_LIMIT_LOGIN_ACCOUNT)
