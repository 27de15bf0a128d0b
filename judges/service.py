"""Judge jobs: an automatic judge scores every output of its criterion's campaign that it
has not scored yet, batch by batch, on the generation queue (claims and heartbeats as
generation jobs have them); then the judge against the crowd and the fused ranking beside
the humans-only one, stored on the judge for its page.

Scores are written batch by batch, so a worker killed half-way loses only the batch in
flight; a rerun scores only what is still unscored, and the unique constraint on
(judge, output) keeps two workers from writing one score twice.
"""

import time
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.utils import timezone

from annotation.models import Judgment, Output
from annotation.secret_env import secret_env_policy
from generation.backends import TypedInput
from generation.endpoints import endpoint_policy
from jobs.claims import Heartbeat, work_as_holder
from ranking.engine.fusion import fused_ranking, humans_only_ranking
from ranking.engine.judge_agreement import JudgeAgreement, judge_agreement
from ranking.service import request_judged_rankings

from .models import Judge, JudgeJob, JudgeScore
from .scorers import Judge as Scorer
from .scorers import JudgeInput, make_judge

MAX_OUTPUT_ERRORS = 50
AGREEMENT_SEED = 29  # the agreement bootstrap's: the same scores give the same intervals
_scorers: dict[tuple, Scorer] = {}


def unscored_outputs(judge: Judge):
    """The outputs of the judge's campaign it has not scored."""
    outputs = Output.objects.filter(item__campaign_id=judge.criterion.campaign_id)
    return outputs.exclude(judge_scores__judge=judge).order_by("id")


def scorer_for(judge: Judge) -> Scorer:
    """One scorer per worker process and configuration."""
    secret_env, endpoints = secret_env_policy(), endpoint_policy()
    key = (judge.pk, judge.kind, repr(sorted(judge.settings.items())), secret_env, endpoints)
    if key not in _scorers:
        _scorers[key] = make_judge(judge.kind, judge.settings, secret_env, endpoints)
    return _scorers[key]


def request_judging(judge: Judge) -> JudgeJob:
    """Queue a job once this transaction commits, or give back the judge's job that is
    queued or running already: one job at a time per judge."""
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=judge.pk).order_by("pk").first()
        waiting = judge.jobs.unfinished().first()
        if waiting is not None:
            return waiting
        job = JudgeJob.objects.create(judge=judge, outputs_total=unscored_outputs(judge).count())
        job.send_to_worker()
        return job


def run_judge_job(job: JudgeJob) -> bool:
    """Score every unscored output; False if another worker has the job."""
    token = job.claim(outputs_done=0, outputs_failed=0, output_errors=[])
    if token is None:
        return False
    job.outputs_done = job.outputs_failed = 0
    job.output_errors = []
    started = time.perf_counter()

    def seconds() -> dict:
        return {"seconds": time.perf_counter() - started}

    def work(heartbeat: Heartbeat) -> None:
        score_unscored(job, token, heartbeat)
        refresh_summary(job.judge)
        job.finish_as_holder(token, JudgeJob.Status.DONE, error="", **seconds())
        # The fused view ranks the new scores, though the judgments are the same.
        request_judged_rankings(job.judge.criterion)

    return work_as_holder(job, token, work, failure_fields=seconds)


def score_unscored(job: JudgeJob, token: str, heartbeat: Heartbeat) -> None:
    judge = job.judge
    todo = list(
        unscored_outputs(judge).values_list(
            "id", "text", "item__input_kind", "item__input_data", "item__references"
        )
    )
    job.update_as_holder(token, outputs_total=len(todo))
    job.outputs_total = len(todo)
    scorer = scorer_for(judge)
    size = max(judge.batch_size, 1)
    for start in range(0, len(todo), size):
        batch = todo[start : start + size]
        results = scorer.score(
            [
                JudgeInput(TypedInput(kind, data), list(references or []), text)
                for _, text, kind, data, references in batch
            ]
        )
        heartbeat.check()
        scores, errors = [], []
        for (output_id, *_), result in zip(batch, results, strict=True):
            if result.score is None:
                errors.append([output_id, result.error])
            else:
                scores.append(JudgeScore(judge=judge, output_id=output_id, score=result.score))
        with transaction.atomic():
            JudgeScore.objects.bulk_create(scores, ignore_conflicts=True)
            job.outputs_done += len(batch)
            job.outputs_failed += len(errors)
            job.output_errors = (job.output_errors + errors)[:MAX_OUTPUT_ERRORS]
            job.update_as_holder(
                token,
                outputs_done=job.outputs_done,
                outputs_failed=job.outputs_failed,
                output_errors=job.output_errors,
            )


