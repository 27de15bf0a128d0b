"""Organisers' pages on a large campaign: the time of each admin list and change page and
of the results page.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench \
        .venv/bin/python benchmarks/bench_admin.py --hits 20000 [--baseline]

It creates a database of its own (test_<name>), builds a campaign of HITS judged HITs of
five systems in bulk (HITS x 5 judgments), and drops the database at the end. --baseline
also times the campaign list's counting as it was (one join of items, systems and HITs):
past a few thousand HITs PostgreSQL spills that join to temporary files by the gigabyte,
so keep it to E2E's size (about 3,000 HITs).
"""

import argparse
import os
import statistics
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
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from annotation.admin import count_of  # noqa: E402
from annotation.models import Campaign, Hit, Item, System  # noqa: E402
from ranking.models import RankingRun  # noqa: E402
from ranking.service import execute_run  # noqa: E402
from tests.annotation.test_admin_costs import pages  # noqa: E402
from tests.client import HttpsClient  # noqa: E402
from tests.factories import make_bulk_judged_campaign  # noqa: E402


def timed(call, repeat: int = 5) -> float:
    """Median seconds of `call` over `repeat` runs, after one to warm caches."""
    call()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def joined_counts() -> list:
    """The campaign list's counting before: one join of items, systems and HITs."""
    rows = Campaign.objects.annotate(
        n_items=Count("items", distinct=True),
        n_systems=Count("systems", distinct=True),
        n_hits=Count("hits", distinct=True),
    )
    return list(rows.values_list("n_items", "n_systems", "n_hits"))


def subquery_counts() -> list:
    rows = Campaign.objects.annotate(
        n_items=count_of(Item.objects.all(), "campaign"),
        n_systems=count_of(System.objects.all(), "campaign"),
        n_hits=count_of(Hit.objects.all(), "campaign"),
    )
    return list(rows.values_list("n_items", "n_systems", "n_hits"))


def run(hits: int, baseline: bool) -> None:
    started = time.perf_counter()
    campaign = make_bulk_judged_campaign(hits, systems=5)
    execute_run(
        RankingRun.objects.create(
            campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
        )
    )
    built = time.perf_counter() - started
    print(f"campaign of {hits:,} HITs, {hits * 5:,} judgments built in {built:.1f} s")
    client = HttpsClient()
    client.force_login(get_user_model().objects.create_superuser("bench", "b@x.org", "x"))
    print(f"{'page':60} {'ms':>8}", flush=True)
    for url in pages(campaign):
        assert client.get(url).status_code == 200, url
        seconds = timed(lambda url=url: client.get(url))
        print(f"{url:60} {seconds * 1000:8.1f}", flush=True)
    new = timed(subquery_counts, 3)
    if baseline:
        old = timed(joined_counts, 1)
        assert joined_counts() == subquery_counts()
        print(f"campaign list counts: joined {old * 1000:.1f} ms, subqueries {new * 1000:.1f} ms")
    else:
        print(f"campaign list counts: subqueries {new * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=20_000)
    parser.add_argument("--baseline", action="store_true", help="time the old join too")
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args.hits, args.baseline)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
