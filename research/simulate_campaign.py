"""Replay a RankME campaign through the platform's own hand-out, with an oracle that answers
from published ratings, and measure how fast each composition policy gets the ranking right.

    python research/simulate_campaign.py --ratings ../shared/data/e2e/human_ratings/quality.csv \\
        --criterion quality --seeds 5 --policies balanced,active \\
        --json docs/simulation-e2e-quality.json --plot docs/simulation-e2e-quality.png

The campaign: the file's items (MRs), systems and outputs (every (item, system) pair that
the file judges, with its text), in a fresh SQLite database migrated as production is; HITs
of k = the file's page size, at most 20 per annotator, no minimum time. Each HIT is handed
out by `annotation.handout.assignment.next_assignment` and submitted by
`tests.handout.submit` (the criterion's policy set as an organiser would set
it), so the online estimate, the
loads and the policies are the platform's own.

The oracle answers each HIT independently: for each system shown, a score drawn uniformly
at random (with replacement) from that system's real scores on the same item in FILE, or,
where the file has none (never, since the platform shows only outputs the file judged), from
all its real scores. Identical outputs are shown once (the platform merges them) and get the
draw of the first of their systems. Only the order of the scores matters to every estimator.

The truth is what the oracle implies: a balanced simulation of five times the file's HITs,
composed by the balanced rule itself (the least judged systems of the least used item)
without the database for speed (`replay_in_memory`), ranked by Bradley-Terry with
1,000 bootstrap resamples; its clusters come from the 95% rank ranges as E2E's do
(`ranking.engine.clusters`). Agreement at a checkpoint is the share of system pairs that the
truth puts in different clusters which the estimate orders as the truth does; the Spearman
correlation with the truth's ratings is given for reference; the best system is identified
when the estimate's cluster 1 holds the truth's best system alone.

Estimators at each checkpoint, on the judgments collected so far: `bt` (Bradley-Terry
maximum likelihood for the order; 200 bootstrap resamples for the clusters), `e2e` (the
E2E protocol, 50 runs rather than 200 to keep checkpoints cheap) and, for comparison,
`bt-pairs` (Bradley-Terry with each pair's comparisons scaled to the same total: every
pair's win rate weighs the same however often the policy showed it, as under balanced
HITs) and `cells` (`cells_ranking`: scores compared across HITs on the same item, so that the
order it converges to does not depend on who met whom; it takes a score to mean the same in
every HIT, as the oracle's do, which real annotators' magnitudes only approximate). The
target is the agreement that the balanced policy reaches with the file's number of HITs
(median over seeds); a policy reaches it at the first checkpoint from which its
agreement stays at or above it; each run collects up to twice the file's HITs. Since that
median hangs on the last few pairs of each run, the summary also gives, at each checkpoint,
the HITs balanced HITs need for the policy's mean agreement (`same_mean`).

`--reuse FILE` takes the balanced runs from a JSON this script wrote before (same ratings,
criterion, checkpoints, estimators, replay and first seed) instead of replaying them: the
balanced policy's code and a seed's random draws fix its run, so only changed policies need
replaying.

`--in-memory` replays every policy without the database (`replay_in_memory`: the least used
item, then `nlgdata.composition.compose` on loads and an online estimate kept in memory),
about thirty times faster, for sweeps over many seeds (`--first-seed`) and settings
(`--doubt-width`, `--per-pair`, `--share`); the database replay is the reference, since it
is the platform's own hand-out. `--without-item-spread` hides each system's slots on the
item from the policies, as the truth's replay does: the balanced rule then no longer shows
every system with an item before any twice (docs/research-active-composition.md says what
that costs). The `guided` policy, in memory only, is the active rule told the truth's order:
a bound on what weighing loads by doubt could buy, not a policy the platform offers.

`--oracle model` answers from the rankings' own model instead (`ModelOracle`: Bradley-Terry
at the file's implied ratings, times `--model-scale`), against the file's truth's clusters:
a control where no design can bias the estimate. The `designed` policy, in memory only,
replays a fixed design (`--design`, written by best_design.py --save-design).

The JSON's truth also gives `implied_rating`, the order the oracle implies with infinitely
many balanced HITs, and the pairs on which the simulated truth departs from it.
"""

import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import django
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
WORK = Path(tempfile.mkdtemp(prefix="simulate-campaign-"))
os.environ.update(
    DATABASE_URL=f"sqlite:///{WORK / 'campaign.sqlite3'}",
    SECRET_KEY=os.environ.get(
        "SECRET_KEY", "benchmark-only-key-not-secret-0123456789-abcdefghijklmnopqrstuvwxyz"
    ),
    DEBUG="false",  # DEBUG keeps every query in memory
    DJANGO_SETTINGS_MODULE="evalsite.settings",
)
django.setup()

# The project's modules load only once Django is set up.
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402
from simulation_tools import hits_for, ratings_parser  # noqa: E402

