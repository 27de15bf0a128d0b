"""Bradley-Terry strengths, Chatbot Arena's model, with claims that hold for the whole table.

The fit is Arena's (FastChat's ``elo_analysis.py``, ``compute_elo_mle_with_tie``):
P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400)) by maximum likelihood over every
comparison, a draw counting as half a win each way; each system's rating R is the fit to
all comparisons. What Arena does next claims too much for a campaign here, and is not kept:
it resamples single comparisons, but the comparisons of one page share its outputs and
every page of an input shares the input's (E2E judged each output three times), so its
intervals come out narrow (on campaigns of identical systems they held the truth 64-75% of
the time); and it reads every pair of intervals on its own, so with 21 systems some pair
looks apart in most campaigns of identical systems.

Here the resamples draw whole units (the items: ranking/engine/units.py), R times, and the
claims come from each pair's difference over its spread across those resamples, with Holm's
step-down over all pairs (ranking/engine/joint.py): a system's rank is 1 + the systems
claimed better (Arena's rank, held for the whole table), its rank set and cluster follow
from the claims, and its interval is a comparison interval, apart from another only where
the pair is claimed.

Fast: a unit's comparisons are counted per pair (its wins of a over b, draws half each way),
so a resample's win matrix is the units' counts weighted by how often each was drawn (one
sparse product per chunk of resamples), and every resample is fitted at once by Newton's
method on n x n win matrices (the Hessian is a weighted graph Laplacian, solved in a batch).

Where the data order nothing, nothing is claimed: pairs in different pieces of the
comparison graph (Comparisons.components) are never compared (the virtual draws below tie
the pieces together, but they are no evidence).

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
from typing import TYPE_CHECKING

import numpy as np

from .comparisons import Comparisons
from .joint import PairStatistics, resampled_claims
from .progress import Progress
from .units import UnitPairs, bootstrap_weights, with_units

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

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

    ``rating`` is the fit to all comparisons; ``rating_std`` its spread over resamples of
    whole units (items); the claims (ranking/engine/joint.py: Holm over every two systems'
    studentized difference) give ``rank`` (1 + the systems claimed better, Arena's rank
    held for the whole table), ``rank_lo``/``rank_hi`` (the rank sets), ``cluster`` and the
    comparison intervals ``ci_lo``/``ci_hi`` (apart only for a claimed pair). ``order``: best
    first, by rank, then by rating.
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
    cluster: np.ndarray  # int64[n]
    n_comparisons: np.ndarray  # int64[n]
    order: np.ndarray  # int64[n]
    augmented_rounds: int  # resamples that needed the virtual draws
    augmented_full_fit: bool
    pairs: PairStatistics | None = None


def bradley_terry_protocol(
    comparisons: Comparisons,
    n_systems: int,
    rounds: int,
    seed: int | np.random.Generator,
    progress: Progress | None = None,
    weigh: Weighing | None = None,
) -> BradleyTerryRanking:
    """Fit all comparisons, then ``rounds`` resamples of whole units (the items of
    Comparisons.unit; without them each comparison is its own unit); claims from the
    resamples. ``weigh``, if given, reweighs every win matrix before its fit."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    pairs = UnitPairs.of(with_units(comparisons))
    outcomes = PairOutcomes.count_of(comparisons, n_systems)
    wins = win_matrices(outcomes, outcomes.count[None], n_systems)
    full, augmented_full = fit_ratings(weigh(wins) if weigh else wins)
    boot, augmented = unit_bootstrap_ratings(pairs, n_systems, rounds, seed, progress, weigh)
    compared = outcomes.per_system(n_systems) > 0
    components = outcomes.components(n_systems)
    comparable = (components[:, None] == components[None, :]) & compared[:, None] & compared
    # Every system has a place: one never compared could be anywhere (its ranks span them
    # all), and only comparable pairs are ever claimed.
    everyone = np.ones(n_systems, dtype=bool)
    statistics = resampled_claims(
        full[0], boot, everyone, comparable, pairs.n_units, pairs.units_per_pair(n_systems)
    )
    claims = statistics.claims
    covariance = np.cov(boot, rowvar=False) if rounds > 1 else np.zeros((n_systems,) * 2)
    ci_lo, ci_hi = claims.comparison_interval(full[0], np.atleast_2d(covariance))
    rank = claims.rank_lo
    return BradleyTerryRanking(
        protocol="bt",
        rounds=rounds,
        seed=int(seed) if isinstance(seed, int | np.integer) else None,
        rating=full[0],
        rating_std=boot.std(axis=0),
        ci_lo=ci_lo,
        ci_hi=ci_hi,
        rank=rank,
        rank_lo=claims.rank_lo,
        rank_hi=claims.rank_hi,
        cluster=claims.cluster,
        n_comparisons=outcomes.per_system(n_systems),
        order=np.lexsort((-full[0], rank)),
        augmented_rounds=augmented,
        augmented_full_fit=bool(augmented_full),
        pairs=statistics,
    )


