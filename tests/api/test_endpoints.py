"""Each endpoint's normal case, its validation errors (naming the record and field), and
the database afterwards; bulk creates are transactional and idempotent."""

import csv
import io
import json

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import (
    DEFAULT_QUESTIONS,
    NATURALNESS,
    QUALITY,
    Campaign,
    CampaignCriterion,
    DataFile,
    Item,
    Judgment,
    Output,
    System,
)
from api.models import ApiToken
from api.tokens import create_token
from ranking.export import write_csv
from ranking.models import RankingRun
from ranking.protocols import PROTOCOLS
from ranking.service import execute_run, fitting_protocols
from tests.api.conftest import ApiClient
from tests.factories import make_judged_hit

MR = {"attributes": [["name", "The Mill"], ["eatType", "pub"]]}


def item(n: int, **fields) -> dict:
    attributes = [["name", f"Pub {n}"], ["eatType", "pub"]]
    return {"id": f"i{n}", "kind": "mr", "input": {"attributes": attributes}, **fields}


# Campaigns ---------------------------------------------------------------------------------


def test_list_shows_the_tokens_campaigns_only(changer, campaign):
    Campaign.objects.create(slug="unseen", name="Unseen")
    response = changer.call("GET", "/campaigns/")
    assert response.status_code == 200
    assert [c["slug"] for c in response.json()] == [campaign.slug]
    assert [c["name"] for c in response.json()[0]["criteria"]] == ["naturalness", "quality"]


def test_create_campaign_adds_it_to_the_tokens_scope(changer):
    response = changer.call("POST", "/campaigns/", {"slug": "new-one", "name": "New one"})
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(slug="new-one")
    assert campaign.name == "New one" and campaign.status == Campaign.Status.DRAFT
    assert campaign in ApiToken.objects.get().campaigns.all()
    assert changer.call("GET", "/campaigns/new-one/").json()["name"] == "New one"


def test_create_campaign_twice_is_409(changer, campaign):
    response = changer.call("POST", "/campaigns/", {"slug": campaign.slug, "name": "Again"})
    assert response.status_code == 409
    assert Campaign.objects.filter(slug=campaign.slug).count() == 1


@pytest.mark.parametrize(
    "body, field",
    [
        ({"name": "No slug"}, "slug"),
        ({"slug": "a b", "name": "x"}, "slug"),
        ({"slug": "s"}, "name"),
    ],
)
def test_create_campaign_refuses_bad_fields(changer, body, field):
    response = changer.call("POST", "/campaigns/", body)
    assert response.status_code == 422
    assert field in json.dumps(response.json())
    assert Campaign.objects.count() == 1  # the token's own, made before


def test_view_token_cannot_create_a_campaign(looker):
    assert looker.call("POST", "/campaigns/", {"slug": "x", "name": "X"}).status_code == 403
    assert not Campaign.objects.filter(slug="x").exists()


def test_staff_without_add_permission_cannot_create_a_campaign(db):
    user = User.objects.create_user("changer", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename="change_campaign"))
    _, secret = create_token(user, "t", [], change=True)
    response = ApiClient(secret).call("POST", "/campaigns/", {"slug": "x", "name": "X"})
    assert response.status_code == 403
    assert not Campaign.objects.filter(slug="x").exists()


def test_patch_opens_closes_and_renames(changer, campaign):
    url = f"/campaigns/{campaign.slug}/"
    response = changer.call("PATCH", url, {"status": "closed", "description": "done"})
    assert response.status_code == 200
    campaign.refresh_from_db()
    assert (campaign.status, campaign.description) == ("closed", "done")
    assert changer.call("PATCH", url, {"status": "shut"}).status_code == 422
    campaign.refresh_from_db()
    assert campaign.status == "closed"


def test_wrong_method_is_405(changer, campaign):
    assert changer.call("DELETE", f"/campaigns/{campaign.slug}/").status_code == 405
    assert Campaign.objects.filter(pk=campaign.pk).exists()