import nlgdata.composition  # noqa: E402
from annotation.datafiles.ratings_import import read_pages  # noqa: E402
from annotation.handout.assignment import next_assignment  # noqa: E402
from annotation.handout.shown import Answer, shown_outputs  # noqa: E402
from annotation.models import (  # noqa: E402
    Annotator,
    Campaign,
    CampaignCriterion,
    Item,
    Output,
    System,
)
from nlgdata.composition import (  # noqa: E402
    ACTIVE,
    BALANCED,
    ONLINE,
    Candidate,
    compared,
    comparisons_per_pair,
    compose,
    rate_hit,
)
from ranking.engine import Comparisons, clusters, e2e_protocol, summarise  # noqa: E402
from ranking.engine.bradley_terry import (  # noqa: E402
    RATING_MEAN,
    RATING_PER_NAT,
    bradley_terry_protocol,
    fit_ratings,
)
from ranking.engine.clusters import rank_ranges  # noqa: E402
from ranking.engine.forecast import stable_since  # noqa: E402
from tests.handout import submit  # noqa: E402

TRUTH_FACTOR, BUDGET_FACTOR = 5, 2
# The `guided` policy: the active rule fed the truth's order (`replay_in_memory`).
GUIDED = "guided"
# The `designed` policy: a fixed design's HITs (`--design`, from best_design.py).
DESIGNED = "designed"
# Bradley-Terry log-strengths to the online estimate's scale: a logistic gap x is about a
# probit gap x / 1.7 (sigma(x) ~ Phi(x / 1.7)), and a two-player TrueSkill gap d with beta 1
# wins with Phi(d / sqrt 2): d ~ x * sqrt(2) / 1.7.
NATS_TO_ONLINE = 2**0.5 / 1.7
TRUTH_ROUNDS, BT_ROUNDS, E2E_RUNS = 1000, 200, 50
ESTIMATORS = ("bt", "e2e", "bt-pairs", "cells")
HITS_PER_ANNOTATOR = 20


# The oracle -------------------------------------------------------------------------------


@dataclass
class Oracle:
    systems: list[str]
    items: list[tuple[str, dict]]  # (input key, input data)
    texts: dict[tuple[int, int], str]  # (item, system) -> output text
    on_item: dict[tuple[int, int], list[float]]  # (item, system) -> real scores
    overall: dict[int, list[float]]  # system -> all its real scores
    hits: int  # pages in the file
    k: int

    @classmethod
    def read(cls, path: Path, criterion: str) -> "Oracle":
        with path.open(encoding="utf-8-sig") as lines:
            criterion, pages = read_pages(lines, path.name, criterion)
            oracle = cls([], [], {}, defaultdict(list), defaultdict(list), 0, 0)
            system_index: dict[str, int] = {}
            item_index: dict[str, int] = {}
            for page in pages:
                item = item_index.setdefault(page.key, len(item_index))
                if item == len(oracle.items):
                    oracle.items.append((page.key, page.input_data))
                for name, text, score in zip(page.systems, page.texts, page.scores, strict=True):
                    system = system_index.setdefault(name, len(system_index))
                    oracle.texts.setdefault((item, system), text)
                    oracle.on_item[item, system].append(score)
                    oracle.overall[system].append(score)
                oracle.hits += 1
                oracle.k = len(page.systems)
        oracle.systems = list(system_index)
        return oracle

    def score(self, item: int, system: int, rng: random.Random) -> float:
        pool = self.on_item.get((item, system)) or self.overall[system]
        return pool[rng.randrange(len(pool))]

    def available(self) -> dict[int, list[int]]:
        systems: dict[int, list[int]] = defaultdict(list)
        for item, system in self.texts:
            systems[item].append(system)
        return systems


# Rankings and agreement -------------------------------------------------------------------


# A HIT answered: (item, the systems shown, their scores in slot order).
Hit = tuple[int, list[int], list[float]]


def comparisons_of(hits: list[Hit]) -> Comparisons:
    winner, loser, draw = [], [], []
    for _, systems, scores in hits:
        for i in range(len(systems)):
            for j in range(i + 1, len(systems)):
                a, b = (
                    (systems[j], systems[i]) if scores[j] > scores[i] else (systems[i], systems[j])
                )
                winner.append(a)
                loser.append(b)
                draw.append(scores[i] == scores[j])
    return Comparisons(np.array(winner), np.array(loser), np.array(draw))


def pair_weighted(wins: np.ndarray) -> np.ndarray:
    """Win matrices (float64[R, n, n]) with every pair's comparisons scaled to the same total,
    the mean over the pairs that met: a fit then weighs each pair's win rate equally, whoever
    was shown together more often."""
    met = wins + wins.transpose(0, 2, 1)
    totals = np.where(met > 0, met, 1.0)
    mean = met.sum(axis=(1, 2)) / np.maximum((met > 0).sum(axis=(1, 2)), 1)
    return np.where(met > 0, wins * (mean[:, None, None] / totals), 0.0)


