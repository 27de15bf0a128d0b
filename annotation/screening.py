"""The comprehension check after the instructions (optional per criterion).

Before their first HIT an annotator judges a worked pair, a sentence and a degraded copy of
it (its words dropped and shuffled), as the criterion's form asks in a HIT (RankME: against
the standard's 100). Putting the copy below the sentence passes; two attempts that do not
pass screen them out of the criterion: no HITs, and the failed completion code
(identity.completion_code).
"""

from django.db import transaction

from .judging import form_of
from .judging.base import WorkedPair
from .judging.rankme import WITH_INPUT, WITHOUT_INPUT
from .models import NATURALNESS, QUALITY, CampaignCriterion, Screening

# RankME's worked pairs by the criterion they were written for (each form has its own:
# JudgmentForm.comprehension.worked_pair).
WORKED_PAIRS = {QUALITY: WITH_INPUT, NATURALNESS: WITHOUT_INPUT}


def worked_pair(criterion: CampaignCriterion) -> WorkedPair:
    return form_of(criterion).comprehension.worked_pair(criterion)


def sentence_first(annotator_id: int) -> bool:
    """Which of the pair is shown as A: half the annotators see the degraded copy first, so
    that "score A higher" is not the answer."""
    return annotator_id % 2 == 0


def screening_state(annotator_id: int, criterion: CampaignCriterion) -> Screening | None:
    return Screening.objects.filter(annotator_id=annotator_id, criterion=criterion).first()


def has_passed(annotator_id: int, criterion: CampaignCriterion) -> bool:
    """True where the criterion has no check, or the annotator passed it."""
    if not criterion.comprehension_check:
        return True
    screening = screening_state(annotator_id, criterion)
    return screening is not None and screening.passed


def record_attempt(annotator_id: int, criterion: CampaignCriterion, passed: bool) -> Screening:
    """Count one attempt (none once passed or screened out: a repeated POST changes
    nothing); whether it `passed` is the form's rule (RankME: the degraded copy scored
    below the sentence)."""
    with transaction.atomic():
        screening, _ = Screening.objects.select_for_update().get_or_create(
            annotator_id=annotator_id, criterion=criterion
        )
        if screening.passed or screening.screened_out:
            return screening
        screening.attempts += 1
        screening.passed = passed
        screening.save(update_fields=["attempts", "passed"])
        return screening
