"""How much could any fixed composition of HITs save on a ratings file, told the truth? The
fewest HITs the best fixed allocation of comparisons needs for the balanced design's
expected misordered pairs, and for its chance of reaching the simulator's target, under a
normal approximation.

    python research/best_design.py --ratings ../shared/data/e2e/human_ratings/quality.csv \\
        --criterion quality

The model. Bradley-Terry at the ratings the oracle implies (`simulate_campaign.implied_rating`,
in nats r). A design spends a share w_p of C comparisons on pair p = (i, j); the maximum-
likelihood estimate is then about normal, with covariance the pseudo-inverse of the Fisher
information, the weighted graph Laplacian L = C * sum_p w_p q_p b_p b_p' (q_p = P(i beats j)
P(j beats i), b_p = e_i - e_j). Pair (i, j) comes out misordered with probability
Phi(-|r_i - r_j| / sd(r^_i - r^_j)); summed over the pairs that the simulator's truth puts in
different clusters, that is E(w, C), the expected misordered pairs: the simulator's measure.
On E2E quality it predicts the balanced curve the simulator measures to within 0.75 pairs
("Does it pay?" in docs/research-active-composition.md).

The best design for C comparisons minimises a measure (below) over a design space by
exponentiated gradient (mirror descent on the simplex; the gradient is closed form). Two
spaces:

- `pairs`: any share per pair of systems; looser than any design of HITs.
- `hits`: HITs of k systems among an item's outputs, every item given the same share of
  HITs, as the platform composes them. Balanced is the uniform design over each item's
  k-subsets, which the balanced rule approximates.

Two measures, each with its own best design. The same mean: for the level of expected
misordered pairs the balanced design reaches at each checkpoint, the HITs the best design in
each space needs for the same level, and the ratio. The floor's own: the simulator's target
allows `--allowed` misordered pairs (E2E quality: 1 of 191); the best designs minimise the
chance of missing it, and the table compares HITs for the same chance, among them where
balanced misses it in half the runs (its median HITs to the target). The ratios do not
depend on a constant factor on a comparison's variance (draws lower it, the slots of one HIT
sharing a score raise it): every measure depends on C only through C over that factor, for
every design alike.

It is generous to active composition in two ways: it knows the truth's ratings, which a
policy must learn, and it assumes an estimator that stays unbiased whatever the design,
whereas Bradley-Terry and TrueSkill on the oracle's judgments converge to an order that
depends on who met whom. It is not a bound on a sequential rule, which can also react to its
own run's noise: early in a campaign the simulator's active rule does better than this.
"""

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from pathlib import Path

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
# Draws of the normal approximation that check the target's independence assumption.
CHECK_DRAWS = 40_000

# What a design is scored by: (share per pair, comparisons) -> (value, gradient in the
# shares); lower is better.
Objective = Callable[[np.ndarray, float], tuple[float, np.ndarray]]


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

    def covariance(self, share: np.ndarray, comparisons: float) -> np.ndarray:
        """The estimate's covariance: the pseudo-inverse of the Fisher information."""
        weight = comparisons * share * self.information
        return np.linalg.pinv(self.design_rows.T @ (self.design_rows * weight[:, None]))

    def misordering(self, share: np.ndarray, comparisons: float) -> tuple[np.ndarray, np.ndarray]:
        """Each scored pair's chance of coming out misordered, and its derivative in each
        design pair's share (scored pairs x design pairs)."""
        spread = self.scored_rows @ self.covariance(share, comparisons)  # [P, n]
        variance = np.maximum(np.einsum("pn,pn->p", spread, self.scored_rows), 1e-300)
        z = self.gap / np.sqrt(variance)
        # d variance_s / d share_p = -comparisons * information_p * (a_s' Cov b_p)^2
        along = spread @ self.design_rows.T  # [P scored, pairs]
        d_chance_d_variance = norm.pdf(z) * self.gap / (2 * variance**1.5)
        d_chance = -(d_chance_d_variance[:, None] * along**2) * comparisons * self.information
        return norm.cdf(-z), d_chance

    def expected_misordered(
        self, share: np.ndarray, comparisons: float
    ) -> tuple[float, np.ndarray]:
        """E(share, comparisons) and its gradient in each pair's share."""
        chance, d_chance = self.misordering(share, comparisons)
        return float(chance.sum()), d_chance.sum(axis=0)

    def more_misordered_than(
        self, allowed: int, share: np.ndarray, comparisons: float
    ) -> tuple[float, np.ndarray]:
        """The chance that more than `allowed` scored pairs come out misordered (the
        simulator's target missed), and its gradient in each pair's share. The pairs are
        taken as misordered independently (Poisson binomial). Pairs sharing a system are
        not: `sampled_more_misordered_than` checks it (at balanced's median HITs to the
        target on E2E quality, sampling moves balanced's chance of missing from 0.500 to
        0.472 and the best design's not at all, 0.333: if anything, independence favours
        the best design)."""
        chance, d_chance = self.misordering(share, comparisons)
        at_most = misordered_counts(chance, allowed)
        # d P(S > allowed) / d chance_s = P(the other pairs misordered exactly `allowed`)
        others = without_each(at_most, chance)[:, allowed]
        return 1.0 - float(at_most.sum()), others @ d_chance


