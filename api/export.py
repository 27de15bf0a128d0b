"""The judgments export, a page at a time: JSON Lines in the exporters' columns, in the
order of the judgments' ids, from the id after `after` (keyset pagination: each page costs
one indexed query, whatever its position)."""

import json
from collections.abc import Iterator

from ninja import Field, Schema

from annotation.datafiles.exporters import COLUMNS, JUDGMENT_FIELDS, iso_time, with_derived
from annotation.models import Assignment, Campaign, Judgment

MAX_PAGE = 5000


class PageQuery(Schema):
    after: int = Field(0, ge=0, description="the X-Next-Cursor of the page before; 0 first")
    limit: int = Field(1000, ge=1, le=MAX_PAGE)
    criterion: str | None = None


def judgment_page(campaign: Campaign, page: PageQuery) -> tuple[Iterator[str], int | None]:
    """The page's lines, and the cursor of the next page (None after the last)."""
    judgments = Judgment.objects.filter(
        assignment__hit__campaign=campaign,
        assignment__status=Assignment.Status.SUBMITTED,
        id__gt=page.after,
    )
    if page.criterion:
        judgments = judgments.filter(criterion__name=page.criterion)
    rows = list(judgments.order_by("id").values_list("id", *JUDGMENT_FIELDS.values())[: page.limit])
    next_after = rows[-1][0] if len(rows) == page.limit else None
    return (line(values[0], values[1:]) for values in rows), next_after


def line(judgment_id: int, values: tuple) -> str:
    record = with_derived(dict(zip(JUDGMENT_FIELDS, values, strict=True)))
    record["started_at"] = iso_time(record["started_at"])
    record["submitted_at"] = iso_time(record["submitted_at"])
    shown = {"judgment": judgment_id, **{column: record[column] for column in COLUMNS}}
    return json.dumps(shown, ensure_ascii=False) + "\n"
