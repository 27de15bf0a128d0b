"""Pure numerical ranking engine: comparisons and judgments in, rankings out. The calibrated
verdict (least squares within pages, permutations within items, claims that hold jointly);
TrueSkill runs (the E2E protocol, the unit bootstrap); Bradley-Terry over resampled items;
z-scores with Wilcoxon clusters (WMT's, WebNLG's); best-worst scores; humans + judge
(PPI++); ESA's error rates. Each view of ranking/protocols calls its engine here.

numpy, scipy and numba only; no Django. Compiled kernels are cached on disk (numba
``cache=True``); numba_cache clears them when any source here changes.
scipy is imported inside the functions that use it: every process that starts Django
(manage.py, each Celery worker, gunicorn) imports this package, and scipy.stats alone took
0.5 s of a 2 s start.
"""

from .numba_cache import drop_stale_cache

drop_stale_cache()  # before the kernels below are imported and loaded from the cache

from .bradley_terry import BradleyTerryRanking, bradley_terry_protocol  # noqa: E402
from .choices import Choices, comparisons_from_choices  # noqa: E402
from .clusters import Ranking, clusters, rank_ranges, summarise  # noqa: E402
from .comparisons import Comparisons, comparisons_from_hits  # noqa: E402
from .judgments import JudgeScores, Judgments  # noqa: E402
from .progress import Progress  # noqa: E402
from .trueskill import TrueSkillParams  # noqa: E402
from .trueskill_runs import RunsResult, bootstrap_protocol, e2e_params, e2e_protocol  # noqa: E402
from .wmt import WmtRanking, wmt_protocol, z_scores  # noqa: E402

__all__ = [
    "BradleyTerryRanking",
    "Choices",
    "Comparisons",
    "JudgeScores",
    "Judgments",
    "Progress",
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
    "summarise",
    "wmt_protocol",
    "z_scores",
]
