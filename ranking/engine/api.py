"""One call from comparisons to a ranking, for the Django service."""

import numpy as np

from .clusters import Ranking, summarise
from .comparisons import Comparisons
from .protocols import PROTOCOLS, Progress
from .trueskill import Backend


def rank_systems(
    comparisons: Comparisons,
    n_systems: int,
    protocol: str = "e2e",
    runs: int = 200,
    seed: int | np.random.Generator = 0,
    progress: Progress | None = None,
    *,
    backend: Backend = "package",
) -> Ranking:
    """Run ``protocol`` (a name in PROTOCOLS, else ValueError) ``runs`` times and summarise:
    mean mu, rank ranges, clusters.

    Systems are numbered 0..n_systems-1 by the caller; for the E2E protocol number them in
    order of first appearance in the ratings, since ties in sigma go to the lowest number.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}: use one of {sorted(PROTOCOLS)}")
    result = PROTOCOLS[protocol](comparisons, n_systems, runs, seed, progress, backend=backend)
    return summarise(result)
