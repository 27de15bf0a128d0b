"""Error-span annotation judgments in and out (annotation/datafiles/ratings_esa.py): the
JSON Lines import (spans checked against the outputs, errors with their line, transactional,
the criterion made and said), the export, the exact round trip, the rankings through the
worker path and the errors per 100 words on the results page."""

import io
import json

import krippendorff
import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.datafiles.exporters import export
from annotation.datafiles.ratings_esa import import_esa_judgments
from annotation.judging import form_named
from annotation.models import Campaign, ErrorSpan, Judgment
from evalsite.datasheet import build_datasheet
from nlgdata.datafiles import DataFileError
from ranking.agreement.models import RunAgreement
from ranking.error_spans import error_rate_rows
from ranking.protocols import PROTOCOLS
from tests.judging_helpers import SYSTEMS, form_world, ranked

pytestmark = pytest.mark.django_db

ESA = form_named("esa")
# The views that fit the form without a fused judge (the fused view needs one: tests/judges).
ESA_VIEWS = [name for name in ESA.protocols if not PROTOCOLS[name].uses_judge]
LEVEL = {"alpha": 85, "beta": 65, "gamma": 45, "delta": 25}


def text_of(system: str, n: int) -> str:
    # Six words, one of them an emoji after the first word (an astral character).
    return f"{system} 🙂 wrote item {n} today."


def esa_world(slug: str = "") -> Campaign:
    """4 systems with an output for each of 6 items (ids i1..i6); no ESA criterion yet."""
    return form_world(slug, text_of)


def judgments_jsonl(annotators: int = 3, k: int = 3) -> str:
    """Each annotator judges k systems per item on `mqm`: the worse the system, the more
    spans (the emoji's span [len(system) + 1, len(system) + 2) is a code point, not two)."""
    lines = []
    for a in range(annotators):
        for n in range(1, 7):
            shown = [SYSTEMS[(n + a + j) % 4] for j in range(k)]
            for j, system in enumerate(shown):
                rank = SYSTEMS.index(system)
                spans = []
                if rank >= 1:
                    spans.append({"start": 0, "end": len(system), "severity": "minor"})
                if rank >= 2:
                    at = len(system) + 1
                    spans.append({"start": at, "end": at + 1, "severity": "major"})
                if rank >= 3:
                    spans.append({"start": at + 2, "end": at + 7, "severity": "major"})
                score = min(100, LEVEL[system] + 5 * a + (n * 7 + j * 3) % 11)
                lines.append(
                    json.dumps(
                        {
                            "item": f"i{n}",
                            "system": system,
                            "annotator": f"w{a}",
                            "criterion": "mqm",
                            "score": score,
                            "spans": spans,
                            "hit": f"h{a}-{n}",
                        },
                        ensure_ascii=False,
                    )
                )
    return "\n".join(lines) + "\n"


def imported(campaign: Campaign, text: str, name: str = "esa.jsonl"):
    return import_esa_judgments(campaign, io.BytesIO(text.encode()), name)


def spans_of(campaign: Campaign) -> list[tuple]:
    """(item, system, annotator's HIT, score, start, end, severity) of every span, sorted."""
    rows = ErrorSpan.objects.filter(judgment__assignment__hit__campaign=campaign).values_list(
        "judgment__assignment__hit__item__external_id",
        "judgment__slot__output__system__name",
        "judgment__assignment__hit__external_id",
        "judgment__score",
        "start",
        "end",
        "severity",
    )
    return sorted(rows)


def test_import_stores_every_judgment_and_span_and_creates_the_criterion():
    campaign = esa_world()
    summary = imported(campaign, judgments_jsonl())
    assert "Created the error-span criteria mqm" in str(summary)
    criterion = campaign.criteria.get(name="mqm")
    assert criterion.form == ESA.name and not criterion.is_open
    assert Judgment.objects.filter(criterion=criterion).count() == 54
    # alpha: no span; beta: 1; gamma: 2; delta: 3. Each system is judged 13 or 14 times.
    per_system = {s: 0 for s in SYSTEMS}
    for j in Judgment.objects.select_related("slot__output__system"):
        per_system[j.slot.output.system.name] += 1
    expected = sum(per_system[s] * SYSTEMS.index(s) for s in SYSTEMS)
    assert ErrorSpan.objects.count() == expected
    span = ErrorSpan.objects.filter(
        judgment__slot__output__system__name="gamma", severity="major"
    ).first()
    text = span.judgment.slot.output.text
    assert text[span.start : span.end] == "🙂"