# Criteria ----------------------------------------------------------------------------------


def test_add_criterion(changer):
    changer.call("POST", "/campaigns/", {"slug": "fresh", "name": "Fresh"})
    response = changer.call("POST", "/campaigns/fresh/criteria/", {"name": "quality"})
    assert response.status_code == 201
    criterion = CampaignCriterion.objects.get(campaign__slug="fresh")
    assert (criterion.name, criterion.form, criterion.is_open) == ("quality", "rankme", True)
    assert criterion.shows_input
    shown = response.json()
    assert (shown["form"], shown["settings"], shown["protocols"][0]) == ("rankme", {}, "calibrated")
    assert shown["question"] == DEFAULT_QUESTIONS[QUALITY]
    again = changer.call("POST", "/campaigns/fresh/criteria/", {"name": "quality"})
    assert again.status_code == 409
    assert CampaignCriterion.objects.filter(campaign__slug="fresh").count() == 1


def test_add_a_criterion_of_a_free_name_with_its_question(changer):
    changer.call("POST", "/campaigns/", {"slug": "fresh", "name": "Fresh"})
    body = {"name": "data-coverage", "question": "Does it say all of the data?"}
    response = changer.call("POST", "/campaigns/fresh/criteria/", {**body, "shows_input": False})
    assert response.status_code == 201, response.content
    criterion = CampaignCriterion.objects.get(campaign__slug="fresh", name="data-coverage")
    assert (criterion.question, criterion.shows_input) == (body["question"], False)
    listed = changer.call("GET", "/campaigns/fresh/criteria/").json()
    assert [(c["name"], c["form"], c["question"]) for c in listed] == [
        ("data-coverage", "rankme", body["question"])
    ]
    read = changer.call("GET", "/campaigns/fresh/criteria/data-coverage/").json()
    assert read == listed[0]
    assert changer.call("GET", "/campaigns/fresh/criteria/beauty/").status_code == 404


def test_naturalness_shows_no_input_unless_asked(changer):
    changer.call("POST", "/campaigns/", {"slug": "fresh", "name": "Fresh"})
    changer.call("POST", "/campaigns/fresh/criteria/", {"name": NATURALNESS})
    assert not CampaignCriterion.objects.get(campaign__slug="fresh").shows_input


@pytest.mark.parametrize(
    "body, field, words",
    [
        ({"name": "beauty"}, "question", "Write the question"),
        ({"name": "Beauty", "question": "?"}, "name", ""),
        ({"name": "quality", "form": "likert"}, "form", "rankme, da"),
        ({"name": "quality", "form": "da", "settings": {"colour": 1}}, "settings", "colour"),
        (
            {"name": "quality", "form": "da", "settings": {"outputs_per_page": 99}},
            "settings",
            "outputs_per_page",
        ),
        ({"question": "?"}, "name", ""),
        ({"name": "quality", "settings": [1]}, "settings", ""),
    ],
)
def test_add_criterion_refuses_what_it_cannot_hold(changer, body, field, words):
    changer.call("POST", "/campaigns/", {"slug": "fresh", "name": "Fresh"})
    response = changer.call("POST", "/campaigns/fresh/criteria/", body)
    assert response.status_code == 422
    assert field in json.dumps(response.json()) and words in json.dumps(response.json())
    if isinstance(response.json()["detail"], str):  # ours; a list: the schema's own check
        assert response.json()["field"] == field
    assert not CampaignCriterion.objects.filter(campaign__slug="fresh").exists()


def test_add_a_da_criterion_with_its_settings_completed(changer):
    changer.call("POST", "/campaigns/", {"slug": "fresh", "name": "Fresh"})
    body: dict = {"name": "fluency", "question": "How fluent?", "form": "da"}
    body["settings"] = {"outputs_per_page": 4}
    response = changer.call("POST", "/campaigns/fresh/criteria/", body)
    assert response.status_code == 201, response.content
    criterion = CampaignCriterion.objects.get(campaign__slug="fresh", name="fluency")
    assert criterion.form == "da" and criterion.settings["outputs_per_page"] == 4
    assert criterion.settings["low_label"]  # completed by the form
    assert response.json()["settings"] == criterion.settings
    assert "bws" not in response.json()["protocols"]


