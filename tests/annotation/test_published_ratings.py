"""Published human evaluations import as they were published (issue 37): a crowd platform's
HIT id names the task shown and is shared by the workers who did it and the criteria asked on
it; an empty output is a real output, rated like any other. For each form (RankME's E2E
layout, DA, pairwise, ESA) a small file in its published layout is imported, ranked through
the worker's task, exported and imported into a fresh campaign: the same judgments, the same
rankings."""

import csv
import io
import itertools
import json

import pytest

from annotation.datafiles.exporters import export
from annotation.datafiles.ratings_da import import_da_ratings
from annotation.datafiles.ratings_esa import import_esa_judgments
from annotation.datafiles.ratings_import import import_ratings
from annotation.datafiles.ratings_pairwise import import_pairwise_ratings
from annotation.models import Assignment, Campaign, Hit, Judgment, Output
from tests.factories import make_campaign
from tests.judging_helpers import SYSTEMS, form_world, plain_text, ranked

pytestmark = pytest.mark.django_db

WORKERS = ["A1X", "A2Y", "A3Z"]  # Mechanical Turk worker ids
EMPTY = ("delta", 2)  # the system that produced no text for item i2
WINS = ("wins", "losses")  # the columns of a ranking compared beside (system, mu, cluster)


def text_of(system: str, n: int) -> str:
    return "" if (system, n) == EMPTY else plain_text(system, n)


def published_world() -> Campaign:
    return form_world(text_of=text_of)


def judgments_of(campaign: Campaign) -> list[tuple]:
    """Every judgment as (HIT id, worker's place among the HIT's, item, system, output text,
    criterion, score), sorted: equal for two campaigns that hold the same judgments, whatever
    the annotators' ids (an export names them by their row's number)."""
    judged = Judgment.objects.filter(assignment__hit__campaign=campaign).values_list(
        "assignment__hit__external_id",
        "assignment__annotator__external_id",
        "assignment__hit__item__external_id",
        "slot__output__system__name",
        "slot__output__text",
        "criterion__name",
        "score",
    )
    rows = list(judged)
    order: dict[str, dict[str, int]] = {}
    for hit, annotator, *_ in sorted(rows, key=lambda r: (r[0], r[2], r[3], r[5], r[6])):
        order.setdefault(hit, {}).setdefault(annotator, len(order[hit]))
    return sorted((hit, order[hit][a], *rest) for hit, a, *rest in rows)


def shared_hits(campaign: Campaign, hit: str) -> list[tuple[str, list[int]]]:
    """The HITs made of the file's `hit`: (annotator, its outputs) per criterion's page."""
    return sorted(
        (
            f"{h.criterion.name}:{h.assignments.get().annotator.external_id}",
            list(h.slots.order_by("position").values_list("output_id", flat=True)),
        )
        for h in Hit.objects.filter(campaign=campaign, external_id=hit)
    )


def empty_output(campaign: Campaign) -> Output:
    system, n = EMPTY
    return Output.objects.get(
        item__campaign=campaign, system__name=system, item__external_id=f"i{n}"
    )


def round_trip(form: str, importer, text: str, name: str) -> tuple[Campaign, Campaign, str]:
    """The file imported into a campaign, ranked and exported; the export imported into a
    fresh campaign and ranked: the same judgments and rankings in both."""
    first = published_world()
    importer(first, io.BytesIO(text.encode()), name)
    exported = "".join(export(first, form))
    second = published_world()
    importer(second, io.BytesIO(exported.encode()), f"exported-{name}")
    assert judgments_of(second) == judgments_of(first)
    assert ranked(first, *WINS) == ranked(second, *WINS)
    return first, second, exported


# DA ------------------------------------------------------------------------------------------


