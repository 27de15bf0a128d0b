"""The statements of a HIT page, its submission and the next hand-out: CPU per call as the
ORM built them (the baseline, the querysets as they were) and through annotation/handout/sql.py,
side by side in one process, on the same rows.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench \
        .venv/bin/python benchmarks/bench_statements.py [--repeat 300]

It creates a database of its own (test_<name>), builds an E2E-sized campaign (630 items,
21 systems, 630 judged HITs of all 21: 13,230 judgments), gives an annotator a HIT, times
each statement both ways (the writes inside a transaction rolled back after each call),
checks that both ways give the same answer, and drops the database at the end. CPU is this
process's only: the database's work is the same both ways.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import django

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
os.environ.setdefault(
    "SECRET_KEY", "benchmark-only-key-not-secret-0123456789-abcdefghijklmnopqrstuvwxyz"
)
django.setup()

# Models and the project's modules load only once Django is set up.
from django.db import connection, transaction  # noqa: E402
from django.db.models import Exists, F, OuterRef, Subquery  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from annotation.handout import sql  # noqa: E402
from annotation.handout.assignment import next_assignment  # noqa: E402
from annotation.models import (  # noqa: E402
    QUALITY,
    Assignment,
    Campaign,
    CampaignCriterion,
    Hit,
    HitOutput,
    ItemLoad,
    ItemSystemLoad,
    Output,
    SystemLoad,
)
from tests.factories import make_annotator, make_bulk_judged_campaign  # noqa: E402


def cpu_ms(call, repeat: int) -> float:
    """CPU milliseconds per call, after a few calls to warm caches."""
    for _ in range(5):
        call()
    started = time.process_time()
    for _ in range(repeat):
        call()
    return (time.process_time() - started) * 1000 / repeat


def rolled_back(call):
    def once():
        with transaction.atomic():
            result = call()
            transaction.set_rollback(True)
        return result

    return once


def statements(criterion: CampaignCriterion, assignment: Assignment):
    """(name, ORM as it was, sql.py) for each statement, both returning comparable values."""
    campaign, annotator_id, hit = criterion.campaign, assignment.annotator_id, assignment.hit
    item_id, name = hit.item_id, criterion.name
    systems = sql.slot_systems(hit.pk)

    def orm_criterion():
        found = (
            CampaignCriterion.objects.select_related("campaign")
            .exclude(campaign__status=Campaign.Status.DRAFT)
            .get(campaign__slug=campaign.slug, name=name)
        )
        return found.pk, found.campaign.slug

    def sql_criterion():
        found, _ = sql.criterion_by_slug(campaign.slug, name)
        return found.pk, found.campaign.slug

    def orm_assignment():
        found = Assignment.objects.select_related("annotator", "hit__item").get(
            pk=assignment.pk,
            annotator_id=annotator_id,
            hit__campaign=campaign.pk,
            hit__criterion__name=name,
        )
        return found.pk, found.annotator.pk, found.hit.item.pk

    def sql_assignment():
        found, _, _ = sql.annotators_assignment(assignment.pk, [annotator_id], campaign.slug, name)
        return found.pk, found.annotator.pk, found.hit.item.pk

    def orm_slots():
        return [
            (s.pk, s.output.text) for s in hit.slots.select_related("output").order_by("position")
        ]

    def sql_slots():
        return [(s.pk, s.output.text) for s in sql.hit_slots(hit)]

    def orm_submitted():
        mine = Assignment.objects.filter(hit__criterion=criterion)
        return mine.submitted().filter(annotator_id=annotator_id).count()

    def sql_submitted():
        return sql.submitted_count(annotator_id, criterion.pk)

    def orm_mine():
        mine = Assignment.objects.filter(annotator_id=annotator_id, hit__criterion=criterion)
        checks = HitOutput.objects.attention_checks().filter(hit=OuterRef("hit"))
        return list(mine.values_list("pk", "status", "hit__item_id", Exists(checks)))

    def sql_mine():
        return sql.annotator_assignments(annotator_id, criterion.pk)

    def orm_items():
        rows = ItemLoad.objects.filter(criterion=criterion, eligible=True).exclude(item_id=item_id)
        return list(rows.order_by("live", "item_id").values_list("item_id", "live", "free")[:64])

    def sql_items():
        return sorted(sql.lowest_items(criterion.pk, [item_id], 64), key=lambda r: (r[1], r[0]))

    def orm_outputs():
        of_system = {"criterion": criterion, "system_id": OuterRef("system_id")}
        on_item = ItemSystemLoad.objects.filter(item_id=item_id, **of_system)
        outputs = Output.objects.filter(item_id=item_id, system__is_active=True).annotate(
            load=Subquery(SystemLoad.objects.filter(**of_system).values("live")[:1]),
            load_on_item=Subquery(on_item.values("live")[:1]),
        )
        return [(o.pk, o.load or 0, o.load_on_item or 0) for o in outputs.order_by("system_id")]

    def sql_outputs():
        return [
            (o, load, on_item) for o, _, _, load, on_item in sql.item_outputs(criterion.pk, item_id)
        ]

    def orm_loads():
        ItemLoad.objects.filter(criterion=criterion, item_id=item_id).update(
            live=F("live") + 1, free=F("free") - 0
        )
        SystemLoad.objects.filter(criterion=criterion, system_id__in=systems).update(
            live=F("live") + 1
        )
        pairs = ItemSystemLoad.objects.filter(criterion=criterion, item_id=item_id)
        return pairs.filter(system_id__in=systems).update(live=F("live") + 1)

    def sql_loads():
        sql.run_together(sql.load_shifts(criterion.pk, item_id, systems, live=+1, free=0))
        return len(systems)

    def orm_insert():
        made = Hit.objects.create(campaign_id=campaign.pk, criterion=criterion, item_id=item_id)
        slots = [
            HitOutput(hit=made, output_id=s.output_id, position=s.position) for s in hit.slots.all()
        ]
        HitOutput.objects.bulk_create(slots)
        Assignment.objects.create(hit=made, annotator_id=annotator_id)
        return len(slots)

    slot_rows = list(hit.slots.all())

    def sql_insert():
        made = Hit(campaign_id=campaign.pk, criterion=criterion, item_id=item_id)
        sql.insert([made])
        slots = [HitOutput(hit=made, output_id=s.output_id, position=s.position) for s in slot_rows]
        sql.insert(slots)
        sql.insert([Assignment(hit=made, annotator_id=annotator_id)])
        return len(slots)

    return [
        ("criterion and campaign, by slug", orm_criterion, sql_criterion),
        ("assignment, annotator, HIT, item", orm_assignment, sql_assignment),
        ("a HIT's slots and outputs", orm_slots, sql_slots),
        ("HITs submitted (page number)", orm_submitted, sql_submitted),
        ("the annotator's assignments", orm_mine, sql_mine),
        ("least loaded items", orm_items, sql_items),
        ("an item's outputs and loads", orm_outputs, sql_outputs),
        ("load updates (3; one on PostgreSQL)", rolled_back(orm_loads), rolled_back(sql_loads)),
        ("HIT, slots, assignment inserts", rolled_back(orm_insert), rolled_back(sql_insert)),
    ]


def run(repeat: int) -> None:
    campaign = make_bulk_judged_campaign(630, systems=21, items=630, outputs_per_hit=5)
    Campaign.objects.filter(pk=campaign.pk).update(max_hits_per_annotator=100)
    criterion = CampaignCriterion.objects.select_related("campaign").get(
        campaign=campaign, name=QUALITY
    )
    assignment = next_assignment(make_annotator(campaign), criterion)
    print(f"{connection.vendor}, E2E-sized campaign; CPU ms per call, {repeat} calls")
    print(f"{'statement':36} {'ORM':>7} {'sql.py':>7} {'ratio':>6}")
    total_orm = total_sql = 0.0
    for name, orm, raw in statements(criterion, assignment):
        assert orm() == raw(), name
        orm_ms, sql_ms = cpu_ms(orm, repeat), cpu_ms(raw, repeat)
        total_orm, total_sql = total_orm + orm_ms, total_sql + sql_ms
        print(f"{name:36} {orm_ms:7.3f} {sql_ms:7.3f} {orm_ms / sql_ms:5.1f}x", flush=True)
    print(f"{'all of them':36} {total_orm:7.3f} {total_sql:7.3f} {total_orm / total_sql:5.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args.repeat)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
