"""The site's own error pages (templates/404.html, 403.html, 403_csrf.html, 400.html,
500.html): with DEBUG off, as in production, a visitor gets them instead of Django's bare
ones, and they tell an annotator what to do without showing any technical detail."""

import pytest
from django.template import loader
from django.urls import reverse

from annotation.models import Assignment, Output
from tests.client import HttpsClient
from tests.factories import make_assignment, make_campaign, make_hit
from tests.world import logged_in

pytestmark = pytest.mark.django_db

WHAT_TO_DO = "Open your study link again"


def assert_friendly(response, status: int, template: str, title: str) -> None:
    page = response.content.decode()
    assert response.status_code == status
    assert template in [t.name for t in response.templates]
    assert f"<h1>{title}</h1>" in page
    assert WHAT_TO_DO in page
    assert "secret detail" not in page


@pytest.mark.urls("tests.evalsite.error_urls")
@pytest.mark.parametrize(
    ("url", "status", "template", "title"),
    [
        ("/not-found/", 404, "404.html", "Page not found"),
        ("/forbidden/", 403, "403.html", "You cannot open this page"),
        ("/bad-request/", 400, "400.html", "This request could not be understood"),
        ("/broken/", 500, "500.html", "Something went wrong on our side"),
    ],
)
def test_error_page_renders_the_site_template(settings, url, status, template, title):
    assert settings.DEBUG is False
    client = HttpsClient(raise_request_exception=False)
    assert_friendly(client.get(url), status, template, title)


def test_error_page_500_needs_no_request_context():
    # Django's server_error view renders 500.html with no context at all.
    page = loader.get_template("500.html").render()
    assert "Something went wrong on our side" in page
    assert WHAT_TO_DO in page


def test_error_page_404_for_an_annotator_whose_session_is_lost(campaign, worker, stranger):
    item = campaign.items.first()
    assignment = make_assignment(make_hit(list(Output.objects.filter(item=item))), worker.annotator)
    url = reverse("annotation:hit", args=[campaign.slug, "quality", assignment.pk])
    assert worker.get(url).status_code == 200
    assert_friendly(stranger.get(url), 404, "404.html", "Page not found")
    assert Assignment.objects.get(pk=assignment.pk).annotator == worker.annotator


def test_error_page_csrf_failure_says_the_page_expired(campaign, worker):
    url = reverse("annotation:finish", args=[campaign.slug, "quality"])
    # A POST without the page's token: what a worker sends after their cookies were cleared.
    response = worker.post(url)
    assert_friendly(response, 403, "403_csrf.html", "This page has expired")


# Organisers in the admin: the admin's layout, what happened, never the annotators' advice.
def assert_admin_error(response, status: int, title: str) -> None:
    page = response.content.decode()
    assert response.status_code == status
    assert "admin/error.html" in [t.name for t in response.templates]
    assert f"<h1>{title} <small>(HTTP {status})</small></h1>" in page
    assert 'id="site-name"' in page  # the admin's header
    assert WHAT_TO_DO not in page and "Taking part in a study?" not in page
    assert "secret detail" not in page


@pytest.mark.urls("tests.evalsite.error_urls")
@pytest.mark.parametrize(
    ("url", "status", "title"),
    [
        ("/admin/fail/not-found/", 404, "Page not found"),
        ("/admin/fail/forbidden/", 403, "Not allowed"),
        ("/admin/fail/bad-request/", 400, "Bad request"),
        ("/admin/fail/broken/", 500, "Something went wrong on our side"),
    ],
)
def test_error_page_in_the_admin_is_the_admins_own(url, status, title):
    client = HttpsClient(raise_request_exception=False)
    assert_admin_error(client.get(url), status, title)


def test_error_page_404_in_the_admin_for_an_organiser(organiser):
    response = organiser.get(reverse("admin:annotation_campaign_export", args=[999]))
    assert_admin_error(response, 404, "Page not found")


def test_error_page_403_in_the_admin_for_staff_without_the_permission():
    campaign = make_campaign()
    clerk = logged_in("clerk", is_staff=True)
    response = clerk.get(reverse("admin:annotation_campaign_export", args=[campaign.pk]))
    assert_admin_error(response, 403, "Not allowed")


def test_error_page_csrf_failure_in_the_admin_says_the_form_expired():
    client = HttpsClient(enforce_csrf_checks=True)
    response = client.post(reverse("admin:login"), {"username": "a", "password": "b"})
    assert_admin_error(response, 403, "This page has expired")


def test_error_page_500_of_the_admin_needs_no_request_context():
    page = loader.get_template("admin/error.html").render(
        {"title": "Something went wrong on our side", "message": "m", "status": 500}
    )
    assert "Something went wrong on our side" in page and WHAT_TO_DO not in page