def ranked(hits: list[Hit], comparisons: Comparisons, oracle: Oracle, estimator: str, seed: int):
    """(score per system, cluster per system) by the estimator."""
    n = len(oracle.systems)
    if estimator == "cells":
        return cells_ranking(hits, oracle, BT_ROUNDS, seed)
    if estimator in ("bt", "bt-pairs"):
        weigh = pair_weighted if estimator == "bt-pairs" else None
        bt = bradley_terry_protocol(comparisons, n, BT_ROUNDS, seed, weigh=weigh)
        return bt.rating, clusters(bt.rating, bt.rank_lo, bt.rank_hi)
    ranking = summarise(e2e_protocol(comparisons, n, E2E_RUNS, seed))
    return ranking.mean_mu, ranking.cluster


def cells_ranking(hits: list[Hit], oracle: Oracle, rounds: int, seed: int):
    """The `cells` estimator: scores compared across HITs on the same item. For every two
    systems scored on an item, anywhere in the campaign, the chance that one's score beats the
    other's (a draw half) among their scores there; each item weighed as balanced HITs show
    its pairs, k(k-1) / (m(m-1)) for m outputs (`implied_rating`); Bradley-Terry fitted to
    the sum, and to `rounds` bootstrap resamples of the items for the clusters. Where every
    cell is known it is `implied_rating`; the design only decides which cells are known."""
    scored: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for item, systems, scores in hits:
        for system, score in zip(systems, scores, strict=True):
            scored[item][system].append(score)
    outputs = oracle.available()
    per_item = np.array(
        [
            expected_wins(cells, len(oracle.systems), pair_shown(oracle.k, len(outputs[item])))
            for item, cells in scored.items()
        ]
    )
    full, _ = fit_ratings(per_item.sum(axis=0)[None])
    counts = np.random.default_rng(seed).multinomial(
        len(per_item), np.full(len(per_item), 1 / len(per_item)), size=rounds
    )
    boot, _ = fit_ratings(np.einsum("ri,inm->rnm", counts.astype(float), per_item))
    rank_lo, rank_hi = rank_ranges(boot)
    return full[0], clusters(full[0], rank_lo, rank_hi)


def pair_shown(k: int, m: int) -> float:
    """The chance that a HIT of k of an item's m outputs shows a given two of them."""
    return min(1.0, k * (k - 1) / max(m * (m - 1), 1))


def expected_wins(cells: dict[int, list[float]], n: int, shown: float) -> np.ndarray:
    """float64[n, n]: wins[a, b] = `shown` times the chance that a score drawn from a's
    `cells` beats one drawn from b's, a draw counting half; 0 for systems without scores."""
    wins = np.zeros((n, n))
    systems = list(cells)
    values = [np.asarray(cells[s]) for s in systems]
    for a in range(len(systems)):
        for b in range(a + 1, len(systems)):
            above = values[a][:, None] - values[b][None, :]
            won = (above > 0).mean() + (above == 0).mean() / 2
            wins[systems[a], systems[b]] = shown * won
            wins[systems[b], systems[a]] = shown * (1 - won)
    return wins


@dataclass
class Truth:
    rating: np.ndarray
    cluster: np.ndarray
    hits: int

    @property
    def best(self) -> int:
        return int(np.argmax(self.rating))

    def pairs(self) -> list[tuple[int, int]]:
        n = len(self.rating)
        return [
            (i, j) for i in range(n) for j in range(i + 1, n) if self.cluster[i] != self.cluster[j]
        ]

    def agreement(self, scores: np.ndarray, pairs) -> float:
        right = [
            np.sign(scores[i] - scores[j]) == np.sign(self.rating[i] - self.rating[j])
            for i, j in pairs
        ]
        return float(np.mean(right))


def replay_in_memory(
    oracle: Oracle,
    n_hits: int,
    seed: int,
    policy: str = BALANCED,
    share: float = 0.0,
    spread_on_item: bool = True,
    truth: "Truth | None" = None,
    design: "Design | None" = None,
) -> list[Hit]:
    """A campaign without the database: the least used item, then the policy's systems from
    the same pure functions the hand-out calls (`nlgdata.composition.compose`), with the
    loads, each system's slots on each item and the online estimate kept in memory. One
    random stream draws the items, the policy's choices and the oracle's scores.

    `spread_on_item=False` passes no system's slots on the item, so the policies cannot
    prefer a system not yet shown with the item: the truth was first computed that way, and
    keeps its draws (its 15k HITs cover every pair on most items anyway).

    `guided` (needs `truth`) is the active rule told the truth's order: each candidate's mu
    is the truth's rating (NATS_TO_ONLINE), its sigma the online estimate's. No policy could
    know more about which systems are still in doubt, so it bounds what weighing loads by
    doubt can buy.

    `designed` (needs `design`) shows on the item the design's HIT furthest behind its share
    of the item's HITs so far: a fixed design, followed as evenly as the balanced rule
    follows its own."""
    rng = random.Random(seed)
    available = oracle.available()
    used = dict.fromkeys(available, 0)
    load = [0] * len(oracle.systems)
    on_item: Counter = Counter()
    comparisons = [0] * len(oracle.systems)
    ratings: dict = {}
    hits = []
    for _ in range(n_hits):
        fewest = min(used.values())
        item = rng.choice([i for i, n in used.items() if n == fewest])
        candidates = [
            Candidate(s, load[s], on_item[item, s] if spread_on_item else 0, ratings.get(s))
            for s in available[item]
        ]
        if policy == GUIDED:
            candidates = [told(c, truth) for c in candidates]
        if policy == DESIGNED:
            if design is None:
                raise ValueError("the designed policy needs a design")
            systems = design.next_hit(item, used[item], rng)
        else:
            per_pair = comparisons_per_pair(comparisons)
            rule = ACTIVE if policy == GUIDED else policy
            chosen, _ = compose(candidates, oracle.k, rule, share, rng, per_pair)
            systems = [c.key for c in chosen]
        used[item] += 1
        scores = [(s, oracle.score(item, s, rng)) for s in systems]
        for s in systems:
            load[s] += 1
            on_item[item, s] += 1
        if policy != BALANCED:  # balanced reads no estimate: the truth's 15k HITs go faster
            rate_hit(ratings, scores)
            for s, n in compared(scores).items():
                comparisons[s] += n
        hits.append((item, systems, [score for _, score in scores]))
    return hits


