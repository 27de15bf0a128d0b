"""Geometry of the rank-range and interval charts, drawn as SVG by templates (text escaped
there)."""

import math
from dataclasses import dataclass

ROW_HEIGHT = 22
LABEL_WIDTH = 130
PLOT_WIDTH = 520
TOP = 28


@dataclass(frozen=True)
class Bar:
    name: str
    y: float
    x: float
    width: float
    rank_lo: int
    rank_hi: int


@dataclass(frozen=True)
class Band:
    cluster: int
    y: float
    height: float
    shaded: bool


@dataclass(frozen=True)
class Tick:
    x: float
    label: int


RANK_CHART_TITLE = "95% rank range of each system, best first; shaded bands are clusters"


@dataclass(frozen=True)
class RankChart:
    title: str
    width: int
    height: int
    bars: list[Bar]
    bands: list[Band]
    ticks: list[Tick]
    plot_left: int
    plot_right: int


def rank_chart(rows, title: str = RANK_CHART_TITLE) -> RankChart:
    """One bar per system from its best to its worst rank, best system on top; clusters as
    alternately shaded bands. `rows`: objects with system, cluster, rank_lo, rank_hi, best first.
    `title` says what the ranges and bands are under the run's protocol."""
    rows = list(rows)
    n = max(len(rows), 1)
    step = PLOT_WIDTH / n

    def x_of(rank: float) -> float:
        return LABEL_WIDTH + (rank - 1) * step

    bars = [
        Bar(
            str(row.system),
            TOP + i * ROW_HEIGHT,
            x_of(row.rank_lo),
            max((row.rank_hi - row.rank_lo + 1) * step, 2),
            row.rank_lo,
            row.rank_hi,
        )
        for i, row in enumerate(rows)
    ]
    return RankChart(
        title=title,
        # Cluster numbers sit right of the plot: room for two digits clear of the last bar.
        width=LABEL_WIDTH + PLOT_WIDTH + 30,
        height=TOP + n * ROW_HEIGHT + 10,
        bars=bars,
        bands=cluster_bands(rows),
        ticks=[Tick(x_of(rank) + step / 2, rank) for rank in range(1, n + 1)],
        plot_left=LABEL_WIDTH,
        plot_right=LABEL_WIDTH + PLOT_WIDTH,
    )


def cluster_bands(rows) -> list[Band]:
    bands: list[Band] = []
    start = 0
    for i, row in enumerate(rows):
        last = i + 1 == len(rows) or rows[i + 1].cluster != row.cluster
        if last:
            bands.append(
                Band(
                    row.cluster,
                    TOP + start * ROW_HEIGHT,
                    (i + 1 - start) * ROW_HEIGHT,
                    shaded=len(bands) % 2 == 0,
                )
            )
            start = i + 1
    return bands


@dataclass(frozen=True)
class Interval:
    name: str
    y: float
    x_lo: float
    x: float
    x_hi: float
    value: float
    lo: float
    hi: float


@dataclass(frozen=True)
class ScaleTick:
    x: float
    label: str


@dataclass(frozen=True)
class IntervalChart:
    title: str
    width: int
    height: int
    intervals: list[Interval]
    ticks: list[ScaleTick]
    plot_left: int


def interval_chart(rows, title: str) -> IntervalChart:
    """A dot at each system's score and a line across its interval, best system on top, on
    a shared axis. `rows`: objects with system, mu, ci_lo, ci_hi, in the table's order."""
    rows = list(rows)
    low = min((row.ci_lo for row in rows), default=0.0)
    high = max((row.ci_hi for row in rows), default=1.0)
    ticks = nice_ticks(low, high)
    left, right = min(ticks[0], low), max(ticks[-1], high)
    scale = PLOT_WIDTH / ((right - left) or 1.0)

    def x_of(value: float) -> float:
        return LABEL_WIDTH + (value - left) * scale

    intervals = [
        Interval(
            str(row.system),
            TOP + i * ROW_HEIGHT,
            x_of(row.ci_lo),
            x_of(row.mu),
            x_of(row.ci_hi),
            row.mu,
            row.ci_lo,
            row.ci_hi,
        )
        for i, row in enumerate(rows)
    ]
    return IntervalChart(
        title=title,
        width=LABEL_WIDTH + PLOT_WIDTH + 20,
        height=TOP + max(len(rows), 1) * ROW_HEIGHT + 10,
        intervals=intervals,
        ticks=[ScaleTick(x_of(tick), f"{tick:g}") for tick in ticks],
        plot_left=LABEL_WIDTH,
    )


