import pytest
from django.urls import reverse

from annotation.models import Campaign
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("visitor", ["stranger", "non_staff"])
def test_home_lists_open_campaigns_not_drafts(request, visitor):
    make_campaign(name="Visible campaign")
    make_campaign(name="Hidden draft", status=Campaign.Status.DRAFT)
    page = request.getfixturevalue(visitor).get(reverse("home")).content.decode()
    assert "Visible campaign" in page and "Hidden draft" not in page
    assert "/results/" not in page


def test_home_links_staff_to_every_criterion_results_and_drafts(organiser):
    campaign = make_campaign(name="Hidden draft", status=Campaign.Status.DRAFT)
    page = organiser.get(reverse("home")).content.decode()
    assert "Hidden draft" in page
    for criterion in ("quality", "naturalness"):
        assert f'href="{reverse("ranking:results", args=[campaign.slug, criterion])}"' in page


def test_home_wrong_method(stranger):
    assert stranger.send("POST", reverse("home")).status_code == 405
