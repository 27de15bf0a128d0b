"""Test helpers for the hand-out (annotation/handout/): the app itself never calls these."""

from django.db import transaction

from annotation.handout.assignment import lock_criterion
from annotation.handout.shown import Answer, shown_outputs
from annotation.handout.submission import Outcome, save_submission
from annotation.models import Assignment, CampaignCriterion, ItemLoad, ItemSystemLoad, SystemLoad


def submit(
    assignment: Assignment,
    criterion: CampaignCriterion,
    answers: dict[int, Answer],
    key: str,
) -> Outcome:
    """Save the answers (one per `Shown.key`) as the assignment's judgments, once: the
    page's submission (flow.submit) without its hand-out of the next HIT."""
    with transaction.atomic():
        criterion = lock_criterion(criterion)
        assignment.refresh_from_db()
        return save_submission(assignment, criterion, shown_outputs(assignment.hit), answers, key)


def kept_loads(criterion: CampaignCriterion) -> dict[str, dict]:
    """The kept counts without zeros (for checks): item -> live, system -> live,
    (item, system) -> live, item -> free HITs."""
    items = ItemLoad.objects.filter(criterion=criterion)
    systems = SystemLoad.objects.filter(criterion=criterion, live__gt=0)
    pairs = ItemSystemLoad.objects.filter(criterion=criterion, live__gt=0)
    return {
        "items": dict(items.filter(live__gt=0).values_list("item_id", "live")),
        "systems": dict(systems.values_list("system_id", "live")),
        "pairs": {(i, s): n for i, s, n in pairs.values_list("item_id", "system_id", "live")},
        "free": dict(items.filter(free__gt=0).values_list("item_id", "free")),
    }
