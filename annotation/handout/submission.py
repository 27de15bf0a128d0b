"""Saving the annotator's judgments of a HIT.

A submission is saved once. The assignment is the unit of idempotency: a double click, a
retry after a lost response or the back button finds it submitted and writes nothing.
The page's `submission_key` tells a repeat of the same POST (silently fine) from a second,
different answer to a HIT already submitted (the first answer is kept). The criterion's
judgment form says what the answers' scores are and writes them (annotation/judging/).
"""

import enum
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.judging import form_of
from annotation.models import (
    Assignment,
    AssignmentQuerySet,
    CampaignCriterion,
    annotator_counts_q,
)

from . import sql
from .composition import estimates_after
from .loads import lock_criteria, shift_loads
from .shown import Shown


class Outcome(enum.Enum):
    SAVED = "saved"
    REPEATED = "repeated"  # the same submission again: nothing to do
    ALREADY_SUBMITTED = "already submitted"  # another answer came first and was kept
    TAKEN = "taken"  # timed out, and the HIT went to someone else meanwhile


def save_submission(
    assignment: Assignment,
    criterion: CampaignCriterion,
    shown: list[Shown],
    answers: Any,
    key: str,
) -> Outcome:
    """Save the answers as the assignment's judgments, once (flow.submit's work), inside a
    transaction that holds the criterion's lock; the criterion's judgment form says what
    its answers' scores are and writes them (annotation/judging/base.py). The assignment
    (with its annotator) may have been read before the lock was taken, so that the lock is
    held for the writes only: it is marked submitted only if its status and whether its
    annotator counts are still those read (every change to them takes the lock), else read
    again."""
    if assignment.status == Assignment.Status.SUBMITTED:
        same = key and key == assignment.submission_key
        return Outcome.REPEATED if same else Outcome.ALREADY_SUBMITTED
    was_expired = assignment.status == Assignment.Status.EXPIRED
    if was_expired and hit_is_taken(assignment):
        return Outcome.TAKEN
    if not finish_assignment(assignment, criterion, key):
        fresh = Assignment.objects.select_related("annotator", "hit").get(pk=assignment.pk)
        return save_submission(fresh, criterion, shown, answers, key)
    was_live = not was_expired  # open
    is_live = not assignment.flag and assignment.annotator.counts
    judging = form_of(criterion)
    scores = judging.slot_scores(shown, answers)
    writes = []
    # Flagged, or an expired HIT that nobody else took (its HIT, free since it expired, is
    # done after all): its loads move.
    if was_live != is_live or was_expired:
        live = (+1 if is_live else -1) if was_live != is_live else 0
        systems = [system for system, _ in scores]
        item_id = assignment.hit.item_id
        writes = sql.load_shifts(criterion.pk, item_id, systems, live, free=-int(was_expired))
    learnt = None
    if is_live:  # counted: the online estimate learns from it at once, in the same UPDATE
        criterion.estimates = learnt = estimates_after(criterion, scores)
    writes.append(sql.judgments_change(criterion, learnt))
    judging.save(assignment, criterion, shown, answers, writes)
    return Outcome.SAVED


def hit_is_taken(assignment: Assignment) -> bool:
    others = Assignment.objects.filter(hit_id=assignment.hit_id).exclude(pk=assignment.pk)
    return others.exclude(status=Assignment.Status.EXPIRED).exists()


def finish_assignment(assignment: Assignment, criterion: CampaignCriterion, key: str) -> bool:
    """Mark the assignment submitted, as a compare-and-set on what was read of it; False
    (and nothing written) if its status or its annotator's exclusion changed meanwhile."""
    assignment.submitted_at = timezone.now()  # the flag depends on it
    flag = quality_flag(assignment, criterion)
    if not sql.mark_submitted(assignment, key, flag):
        return False
    assignment.status, assignment.submission_key, assignment.flag = (
        Assignment.Status.SUBMITTED,
        key,
        flag,
    )
    return True


def quality_flag(assignment: Assignment, criterion: CampaignCriterion) -> str:
    """Too fast: submitted sooner than the campaign's minimum after the HIT was given out.
    Flagged HITs are kept, and shown to organisers, but rankings leave them out."""
    minimum, taken = criterion.campaign.min_seconds_per_hit, assignment.seconds_taken
    if minimum and taken is not None and taken < minimum:
        return Assignment.Flag.TOO_FAST
    return Assignment.Flag.NONE


def clear_flags(assignments: AssignmentQuerySet) -> int:
    """Count flagged HITs in rankings after all (an organiser's decision); the number of
    assignments unflagged."""
    flagged = assignments.flagged()
    # Their HITs' criteria, and the further ones their pages asked (DA's): each changes.
    criterion_ids = flagged.judged_criteria()
    if not criterion_ids:
        return 0
    criteria = CampaignCriterion.objects.filter(pk__in=criterion_ids)
    with transaction.atomic():
        for criterion in lock_criteria(criteria):
            # Submitted HITs of annotators still in count towards balance again.
            back = (
                flagged.for_criterion(criterion)
                .submitted()
                .filter(annotator_counts_q("annotator__"))
            )
            shift_loads(criterion, back, +1)
        criteria.record_judgments_change()
        return flagged.update(flag=Assignment.Flag.NONE)
