"""Between the database and ranking.engine.agreement: load a criterion's judgments as arrays,
measure, and store the result with the ranking run that asked for it.

The worker measures agreement as part of each ranking run, so it is recomputed exactly when
the judgments change (the sweep's trigger), is claimed, kept alive and taken over with the
run, and is stored in the run's own transaction: the results page reads one row.
"""

import time
from dataclasses import dataclass

import numpy as np
from django.db.models import Case, Value, When

from annotation.judging import form_of
from annotation.models import (
    Assignment,
    CampaignCriterion,
    Judgment,
    annotator_counts_q,
    counted_q,
)
from ranking.engine.agreement import Agreement, HitsDone, Judgments, hits_done, measure_agreement
from ranking.models import RankingRun

from .models import AnnotatorAgreement, RunAgreement

# The fields of ranking.engine.agreement.Judgments, as one row of an array.
JUDGMENT_FIELDS = {
    "hit": "i8",
    "annotator": "i8",
    "item": "i8",
    "system": "i8",
    "score": "f8",
    "counted": "?",
}
# With the judged output's id, for the fused view (ranking.protocols.fused).
JUDGMENT_ROW = np.dtype([*JUDGMENT_FIELDS.items(), ("output", "i8")])
HIT_ROW = np.dtype([("annotator", "i8"), ("seconds", "f8"), ("flagged", "?"), ("excluded", "?")])
CHUNK_ROWS = 10_000


@dataclass(frozen=True)
class Measured:
    agreement: Agreement
    done: HitsDone
    excluded: set[int]  # annotators excluded from rankings
    seconds: float


@dataclass(frozen=True)
class MeasuredBefore:
    """The agreement a finished run of the same judgments (criterion, version and seed)
    already measured: the sweep queues a run per protocol for each change, and they share it."""

    run_id: int


def measure_once(
    criterion: CampaignCriterion, seed: int, judgments: Judgments | None = None
) -> "Measured | MeasuredBefore":
    """The agreement of the criterion's judgments as of its current version: measured by an
    earlier run of this version, or measured now (on `judgments` where the caller has read
    them already, as load_judgments reads them)."""
    before = RunAgreement.objects.filter(
        run__criterion=criterion,
        run__judgments_version=criterion.judgments_version,
        run__seed=seed,
        run__status=RankingRun.Status.DONE,
    )
    earlier = before.order_by("-run_id").values_list("run_id", flat=True).first()
    if earlier is not None:
        return MeasuredBefore(earlier)
    return measure(criterion, seed, judgments)


def measure(
    criterion: CampaignCriterion, seed: int, judgments: Judgments | None = None
) -> Measured:
    started = time.perf_counter()
    if judgments is None:
        judgments = load_judgments(criterion)
    rng = np.random.default_rng(seed)
    agreement = measure_agreement(judgments, rng, on=form_of(criterion).agreement_on)
    hits = load_hits(criterion)
    done = hits_done(hits["annotator"], hits["seconds"], hits["flagged"])
    excluded = set(np.unique(hits["annotator"][hits["excluded"]]).tolist())
    return Measured(agreement, done, excluded, time.perf_counter() - started)


def load_judgments(criterion: CampaignCriterion) -> Judgments:
    """Every judgment of a submitted HIT, marked with whether rankings count it: the
    per-annotator figures cover flagged HITs and excluded annotators too."""
    rows = submitted_judgments(criterion).order_by()
    data = np.fromiter(rows.iterator(chunk_size=CHUNK_ROWS), dtype=JUDGMENT_ROW)
    return judgments_of(data)


def submitted_judgments(criterion: CampaignCriterion):
    """The criterion's judgments of outputs in submitted HITs as JUDGMENT_FIELDS rows (the
    ranking worker reads them in ranking order, once for the rankings and this)."""
    counted = Case(When(counted_q("assignment__"), then=Value(True)), default=Value(False))
    return (
        Judgment.objects.for_criterion(criterion)
        .of_originals()
        .filter(assignment__status=Assignment.Status.SUBMITTED)
        .annotate(is_counted=counted)
        .values_list(
            "assignment_id",
            "assignment__annotator_id",
            "assignment__hit__item_id",
            "slot__output__system_id",
            "score",
            "is_counted",
            "slot__output_id",
        )
    )


def judgments_of(rows: np.ndarray) -> Judgments:
    """From an array of JUDGMENT_ROW."""
    return Judgments(**{name: rows[name] for name in JUDGMENT_FIELDS})


def load_hits(criterion: CampaignCriterion) -> np.ndarray:
    # Left out of rankings: excluded, or not (yet) vouched for by Prolific (counted_q).
    left_out = Case(When(annotator_counts_q("annotator__"), then=Value(False)), default=Value(True))
    own_hits = form_of(criterion).has_own_hits(criterion)
    rows = (
        Assignment.objects.submitted()
        .judging(criterion, own_hits)
        .order_by()
        .values_list("annotator_id", "started_at", "submitted_at", "flag", left_out)
    )
    return np.fromiter(
        (
            (annotator, seconds_taken(started, submitted), bool(flag), excluded)
            for annotator, started, submitted, flag, excluded in rows.iterator(
                chunk_size=CHUNK_ROWS
            )
        ),
        dtype=HIT_ROW,
    )


def seconds_taken(started, submitted) -> float:
    return (submitted - started).total_seconds() if submitted else np.nan


def store_agreement(run, measured: "Measured | MeasuredBefore") -> None:
    """Inside the transaction that marks `run` done."""
    if isinstance(measured, MeasuredBefore):
        copy_agreement(measured.run_id, run)
        return
    alpha = measured.agreement.alpha
    RunAgreement.objects.create(
        run=run,
        alpha=alpha.value,
        alpha_low=alpha.low,
        alpha_high=alpha.high,
        rounds=alpha.rounds,
        units=alpha.units,
        judgments=alpha.judgments,
        seconds=measured.seconds,
    )
    AnnotatorAgreement.objects.bulk_create(annotator_rows(run, measured), batch_size=1000)


def copy_agreement(source_run_id: int, run) -> None:
    source = RunAgreement.objects.get(run_id=source_run_id)
    source.pk, source.run = None, run
    source.save(force_insert=True)
    rows = AnnotatorAgreement.objects.filter(run_id=source_run_id).order_by()
    copies = []
    for row in rows.iterator(chunk_size=CHUNK_ROWS):
        row.pk, row.run = None, run
        copies.append(row)
    AnnotatorAgreement.objects.bulk_create(copies, batch_size=1000)


def annotator_rows(run, measured: Measured):
    done, compared = measured.done, measured.agreement.annotators
    where = dict(zip(compared.annotator.tolist(), range(len(compared.annotator)), strict=True))
    for i, annotator in enumerate(done.annotator.tolist()):
        j = where.get(annotator)
        yield AnnotatorAgreement(
            run=run,
            annotator_id=annotator,
            hits=int(done.hits[i]),
            flagged=int(done.flagged[i]),
            median_seconds=finite_or_none(float(done.median_seconds[i])),
            correlation=None if j is None else finite_or_none(float(compared.correlation[j])),
            shared_units=0 if j is None else int(compared.shared_units[j]),
            excluded=annotator in measured.excluded,
        )


def finite_or_none(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None