class Design:
    """A fixed design of HITs (best_design.py --save-design): per item, HITs (systems) and
    each one's share of the item's HITs."""

    def __init__(self, path: Path) -> None:
        stored = json.loads(path.read_text())
        self.hits: dict[int, list[list[int]]] = defaultdict(list)
        self.share: dict[int, list[float]] = defaultdict(list)
        for item, systems, share in zip(
            stored["item"], stored["systems"], stored["share"], strict=True
        ):
            self.hits[item].append(systems)
            self.share[item].append(share)
        self.shown: Counter = Counter()

    def next_hit(self, item: int, shown_on_item: int, rng: random.Random) -> list[int]:
        """The item's HIT furthest behind its share of the item's HITs, counting this one
        (ties at random); a fresh `Design` per run."""
        behind = [
            share * (shown_on_item + 1) - self.shown[item, n]
            for n, share in enumerate(self.share[item])
        ]
        most = max(behind)
        chosen = rng.choice([n for n, b in enumerate(behind) if b >= most - 1e-12])
        self.shown[item, chosen] += 1
        return self.hits[item][chosen]


def told(candidate: Candidate, truth: "Truth | None") -> Candidate:
    """The candidate with the truth's rating as its mu (the `guided` policy)."""
    if truth is None:
        raise ValueError("the guided policy needs the truth")
    sigma = candidate.rating[1] if candidate.rating else ONLINE.sigma0
    mu = (truth.rating[candidate.key] - RATING_MEAN) / RATING_PER_NAT * NATS_TO_ONLINE
    return replace(candidate, rating=(float(mu), sigma))


def implied_rating(oracle: Oracle) -> np.ndarray:
    """The ratings the oracle implies with infinitely many balanced HITs: Bradley-Terry
    fitted to the expected wins. Balanced HITs give every item the same number of HITs and,
    on an item with m outputs, show each pair in a HIT of k with probability
    k(k-1) / (m(m-1)); the oracle's draws then make i beat j with probability
    P(X_i > X_j) + P(X_i = X_j) / 2, X_i one of i's real scores on the item. It checks the
    simulated truth's order, which carries the noise of one 5x replay."""
    n = len(oracle.systems)
    wins = np.zeros((n, n))
    for item, systems in oracle.available().items():
        cells = {s: oracle.on_item[item, s] for s in systems}
        wins += expected_wins(cells, n, pair_shown(oracle.k, len(systems)))
    ratings, _ = fit_ratings(wins[None])
    return ratings[0]


@dataclass
class ModelOracle(Oracle):
    """The oracle that the rankings' model assumes (`--oracle model`): system i's score is
    `scale` times its implied rating (in nats) plus independent standard Gumbel noise,
    whatever the item and whoever shares the HIT, so i beats j with probability exactly
    logistic(scale (r_i - r_j)), a HIT's order is Plackett-Luce, and Bradley-Terry converges
    to the same order whichever systems meet. It keeps the file's items and outputs; only
    the answers change. A control: what composition buys where no design can bias the
    estimate. The scale sets how hard the order is to learn: the file's real scores tell
    more per comparison than a logistic coin at the same ratings (a system's outputs win or
    lose on an item much more surely than overall), so at scale 1 the order is harder than
    the file's."""

    strength: np.ndarray | None = None  # scaled, nats, per system

    @classmethod
    def following(cls, oracle: Oracle, scale: float) -> "ModelOracle":
        strength = scale * (implied_rating(oracle) - RATING_MEAN) / RATING_PER_NAT
        return cls(**vars(oracle), strength=strength)

    def truth(self, clusters_of: "Truth") -> "Truth":
        """The model's own order, with the clusters of the file's truth: the pairs scored
        are those the file's truth separates."""
        assert self.strength is not None
        return Truth(RATING_MEAN + RATING_PER_NAT * self.strength, clusters_of.cluster, 0)

    def score(self, item: int, system: int, rng: random.Random) -> float:
        assert self.strength is not None
        gumbel = -math.log(rng.expovariate(1.0))
        return RATING_MEAN + RATING_PER_NAT * (float(self.strength[system]) + gumbel)