def test_import_refuses_a_span_past_the_output_naming_its_line_and_span():
    campaign = esa_world()
    lines = judgments_jsonl().splitlines()
    bad = json.loads(lines[4])
    bad["spans"] = [
        {"start": 0, "end": 3, "severity": "minor"},
        {"start": 5, "end": 99, "severity": "major"},
    ]
    lines[4] = json.dumps(bad)
    with pytest.raises(DataFileError) as error:
        imported(campaign, "\n".join(lines) + "\n")
    assert str(error.value).startswith("esa.jsonl, line 5, column spans[1].end: ends at 99")
    assert not Judgment.objects.exists() and not ErrorSpan.objects.exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"system": "nobody"}, "line 3, column system: no system 'nobody'"),
        ({"item": "i99", "hit": "hx"}, "line 3, column item: no item 'i99'"),
        ({"spans": [{"start": 2, "end": 1, "severity": "minor"}]}, "line 3, column spans[0].end"),
        (
            {"spans": [{"start": 0, "end": 1, "severity": "bad"}]},
            "line 3, column spans[0].severity",
        ),
        (
            {"spans": [{"start": 0, "end": 1, "severity": "minor"}] * 2},
            "line 3, column spans[1]: the same span twice",
        ),
        ({"score": 101}, "line 3, column score"),
    ],
)
def test_import_errors_name_the_line(change, message):
    campaign = esa_world()
    lines = judgments_jsonl(annotators=1).splitlines()
    row = json.loads(lines[2])
    row.update(change)
    lines[2] = json.dumps(row)
    with pytest.raises(DataFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        imported(campaign, "\n".join(lines) + "\n")
    assert not Judgment.objects.exists()


def test_import_refuses_a_criterion_judged_with_another_form():
    campaign = esa_world()
    lines = judgments_jsonl(annotators=1).splitlines()
    with pytest.raises(DataFileError, match="line 1, column criterion: criterion quality"):
        imported(campaign, lines[0].replace('"mqm"', '"quality"') + "\n")


def test_import_is_transactional_and_the_command_says_what_it_made(tmp_path):
    campaign = esa_world(slug="esa-world")
    bad = judgments_jsonl() + json.dumps(
        {
            "item": "i1",
            "system": "nobody",
            "annotator": "w9",
            "criterion": "mqm",
            "score": 5,
            "spans": [],
        }
    )
    path = tmp_path / "bad.jsonl"
    path.write_text(bad)
    with pytest.raises(CommandError, match="bad.jsonl, line 55, column system: no system 'nobody'"):
        call_command("import_ratings", "esa-world", str(path), "--form", ESA.name)
    assert not Judgment.objects.exists() and not ErrorSpan.objects.exists()
    assert not campaign.criteria.filter(name="mqm").exists()
    good = tmp_path / "good.jsonl"
    good.write_text(judgments_jsonl())
    out = io.StringIO()
    call_command("import_ratings", "esa-world", str(good), "--form", ESA.name, stdout=out)
    assert "Created the error-span criteria mqm" in out.getvalue()
    assert Judgment.objects.count() == 54


def test_esa_criterion_is_ranked_by_the_views_that_fit_through_the_worker_path(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    campaign = esa_world()
    imported(campaign, judgments_jsonl())
    rankings = ranked(campaign)
    assert sorted(rankings) == sorted(("mqm", protocol) for protocol in ESA_VIEWS)
    for protocol, table in rankings.items():
        assert table[0][0] == "alpha" and table[-1][0] == "delta", protocol


def test_export_then_import_into_a_new_campaign_gives_the_same_rankings_and_spans(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    first = esa_world()
    imported(first, judgments_jsonl())
    exported = "".join(export(first, ESA.name))
    assert len(exported.splitlines()) == 54
    assert '"🙂"' not in exported and "🙂" not in exported  # spans are offsets, not text
    second = esa_world()
    imported(second, exported, name="exported.jsonl")
    again = "".join(export(second, ESA.name))

    def strip(text):  # the annotators' numbers are rows of each campaign
        return [{**json.loads(line), "annotator": None} for line in text.splitlines()]

    assert strip(again) == strip(exported)
    assert spans_of(first) == spans_of(second)
    assert ranked(first) == ranked(second)
    assert error_rate_rows(first.criteria.get(name="mqm")) == error_rate_rows(
        second.criteria.get(name="mqm")
    )


def test_export_command_writes_the_esa_layout(tmp_path):
    campaign = esa_world(slug="esa-out")
    imported(campaign, judgments_jsonl(annotators=1))
    out = tmp_path / "out.jsonl"
    call_command("export_judgments", "esa-out", "--format", ESA.name, "--out", str(out))
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 18
    assert set(lines[0]) == {"item", "system", "annotator", "criterion", "score", "spans", "hit"}
    assert (lines[0]["item"], lines[0]["system"], lines[0]["hit"]) == ("i1", "beta", "h0-1")
    assert lines[0]["spans"] == [{"start": 0, "end": 4, "severity": "minor"}]


def test_error_rates_per_100_words_by_severity_in_one_query():
    campaign = esa_world()
    imported(campaign, judgments_jsonl())
    criterion = campaign.criteria.get(name="mqm")
    with CaptureQueriesContext(connection) as queries:
        rows = {row.system: row for row in error_rate_rows(criterion)}
    assert len(queries) == 1
    assert list(rows) == SYSTEMS  # fewest errors first
    for name, row in rows.items():
        rank = SYSTEMS.index(name)
        assert row.words == 6 * row.judgments  # six whitespace tokens an output
        assert row.minor == (row.judgments if rank >= 1 else 0)
        assert row.major == row.judgments * max(0, rank - 1)
        assert row.errors_per_100_words == pytest.approx(100 * rank / 6)
    assert error_rate_rows(campaign.criteria.get(name="quality")) is None


def test_the_results_page_of_an_esa_criterion_shows_the_views_that_fit_and_error_rates(
    settings, organiser
):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    campaign = esa_world()
    imported(campaign, judgments_jsonl())
    ranked(campaign)
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "mqm"]) + "?protocol=wmt")
    html = page.content.decode()
    for name, protocol in PROTOCOLS.items():
        assert (protocol.label in html) == (name in ESA_VIEWS), name
    assert "Errors per 100 words" in html and "50.00" in html  # delta: 3 errors in 6 words
    quality = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    assert "Errors per 100 words" not in quality.content.decode()


