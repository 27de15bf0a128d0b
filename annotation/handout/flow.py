"""What the annotator's pages do, one function each, for annotation/views.py: the views
parse the request and render; the reads of one query (sql.py), the criterion's lock and
the transactions are here.

Each lookup finds the criterion or assignment by the campaign's slug and the annotators
the browser's session remembers (identity.remembered_ids), so that a page reads them in one
query; None means there is no such thing for this visitor (the view's 404).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from annotation.attention import record_attention_verdict
from annotation.judging import form_of
from annotation.models import Assignment, CampaignCriterion
from annotation.screening import has_passed

from . import sql
from .assignment import hand_back, hand_out
from .loads import lock_criteria
from .shown import Shown, shown_outputs
from .submission import Outcome, save_submission


def find_criterion(slug: str, criterion_name: str) -> CampaignCriterion | None:
    """The criterion of the campaign `slug` (not a draft), with its campaign."""
    criterion, _ = sql.criterion_by_slug(slug, criterion_name)
    return criterion


def own_assignment(
    pk: int, annotator_ids: Sequence[int], slug: str, criterion_name: str
) -> Assignment | None:
    """The assignment `pk` if it is one of `annotator_ids`' in the criterion, with its
    annotator, HIT and item."""
    assignment, _, _ = sql.annotators_assignment(pk, annotator_ids, slug, criterion_name)
    return assignment


@dataclass(frozen=True)
class Started:
    """Where the start button leads: the comprehension check first (`needs_check`), or
    the annotator's HIT, or none left for them (None)."""

    criterion: CampaignCriterion
    assignment: Assignment | None = None
    needs_check: bool = False


def start(slug: str, criterion_name: str, annotator_ids: Sequence[int]) -> Started | None:
    """Hand out the annotator's first (or open) HIT under the criterion's lock, taken with
    the criterion's read; None when there is no such criterion or no annotator of its
    campaign among `annotator_ids`."""
    with transaction.atomic():
        criterion, annotator_id = sql.criterion_by_slug(
            slug, criterion_name, lock=True, annotators=annotator_ids
        )
        if criterion is None or annotator_id is None:
            return None
        if not form_of(criterion).has_own_hits(criterion):
            return Started(criterion)  # asked on another criterion's pages only
        if not has_passed(annotator_id, criterion):
            return Started(criterion, needs_check=True)
        return Started(criterion, hand_out(annotator_id, criterion))


@dataclass(frozen=True)
class PostedHit:
    """The assignment a HIT page posts to, with its sentences and its criterion (whose form
    and settings the page's form needs): read before the criterion's lock is taken
    (save_submission checks that what was read of the assignment still holds)."""

    assignment: Assignment
    shown: list[Shown]
    criterion: CampaignCriterion

    @property
    def submitted(self) -> bool:
        return self.assignment.status == Assignment.Status.SUBMITTED

    @property
    def coverage_required(self) -> bool:
        return self.criterion.coverage_required


def posted_hit(
    pk: int, annotator_ids: Sequence[int], slug: str, criterion_name: str
) -> PostedHit | None:
    assignment, criterion = sql.assignment_and_criterion(pk, annotator_ids, slug, criterion_name)
    if assignment is None or criterion is None:
        return None
    return PostedHit(assignment, shown_outputs(assignment.hit), criterion)


@dataclass(frozen=True)
class Submitted:
    """What became of a posted HIT (`outcome`), and the annotator's next HIT (None: no
    more work for them); `too_fast`: saved now, flagged as sent sooner than the campaign's
    minimum, and the annotator goes on (the next page warns them)."""

    criterion: CampaignCriterion
    outcome: Outcome
    following: Assignment | None
    too_fast: bool


def submit(
    posted: PostedHit, slug: str, criterion_name: str, answers: Any, key: str
) -> Submitted | None:
    """Save the answers and hand out the next HIT in one transaction, holding the
    criterion's lock (taken with the criterion's read) for the writes only; None when the
    criterion is no longer there. `answers`: the criterion's page form's (JudgmentForm).
    A page already submitted saves nothing: `key` tells whether this is the same
    submission again."""
    assignment = posted.assignment
    also_written = form_of(posted.criterion).also_writes(posted.criterion)
    with transaction.atomic():
        if also_written:
            # The page writes other criteria too: their locks and its own are taken in one
            # order (by id), as every caller that locks several does (loads.lock_criteria),
            # so that an exclusion locking them all cannot deadlock with this submission.
            ids = [posted.criterion.pk, *(other.pk for other in also_written)]
            lock_criteria(CampaignCriterion.objects.filter(pk__in=ids))
        criterion, _ = sql.criterion_by_slug(slug, criterion_name, lock=True)
        if criterion is None:
            return None
        outcome = save_submission(assignment, criterion, posted.shown, answers, key)
        # Excluded (by an organiser or the attention checks): their code is the failed one
        # whatever they do next, so no more work; the completion page says why.
        excluded = assignment.annotator.is_excluded
        following = None if excluded else hand_out(assignment.annotator_id, criterion)
    if following is None:  # their last HIT: the completion code comes next (see finish)
        record_attention_verdict(assignment.annotator)
    flagged = assignment.flag == Assignment.Flag.TOO_FAST
    too_fast = following is not None and outcome is Outcome.SAVED and flagged
    return Submitted(criterion, outcome, following, too_fast)


def finish(
    slug: str, criterion_name: str, annotator_ids: Sequence[int]
) -> CampaignCriterion | None:
    """The annotator stops: their open HIT goes back to the pool at once, under the
    criterion's lock. Returns the criterion; None when there is no such criterion or no
    annotator of its campaign among `annotator_ids`."""
    with transaction.atomic():
        criterion, annotator_id = sql.criterion_by_slug(
            slug, criterion_name, lock=True, annotators=annotator_ids
        )
        if criterion is None or annotator_id is None:
            return None
        hand_back(annotator_id, criterion)
    # The completion code carries the attention checks' verdict as of now, not of the last
    # sweep (tasks.py).
    record_attention_verdict(sql.annotator(annotator_id, criterion.campaign))
    return criterion
