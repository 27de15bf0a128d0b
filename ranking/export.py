"""The ranking as CSV, for the results page's download and `manage.py rank --csv`.

Each protocol names its columns for what they hold (SystemResult's docstring): TrueSkill's
mean mu with its spread over the runs, as the page shows them; Bradley-Terry's Arena rank,
rating and 95% interval; WMT's cluster and mean z.
"""

from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal

from annotation import csvsafe

from .models import Protocol, RankingRun, SystemResult
from .service import ResultRow

# TrueSkill's: the spread of mu over the runs (mu_std), which the results page shows beside
# mu. TrueSkill's own sigma is not exported: under the E2E protocol its beta grows with the
# comparisons, so it hardly moves from 0.5, and the page calls it meaningless.
CSV_COLUMNS = ["cluster", "system", "mu", "mu_std", "rank_lo", "rank_hi", "comparisons"]
BRADLEY_TERRY_COLUMNS = [
    "rank",
    "system",
    "rating",
    "ci_lo",
    "ci_hi",
    "rating_std",
    "rank_lo",
    "rank_hi",
    "comparisons",
]
WMT_COLUMNS = ["cluster", "system", "mean_z", "rank_lo", "rank_hi", "judgments"]

# A line of results: a stored one, or one ranked again from a bundle, with its system's name.
Result = SystemResult | ResultRow
Named = tuple[str, Result]
Cells = Callable[[str, Result], list]


def write_csv(out, run: RankingRun) -> None:
    write_rows(out, run.protocol, stored_rows(run))


def stored_rows(run: RankingRun) -> Iterator[Named]:
    for row in run.results.select_related("system"):
        yield row.system.name, row


def write_rows(out, protocol: str, rows: Iterable[Named]) -> None:
    # System names are slugs and may start with '-': csvsafe keeps spreadsheets from
    # running them as formulas.
    columns, cells = csv_layout(protocol)
    writer = csvsafe.SafeWriter(out)
    writer.writerow(columns)
    for name, row in rows:
        writer.writerow(cells(name, row))


def csv_layout(protocol: str) -> tuple[list[str], Cells]:
    if protocol == Protocol.BRADLEY_TERRY:
        return BRADLEY_TERRY_COLUMNS, bradley_terry_cells
    if protocol == Protocol.WMT:
        return WMT_COLUMNS, wmt_cells
    return CSV_COLUMNS, trueskill_cells


def trueskill_cells(name: str, row: Result) -> list:
    return [
        row.cluster,
        name,
        six_decimals(row.mu),
        six_decimals(row.mu_std),
        row.rank_lo,
        row.rank_hi,
        row.comparisons,
    ]


def bradley_terry_cells(name: str, row: Result) -> list:
    return [
        row.cluster,
        name,
        six_decimals(row.mu),
        six_decimals(row.ci_lo),
        six_decimals(row.ci_hi),
        six_decimals(row.mu_std),
        row.rank_lo,
        row.rank_hi,
        row.comparisons,
    ]


def wmt_cells(name: str, row: Result) -> list:
    return [
        row.cluster,
        name,
        six_decimals(row.mu),
        row.rank_lo,
        row.rank_hi,
        row.comparisons,
    ]


def six_decimals(value: float | None) -> Decimal | None:
    """A number (not text, which the guard would quote when negative), written as before;
    a value the protocol does not have stays empty."""
    return None if value is None else Decimal(f"{value:.6f}")
