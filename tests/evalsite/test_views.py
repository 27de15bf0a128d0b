import pytest
from django.urls import reverse

from annotation.models import Campaign
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db


def test_home_lists_open_campaigns_not_drafts(client):
    make_campaign(name="Visible campaign")
    make_campaign(name="Hidden draft", status=Campaign.Status.DRAFT)
    page = client.get(reverse("home")).content.decode()
    assert "Visible campaign" in page and "Hidden draft" not in page
    assert "/results/" not in page


def test_home_links_staff_to_every_criterion_results_and_drafts(admin_client):
    campaign = make_campaign(name="Hidden draft", status=Campaign.Status.DRAFT)
    page = admin_client.get(reverse("home")).content.decode()
    assert "Hidden draft" in page
    for criterion in ("quality", "naturalness"):
        assert f'href="{reverse("ranking:results", args=[campaign.slug, criterion])}"' in page


def test_home_wrong_method(client):
    assert client.post(reverse("home")).status_code == 405
