"""The automatic judge's scores that the fused view ranks with the crowd's judgments.

Judges are an app that uses ranking, so ranking cannot import it: the function that reads
a criterion's fused judge is named by the setting RANKING_JUDGE_SCORES (a dotted path; the
judges app's `judges.fusion.scores_for_criterion`). Empty, no criterion has a fused judge
and the fused view never fits.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

from annotation.models import CampaignCriterion


@dataclass(frozen=True)
class FusedJudge:
    """A criterion's fused judge: its name, a token that changes whenever its scores do
    (another judge, scores added or removed), and how to read its scores."""

    name: str
    version: str
    # (output ids, their system ids, the scores), read only by a run that ranks them.
    read_scores: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]]
    # The judge against the crowd as its last job measured it, for the results page: rows
    # of (what the figure is, its value, the interval's ends, over how many, of what), and
    # when; the judge's own page and CSV say the rest.
    agreement: list[tuple] = field(default_factory=list)
    agreement_at: datetime | None = None
    judge_id: int | None = None


def fused_judge_of(criterion: CampaignCriterion) -> FusedJudge | None:
    """The criterion's fused judge, None without one (or without the setting)."""
    path = getattr(settings, "RANKING_JUDGE_SCORES", "")
    if not path:
        return None
    return import_string(path)(criterion)
