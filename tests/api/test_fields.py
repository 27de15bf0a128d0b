"""Every writable endpoint takes what it says or refuses the request: a field it does not
take (unknown, or read-only) answers 400 naming the field, and nothing is written. A
campaign with a RankME criterion opens only with its standard, which the API can write."""

import json

import pytest

from annotation.models import Campaign, CampaignCriterion, DataFile, Item, System
from api.models import WebhookEndpoint
from tests.api.test_endpoints import item, ratings_csv


def rows_written(campaign) -> tuple:
    return (
        Campaign.objects.count(),
        CampaignCriterion.objects.count(),
        Item.objects.count(),
        System.objects.count(),
        campaign.systems.first().outputs.count(),
        DataFile.objects.count(),
        WebhookEndpoint.objects.count(),
    )


def test_patch_of_a_field_the_campaign_does_not_take_is_400_naming_it(changer, campaign):
    url = f"/campaigns/{campaign.slug}/"
    name = campaign.name
    response = changer.call("PATCH", url, {"outputs_per_hit": 4})
    assert response.status_code == 400
    assert response.json()["field"] == "outputs_per_hit"
    assert response.json()["detail"].startswith("outputs_per_hit: a field this request does not")
    response = changer.call("PATCH", url, {"name": "Renamed", "slug": "x", "colour": "red"})
    assert response.status_code == 400
    assert "slug, colour: fields this request does not take" in response.json()["detail"]
    campaign.refresh_from_db()
    # The fixture's campaign has 3 outputs a HIT: the refused PATCHes changed nothing.
    assert (campaign.outputs_per_hit, campaign.name, campaign.slug) == (3, name, "e2e-test")


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/campaigns/", {"slug": "new", "name": "New", "status": "open"}, "status"),
        ("PATCH", "/campaigns/{slug}/", {"outputs_per_hit": 4}, "outputs_per_hit"),
        ("POST", "/campaigns/{slug}/criteria/", {"name": "clarity", "questoin": "?"}, "questoin"),
        ("POST", "/campaigns/{slug}/items/", {"items": [item(9)], "replace": True}, "replace"),
        ("POST", "/campaigns/{slug}/items/", {"items": [item(9, refs=["A."])]}, "items[0].refs"),
        ("POST", "/campaigns/{slug}/systems/", {"systems": [{"name": "s", "lable": "S"}]},
         "systems[0].lable"),
        ("POST", "/campaigns/{slug}/systems/{system}/outputs/",
         {"outputs": [{"item": "1", "text": "A.", "score": 9}]}, "outputs[0].score"),
        ("POST", "/campaigns/{slug}/webhooks/",
         {"url": "https://example.org/hook", "event": ["ranking.done"]}, "event"),
        ("POST", "/campaigns/{slug}/ratings/?critrion=quality", "RATINGS", "critrion"),
    ],
)  # fmt: skip
def test_writable_endpoints_refuse_fields_they_do_not_take(
    changer, campaign, method, path, body, field
):
    system = campaign.systems.first()
    before = rows_written(campaign)
    url = path.format(slug=campaign.slug, system=system.name)
    if body == "RATINGS":
        response = changer.call(method, url, ratings_csv(2), content_type="text/csv")
    else:
        response = changer.call(method, url, body)
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert response.json()["detail"].startswith(f"{field}: a field this request does not take")
    assert rows_written(campaign) == before
    campaign.refresh_from_db()
    assert campaign.outputs_per_hit == 3 and campaign.status == "open"


def test_other_faults_of_the_requests_shape_stay_422(changer, campaign):
    response = changer.call("PATCH", f"/campaigns/{campaign.slug}/", {"status": "shut"})
    assert response.status_code == 422
    assert isinstance(response.json()["detail"], list)


# The standard ---------------------------------------------------------------------------


def test_a_rankme_campaign_opens_through_the_api_only_with_a_standard(changer):
    made = changer.call("POST", "/campaigns/", {"slug": "fresh", "name": "Fresh"})
    assert made.json()["standard_text"] == "" and made.json()["status"] == "draft"
    changer.call("POST", "/campaigns/fresh/criteria/", {"name": "quality"})
    refused = changer.call("PATCH", "/campaigns/fresh/", {"status": "open"})
    assert refused.status_code == 422 and refused.json()["field"] == "status"
    assert "its quality criterion is judged with RankME" in refused.json()["detail"]
    assert Campaign.objects.get(slug="fresh").status == "draft"
    standard = {
        "standard_text": "The Mill is a pub.",
        "standard_input_kind": "mr",
        "standard_input": {"attributes": [["name", "The Mill"], ["eatType", "pub"]]},
    }
    opened = changer.call("PATCH", "/campaigns/fresh/", {**standard, "status": "open"})
    assert opened.status_code == 200, opened.content
    assert {key: opened.json()[key] for key in standard} == standard
    fresh = Campaign.objects.get(slug="fresh")
    assert (fresh.status, fresh.standard_text) == ("open", "The Mill is a pub.")
    # Nor may an open campaign's standard be taken away.
    cleared = changer.call("PATCH", "/campaigns/fresh/", {"standard_text": ""})
    assert cleared.status_code == 422 and cleared.json()["field"] == "standard_text"
    assert Campaign.objects.get(slug="fresh").standard_text == "The Mill is a pub."


def test_a_campaign_whose_pages_show_no_standard_opens_without_one(changer):
    changer.call("POST", "/campaigns/", {"slug": "fresh", "name": "Fresh"})
    body = {"name": "clarity", "form": "da", "question": "Is it clear?"}
    assert changer.call("POST", "/campaigns/fresh/criteria/", body).status_code == 201
    opened = changer.call("PATCH", "/campaigns/fresh/", {"status": "open"})
    assert opened.status_code == 200
    assert Campaign.objects.get(slug="fresh").status == "open"


@pytest.mark.parametrize(
    ("standard", "field"),
    [
        ({"standard_input_kind": "poem"}, "standard_input_kind"),
        ({"standard_input_kind": "mr", "standard_input": {"rows": []}}, "standard_input"),
    ],
)
def test_a_standard_input_its_kind_cannot_read_is_refused(changer, standard, field):
    made = changer.call("POST", "/campaigns/", {"slug": "fresh", "name": "F", **standard})
    assert made.status_code == 422 and made.json()["field"] == field
    assert not Campaign.objects.filter(slug="fresh").exists()


def test_the_schema_lists_the_standard_among_a_campaigns_fields(changer):
    schema = changer.call("GET", "/openapi.json").json()["components"]["schemas"]
    for name in ("CampaignIn", "CampaignPatch", "CampaignOut"):
        assert "standard_text" in schema[name]["properties"], name
    assert schema["CampaignPatch"].get("additionalProperties") is False
    assert json.dumps(schema)  # valid JSON throughout (test_schema.py validates it)
