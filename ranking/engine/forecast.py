"""What more judgments would settle: for each pair of systems adjacent in a ranking, whether
its clusters already separate them, and roughly how many more HITs would.

The gap between two adjacent systems, over the spread of that gap across the ranking's runs
(or resamples), is a signal-to-noise ratio z = gap / sqrt(std_upper^2 + std_lower^2). With
comparisons accruing at the current rate, the spread falls as 1 / sqrt(HITs), so z grows
as sqrt(HITs). Two adjacent systems land in different clusters roughly once their 95%
ranges stop overlapping, which for two equally uncertain systems is z = 1.96 * sqrt(2)
(about 2.8): the HITs needed are HITs * (2.8 / z)^2. Where that is more than
`TIED_AFTER` times the HITs so far (z below about 0.84), the pair looks tied at the
current rate: more judgments of the same kind will not tell them apart soon.

The criterion's clusters stop changing once every pair that can be separated is: the
largest number of more HITs among the pairs that are neither separated nor tied. Rough by
nature (it assumes the gap stays what it is now and the mix of comparisons stays the same);
a forecast, not a promise.
"""

import math
from dataclasses import dataclass

import numpy as np

Z_SEPARATED = 1.96 * math.sqrt(2)
TIED_AFTER = 10  # times the HITs so far


@dataclass(frozen=True)
class PairForecast:
    upper: int  # position in the ranking's order, 0 = best
    lower: int
    separated: bool
    z: float
    more_hits: int | None  # 0 when separated; None when the pair looks tied

    @property
    def looks_tied(self) -> bool:
        return self.more_hits is None


@dataclass(frozen=True)
class Forecast:
    hits: int
    pairs: list[PairForecast]

    @property
    def hits_until_stable(self) -> int:
        """More HITs until the clusters stop changing (0: they have, as far as one can tell)."""
        return max((p.more_hits or 0 for p in self.pairs), default=0)

    @property
    def separated(self) -> int:
        return sum(p.separated for p in self.pairs)

    @property
    def tied(self) -> int:
        return sum(p.looks_tied for p in self.pairs)


def forecast(score: np.ndarray, spread: np.ndarray, cluster: np.ndarray, hits: int) -> Forecast:
    """``score``, ``spread`` (std over runs) and ``cluster`` per system, in the ranking's
    order (best first); ``hits``: the HITs the ranking rests on."""
    pairs = []
    for i in range(len(score) - 1):
        gap = float(score[i] - score[i + 1])
        z = signal_to_noise(gap, math.hypot(float(spread[i]), float(spread[i + 1])))
        # Different clusters with no gap between the scores would be an order claimed on
        # no evidence: never called separated.
        separated = bool(cluster[i] != cluster[i + 1]) and gap > 0
        pairs.append(PairForecast(i, i + 1, separated, z, 0 if separated else more_hits(z, hits)))
    return Forecast(hits, pairs)


def signal_to_noise(gap: float, noise: float) -> float:
    """gap / noise; where nothing varied over the runs (noise 0), a gap is all signal
    (inf) but no gap is no evidence at all (0, not 0/0 read as inf): a tie."""
    if noise > 0:
        return gap / noise
    return math.inf if gap > 0 else 0.0


def more_hits(z: float, hits: int) -> int | None:
    if z <= 0 or hits <= 0:
        return None
    needed = hits * (Z_SEPARATED / z) ** 2
    if needed > (1 + TIED_AFTER) * hits:
        return None
    return max(1, math.ceil(needed - hits))


def stable_since(hits: int, same_as_previous: bool, previous_hits: int, since: int) -> int:
    """Counted HITs of the first ranking whose clusters the ranking at `hits` still has:
    `hits` itself when its clusters differ from the previous ranking's (at `previous_hits`);
    else the `since` recorded for that one, or `previous_hits` where none was (0) or it is
    of rankings since taken back. The platform's closing rule and the simulator's both use
    it (ranking.service.note_cluster_stability, benchmarks/simulate_campaign.py)."""
    if not same_as_previous:
        return hits
    return since if 0 < since <= previous_hits else previous_hits


def claims_forecast(neighbours: list[tuple[float, bool]], critical: float, hits: int) -> Forecast:
    """The forecast of a view whose claims hold for the whole table, for its neighbours in
    order: each pair's |t| and whether it is claimed. The |t| grows as sqrt(HITs); a pair
    is claimed at about the first step's critical |t| (ranking/engine/joint.py), so the HITs
    needed are HITs * (critical / |t|)^2."""
    pairs = []
    for i, (t, claimed) in enumerate(neighbours):
        z = abs(t)
        needed = 0 if claimed else more_hits_to(z, critical, hits)
        pairs.append(PairForecast(i, i + 1, claimed, z, needed))
    return Forecast(hits, pairs)


def more_hits_to(z: float, critical: float, hits: int) -> int | None:
    if z <= 0 or hits <= 0 or not math.isfinite(critical):
        return None
    needed = hits * (critical / z) ** 2
    if needed > (1 + TIED_AFTER) * hits:
        return None
    return max(1, math.ceil(needed - hits))
