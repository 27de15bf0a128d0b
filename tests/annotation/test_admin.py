import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.forms_admin import CampaignAdminForm
from annotation.models import (
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    HitOutput,
    Item,
    Judgment,
)
from ranking.models import RankingRun
from tests.annotation.admin_forms import change_form_data
from tests.client import changelist_rows
from tests.factories import (
    make_annotator,
    make_bulk_judged_campaign,
    make_campaign,
    make_judged_hit,
    make_system_set,
)

pytestmark = pytest.mark.django_db


def changelist(model: str) -> str:
    return reverse(f"admin:annotation_{model}_changelist")


def columns(rows: list[dict[str, str]], *names: str) -> list[tuple[str, ...]]:
    return [tuple(row[name] for name in names) for row in rows]


# Actions -----------------------------------------------------------------------------------


def test_admin_exclude_action_is_reversible(organiser):
    annotator = make_annotator()
    page = organiser.get(changelist("annotator"))
    chosen = {"action": "exclude_from_rankings", "_selected_action": [annotator.pk]}
    organiser.submit(page, chosen, action=changelist("annotator"))
    annotator.refresh_from_db()
    assert annotator.is_excluded
    chosen = {"action": "include_in_rankings", "_selected_action": [annotator.pk]}
    organiser.submit(page, chosen, action=changelist("annotator"))
    annotator.refresh_from_db()
    assert not annotator.is_excluded


def test_admin_exclude_action_without_csrf_token_is_refused(organiser):
    annotator = make_annotator()
    chosen = {"action": "exclude_from_rankings", "_selected_action": [annotator.pk]}
    assert organiser.post(changelist("annotator"), chosen).status_code == 403
    annotator.refresh_from_db()
    assert not annotator.is_excluded


def test_admin_exclude_action_outsider_changes_nothing(non_staff):
    annotator = make_annotator()
    chosen = {"action": "exclude_from_rankings", "_selected_action": [annotator.pk]}
    response = non_staff.send("POST", changelist("annotator"), chosen)
    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))
    annotator.refresh_from_db()
    assert not annotator.is_excluded


# Change lists: the rows the test made, with their values ------------------------------------


@pytest.fixture
def judged(db):
    """A campaign of 5 systems and 3 items, one of whose HITs was judged 100, 50, 50."""
    campaign, systems, items = make_system_set()
    outputs = list(items[0].outputs.order_by("system__name")[:3])
    assignment = make_judged_hit(outputs, [100, 50, 50])
    return campaign, items, assignment


def test_admin_campaign_list_counts_items_systems_and_hits(organiser, judged):
    campaign, _, _ = judged
    rows = changelist_rows(organiser.get(changelist("campaign")))
    assert rows == [
        {
            "name": campaign.name,
            "slug": campaign.slug,
            "status": "Open to annotators",
            "item_count": "3",
            "system_count": "5",
            "hit_count": "1",
            "links": "Upload data · Export judgments · Monitor · Results · Datasheet · Bundle",
        }
    ]


def test_admin_item_list_shows_inputs_and_output_counts(organiser, judged):
    campaign, items, _ = judged
    rows = changelist_rows(organiser.get(changelist("item")))
    shown = columns(rows, "external_id", "campaign", "input_key_short", "output_count")
    expected = [(i.external_id, campaign.name, i.input_key, "5") for i in items]
    assert sorted(shown) == sorted(expected)


def test_admin_system_list_counts_outputs(organiser, judged):
    rows = changelist_rows(organiser.get(changelist("system")))
    shown = sorted(columns(rows, "name", "is_active", "output_count"))
    assert shown == [(f"sys{n}", "True", "3") for n in range(1, 6)]


def test_admin_system_page_counts_its_judgments(organiser, judged):
    campaign, _, _ = judged
    judged_system, unjudged = campaign.systems.get(name="sys1"), campaign.systems.get(name="sys5")
    for system, judgments in ((judged_system, 1), (unjudged, 0)):
        page = organiser.get(reverse("admin:annotation_system_change", args=[system.pk]))
        readonly = re.search(
            r'field-judgment_count.*?<div class="readonly">(\d+)</div>', page.content.decode(), re.S
        )
        assert readonly and int(readonly.group(1)) == judgments


