"""The ranking as CSV, for the results page's download and `manage.py rank --csv`."""

from decimal import Decimal

from annotation import csvsafe

from .models import RankingRun

CSV_COLUMNS = ["cluster", "system", "mu", "sigma", "rank_lo", "rank_hi", "comparisons"]


def write_csv(out, run: RankingRun) -> None:
    # System names are slugs and may start with '-': csvsafe keeps spreadsheets from
    # running them as formulas.
    writer = csvsafe.SafeWriter(out)
    writer.writerow(CSV_COLUMNS)
    for row in run.results.select_related("system"):
        writer.writerow(
            [
                row.cluster,
                row.system.name,
                six_decimals(row.mu),
                six_decimals(row.sigma),
                row.rank_lo,
                row.rank_hi,
                row.comparisons,
            ]
        )


def six_decimals(value: float) -> Decimal:
    """A number (not text, which the guard would quote when negative), written as before."""
    return Decimal(f"{value:.6f}")
