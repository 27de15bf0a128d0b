"""The metrics of a campaign as CSV files, for `manage.py metrics` and the results page.

Two files, each one table with one header row:
1. the metrics: `system,bleu,nist,meteor,rouge_l,cider,chrf,normalised_average,
   [bleu1,bleu2,bleu3,]slot_outputs,all_realised,added,missing,wrong_value,ser
   [,number_outputs,numbers_checked,numbers_supported]` (LogicNLG's sentence BLEU-1/2/3
   only where the campaign has table items; RotoWire's number check only where it has
   box-score items: the outputs checked, the numbers attached to a player or team, and the
   share of those in that one's box-score row), one row per system with
   outputs, best normalised average first (E2E Table 8's order); an empty cell where a
   metric was not computed (the run's `missing` says why; the slot columns are empty for
   campaigns without E2E MR items, and `slot_outputs` counts the outputs they checked);
2. the correlations: `criterion,ranking_run,protocol,score,metric,systems,spearman,
   spearman_p,kendall,kendall_p`, the system-level correlation of each metric with the
   score the results page shows by default, the mean TrueSkill mu of the latest finished
   E2E protocol run of each criterion (named in `protocol` and `score`).
"""

from decimal import Decimal

from annotation import csvsafe
from ranking.models import RankingRun
from ranking.protocols import PROTOCOLS

from .models import (
    NUMBER_METRICS,
    SENTENCE_BLEU_METRICS,
    SLOT_METRICS,
    WORD_OVERLAP_METRICS,
    Metric,
)
from .service import MetricTable, SystemMetrics, correlations

OVERLAP_COLUMNS = [str(m) for m in WORD_OVERLAP_METRICS]
SLOT_COLUMNS = [str(m) for m in SLOT_METRICS]
# LogicNLG's sentence BLEU-1/2/3, where the campaign has table items.
SENTENCE_BLEU_COLUMNS = [str(m) for m in SENTENCE_BLEU_METRICS]
# RotoWire's number check, where the campaign has box-score items.
NUMBER_COLUMNS = [str(m) for m in NUMBER_METRICS]
CORRELATION_COLUMNS = [
    "criterion",
    "ranking_run",
    "protocol",
    "score",
    "metric",
    "systems",
    "spearman",
    "spearman_p",
    "kendall",
    "kendall_p",
]


def number(value: float | None) -> Decimal | str:
    """Six decimals, as a number (so the guard leaves negative values alone); '' for none."""
    return "" if value is None else Decimal(f"{value:.6f}")


def number_cells(system: SystemMetrics) -> list:
    """The number check's cells: outputs checked, numbers checked (a count), share supported."""
    checked = system.get(Metric.NUMBERS_CHECKED)
    return [
        system.outputs.get(Metric.NUMBERS_CHECKED, ""),
        "" if checked is None else int(checked),
        number(system.get(Metric.NUMBERS_SUPPORTED)),
    ]


def write_metrics_csv(out, table: MetricTable) -> None:
    # System names are slugs and may start with '-': csvsafe keeps spreadsheets from running
    # them as formulas.
    writer = csvsafe.SafeWriter(out)
    overlap_columns = OVERLAP_COLUMNS + [m for m in SENTENCE_BLEU_COLUMNS if m in table.metrics]
    checked = any(m in table.metrics for m in NUMBER_COLUMNS)
    numbers_head = ["number_outputs", *NUMBER_COLUMNS] if checked else []
    writer.writerow(["system", *overlap_columns, "slot_outputs", *SLOT_COLUMNS, *numbers_head])
    for system in table.rows:
        overlap = [number(system.get(m)) for m in overlap_columns]
        slots = [number(system.get(m)) for m in SLOT_COLUMNS]
        numbers = number_cells(system) if checked else []
        slot_outputs = system.outputs.get(Metric.SER, "")
        writer.writerow([system.system, *overlap, slot_outputs, *slots, *numbers])


def write_correlations_csv(out, table: MetricTable, rankings: dict[str, RankingRun]) -> None:
    """`rankings`: criterion -> the ranking run to correlate with (latest_rankings)."""
    writer = csvsafe.SafeWriter(out)
    writer.writerow(CORRELATION_COLUMNS)
    for criterion, ranking in rankings.items():
        known = PROTOCOLS.get(ranking.protocol)
        score = known.score_name if known else "mu"
        for found in correlations(table, ranking):
            c = found.correlation
            stats = [
                number(getattr(c, name) if c else None)
                for name in ("spearman", "spearman_p", "kendall", "kendall_p")
            ]
            head = [criterion, ranking.pk, ranking.protocol, score, found.metric]
            writer.writerow([*head, len(found.points), *stats])
