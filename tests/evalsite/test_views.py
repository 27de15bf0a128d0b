import pytest
from django.urls import reverse

from annotation.models import Campaign
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("visitor", ["stranger", "non_staff", "worker", "clerk"])
def test_home_shows_no_campaign_to_those_who_may_not_see_campaigns(request, visitor):
    make_campaign(name="Open campaign", description="Which systems win on E2E")
    make_campaign(name="Hidden draft", status=Campaign.Status.DRAFT)
    page = request.getfixturevalue(visitor).get(reverse("home")).content.decode()
    for shown in ("Open campaign", "Which systems win", "Hidden draft", "/results/"):
        assert shown not in page
    assert "open a task through the link in your study" in page


@pytest.mark.parametrize("organiser_kind", ["organiser", "viewer"])
def test_home_lists_every_campaign_with_its_results_for_organisers(request, organiser_kind):
    campaign = make_campaign(name="Hidden draft", status=Campaign.Status.DRAFT)
    page = request.getfixturevalue(organiser_kind).get(reverse("home")).content.decode()
    assert "Hidden draft" in page
    for criterion in ("quality", "naturalness"):
        assert f'href="{reverse("ranking:results", args=[campaign.slug, criterion])}"' in page


def test_home_wrong_method(stranger):
    assert stranger.send("POST", reverse("home")).status_code == 405
