"""Which systems a new HIT shows: the balanced rule and the active one, as pure functions.

The hand-out (annotation/composition.py) reads, for each system with an output on the
chosen item, its kept load and its online TrueSkill estimate (mu, sigma), and asks
`compose` for k of them. Nothing here touches a database, so the simulator and the tests
call the same code the platform runs.

Online estimate: two-player TrueSkill (Herbrich et al. 2006) in closed form, every pair of
a submitted HIT in turn (higher score wins, equal scores draw), tau = 0: a static skill,
so sigma only shrinks. Its constants are on a scale of its own (mu0 = 0, sigma0 = 1,
beta = 1); only the order of the mus and their sigmas matter to the policy.

Active composition is the balanced rule with each system's load weighed by how much its
order is still in doubt: the k candidates with the fewest judgments per unit of doubt,

    (load + 1) / (DOUBT_FLOOR + doubt),  doubt = sum over the item's other candidates j
                                                 of exp(-(z / DOUBT_WIDTH)^2 / 2),
                                                 z = |mu - mu_j| / s,

s^2 the two variances summed: 1 for a pair that cannot be told apart, near 0 for one
settled far beyond doubt. A system that more comparisons will not move (a clear winner) is
shown less; systems in a crowd of rivals more. The width is wide on purpose. The online z
is calibrated (research/online_calibration.py: under balanced HITs, pairs at z 1-2 are
misordered 7.6% of the time against Phi(-z)'s 7.3%), so width 1 would weigh each rival by
the chance that it is still misordered; but that drops a clear winner within a few hundred
HITs, before the bootstrap's 95% ranks can single it out. In the simulator, widths 1, 2 and
4 order the systems equally well (40 seeds on E2E quality; "Does it pay?" in
docs/research-active-composition.md), and width 4 finds the best system about when balanced
HITs do (after 675 HITs against 600; width 1: 1,125). The opponents stay those of the
balanced rule otherwise (the k least judged per unit of doubt), not the closest pairs: with
real judgments the order a Bradley-Terry or TrueSkill fit converges to depends on who met
whom, and HITs built from adjacent pairs (the separation value s * pdf(|d| / s - 2), windows
of adjacent systems, the oracle's own best design) moved close pairs to the wrong side of
the balanced campaign's order in the simulator ("Does it pay?" in
docs/research-active-composition.md).

Active composition spends only the early budget: once the criterion has had
ACTIVE_PER_PAIR comparisons per pair of systems on average, every HIT is composed as a
balanced one. Unevenly sampled pairs bias the resampling estimators (the E2E protocol
most), and balanced HITs, taking the least judged systems, even the loads out again. Before
that, a configurable share of HITs (default 20%) is composed balanced too, so every system
keeps meeting every other.
"""

import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

BALANCED = "balanced"
ACTIVE = "active"

_NORMAL = NormalDist()


@dataclass(frozen=True)
class OnlineParams:
    mu0: float = 0.0
    sigma0: float = 1.0
    beta: float = 1.0
    draw_probability: float = 0.25

    @property
    def draw_margin(self) -> float:
        return _NORMAL.inv_cdf((self.draw_probability + 1) / 2) * math.sqrt(2) * self.beta


ONLINE = OnlineParams()

# Comparisons per pair of systems, on average in the criterion, after which every HIT is
# composed balanced (module docstring). E2E quality: 21 systems, about 1,050 HITs of 5.
ACTIVE_PER_PAIR = 50
# Doubt added to every system's, so that a settled one still gets a HIT now and then.
DOUBT_FLOOR = 0.05
# How far apart, in standard deviations of their difference, two systems still count as
# rivals: doubt falls to exp(-1/2) at DOUBT_WIDTH z (module docstring).
DOUBT_WIDTH = 4.0

Rating = tuple[float, float]  # (mu, sigma)


def _pdf(x: float) -> float:
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def rate_1vs1(
    winner: Rating, loser: Rating, drawn: bool, params: OnlineParams = ONLINE
) -> tuple[Rating, Rating]:
    """New (winner, loser) ratings after one game; for a draw the two only name the pair.
    The `trueskill` package's rate_1vs1 with tau = 0 and the scipy backend, in closed form."""
    (mu_w, sigma_w), (mu_l, sigma_l) = winner, loser
    var_w, var_l = sigma_w**2, sigma_l**2
    c2 = 2 * params.beta**2 + var_w + var_l
    c = math.sqrt(c2)
    t, eps = (mu_w - mu_l) / c, params.draw_margin / c
    if drawn:
        a, b = eps - abs(t), -eps - abs(t)
        denom = max(_cdf(a) - _cdf(b), 1e-300)
        v = (_pdf(b) - _pdf(a)) / denom * (-1 if t < 0 else 1)
        w = v * v + (a * _pdf(a) - b * _pdf(b)) / denom
    else:
        x = t - eps
        denom = _cdf(x)
        v = _pdf(x) / denom if denom > 1e-300 else -x
        w = v * (v + x)
    w = min(max(w, 0.0), 1.0 - 1e-12)  # keep sigma positive where rounding would not
    new_w = (mu_w + var_w / c * v, math.sqrt(var_w * (1 - var_w / c2 * w)))
    new_l = (mu_l - var_l / c * v, math.sqrt(var_l * (1 - var_l / c2 * w)))
    return new_w, new_l


