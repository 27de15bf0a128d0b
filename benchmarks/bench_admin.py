"""Organisers' pages on a large campaign: time of each admin list and change page and of
the results page, and the campaign list's old counting query beside the new one.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench SECRET_KEY=x \
        .venv/bin/python benchmarks/bench_admin.py --hits 20000

It creates a database of its own (test_<name>), builds a campaign of HITS judged HITs of
five systems in bulk (HITS x 5 judgments), and drops the database at the end.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
os.environ.setdefault("SECRET_KEY", "bench-only")


def timed(call, repeat: int = 5) -> float:
    """Median seconds of `call` over `repeat` runs, after one to warm caches."""
    call()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def old_campaign_counts():
    """The campaign list's counting before: one join of items, systems and HITs."""
    from django.db.models import Count

    from annotation.models import Campaign

    rows = Campaign.objects.annotate(
        n_items=Count("items", distinct=True),
        n_systems=Count("systems", distinct=True),
        n_hits=Count("hits", distinct=True),
    )
    return list(rows.values_list("n_items", "n_systems", "n_hits"))


def new_campaign_counts():
    from annotation.admin import count_of
    from annotation.models import Campaign, Hit, Item, System

    rows = Campaign.objects.annotate(
        n_items=count_of(Item.objects.all(), "campaign"),
        n_systems=count_of(System.objects.all(), "campaign"),
        n_hits=count_of(Hit.objects.all(), "campaign"),
    )
    return list(rows.values_list("n_items", "n_systems", "n_hits"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=20_000)
    args = parser.parse_args()

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import setup_test_environment

    from tests.client import HttpsClient

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args.hits, HttpsClient, get_user_model())
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(hits: int, client_class, user_model) -> None:
    from ranking.models import RankingRun
    from ranking.service import execute_run
    from tests.annotation.test_admin_costs import pages
    from tests.factories import make_bulk_judged_campaign

    started = time.perf_counter()
    campaign = make_bulk_judged_campaign(hits, systems=5)
    execute_run(RankingRun.objects.create(campaign=campaign, criterion="quality", repetitions=10))
    print(
        f"campaign of {hits:,} HITs, {hits * 5:,} judgments built in "
        f"{time.perf_counter() - started:.1f} s"
    )
    client = client_class()
    client.force_login(user_model.objects.create_superuser("bench", "b@example.org", "x"))
    print(f"{'page':60} {'ms':>8}", flush=True)
    for url in pages(campaign):
        assert client.get(url).status_code == 200, url
        seconds = timed(lambda url=url: client.get(url))
        print(f"{url:60} {seconds * 1000:8.1f}", flush=True)
    old, new = timed(old_campaign_counts, 3), timed(new_campaign_counts, 3)
    assert old_campaign_counts() == new_campaign_counts()
    print(
        f"campaign list counts: joined {old * 1000:.1f} ms, subqueries {new * 1000:.1f} ms, "
        f"{old / new:.0f}x"
    )


if __name__ == "__main__":
    main()
