"""The judges against the crowd as CSV, for the judge admin's download: one row per judge
per figure, then one per system with its bias, each with its bootstrap interval, as the
judge's last job stored them (Judge.summary["agreement"]; judges.service.agreement)."""

from collections.abc import Iterable, Iterator

from annotation import csvsafe

from .models import Judge

# What each figure is, in the order the page and the file give them; "n" says what the
# figure's count column counts.
FIGURES = {
    "system_spearman": ("Spearman's rho of the systems' means", "systems"),
    "system_kendall": ("Kendall's tau-b of the systems' means", "systems"),
    "output_pearson": ("Pearson's r over outputs (mean human z-score)", "outputs"),
    "output_spearman": ("Spearman's rho over outputs (mean human z-score)", "outputs"),
    "within_systems_pearson": ("Pearson's r within systems", "outputs"),
    "pairwise_agreement": (
        "human-judged pairs the judge orders as the human did (judge ties count half)",
        "pairs",
    ),
}
BIAS = "bias"
BIAS_LABEL = "judge minus humans, z scale"
COLUMNS = [
    "campaign",
    "criterion",
    "judge",
    "figure",
    "description",
    "system",
    "value",
    "lower",
    "upper",
    "n",
    "counted",
    "judge_mean",
    "humans_mean",
    "confidence",
    "resamples",
    "as_of",
]


def write_agreement_csv(out, judges: Iterable[Judge]) -> None:
    # Names are free text or slugs that may start with '-' or '=': csvsafe keeps a
    # spreadsheet from running them as formulas.
    writer = csvsafe.SafeWriter(out)
    writer.writerow(COLUMNS)
    for judge in judges:
        writer.writerows(agreement_rows(judge))


def agreement_rows(judge: Judge) -> Iterator[list]:
    found = (judge.summary or {}).get("agreement")
    if not found:
        return
    criterion = judge.criterion
    where = [criterion.campaign.name, criterion.name, judge.name]
    tail = [
        found.get("confidence", ""),
        found.get("resamples", ""),
        judge.summary_at.isoformat() if judge.summary_at else "",
    ]
    intervals = found.get("intervals") or {}
    for name, (label, counted) in FIGURES.items():
        if name not in found:
            continue  # stored before this figure was computed
        low, high = intervals.get(name) or ("", "")
        value = _cell(found[name])
        row = [name, label, "", value, _cell(low), _cell(high), found.get(counted, ""), counted]
        yield [*where, *row, "", "", *tail]
    for bias in found.get("bias") or []:
        row = [BIAS, BIAS_LABEL, bias["system"], _cell(bias["bias"]), _cell(bias["lower"])]
        row += [_cell(bias["upper"]), bias["outputs"], "outputs"]
        yield [*where, *row, _cell(bias["judge"]), _cell(bias["humans"]), *tail]


def _cell(value) -> object:
    """A figure as stored, or an empty cell where it is undefined (a constant judge)."""
    return "" if value is None else value
