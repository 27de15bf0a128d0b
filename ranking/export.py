"""The ranking as CSV, for the results page's download and `manage.py rank --csv`."""

from collections.abc import Iterable, Iterator
from decimal import Decimal

from annotation import csvsafe

from .models import RankingRun
from .service import ResultRow

CSV_COLUMNS = ["cluster", "system", "mu", "sigma", "rank_lo", "rank_hi", "comparisons"]

# One line of the CSV: cluster, system name, mu, sigma, rank_lo, rank_hi, comparisons.
CsvRow = tuple[int, str, float, float, int, int, int]


def write_csv(out, run: RankingRun) -> None:
    write_rows(out, stored_rows(run))


def stored_rows(run: RankingRun) -> Iterator[CsvRow]:
    for r in run.results.select_related("system"):
        yield (r.cluster, r.system.name, r.mu, r.sigma, r.rank_lo, r.rank_hi, r.comparisons)


def ranked_rows(rows: Iterable[ResultRow[str]]) -> Iterator[CsvRow]:
    """Result rows keyed by system name (a ranking from a bundle) as CSV rows."""
    for r in rows:
        yield (r.cluster, r.system, r.mu, r.sigma, r.rank_lo, r.rank_hi, r.comparisons)


def write_rows(out, rows: Iterable[CsvRow]) -> None:
    """The CSV of result rows, best first: a stored run's, or one ranked again from a bundle."""
    # System names are slugs and may start with '-': csvsafe keeps spreadsheets from
    # running them as formulas.
    writer = csvsafe.SafeWriter(out)
    writer.writerow(CSV_COLUMNS)
    for cluster, system, mu, sigma, rank_lo, rank_hi, comparisons in rows:
        writer.writerow(
            [cluster, system, six_decimals(mu), six_decimals(sigma), rank_lo, rank_hi, comparisons]
        )


def six_decimals(value: float) -> Decimal:
    """A number (not text, which the guard would quote when negative), written as before."""
    return Decimal(f"{value:.6f}")