# The judge against the crowd --------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """The judge's scored outputs (numbered 0..M-1: their ids, systems numbered 0..S-1 and
    the judge's scores) and the crowd's counted judgments of them."""

    output_ids: list[int]
    system_names: list[str]
    output_system: np.ndarray  # int64[M]
    judge: np.ndarray  # float64[M]
    judged_output: np.ndarray  # int64[J]
    annotator: np.ndarray  # int64[J]
    score: np.ndarray  # float64[J]
    output_item: np.ndarray  # int64[M]: item ids, the agreement bootstrap's units
    assignment: np.ndarray  # int64[J]: one annotator's take of one HIT


def evidence(judge: Judge) -> Evidence:
    scored = list(
        judge.scores.order_by("output_id").values_list(
            "output_id", "output__system__name", "score", "output__item_id"
        )
    )
    index = {row[0]: i for i, row in enumerate(scored)}
    names = sorted({row[1] for row in scored})
    number = {name: i for i, name in enumerate(names)}
    # The judgments of the judge's criterion (Judgment.criterion), as the rankings count them.
    judged = (
        Judgment.objects.counted()
        .for_criterion(judge.criterion)
        .filter(
            slot__output_id__in=list(index),
            slot__degraded_text="",  # an attention check's slot shows a degraded text
        )
        .values_list("slot__output_id", "assignment__annotator_id", "score", "assignment_id")
    )
    rows = list(judged)
    return Evidence(
        output_ids=[row[0] for row in scored],
        system_names=names,
        output_system=np.array([number[row[1]] for row in scored], dtype=np.int64),
        judge=np.array([row[2] for row in scored], dtype=np.float64),
        judged_output=np.array([index[row[0]] for row in rows], dtype=np.int64),
        annotator=np.array([row[1] for row in rows], dtype=np.int64),
        score=np.array([row[2] for row in rows], dtype=np.float64),
        output_item=np.array([row[3] for row in scored], dtype=np.int64),
        assignment=np.array([row[3] for row in rows], dtype=np.int64),
    )


def agreement(found: Evidence) -> dict | None:
    """The judge against the crowd's counted judgments of its criterion
    (ranking.engine.judge_agreement): Spearman and Kendall between the systems' means;
    Pearson and Spearman between the judge's score and each output's mean human z-score
    (per-annotator z-scores, as the WMT view), and Pearson within systems; the share of the
    human-judged pairs the judge orders as the human did; the bias per system on the z
    scale. Each with its 95% item-bootstrap interval under "intervals" ([lower, upper], or
    None). None until three outputs of two systems have both."""
    found_agreement = judge_agreement(
        found.output_system,
        found.output_item,
        found.judge,
        found.judged_output,
        found.annotator,
        found.score,
        found.assignment,
        len(found.system_names),
        np.random.default_rng(AGREEMENT_SEED),
    )
    if found_agreement is None:
        return None
    figures = found_agreement.figures
    summary: dict = {
        "outputs": found_agreement.outputs,
        "systems": found_agreement.systems,
        "items": found_agreement.items,
        "pairs": found_agreement.pairs,
        "resamples": found_agreement.resamples,
        "confidence": found_agreement.confidence,
    }
    summary.update({name: _rounded(figure.value) for name, figure in figures.items()})
    summary["intervals"] = {
        name: None if figure.lower is None else [_rounded(figure.lower), _rounded(figure.upper)]
        for name, figure in figures.items()
    }
    summary["bias"] = _bias_rows(found, found_agreement)
    return summary


def _bias_rows(found: Evidence, found_agreement: JudgeAgreement) -> list[dict]:
    """Per system with outputs both scored, in the systems' order: the judge's and the
    humans' means on the z scale, the bias (judge minus humans) and its interval."""
    rows = []
    for s in np.flatnonzero(found_agreement.labelled > 0):
        rows.append(
            {
                "system": found.system_names[s],
                "outputs": int(found_agreement.labelled[s]),
                "judge": _rounded(found_agreement.judge_mean[s]),
                "humans": _rounded(found_agreement.human_mean[s]),
                "bias": _rounded(found_agreement.bias[s]),
                "lower": _rounded(found_agreement.bias_lower[s]),
                "upper": _rounded(found_agreement.bias_upper[s]),
            }
        )
    return rows


def _rounded(value) -> float | None:
    return None if value is None or not np.isfinite(value) else round(float(value), 4)


def fused_rows(found: Evidence) -> list[dict]:
    """Per system, best first by the fused estimate: the fused and the humans-only means
    with their 95% intervals, rank ranges and clusters (ranking.engine.fusion), and the
    human judgments the fused estimate is worth. The judge's scores are standardised over
    its outputs first (no human score used) to sit on the z-scores' scale."""
    spread = found.judge.std()
    f = (found.judge - found.judge.mean()) / (spread if spread > 0 else 1.0)
    args = (found.judged_output, found.annotator, found.score, len(found.system_names))
    fused = fused_ranking(found.output_system, f, *args)
    humans = humans_only_ranking(found.output_system, *args)
    rows = []
    for s in fused.order:
        rows.append(
            {
                "system": found.system_names[s],
                "fused": _view(fused, s),
                "humans": _view(humans, s),
                "judgments": int(fused.judgments[s]),
                "effective_judgments": round(float(fused.effective_judgments[s]), 1),
                "lambda": round(float(fused.weight[s]), 4),
            }
        )
    return rows


def _view(ranking, s: int) -> dict:
    return {
        "mean": round(float(ranking.estimate[s]), 4),
        "lower": round(float(ranking.lower[s]), 4),
        "upper": round(float(ranking.upper[s]), 4),
        "rank_lo": int(ranking.rank_lo[s]),
        "rank_hi": int(ranking.rank_hi[s]),
        "cluster": int(ranking.cluster[s]),
    }


def refresh_summary(judge: Judge) -> dict:
    """Compute the judge's agreement with the crowd and the fused ranking beside the
    humans-only one, and store them on the judge (pages read them; no request computes
    them)."""
    found = evidence(judge)
    summary = {"agreement": agreement(found), "ranking": fused_rows(found)}
    Judge.objects.filter(pk=judge.pk).update(summary=summary, summary_at=timezone.now())
    judge.summary = summary
    return summary
