"""How much could any fixed composition of HITs save on a ratings file, told the truth? The
fewest HITs the best fixed allocation of comparisons needs for the balanced design's
expected misordered pairs, under a normal approximation.

    python benchmarks/best_design.py --ratings ../shared/data/e2e/human_ratings/quality.csv \\
        --criterion quality

The model. Bradley-Terry at the ratings the oracle implies (`simulate_campaign.implied_rating`,
in nats r). A design spends a share w_p of C comparisons on pair p = (i, j); the maximum-
likelihood estimate is then about normal, with covariance the pseudo-inverse of the Fisher
information, the weighted graph Laplacian L = C * sum_p w_p q_p b_p b_p' (q_p = P(i beats j)
P(j beats i), b_p = e_i - e_j). Pair (i, j) comes out misordered with probability
Phi(-|r_i - r_j| / sd(r^_i - r^_j)); summed over the pairs that the simulator's truth puts in
different clusters, that is E(w, C), the expected misordered pairs: the simulator's measure.
On E2E quality it predicts the balanced curve the simulator measures to within 0.75 pairs
(README, "Does it pay?").

The best design for C comparisons minimises E(w, C) over a design space by exponentiated
gradient (mirror descent on the simplex; dE/dw is closed form). Two spaces:

- `pairs`: any share per pair of systems; looser than any design of HITs.
- `hits`: HITs of k systems among an item's outputs, every item given the same share of
  HITs, as the platform composes them. Balanced is the uniform design over each item's
  k-subsets, which the balanced rule approximates.

For the level the balanced design reaches at each checkpoint, the script prints the HITs the
best design in each space needs for the same level, and the ratio. The ratio does not depend
on a constant factor on a comparison's variance (draws lower it, the slots of one HIT sharing
a score raise it): E depends on C only through C over that factor, for every design alike.

It is generous to active composition in two ways: it knows the truth's ratings, which a
policy must learn, and it assumes an estimator that stays unbiased whatever the design,
whereas Bradley-Terry and TrueSkill on the oracle's judgments converge to an order that
depends on who met whom. It is not a bound on a sequential rule, which can also react to its
own run's noise: early in a campaign the simulator's active rule does better than this.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import scipy.sparse as sparse
import simulation_tools
from scipy.special import expit
from scipy.stats import norm

# Mirror descent: each step moves log w by at most STEP (the largest gradient component's).
STEP, ITERATIONS, WARM_ITERATIONS = 0.5, 3000, 600
# The `hits` space lists every k-subset of every item's outputs; beyond this many it is left
# out (a file with long item lists), and only the `pairs` space is searched.
MAX_SUBSETS = 2_000_000


class Problem:
    """Ratings (nats) and the pairs whose order is scored (int[P, 2]); the design's
    coordinates are every pair of systems, `first` < `second`."""

    def __init__(self, rating: np.ndarray, scored: np.ndarray) -> None:
        n = len(rating)
        self.rating, self.scored = rating, scored
        self.first, self.second = np.triu_indices(n, 1)
        p = expit(rating[self.first] - rating[self.second])
        self.information = p * (1 - p)  # per comparison, at the truth
        self.design_rows = _differences(self.first, self.second, n)
        self.scored_rows = _differences(scored[:, 0], scored[:, 1], n)
        self.gap = np.abs(rating[scored[:, 0]] - rating[scored[:, 1]])

    @property
    def n_pairs(self) -> int:
        return len(self.first)

    def pair_index(self) -> dict[tuple[int, int], int]:
        return {
            (int(i), int(j)): p
            for p, (i, j) in enumerate(zip(self.first, self.second, strict=True))
        }

    def expected_misordered(
        self, share: np.ndarray, comparisons: float
    ) -> tuple[float, np.ndarray]:
        """E(share, comparisons) and its gradient in each pair's share."""
        weight = comparisons * share * self.information
        laplacian = self.design_rows.T @ (self.design_rows * weight[:, None])
        covariance = np.linalg.pinv(laplacian)
        spread = self.scored_rows @ covariance  # [P, n]
        variance = np.maximum(np.einsum("pn,pn->p", spread, self.scored_rows), 1e-300)
        z = self.gap / np.sqrt(variance)
        # d variance_s / d share_p = -comparisons * information_p * (a_s' Cov b_p)^2
        along = spread @ self.design_rows.T  # [P scored, pairs]
        d_variance = norm.pdf(z) * self.gap / (2 * variance**1.5)
        gradient = -(d_variance[:, None] * along**2).sum(axis=0) * comparisons * self.information
        return float(norm.cdf(-z).sum()), gradient


def _differences(first: np.ndarray, second: np.ndarray, n: int) -> np.ndarray:
    rows = np.zeros((len(first), n))
    rows[np.arange(len(first)), first] = 1.0
    rows[np.arange(len(first)), second] = -1.0
    return rows


