"""The standard RankME's pages show with its score of 100 is the organiser's, written: a
campaign with a RankME criterion opens only with one (admin; the API in tests/api/
test_fields.py), the published loaders write one made for the dataset and say so, and a
campaign without one never shows a reference of its items in its place."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.judging import why_not_open
from annotation.models import Assignment, Campaign, CampaignCriterion, Item
from annotation.published import load_dataset
from nlgdata.published import E2E_STANDARD, LOGICNLG_STANDARD, read_logicnlg
from tests.annotation.admin_forms import change_form_data
from tests.annotation.test_admin_criteria import new_rows
from tests.e2e_subset import e2e_subset
from tests.factories import make_campaign
from tests.world import Person

pytestmark = pytest.mark.django_db
REFUSED = "A campaign opens to annotators with a standard"


def change_url(campaign) -> str:
    return reverse("admin:annotation_campaign_change", args=[campaign.pk])


def draft(**fields) -> Campaign:
    return make_campaign(status=Campaign.Status.DRAFT, standard_text="", **fields)


# Opening in the admin ---------------------------------------------------------------------


def test_admin_refuses_to_open_a_rankme_campaign_without_a_standard(organiser):
    campaign = draft()
    page = organiser.get(change_url(campaign))
    data = {**change_form_data(page), "status": "open"}
    response = organiser.submit(page, data, action=change_url(campaign))
    assert response.status_code == 200
    page_text = response.content.decode()
    assert REFUSED in page_text and "naturalness, quality criteria are judged with RankME" in (
        page_text
    )
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.DRAFT
    written = {**data, "standard_text": "The Mill is a pub by the river."}
    response = organiser.submit(page, written, action=change_url(campaign))
    assert response.status_code == 302
    campaign.refresh_from_db()
    assert (campaign.status, campaign.standard_text) == ("open", "The Mill is a pub by the river.")


def test_admin_refuses_to_clear_the_standard_of_an_open_campaign(organiser):
    campaign = make_campaign()
    page = organiser.get(change_url(campaign))
    data = {**change_form_data(page), "standard_text": ""}
    response = organiser.submit(page, data, action=change_url(campaign))
    assert REFUSED in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.standard_text == "The Vaults is a pub near Café Adriatic."


def test_admin_refuses_a_new_open_campaign_whose_default_criteria_need_a_standard(organiser):
    url = reverse("admin:annotation_campaign_add")
    page = organiser.get(url)
    data = {**change_form_data(page), "name": "Open at once", "slug": "open-at-once"}
    response = organiser.submit(page, {**data, "status": "open"}, action=url)
    assert REFUSED in response.content.decode()
    assert not Campaign.objects.filter(slug="open-at-once").exists()


def test_admin_refuses_to_open_with_a_rankme_criterion_added_in_the_same_save(organiser):
    campaign = draft()
    campaign.criteria.all().delete()
    page = organiser.get(change_url(campaign))
    row = {"name": "quality", "form": "rankme", "question": "", "settings": "{}"}
    data = {**new_rows(page, [row]), "status": "open"}
    response = organiser.submit(page, data, action=change_url(campaign))
    assert "its quality criterion is judged with RankME" in response.content.decode()
    assert not campaign.criteria.exists()


def test_admin_opens_a_campaign_whose_pages_show_no_standard_without_one(organiser):
    campaign = draft()
    campaign.criteria.all().delete()
    CampaignCriterion.objects.create(
        campaign=campaign, name="fluency", form="da", question="Is it fluent?"
    )
    page = organiser.get(change_url(campaign))
    response = organiser.submit(
        page, {**change_form_data(page), "status": "open"}, action=change_url(campaign)
    )
    assert response.status_code == 302
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.OPEN


# The HIT page -------------------------------------------------------------------------------


def test_hit_page_without_a_standard_shows_no_reference_in_its_place(campaign, worker):
    """An open campaign without one (opened before the rule, or by hand in the database)."""
    Campaign.objects.filter(pk=campaign.pk).update(standard_text="")
    item = campaign.items.first()
    Item.objects.filter(pk=item.pk).update(references=["The first item's reference."])
    entry = reverse("annotation:entry", args=[campaign.slug, "quality"])
    worker.submit(worker.get(entry))
    assignment = Assignment.objects.get(annotator=worker.annotator)
    page = worker.get(reverse("annotation:hit", args=[campaign.slug, "quality", assignment.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "standard-heading" not in html and "The first item's reference." not in html


# The loaders --------------------------------------------------------------------------------


def test_load_published_logicnlg_writes_a_standard_of_its_own_and_says_so(logicnlg_data):
    dataset = read_logicnlg(logicnlg_data)
    dataset.items = dataset.items[:3]
    for system in dataset.systems:
        system.outputs = {i.external_id: system.outputs[i.external_id] for i in dataset.items}
    summary = load_dataset(dataset)
    campaign = summary.campaign
    text, kind, data = LOGICNLG_STANDARD
    assert (campaign.standard_text, campaign.standard_input_kind) == (text, kind)
    assert campaign.standard_input == data
    references = {ref for item in dataset.items for ref in item.references}
    assert campaign.standard_text not in references
    assert "Standard (written for the dataset; change it" in str(summary)
    assert str(summary).endswith(text)
    assert why_not_open(campaign) == ""  # ready to open


def test_load_published_e2e_writes_a_development_set_reference_as_standard(e2e_data, tmp_path):
    folder = e2e_subset(e2e_data, tmp_path / "e2e")
    out = StringIO()
    call_command("load_published", "e2e", str(folder), stdout=out)
    campaign = Campaign.objects.get(slug="e2e")
    assert (campaign.standard_text, campaign.standard_input_kind) == E2E_STANDARD[:2]
    assert campaign.standard_input == E2E_STANDARD[2]
    references = {r for refs in campaign.items.values_list("references", flat=True) for r in refs}
    assert campaign.standard_text not in references and len(references) > 4
    assert "Standard (written for the dataset" in out.getvalue()
    again = StringIO()
    call_command("load_published", "e2e", str(folder), stdout=again)
    assert "Standard (the campaign's own, kept" in again.getvalue()


def test_loading_into_a_campaign_without_a_standard_says_it_has_none(e2e_data, tmp_path):
    folder = e2e_subset(e2e_data, tmp_path / "e2e", mrs=1)
    draft(slug="mine")
    out = StringIO()
    call_command("load_published", "e2e", str(folder), "--campaign", "mine", stdout=out)
    assert "'mine' has no standard: write one on its admin page before opening it" in (
        out.getvalue()
    )


def test_hit_page_after_load_published_e2e_shows_the_written_standard(e2e_data, tmp_path):
    folder = e2e_subset(e2e_data, tmp_path / "e2e", mrs=2)
    call_command("load_published", "e2e", str(folder), stdout=StringIO())
    campaign = Campaign.objects.get(slug="e2e")
    Campaign.objects.filter(pk=campaign.pk).update(status="open", min_seconds_per_hit=0)
    campaign.criteria.update(comprehension_check=False)
    first_reference = campaign.items.order_by("id").first().references[0]
    worker = Person()
    worker.enter(campaign)
    worker.submit(worker.get(reverse("annotation:entry", args=["e2e", "quality"])))
    assignment = Assignment.objects.get(hit__campaign=campaign)
    hit = reverse("annotation:hit", args=["e2e", "quality", assignment.pk])
    html = worker.get(hit).content.decode()
    shown = html.split('id="standard-text">')[1].split("</p>")[0]
    assert shown == E2E_STANDARD[0] != first_reference