def unit_bootstrap_ratings(
    pairs: UnitPairs,
    n_systems: int,
    rounds: int,
    seed: int | np.random.Generator,
    progress: Progress | None = None,
    weigh: Weighing | None = None,
) -> tuple[np.ndarray, int]:
    """Ratings of ``rounds`` resamples of the units (float64[rounds, n]) and how many needed
    the virtual draws. A resample draws U units with replacement and takes every comparison
    of each drawn unit as many times as it was drawn: the win matrices are the units'
    weighted sums, one sparse product per chunk of resamples."""
    rng = np.random.default_rng(seed)
    per_unit = unit_win_matrix(pairs, n_systems)
    ratings = np.empty((rounds, n_systems))
    augmented = 0
    for start in range(0, rounds, _CHUNK):
        stop = min(start + _CHUNK, rounds)
        weights = bootstrap_weights(pairs.n_units, stop - start, rng)
        wins = np.asarray((per_unit.T @ weights.T).T).reshape(-1, n_systems, n_systems)
        ratings[start:stop], needed = fit_ratings(weigh(wins) if weigh else wins)
        augmented += int(needed.sum())
        if progress is not None:
            progress(stop, rounds)
    return ratings, augmented


def unit_win_matrix(pairs: UnitPairs, n_systems: int) -> "csr_matrix":
    """(U, n * n) sparse: each unit's wins of a over b at a * n + b, a draw half each way."""
    from scipy.sparse import csr_matrix  # noqa: PLC0415 - scipy loads slowly

    won_first = 0.5 * (pairs.count + pairs.net)
    won_second = 0.5 * (pairs.count - pairs.net)
    rows = np.concatenate([pairs.unit, pairs.unit])
    cells = np.concatenate(
        [pairs.first * n_systems + pairs.second, pairs.second * n_systems + pairs.first]
    )
    return csr_matrix(
        (np.concatenate([won_first, won_second]), (rows, cells)),
        shape=(pairs.n_units, n_systems * n_systems),
    )


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
    from scipy.special import expit  # noqa: PLC0415 - scipy loads slowly

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


def reference_ratings(comparisons: Comparisons, n_systems: int) -> np.ndarray:
    """The straightforward fit, to check the fast one against (tests, the benchmark): one
    log-likelihood term per comparison (a draw: half a win each way), minimised from zero by
    scipy's trust-exact with the exact Hessian, then the same gauge (mean 1000). Only for
    data whose estimate exists.

    Arena's L-BFGS-B stops where its line search no longer sees the loss fall, about 5e-7
    rating points from the optimum on E2E quality; trust-exact stops on the gradient, within
    about 2e-9 points of it."""
    from scipy.optimize import minimize  # noqa: PLC0415 - scipy loads slowly
    from scipy.special import expit, log_expit  # noqa: PLC0415 - scipy loads slowly

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