def test_datasheet_words_an_esa_criterion():
    campaign = esa_world()
    imported(campaign, judgments_jsonl())
    sheet = build_datasheet(campaign)
    sections = {c["criterion"]: c["questions"] for c in sheet["sections"]["4"]["criteria"]}
    questions = sections["mqm"]
    assert questions["4.3.8"]["answer"].startswith("error-span annotation (ESA")
    assert questions["4.3.4"]["answer"].startswith("0-100, ends labelled")
    assert questions["4.2.2"]["answer"].startswith("absolute")


def test_agreement_is_krippendorffs_interval_alpha_on_the_scores_as_given(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    campaign = esa_world()
    imported(campaign, judgments_jsonl())
    ranked(campaign)
    measured = RunAgreement.objects.filter(run__criterion__name="mqm").first()
    rows = Judgment.objects.filter(criterion__name="mqm").values_list(
        "assignment__annotator_id", "assignment__hit__item_id", "slot__output__system_id", "score"
    )
    annotators = sorted({a for a, _, _, _ in rows})
    units = sorted({(i, s) for _, i, s, _ in rows})
    data = np.full((len(annotators), len(units)), np.nan)
    for a, i, s, score in rows:
        data[annotators.index(a), units.index((i, s))] = score
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert measured.alpha == pytest.approx(expected)
