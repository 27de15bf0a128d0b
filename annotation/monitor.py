"""The live campaign monitor: for each criterion, HITs done against the target, annotators
at work now, how long a HIT takes, how many are flagged or by annotators who failed the
attention checks, what it costs so far and at the
target, and when the target will be reached at the last hour's rate.

Every figure is of the HITs done on the platform's pages. Imported ratings' HITs
(Assignment.objects.imported()) are counted apart: they were done elsewhere, their times
are another platform's, they cost nothing here and say nothing of the current rate.

What a refresh reads is bounded by the window, not by the campaign: the last hour's count,
the newest SAMPLE submissions for the median time and the flagged share, the open
assignments, and 24 hourly counts grouped in the database. Only "done" counts the
criterion's submitted HITs, through the (status, submitted_at) index.

Scores off the scale (a form's `scale`, annotation/judging/: RankME's above 1,000, a
slider's outside 0-100) are counted per annotator in one aggregate query over all the
campaign's judgments, imported ones included: slips such as E2E's typed 111,111, stored as
given, which the organiser may want to look at.
"""

import functools
import operator
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.db.models import Count, Max, Q
from django.db.models.functions import TruncHour
from django.utils import timezone

from .judging import REGISTERED, form_of
from .models import (
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    Judgment,
    Output,
)

SAMPLE = 200  # newest submissions for the median time and the flagged share
HOURS = 24  # of the chart


@dataclass(frozen=True)
class Progress:
    criterion: CampaignCriterion
    done: int  # on the platform's pages
    imported: int  # HITs of imported ratings, in none of the other figures
    target: int
    active_now: int
    last_hour: int
    median_seconds: float | None
    flagged_share: float | None
    failed_share: float | None  # of annotators who failed the attention checks
    cost: Decimal
    cost_at_target: Decimal
    finish_at: datetime | None
    per_hour: list[tuple[datetime, int]]  # the last HOURS hours, oldest first

    @property
    def share_done(self) -> float | None:
        return min(1.0, self.done / self.target) if self.target else None

    @property
    def last_day(self) -> int:
        """HITs done in the hours the chart shows."""
        return sum(n for _, n in self.per_hour)


def campaign_progress(campaign: Campaign, now: datetime) -> list[Progress]:
    """The progress of each criterion handed out on pages of its own (not those of
    `asked_on_other_pages`, whose progress is their page's criterion's)."""
    criteria = campaign.criteria.order_by("name")
    return [criterion_progress(c, now) for c in criteria if form_of(c).has_own_hits(c)]


def empty_outputs(campaign: Campaign) -> int:
    """The campaign's outputs without text (the system produced none): the page opened
    says how many annotators see as such; the refreshed part does not count them again."""
    return Output.objects.empty().filter(item__campaign=campaign).count()


def asked_on_other_pages(campaign: Campaign) -> list[CampaignCriterion]:
    """The criteria asked on another criterion's pages (a DA page's further ones): they
    have no HITs of their own to count."""
    criteria = campaign.criteria.order_by("name")
    return [c for c in criteria if not form_of(c).has_own_hits(c)]


def criterion_progress(criterion: CampaignCriterion, now: datetime) -> Progress:
    campaign = criterion.campaign
    mine = Assignment.objects.for_criterion(criterion)
    submitted = mine.submitted().done_here()
    done = submitted.count()
    last_hour = submitted.filter(submitted_at__gt=now - timedelta(hours=1)).count()
    newest = list(
        submitted.order_by("-submitted_at").values_list(
            "started_at", "submitted_at", "flag", "annotator__failed_attention_at"
        )[:SAMPLE]
    )
    seconds = [(end - start).total_seconds() for start, end, *_ in newest if end]
    target = campaign.target_hits
    return Progress(
        criterion=criterion,
        done=done,
        imported=mine.submitted().imported().count(),
        target=target,
        active_now=mine.filter(status=Assignment.Status.ASSIGNED, expires_at__gt=now).count(),
        last_hour=last_hour,
        median_seconds=statistics.median(seconds) if seconds else None,
        flagged_share=share(newest, lambda row: bool(row[2])),
        failed_share=share(newest, lambda row: row[3] is not None),
        cost=campaign.pay_per_hit * done,
        cost_at_target=campaign.pay_per_hit * max(target, done),
        finish_at=finish_time(done, target, last_hour, now),
        per_hour=hourly_counts(submitted, now),
    )


