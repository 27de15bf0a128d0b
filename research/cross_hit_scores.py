"""Do two scores of one item tell as much from different HITs as from the same HIT? A check,
on a real ratings file, of what the simulator's oracle assumes and its `cells` estimator uses.

    python research/cross_hit_scores.py --ratings ../shared/data/e2e/human_ratings/quality.csv \\
        --criterion quality

The oracle (research/simulate_campaign.py) draws each slot's score on its own, so within a
simulated HIT two scores are as far apart as two real scores from different annotators, and
`cells`, which compares scores across HITs on the same item, loses nothing by it. Two
measures on the real file:

- Every two scores of one item for systems in different clusters of the simulator's truth,
  by where they come from (the same HIT; other HITs of one annotator; other annotators; and
  the same simulated HIT, in a balanced replay of the file's HITs): how often the higher
  score goes to the system the implied ratings put higher, lower, or tie; and the
  information one such pair carries about the order, (mean sign)^2 / variance.
- Split-half: the file's HITs split at random into halves (20 splits), each half ranked by
  Bradley-Terry on its HITs' comparisons and by `cells`; the share of the 210 pairs that the
  two halves order alike. A higher share is a more reliable estimator on real judgments.
"""

import random
from collections import defaultdict

import numpy as np
from simulation_tools import ratings_parser

SPLITS = 20
SOURCES = ("same HIT", "other HIT, same annotator", "other annotator")


def by_source(judgments: dict, rating: np.ndarray, apart: set) -> dict[str, np.ndarray]:
    """Per source, counts of (agree, disagree, tie) over every two scores of one item for
    systems in `apart`. `judgments`: item -> [(hit, annotator, system, score)]."""
    counts = {source: np.zeros(3, dtype=np.int64) for source in SOURCES}
    for scored in judgments.values():
        for x, (hit, annotator, a, score_a) in enumerate(scored):
            for other_hit, other_annotator, b, score_b in scored[x + 1 :]:
                if (a, b) not in apart:
                    continue
                if hit == other_hit:
                    source = SOURCES[0]
                else:
                    source = SOURCES[1] if annotator == other_annotator else SOURCES[2]
                sign = np.sign(score_a - score_b) * np.sign(rating[a] - rating[b])
                counts[source][0 if sign > 0 else 1 if sign < 0 else 2] += 1
    return counts


def information(counts: np.ndarray) -> float:
    """(mean sign)^2 / its variance, the sign +1 agree, -1 disagree, 0 tie; infinite where
    every pair agrees (or every pair disagrees)."""
    agree, disagree, _ = counts / counts.sum()
    mean, variance = agree - disagree, agree + disagree - (agree - disagree) ** 2
    return float(mean**2 / variance) if variance > 0 else float("inf")


def described(counts: np.ndarray) -> str:
    if counts.sum() == 0:
        return "no pairs of scores"
    agree, disagree, tie = counts / counts.sum()
    return (
        f"{counts.sum()} pairs of scores; agree {agree:.3f}, disagree {disagree:.3f},"
        f" tie {tie:.3f}; information per pair {information(counts):.4f}"
    )


def ordered_alike(x: np.ndarray, y: np.ndarray) -> float:
    first, second = np.triu_indices(len(x), 1)
    return float(np.mean(np.sign(x[first] - x[second]) == np.sign(y[first] - y[second])))


def main() -> None:
    args = ratings_parser(__doc__).parse_args()

    from simulate_campaign import (  # noqa: PLC0415 - sets Django up to read the file
        Oracle,
        cells_ranking,
        comparisons_of,
        implied_rating,
        replay_in_memory,
        truth_of,
    )

    from annotation.datafiles.ratings_import import read_pages  # noqa: PLC0415
    from ranking.engine.bradley_terry import bradley_terry_protocol  # noqa: PLC0415

    oracle = Oracle.read(args.ratings, args.criterion)
    n = len(oracle.systems)
    system_index = {name: s for s, name in enumerate(oracle.systems)}
    item_index = {key: i for i, (key, _) in enumerate(oracle.items)}
    judgments: dict = defaultdict(list)
    hits = []
    with args.ratings.open(encoding="utf-8-sig") as lines:
        _, pages = read_pages(lines, args.ratings.name, args.criterion)
        for h, page in enumerate(pages):
            systems = [system_index[name] for name in page.systems]
            for system, score in zip(systems, page.scores, strict=True):
                judgments[page.key].append((h, page.worker, system, score))
            hits.append((item_index[page.key], systems, list(page.scores)))

    apart = {pair for i, j in truth_of(oracle, seed=0).pairs() for pair in ((i, j), (j, i))}
    rating = implied_rating(oracle)
    simulated: dict = defaultdict(list)
    for h, (item, systems, scores) in enumerate(replay_in_memory(oracle, oracle.hits, seed=0)):
        simulated[item] += [
            (h, h, system, score) for system, score in zip(systems, scores, strict=True)
        ]
    real = by_source(judgments, rating, apart)
    for source, counts in [
        *real.items(),
        ("simulated, same HIT", by_source(simulated, rating, apart)[SOURCES[0]]),
    ]:
        print(f"{source}: {described(counts)}")

    # Only the order is compared: one resample each, the least the protocols take.
    def bradley_terry(half: list) -> np.ndarray:
        return bradley_terry_protocol(comparisons_of(half), n, 1, 0).rating

    def cells(half: list) -> np.ndarray:
        return cells_ranking(half, oracle, 1, 0)[0]

    rng = random.Random(0)
    alike: dict[str, list[float]] = {"Bradley-Terry": [], "cells": []}
    for _ in range(SPLITS):
        order = rng.sample(range(len(hits)), len(hits))
        halves = [hits[k] for k in order[::2]], [hits[k] for k in order[1::2]]
        for name, rank in (("Bradley-Terry", bradley_terry), ("cells", cells)):
            alike[name].append(ordered_alike(rank(halves[0]), rank(halves[1])))
    for name, shares in alike.items():
        print(
            f"split-half, {name}: the halves order {np.mean(shares):.3f} of the pairs alike"
            f" (sd {np.std(shares):.3f}, {SPLITS} splits)"
        )


if __name__ == "__main__":
    main()