def truth_of(oracle: Oracle, seed: int) -> Truth:
    hits = replay_in_memory(oracle, TRUTH_FACTOR * oracle.hits, seed, spread_on_item=False)
    bt = bradley_terry_protocol(comparisons_of(hits), len(oracle.systems), TRUTH_ROUNDS, seed)
    return Truth(bt.rating, clusters(bt.rating, bt.rank_lo, bt.rank_hi), len(hits))


# The campaign in the database -------------------------------------------------------------


def build_database(oracle: Oracle, criterion_name: str) -> Path:
    """Migrate a fresh database, fill it with the file's items, systems and outputs, and keep
    a copy to start every run from."""
    call_command("migrate", verbosity=0)
    campaign = Campaign.objects.create(
        slug="simulation",
        name="Simulation",
        status=Campaign.Status.OPEN,
        outputs_per_hit=oracle.k,
        max_hits_per_annotator=HITS_PER_ANNOTATOR,
        min_seconds_per_hit=0,
        # The oracle answers from the file's scores, not as a person reading: no checks.
        attention_check_every=0,
        assignment_timeout_minutes=24 * 60,
    )
    CampaignCriterion.objects.create(
        campaign=campaign, name=criterion_name, shows_input=criterion_name != "naturalness"
    )
    items = Item.objects.bulk_create(
        Item(
            campaign=campaign,
            external_id=str(n),
            input_kind="mr",
            input_data=data,
            input_key=key,
        )
        for n, (key, data) in enumerate(oracle.items)
    )
    systems = System.objects.bulk_create(
        System(campaign=campaign, name=name, key=f"system-{n}")
        for n, name in enumerate(oracle.systems, start=1)
    )
    Output.objects.bulk_create(
        Output(item=items[item], system=systems[system], text=text)
        for (item, system), text in oracle.texts.items()
    )
    connections.close_all()
    template = WORK / "template.sqlite3"
    shutil.copy(WORK / "campaign.sqlite3", template)
    return template


def fresh_campaign(template: Path, policy: str, share: int):
    connections.close_all()
    shutil.copy(template, WORK / "campaign.sqlite3")
    criterion = CampaignCriterion.objects.select_related("campaign").get()
    criterion.composition, criterion.balanced_share = policy, share
    criterion.save(update_fields=["composition", "balanced_share"])
    system_index = {
        pk: n for n, pk in enumerate(System.objects.order_by("pk").values_list("pk", flat=True))
    }
    item_index = {
        pk: n for n, pk in enumerate(Item.objects.order_by("pk").values_list("pk", flat=True))
    }
    return criterion, system_index, item_index


def run_policy(oracle, truth, policy, share, seed, checkpoints, estimators, template) -> dict:
    random.seed(seed)  # the hand-out's own draws
    rng = random.Random(seed + 1_000_003)  # the oracle's
    criterion, system_index, item_index = fresh_campaign(template, policy, share)
    campaign = criterion.campaign
    hits: list[Hit] = []
    curve: dict[str, list] = {e: [] for e in estimators}
    composed = defaultdict(int)
    annotator, started, done_at = None, time.perf_counter(), 0
    while len(hits) < checkpoints[-1]:
        if annotator is None or len(hits) % HITS_PER_ANNOTATOR == 0:
            annotator = Annotator.objects.create(
                campaign=campaign, source="invited", external_id=f"a{len(hits)}"
            )
        assignment = next_assignment(annotator, criterion)
        if assignment is None:
            annotator = None
            continue
        hits.append(answer(oracle, assignment, criterion, system_index, item_index, rng))
        composed[assignment.hit.composition] += 1
        if len(hits) in checkpoints:
            done_at += time.perf_counter() - started
            measure(hits, oracle, truth, estimators, seed, curve)
            started = time.perf_counter()
    done_at += time.perf_counter() - started
    return {"curve": curve, "composed": dict(composed), "hand_out_seconds": done_at}


def run_in_memory(
    oracle,
    truth,
    policy,
    share,
    seed,
    checkpoints,
    estimators,
    spread_on_item=True,
    design_path: Path | None = None,
) -> dict:
    """`run_policy` without the database (`replay_in_memory`): for sweeps over many seeds."""
    started = time.perf_counter()
    design = Design(design_path) if design_path else None
    hits = replay_in_memory(
        oracle, checkpoints[-1], seed, policy, share / 100, spread_on_item, truth, design
    )
    hand_out = time.perf_counter() - started
    curve: dict[str, list] = {e: [] for e in estimators}
    for checkpoint in checkpoints:
        measure(hits[:checkpoint], oracle, truth, estimators, seed, curve)
    return {"curve": curve, "composed": {}, "hand_out_seconds": hand_out}


def measure(hits, oracle: Oracle, truth: Truth, estimators, seed: int, curve: dict) -> None:
    """Append to each estimator's curve its agreement with the truth on `hits`."""
    comparisons = comparisons_of(hits)
    for estimator in estimators:
        scores, cluster = ranked(hits, comparisons, oracle, estimator, seed)
        alone = (cluster == 1).sum() == 1 and cluster[truth.best] == 1
        curve[estimator].append(
            {
                "hits": len(hits),
                "agreement": truth.agreement(scores, truth.pairs()),
                "spearman": float(spearmanr(scores, truth.rating).statistic),
                "best_alone": bool(alone),
                "clusters": cluster.tolist(),
            }
        )


