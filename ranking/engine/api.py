"""One call from comparisons (and, for WMT, judgments) to a ranking, for the Django service."""

import numpy as np

from .bradley_terry import BradleyTerryRanking, bradley_terry_protocol
from .clusters import Ranking, summarise
from .comparisons import Comparisons
from .protocols import PROTOCOLS, Progress
from .trueskill import Backend
from .wmt import Judgments, WmtRanking, wmt_protocol

# TrueSkill protocols (PROTOCOLS) and the two significance views over the same judgments.
PROTOCOL_NAMES = sorted([*PROTOCOLS, "bt", "wmt"])

AnyRanking = Ranking | BradleyTerryRanking | WmtRanking


def rank_systems(
    comparisons: Comparisons,
    n_systems: int,
    protocol: str = "e2e",
    runs: int = 200,
    seed: int | np.random.Generator = 0,
    progress: Progress | None = None,
    *,
    backend: Backend = "package",
    judgments: Judgments | None = None,
) -> AnyRanking:
    """Rank by ``protocol`` (a name in PROTOCOL_NAMES, else ValueError).

    TrueSkill protocols run ``runs`` times and are summarised (mean mu, rank ranges,
    clusters); "bt" fits Bradley-Terry to the comparisons and ``runs`` bootstrap resamples;
    "wmt" ranks ``judgments`` (required for it) and has nothing to repeat.

    Systems are numbered 0..n_systems-1 by the caller; for the E2E protocol number them in
    order of first appearance in the ratings, since ties in sigma go to the lowest number.
    """
    if protocol == "bt":
        return bradley_terry_protocol(comparisons, n_systems, runs, seed, progress)
    if protocol == "wmt":
        if judgments is None:
            raise ValueError("the wmt protocol ranks judgments: pass judgments=")
        ranking = wmt_protocol(judgments, n_systems)
        if progress is not None:
            progress(runs, runs)
        return ranking
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}: use one of {PROTOCOL_NAMES}")
    result = PROTOCOLS[protocol](comparisons, n_systems, runs, seed, progress, backend=backend)
    return summarise(result, components=comparisons.components(n_systems))