# Items -------------------------------------------------------------------------------------


def test_items_are_created_and_a_repeat_writes_nothing(changer, campaign):
    url = f"/campaigns/{campaign.slug}/items/"
    body = {"items": [item(1, references=["Pub 1 is a pub."]), item(2)]}
    first = changer.call("POST", url, body)
    assert first.json() == {"created": 2, "existing": 0}
    ids = sorted(campaign.items.values_list("id", flat=True))
    again = changer.call("POST", url, body)
    assert again.json() == {"created": 0, "existing": 2}
    assert sorted(campaign.items.values_list("id", flat=True)) == ids
    assert campaign.items.get(external_id="i1").references == ["Pub 1 is a pub."]


@pytest.mark.parametrize(
    "bad, field, words",
    [
        ({"id": "x", "kind": "mr"}, "input", "missing field"),
        ({"id": "x", "kind": "poem", "input": MR}, "kind", "poem"),
        ({"id": "x", "kind": "mr", "input": {"attributes": "no"}}, "input", ""),
        ({"id": "x", "kind": "mr", "input": MR, "references": [1]}, "references", "strings"),
        ({"id": "x\u0000", "kind": "mr", "input": MR}, "id", "NUL"),
        ({"id": "i1", "kind": "mr", "input": MR}, "id", "repeats"),
    ],
)
def test_a_bad_item_names_its_record_and_field_and_writes_nothing(
    changer, campaign, bad, field, words
):
    before = Item.objects.count()
    response = changer.call("POST", f"/campaigns/{campaign.slug}/items/", {"items": [item(1), bad]})
    assert response.status_code == 422
    error = response.json()
    assert (error["record"], error["field"]) == (1, field), error
    assert error["detail"].startswith(f"items[1].{field}: ") and words in error["detail"]
    assert Item.objects.count() == before


def test_an_item_id_with_another_input_is_refused(changer, campaign):
    url = f"/campaigns/{campaign.slug}/items/"
    changer.call("POST", url, {"items": [item(1)]})
    changed = {**item(1), "input": MR}
    response = changer.call("POST", url, {"items": [item(2), changed]})
    assert response.status_code == 422
    assert response.json()["record"] == 1 and "another input" in response.json()["detail"]
    assert not campaign.items.filter(external_id="i2").exists()


def test_an_input_already_in_the_campaign_under_another_id_is_refused(changer, campaign):
    url = f"/campaigns/{campaign.slug}/items/"
    changer.call("POST", url, {"items": [item(1)]})
    response = changer.call("POST", url, {"items": [{**item(1), "id": "other"}]})
    assert response.status_code == 422
    assert "already an item" in response.json()["detail"]


def test_too_many_records_are_refused(changer, campaign):
    body = {"items": [item(n) for n in range(5001)]}
    response = changer.call("POST", f"/campaigns/{campaign.slug}/items/", body)
    assert response.status_code in (413, 422)
    assert not campaign.items.filter(external_id="i1").exists()


def test_a_body_over_the_request_limit_is_413(changer, campaign, settings):
    settings.REQUEST_MAX_BYTES = 1000
    body = {"items": [item(n, references=["x" * 100]) for n in range(20)]}
    response = changer.call("POST", f"/campaigns/{campaign.slug}/items/", body)
    assert response.status_code == 413
    assert not campaign.items.filter(external_id="i1").exists()


def test_a_body_that_is_not_json_is_400(changer, campaign):
    url = f"/campaigns/{campaign.slug}/items/"
    response = changer.call("POST", url, "{not json", content_type="application/json")
    assert response.status_code == 400
    deep = '{"items": [' + "[" * 100_000 + "]" * 100_000 + "]}"
    assert changer.call("POST", url, deep, content_type="application/json").status_code == 400