def answer(oracle, assignment, criterion, system_index, item_index, rng):
    item = item_index[assignment.hit.item_id]
    answers, systems, scores = {}, [], []
    for shown in shown_outputs(assignment.hit):
        first = system_index[shown.slots[0].output.system_id]
        score = oracle.score(item, first, rng)
        answers[shown.key] = Answer(score=max(1, round(score)))
        for slot in shown.slots:
            systems.append(system_index[slot.output.system_id])
            scores.append(answers[shown.key].score)
    submit(assignment, criterion, answers, key=f"k{assignment.pk}")
    return item, systems, scores


# Summary ----------------------------------------------------------------------------------


def stays_from(points: list[dict], ok) -> int | None:
    """The first checkpoint from which `ok` holds at every later one."""
    first = None
    for point in points:
        if ok(point):
            first = point["hits"] if first is None else first
        else:
            first = None
    return first


def median_or_none(values: list[int | None]) -> float | None:
    """The median, counting a run that never got there as above every other; None when
    that is where the median falls."""
    ordered = sorted(values, key=lambda v: (v is None, v or 0))
    middle = ordered[(len(ordered) - 1) // 2 : len(ordered) // 2 + 1]
    if any(v is None for v in middle):
        return None
    return float(statistics.mean(middle))  # type: ignore[arg-type]


def closed_when_stable(curve: list[dict], limit: int) -> dict | None:
    """Where a criterion set to close when its clusters have stayed the same for `limit`
    HITs would have closed (ranking.service.note_cluster_stability, with a ranking run at
    every checkpoint): the checkpoint's HITs and agreement, or None if it never closed."""
    since, previous = 0, None
    for point in curve:
        same = previous is not None and point["clusters"] == previous["clusters"]
        since = stable_since(point["hits"], same, previous["hits"] if previous else 0, since)
        if point["hits"] - since >= limit:
            return {"hits": point["hits"], "agreement": point["agreement"]}
        previous = point
    return None


def closing_summary(policy_runs: list[dict], estimator: str, limits: list[int]) -> dict:
    summary = {}
    for limit in limits:
        closed = [closed_when_stable(r["curve"][estimator], limit) for r in policy_runs]
        done = [c for c in closed if c is not None]
        summary[str(limit)] = {
            "per_seed": closed,
            "closed": len(done),
            "hits_median": statistics.median(c["hits"] for c in done) if done else None,
            "agreement_median": statistics.median(c["agreement"] for c in done) if done else None,
        }
    return summary


def mean_curve(policy_runs: list[dict], estimator: str) -> list[tuple[int, float]]:
    """(HITs, mean agreement over the runs) at each checkpoint."""
    points = zip(*(run["curve"][estimator] for run in policy_runs), strict=True)
    return [(ps[0]["hits"], statistics.mean(p["agreement"] for p in ps)) for ps in points]


def same_mean(policy_runs: list[dict], balanced_runs: list[dict], estimator: str) -> list[dict]:
    """At each checkpoint the policy's mean agreement, the HITs balanced HITs need for the
    same mean (`hits_for`), and the ratio: a steadier measure than the median HITs to the
    target, which hangs on the last few pairs of each run."""
    balanced = mean_curve(balanced_runs, estimator)
    rows = []
    for hits, agreement in mean_curve(policy_runs, estimator):
        needed = hits_for(agreement, balanced)
        rows.append(
            {
                "hits": hits,
                "mean_agreement": agreement,
                "balanced_hits": needed,
                "ratio": hits / needed if needed else None,
            }
        )
    return rows


def summarise_runs(
    runs: dict, file_hits: int, estimators: list[str], close_limits: Sequence[int] = ()
) -> dict:
    summary: dict = {}
    for estimator in estimators:
        at_file = [
            next(p["agreement"] for p in run["curve"][estimator] if p["hits"] == file_hits)
            for run in runs[BALANCED]
        ]
        target = statistics.median(at_file)
        per_policy = {}
        for policy, policy_runs in runs.items():
            to_target = [
                stays_from(r["curve"][estimator], lambda p, t=target: p["agreement"] >= t)
                for r in policy_runs
            ]
            to_best = [
                stays_from(r["curve"][estimator], lambda p: p["best_alone"]) for r in policy_runs
            ]
            per_policy[policy] = {
                "hits_to_target": to_target,
                "hits_to_target_median": median_or_none(to_target),
                "hits_to_best": to_best,
                "hits_to_best_median": median_or_none(to_best),
                "same_mean": same_mean(policy_runs, runs[BALANCED], estimator),
            }
            with_clusters = all("clusters" in r["curve"][estimator][0] for r in policy_runs)
            if close_limits and with_clusters:  # runs stored before clusters were kept: none
                per_policy[policy]["close_when_stable"] = closing_summary(
                    policy_runs, estimator, list(close_limits)
                )
        summary[estimator] = {"target": target, "policies": per_policy}
    return summary


def report(summary: dict, file_hits: int) -> str:
    """Per estimator and policy: the medians of HITs to the target and to the best system,
    and the ratio of HITs to balanced's for the same mean agreement at about 20, 40, 60, 80
    and 100% of the file's HITs."""
    lines = []
    for estimator, result in summary.items():
        lines.append(f"{estimator}: target {result['target']:.4f}")
        for policy, numbers in result["policies"].items():
            rows = numbers["same_mean"]
            ratios = []
            for share in (0.2, 0.4, 0.6, 0.8, 1.0):
                row = min(rows, key=lambda r, h=share * file_hits: abs(r["hits"] - h))
                ratios.append(f"{row['ratio']:.2f}" if row["ratio"] else "-")
            lines.append(
                f"  {policy}: HITs to target {numbers['hits_to_target_median']},"
                f" to best {numbers['hits_to_best_median']};"
                f" HITs / balanced's at the same mean, 20-100% of the file: {' '.join(ratios)}"
            )
    return "\n".join(lines)


def plot(path: Path, runs: dict, summary: dict, estimator: str, title: str, pairs: int) -> None:
    """Left, agreement against HITs: each policy's median over seeds, with a band from the
    lowest to the highest; right, the mean misordered pairs (of `pairs`) on a log scale,
    where policies that are level on the left can be told apart."""
    import matplotlib  # noqa: PLC0415 - only for --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    figure, (agreement, misordered) = plt.subplots(1, 2, figsize=(12, 5))
    for policy, policy_runs in runs.items():
        hits = [p["hits"] for p in policy_runs[0]["curve"][estimator]]
        values = np.array([[p["agreement"] for p in r["curve"][estimator]] for r in policy_runs])
        line = agreement.plot(hits, np.median(values, axis=0), label=f"{policy} (median)")[0]
        agreement.fill_between(
            hits, values.min(axis=0), values.max(axis=0), alpha=0.2, color=line.get_color()
        )
        mean_misordered = pairs * (1 - values.mean(axis=0))
        misordered.plot(hits, mean_misordered, color=line.get_color(), label=f"{policy} (mean)")
    agreement.axhline(summary[estimator]["target"], color="grey", linestyle="--", label="target")
    agreement.set_xlabel("HITs collected")
    agreement.set_ylabel("pairs in different true clusters ordered right")
    agreement.legend(loc="lower right")
    misordered.set_yscale("log")
    misordered.set_xlabel("HITs collected")
    misordered.set_ylabel(f"pairs misordered, of {pairs}")
    misordered.legend(loc="upper right")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def replay_of(args) -> str:
    if not args.in_memory:
        return "database"
    return "in memory" + (", without item spread" if args.without_item_spread else "")


def oracle_of(args) -> str:
    return "file" if args.oracle == "file" else f"model, scale {args.model_scale}"


def reusable_runs(path: Path, args, oracle: Oracle, checkpoints: list[int]) -> list[dict]:
    """The balanced runs stored in `path`, seed by seed, if they are of the same campaign."""
    stored = json.loads(path.read_text())
    if (stored["criterion"], stored["file_hits"]) != (args.criterion, oracle.hits):
        sys.exit(f"{path}: another criterion or ratings file")
    replay = replay_of(args)
    if (
        stored.get("replay", "database"),
        stored.get("first_seed", 0),
        stored.get("oracle", "file"),
    ) != (replay, args.first_seed, oracle_of(args)):
        sys.exit(
            f"{path}: its balanced runs were replayed another way, from another seed"
            " or by another oracle"
        )
    estimators, runs = args.estimators.split(","), stored["runs"].get(BALANCED, [])
    for run in runs:
        for estimator in estimators:
            if [p["hits"] for p in run["curve"].get(estimator, [])] != checkpoints:
                sys.exit(f"{path}: its balanced runs have other checkpoints or estimators")
    return runs


def main() -> None:
    parser = ratings_parser(__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--policies", default="balanced,active")
    parser.add_argument("--share", type=int, default=20, help="balanced HITs under active (%%)")
    parser.add_argument(
        "--estimators", default="bt,e2e", help=f"any of {', '.join(ESTIMATORS)}, comma-separated"
    )
    parser.add_argument("--step", type=int, default=150, help="HITs between checkpoints")
    parser.add_argument("--max-hits", type=int, help="stop earlier (a quick look, no target)")
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--reuse", type=Path, help="take the balanced runs from this JSON")
    parser.add_argument(
        "--in-memory",
        action="store_true",
        help="replay without the database (the same policy functions; for many seeds)",
    )
    parser.add_argument(
        "--without-item-spread",
        action="store_true",
        help="in memory: the policies do not see each system's slots on the item",
    )
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--design",
        type=Path,
        help="for the designed policy: a fixed design from best_design.py --save-design",
    )
    parser.add_argument(
        "--oracle",
        choices=["file", "model"],
        default="file",
        help="model: answers drawn from the ranking's own model at the file's implied ratings"
        " (ModelOracle), a control where no design biases the estimate",
    )
    parser.add_argument(
        "--model-scale",
        type=float,
        default=1.0,
        help="with --oracle model: the implied ratings' gaps multiplied by this",
    )
    parser.add_argument(
        "--close-when-stable",
        metavar="HITS[,HITS...]",
        help="also report where a criterion closing when its clusters have stayed the same"
        " for so many HITs would have closed (a ranking run at every checkpoint)",
    )
    parser.add_argument(
        "--doubt-width",
        type=float,
        default=nlgdata.composition.DOUBT_WIDTH,
        help="the active policy's DOUBT_WIDTH, for a sweep",
    )
    parser.add_argument(
        "--per-pair",
        type=float,
        default=nlgdata.composition.ACTIVE_PER_PAIR,
        help="the active policy's ACTIVE_PER_PAIR, for a sweep",
    )
    args = parser.parse_args()
    nlgdata.composition.DOUBT_WIDTH = args.doubt_width
    nlgdata.composition.ACTIVE_PER_PAIR = args.per_pair
    policies, estimators = args.policies.split(","), args.estimators.split(",")
    if unknown := set(estimators) - set(ESTIMATORS):
        parser.error(
            f"no estimator {', '.join(sorted(unknown))}: choose from {', '.join(ESTIMATORS)}"
        )
    if BALANCED not in policies:
        parser.error("the target is the balanced policy's: include it in --policies")
    if GUIDED in policies and not args.in_memory:
        parser.error("the guided policy is a bound, not the platform's: add --in-memory")
    if DESIGNED in policies and not (args.in_memory and args.design):
        parser.error("the designed policy replays a fixed design: add --in-memory and --design")

    oracle = Oracle.read(args.ratings, args.criterion)
    budget = min(BUDGET_FACTOR * oracle.hits, args.max_hits or BUDGET_FACTOR * oracle.hits)
    checkpoints = sorted({*range(args.step, budget + 1, args.step), budget})
    if oracle.hits <= budget:
        checkpoints = sorted({*checkpoints, oracle.hits})
    # Stored runs that cannot be reused are refused before the truth and the database cost.
    reused = reusable_runs(args.reuse, args, oracle, checkpoints) if args.reuse else []
    started = time.perf_counter()
    truth = truth_of(oracle, seed=0)
    print(f"truth: {truth.hits} balanced HITs in {time.perf_counter() - started:.0f} s", flush=True)
    if args.oracle == "model":
        oracle = ModelOracle.following(oracle, args.model_scale)
        truth = oracle.truth(truth)
    implied = implied_rating(oracle)
    template = None if args.in_memory else build_database(oracle, args.criterion)
    runs: dict[str, list] = {}
    if args.in_memory:
        replay = partial(
            run_in_memory, spread_on_item=not args.without_item_spread, design_path=args.design
        )
    else:
        replay = partial(run_policy, template=template)
    for policy in policies:
        for n, seed in enumerate(range(args.first_seed, args.first_seed + args.seeds)):
            if policy == BALANCED and n < len(reused):
                runs.setdefault(policy, []).append(reused[n])
                print(f"{policy} seed {seed}: reused from {args.reuse}", flush=True)
                continue
            started = time.perf_counter()
            run = replay(oracle, truth, policy, args.share, seed, checkpoints, estimators)
            run["seconds"] = time.perf_counter() - started
            runs.setdefault(policy, []).append(run)
            last = {e: run["curve"][e][-1]["agreement"] for e in estimators}
            print(
                f"{policy} seed {seed}: {run['seconds']:.0f} s, agreement at {budget}: {last}",
                flush=True,
            )
    limits = [int(n) for n in args.close_when_stable.split(",")] if args.close_when_stable else []
    summary = summarise_runs(runs, oracle.hits, estimators, limits) if oracle.hits <= budget else {}
    result = {
        "ratings": str(args.ratings),
        "criterion": args.criterion,
        "file_hits": oracle.hits,
        "budget": budget,
        "share": args.share,
        "replay": replay_of(args),
        "oracle": oracle_of(args),
        "doubt_width": args.doubt_width,
        "active_per_pair": args.per_pair,
        "first_seed": args.first_seed,
        "truth": {
            "hits": truth.hits,
            "systems": oracle.systems,
            "rating": truth.rating.tolist(),
            "cluster": truth.cluster.tolist(),
            "pairs_in_different_clusters": len(truth.pairs()),
            "implied_rating": implied.tolist(),
            "pairs_the_implied_rating_orders_otherwise": [
                [oracle.systems[i], oracle.systems[j]]
                for i, j in truth.pairs()
                if np.sign(implied[i] - implied[j]) != np.sign(truth.rating[i] - truth.rating[j])
            ],
        },
        "summary": summary,
        "runs": runs,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1))
    print(report(summary, oracle.hits))
    if args.plot:
        title = (
            f"{args.ratings.name} ({args.criterion}): {args.seeds} seeds, {estimators[0]} ranking,"
            f" {oracle_of(args)} oracle, {replay_of(args)},"
            f" active balanced from {args.per_pair:g} comparisons per pair"
        )
        plot(args.plot, runs, summary, estimators[0], title, len(truth.pairs()))
    shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
