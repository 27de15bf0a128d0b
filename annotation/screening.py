"""The comprehension check after the instructions (optional per criterion).

Before their first HIT an annotator scores a worked pair, a sentence and a degraded copy of
it (its words dropped and shuffled), against the standard's 100, as in a HIT. Scoring the
copy below the sentence passes; two attempts that do not pass screen them out of the
criterion: no HITs, and the failed completion code (identity.completion_code).
"""

from dataclasses import dataclass

from django.db import transaction

from .models import NATURALNESS, QUALITY, CampaignCriterion, Screening


@dataclass(frozen=True)
class WorkedPair:
    sentence: str
    degraded: str  # the sentence's words dropped and shuffled


# The input is the instructions page's worked example (views.EXAMPLE_INPUT); the pair is
# not among that example's sentences, so an annotator applies the rule rather than copies.
WORKED_PAIRS = {
    QUALITY: WorkedPair(
        sentence="Near Burger King by the riverside, The Eagle is a coffee shop serving French "
        "food at moderate prices.",
        degraded="The Eagle riverside coffee near near French the shop prices King.",
    ),
    NATURALNESS: WorkedPair(
        sentence="The Eagle is a French coffee shop by the river, close to Burger King.",
        degraded="Coffee shop The the Eagle river French close by is Burger.",
    ),
}


def worked_pair(criterion: CampaignCriterion) -> WorkedPair:
    """Quality's pair where the criterion shows the input, naturalness's where it does not."""
    return WORKED_PAIRS[QUALITY if criterion.shows_input else NATURALNESS]


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


def record_attempt(
    annotator_id: int, criterion: CampaignCriterion, sentence_score: int, degraded_score: int
) -> Screening:
    """Count one attempt (none once passed or screened out: a repeated POST changes
    nothing); it passes when the degraded copy scores below the sentence."""
    with transaction.atomic():
        screening, _ = Screening.objects.select_for_update().get_or_create(
            annotator_id=annotator_id, criterion=criterion
        )
        if screening.passed or screening.screened_out:
            return screening
        screening.attempts += 1
        screening.passed = degraded_score < sentence_score
        screening.save(update_fields=["attempts", "passed"])
        return screening
