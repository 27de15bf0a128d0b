import pytest
from django.urls import reverse

from tests.factories import make_campaign

pytestmark = pytest.mark.django_db


def test_campaign_list_links_each_campaign_to_its_upload_export_monitor_and_results(organiser):
    campaign = make_campaign()
    page = organiser.get(reverse("admin:annotation_campaign_changelist")).content.decode()
    upload = reverse("admin:annotation_campaign_upload", args=[campaign.pk])
    export = reverse("admin:annotation_campaign_export", args=[campaign.pk])
    monitor = reverse("admin:annotation_campaign_monitor", args=[campaign.pk])
    results = reverse("ranking:campaign", args=[campaign.slug])
    assert (
        f'<a href="{upload}">Upload data</a> · <a href="{export}">Export judgments</a> · '
        f'<a href="{monitor}">Monitor</a> · <a href="{results}">Results</a>'
    ) in page