def share(rows: list, holds) -> float | None:
    return sum(1 for row in rows if holds(row)) / len(rows) if rows else None


def finish_time(done: int, target: int, last_hour: int, now: datetime) -> datetime | None:
    """When the target is reached at the last hour's rate; None without a target or a
    rate (and `now` once reached)."""
    if not target:
        return None
    if done >= target:
        return now
    if not last_hour:
        return None
    return now + timedelta(hours=(target - done) / last_hour)


def hourly_counts(submitted, now: datetime) -> list[tuple[datetime, int]]:
    """Submitted HITs per hour over the last HOURS hours, counted in the database."""
    # Whole hours of the site's time zone, as TruncHour gives them.
    end = timezone.localtime(now).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    start = end - timedelta(hours=HOURS)
    rows = (
        submitted.filter(submitted_at__gte=start)
        .annotate(hour=TruncHour("submitted_at"))
        .values("hour")
        .annotate(n=Count("id"))
        .values_list("hour", "n")
    )
    counts = dict(rows)
    hours = [start + timedelta(hours=h) for h in range(HOURS)]
    return [(hour, counts.get(hour, 0)) for hour in hours]


@dataclass(frozen=True)
class OffScale:
    """An annotator's scores off their criteria's scales."""

    annotator_id: int
    annotator: str  # as the admin names them (Annotator.__str__)
    scores: int
    highest: float


def off_scale_q() -> Q | None:
    """Judgments whose score is off their criterion's form's scale; None if no form has
    bounds. Built from the registered forms, so the database reads each criterion's form."""
    parts = []
    for form in REGISTERED:
        outside = form.scale.outside()
        if outside is not None:
            parts.append(Q(criterion__form=form.name) & outside)
    return functools.reduce(operator.or_, parts) if parts else None


def off_scale_by_annotator(campaign: Campaign) -> list[OffScale]:
    """The annotators who gave any score off the scale, most first, with how many and their
    highest: one query, grouped in the database."""
    off = off_scale_q()
    if off is None:
        return []
    person = ("id", "name", "source", "external_id")
    rows = (
        Judgment.objects.filter(off, criterion__campaign=campaign)
        .values_list(*(f"assignment__annotator__{field}" for field in person))
        .annotate(scores=Count("id"), highest=Max("score"))
        .order_by("-scores", "assignment__annotator_id")
    )
    return [
        # The admin's name of the annotator (Annotator.__str__), from the row's columns.
        OffScale(pk, str(Annotator(name=name, source=source, external_id=external)), n, top)
        for pk, name, source, external, n, top in rows
    ]


def scale_rules(criteria: list[CampaignCriterion]) -> list[tuple[str, str]]:
    """(the criteria's labels, what is off their scale) per rule, for the criteria whose
    form bounds its scores."""
    labels: dict[str, list[str]] = {}
    for criterion in criteria:
        if rule := form_of(criterion).scale.wording:
            labels.setdefault(rule, []).append(criterion.label)
    return [(", ".join(names), rule) for rule, names in labels.items()]


@dataclass(frozen=True)
class HourBar:
    x: int
    y: int
    height: int
    count: int
    hour: datetime


CHART_HEIGHT, BAR_WIDTH, BAR_GAP = 100, 14, 4


def hour_bars(per_hour: list[tuple[datetime, int]]) -> list[HourBar]:
    """The chart's bars, scaled to the busiest hour."""
    most = max((n for _, n in per_hour), default=0) or 1
    bars = []
    for i, (hour, n) in enumerate(per_hour):
        height = round(CHART_HEIGHT * n / most)
        bars.append(HourBar(i * (BAR_WIDTH + BAR_GAP), CHART_HEIGHT - height, height, n, hour))
    return bars
