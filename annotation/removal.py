"""Deleting what judgments rest on, and whole campaigns.

Deleting an annotator, an assignment, a HIT, a judgment, an item, an output or a system
takes judgments (or the assignments the hand-out balances on) with it. Such a deletion
goes through `delete_counted_rows`: under the locks of the criteria concerned, in one
transaction, it records a change of their judgments (so the sweep queues new rankings,
closed campaigns included) and of their pool (so the next hand-out counts the kept loads
again from the rows, as after an import).

A campaign is deleted by `delete_campaign`, table by table with one statement each: the
ORM's cascade reads every row of every table into memory first, which for E2E's campaign
(100,000 judgments) took longer than a request may; this way it takes about 5 s on
PostgreSQL, the three statements of 100,000 rows (judgments, slots, outputs) most of it.
"""

from typing import cast

from django.db import models, transaction
from django.db.models import QuerySet

from .handout.loads import lock_criteria
from .models import (
    Assignment,
    Campaign,
    CampaignCriterion,
    Hit,
    HitOutput,
    Item,
    ItemLoad,
    ItemSystemLoad,
    Judgment,
    Output,
    Screening,
    SystemLoad,
)


def delete_counted_rows(rows: QuerySet, to_campaign: str) -> int:
    """Delete `rows` (of any model whose deletion may take judgments or assignments with
    it; `to_campaign` is the path from it to its campaign) and record the change in their
    campaigns' criteria. The number of rows deleted, cascades included."""
    with transaction.atomic():
        campaigns = set(rows.values_list(to_campaign, flat=True))
        criteria = CampaignCriterion.objects.filter(campaign__in=campaigns)
        lock_criteria(criteria)
        deleted, _ = rows.delete()
        criteria.record_pool_change(recount=True)
        criteria.record_judgments_change()
    return deleted


# The rows of a campaign, leaves first, each with its path to the campaign: deleting them
# in this order leaves no row pointing to a deleted one.
CAMPAIGN_ROWS: list[tuple[type[models.Model], str]] = [
    (Judgment, "assignment__hit__campaign"),
    (Screening, "annotator__campaign"),
    (ItemSystemLoad, "criterion__campaign"),
    (ItemLoad, "criterion__campaign"),
    (SystemLoad, "criterion__campaign"),
    (HitOutput, "hit__campaign"),
    (Assignment, "hit__campaign"),
    (Hit, "campaign"),
    (Output, "item__campaign"),
    (Item, "campaign"),
]


def delete_campaign(campaign: Campaign) -> None:
    """Delete the campaign and everything of it, the big tables one statement each."""
    with transaction.atomic():
        deleted: set[type[models.Model]] = set()
        for model, path in CAMPAIGN_ROWS:
            bulk_delete(model._default_manager.filter(**{path: campaign}), deleted)
            deleted.add(model)
        # The rest is small (systems, annotators, criteria, other apps' runs): the ORM's
        # cascade deletes it, with whatever rows other apps keep on them.
        campaign.delete()


def campaign_rows(campaign: Campaign) -> dict[type[models.Model], int]:
    """How many rows of each kind of the campaign's own deleting it deletes, one count per
    kind (the rows of those rows in other apps, a ranking run's results, not counted)."""
    paths = dict(CAMPAIGN_ROWS)
    for relation in Campaign._meta.related_objects:
        paths.setdefault(cast(type[models.Model], relation.related_model), relation.field.name)
    return {
        model: model._default_manager.filter(**{path: campaign}).count()
        for model, path in paths.items()
    }


def bulk_delete(rows: QuerySet, deleted: set[type[models.Model]]) -> None:
    """Delete `rows` in one statement when only rows already deleted can point to them;
    through the ORM's cascade otherwise (a model that another app added a relation to)."""
    model = rows.model
    pointing = {relation.related_model for relation in model._meta.related_objects}
    if pointing <= deleted:
        # QuerySet.delete() would read every row first, for cascades there are none of.
        rows._raw_delete(rows.db)
    else:
        rows.delete()