def rate_hit(ratings: dict, scores: Sequence[tuple], params: OnlineParams = ONLINE) -> int:
    """Apply one HIT's k(k-1)/2 comparisons to `ratings` (key -> (mu, sigma), updated in
    place; a key not there starts at the prior). `scores` is (key, score) per slot in slot
    order; pairs of one key with itself are skipped. Returns the comparisons applied."""
    applied = 0
    for i, (a, score_a) in enumerate(scores):
        for b, score_b in scores[i + 1 :]:
            if a == b:
                continue
            prior = (params.mu0, params.sigma0)
            ra, rb = ratings.get(a, prior), ratings.get(b, prior)
            if score_b > score_a:
                ratings[b], ratings[a] = rate_1vs1(rb, ra, False, params)
            else:
                ratings[a], ratings[b] = rate_1vs1(ra, rb, score_a == score_b, params)
            applied += 1
    return applied


def compared(scores: Sequence[tuple]) -> Counter:
    """Comparisons each key takes part in among one HIT's (key, score) slots."""
    counts: Counter = Counter()
    for i, (a, _) in enumerate(scores):
        for b, _ in scores[i + 1 :]:
            if a != b:
                counts[a] += 1
                counts[b] += 1
    return counts


def comparisons_per_pair(comparisons: Iterable[int]) -> float:
    """The average comparisons per pair of systems, from each system's comparisons (every
    comparison is counted by both of its systems)."""
    counts = list(comparisons)
    pairs = len(counts) * (len(counts) - 1) / 2
    return sum(counts) / 2 / pairs if pairs else 0.0


def doubt(a: Rating, b: Rating) -> float:
    """exp(-(z / DOUBT_WIDTH)^2 / 2), z = |mu_a - mu_b| / sqrt(var_a + var_b): 1 for a pair
    that cannot be told apart, near 0 for one settled far beyond doubt."""
    s2 = a[1] ** 2 + b[1] ** 2
    if s2 <= 0:
        return 1.0 if a[0] == b[0] else 0.0
    return math.exp(-((a[0] - b[0]) ** 2) / s2 / DOUBT_WIDTH**2 / 2)


@dataclass(frozen=True)
class Candidate:
    """A system with an output on the item: its loads and its online estimate."""

    key: int
    load: int  # its live judgments in the criterion
    load_on_item: int  # its live slots on this item
    rating: Rating | None  # None: no estimate yet (the prior)


def balanced(candidates: Sequence[Candidate], k: int, rng: random.Random) -> list[Candidate]:
    """The k least loaded, then least shown with the item; ties at random."""
    shuffled = list(candidates)
    rng.shuffle(shuffled)  # the sort is stable: equal loads stay in random order
    shuffled.sort(key=lambda c: (c.load, c.load_on_item))
    return shuffled[:k]


def least_settled(
    candidates: Sequence[Candidate], k: int, rng: random.Random, params: OnlineParams = ONLINE
) -> list[Candidate]:
    """The k candidates with the fewest judgments per unit of doubt, then least shown with
    the item; ties at random (module docstring)."""
    prior = (params.mu0, params.sigma0)
    ratings = {c.key: c.rating or prior for c in candidates}
    in_doubt = {
        c.key: sum(doubt(ratings[c.key], ratings[o.key]) for o in candidates if o is not c)
        for c in candidates
    }
    shuffled = list(candidates)
    rng.shuffle(shuffled)
    shuffled.sort(key=lambda c: ((c.load + 1) / (DOUBT_FLOOR + in_doubt[c.key]), c.load_on_item))
    return shuffled[:k]


def compose(
    candidates: Sequence[Candidate],
    k: int,
    policy: str,
    balanced_share: float,
    rng: random.Random | None = None,
    per_pair: float = 0.0,
) -> tuple[list[Candidate], str]:
    """k of the candidates for a new HIT, and the policy that chose them: `balanced`, or
    under `active` the least judged per unit of doubt about their order, except for a
    `balanced_share` of HITs and for every HIT once the criterion has had `per_pair`
    >= ACTIVE_PER_PAIR comparisons per pair of systems (`comparisons_per_pair`)."""
    rng = rng or random.Random(random.getrandbits(64))  # seeded by random.seed too
    if policy != ACTIVE or per_pair >= ACTIVE_PER_PAIR:
        return balanced(candidates, k, rng), BALANCED
    if rng.random() >= balanced_share:
        return least_settled(candidates, k, rng), ACTIVE
    return balanced(candidates, k, rng), BALANCED