# Systems and outputs -----------------------------------------------------------------------


def test_systems_are_created_once_by_name(changer, campaign):
    url = f"/campaigns/{campaign.slug}/systems/"
    body = {"systems": [{"name": "t5-base", "label": "T5"}, {"name": "sys1"}]}
    assert changer.call("POST", url, body).json() == {"created": 1, "existing": 1}
    assert changer.call("POST", url, body).json() == {"created": 0, "existing": 2}
    assert System.objects.get(campaign=campaign, name="t5-base").label == "T5"


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"name": " a b"}, "name"),
        ({"name": "a\tb"}, "name"),
        ({"label": "x"}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": "x", "key": "a b"}, "key"),
        ({"name": "y", "key": "fine"}, "key"),  # the first record's key, given
    ],
)
def test_a_bad_system_names_its_record_and_writes_nothing(changer, campaign, bad, field):
    body = {"systems": [{"name": "Fine", "key": "fine"}, bad]}
    response = changer.call("POST", f"/campaigns/{campaign.slug}/systems/", body)
    assert response.status_code == 422
    assert (response.json()["record"], response.json()["field"]) == (1, field)
    assert not campaign.systems.filter(name="Fine").exists()


def test_systems_have_free_names_and_keys_made_from_them(changer, campaign):
    url = f"/campaigns/{campaign.slug}/systems/"
    body = {"systems": [{"name": "Amazon_AI (Shanghai)"}, {"name": "amazon-ai-shanghai"}]}
    assert changer.call("POST", url, body).json() == {"created": 2, "existing": 0}
    keys = dict(campaign.systems.values_list("name", "key"))
    assert keys["Amazon_AI (Shanghai)"] == "amazon_ai-shanghai"
    assert keys["amazon-ai-shanghai"] == "amazon-ai-shanghai"
    taken = {"systems": [{"name": "sys1 again", "key": "sys1"}]}
    response = changer.call("POST", url, taken)
    assert (response.status_code, response.json()["field"]) == (422, "key")
    outputs = {"outputs": [{"item": campaign.items.first().external_id, "text": "A pub."}]}
    by_key = changer.call("POST", f"{url}amazon_ai-shanghai/outputs/", outputs)
    assert by_key.json() == {"created": 1, "existing": 0}
    assert campaign.systems.get(key="amazon_ai-shanghai").outputs.count() == 1


def test_outputs_are_created_once_per_item_and_system(changer, campaign):
    changer.call("POST", f"/campaigns/{campaign.slug}/items/", {"items": [item(1), item(2)]})
    changer.call("POST", f"/campaigns/{campaign.slug}/systems/", {"systems": [{"name": "new"}]})
    url = f"/campaigns/{campaign.slug}/systems/new/outputs/"
    body = {"outputs": [{"item": "i1", "text": "Pub 1 is a pub."}, {"item": "i2", "text": "B."}]}
    assert changer.call("POST", url, body).json() == {"created": 2, "existing": 0}
    assert changer.call("POST", url, body).json() == {"created": 0, "existing": 2}
    assert Output.objects.filter(system__name="new", item__campaign=campaign).count() == 2


def test_an_empty_output_is_created_as_the_system_gave_it(changer, campaign):
    """A system that produced no text for an item: its output is kept, empty."""
    changer.call("POST", f"/campaigns/{campaign.slug}/items/", {"items": [item(1)]})
    changer.call("POST", f"/campaigns/{campaign.slug}/systems/", {"systems": [{"name": "new"}]})
    url = f"/campaigns/{campaign.slug}/systems/new/outputs/"
    body = {"outputs": [{"item": "i1", "text": " "}]}
    assert changer.call("POST", url, body).json() == {"created": 1, "existing": 0}
    assert Output.objects.get(system__name="new", item__campaign=campaign).text == ""