def test_admin_output_list_shows_every_output(organiser, judged):
    campaign, items, _ = judged
    rows = changelist_rows(organiser.get(changelist("output")))
    shown = sorted(columns(rows, "system", "text"))
    expected = sorted(
        (output.system.name, output.text) for item in items for output in item.outputs.all()
    )
    assert len(shown) == 15 and shown == expected


def test_admin_flags_empty_outputs_in_the_output_and_system_lists_and_the_monitor(
    organiser, judged
):
    """An output without text (the system produced none) is kept: the organiser finds it
    flagged and filtered in the outputs, counted per system and on the monitor."""
    campaign, items, _ = judged
    empty = items[1].outputs.get(system__name="sys2")
    empty.text = ""
    empty.save()
    rows = changelist_rows(organiser.get(changelist("output"), {"empty": "yes"}))
    assert columns(rows, "id", "system", "is_empty") == [(str(empty.pk), "sys2", "True")]
    with_text = changelist_rows(organiser.get(changelist("output"), {"empty": "no"}))
    assert len(with_text) == 14 and {row["is_empty"] for row in with_text} == {"False"}
    systems = changelist_rows(organiser.get(changelist("system")))
    assert sorted(columns(systems, "name", "empty_count")) == [
        (f"sys{n}", "1" if n == 2 else "0") for n in range(1, 6)
    ]
    monitor = reverse("admin:annotation_campaign_monitor", args=[campaign.pk])
    page = organiser.get(monitor).content.decode()
    assert "1 empty output: the system produced no text for the item." in page
    assert f"?empty=yes&amp;system__campaign__id__exact={campaign.pk}" in page
    assert "empty output" not in organiser.get(monitor, {"part": "progress"}).content.decode()


def test_admin_annotator_list_counts_submitted_and_flagged_hits(organiser, judged):
    _, _, assignment = judged
    rows = changelist_rows(organiser.get(changelist("annotator")))
    shown = columns(rows, "__str__", "source", "is_excluded", "submitted", "flagged")
    assert shown == [(str(assignment.annotator), "Prolific", "False", "1", "0")]


def test_admin_hit_and_assignment_lists_show_the_judged_hit(organiser, judged):
    _, items, assignment = judged
    hits = changelist_rows(organiser.get(changelist("hit")))
    assert columns(hits, "id", "criterion_label", "item") == [
        (str(assignment.hit_id), "Quality", items[0].external_id)
    ]
    assignments = changelist_rows(organiser.get(changelist("assignment")))
    assert columns(assignments, "hit", "annotator", "status", "flag") == [
        (str(assignment.hit), str(assignment.annotator), "Submitted", "None")
    ]


def test_admin_judgment_list_shows_scores_per_system(organiser, judged):
    rows = changelist_rows(organiser.get(changelist("judgment")))
    shown = sorted(columns(rows, "system", "score", "reflects_perfectly"))
    assert shown == [
        ("sys1", "100.0", "False"),
        ("sys2", "50.0", "False"),
        ("sys3", "50.0", "False"),
    ]


def test_campaign_page_gives_the_study_url_for_prolific_per_criterion(organiser, settings):
    settings.SITE_URL = "https://not-this.example.org"  # the request's host is used instead
    campaign = make_campaign(slug="e2e-human")
    page = organiser.get(reverse("admin:annotation_campaign_change", args=[campaign.pk]))
    placeholders = (
        "PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}"
        "&amp;SESSION_ID={{%SESSION_ID%}}"
    )
    for criterion in ("quality", "naturalness"):
        url = f"https://testserver/annotate/e2e-human/{criterion}/?{placeholders}"
        assert f"<code>{url}</code>" in page.content.decode()


def invite_url(campaign) -> str:
    return reverse("admin:annotation_campaign_invite", args=[campaign.pk])


def test_admin_invites_named_annotators_and_shows_their_private_links(organiser, settings):
    settings.SITE_URL = "https://not-this.example.org"  # the request's host is used instead
    campaign = make_campaign(slug="pool")
    names = "Ada Lovelace\n<b>Grace</b>\n\nAda Lovelace\n"
    page = organiser.submit(
        organiser.get(invite_url(campaign)), {"names": names}, action=invite_url(campaign)
    )
    invited = Annotator.objects.filter(campaign=campaign, source="invited").order_by("name")
    assert [a.name for a in invited] == ["<b>Grace</b>", "Ada Lovelace"]
    text = page.content.decode()
    assert "&lt;b&gt;Grace&lt;/b&gt;" in text and "<b>Grace</b>" not in text
    for annotator in invited:
        for criterion in ("quality", "naturalness"):
            link = f"https://testserver/annotate/pool/{criterion}/?token={annotator.token}"
            assert f"<code>{link}</code>" in text
    # Invited again: the same annotators, the same links.
    organiser.submit(
        organiser.get(invite_url(campaign)), {"names": "Ada Lovelace"}, action=invite_url(campaign)
    )
    assert Annotator.objects.filter(campaign=campaign, source="invited").count() == 2