@dataclass
class DesignSpace:
    """Designs as weights on units: in `pairs` a pair of systems, in `hits` one HIT of one
    item. `pairs_of` (units x pairs) counts the comparisons a unit makes of each pair; a
    design's share of the comparisons per pair is its weights through `pairs_of`, over the
    comparisons per HIT. The units of a `group` (an item's HITs) share a fixed total weight,
    the same for every group: items stay balanced."""

    name: str
    pairs_of: sparse.csr_matrix
    group: np.ndarray  # int64[units]
    comparisons_per_hit: int

    def normalised(self, weight: np.ndarray) -> np.ndarray:
        per_group = np.bincount(self.group, weights=weight)
        return weight / per_group[self.group] / len(per_group)

    def uniform(self) -> np.ndarray:
        return self.normalised(np.ones(self.pairs_of.shape[0]))

    def share(self, weight: np.ndarray) -> np.ndarray:
        return np.asarray(self.pairs_of.T @ weight) / self.comparisons_per_hit

    def best(
        self, problem: Problem, hits: float, start: np.ndarray | None = None, iterations=ITERATIONS
    ) -> tuple[float, np.ndarray]:
        """The lowest expected misordered pairs with `hits` HITs, and the design's weights."""
        weight = self.uniform() if start is None else start
        comparisons = hits * self.comparisons_per_hit
        best_value, best_weight = math.inf, weight
        for _ in range(iterations):
            value, gradient = problem.expected_misordered(self.share(weight), comparisons)
            if value < best_value:
                best_value, best_weight = value, weight
            per_unit = np.asarray(self.pairs_of @ gradient) / self.comparisons_per_hit
            largest = np.abs(per_unit).max()
            if largest == 0:
                break
            weight = self.normalised(weight * np.exp(-STEP * per_unit / largest))
        return best_value, best_weight


def any_pairs(problem: Problem, k: int) -> DesignSpace:
    units = problem.n_pairs
    identity = sparse.identity(units, format="csr") * (k * (k - 1) / 2)
    return DesignSpace("pairs", identity, np.zeros(units, dtype=np.int64), k * (k - 1) // 2)


def item_hits(
    problem: Problem, outputs: Sequence[Sequence[int]], k: int, max_subsets: int = MAX_SUBSETS
) -> DesignSpace | None:
    """Every HIT of min(k, m) of an item's m systems; None if there are more than
    `max_subsets` to list."""
    if sum(math.comb(len(systems), min(k, len(systems))) for systems in outputs) > max_subsets:
        return None
    index = problem.pair_index()
    rows: list[int] = []
    columns: list[int] = []
    group: list[int] = []
    for item, systems in enumerate(outputs):
        for hit in combinations(sorted(systems), min(k, len(systems))):
            unit = len(group)
            for pair in combinations(hit, 2):
                rows.append(unit)
                columns.append(index[pair])
            group.append(item)
    pairs_of = sparse.csr_matrix(
        (np.ones(len(rows)), (rows, columns)), shape=(len(group), problem.n_pairs)
    )
    return DesignSpace("hits", pairs_of, np.array(group), k * (k - 1) // 2)


def hits_for(level: float, curve: list[tuple[float, float]]) -> float | None:
    """The HITs at which a falling (HITs, expected misordered) curve reaches `level`,
    interpolating log(misordered) between points; None beyond its last point."""
    rising = [(hits, -math.log(value)) for hits, value in curve]
    return simulation_tools.hits_for(-math.log(level), rising)


def best_curve(space: DesignSpace, problem: Problem, grid: Sequence[float]):
    """(HITs, best expected misordered) along `grid`, each optimum started from the last."""
    curve, start = [], None
    for n, hits in enumerate(grid):
        value, start = space.best(problem, hits, start, ITERATIONS if n == 0 else WARM_ITERATIONS)
        curve.append((hits, value))
    return curve


def bound_table(
    problem: Problem, spaces: list[DesignSpace], balanced: DesignSpace, checkpoints, grid
) -> list[dict]:
    """Per checkpoint: the balanced design's expected misordered pairs, and each space's best
    design's HITs for the same level and ratio to the checkpoint."""
    curves = {space.name: best_curve(space, problem, grid) for space in spaces}
    uniform = balanced.share(balanced.uniform())
    rows = []
    for hits in checkpoints:
        level, _ = problem.expected_misordered(uniform, hits * balanced.comparisons_per_hit)
        best = {}
        for name, curve in curves.items():
            needed = hits_for(level, curve)
            best[name] = {"hits": needed, "ratio": needed / hits if needed else None}
        rows.append({"hits": hits, "balanced_misordered": level, "best": best})
    return rows


def main() -> None:
    args = simulation_tools.ratings_parser(__doc__).parse_args()

    # The simulator sets Django up to read the file; nothing above needs it.
    from simulate_campaign import (  # noqa: PLC0415
        RATING_MEAN,
        RATING_PER_NAT,
        Oracle,
        implied_rating,
        truth_of,
    )

    oracle = Oracle.read(args.ratings, args.criterion)
    truth = truth_of(oracle, seed=0)
    rating = (implied_rating(oracle) - RATING_MEAN) / RATING_PER_NAT
    problem = Problem(rating, np.array(truth.pairs(), dtype=np.int64).reshape(-1, 2))
    outputs = list(oracle.available().values())
    hits_space = item_hits(problem, outputs, oracle.k)
    spaces = [any_pairs(problem, oracle.k)] + ([hits_space] if hits_space else [])
    balanced = hits_space or spaces[0]
    checkpoints = [round(oracle.hits * f) for f in (0.2, 0.4, 0.6, 0.8, 1.0, 2.0)]
    grid = [oracle.hits * f / 10 for f in range(1, 21)]
    print(
        f"{len(problem.scored)} pairs in different clusters of the truth; balanced design:"
        f" {balanced.name}{'' if hits_space else ' (too many HITs to list: pairs only)'}"
    )
    for row in bound_table(problem, spaces, balanced, checkpoints, grid):
        best = "; ".join(
            f"{name} {b['hits']:.0f} HITs ({b['ratio']:.2f})"
            if b["hits"]
            else f"{name} not within {grid[-1]:.0f} HITs"
            for name, b in row["best"].items()
        )
        print(
            f"{row['hits']:>6} HITs: balanced {row['balanced_misordered']:.2f} misordered"
            f" expected; the best design for the same: {best}"
        )


if __name__ == "__main__":
    main()