def nice_ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Round values (1, 2 or 5 times a power of ten apart) from below ``low`` to above
    ``high``, at most ``most`` + 1 of them."""
    span = (high - low) or 1.0
    power = 10.0 ** math.floor(math.log10(span / most))
    step = next(f * power for f in (1, 2, 5, 10) if span / (f * power) <= most)
    first = math.floor(low / step) * step
    count = math.ceil((high - first) / step - 1e-9)
    return [round(first + i * step, 10) for i in range(count + 1)]


@dataclass(frozen=True)
class CountBar:
    name: str
    y: float
    used_width: float
    left_out_width: float
    used: int
    left_out: int

    @property
    def left_out_x(self) -> float:
        return LABEL_WIDTH + self.used_width

    @property
    def label_x(self) -> float:
        return LABEL_WIDTH + self.used_width + self.left_out_width + 6


@dataclass(frozen=True)
class CountChart:
    width: int
    height: int
    bars: list[CountBar]
    plot_left: int
    most: int


def judgment_chart(counts: dict[str, tuple[int, int]]) -> CountChart:
    """Judgments per system, most first: counted in rankings, and left out (flagged HITs,
    excluded annotators) stacked after them."""
    most = max((used + left for used, left in counts.values()), default=0) or 1
    scale = PLOT_WIDTH / most
    ordered = sorted(counts.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    bars = [
        CountBar(name, TOP + i * ROW_HEIGHT, used * scale, left * scale, used, left)
        for i, (name, (used, left)) in enumerate(ordered)
    ]
    return CountChart(
        LABEL_WIDTH + PLOT_WIDTH + 70, TOP + len(bars) * ROW_HEIGHT + 10, bars, LABEL_WIDTH, most
    )


@dataclass(frozen=True)
class WidthPoint:
    x: float
    y_fused: float
    y_humans: float
    judgments: int
    fused: float
    humans: float


@dataclass(frozen=True)
class WidthChart:
    """Two lines over the runs of the fused view: its intervals' mean width, and the
    humans-only intervals' (x: the judgments each run counted)."""

    width: int
    height: int
    points: list[WidthPoint]
    fused_line: str  # an SVG polyline's points
    humans_line: str
    x_ticks: list[ScaleTick]
    y_ticks: list[ScaleTick]  # x holds the tick's height
    plot_left: int
    plot_right: int
    plot_bottom: int


WIDTH_CHART = (60, 540, 20, 180)  # plot left, right, top, bottom


def width_chart(runs: list[tuple[int, float, float]]) -> WidthChart:
    """From (judgments, fused mean width, humans-only mean width) per run, fewest
    judgments first."""
    left, right, top, bottom = WIDTH_CHART
    x_ticks = nice_ticks(min(run[0] for run in runs), max(run[0] for run in runs), 6)
    y_ticks = nice_ticks(0.0, max(max(run[1], run[2]) for run in runs), 4)

    def x_of(judgments: float) -> float:
        return left + (judgments - x_ticks[0]) * (right - left) / ((x_ticks[-1] - x_ticks[0]) or 1)

    def y_of(width: float) -> float:
        return bottom - (width - y_ticks[0]) * (bottom - top) / ((y_ticks[-1] - y_ticks[0]) or 1)

    points = [
        WidthPoint(x_of(n), y_of(fused), y_of(humans), n, fused, humans)
        for n, fused, humans in runs
    ]
    return WidthChart(
        width=right + 20,
        height=bottom + 36,
        points=points,
        fused_line=" ".join(f"{p.x:.1f},{p.y_fused:.1f}" for p in points),
        humans_line=" ".join(f"{p.x:.1f},{p.y_humans:.1f}" for p in points),
        x_ticks=[ScaleTick(x_of(tick), f"{tick:g}") for tick in x_ticks],
        y_ticks=[ScaleTick(y_of(tick), f"{tick:g}") for tick in y_ticks],
        plot_left=left,
        plot_right=right,
        plot_bottom=bottom,
    )
