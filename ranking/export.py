"""The ranking as CSV, for the results page's download and `manage.py rank --csv`."""

import csv

from .models import RankingRun

CSV_COLUMNS = ["cluster", "system", "mu", "sigma", "rank_lo", "rank_hi", "comparisons"]


def write_csv(out, run: RankingRun) -> None:
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for row in run.results.select_related("system"):
        writer.writerow(
            [
                row.cluster,
                row.system.name,
                f"{row.mu:.6f}",
                f"{row.sigma:.6f}",
                row.rank_lo,
                row.rank_hi,
                row.comparisons,
            ]
        )
