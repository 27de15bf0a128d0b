"""Geometry of the metric-versus-mu scatter plots, drawn as SVG by a template."""

from dataclasses import dataclass

WIDTH = 250
HEIGHT = 214
LEFT = 46
RIGHT = 12
TOP = 26  # room above the plot for the score's label, clear of the dots
BOTTOM = 34


@dataclass(frozen=True)
class Dot:
    name: str
    x: float
    y: float
    value: float
    mu: float


@dataclass(frozen=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True)
class Scatter:
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    dots: list[Dot]
    x_ticks: list[Tick]
    y_ticks: list[Tick]


def _scale(values: list[float], start: float, end: float):
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    pad = span * 0.06

    def place(value: float) -> float:
        return start + (value - low + pad) / (span + 2 * pad) * (end - start)

    return place, [low, (low + high) / 2, high] if high > low else [low]


def _label(value: float) -> str:
    return f"{value:.3g}" if abs(value) >= 1 else f"{value:.2f}"


def scatter_chart(points: list[tuple[str, float, float]]) -> Scatter | None:
    """One dot per (system, metric value, mu): the metric across, mu up."""
    if not points:
        return None
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM
    x_of, x_marks = _scale([p[1] for p in points], LEFT, right)
    y_of, y_marks = _scale([p[2] for p in points], bottom, TOP)
    return Scatter(
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        right=right,
        top=TOP,
        bottom=bottom,
        dots=[Dot(name, x_of(value), y_of(mu), value, mu) for name, value, mu in points],
        x_ticks=[Tick(x_of(v), _label(v)) for v in x_marks],
        y_ticks=[Tick(y_of(v), _label(v)) for v in y_marks],
    )
