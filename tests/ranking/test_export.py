import csv
import io

import pytest

from annotation.models import System
from ranking.export import write_csv
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.factories import make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db


def test_write_csv_quotes_system_names_a_spreadsheet_would_run():
    campaign, systems, items = make_system_set(systems=3, items=4)
    # Slugs may start with '-': '-cmd' would be a formula in a spreadsheet.
    System.objects.filter(pk=systems[0].pk).update(name="-cmd")
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [50, 100, 300])
    run = RankingRun.objects.create(campaign=campaign, criterion="quality", repetitions=10, seed=1)
    execute_run(run)
    out = io.StringIO()
    write_csv(out, run)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["cluster", "system", "mu", "sigma", "rank_lo", "rank_hi", "comparisons"]
    names = {row[1] for row in rows[1:]}
    assert names == {"'-cmd", "sys2", "sys3"}
    mus = [row[2] for row in rows[1:]]
    assert any(mu.startswith("-") for mu in mus)  # numbers are left as they are
    assert all(len(mu.split(".")[1]) == 6 for mu in mus)
