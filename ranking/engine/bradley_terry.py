"""Bradley-Terry strengths with bootstrap confidence intervals, as Chatbot Arena computes them.

Arena (FastChat's ``elo_analysis.py``, ``compute_elo_mle_with_tie`` and its bootstrap) fits
P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400)) by maximum likelihood to every comparison,
a draw counting as half a win each way; reports each system's rating R from the fit to all
comparisons, with the 2.5th and 97.5th percentiles of R over bootstrap resamples of the
comparisons as its 95% interval; and ranks a system 1 + the number of systems whose lower
bound lies above its upper bound, ordering the table by that rank, then by rating.

Here the same, fast: the comparisons are counted per pair outcome (i beat j, or i and j drew:
at most 3 n (n - 1) / 2 cells), so a bootstrap resample of the N comparisons is one
multinomial draw of N over those cells, and every resample is fitted at once by Newton's
method on n x n win matrices (the Hessian is a weighted graph Laplacian, solved in a batch).

Where the data order nothing, nothing is claimed: bounds equal up to rounding do not make a
system significantly better, ratings tied in a resample share the span of their ranks, and
where the comparison graph falls into pieces (Comparisons.components) only systems of the
same piece count towards Arena's rank or narrow a rank range (the virtual draws below tie
the pieces together, but they are no evidence). On a connected graph without ties this is
Arena's computation unchanged.

Gauge: ratings are shifted so that their mean is 1000 (mean log-strength 0). Arena's
optimiser, started from zero, keeps that mean too (the gradient of the log-likelihood always
sums to zero); Arena then moves its scale to put one anchor model at a fixed rating, which a
campaign here has no use for.

Where the maximum-likelihood estimate does not exist (some group of systems never lost, or
never won, against the rest: its strength would be infinite; a system never compared is the
extreme case), that fit, and only that one, adds one virtual draw between every two systems.
Arena's optimiser stops such a fit after 100 iterations at some large finite rating; the
virtual draws give a finite rating that does not depend on an iteration limit. How many fits
needed them is reported (``augmented_rounds``, ``augmented_full_fit``).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from .clusters import TIE_TOLERANCE, rank_ranges
from .comparisons import Comparisons
from .protocols import Progress

# rating = RATING_MEAN + RATING_PER_NAT * log(strength): 400 points for odds of 10 to 1.
RATING_PER_NAT = 400.0 / math.log(10.0)
RATING_MEAN = 1000.0
CONFIDENCE = 0.95
VIRTUAL_DRAWS = 1.0  # per pair of systems, in fits whose maximum-likelihood estimate is infinite

# Newton converges quadratically: once a step is this small (in log-strength), the next one
# would be about its square, far below a rating's rounding.
_STEP_TOLERANCE = 1e-10
_MAX_ITERATIONS = 100
# Newton on a logistic likelihood can overshoot from far away; a step longer than this (in
# log-strength: odds of about 7 to 1) is shortened. Near the optimum steps are much shorter.
_MAX_STEP = 2.0
# Resamples fitted together: big enough to vectorise, small enough to report progress.
_CHUNK = 250

# Win matrices (float64[R, n, n]) in, the matrices to fit out: a reweighting of the
# comparisons (benchmarks/simulate_campaign.py weighs every pair equally).
Weighing = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class PairOutcomes:
    """Comparisons counted per outcome: ``winner`` beat ``loser`` ``count`` times, or, where
    ``draw``, the two drew (then ``winner`` < ``loser`` only name the pair)."""

    winner: np.ndarray  # int64[cells]
    loser: np.ndarray  # int64[cells]
    draw: np.ndarray  # bool[cells]
    count: np.ndarray  # int64[cells]

    @classmethod
    def count_of(cls, comparisons: Comparisons, n_systems: int) -> "PairOutcomes":
        winner = comparisons.winner.astype(np.int64)
        loser = comparisons.loser.astype(np.int64)
        draw = comparisons.draw
        first = np.where(draw, np.minimum(winner, loser), winner)
        second = np.where(draw, np.maximum(winner, loser), loser)
        keys, count = np.unique((first * n_systems + second) * 2 + draw, return_counts=True)
        pair, drawn = np.divmod(keys, 2)
        return cls(pair // n_systems, pair % n_systems, drawn.astype(bool), count)

    @classmethod
    def of_counts(
        cls,
        winner: np.ndarray,
        loser: np.ndarray,
        draw: np.ndarray,
        count: np.ndarray,
        n_systems: int,
    ) -> "PairOutcomes":
        """From cells counted elsewhere (ranking/incremental.py adds them up judgment by
        judgment), in count_of's form: a draw's pair smaller number first, the cells in
        count_of's order, none empty. Two cells of one outcome are added together."""
        winner, loser = np.asarray(winner, np.int64), np.asarray(loser, np.int64)
        draw = np.asarray(draw, bool)
        first = np.where(draw, np.minimum(winner, loser), winner)
        second = np.where(draw, np.maximum(winner, loser), loser)
        keys, where = np.unique((first * n_systems + second) * 2 + draw, return_inverse=True)
        total = np.bincount(where.ravel(), np.asarray(count, np.int64), len(keys))
        keep = total > 0
        pair, drawn = np.divmod(keys[keep], 2)
        counted = np.rint(total[keep]).astype(np.int64)
        return cls(pair // n_systems, pair % n_systems, drawn.astype(bool), counted)

    def per_system(self, n_systems: int) -> np.ndarray:
        """int64[n]: the comparisons each system takes part in (Comparisons.per_system)."""
        weight = self.count.astype(np.float64)
        taking_part = np.bincount(self.winner, weight, n_systems)
        taking_part += np.bincount(self.loser, weight, n_systems)
        return np.rint(taking_part).astype(np.int64)

    def components(self, n_systems: int) -> np.ndarray:
        """The pieces of the comparison graph, as Comparisons.components numbers them (the
        same edges, once per cell rather than once per comparison)."""
        as_comparisons = Comparisons(self.winner, self.loser, np.zeros(len(self.count), bool))
        return as_comparisons.components(n_systems)


@dataclass(frozen=True)
class BradleyTerryRanking:
    """Per-system results; every array is indexed by system number.

    ``rating`` is the fit to all comparisons; ``rating_std``, ``ci_lo`` and ``ci_hi`` (the 95%
    percentile interval) and ``rank_lo``/``rank_hi`` (95% rank range, trimmed as for
    TrueSkill) come from the resamples. ``rank`` is Arena's: 1 + the number of systems
    significantly better. ``order``: best first, by rank, then by rating.
    """

    protocol: str
    rounds: int
    seed: int | None
    rating: np.ndarray  # float64[n]
    rating_std: np.ndarray  # float64[n]
    ci_lo: np.ndarray  # float64[n]
    ci_hi: np.ndarray  # float64[n]
    rank: np.ndarray  # int64[n]
    rank_lo: np.ndarray  # int64[n]
    rank_hi: np.ndarray  # int64[n]
    n_comparisons: np.ndarray  # int64[n]
    order: np.ndarray  # int64[n]
    augmented_rounds: int  # resamples that needed the virtual draws
    augmented_full_fit: bool


def bradley_terry_protocol(
    comparisons: Comparisons,
    n_systems: int,
    rounds: int,
    seed: int | np.random.Generator,
    progress: Progress | None = None,
    weigh: Weighing | None = None,
) -> BradleyTerryRanking:
    """Fit all comparisons, then ``rounds`` bootstrap resamples of them; summarise as Arena.
    ``weigh``, if given, reweighs every win matrix (the full one and each resample's) before
    its fit."""
    outcomes = PairOutcomes.count_of(comparisons, n_systems)
    return bradley_terry_of_outcomes(outcomes, n_systems, rounds, seed, progress, weigh)


def bradley_terry_of_outcomes(
    outcomes: PairOutcomes,
    n_systems: int,
    rounds: int,
    seed: int | np.random.Generator,
    progress: Progress | None = None,
    weigh: Weighing | None = None,
) -> BradleyTerryRanking:
    """bradley_terry_protocol of the comparisons counted per pair outcome: everything it
    computes rests on those counts (the fits, the resamples, the graph's pieces, each
    system's comparisons), so counts added up as judgments come give the same ranking."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    wins = win_matrices(outcomes, outcomes.count[None], n_systems)
    full, augmented_full = fit_ratings(weigh(wins) if weigh else wins)
    boot, augmented = bootstrap_ratings(outcomes, n_systems, rounds, seed, progress, weigh)
    ci_lo, ci_hi = np.percentile(boot, [50 * (1 - CONFIDENCE), 50 * (1 + CONFIDENCE)], axis=0)
    components = outcomes.components(n_systems)
    rank = arena_rank(ci_lo, ci_hi, components)
    rank_lo, rank_hi = rank_ranges(boot, CONFIDENCE, components)
    return BradleyTerryRanking(
        protocol="bt",
        rounds=rounds,
        seed=int(seed) if isinstance(seed, int | np.integer) else None,
        rating=full[0],
        rating_std=boot.std(axis=0),
        ci_lo=ci_lo,
        ci_hi=ci_hi,
        rank=rank,
        rank_lo=rank_lo.astype(np.int64),
        rank_hi=rank_hi.astype(np.int64),
        n_comparisons=outcomes.per_system(n_systems),
        order=np.lexsort((-full[0], rank)),
        augmented_rounds=augmented,
        augmented_full_fit=bool(augmented_full),
    )


def bootstrap_ratings(
    outcomes: PairOutcomes,
    n_systems: int,
    rounds: int,
    seed: int | np.random.Generator,
    progress: Progress | None = None,
    weigh: Weighing | None = None,
) -> tuple[np.ndarray, int]:
    """Ratings of ``rounds`` resamples (float64[rounds, n]) and how many were augmented.

    Resampling N comparisons with replacement draws each pair outcome a multinomial number
    of times, in proportion to how often it was observed: the same distribution as drawing
    N rows, at the cost of the cells rather than the comparisons.
    """
    rng = np.random.default_rng(seed)
    total = int(outcomes.count.sum())
    probabilities = outcomes.count / total
    ratings = np.empty((rounds, n_systems))
    augmented = 0
    for start in range(0, rounds, _CHUNK):
        stop = min(start + _CHUNK, rounds)
        counts = rng.multinomial(total, probabilities, size=stop - start)
        wins = win_matrices(outcomes, counts, n_systems)
        ratings[start:stop], needed = fit_ratings(weigh(wins) if weigh else wins)
        augmented += int(needed.sum())
        if progress is not None:
            progress(stop, rounds)
    return ratings, augmented


def win_matrices(outcomes: PairOutcomes, counts: np.ndarray, n_systems: int) -> np.ndarray:
    """float64[R, n, n]: wins[r, i, j] = times i beat j in resample r, plus half the draws.

    ``counts`` is int[R, cells]. Within each assignment below the target cells are distinct
    (one cell per ordered pair for wins, per unordered pair for draws), so ``+=`` on a fancy
    index adds every count.
    """
    wins = np.zeros((counts.shape[0], n_systems * n_systems))
    decisive, draw = ~outcomes.draw, outcomes.draw
    wins[:, (outcomes.winner * n_systems + outcomes.loser)[decisive]] += counts[:, decisive]
    half = 0.5 * counts[:, draw]
    wins[:, (outcomes.winner * n_systems + outcomes.loser)[draw]] += half
    wins[:, (outcomes.loser * n_systems + outcomes.winner)[draw]] += half
    return wins.reshape(-1, n_systems, n_systems)


def fit_ratings(wins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood ratings of each win matrix (float64[R, n]) and, per matrix, whether
    it needed the virtual draws because its estimate would have been infinite."""
    needed = ~estimate_exists(wins)
    if needed.any():
        n = wins.shape[1]
        wins = wins.copy()
        wins[needed] += 0.5 * VIRTUAL_DRAWS * (1.0 - np.eye(n))
    return RATING_MEAN + RATING_PER_NAT * fit_log_strengths(wins), needed


def estimate_exists(wins: np.ndarray) -> np.ndarray:
    """bool[R]: the maximum-likelihood estimate is finite, which holds exactly when every
    system reaches every other along "beat (or drew with)" edges (Zermelo 1929, Ford 1957):
    the win graph is strongly connected. Reachability by repeated squaring."""
    n = wins.shape[1]
    reach = ((wins > 0) | np.eye(n, dtype=bool)).astype(np.float64)
    for _ in range(max(1, math.ceil(math.log2(max(n - 1, 1))))):
        reach = (reach @ reach > 0).astype(np.float64)
    return np.asarray(reach.reshape(reach.shape[0], -1).all(axis=1))


def fit_log_strengths(wins: np.ndarray) -> np.ndarray:
    """Newton's method on the Bradley-Terry log-likelihood, for every matrix at once.

    With theta the log-strengths and p_ij = P(i beats j) = expit(theta_i - theta_j), the
    gradient is won_i - sum_j games_ij p_ij and the negative Hessian the Laplacian of the
    weights games_ij p_ij (1 - p_ij). The Laplacian is singular along theta + c (the gauge);
    adding the all-ones matrix / n fixes c: the steps then sum to zero, as the gradient does,
    so theta keeps mean zero. Returns float64[R, n] with mean zero per row.
    """
    r, n, _ = wins.shape
    games = wins + wins.transpose(0, 2, 1)
    won = wins.sum(axis=2)
    theta = np.zeros((r, n))
    gauge = np.full((n, n), 1.0 / n)
    for _ in range(_MAX_ITERATIONS):
        p = expit(theta[:, :, None] - theta[:, None, :])
        gradient = won - (games * p).sum(axis=2)
        weights = games * p * (1.0 - p)
        laplacian = -weights
        laplacian[:, np.arange(n), np.arange(n)] += weights.sum(axis=2)
        step = np.linalg.solve(laplacian + gauge, gradient[:, :, None])[:, :, 0]
        longest = np.abs(step).max(axis=1, keepdims=True)
        theta += step * (_MAX_STEP / np.maximum(longest, _MAX_STEP))
        if longest.max() < _STEP_TOLERANCE:
            return theta - theta.mean(axis=1, keepdims=True)
    raise FloatingPointError("the Bradley-Terry fit did not converge")


def arena_rank(
    ci_lo: np.ndarray, ci_hi: np.ndarray, components: np.ndarray | None = None
) -> np.ndarray:
    """1 + the number of systems significantly better: whose lower bound is above this
    system's upper bound (a system's own bounds never count: lo <= hi). Bounds that differ
    by rounding only are equal. With ``components`` (Comparisons.components), only systems
    of the same piece of the comparison graph count: across pieces the ratings rest on the
    virtual draws alone, which order nothing."""
    tolerance = TIE_TOLERANCE * max(1.0, float(np.abs(ci_hi).max(initial=0.0)))
    better = ci_lo[None, :] > ci_hi[:, None] + tolerance
    if components is not None:
        better &= components[None, :] == components[:, None]
    return 1 + better.sum(axis=1)


def reference_ratings(comparisons: Comparisons, n_systems: int) -> np.ndarray:
    """The straightforward fit, to check the fast one against (tests, the benchmark): one
    log-likelihood term per comparison (a draw: half a win each way), minimised from zero by
    scipy's trust-exact with the exact Hessian, then the same gauge (mean 1000). Only for
    data whose estimate exists.

    Arena's L-BFGS-B stops where its line search no longer sees the loss fall, about 5e-7
    rating points from the optimum on E2E quality; trust-exact stops on the gradient, within
    about 2e-9 points of it."""
    winner, loser = comparisons.winner, comparisons.loser
    won = np.where(comparisons.draw, 0.5, 1.0)  # the winner's share of each comparison

    def loss_and_gradient(theta: np.ndarray) -> tuple[float, np.ndarray]:
        d = theta[winner] - theta[loser]
        loss = -(won * log_expit(d) + (1.0 - won) * log_expit(-d)).sum()
        slope = expit(d) - won  # d loss / d theta_winner, per comparison
        gradient = np.bincount(winner, slope, n_systems) - np.bincount(loser, slope, n_systems)
        return float(loss), gradient

    def hessian(theta: np.ndarray) -> np.ndarray:
        p = expit(theta[winner] - theta[loser])
        weight = p * (1.0 - p)
        h = np.zeros((n_systems, n_systems))
        np.add.at(h, (winner, winner), weight)
        np.add.at(h, (loser, loser), weight)
        np.add.at(h, (winner, loser), -weight)
        np.add.at(h, (loser, winner), -weight)
        return h

    fit = minimize(
        loss_and_gradient,
        np.zeros(n_systems),
        jac=True,
        hess=hessian,
        method="trust-exact",
        options={"gtol": 1e-9},
    )
    return RATING_MEAN + RATING_PER_NAT * (fit.x - fit.x.mean())
