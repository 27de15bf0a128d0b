"""Every address of the site, walked as a staff member without any model permission, and
as one with every model permission but the campaigns' (issue 39: a permission on webhooks
showed their secrets to staff who may not see the campaign).

Staff status lets a person into the admin; what they see there is what their model
permissions allow. The walk takes every URL pattern from the project's resolver, so a new
organiser page that checks only staff status (or nothing) fails here, whichever app it is in.
Only the pages below are meant for anyone: the annotators' tasks, the front page, and the
admin's own login, logout, password and index pages (which show a person only what they may
see).
"""

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.models import Permission, User
from django.http import HttpResponse
from django.test import override_settings
from django.urls import URLPattern, URLResolver, get_resolver, path, reverse

from annotation.models import Annotator, Campaign, DataFile
from api.models import (
    ApiToken,
    BonusRule,
    ProlificEvent,
    ProlificHook,
    WebhookDelivery,
    WebhookEndpoint,
)
from generation.models import GenerationJob, HostedSystem
from judges.models import Judge, JudgeJob
from ranking.agreement.models import AnnotatorAgreement
from ranking.automatic_metrics.models import MetricRun
from ranking.models import RankingRun
from tests.factories import make_judged_hit, make_system_set
from tests.world import Person, logged_in

pytestmark = pytest.mark.django_db

PUBLIC = {
    "home",
    "admin:index",
    "admin:login",
    "admin_login",  # the same page, with its rate limits (evalsite/views.py)
    "admin:logout",
    "admin:password_change",
    "admin:password_change_done",
    "admin:jsi18n",
    # Django's "view on site" redirect: to an object's own page, which our models lack.
    "admin:view_on_site",
    # The admin's unnamed patterns: its catch-all (404 for any address it does not know) and
    # the redirects from an object's address to its change page, which is walked.
    "admin:",
    # The API's schema and its page (they describe the endpoints, and show no data), and
    # its root (404).
    "api-v1:openapi-json",
    "api-v1:openapi-view",
    "api-v1:api-root",
    # Prolific's events: no session nor token, each is checked against its signature.
    "api-v1:prolific_event",
}
PUBLIC_NAMESPACES = ("annotation:",)  # the annotators' pages: anyone with a link

# What a form of each page would carry, so that a view without its check would act.
POSTED = {
    "protocol": "bootstrap",
    "repetitions": 100,
    "seed": 1,
    "criterion": "quality",
    "format": "markdown",
    "names": "mallory",
    "file_format": "csv",
    "action": "delete_selected",
}


def url_patterns(resolver: URLResolver, namespace: str = ""):
    """(namespaced name, pattern) for every pattern under `resolver`."""
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from url_patterns(pattern, inner)
        else:
            yield f"{namespace}{pattern.name or ''}", pattern


def arguments(pattern: URLPattern, campaign: Campaign) -> dict | None:
    """Values for the pattern's arguments: the campaign, its first criterion, and for an
    admin page about one object, an object of that page's model; None for such a page of a
    model without rows (the admin sends anyone from it to its index before any check)."""
    names = set(pattern.pattern.regex.groupindex)
    model_admin = getattr(pattern.callback, "model_admin", None)
    found = model_admin.model.objects.order_by("pk").first() if model_admin else None
    if names & {"object_id", "id"} and model_admin and found is None:
        return None
    values = {
        "slug": campaign.slug,
        "criterion_name": "quality",
        "campaign_id": campaign.pk,
        "object_id": str(found.pk) if found else "",
        "id": found.pk if found else None,  # the user admin's password page
        "app_label": "annotation",
        "job_id": 1,  # an upload's page checks the campaign's permission before the job
        "judge_id": 1,  # as does a judge's agreement CSV before the judge
        "system": "s1",
        "criterion": "quality",
    }
    return {name: values[name] for name in names}


def organiser_urls(campaign: Campaign) -> dict[str, int]:
    """Each organiser page's address, and the answer due to staff without permissions."""
    urls = {}
    for name, pattern in url_patterns(get_resolver()):
        if name in PUBLIC or name.startswith(PUBLIC_NAMESPACES):
            continue
        assert pattern.name, f"an organiser page without a name (the walk needs one): {pattern}"
        kwargs = arguments(pattern, campaign)
        if kwargs is not None:
            # The admin's page of one app is 404 for those who may see none of its models;
            # the API knows no session, only tokens: 401 without one.
            due = 404 if name == "admin:app_list" else 401 if name.startswith("api-") else 403
            urls[reverse(name, kwargs=kwargs)] = due
    return urls