def test_admin_invitation_without_names_or_csrf_invites_nobody(organiser):
    campaign = make_campaign()
    page = organiser.submit(
        organiser.get(invite_url(campaign)), {"names": "  \n "}, action=invite_url(campaign)
    )
    assert "This field is required." in page.content.decode()
    assert organiser.post(invite_url(campaign), {"names": "Ada"}).status_code == 403
    assert not Annotator.objects.filter(campaign=campaign).exists()


@pytest.mark.parametrize("outsider", ["non_staff", "stranger"])
def test_admin_invitation_outsider_invites_nobody(request, outsider):
    campaign = make_campaign()
    response = request.getfixturevalue(outsider).send(
        "POST", invite_url(campaign), {"names": "Eve"}
    )
    assert response.status_code == 302 and "/admin/login/" in response.url
    assert not Annotator.objects.filter(campaign=campaign).exists()


def save_standard(campaign, kind: str, text: str) -> CampaignAdminForm:
    data = {"standard_text": campaign.standard_text, "standard_input_kind": kind}
    form = CampaignAdminForm({**data, "standard_input": text}, instance=campaign)
    if form.is_valid():
        form.save()
    return form


@pytest.mark.parametrize(
    "text",
    [
        "name[The Vaults], eatType[pub]",
        '{"attributes": [["name", "The Vaults"], ["eatType", "pub"]]}',
    ],
)
def test_admin_standard_input_is_entered_as_an_item_is(organiser, text):
    campaign = make_campaign(standard_input={})
    assert save_standard(campaign, "mr", text).is_valid()
    campaign.refresh_from_db()
    assert campaign.standard_input == {"attributes": [["name", "The Vaults"], ["eatType", "pub"]]}
    page = organiser.get(reverse("admin:annotation_campaign_change", args=[campaign.pk]))
    assert "name[The Vaults], eatType[pub]</textarea>" in page.content.decode()  # as typed


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        ("mr", "The Vaults, a pub", "cannot read an attribute[value] pair"),
        ("mr", '{"attributes": "The Vaults"}', "attributes"),
        ("table", "name[The Vaults]", "give the item JSON"),
        ("mr", '{"attributes": [["name"', "not valid JSON"),
    ],
)
def test_admin_standard_input_of_the_wrong_shape_is_refused_with_the_expected_one(
    kind, text, message
):
    campaign = make_campaign()
    before = campaign.standard_input
    form = save_standard(campaign, kind, text)
    assert not form.is_valid()
    error = " ".join(form.errors["standard_input"])
    assert message in error and "E2E text" in error
    campaign.refresh_from_db()
    assert campaign.standard_input == before


def test_admin_campaign_without_standard_input_saves_again(organiser):
    """Campaigns made by import_items --create-campaign have none: the page shows the
    field empty, as the help says it may be, and saves."""
    campaign = make_campaign(status=Campaign.Status.DRAFT, standard_text="", standard_input={})
    url = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    page = organiser.get(url)
    data = change_form_data(page)
    assert data["standard_input"] == ""
    response = organiser.submit(page, {**data, "name": "Renamed"}, action=url)
    assert response.status_code == 302, response.context["adminform"].form.errors
    campaign.refresh_from_db()
    assert (campaign.name, campaign.standard_input) == ("Renamed", {})


def test_admin_new_criterion_starts_with_the_comprehension_check_on(organiser):
    campaign = make_campaign()
    page = organiser.get(reverse("admin:annotation_campaign_change", args=[campaign.pk]))
    criteria = page.context["inline_admin_formsets"][0].formset
    assert criteria.empty_form["comprehension_check"].value() is True
    assert CampaignCriterion(campaign=campaign, name="quality").comprehension_check


