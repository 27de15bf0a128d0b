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
    run = RankingRun.objects.create(
        campaign=campaign,
        criterion=campaign.criteria.get(name="quality"),
        protocol="e2e",
        repetitions=10,
        seed=1,
    )
    execute_run(run)
    out = io.StringIO()
    write_csv(out, run)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["cluster", "system", "mu", "mu_std", "rank_lo", "rank_hi", "comparisons"]
    names = {row[1] for row in rows[1:]}
    assert names == {"'-cmd", "sys2", "sys3"}
    mus = [row[2] for row in rows[1:]]
    assert any(mu.startswith("-") for mu in mus)  # numbers are left as they are
    assert all(len(mu.split(".")[1]) == 6 for mu in mus)


def test_write_csv_of_each_view_names_its_columns_and_leaves_no_empty_cells():
    campaign, systems, items = make_system_set(systems=3, items=6)
    for n, item in enumerate(items):
        scores = [50, 100, 300] if n % 3 else [300, 100, 50]  # upsets: finite ratings
        make_judged_hit(list(item.outputs.order_by("system__name")), scores)
    headers = {}
    for protocol in ("bt", "wmt"):
        run = RankingRun.objects.create(
            campaign=campaign,
            criterion=campaign.criteria.get(name="quality"),
            protocol=protocol,
            repetitions=10,
        )
        execute_run(run)
        out = io.StringIO()
        write_csv(out, run)
        rows = list(csv.reader(io.StringIO(out.getvalue())))
        headers[protocol] = rows[0]
        assert sorted(row[1] for row in rows[1:]) == ["sys1", "sys2", "sys3"]
        assert all(cell != "" for row in rows for cell in row)
        assert all(not cell.startswith("'") for row in rows for cell in row)  # numbers stay
    assert headers == {
        "bt": [
            "cluster",
            "system",
            "rating",
            "ci_lo",
            "ci_hi",
            "rating_std",
            "rank_lo",
            "rank_hi",
            "comparisons",
        ],
        "wmt": ["cluster", "system", "mean_raw", "mean_z", "rank_lo", "rank_hi", "judgments"],
    }