def row_counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def answered_otherwise(person, urls: dict[str, int]) -> dict[str, tuple[int, int]]:
    """The addresses whose GET or POST answer differs from the one due: (GET, POST)."""
    wrong = {}
    for url, due in urls.items():
        got = person.get(url).status_code
        # A POST-only check inside the admin may answer 405 first: nothing is done either way.
        sent = person.send("POST", url, POSTED).status_code
        # So may the API's POST-only endpoints to a GET (the method is checked first there).
        got_due = (due, 405) if url.startswith("/api/") else (due,)
        if got not in got_due or sent not in (due, 405):
            wrong[url] = (got, sent)
    return wrong


def test_every_organiser_url_refuses_staff_without_permissions(clerk):
    campaign, _, items = make_system_set(systems=3, items=2)
    make_judged_hit(list(items[0].outputs.order_by("system__name")), [300, 100, 50])
    before = row_counts()
    urls = organiser_urls(campaign)
    assert len(urls) > 60  # the admin's pages of every model, and ours
    assert answered_otherwise(clerk, urls) == {}
    assert row_counts() == before


def one_row_of_each_admin(campaign: Campaign, owner: User) -> None:
    """A row for each admin of a campaign's objects that the campaign's data does not make,
    so the walk opens every one's change, delete and history pages, not only its list (the
    token is `owner`'s: staff see only their own)."""
    criterion = campaign.criteria.get(name="quality")
    system = campaign.systems.order_by("pk").first()
    annotator = Annotator.objects.filter(campaign=campaign).first()
    endpoint = WebhookEndpoint.objects.create(campaign=campaign, url="https://example.org/")
    WebhookDelivery.objects.create(endpoint=endpoint, event="ranking.done", event_key="k",
                                   message_id="msg_1", payload={})  # fmt: skip
    hook = ProlificHook.objects.create(campaign=campaign, secret="prolific-hook-secret")
    ProlificEvent.objects.create(hook=hook, event_id="e1", event_type="t", outcome="o")
    BonusRule.objects.create(campaign=campaign)
    ApiToken.objects.create(name="t", user=owner, secret_sha256="x")
    judge = Judge.objects.create(criterion=criterion, name="j", kind="metric")
    JudgeJob.objects.create(judge=judge)
    hosted = HostedSystem.objects.create(system=system, backend="template")
    GenerationJob.objects.create(hosted=hosted)
    run = RankingRun.objects.create(campaign=campaign, criterion=criterion)
    AnnotatorAgreement.objects.create(run=run, annotator=annotator, hits=1, flagged=0,
                                      shared_units=0, excluded=False)  # fmt: skip
    MetricRun.objects.create(campaign=campaign)
    DataFile.objects.create(campaign=campaign, kind="items", name="f", sha256="0" * 64, rows=1)


@pytest.fixture
def keeper(db) -> Person:
    """Staff with every permission on every model of the project but campaigns: on
    webhooks, Prolific hooks, judges, API tokens, jobs, items... (and none of auth's)."""
    person = logged_in("keeper", is_staff=True)
    ours = Permission.objects.exclude(content_type__app_label__in=["auth", "contenttypes"])
    person.user.user_permissions.add(*ours.exclude(content_type__model="campaign"))
    return person


def test_every_page_of_a_campaigns_objects_refuses_staff_without_campaign_permissions(keeper):
    """A permission on a model of the campaign's (a webhook, a judge, a token) without the
    campaign's own is no way in: 403 on every page of every admin, rows of each made."""
    campaign, _, items = make_system_set(systems=3, items=2)
    make_judged_hit(list(items[0].outputs.order_by("system__name")), [300, 100, 50])
    one_row_of_each_admin(campaign, keeper.user)
    before = row_counts()
    urls = organiser_urls(campaign)
    unwalked = {
        admin_class.model._meta.label
        for admin_class in admin.site._registry.values()
        if not admin_class.model.objects.exists()
    }
    assert unwalked <= {"auth.Group"}  # every other admin's object pages are in `urls`
    assert answered_otherwise(keeper, urls) == {}
    assert row_counts() == before


@staff_member_required
def unchecked(request, slug):
    return HttpResponse(f"{slug}: for any staff member")


# The project's addresses and one page that checks only staff status, as the results pages
# did before they checked permissions.
urlpatterns = [
    *get_resolver("evalsite.urls").url_patterns,
    path("gap/<slug:slug>/", unchecked, name="gap"),
]


@override_settings(ROOT_URLCONF=__name__)
def test_every_organiser_url_walk_finds_a_page_that_checks_only_staff_status(clerk):
    campaign = make_system_set(systems=2, items=1)[0]
    urls = organiser_urls(campaign)
    gap = f"/gap/{campaign.slug}/"
    assert urls[gap] == 403
    assert answered_otherwise(clerk, {gap: 403}) == {gap: (200, 200)}
