"""Attention checks, on the database: each annotator's verdict (nlgdata.attention) from the
HITs they submitted that carried a check (assignment.py makes them).

The verdict is brought up to date off the submission's path, so that a submission costs
the same with or without a check: by the periodic sweep (annotation.tasks), for the
annotators who submitted a checked HIT since the last sweep, and on the completion page,
for the one who is finishing, whose completion code carries it (identity.completion_code).

An annotator who fails is left out of rankings at once, as an organiser's exclusion does
(identity.set_excluded), and gets the failed completion code. That happens once: an
organiser who takes them back in is not overruled later, and the verdict stays on record
(`failed_attention_at`) for the organiser to see.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.utils import timezone

from nlgdata.attention import AttentionVerdict, attention_verdict, verdict_of

from .identity import set_excluded
from .judging import form_named
from .judging.base import CheckRow
from .models import (
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    HitOutput,
    Judgment,
)

# A sweep looks back this far before the last one began: a submission in a transaction that
# was still open when the last sweep read is seen by this one. Annotators whose verdict
# already counts all their checks are not recomputed, so the overlap costs one query.
OVERLAP = timedelta(seconds=60)


def record_attention_verdict(annotator: Annotator) -> AttentionVerdict:
    """Bring the annotator's verdict up to date with all their submitted checks and store
    it; leave them out of rankings the first time it fails. Reads their own checked HITs
    only (at most their HIT limits), whatever the campaign's size; tests and writes only
    when a check came since the stored verdict (or it newly fails)."""
    originals, degraded = check_scores(annotator.pk)
    threshold = annotator.campaign.attention_p_threshold
    if len(degraded) == annotator.attention_checks:
        # No check since the stored verdict, whose p stands: judgments never change. (The
        # threshold may have, so the verdict is drawn again.)
        verdict = verdict_of(annotator.attention_checks, annotator.attention_p, threshold)
        if not verdict.failed or annotator.failed_attention_at is not None:
            return verdict
    else:
        verdict = attention_verdict(originals, degraded, threshold)
    mine = Annotator.objects.filter(pk=annotator.pk)
    with transaction.atomic():
        mine.update(attention_checks=verdict.checks, attention_p=verdict.p)
        annotator.attention_checks, annotator.attention_p = verdict.checks, verdict.p
        if verdict.failed:
            now = timezone.now()
            if mine.filter(failed_attention_at__isnull=True).update(failed_attention_at=now):
                annotator.failed_attention_at = now
                set_excluded(annotator, True)
    return verdict


def check_scores(annotator_id: int) -> tuple[list[float], list[float]]:
    """The scores of each check's original and of its degraded copy, check by check, from
    the annotator's submitted HITs that carried one, paired by each criterion's judgment
    form (JudgmentForm.attention). It reads the judgments of the annotator's own HITs (at
    most the HIT limit's), through the annotator's index: asked for the checks first, the
    planner would read every check of the campaign. Of a page that asks further criteria
    (DA's), the HIT's own criterion's judgments only: one check, one pair."""
    rows = Judgment.objects.filter(
        assignment__annotator_id=annotator_id,
        assignment__status=Assignment.Status.SUBMITTED,
        criterion_id=F("assignment__hit__criterion_id"),
    ).values_list(
        "criterion__form", "assignment_id", "slot__output_id", "slot__degraded_text", "score"
    )
    by_form: dict[str, list[CheckRow]] = {}
    for form, *row in rows:
        by_form.setdefault(form, []).append(tuple(row))
    pairs = [
        pair for form, found in by_form.items() for pair in form_named(form).attention.pairs(found)
    ]
    return [o for o, _ in pairs], [d for _, d in pairs]


def record_due_verdicts(now=None) -> int:
    """The sweep: the verdicts of annotators who submitted a checked HIT since the last
    sweep (of each criterion); the number recomputed. What it reads grows with the new
    submissions, not with the campaign."""
    now = now or timezone.now()
    recomputed = 0
    for criterion in CampaignCriterion.objects.filter(campaign__attention_check_every__gt=0):
        since = criterion.attention_checked_at
        changed = criterion.judgments_changed_at
        if changed is None or since is not None and changed < since - OVERLAP:
            continue  # nothing submitted since the last sweep
        for annotator in annotators_checked_since(criterion, since and since - OVERLAP):
            record_attention_verdict(annotator)
            recomputed += 1
        CampaignCriterion.objects.filter(pk=criterion.pk).update(attention_checked_at=now)
    return recomputed


def annotators_checked_since(criterion: CampaignCriterion, since) -> list[Annotator]:
    """The annotators who submitted a checked HIT in the criterion since `since` (None:
    ever) and whose verdict does not count all their checks yet."""
    submitted_checks = Assignment.objects.filter(
        Exists(HitOutput.objects.attention_checks().filter(hit=OuterRef("hit"))),
        status=Assignment.Status.SUBMITTED,
    )
    recent = submitted_checks.for_criterion(criterion)
    if since is not None:
        recent = recent.filter(submitted_at__gte=since)
    checks_done = (
        submitted_checks.filter(annotator=OuterRef("pk"))
        .order_by()
        .values("annotator")
        .annotate(n=Count("pk"))
        .values("n")
    )
    annotators = (
        Annotator.objects.filter(pk__in=recent.values("annotator_id"))
        .annotate(checks_done=Subquery(checks_done))
        .exclude(checks_done=F("attention_checks"))
    )
    return list(annotators.select_related("campaign"))


@dataclass(frozen=True)
class AttentionSummary:
    every: int  # one HIT in this many carries a check (0: none)
    threshold: float
    checked: int  # annotators with at least one check submitted
    failed: int
    left_out: int  # of those, still left out of rankings (an organiser may take them back)


def attention_summary(campaign: Campaign) -> AttentionSummary:
    """For the results page: one aggregate over the campaign's annotators."""
    counts = campaign.annotators.aggregate(
        checked=Count("pk", filter=Q(attention_checks__gt=0)),
        failed=Count("pk", filter=Q(failed_attention_at__isnull=False)),
        left_out=Count("pk", filter=Q(failed_attention_at__isnull=False, is_excluded=True)),
    )
    return AttentionSummary(
        campaign.attention_check_every, campaign.attention_p_threshold, **counts
    )
