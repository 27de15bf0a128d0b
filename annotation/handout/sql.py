"""The statements of the hand-out and the submission that run while a criterion's row is
locked, as SQL through the cursor instead of querysets.

Why: building and compiling a queryset costs about 1 ms of CPU per statement (a one-table
SELECT: 1.05 ms through the ORM, 0.14 ms through the cursor, on this project's reference
machine), and these statements run under the lock that serialises every hand-out of a
criterion. On a busy machine each millisecond of CPU under the lock is a millisecond that
every annotator waiting for a HIT waits too (benchmarks/bench_load.py; docs/scale.md).

The SQL is standard and runs on PostgreSQL and SQLite alike (INSERT ... RETURNING needs
SQLite 3.35). Inserts take model instances, so defaults and the conversion of values to the
database stay the model's own (`insert`).
"""

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import Model
from django.db.models.expressions import Col
from django.utils import timezone

from annotation.models import (
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    Hit,
    HitOutput,
    Item,
    ItemLoad,
    ItemSystemLoad,
    Output,
    System,
    SystemLoad,
)

# The tables, named by their models (Django's default names need no quoting), so that the
# SQL follows the models.
ANNOTATOR = Annotator._meta.db_table
ASSIGNMENT = Assignment._meta.db_table
CAMPAIGN = Campaign._meta.db_table
CRITERION = CampaignCriterion._meta.db_table
HIT = Hit._meta.db_table
ITEM = Item._meta.db_table
ITEM_LOAD = ItemLoad._meta.db_table
ITEM_SYSTEM_LOAD = ItemSystemLoad._meta.db_table
OUTPUT = Output._meta.db_table
SLOT = HitOutput._meta.db_table
SYSTEM = System._meta.db_table
SYSTEM_LOAD = SystemLoad._meta.db_table

Statement = tuple[str, Sequence]


def rows(sql: str, params: Sequence = ()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description is not None else []


def run_together(statements: Sequence[Statement]) -> list[tuple]:
    """Run writes that neither read nor change each other's rows; the last one's rows. On
    PostgreSQL they go in one round trip, the earlier ones as data-modifying WITH clauses:
    each runs exactly once and to completion, all on the snapshot the statement started
    with, so none may depend on another's write, and of two that change one row only one
    takes effect. Elsewhere they run one by one, in order."""
    if connection.vendor != "postgresql":
        for sql, params in statements[:-1]:
            execute(sql, params)
        return rows(*statements[-1])
    *earlier, (last, last_params) = statements
    if not earlier:
        return rows(last, last_params)
    clauses = ", ".join(f"w{n} AS ({sql})" for n, (sql, _) in enumerate(earlier))
    params = [value for _, values in earlier for value in values]
    return rows(f"WITH {clauses} {last}", [*params, *last_params])


def execute(sql: str, params: Sequence = ()) -> int:
    """Run a statement; the number of rows it changed."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def placeholders(n: int) -> str:
    return ", ".join(["%s"] * n)


def columns(model: type[Model], alias: str) -> str:
    """The select list of a model's concrete columns, in the order `made` reads them."""
    return _shape(model, connection.vendor).columns.replace("{alias}", alias)


def made(model: type[Model], values: Sequence):
    """An instance of `model` from the values of its `columns`, converted as the ORM
    converts them (datetimes on SQLite, JSON) and marked as loaded from the database."""
    shape = _shape(model, connection.vendor)
    values = list(values)
    for i, column, converters in shape.converted:
        for convert in converters:
            values[i] = convert(values[i], column, connection)
    return model.from_db(connection.alias, shape.attnames, values)


def made_from_row(row: Sequence, *models: type[Model]) -> list:
    """The instances of `models` from a row that selected their `columns` in that order,
    then the row's values after them."""
    instances, start = [], 0
    for model in models:
        end = start + len(_fields(model))
        instances.append(made(model, row[start:end]))
        start = end
    return [*instances, *row[start:]]


def _fields(model: type[Model]) -> Sequence:
    return model._meta.concrete_fields


@dataclass(frozen=True)
class Shape:
    """What `columns` and `made` need of a model, worked out once per database vendor."""

    columns: str  # with "{alias}" where the table's alias goes
    attnames: list[str]
    converted: list[tuple[int, Col, list]]  # (position, column, converters) where any


@functools.cache
def _shape(model: type[Model], vendor: str) -> Shape:
    quote = connection.ops.quote_name
    fields = _fields(model)
    converted = []
    for i, field in enumerate(fields):
        column = field.get_col(model._meta.db_table)
        converters = connection.ops.get_db_converters(column)
        converters += column.get_db_converters(connection)
        if converters:
            converted.append((i, column, converters))
    return Shape(
        ", ".join("{alias}." + quote(f.column) for f in fields),
        [f.attname for f in fields],
        converted,
    )


def insert(instances: Sequence[Model], also: Sequence[Statement] = ()) -> None:
    """Insert instances of one model in one statement and set their primary keys, as
    `bulk_create` would (defaults, auto_now_add and the database's own form of each value
    come from the model's fields), without compiling a query; with `also`, writes that
    go with it, in its round trip where the database allows (`run_together`)."""
    meta = instances[0]._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    values: list = []
    for instance in instances:
        for field in fields:
            value = field.pre_save(instance, add=True)
            values.append(field.get_db_prep_save(value, connection))
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    row = f"({placeholders(len(fields))})"
    sql = (
        f"INSERT INTO {connection.ops.quote_name(meta.db_table)} ({columns}) "
        f"VALUES {', '.join([row] * len(instances))} RETURNING {meta.pk.column}"
    )
    # Rows come back in the order inserted on both databases for a plain VALUES list.
    for instance, (pk,) in zip(instances, run_together([*also, (sql, values)]), strict=True):
        instance.pk = pk
        instance._state.adding = False
        instance._state.db = connection.alias


def analyze(*models: type[Model]) -> None:
    """Bring PostgreSQL's statistics of these tables up to date after a bulk write. Until
    autovacuum gets to them (a minute or more later), the planner believes them as small as
    they were: a ranking's read of E2E's 15,000 imported judgments, planned for a handful of
    rows, scanned every slot once per HIT and took minutes instead of a second."""
    if connection.vendor != "postgresql":
        return  # SQLite plans without such statistics
    tables = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in models)
    execute(f"ANALYZE {tables}")


