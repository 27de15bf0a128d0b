"""The metrics of a campaign as CSV, for `manage.py metrics --csv` and the results page.

Up to three tables, each with its own header row, separated by one empty line:
1. `system,bleu,nist,meteor,rouge_l,cider,chrf,normalised_average`, and `bleu1,bleu2,bleu3`
   (LogicNLG's sentence BLEU) where the campaign has table items; one row per system
   with outputs, best normalised average first (E2E Table 8's order); an empty cell where
   a metric was not computed (the run's `missing` says why);
2. for campaigns with E2E MR items: `system,outputs,all_realised,added,missing,
   wrong_value,ser` (shares of the system's outputs, and the slot error rate);
3. where the campaign has finished rankings: `criterion,ranking_run,protocol,metric,
   systems,spearman,spearman_p,kendall,kendall_p`, the system-level correlation of each
   metric with TrueSkill mu from the latest finished ranking run of each criterion.
"""

from decimal import Decimal

from annotation import csvsafe

from .metric_models import SENTENCE_BLEU_METRICS, SLOT_METRICS, Metric
from .metric_service import MetricTable, correlations
from .models import RankingRun

OVERLAP_COLUMNS = [
    "bleu",
    "nist",
    "meteor",
    "rouge_l",
    "cider",
    "chrf",
    "normalised_average",
]
# LogicNLG's sentence BLEU-1/2/3, where the campaign has table items.
SENTENCE_BLEU_COLUMNS = [str(m) for m in SENTENCE_BLEU_METRICS]
SLOT_COLUMNS = ["outputs", *[str(m) for m in SLOT_METRICS]]
CORRELATION_COLUMNS = [
    "criterion",
    "ranking_run",
    "protocol",
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


def write_metrics_csv(out, table: MetricTable, rankings: dict[str, RankingRun]) -> None:
    # System names are slugs and may start with '-': csvsafe keeps spreadsheets from running
    # them as formulas.
    writer = csvsafe.SafeWriter(out)
    columns = OVERLAP_COLUMNS + [m for m in SENTENCE_BLEU_COLUMNS if m in table.metrics]
    writer.writerow(["system", *columns])
    for system in table.rows:
        writer.writerow([system.system, *[number(system.get(m)) for m in columns]])
    slot_rows = [system for system in table.rows if Metric.SER in system.values]
    if slot_rows:
        writer.writerow([])
        writer.writerow(["system", *SLOT_COLUMNS])
        for system in slot_rows:
            values = [number(system.get(m)) for m in SLOT_COLUMNS[1:]]
            writer.writerow([system.system, system.outputs[Metric.SER], *values])
    if rankings:
        writer.writerow([])
        writer.writerow(CORRELATION_COLUMNS)
        for criterion, ranking in rankings.items():
            for found in correlations(table, ranking):
                c = found.correlation
                writer.writerow(
                    [
                        criterion,
                        ranking.pk,
                        ranking.protocol,
                        found.metric,
                        len(found.points),
                        *[
                            number(getattr(c, name) if c else None)
                            for name in ("spearman", "spearman_p", "kendall", "kendall_p")
                        ],
                    ]
                )
