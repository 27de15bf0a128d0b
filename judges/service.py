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
from scipy.stats import pearsonr, spearmanr

from annotation.models import Judgment, Output
from annotation.secret_env import secret_env_policy
from generation.backends import TypedInput
from generation.endpoints import endpoint_policy
from jobs.claims import Heartbeat, work_as_holder
from ranking.engine.fusion import fused_ranking, humans_only_ranking, output_scores
from ranking.service import request_judged_rankings

from .models import Judge, JudgeJob, JudgeScore
from .scorers import Judge as Scorer
from .scorers import JudgeInput, make_judge

MAX_OUTPUT_ERRORS = 50
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


def evidence(judge: Judge) -> Evidence:
    scored = list(
        judge.scores.order_by("output_id").values_list("output_id", "output__system__name", "score")
    )
    index = {output: i for i, (output, _, _) in enumerate(scored)}
    names = sorted({name for _, name, _ in scored})
    number = {name: i for i, name in enumerate(names)}
    # The judgments of the judge's criterion (Judgment.criterion), as the rankings count them.
    judged = (
        Judgment.objects.counted()
        .for_criterion(judge.criterion)
        .filter(
            slot__output_id__in=list(index),
            slot__degraded_text="",  # an attention check's slot shows a degraded text
        )
        .values_list("slot__output_id", "assignment__annotator_id", "score")
    )
    rows = list(judged)
    return Evidence(
        output_ids=[output for output, _, _ in scored],
        system_names=names,
        output_system=np.array([number[name] for _, name, _ in scored], dtype=np.int64),
        judge=np.array([score for _, _, score in scored], dtype=np.float64),
        judged_output=np.array([index[o] for o, _, _ in rows], dtype=np.int64),
        annotator=np.array([a for _, a, _ in rows], dtype=np.int64),
        score=np.array([x for _, _, x in rows], dtype=np.float64),
    )


def agreement(found: Evidence) -> dict | None:
    """The judge against the crowd's counted judgments of its criterion: each output's mean
    human score (per-annotator z-scores, as the WMT view) against the judge's score, as
    Pearson over the outputs both scored and within systems (both centred per system: what
    a fused ranking gains from), and Spearman between the systems' mean scores. None
    until three outputs of two systems have both."""
    human, _ = output_scores(
        found.judged_output, found.annotator, found.score, len(found.output_ids), "z"
    )
    ok = ~np.isnan(human)
    f, human, system = found.judge[ok], human[ok], found.output_system[ok]
    n = len(found.system_names)
    if len(f) < 3 or len(np.unique(system)) < 2:
        return None
    counts = np.bincount(system, minlength=n)
    means_f = np.bincount(system, f, n) / np.maximum(counts, 1)
    means_h = np.bincount(system, human, n) / np.maximum(counts, 1)
    return {
        "outputs": int(len(f)),
        "systems": int((counts > 0).sum()),
        "output_pearson": _defined(pearsonr, f, human),
        "within_systems_pearson": _defined(pearsonr, f - means_f[system], human - means_h[system]),
        "system_spearman": _defined(spearmanr, means_f[counts > 0], means_h[counts > 0]),
    }


def _defined(test, x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(test(x, y)[0])


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