# The pages ---------------------------------------------------------------------------------


def criterion_by_slug(
    slug: str, name: str, lock: bool = False, annotators: Sequence[int] = ()
) -> tuple[CampaignCriterion | None, int | None]:
    """The criterion `name` of the campaign `slug` (not a draft), with its campaign; with
    `lock`, its row lock too (not its campaign's), inside the caller's transaction; and of
    `annotators`, the one who belongs to its campaign (None if none): one query."""
    remembered = "NULL"  # no subquery to plan and run when no annotator is asked about
    if annotators:
        remembered = (
            f"(SELECT a.id FROM {ANNOTATOR} a"
            f" WHERE a.id IN ({placeholders(len(annotators))}) AND a.campaign_id = p.id LIMIT 1)"
        )
    lock_sql = ""
    if lock and connection.features.has_select_for_update_of:
        lock_sql = " FOR UPDATE OF c"
    elif lock and connection.features.has_select_for_update:
        lock_sql = " FOR UPDATE"
    found = rows(
        f"SELECT {columns(CampaignCriterion, 'c')}, {columns(Campaign, 'p')}, {remembered} "
        f"FROM {CRITERION} c JOIN {CAMPAIGN} p ON p.id = c.campaign_id "
        f"WHERE p.slug = %s AND c.name = %s AND p.status <> %s{lock_sql}",
        [*annotators, slug, name, Campaign.Status.DRAFT],
    )
    if not found:
        return None, None
    criterion, campaign, annotator_id = made_from_row(found[0], CampaignCriterion, Campaign)
    criterion.campaign = campaign
    return criterion, annotator_id


def annotators_assignment(
    pk: int, annotators: Sequence[int], slug: str, criterion: str
) -> tuple[Assignment | None, bool, bool]:
    """The assignment `pk` if it is one of `annotators`' in the criterion named `criterion`
    of the campaign `slug` (not a draft), with its annotator, HIT and item; and the
    criterion's `coverage_required` and `shows_input`: one query (assignment_and_criterion)."""
    assignment, found = assignment_and_criterion(pk, annotators, slug, criterion)
    return assignment, bool(found and found.coverage_required), bool(found and found.shows_input)


def assignment_and_criterion(
    pk: int, annotators: Sequence[int], slug: str, criterion: str
) -> tuple[Assignment | None, CampaignCriterion | None]:
    """The assignment `pk` if it is one of `annotators`' in the criterion `criterion` of
    the campaign `slug` (not a draft), with its annotator, HIT and item; and the criterion
    (unlocked, without its campaign), whose form a posted page needs before the criterion's
    row is locked: one query."""
    if not annotators:
        return None, None
    found = rows(
        f"SELECT {columns(Assignment, 'a')}, {columns(Annotator, 'w')}, {columns(Hit, 'h')},"
        f" {columns(Item, 'i')}, {columns(CampaignCriterion, 'c')} "
        f"FROM {ASSIGNMENT} a"
        f" JOIN {ANNOTATOR} w ON w.id = a.annotator_id"
        f" JOIN {HIT} h ON h.id = a.hit_id"
        f" JOIN {ITEM} i ON i.id = h.item_id"
        f" JOIN {CRITERION} c ON c.id = h.criterion_id"
        f" JOIN {CAMPAIGN} p ON p.id = h.campaign_id "
        f"WHERE a.id = %s AND a.annotator_id IN ({placeholders(len(annotators))})"
        " AND p.slug = %s AND p.status <> %s AND c.name = %s",
        [pk, *annotators, slug, Campaign.Status.DRAFT, criterion],
    )
    if not found:
        return None, None
    assignment, annotator, hit, item, campaign_criterion = made_from_row(
        found[0], Assignment, Annotator, Hit, Item, CampaignCriterion
    )
    hit.item = item
    assignment.hit, assignment.annotator = hit, annotator
    return assignment, campaign_criterion


