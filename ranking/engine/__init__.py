"""Pure numerical ranking engine: comparisons -> TrueSkill runs -> rank ranges -> clusters.

numpy and numba only; no Django. Compiled kernels are cached on disk (numba ``cache=True``).
"""

from .api import rank_systems
from .clusters import Ranking, clusters, rank_ranges, summarise
from .comparisons import Comparisons, comparisons_from_hits
from .protocols import RunsResult, bootstrap_protocol, e2e_params, e2e_protocol
from .trueskill import TrueSkillParams

__all__ = [
    "Comparisons",
    "Ranking",
    "RunsResult",
    "TrueSkillParams",
    "bootstrap_protocol",
    "clusters",
    "comparisons_from_hits",
    "e2e_params",
    "e2e_protocol",
    "rank_ranges",
    "rank_systems",
    "summarise",
]