def misordered_counts(chance: np.ndarray, up_to: int) -> np.ndarray:
    """P(exactly 0, 1, ..., up_to of independent events with these chances happen)."""
    counts = np.zeros(up_to + 1)
    counts[0] = 1.0
    for c in chance:
        counts[1:] = counts[1:] * (1 - c) + counts[:-1] * c
        counts[0] *= 1 - c
    return counts


def without_each(counts: np.ndarray, chance: np.ndarray) -> np.ndarray:
    """`misordered_counts` with each event left out in turn ([events, len(counts)]), by
    dividing it out of the full counts: stable here, every chance being at most 1/2."""
    rest = np.empty((len(chance), len(counts)))
    rest[:, 0] = counts[0] / (1 - chance)
    for k in range(1, len(counts)):
        rest[:, k] = (counts[k] - rest[:, k - 1] * chance) / (1 - chance)
    return rest


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
    hits: list[tuple[int, ...]] | None = None  # in `hits`: each unit's systems

    def normalised(self, weight: np.ndarray) -> np.ndarray:
        per_group = np.bincount(self.group, weights=weight)
        return weight / per_group[self.group] / len(per_group)

    def uniform(self) -> np.ndarray:
        return self.normalised(np.ones(self.pairs_of.shape[0]))

    def share(self, weight: np.ndarray) -> np.ndarray:
        return np.asarray(self.pairs_of.T @ weight) / self.comparisons_per_hit

    def best(
        self,
        objective: Objective,
        hits: float,
        start: np.ndarray | None = None,
        iterations: int = ITERATIONS,
    ) -> tuple[float, np.ndarray]:
        """The lowest `objective` with `hits` HITs, and the design's weights."""
        weight = self.uniform() if start is None else start
        comparisons = hits * self.comparisons_per_hit
        best_value, best_weight = math.inf, weight
        for _ in range(iterations):
            value, gradient = objective(self.share(weight), comparisons)
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
    units: list[tuple[int, ...]] = []
    for item, systems in enumerate(outputs):
        for hit in combinations(sorted(systems), min(k, len(systems))):
            unit = len(group)
            for pair in combinations(hit, 2):
                rows.append(unit)
                columns.append(index[pair])
            group.append(item)
            units.append(hit)
    pairs_of = sparse.csr_matrix(
        (np.ones(len(rows)), (rows, columns)), shape=(len(group), problem.n_pairs)
    )
    return DesignSpace("hits", pairs_of, np.array(group), k * (k - 1) // 2, units)


def hits_for(level: float, curve: list[tuple[float, float]]) -> float | None:
    """The HITs at which a falling (HITs, value) curve reaches `level`, interpolating
    log(value) between points; None beyond its last point."""
    rising = [(hits, -math.log(value)) for hits, value in curve]
    return simulation_tools.hits_for(-math.log(level), rising)


def best_curve(space: DesignSpace, objective: Objective, grid: Sequence[float]):
    """(HITs, best objective) along `grid`, each optimum started from the last."""
    curve, start = [], None
    for n, hits in enumerate(grid):
        value, start = space.best(objective, hits, start, ITERATIONS if n == 0 else WARM_ITERATIONS)
        curve.append((hits, value))
    return curve


def bound_table(
    objective: Objective, spaces: list[DesignSpace], balanced: DesignSpace, checkpoints, grid
) -> list[dict]:
    """Per checkpoint: the balanced design's objective, and each space's best design's HITs
    for the same level and ratio to the checkpoint."""
    curves = {space.name: best_curve(space, objective, grid) for space in spaces}
    uniform = balanced.share(balanced.uniform())
    rows = []
    for hits in checkpoints:
        level, _ = objective(uniform, hits * balanced.comparisons_per_hit)
        best = {}
        for name, curve in curves.items():
            needed = hits_for(level, curve)
            best[name] = {"hits": needed, "ratio": needed / hits if needed else None}
        rows.append({"hits": hits, "balanced": level, "best": best})
    return rows


def median_hits_to_target(
    problem: Problem, allowed: int, space: DesignSpace, weight: np.ndarray, grid: Sequence[float]
) -> float | None:
    """The HITs at which a design misses the target in half the runs: its median HITs to
    the target, were the target reached for good the first time it is reached."""
    share = space.share(weight)
    curve = [
        (hits, problem.more_misordered_than(allowed, share, hits * space.comparisons_per_hit)[0])
        for hits in grid
    ]
    return hits_for(0.5, curve)


def sampled_more_misordered_than(
    problem: Problem, allowed: int, share: np.ndarray, comparisons: float, draws: int, seed: int
) -> float:
    """`more_misordered_than` by sampling the normal approximation itself (pairs sharing a
    system are misordered together more often), to check the independence it assumes."""
    estimates = np.random.default_rng(seed).multivariate_normal(
        problem.rating, problem.covariance(share, comparisons), size=draws, method="eigh"
    )
    first, second = problem.scored[:, 0], problem.scored[:, 1]
    truth = np.sign(problem.rating[first] - problem.rating[second])
    misordered = (np.sign(estimates[:, first] - estimates[:, second]) != truth).sum(axis=1)
    return float((misordered > allowed).mean())


def print_table(rows: list[dict], describe, grid) -> None:
    for row in rows:
        best = "; ".join(
            f"{name} {b['hits']:.0f} HITs ({b['ratio']:.2f})"
            if b["hits"]
            else f"{name} not within {grid[-1]:.0f} HITs"
            for name, b in row["best"].items()
        )
        print(
            f"{row['hits']:>6.0f} HITs: balanced {describe(row['balanced'])};"
            f" the best design for the same: {best}"
        )


def main() -> None:
    parser = simulation_tools.ratings_parser(__doc__)
    parser.add_argument(
        "--allowed",
        type=int,
        default=1,
        help="misordered pairs the simulator's target allows (E2E quality: 1 of 191)",
    )
    parser.add_argument(
        "--save-design",
        type=Path,
        help="write the best design of HITs for the target, at the HITs it needs for"
        " balanced's median, as JSON for simulate_campaign.py --design",
    )
    args = parser.parse_args()

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
    grid = [oracle.hits * f / 10 for f in range(1, 21)]
    print(
        f"{len(problem.scored)} pairs in different clusters of the truth; balanced design:"
        f" {balanced.name}{'' if hits_space else ' (too many HITs to list: pairs only)'}"
    )
    print("Expected misordered pairs (the same mean):")
    checkpoints = [round(oracle.hits * f) for f in (0.2, 0.4, 0.6, 0.8, 1.0, 2.0)]
    rows = bound_table(problem.expected_misordered, spaces, balanced, checkpoints, grid)
    print_table(rows, lambda level: f"{level:.2f} misordered expected", grid)

    print(f"The target, at most {args.allowed} misordered (the chance of missing it):")
    missing = partial(problem.more_misordered_than, args.allowed)
    uniform = balanced.uniform()
    long_grid = [oracle.hits * f / 10 for f in range(5, 41)]
    median = median_hits_to_target(problem, args.allowed, balanced, uniform, long_grid)
    checkpoints = sorted({oracle.hits, 2 * oracle.hits, *([round(median)] if median else [])})
    rows = bound_table(missing, spaces, balanced, checkpoints, long_grid[:16])
    print_table(rows, lambda level: f"misses it with chance {level:.2f}", long_grid)
    if median:
        check_independence(problem, args.allowed, balanced, round(median))
    if args.save_design and hits_space and median:
        needed = next(r for r in rows if r["hits"] == round(median))["best"]["hits"]["hits"]
        _, weight = hits_space.best(missing, needed or median)
        save_design(args.save_design, hits_space, weight, list(oracle.available()))
        print(f"The best design of HITs for {needed:.0f} HITs: {args.save_design}")


def save_design(path: Path, space: DesignSpace, weight: np.ndarray, items: list[int]) -> None:
    """Each HIT of the design that gets any weight: its item (the oracle's index), its
    systems and its share of its item's HITs."""
    assert space.hits is not None
    per_item = np.bincount(space.group, weights=weight)
    within = weight / per_item[space.group]
    kept = np.nonzero(within > 1e-9)[0]
    design = {
        "item": [items[space.group[u]] for u in kept],
        "systems": [list(space.hits[u]) for u in kept],
        "share": within[kept].tolist(),
    }
    path.write_text(json.dumps(design))


def check_independence(problem: Problem, allowed: int, space: DesignSpace, hits: int) -> None:
    """At balanced's median HITs to the target, the chance of missing it for balanced and
    for the best design with the same HITs, assuming independent pairs and sampled."""
    comparisons = hits * space.comparisons_per_hit
    missing = partial(problem.more_misordered_than, allowed)
    for name, weight in (("balanced", space.uniform()), ("best", space.best(missing, hits)[1])):
        share = space.share(weight)
        independent, _ = missing(share, comparisons)
        sampled = sampled_more_misordered_than(
            problem, allowed, share, comparisons, CHECK_DRAWS, seed=0
        )
        print(
            f"  {name} design, {hits} HITs: misses the target with chance {independent:.3f}"
            f" (pairs independent), {sampled:.3f} (sampled, {CHECK_DRAWS} draws)"
        )


if __name__ == "__main__":
    main()
