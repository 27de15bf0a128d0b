"""Is the online estimate's z calibrated? For pairs of systems that the simulator's truth puts
in different clusters, how often the online TrueSkill estimate orders them wrongly, by the
z = |mu_a - mu_b| / sqrt(var_a + var_b) it gives them, against Phi(-z).

    python research/online_calibration.py --criterion quality --seeds 20 \\
        --ratings ../shared/data/e2e/human_ratings/quality.csv

Balanced campaigns replayed in memory (`simulate_campaign.replay_in_memory`, seeds 500 on, so
not the truth's), the estimate read after 300, 600, 1,200 and 2,400 HITs. A calibrated z
makes the active policy's doubt mean what it says; `nlgdata.composition.DOUBT_WIDTH` says
why the policy still counts rivals out to several z.
"""

import math
from statistics import NormalDist

import numpy as np
from simulate_campaign import Oracle, replay_in_memory, truth_of
from simulation_tools import ratings_parser

from nlgdata.composition import rate_hit

CHECKPOINTS = (300, 600, 1200, 2400)
BANDS = ((0, 1), (1, 2), (2, 3), (3, 4), (4, math.inf))


def main() -> None:
    parser = ratings_parser(__doc__)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    oracle = Oracle.read(args.ratings, args.criterion)
    truth = truth_of(oracle, seed=0)
    z_values, wrong = [], []
    for seed in range(500, 500 + args.seeds):
        ratings: dict = {}
        hits = replay_in_memory(oracle, CHECKPOINTS[-1], seed)
        for n, (_, systems, scores) in enumerate(hits, 1):
            rate_hit(ratings, list(zip(systems, scores, strict=True)))
            if n not in CHECKPOINTS:
                continue
            for a, b in truth.pairs():
                (mu_a, sigma_a), (mu_b, sigma_b) = ratings[a], ratings[b]
                z_values.append(abs(mu_a - mu_b) / math.hypot(sigma_a, sigma_b))
                wrong.append((mu_a > mu_b) != (truth.rating[a] > truth.rating[b]))
    z, misordered = np.array(z_values), np.array(wrong)
    print(f"{len(z)} pairs read, {misordered.sum()} misordered")
    print("z band   pairs   misordered   Phi(-z)")
    for low, high in BANDS:
        band = (z >= low) & (z < high)
        expected = np.mean([NormalDist().cdf(-x) for x in z[band]]) if band.any() else 0.0
        share = misordered[band].mean() if band.any() else 0.0
        print(f"{low}-{high:<5} {band.sum():6d}   {share:10.3f}   {expected:7.3f}")


if __name__ == "__main__":
    main()
