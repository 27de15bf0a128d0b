"""How often the calibrated verdict's claims (ranking/engine/joint.py) are false on the
partial nulls hardest for cuts, in a normal model: each system's estimate is its truth plus
a standard normal error, independent, so a difference's t is (a - b) / sqrt(2); the draws
where nothing differs are the same model at zero. Hardest for cuts are equal systems a few
standard errors from the next tier, where a cut that splits a tie competes with the true
one (docs/calibration.md).

    .venv/bin/python research/cut_levels.py --campaigns 600
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ranking.engine.joint import joint_claims, pair_indices  # noqa: E402

ROOT2 = np.sqrt(2)
TRUTHS = {
    "null, 6 systems": np.zeros(6),
    "two equal ahead of four equal, 2.5 apart": np.array([2.5, 2.5, 0, 0, 0, 0]) * ROOT2,
    "two equal ahead of four equal, 3 apart": np.array([3, 3, 0, 0, 0, 0]) * ROOT2,
    "three tiers of two, 2.5 apart": np.array([5, 5, 2.5, 2.5, 0, 0]) * ROOT2,
    "three tiers of two, 3 apart": np.array([6, 6, 3, 3, 0, 0]) * ROOT2,
    "three tiers of two, 4 apart": np.array([8, 8, 4, 4, 0, 0]) * ROOT2,
    "five tiers of two, 2.5 apart": np.repeat(np.arange(5)[::-1] * 2.5, 2) * ROOT2,
    "five tiers of two, 3 apart": np.repeat(np.arange(5)[::-1] * 3.0, 2) * ROOT2,
    "ten tiers of two, 3 apart": np.repeat(np.arange(10)[::-1] * 3.0, 2) * ROOT2,
    "seven tiers of three, 3 apart": np.repeat(np.arange(7)[::-1] * 3.0, 3) * ROOT2,
    "two equal on top of a staircase of 10": np.r_[6, 6, 5, 4.5, 4, 3.5, 3, 2.5, 2, 1, 0, -1]
    * 0.6
    * ROOT2,
}


def t_of(estimate: np.ndarray) -> np.ndarray:
    first, second = pair_indices(estimate.shape[-1])
    return (estimate[..., first] - estimate[..., second]) / ROOT2


def false_claim_share(truth: np.ndarray, campaigns: int, draws: int, rng) -> float:
    n = len(truth)
    null_estimate = rng.standard_normal((draws, n))
    null_t = t_of(null_estimate)
    ranked, pieces = np.ones(n, dtype=bool), np.zeros(n, dtype=np.int64)
    wrong = truth[:, None] <= truth[None, :]  # a claim a > b is false where a <= b
    false = 0
    for _ in range(campaigns):
        estimate = truth + rng.standard_normal(n)
        claims = joint_claims(estimate, t_of(estimate), null_t, null_estimate, ranked, pieces)
        false += bool((claims.better & wrong).any())
    return false / campaigns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaigns", type=int, default=600)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    for name, truth in TRUTHS.items():
        share = false_claim_share(truth, args.campaigns, args.draws, rng)
        spread = np.sqrt(share * (1 - share) / args.campaigns)
        print(f"{name:45s} {share:6.1%} (+- {1.96 * spread:.1%})")


if __name__ == "__main__":
    main()
