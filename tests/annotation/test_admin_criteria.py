"""The campaign page's criteria, saved together through the admin's inline formset: a direct
assessment criterion may ask another one on its page (`also_asks`) that is added in the same
save, whichever row comes first; one it names that the save does not leave is refused."""

import pytest
from django.urls import reverse

from annotation.models import CampaignCriterion
from tests.annotation.admin_forms import change_form_data
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db
PREFIX = "criteria"


def new_rows(page, rows: list[dict]) -> dict:
    """The change form's data with `rows` added after the criteria it shows, each filled in
    from the inline's empty row, as the page's 'Add another criterion' does."""
    data = change_form_data(page)
    formset = page.context["inline_admin_formsets"][0].formset
    shown = int(data[f"{PREFIX}-TOTAL_FORMS"])
    empty = formset.empty_form
    defaults = {name: empty[name].value() for name in empty.fields}
    for index, changes in enumerate(rows, start=shown):
        for name, value in {**defaults, **changes}.items():
            key = f"{PREFIX}-{index}-{name}"
            if isinstance(value, bool):
                if value:
                    data[key] = "on"
            elif value is not None:
                data[key] = value
    data[f"{PREFIX}-TOTAL_FORMS"] = shown + len(rows)
    return data


ASKING = {
    "name": "correctness",
    "form": "da",
    "question": "Is it correct?",
    "settings": '{"also_asks": ["fluency"]}',
}
ASKED = {"name": "fluency", "form": "da", "question": "Is it fluent?", "settings": "{}"}


@pytest.mark.parametrize("order", ["asking first", "asked first"])
def test_admin_saves_a_da_criterion_with_the_one_it_asks_added_beside_it(organiser, order):
    campaign = make_campaign()
    url = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    page = organiser.get(url)
    rows = [ASKING, ASKED] if order == "asking first" else [ASKED, ASKING]
    response = organiser.submit(page, new_rows(page, rows), action=url)
    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    correctness = CampaignCriterion.objects.get(campaign=campaign, name="correctness")
    fluency = CampaignCriterion.objects.get(campaign=campaign, name="fluency")
    assert (correctness.form, fluency.form) == ("da", "da")
    assert correctness.settings["also_asks"] == ["fluency"]
    # Completed by the form as it saves (its end labels' defaults).
    assert correctness.settings["low_label"] == "0: very poor"
    assert campaign.criteria.count() == 4  # beside quality and naturalness


def test_admin_refuses_also_asks_naming_a_criterion_the_save_does_not_add(organiser):
    campaign = make_campaign()
    url = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    page = organiser.get(url)
    response = organiser.submit(page, new_rows(page, [ASKING]), action=url)
    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.errors
    assert "not direct-assessment criteria of this campaign: fluency" in str(errors)
    assert not campaign.criteria.filter(name="correctness").exists()


def test_admin_refuses_also_asks_of_a_criterion_deleted_in_the_same_save(organiser):
    campaign = make_campaign()
    CampaignCriterion.objects.create(
        campaign=campaign, name="fluency", form="da", question="Is it fluent?"
    )
    url = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    page = organiser.get(url)
    data = new_rows(page, [ASKING])
    shown = page.context["inline_admin_formsets"][0].formset.forms
    [fluency_row] = [n for n, form in enumerate(shown) if form.instance.name == "fluency"]
    data[f"{PREFIX}-{fluency_row}-DELETE"] = "on"
    response = organiser.submit(page, data, action=url)
    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.errors
    assert "not direct-assessment criteria of this campaign: fluency" in str(errors)
    assert campaign.criteria.filter(name="fluency").exists()
    assert not campaign.criteria.filter(name="correctness").exists()


def test_admin_refuses_also_asks_of_a_criterion_added_with_another_form(organiser):
    campaign = make_campaign()
    url = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    page = organiser.get(url)
    response = organiser.submit(
        page, new_rows(page, [ASKING, {**ASKED, "form": "pairwise"}]), action=url
    )
    assert response.status_code == 200
    assert not campaign.criteria.filter(name__in=["correctness", "fluency"]).exists()


def test_admin_adds_a_campaign_with_two_da_criteria_asked_on_one_page(organiser):
    url = reverse("admin:annotation_campaign_add")
    page = organiser.get(url)
    data = {**new_rows(page, [ASKED, ASKING]), "name": "Two at once", "slug": "two-at-once"}
    response = organiser.submit(page, data, action=url)
    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    criteria = CampaignCriterion.objects.filter(campaign__slug="two-at-once")
    assert sorted(criteria.values_list("name", flat=True)) == ["correctness", "fluency"]
    assert criteria.get(name="correctness").settings["also_asks"] == ["fluency"]


def test_admin_gives_a_follow_up_url_typed_without_a_scheme_https(organiser):
    campaign = make_campaign()
    url = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    page = organiser.get(url)
    row = {**ASKED, "follow_up_url": "example.org/next-study"}
    response = organiser.submit(page, new_rows(page, [row]), action=url)
    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    saved = CampaignCriterion.objects.get(campaign=campaign, name="fluency")
    assert saved.follow_up_url == "https://example.org/next-study"