@pytest.mark.parametrize(
    "bad, field, words",
    [
        ({"item": "nowhere", "text": "x"}, "item", "no item"),
        ({"item": "i1"}, "text", "missing"),
        ({"item": "i1", "text": 3}, "text", "string"),
        ({"item": "i2", "text": "again"}, "item", "second output"),
        ({"item": "i1", "text": "Another text."}, "text", "another output"),
    ],
)
def test_a_bad_output_names_its_record_and_writes_nothing(changer, campaign, bad, field, words):
    changer.call("POST", f"/campaigns/{campaign.slug}/items/", {"items": [item(1), item(2)]})
    changer.call("POST", f"/campaigns/{campaign.slug}/systems/", {"systems": [{"name": "new"}]})
    url = f"/campaigns/{campaign.slug}/systems/new/outputs/"
    if words == "another output":
        changer.call("POST", url, {"outputs": [{"item": "i1", "text": "First."}]})
    before = Output.objects.count()
    body = {"outputs": [{"item": "i2", "text": "Fine."}, bad]}
    response = changer.call("POST", url, body)
    assert response.status_code == 422
    error = response.json()
    assert (error["record"], error["field"]) == (1, field), error
    assert words in error["detail"]
    assert Output.objects.count() == before


def test_outputs_of_an_unknown_system_are_404(changer, campaign):
    url = f"/campaigns/{campaign.slug}/systems/nobody/outputs/"
    assert changer.call("POST", url, {"outputs": []}).status_code == 404


# Ratings -----------------------------------------------------------------------------------

RATINGS_HEADER = "mr,sys1,sys2,ref1,ref2,quality1,quality2,_worker_id,_started_at,_created_at"


def ratings_csv(rows: int, start: int = 0) -> str:
    lines = [RATINGS_HEADER]
    for n in range(start, start + rows):
        lines.append(
            f'"name[Pub {n}], eatType[pub]",a,b,Pub {n} is a pub.,A pub.,{100 + n},50,'
            f"w{n % 3},2017-11-28 10:00:00,2017-11-28 10:02:00"
        )
    return "\n".join(lines) + "\n"


def test_ratings_import_once(changer, campaign):
    url = f"/campaigns/{campaign.slug}/ratings/?name=batch1.csv"
    body = ratings_csv(4)
    first = changer.call("POST", url, body, content_type="text/csv")
    assert first.status_code == 200, first.content
    assert first.json()["repeated"] is False and "4 rows" in first.json()["summary"]
    judged = Judgment.objects.filter(assignment__hit__campaign=campaign).count()
    assert judged == 8
    again = changer.call("POST", url, body, content_type="text/csv")
    assert again.json()["repeated"] is True
    assert Judgment.objects.filter(assignment__hit__campaign=campaign).count() == judged
    assert DataFile.objects.filter(campaign=campaign, kind="ratings").count() == 1


@pytest.mark.parametrize(
    "query, field, words",
    [
        ("criterion=data-coverage", "criterion", "quality, naturalness"),
        ("form=likert", "form", "da"),
        ("form=da&criterion=quality", "criterion", "its rows"),
    ],
)
def test_ratings_refuse_a_criterion_or_form_they_cannot_read(
    changer, campaign, query, field, words
):
    url = f"/campaigns/{campaign.slug}/ratings/?{query}"
    response = changer.call("POST", url, ratings_csv(2), content_type="text/csv")
    assert response.status_code == 422
    assert response.json()["field"] == field and words in response.json()["detail"]
    assert not DataFile.objects.filter(campaign=campaign).exists()


def test_ratings_of_a_criterion_the_file_lacks_name_the_columns(changer, campaign):
    url = f"/campaigns/{campaign.slug}/ratings/?criterion=naturalness"
    response = changer.call("POST", url, ratings_csv(2), content_type="text/csv")
    assert response.status_code == 422 and "natur1" in response.json()["detail"]
    assert not Judgment.objects.filter(assignment__hit__campaign=campaign).exists()


