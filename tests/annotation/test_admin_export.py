"""The campaign admin's judgment export: a GET form, then the file streamed, staff only."""

import csv
import io
import json

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.urls import reverse

from annotation.datafiles.exporters import DOWNLOADS, FORMATS
from annotation.datafiles.ratings_layouts import IMPORTERS
from annotation.judging import form_named
from annotation.models import Judgment
from tests.client import changelist_rows, forms_on
from tests.factories import make_campaign, make_judged_hit, make_system_set
from tests.judging_helpers import form_world
from tests.world import logged_in

pytestmark = pytest.mark.django_db
DA, PAIRWISE, ESA = form_named("da"), form_named("pairwise"), form_named("esa")


def export_url(campaign) -> str:
    return reverse("admin:annotation_campaign_export", args=[campaign.pk])


def judged():
    campaign, systems, items = make_system_set(systems=3, items=2)
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [300, 100, 50])
    return campaign


def download(response) -> str:
    assert response.streaming
    return b"".join(response.streaming_content).decode()


def test_admin_export_streams_the_judgments_as_csv(organiser):
    campaign = judged()
    page = organiser.get(export_url(campaign))
    [form] = [form for form in forms_on(page) if form.action == export_url(campaign)]
    assert form.method == "get" and form.fields == ["file_format", "criterion"]
    response = organiser.get(export_url(campaign), {"file_format": "csv", "criterion": "quality"})
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == (
        f'attachment; filename="{campaign.slug}-quality-judgments.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(download(response))))
    assert len(rows) == Judgment.objects.count() == 6
    assert [r["score"] for r in rows] == ["300.0", "100.0", "50.0"] * 2


def test_admin_export_e2e_of_all_criteria_asks_for_one(organiser):
    campaign = judged()
    response = organiser.get(export_url(campaign), {"file_format": "e2e"})
    assert not response.streaming
    assert "The E2E format holds one criterion: choose it." in response.content.decode()


def test_admin_export_e2e_that_cannot_be_written_says_why(organiser):
    campaign = judged()
    campaign.items.update(input_kind="triples")
    response = organiser.get(export_url(campaign), {"file_format": "e2e", "criterion": "quality"})
    assert not response.streaming
    assert "E2E meaning representations only" in response.content.decode()


def test_admin_campaign_list_links_to_the_export(organiser):
    campaign = judged()
    page = organiser.get(reverse("admin:annotation_campaign_changelist"))
    assert changelist_rows(page)[0]["links"].startswith("Upload data · Export judgments")
    assert export_url(campaign) in page.content.decode()


@pytest.mark.parametrize("outsider", ["non_staff", "stranger"])
def test_admin_export_sends_outsiders_to_the_login_page(request, outsider):
    campaign = judged()
    someone = request.getfixturevalue(outsider)
    response = someone.get(export_url(campaign), {"file_format": "csv"})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))
    assert not response.streaming


def test_admin_export_is_refused_to_staff_who_may_not_view_campaigns():
    campaign = judged()
    clerk = logged_in("clerk", is_staff=True)
    clerk.user.user_permissions.add(Permission.objects.get(codename="view_judgment"))
    response = clerk.get(export_url(campaign), {"file_format": "csv"})
    assert response.status_code == 403
    assert not response.streaming


def test_admin_export_of_an_unknown_campaign_is_404(organiser):
    response = organiser.get(reverse("admin:annotation_campaign_export", args=[999]))
    assert response.status_code == 404


def test_admin_export_wrong_method(organiser):
    campaign = make_campaign()
    assert organiser.send("POST", export_url(campaign), {"file_format": "csv"}).status_code == 405


def test_admin_export_of_a_criterion_the_campaign_lacks_is_refused(organiser):
    campaign = judged()
    campaign.criteria.filter(name="naturalness").delete()
    response = organiser.get(
        export_url(campaign), {"file_format": "csv", "criterion": "naturalness"}
    )
    assert not response.streaming
    assert "Select a valid choice" in response.content.decode()


# Each judgment form's layout, downloaded from the admin: the same bytes as the command's.
DA_FILE = """item,system,annotator,criterion,score
i1,alpha,w1,correctness,80
i1,beta,w1,correctness,40
i2,alpha,w2,correctness,75
i2,gamma,w2,correctness,20
"""
PAIRWISE_FILE = """item,system_a,system_b,annotator,criterion,winner
i1,alpha,beta,w1,coherence,a
i2,beta,gamma,w1,coherence,tie
i3,gamma,delta,w2,coherence,b
"""
ESA_FILE = "".join(
    json.dumps(record) + "\n"
    for record in [
        {"item": "i1", "system": "alpha", "annotator": "w1", "criterion": "mqm", "score": 70,
         "spans": [{"start": 0, "end": 5, "severity": "minor"}]},
        {"item": "i2", "system": "beta", "annotator": "w2", "criterion": "mqm", "score": 30,
         "spans": []},
    ]
)  # fmt: skip
LAYOUTS = {
    DA.name: (DA_FILE, "correctness", "text/csv; charset=utf-8", "da.csv"),
    PAIRWISE.name: (PAIRWISE_FILE, "coherence", "text/csv; charset=utf-8", "pairwise.csv"),
    ESA.name: (ESA_FILE, "mqm", "application/x-ndjson; charset=utf-8", "esa.jsonl"),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("chosen", [True, False], ids=["one criterion", "all criteria"])
def test_admin_export_of_a_form_layout_is_the_commands_file(organiser, tmp_path, layout, chosen):
    text, criterion, content_type, suffix = LAYOUTS[layout]
    campaign = form_world(slug="layouts")
    IMPORTERS[layout](campaign, io.BytesIO(text.encode()), f"in.{suffix}")
    options = ["--criterion", criterion] if chosen else []
    out = tmp_path / suffix
    call_command("export_judgments", campaign.slug, "--format", layout, *options, "--out", out)
    query = {"file_format": layout, "criterion": criterion if chosen else ""}
    response = organiser.get(export_url(campaign), query)
    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    name = f"{campaign.slug}-{criterion if chosen else 'all'}-{suffix}"
    assert response["Content-Disposition"] == f'attachment; filename="{name}"'
    downloaded = download(response)
    assert downloaded == out.read_bytes().decode()
    # Every judgment of the file is in it: a header (CSV) and a line per judgment.
    assert len(downloaded.splitlines()) == len(text.splitlines())


def test_admin_export_offers_every_format_the_command_writes(organiser):
    campaign = judged()
    page = organiser.get(export_url(campaign)).content.decode()
    for name in FORMATS:
        assert f'value="{name}"' in page
        assert name in DOWNLOADS


def test_admin_export_of_a_criterion_of_another_form_says_why(organiser):
    campaign = judged()
    response = organiser.get(
        export_url(campaign), {"file_format": PAIRWISE.name, "criterion": "quality"}
    )
    assert not response.streaming
    assert "judged with rankme, not pairwise preference" in response.content.decode()
