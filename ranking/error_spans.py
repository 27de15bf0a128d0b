"""Errors per 100 words by severity per system, for a criterion whose judgments carry error
spans (annotation.models.ErrorSpan; the form says so: `marks_error_spans`).

Read at page time in ONE aggregate query, a row per output judged (its system, its text,
the counted judgments of it and the minor and major spans marked in them): the page's cost
is that query, whatever the number of judgments; the words are counted in Python
(ranking.engine.esa.count_words, whitespace tokens) once per output and weighed by its
judgments, as ranking.engine.esa.error_rates says.
"""

from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Q

from annotation.judging import form_of
from annotation.models import CampaignCriterion, ErrorSpan, Judgment

from .engine.esa import count_words, error_rates


@dataclass(frozen=True)
class ErrorRateRow:
    system: str
    judgments: int
    words: int
    minor: int
    major: int
    minor_per_100_words: float
    major_per_100_words: float
    errors_per_100_words: float


def error_rate_rows(criterion: CampaignCriterion) -> list[ErrorRateRow] | None:
    """Per system, fewest errors per 100 words first (then by name); None for a criterion
    whose form marks no spans."""
    if not form_of(criterion).marks_error_spans:
        return None
    minor, major = ErrorSpan.Severity.MINOR, ErrorSpan.Severity.MAJOR
    outputs = (
        Judgment.objects.counted()
        .for_criterion(criterion)
        .values("slot__output_id", "slot__output__system__name", "slot__output__text")
        .annotate(
            judged=Count("id", distinct=True),
            minor=Count("error_spans", filter=Q(error_spans__severity=minor)),
            major=Count("error_spans", filter=Q(error_spans__severity=major)),
        )
        .order_by()
    )
    names: dict[str, int] = {}
    system, words, n_minor, n_major, judged = [], [], [], [], []
    for row in outputs:
        system.append(names.setdefault(row["slot__output__system__name"], len(names)))
        words.append(count_words(row["slot__output__text"]) * row["judged"])
        n_minor.append(row["minor"])
        n_major.append(row["major"])
        judged.append(row["judged"])
    if not names:
        return []
    rates = error_rates(
        np.array(system),
        np.array(words),
        np.array(n_minor),
        np.array(n_major),
        np.zeros(len(system)),
        len(names),
    )
    judgments = np.bincount(np.array(system), np.array(judged), minlength=len(names))
    rows = [
        ErrorRateRow(
            system=name,
            judgments=int(judgments[i]),
            words=int(rates.words[i]),
            minor=int(rates.minor[i]),
            major=int(rates.major[i]),
            minor_per_100_words=float(rates.minor_per_100_words[i]),
            major_per_100_words=float(rates.major_per_100_words[i]),
            errors_per_100_words=float(rates.errors_per_100_words[i]),
        )
        for name, i in names.items()
    ]
    rows.sort(key=lambda r: (np.nan_to_num(r.errors_per_100_words, nan=np.inf), r.system))
    return rows