# Filters from the address bar -------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        {"source": "\x00"},
        {"q": "pub\x00"},
        {"campaign__id__exact": "\x00"},
        {"campaign__id__exact": "not-a-number"},
        {"is_excluded__exact": "maybe"},
    ],
)
def test_admin_list_with_an_invalid_filter_is_a_bad_request(organiser, query):
    # Two campaigns, or the admin shows no campaign filter and ignores its parameter.
    make_annotator(), make_annotator()
    assert organiser.get(changelist("annotator"), query).status_code == 400
    assert Annotator.objects.count() == 2


def test_admin_list_with_an_invalid_filter_outsider_is_sent_to_login(non_staff):
    response = non_staff.get(changelist("annotator"), {"source": "\x00"})
    assert response.status_code == 302 and "/admin/login/" in response.url


# Deleting a campaign ----------------------------------------------------------------------


def delete_page_queries(organiser, campaign) -> int:
    url = reverse("admin:annotation_campaign_delete", args=[campaign.pk])
    with CaptureQueriesContext(connection) as queries:
        page = organiser.get(url)
    assert page.status_code == 200
    return len(queries)


def test_admin_campaign_delete_page_counts_rows_in_queries_that_do_not_grow(organiser):
    small = make_bulk_judged_campaign(hits=4, systems=5)
    large = make_bulk_judged_campaign(hits=400, systems=5)
    assert delete_page_queries(organiser, small) == delete_page_queries(organiser, large)
    url = reverse("admin:annotation_campaign_delete", args=[large.pk])
    text = organiser.get(url).content.decode()
    assert "2,000 judgments" in text and "400 assignments" in text


def test_admin_campaign_deletion_deletes_its_rows_and_no_others(organiser):
    kept = make_bulk_judged_campaign(hits=3, systems=3)
    campaign = make_bulk_judged_campaign(hits=300, systems=5)
    RankingRun.objects.create(campaign=campaign, criterion=campaign.criteria.get(name="quality"))
    url = reverse("admin:annotation_campaign_delete", args=[campaign.pk])
    response = organiser.submit(organiser.get(url), {"post": "yes"}, action=url)
    assert response.status_code == 302
    assert list(Campaign.objects.all()) == [kept]
    assert Judgment.objects.count() == 9 and HitOutput.objects.count() == 9
    assert Assignment.objects.count() == 3 and Item.objects.count() == 3
    assert not RankingRun.objects.exists()


def test_admin_campaign_deletion_outsider_deletes_nothing(non_staff):
    campaign = make_campaign()
    url = reverse("admin:annotation_campaign_delete", args=[campaign.pk])
    response = non_staff.send("POST", url, {"post": "yes"})
    assert response.status_code == 302 and "/admin/login/" in response.url
    assert Campaign.objects.filter(pk=campaign.pk).exists()


def test_campaign_change_page_links_to_the_campaigns_pages(organiser):
    campaign = make_campaign()
    page = organiser.get(reverse("admin:annotation_campaign_change", args=[campaign.pk]))
    text = page.content.decode()
    for name in ("upload", "export", "monitor", "datasheet", "bundle"):
        url = reverse(f"admin:annotation_campaign_{name}", args=[campaign.pk])
        assert f'href="{url}"' in text, name
    assert f'href="{reverse("ranking:campaign", args=[campaign.slug])}"' in text
    adding = organiser.get(reverse("admin:annotation_campaign_add")).content.decode()
    assert 'class="campaign-links"' not in adding


def test_campaign_page_gives_whole_study_urls_without_site_url(organiser, settings):
    settings.SITE_URL = ""
    campaign = make_campaign(slug="e2e-human")
    page = organiser.get(reverse("admin:annotation_campaign_change", args=[campaign.pk]))
    assert "<code>https://testserver/annotate/e2e-human/quality/?PROLIFIC_PID=" in (
        page.content.decode()
    )


def test_a_campaign_added_without_a_criterion_gets_e2e_s_two_saying_so(organiser):
    add = reverse("admin:annotation_campaign_add")
    page = organiser.get(add)
    fields = {**change_form_data(page), "name": "Pilot", "slug": "pilot"}
    response = organiser.submit(page, fields, action=add, follow=True)
    assert response.status_code == 200
    campaign = Campaign.objects.get(slug="pilot")
    criteria = campaign.criteria.order_by("name")
    assert [(c.name, c.shows_input, c.is_open) for c in criteria] == [
        ("naturalness", False, True),
        ("quality", True, True),
    ]
    text = response.content.decode()
    assert "no criterion was given, so it has quality and naturalness" in text
    # A campaign added with a criterion keeps only it: tests/browser/test_organiser_journey.py