DA_RATINGS = "item,system,annotator,criterion,score\n"


def test_ratings_in_a_forms_layout(changer, campaign):
    fluency = {"name": "fluency", "question": "How fluent?", "form": "da"}
    assert changer.call("POST", f"/campaigns/{campaign.slug}/criteria/", fluency).status_code == 201
    items = list(campaign.items.values_list("external_id", flat=True))[:2]
    body = DA_RATINGS + "".join(
        f"{item},{system},w1,fluency,{score}\n"
        for item in items
        for system, score in (("sys1", 80), ("sys2", 30))
    )
    url = f"/campaigns/{campaign.slug}/ratings/?form=da&name=da.csv"
    response = changer.call("POST", url, body, content_type="text/csv")
    assert response.status_code == 200, response.content
    fluency_row = campaign.criteria.get(name="fluency")
    assert Judgment.objects.filter(criterion=fluency_row).count() == 4
    again = changer.call("POST", url, body, content_type="text/csv")
    assert again.json()["repeated"] is True
    assert Judgment.objects.filter(criterion=fluency_row).count() == 4


def test_bad_ratings_name_their_line_and_write_nothing(changer, campaign):
    body = ratings_csv(3).replace(",101,50,", ",-4,50,")
    url = f"/campaigns/{campaign.slug}/ratings/"
    response = changer.call("POST", url, body, content_type="text/csv")
    assert response.status_code == 422
    assert (response.json()["line"], response.json()["field"]) == (3, "quality1")
    assert not Judgment.objects.filter(assignment__hit__campaign=campaign).exists()


# Results -----------------------------------------------------------------------------------


def ranked(campaign) -> RankingRun:
    for it in campaign.items.all():
        make_judged_hit(list(it.outputs.order_by("system__name")), [300, 100, 50])
    quality = campaign.criteria.get(name=QUALITY)
    run = RankingRun.objects.create(campaign=campaign, criterion=quality, repetitions=10)
    execute_run(run)
    return run


def number(value) -> float | None:
    """A CSV cell or a JSON value as a number; empty (a value the view does not have) None."""
    return None if value in (None, "") else float(value)


def test_ranking_shows_each_fitting_views_latest_run(
    changer, campaign, django_assert_max_num_queries
):
    run = ranked(campaign)
    url = f"/campaigns/{campaign.slug}/criteria/quality/ranking/"
    # A few queries per view that fits RankME (seven), whatever the campaign's size.
    with django_assert_max_num_queries(36):
        response = changer.call("GET", url)
    assert response.status_code == 200
    shown = response.json()
    assert (shown["criterion"], shown["form"]) == ("quality", "rankme")
    quality = campaign.criteria.get(name=QUALITY)
    assert [view["protocol"] for view in shown["views"]] == fitting_protocols(quality)
    views = {view["protocol"]: view for view in shown["views"]}
    # The calibrated verdict is the view to read first; the published procedures say so.
    assert shown["default_view"] == "calibrated" == shown["views"][0]["protocol"]
    assert views["calibrated"]["published"] == ""
    assert views["e2e"]["published"].startswith("E2E NLG Challenge 2018")
    verdict = views["calibrated"]["run"]
    assert verdict["id"] == run.pk and verdict["null_permutations"] == 0
    assert [row["system"] for row in verdict["systems"]] == ["sys1", "sys2", "sys3"]
    assert {"cluster", "rank_lo", "rank_hi", "mu", "key"} <= set(verdict["systems"][0])
    # The protocol's CSV, by column: as the results page's download writes it.
    assert verdict["columns"] == list(PROTOCOLS["calibrated"].csv_columns)
    out = io.StringIO()
    write_csv(out, run)
    lines = list(csv.reader(io.StringIO(out.getvalue())))
    assert lines[0] == verdict["columns"]
    table = [[row[c] for c in verdict["columns"]] for row in verdict["table"]]
    assert [row[1] for row in table] == [line[1] for line in lines[1:]]
    assert [[number(v) for v in row[2:]] for row in table] == [
        [number(v) for v in line[2:]] for line in lines[1:]
    ]
    assert views["e2e"]["run"] is None