def da_file() -> str:
    """A HIT per item shared by three workers, each scoring the 4 systems on correctness and
    fluency; the empty output scored 0 on both, as WebNLG 2020's raters scored FORGE2017's."""
    lines = ["item,system,annotator,criterion,score,hit,seconds"]
    for n in range(1, 7):
        for w, worker in enumerate(WORKERS):
            for s, system in enumerate(SYSTEMS):
                for criterion in ("correctness", "fluency"):
                    score = 0 if (system, n) == EMPTY else 90 - 20 * s - 5 * w + n
                    lines.append(f"i{n},{system},{worker},{criterion},{score},HIT{n},42")
    return "\n".join(lines) + "\n"


def test_a_da_file_with_one_empty_output_imports_with_that_outputs_ratings(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    first, second, exported = round_trip("da", import_da_ratings, da_file(), "da.csv")
    assert Judgment.objects.filter(assignment__hit__campaign=first).count() == 6 * 3 * 4 * 2
    # One HIT here per worker, of the same shown outputs; the criteria on each worker's page.
    pages = shared_hits(first, "HIT1")
    assert [who for who, _ in pages] == [f"correctness:{w}" for w in WORKERS]
    assert len({tuple(outputs) for _, outputs in pages}) == 1
    empty = empty_output(first)
    assert empty.text == ""
    scores = Judgment.objects.filter(slot__output=empty).values_list("criterion__name", "score")
    assert sorted(scores) == [("correctness", 0.0)] * 3 + [("fluency", 0.0)] * 3
    rows = list(csv.DictReader(io.StringIO(exported)))
    empty_rows = [r for r in rows if (r["item"], r["system"]) == ("i2", "delta")]
    assert [(r["hit"], r["score"]) for r in empty_rows] == [("HIT2", "0.0")] * 6
    assert empty_output(second).text == ""
    table = ranked(first, *WINS)[("correctness", "wmt")]
    assert [row[0] for row in table] == SYSTEMS


# Pairwise ------------------------------------------------------------------------------------

PAIRS = [
    ("alpha", "beta"),
    ("gamma", "delta"),  # on item 2, where delta produced no text
    ("alpha", "gamma"),
    ("beta", "delta"),
    ("alpha", "delta"),
    ("beta", "gamma"),
]
PAIRWISE_CRITERIA = ["coherence", "fluency", "adequacy"]


def pairwise_file() -> str:
    """Mechanical Turk's way: a HIT per item showing one pair, done by three workers, each
    answering three criteria on it; the earlier system of SYSTEMS wins, shown either side."""
    lines = ["item,system_a,system_b,annotator,criterion,winner,hit"]
    for n, (left, right) in enumerate(PAIRS, start=1):
        if n % 2:
            left, right = right, left
        winner = "a" if SYSTEMS.index(left) < SYSTEMS.index(right) else "b"
        for worker, criterion in itertools.product(WORKERS, PAIRWISE_CRITERIA):
            lines.append(f"i{n},{left},{right},{worker},{criterion},{winner},3W{n}HITX")
    return "\n".join(lines) + "\n"


def test_a_mturk_pairwise_file_of_hits_shared_by_three_workers_and_criteria_gives_bws(settings):
    """A Mechanical Turk-style pairwise file with HIT ids shared by three workers and three
    criteria imports, and best-worst scores follow from it."""
    settings.RANKING_DEBOUNCE_SECONDS = 0
    first, _, exported = round_trip("pairwise", import_pairwise_ratings, pairwise_file(), "pw.csv")
    assert Assignment.objects.filter(hit__campaign=first, status="submitted").count() == 6 * 9
    pages = shared_hits(first, "3W2HITX")
    assert len(pages) == 9 and len({tuple(outputs) for _, outputs in pages}) == 1
    assert empty_output(first).pk in pages[0][1]
    assert Judgment.objects.filter(slot__output=empty_output(first), score=0.0).count() == 9
    assert len(exported.splitlines()) == 1 + 6 * 9
    rankings = ranked(first, *WINS)
    for criterion in PAIRWISE_CRITERIA:
        bws = {row[0]: row for row in rankings[(criterion, "bws")]}
        # alpha is shown in 3 pairs to 3 workers and wins each; delta loses each.
        assert (bws["alpha"][1], bws["alpha"][3:]) == (100.0, (9, 0))
        assert (bws["delta"][1], bws["delta"][3:]) == (-100.0, (0, 9))
        assert bws["beta"][1] == pytest.approx(100 * (6 - 3) / 9) and bws["beta"][3:] == (6, 3)
        assert bws["gamma"][3:] == (3, 6)


# ESA -----------------------------------------------------------------------------------------


def esa_file() -> str:
    """A HIT per item shared by three workers, each marking and scoring the 4 outputs on
    accuracy and on fluency; the empty output has no span to mark and scores 0."""
    lines = []
    for n in range(1, 7):
        for worker, criterion in itertools.product(WORKERS, ("accuracy", "fluency")):
            for s, system in enumerate(SYSTEMS):
                empty = (system, n) == EMPTY
                spans = [] if empty or s < 2 else [{"start": 0, "end": 5, "severity": "minor"}]
                record = {
                    "item": f"i{n}",
                    "system": system,
                    "annotator": worker,
                    "criterion": criterion,
                    "score": 0 if empty else 95 - 15 * s,
                    "spans": spans,
                    "hit": f"esa-{n}",
                }
                lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


def test_an_esa_file_of_hits_shared_by_three_workers_and_two_criteria_round_trips(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    first, *_ = round_trip("esa", import_esa_judgments, esa_file(), "esa.jsonl")
    pages = shared_hits(first, "esa-2")
    assert [who for who, _ in pages] == [
        f"{c}:{w}" for c in ("accuracy", "fluency") for w in WORKERS
    ]
    assert len({tuple(outputs) for _, outputs in pages}) == 1
    scores = Judgment.objects.filter(slot__output=empty_output(first)).values_list(
        "score", flat=True
    )
    assert list(scores) == [0.0] * 6


# RankME (E2E's CrowdFlower layout) -----------------------------------------------------------

MRS = [f"name[Place {n}], eatType[pub], area[riverside]" for n in range(1, 7)]


def rankme_file(prefix: str) -> str:
    """E2E's layout with a HIT id (`_id`) shared by the three workers who did it, as a
    Mechanical Turk file keys it; RankME's criteria are files of their own, on the same HITs."""
    header = ["_unit_id", "_id", "_worker_id", "_started_at", "_created_at", "mr", "mr_id"]
    header += [f"{c}{i}" for c in ("sys", "ref", prefix, "check") for i in range(1, 5)]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for n, mr in enumerate(MRS, start=1):
        for w, worker in enumerate(WORKERS):
            row = [f"unit{n}", f"HIT{n}", worker, "11/28/2017 14:42:14", "11/28/2017 14:51:43"]
            row += [mr, f"i{n}", *SYSTEMS, *(text_of(s, n) for s in SYSTEMS)]
            row += [str(1 if (s, n) == EMPTY else 100 - 20 * i + w) for i, s in enumerate(SYSTEMS)]
            row += ["ok"] * 4 if prefix == "quality" else [""] * 4
            writer.writerow(row)
    return out.getvalue()


def test_a_rankme_file_of_hits_shared_by_three_workers_and_two_criteria_round_trips(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    campaigns = []
    for _ in range(2):
        campaign = make_campaign()
        campaign.outputs_per_hit = 4
        campaign.save()
        campaigns.append(campaign)
    first, second = campaigns
    for prefix in ("quality", "natur"):
        import_ratings(first, io.BytesIO(rankme_file(prefix).encode()), f"{prefix}.csv")
    assert Hit.objects.filter(campaign=first, external_id="HIT2").count() == 3 * 2
    empty = empty_output(first)
    assert empty.text == "" and Judgment.objects.filter(slot__output=empty).count() == 6
    for criterion in ("quality", "naturalness"):
        exported = "".join(export(first, "e2e", first.criteria.get(name=criterion)))
        import_ratings(second, io.BytesIO(exported.encode()), f"{criterion}-exported.csv")
    assert judgments_of(second) == judgments_of(first)
    assert ranked(first, *WINS) == ranked(second, *WINS)
    table = ranked(first, *WINS)[("quality", "e2e")]
    assert table[0][0] == "alpha"