def annotator(pk: int, campaign: Campaign) -> Annotator:
    """The annotator `pk`, who belongs to `campaign`, with it."""
    select = f"SELECT {columns(Annotator, 'w')} FROM {ANNOTATOR} w WHERE w.id = %s"
    (row,) = rows(select, [pk])
    found = made(Annotator, row)
    if found.campaign_id != campaign.pk:
        raise ValueError(f"annotator {pk} is not one of campaign {campaign.pk}'s")
    found.campaign = campaign
    return found


def hit_slots(hit: Hit) -> list[HitOutput]:
    """The HIT's slots in order, each with its output."""
    slots = []
    for row in rows(
        f"SELECT {columns(HitOutput, 's')}, {columns(Output, 'o')} "
        f"FROM {SLOT} s JOIN {OUTPUT} o ON o.id = s.output_id "
        "WHERE s.hit_id = %s ORDER BY s.position",
        [hit.pk],
    ):
        slot, output = made_from_row(row, HitOutput, Output)
        slot.output, slot.hit = output, hit
        slots.append(slot)
    return slots


def submitted_count(annotator_id: int, criterion_id: int) -> int:
    """The annotator's submitted HITs in the criterion."""
    ((count,),) = rows(
        f"SELECT COUNT(*) FROM {ASSIGNMENT} a JOIN {HIT} h ON h.id = a.hit_id "
        "WHERE a.annotator_id = %s AND a.status = %s AND h.criterion_id = %s",
        [annotator_id, Assignment.Status.SUBMITTED, criterion_id],
    )
    return count


# The annotator's side --------------------------------------------------------------------


def annotator_assignments(annotator_id: int, criterion_id: int) -> list[tuple[int, str, int, bool]]:
    """(assignment, status, item, whether its HIT carries an attention check: a slot with a
    degraded copy, models.original_q) for each of the annotator's assignments in the
    criterion, through the annotator's index."""
    return [
        (pk, status, item_id, bool(check))
        for pk, status, item_id, check in rows(
            "SELECT a.id, a.status, h.item_id, EXISTS ("
            f"  SELECT 1 FROM {SLOT} s WHERE s.hit_id = a.hit_id"
            "  AND s.degraded_text <> '') "
            f"FROM {ASSIGNMENT} a JOIN {HIT} h ON h.id = a.hit_id "
            "WHERE a.annotator_id = %s AND h.criterion_id = %s ORDER BY a.id",
            [annotator_id, criterion_id],
        )
    ]


def mark_submitted(assignment: Assignment, key: str, flag: str) -> bool:
    """Mark the assignment submitted at its `submitted_at`, if its status and its
    annotator's exclusion and Prolific check are still those read into it (a
    compare-and-set); whether it was."""
    return bool(
        execute(
            f"UPDATE {ASSIGNMENT} SET status = %s, submitted_at = %s,"
            " submission_key = %s, flag = %s "
            "WHERE id = %s AND status = %s AND annotator_id IN ("
            f"  SELECT id FROM {ANNOTATOR}"
            "  WHERE id = %s AND is_excluded = %s AND prolific_check = %s)",
            [
                Assignment.Status.SUBMITTED,
                connection.ops.adapt_datetimefield_value(assignment.submitted_at),
                key,
                flag,
                assignment.pk,
                assignment.status,
                assignment.annotator_id,
                assignment.annotator.is_excluded,
                assignment.annotator.prolific_check,
            ],
        )
    )