def test_a_da_criterion_ranks_with_the_views_of_its_form_only(changer, campaign):
    CampaignCriterion.objects.create(campaign=campaign, name="fluency", question="?", form="da")
    shown = changer.call("GET", f"/campaigns/{campaign.slug}/criteria/fluency/ranking/").json()
    assert [view["protocol"] for view in shown["views"]] == [
        "calibrated",
        "e2e",
        "bt",
        "wmt",
        "webnlg",
    ]
    assert shown["form"] == "da" and all(view["run"] is None for view in shown["views"])


def test_ranking_of_an_unknown_criterion_is_404(changer, campaign):
    response = changer.call("GET", f"/campaigns/{campaign.slug}/criteria/beauty/ranking/")
    assert response.status_code == 404


def test_monitor_and_metrics(changer, campaign):
    ranked(campaign)
    monitor = changer.call("GET", f"/campaigns/{campaign.slug}/monitor/")
    assert {row["criterion"] for row in monitor.json()} == {"quality", "naturalness"}
    metrics = changer.call("GET", f"/campaigns/{campaign.slug}/metrics/")
    assert metrics.json() == {"run": None, "metrics": [], "systems": []}


def test_judgments_come_page_by_page(changer, campaign, django_assert_max_num_queries):
    ranked(campaign)  # 4 HITs of 3 judgments
    url = f"/campaigns/{campaign.slug}/judgments/"
    seen, after = [], 0
    for _ in range(10):
        with django_assert_max_num_queries(8):
            response = changer.call("GET", f"{url}?limit=5&after={after}")
        assert response["Content-Type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
        seen += [line["judgment"] for line in lines]
        if "X-Next-Cursor" not in response:
            break
        after = int(response["X-Next-Cursor"])
    assert seen == sorted(Judgment.objects.values_list("id", flat=True))
    assert lines[0]["system"].startswith("sys") and "counted" in lines[0]


def test_judgments_of_one_criterion(changer, campaign):
    ranked(campaign)  # quality's judgments only
    url = f"/campaigns/{campaign.slug}/judgments/?criterion="

    def lines(name: str) -> list[dict]:
        response = changer.call("GET", url + name)
        return [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]

    assert {line["criterion"] for line in lines(QUALITY)} == {QUALITY}
    assert len(lines(QUALITY)) == Judgment.objects.count() == 12
    assert lines(NATURALNESS) == []


def test_judgments_page_size_is_bounded(changer, campaign):
    url = f"/campaigns/{campaign.slug}/judgments/?limit=100000"
    assert changer.call("GET", url).status_code == 422


def test_bulk_creates_cost_the_same_queries_whatever_the_campaigns_size(changer, campaign):
    """A request's queries follow its records, never the campaign's rows."""

    def queries(start: int) -> int:
        items = {"items": [item(n) for n in range(start, start + 20)]}
        outputs = {"outputs": [{"item": f"i{n}", "text": "T."} for n in range(start, start + 20)]}
        with CaptureQueriesContext(connection) as captured:
            changer.call("POST", f"/campaigns/{campaign.slug}/items/", items)
            changer.call("POST", f"/campaigns/{campaign.slug}/systems/sys1/outputs/", outputs)
        return len(captured)

    queries(0)  # the token's first use of the minute also notes its last use
    small = queries(100)
    Item.objects.bulk_create(
        Item(
            campaign=campaign,
            external_id=f"bulk{n}",
            input_kind="mr",
            input_data={},
            input_key=f"bulk key {n}",
        )
        for n in range(2000)
    )
    assert queries(1000) == small
