"""Pure numerical ranking engine: comparisons -> TrueSkill runs -> rank ranges -> clusters;
Bradley-Terry with bootstrap intervals; z-scores with Wilcoxon clusters (WMT's, WebNLG's);
best-worst scores of HITs and of pairwise and best-worst choices; ESA's error rates.

numpy, scipy and numba only; no Django. Compiled kernels are cached on disk (numba ``cache=True``).
"""

from .numba_cache import drop_stale_cache

drop_stale_cache()  # before the kernels below are imported and loaded from the cache

from .api import PROTOCOL_NAMES, AnyRanking, rank_systems  # noqa: E402
from .bradley_terry import BradleyTerryRanking, bradley_terry_protocol  # noqa: E402
from .choices import Choices, comparisons_from_choices  # noqa: E402
from .clusters import Ranking, clusters, rank_ranges, summarise  # noqa: E402
from .comparisons import Comparisons, comparisons_from_hits  # noqa: E402
from .protocols import RunsResult, bootstrap_protocol, e2e_params, e2e_protocol  # noqa: E402
from .trueskill import TrueSkillParams  # noqa: E402
from .wmt import Judgments, WmtRanking, wmt_protocol, z_scores  # noqa: E402

__all__ = [
    "PROTOCOL_NAMES",
    "AnyRanking",
    "BradleyTerryRanking",
    "Choices",
    "Comparisons",
    "Judgments",
    "Ranking",
    "RunsResult",
    "TrueSkillParams",
    "WmtRanking",
    "bootstrap_protocol",
    "bradley_terry_protocol",
    "clusters",
    "comparisons_from_choices",
    "comparisons_from_hits",
    "e2e_params",
    "e2e_protocol",
    "rank_ranges",
    "rank_systems",
    "summarise",
    "wmt_protocol",
    "z_scores",
]