def judgments_change(criterion: CampaignCriterion, estimates=None) -> Statement:
    """CampaignCriterion's queryset method `record_judgments_change` for one criterion, with
    its new online estimates if given, as one statement (the submission's last). A
    submission only adds judgments: `judgments_rewrites` stays."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    learnt, params = "", []
    if estimates is not None:
        field = CampaignCriterion._meta.get_field("estimates")
        learnt, params = ", estimates = %s", [field.get_db_prep_save(estimates, connection)]
    return (
        f"UPDATE {CRITERION} SET judgments_version = judgments_version + 1,"
        f" judgments_changed_at = %s{learnt} WHERE id = %s",
        [now, *params, criterion.pk],
    )


# The criterion's pool --------------------------------------------------------------------


def lowest_items(criterion_id: int, seen: Iterable[int], limit: int) -> list[tuple[int, int, int]]:
    """(item, live, free) of the eligible items not `seen` with the fewest live
    assignments, through the (criterion, eligible, live) index."""
    seen = list(seen)
    unseen = f" AND item_id NOT IN ({placeholders(len(seen))})" if seen else ""
    return rows(
        f"SELECT item_id, live, free FROM {ITEM_LOAD} "
        f"WHERE criterion_id = %s AND eligible = %s{unseen} ORDER BY live LIMIT %s",
        [criterion_id, True, *seen, limit],
    )


def item_outputs(criterion_id: int, item_id: int) -> list[tuple[int, int, str, int, int]]:
    """(output, system, text, system's live slots, system's live slots on the item) for the
    item's outputs of active systems."""
    return rows(
        "SELECT o.id, o.system_id, o.text,"
        f" COALESCE((SELECT l.live FROM {SYSTEM_LOAD} l"
        "   WHERE l.criterion_id = %s AND l.system_id = o.system_id), 0),"
        f" COALESCE((SELECT l.live FROM {ITEM_SYSTEM_LOAD} l"
        "   WHERE l.criterion_id = %s AND l.item_id = o.item_id AND l.system_id = o.system_id), 0) "
        f"FROM {OUTPUT} o JOIN {SYSTEM} s ON s.id = o.system_id "
        "WHERE o.item_id = %s AND s.is_active = %s ORDER BY o.system_id",
        [criterion_id, criterion_id, item_id, True],
    )


def load_shifts(
    criterion_id: int, item_id: int, systems: Sequence[int], live: int, free: int
) -> list[Statement]:
    """The writes for one HIT's assignment that became live (`live` +1: given out) or
    stopped being live (-1): its item's live assignments and its systems' live slots, in the
    criterion and on the item, move by `live`; the item's HITs free to give out again by
    `free`."""
    which = placeholders(len(systems))
    return [
        (
            f"UPDATE {ITEM_LOAD} SET live = live + %s, free = free + %s "
            "WHERE criterion_id = %s AND item_id = %s",
            [live, free, criterion_id, item_id],
        ),
        (
            f"UPDATE {SYSTEM_LOAD} SET live = live + %s "
            f"WHERE criterion_id = %s AND system_id IN ({which})",
            [live, criterion_id, *systems],
        ),
        (
            f"UPDATE {ITEM_SYSTEM_LOAD} SET live = live + %s "
            f"WHERE criterion_id = %s AND item_id = %s AND system_id IN ({which})",
            [live, criterion_id, item_id, *systems],
        ),
    ]


def open_hits(
    criterion: CampaignCriterion, *, annotator_id: int | None = None, expired_by=None
) -> dict[int, tuple[int, list[int]]]:
    """Open assignments in the criterion: the annotator's, or else those past their timeout
    at `expired_by`. For each, its HIT's item and the systems of the slots that show an
    output as it is (not an attention check's copy)."""
    if annotator_id is not None:  # an annotator belongs to one campaign: no need to name it
        which, params = "a.annotator_id = %s", [annotator_id]
    else:
        expired_by = connection.ops.adapt_datetimefield_value(expired_by)
        which, params = "a.expires_at < %s", [expired_by]
    found: dict[int, tuple[int, list[int]]] = {}
    for pk, item_id, system_id in rows(
        f"SELECT a.id, h.item_id, o.system_id FROM {ASSIGNMENT} a"
        f" JOIN {HIT} h ON h.id = a.hit_id"
        f" JOIN {SLOT} s ON s.hit_id = h.id"
        f" JOIN {OUTPUT} o ON o.id = s.output_id "
        f"WHERE {which} AND a.status = %s AND h.criterion_id = %s"
        " AND s.degraded_text = '' ORDER BY a.id, s.position",
        [*params, Assignment.Status.ASSIGNED, criterion.pk],
    ):
        found.setdefault(pk, (item_id, []))[1].append(system_id)
    return found


def expire(assignment_ids: Sequence[int]) -> Statement:
    which = placeholders(len(assignment_ids))
    return (
        f"UPDATE {ASSIGNMENT} SET status = %s WHERE id IN ({which})",
        [Assignment.Status.EXPIRED, *assignment_ids],
    )


def slot_systems(hit_id: int) -> list[int]:
    """The systems of a HIT's slots that show an output as it is."""
    return [
        system
        for (system,) in rows(
            f"SELECT o.system_id FROM {SLOT} s"
            f" JOIN {OUTPUT} o ON o.id = s.output_id "
            "WHERE s.hit_id = %s AND s.degraded_text = '' ORDER BY s.position",
            [hit_id],
        )
    ]
