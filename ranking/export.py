"""The ranking as CSV, for the results page's download and `manage.py rank --csv`.

Each protocol names its columns for what they hold (ranking.protocols: TrueSkill's cluster
and mu, Bradley-Terry's Arena rank, rating and 95% interval, WMT's cluster and mean z).
"""

from collections.abc import Iterable, Iterator

from annotation import csvsafe

from .models import RankingRun, SystemResult
from .protocols import protocol_named
from .service import ResultRow

# A line of results: a stored one, or one ranked again from a bundle, with its system's name.
Result = SystemResult | ResultRow
Named = tuple[str, Result]


def write_csv(out, run: RankingRun) -> None:
    write_rows(out, run.protocol, stored_rows(run))


def stored_rows(run: RankingRun) -> Iterator[Named]:
    for row in run.results.select_related("system"):
        yield row.system.name, row


def write_rows(out, protocol: str, rows: Iterable[Named]) -> None:
    # System names are slugs and may start with '-': csvsafe keeps spreadsheets from
    # running them as formulas.
    view = protocol_named(protocol)
    writer = csvsafe.SafeWriter(out)
    writer.writerow(view.csv_columns)
    for name, row in rows:
        writer.writerow(view.csv_cells(name, row))
