import io
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from tests.evalsite.test_datasheet import evaluated_campaign
from tests.factories import make_campaign, make_judged_hit
from tests.world import logged_in

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


# The bundle's download ------------------------------------------------------------------------


def bundle_url(campaign) -> str:
    return reverse("admin:annotation_campaign_bundle", args=[campaign.pk])


def test_campaign_list_links_to_the_datasheet_and_the_bundle(organiser):
    campaign = make_campaign()
    page = organiser.get(reverse("admin:annotation_campaign_changelist")).content.decode()
    datasheet = reverse("admin:annotation_campaign_datasheet", args=[campaign.pk])
    assert f'<a href="{datasheet}">Datasheet</a> · <a href="{bundle_url(campaign)}">Bundle</a>' in (
        page
    )


def test_bundle_page_lists_the_runs_it_holds_and_whether_they_still_hold(organiser):
    campaign, run = evaluated_campaign()
    page = organiser.get(bundle_url(campaign)).content.decode()
    assert f"#{run.pk}" in page and "gives the same result" in page
    assert f"<td>{run.protocol_label}</td>" in page  # "E2E protocol (Sakaguchi et al. ...)"
    items = list(campaign.items.all())
    make_judged_hit(list(items[2].outputs.all()), [5, 4, 3])  # judgments changed since the run
    page = organiser.get(bundle_url(campaign)).content.decode()
    assert "differs: judgments changed since this run" in page


def test_bundle_download_is_the_campaigns_bundle_with_its_datasheet(organiser, settings):
    campaign, run = evaluated_campaign()
    url = bundle_url(campaign)
    response = organiser.submit(organiser.get(url), {}, action=url)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    disposition = f'attachment; filename="{campaign.slug}-bundle.zip"'
    assert response["Content-Disposition"] == disposition
    content = b"".join(response.streaming_content)
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        sheet = json.loads(archive.read("datasheet.json"))
        judgments = archive.read("judgments.jsonl").decode().splitlines()
    assert manifest["campaign"] == campaign.slug
    assert [r["id"] for r in manifest["runs"]] == [run.pk]
    assert sheet["campaign"]["slug"] == campaign.slug
    assert len(judgments) == 21
    leftovers = [p for p in Path(settings.VAR_DIR).iterdir() if p.name.startswith("tmp")]
    assert not leftovers  # the temporary file is gone once sent


def test_bundle_is_for_staff_with_view_permission_only(non_staff, stranger):
    campaign = make_campaign(name="Secret campaign")
    url = bundle_url(campaign)
    for person in [non_staff, stranger]:
        for response in [person.get(url), person.send("POST", url)]:
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("admin:login"))
    staff = logged_in("helper", is_staff=True)  # staff, but no permission on campaigns
    assert staff.get(bundle_url(campaign)).status_code == 403
    assert staff.send("POST", bundle_url(campaign)).status_code == 403
    reader = logged_in("reader", is_staff=True)
    reader.user.user_permissions.add(Permission.objects.get(codename="view_campaign"))
    assert reader.get(bundle_url(campaign)).status_code == 200


def test_bundle_wrong_method_unknown_campaign_and_no_csrf(organiser):
    campaign = make_campaign()
    assert organiser.send("PUT", bundle_url(campaign)).status_code == 405
    missing = reverse("admin:annotation_campaign_bundle", args=[999])
    assert organiser.get(missing).status_code == 404
    assert organiser.post(bundle_url(campaign)).status_code == 403


@pytest.mark.parametrize(
    "name",
    [
        "admin:ranking_rankingrun_changelist",
        "admin:automatic_metrics_metricrun_changelist",
        "admin:agreement_annotatoragreement_changelist",
        "admin:generation_hostedsystem_changelist",
        "admin:generation_generationjob_changelist",
    ],
)
def test_every_apps_admin_list_answers_a_nul_or_a_bad_filter_with_400(organiser, name):
    """PostgreSQL refuses NUL in a string: a NUL in a filter or search would be a 500."""
    for query in ({"status": "a\x00b"}, {"q": "\x00"}, {"id__exact": "x"}):
        assert organiser.get(reverse(name), query).status_code == 400, (name, query)
    assert organiser.get(reverse(name)).status_code == 200
