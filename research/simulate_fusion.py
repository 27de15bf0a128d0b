"""Replay a RankME campaign's HITs in random order and measure what an automatic judge, fused
with the humans by PPI++ (`ranking.engine.fusion`), saves in human HITs.

    python research/simulate_fusion.py --ratings ../shared/data/e2e/human_ratings/quality.csv \\
        --references ../shared/data/e2e/testset_w_refs.csv --criterion quality --judge chrf \\
        --seeds 20 --json /tmp/fusion-chrf.json --plot docs/fusion-e2e-quality.png

The outputs are the ones the ratings file shows, one per (MR, system), with the text shown;
with `--outputs DIR` (a `<system>.tsv` per system, columns MR and output, as E2E's
`outputs/`) the judge also scores each system's outputs that no HIT showed, which humans
never judge: the fused mean is then the judge's over all of them, corrected on the
sample. The judge scores every output once; the scores are cached (`--cache`, by default
under VAR_DIR) by metric, MR and text.

Judges (`--judge`, higher is better for each): `bleu` and `chrf` (sacrebleu's sentence
scores against the MR's references), `meteor` (METEOR 1.5, pycocoevalcap's jar, per
sentence; needs Java), `ser` (minus the slot error rate of `ranking.metrics.slots`), `blend`
(a least-squares blend of the four, fitted for each system on the other systems' labelled
outputs only, within systems: the system's own human scores never choose its judge, so
PPI's correction stays unbiased), and `synthetic:RHO` (a judge correlated RHO with the
humans' mean score per output within each system, plus noise: it says what saving a judge
of that quality would bring). Every judge's scores are standardised over all the outputs
(no human score used) so that they are on the scale of the humans' z-scores, which PPI++'s
lambda, clipped to [0, 1], assumes.

Each seed shuffles the file's HITs (`--replay units` keeps each CrowdFlower unit's HITs
together instead); after every `--step` HITs the judgments so far are standardised per
annotator (as the WMT view does; `--scale raw` keeps them), averaged per output, and each
system's mean is estimated humans-only and fused, with 95% intervals. Scores above `--cap`
(100, RankME's slider top) are set to it first: E2E's quality file has 78 typed-in
magnitudes above it, up to 111,111, each of which swings its annotator's every z-score.

The truth is the humans-only mean of all the file's judgments. Reported per checkpoint:
the coverage of the truth by the intervals; the pairs of systems separated, whose
difference is significant at 95%, in the truth's order (and against it), of all 210 pairs
and of the 20 adjacent in the truth (E2E's systems are too close for their own 95%
intervals to be apart: humans-only with the whole file has no adjacent pair whose intervals
do not overlap); lambda and the effective human judgments. The target is the pairs that
humans-only separates with the whole file; each run reaches it at the first checkpoint
from which it stays there. `human_hits_ratio` is the median over seeds of the fused run's
HITs to the target over the humans-only run's (same seed); null when a fused run never
reaches it.
"""

import argparse
import csv
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import django
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault(
    "SECRET_KEY", "benchmark-only-key-not-secret-0123456789-abcdefghijklmnopqrstuvwxyz"
)
os.environ.update(
    DATABASE_URL=f"sqlite:///{Path(tempfile.gettempdir()) / 'simulate-fusion-unused.sqlite3'}",
    DEBUG="false",
    DJANGO_SETTINGS_MODULE="evalsite.settings",
)
django.setup()  # the ratings reader checks sizes against the settings; no database is used

from scipy.stats import pearsonr, spearmanr  # noqa: E402
from simulation_tools import hits_for  # noqa: E402

from annotation.datafiles.ratings_import import read_pages  # noqa: E402
from nlgdata.datafiles import unquote  # noqa: E402
from nlgdata.inputs import input_key, parse_mr  # noqa: E402
from ranking.engine.fusion import ppi_means, quantile  # noqa: E402
from ranking.engine.judgments import Judgments  # noqa: E402
from ranking.engine.wmt import z_scores  # noqa: E402
from ranking.metrics.sentence import SENTENCE_METRICS, sentence_scores  # noqa: E402

METRICS = SENTENCE_METRICS
JUDGES = (*METRICS, "blend", "synthetic:RHO")


# The campaign -----------------------------------------------------------------------------


@dataclass
class Campaign:
    systems: list[str]
    attributes: dict[str, list]  # MR key -> attributes
    key: list[str] = field(default_factory=list)  # per output: its MR key
    text: list[str] = field(default_factory=list)
    system: list[int] = field(default_factory=list)
    index: dict[tuple[str, int], int] = field(default_factory=dict)
    # one entry per judgment
    hit: list[int] = field(default_factory=list)
    output: list[int] = field(default_factory=list)
    annotator: list[int] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    hits: int = 0

    def add_output(self, key: str, system: int, text: str) -> int:
        if (key, system) not in self.index:
            self.index[key, system] = len(self.key)
            self.key.append(key)
            self.text.append(text)
            self.system.append(system)
        return self.index[key, system]

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "output_system": np.array(self.system),
            "hit": np.array(self.hit),
            "output": np.array(self.output),
            "annotator": np.array(self.annotator),
            "score": np.array(self.score, dtype=float),
        }


def read_campaign(path: Path, criterion: str) -> Campaign:
    campaign = Campaign([], {})
    systems: dict[str, int] = {}
    workers: dict[str, int] = {}
    with path.open(encoding="utf-8-sig") as lines:
        _, pages = read_pages(lines, path.name, criterion)
        for page in pages:
            campaign.attributes.setdefault(page.key, page.input_data["attributes"])
            worker = workers.setdefault(page.worker, len(workers))
            for name, text, score in zip(page.systems, page.texts, page.scores, strict=True):
                system = systems.setdefault(name, len(systems))
                campaign.output.append(campaign.add_output(page.key, system, text))
                campaign.hit.append(campaign.hits)
                campaign.annotator.append(worker)
                campaign.score.append(score)
            campaign.hits += 1
    campaign.systems = list(systems)
    return campaign


def mr_key(raw: str) -> tuple[str, list]:
    data = {"attributes": parse_mr(unquote(raw))}
    return input_key("mr", data), data["attributes"]


def add_unjudged_outputs(campaign: Campaign, directory: Path) -> int:
    """Each system's outputs in DIR/<system>.tsv that no HIT showed; how many were added."""
    before = len(campaign.key)
    for system, name in enumerate(campaign.systems):
        path = directory / f"{name}.tsv"
        if not path.exists():
            sys.exit(f"{path}: no outputs for system {name}")
        with path.open(encoding="utf-8-sig", newline="") as f:
            for line, row in enumerate(csv.DictReader(f, delimiter="\t"), start=2):
                if "MR" not in row or "output" not in row:
                    sys.exit(f"{path}, line {line}: columns MR and output expected")
                key, attributes = mr_key(row["MR"])
                campaign.attributes.setdefault(key, attributes)
                campaign.add_output(key, system, row["output"] or "")
    return len(campaign.key) - before


def read_references(path: Path) -> dict[str, list[str]]:
    references: dict[str, list[str]] = {}
    with path.open(encoding="utf-8-sig", newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            if "mr" not in row or "ref" not in row:
                sys.exit(f"{path}, line {line}: columns mr and ref expected")
            references.setdefault(mr_key(row["mr"])[0], []).append(row["ref"])
    return references


# Metric judges, computed once and cached ----------------------------------------------------


def digest(metric: str, key: str, text: str, references: list[str]) -> str:
    parts = [metric, key, text, *references]
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()[:20]


def metric_scores(
    campaign: Campaign, references: dict[str, list[str]], metric: str, cache: Path
) -> np.ndarray:
    """float64[outputs]: the metric of every output, from the cache where it has them."""
    missing = sorted({k for k in campaign.key if k not in references})
    if missing:
        sys.exit(f"no references for {len(missing)} MRs of the ratings, e.g. {missing[0]!r}")
    path = cache / f"fusion-{metric}.json"
    stored = json.loads(path.read_text()) if path.exists() else {}
    keys = [
        digest(metric, k, t, references[k])
        for k, t in zip(campaign.key, campaign.text, strict=True)
    ]
    todo = sorted({d: i for i, d in enumerate(keys) if d not in stored}.items())
    if todo:
        started = time.perf_counter()
        rows = [i for _, i in todo]
        scores = sentence_scores(
            metric,
            [campaign.text[i] for i in rows],
            [references[campaign.key[i]] for i in rows],
            [campaign.attributes[campaign.key[i]] for i in rows],
        )
        stored.update({d: s for (d, _), s in zip(todo, scores, strict=True)})
        cache.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored))
        print(f"{metric}: {len(todo)} outputs scored in {time.perf_counter() - started:.0f} s")
    return np.array([stored[d] for d in keys])


def standardised(values: np.ndarray) -> np.ndarray:
    sd = values.std()
    return (values - values.mean()) / (sd if sd > 0 else 1.0)


def blend(features: np.ndarray, system: np.ndarray, human: np.ndarray, n: int) -> np.ndarray:
    """The least-squares blend of the feature columns, for each system fitted on the other
    systems' labelled outputs (human not NaN), features and scores centred within systems:
    a system's own human scores never choose its weights."""
    lab = ~np.isnan(human)
    x = np.column_stack([features, np.ones(len(system))])
    grams = np.zeros((n, x.shape[1], x.shape[1]))
    moments = np.zeros((n, x.shape[1]))
    for s in range(n):
        rows = lab & (system == s)
        if rows.sum() < 2:
            continue
        xc = x[rows] - x[rows].mean(axis=0)
        xc[:, -1] = 1.0  # an intercept per system: the centring's
        yc = human[rows] - human[rows].mean()
        grams[s], moments[s] = xc.T @ xc, xc.T @ yc
    judge = np.empty(len(system))
    total_g, total_m = grams.sum(axis=0), moments.sum(axis=0)
    for s in range(n):
        weights = np.linalg.lstsq(total_g - grams[s], total_m - moments[s], rcond=None)[0]
        weights[-1] = 0.0  # a constant changes nothing within a system
        judge[system == s] = x[system == s] @ weights
    return judge


def synthetic_judge(rho: float, truth_y: np.ndarray, system: np.ndarray, n: int) -> np.ndarray:
    """A judge correlated `rho` with the humans' mean score per output within each system:
    rho u + sqrt(1 - rho^2) e, u the output's score standardised within its system; an
    output no human judged takes the u of a judged output of its system drawn at random."""
    rng = np.random.default_rng(20231)
    u = np.empty(len(system))
    for s in range(n):
        mine = system == s
        judged = mine & ~np.isnan(truth_y)
        values = truth_y[judged]
        values = (values - values.mean()) / values.std()
        u[judged] = values
        unjudged = mine & np.isnan(truth_y)
        u[unjudged] = rng.choice(values, size=int(unjudged.sum()))
    return rho * u + np.sqrt(1 - rho**2) * rng.normal(size=len(system))


# The replay -------------------------------------------------------------------------------


def output_means(arrays: dict, mask: np.ndarray, n_outputs: int, scale: str) -> np.ndarray:
    score = arrays["score"][mask]
    if scale == "z":
        score = z_scores(Judgments(np.zeros(len(score)), arrays["annotator"][mask], score))
    kept = ~np.isnan(score)
    output = arrays["output"][mask][kept]
    counts = np.bincount(output, minlength=n_outputs)
    sums = np.bincount(output, score[kept], minlength=n_outputs)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan)


def separation(estimate: np.ndarray, se: np.ndarray, labelled: np.ndarray, order) -> dict:
    """Pairs of systems whose difference is significant at 95% (two estimates taken as
    independent: |a - b| > t sqrt(se_a^2 + se_b^2), t with the smaller sample's degrees of
    freedom), in the truth's order (`order`, best first) and against it, over all pairs and
    over the pairs adjacent in the truth."""
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    above = rank[:, None] < rank[None, :]  # above[i, j]: i above j in the truth
    t = quantile(np.minimum.outer(labelled, labelled))
    apart = estimate[:, None] - estimate[None, :] > t * np.hypot(se[:, None], se[None, :])
    adjacent = above & (rank[None, :] == rank[:, None] + 1)
    return {
        "separated": int((apart & above).sum()),
        "separated_wrong": int((apart & above.T).sum()),
        "separated_adjacent": int((apart & adjacent).sum()),
    }


def point(m: dict, truth: np.ndarray, order: np.ndarray, judgments: int) -> dict:
    se = np.sqrt(m["variance"])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(m["variance"] > 0, m["humans_variance"] / m["variance"], 1.0)
    return {
        # a system without an interval yet (one labelled output) claims nothing: covered
        "covered": int((~(np.abs(m["estimate"] - truth) > quantile(m["labelled"]) * se)).sum()),
        **separation(m["estimate"], se, m["labelled"], order),
        "mean_half_width": float(np.nanmean(quantile(m["labelled"]) * se)),
        "lambda": float(np.mean(m["weight"])),
        "effective_judgments": float(judgments * np.mean(ratio)),
    }


def hit_units(arrays: dict, hits: int) -> np.ndarray:
    """int64[hits]: each HIT's unit, the HITs that show the same outputs (CrowdFlower's unit:
    one MR's five outputs, judged by one or by three workers in E2E's file)."""
    shown: dict[int, list[int]] = {}
    for hit, output in zip(arrays["hit"], arrays["output"], strict=True):
        shown.setdefault(int(hit), []).append(int(output))
    units: dict[tuple, int] = {}
    return np.array([units.setdefault(tuple(sorted(shown[h])), len(units)) for h in range(hits)])


def hit_order(rng: np.random.Generator, units: np.ndarray, replay: str) -> np.ndarray:
    """Each HIT's position in the replay: the units in random order, each unit's HITs one
    after the other ("units"), or the HITs in random order ("hits")."""
    if replay == "hits":
        return rng.permutation(len(units))
    unit_position = rng.permutation(int(units.max()) + 1)
    order = np.lexsort((rng.random(len(units)), unit_position[units]))
    position = np.empty(len(units), dtype=np.int64)
    position[order] = np.arange(len(units))
    return position


def replay(setup: dict, seed: int, checkpoints: list[int]) -> dict:
    arrays, n, judge_of = setup["arrays"], setup["n_systems"], setup["judge_of"]
    position = hit_order(np.random.default_rng(seed), setup["units"], setup["replay"])
    curve = []
    for hits in checkpoints:
        mask = position[arrays["hit"]] < hits
        human = output_means(arrays, mask, len(arrays["output_system"]), setup["scale"])
        judge = judge_of(human)
        fused = ppi_means(arrays["output_system"], judge, human, n)
        humans = ppi_means(arrays["output_system"], judge, human, n, clip=(0.0, 0.0))
        judgments = int(mask.sum())
        curve.append(
            {
                "hits": hits,
                "fused": point(fused, setup["truth"], setup["order"], judgments),
                "humans": point(humans, setup["truth"], setup["order"], judgments),
            }
        )
    return {"seed": seed, "curve": curve}


def stays_from(curve: list[dict], which: str, target: int) -> int | None:
    """HITs of the first checkpoint from which `which` separates at least `target` pairs."""
    reached = None
    for p in curve:
        if p[which]["separated"] >= target:
            reached = reached or p["hits"]
        else:
            reached = None
    return reached


# Reporting --------------------------------------------------------------------------------


def correlations(judge: np.ndarray, truth_y: np.ndarray, system: np.ndarray, truth) -> dict:
    """The judge against the humans' mean score per output (all the file's judgments):
    Pearson within systems (both centred per system; what PPI's gain hangs on), Pearson and
    Spearman over all judged outputs, and Spearman of the systems' mean judge scores with
    the truth."""
    judged = ~np.isnan(truth_y)
    f, y, s = judge[judged], truth_y[judged], system[judged]
    n = int(s.max()) + 1
    f_c = f - (np.bincount(s, f, n) / np.bincount(s, minlength=n))[s]
    y_c = y - (np.bincount(s, y, n) / np.bincount(s, minlength=n))[s]
    means = np.bincount(system, judge, n) / np.bincount(system, minlength=n)
    return {
        "within_systems_pearson": float(pearsonr(f_c, y_c)[0]),
        "output_pearson": float(pearsonr(f, y)[0]),
        "output_spearman": float(spearmanr(f, y)[0]),
        "system_spearman": float(spearmanr(means, truth)[0]),
    }


def summarise(runs: list[dict], target: int, n_systems: int, file_hits: int) -> dict:
    inner = [p for r in runs for p in r["curve"] if p["hits"] < file_hits]
    per_run = []
    for run in runs:
        fused = stays_from(run["curve"], "fused", target)
        humans = stays_from(run["curve"], "humans", target)
        per_run.append({"seed": run["seed"], "fused_hits": fused, "humans_hits": humans})
    ratios = [
        r["fused_hits"] / r["humans_hits"] if r["fused_hits"] and r["humans_hits"] else None
        for r in per_run
    ]
    reached = [x for x in ratios if x is not None]
    checkpoints = [p["hits"] for p in runs[0]["curve"]]
    coverage_at = [
        statistics.mean(r["curve"][i]["fused"]["covered"] / n_systems for r in runs)
        for i in range(len(checkpoints))
    ]
    return {
        "coverage": sum(p["fused"]["covered"] for p in inner) / (n_systems * len(inner)),
        "coverage_humans_only": sum(p["humans"]["covered"] for p in inner)
        / (n_systems * len(inner)),
        "coverage_lowest_checkpoint": min(coverage_at[:-1] or coverage_at),
        "human_hits_ratio": statistics.median(ratios) if len(reached) == len(ratios) else None,
        "human_hits_ratios": ratios,
        "human_hits": per_run,
        "wrongly_separated_pairs": sum(p["fused"]["separated_wrong"] for p in inner),
        "coverage_by_checkpoint": dict(zip(checkpoints, coverage_at, strict=True)),
        "same_mean": same_mean(runs, file_hits),
    }


def same_mean(runs: list[dict], file_hits: int) -> list[dict]:
    """At about 20, 40, 60, 80 and 100% of the file's HITs: the fused runs' mean separated
    pairs, and the HITs at which the humans-only runs' mean reaches as many (`hits_for`):
    steadier than the HITs to the target, which hang on the last pair or two."""

    def mean_curve(which: str) -> list[tuple[int, float]]:
        return [
            (ps[0]["hits"], statistics.mean(p[which]["separated"] for p in ps))
            for ps in zip(*(r["curve"] for r in runs), strict=True)
        ]

    fused, humans = mean_curve("fused"), mean_curve("humans")
    rows = []
    for share in (0.2, 0.4, 0.6, 0.8, 1.0):
        hits, separated = min(fused, key=lambda p, h=share * file_hits: abs(p[0] - h))
        needed = hits_for(separated, humans)
        rows.append(
            {
                "hits": hits,
                "fused_separated": separated,
                "humans_separated": dict(humans)[hits],
                "humans_hits_for_same": needed,
                "ratio": hits / needed if needed else None,
            }
        )
    return rows


def plot(path: Path, result: dict) -> None:
    import matplotlib  # noqa: PLC0415 - only for --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    runs = result["runs"]
    hits = [p["hits"] for p in runs[0]["curve"]]
    figure, (separated, width) = plt.subplots(1, 2, figsize=(12, 5))
    for which, label in (("humans", "humans only"), ("fused", f"humans + {result['judge']}")):
        values = np.array([[p[which]["separated"] for p in r["curve"]] for r in runs])
        line = separated.plot(hits, np.median(values, axis=0), label=f"{label} (median)")[0]
        separated.fill_between(
            hits, values.min(axis=0), values.max(axis=0), alpha=0.2, color=line.get_color()
        )
        half = np.array([[p[which]["mean_half_width"] for p in r["curve"]] for r in runs])
        width.plot(hits, half.mean(axis=0), color=line.get_color(), label=label)
    separated.axhline(result["target"], color="grey", linestyle="--", label="target")
    separated.set_xlabel("human HITs")
    n = len(result["systems"])
    separated.set_ylabel(f"pairs separated at 95% in the truth's order (of {n * (n - 1) // 2})")
    separated.legend(loc="lower right")
    width.set_xlabel("human HITs")
    width.set_ylabel("mean half-width of the 95% intervals (z)")
    width.legend(loc="upper right")
    figure.suptitle(
        f"{Path(result['ratings']).name} ({result['criterion']}), judge {result['judge']} on"
        f" {sum(result['outputs'].values()):,} outputs ({result['outputs']['judged']:,} judged):"
        f" {len(runs)} seeds, coverage {result['summary']['coverage']:.3f},"
        f" HITs ratio {result['summary']['human_hits_ratio']}"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)


# Main -------------------------------------------------------------------------------------


def judge_function(args, campaign: Campaign, references, truth_y, arrays, n):
    """(a function from the current human scores per output to the judge's scores, the
    judge's fixed scores for the correlation report)."""
    system = arrays["output_system"]
    cache = args.cache or Path(os.environ.get("VAR_DIR", tempfile.gettempdir())) / "cache"
    if args.judge.startswith("synthetic:"):
        fixed = synthetic_judge(float(args.judge.split(":", 1)[1]), truth_y, system, n)
        return (lambda human: fixed), fixed
    if args.judge in METRICS:
        fixed = standardised(metric_scores(campaign, references, args.judge, cache))
        return (lambda human: fixed), fixed
    names = [m for m in METRICS if m not in args.without]
    features = np.column_stack(
        [standardised(metric_scores(campaign, references, m, cache)) for m in names]
    )
    return (lambda human: standardised(blend(features, system, human, n))), standardised(
        blend(features, system, truth_y, n)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ratings", type=Path, required=True)
    parser.add_argument("--references", type=Path, required=True)
    parser.add_argument("--criterion", choices=["quality", "naturalness"], required=True)
    parser.add_argument("--judge", required=True, help=f"one of {', '.join(JUDGES)}")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--step", type=int, default=100, help="HITs between checkpoints")
    parser.add_argument("--scale", choices=["z", "raw"], default="z")
    parser.add_argument(
        "--cap",
        type=float,
        default=100.0,
        help="scores above this are set to it (RankME's slider top; 0: none)",
    )
    parser.add_argument("--replay", choices=["hits", "units"], default="hits")
    parser.add_argument("--outputs", type=Path, help="DIR of <system>.tsv: unjudged outputs too")
    parser.add_argument("--cache", type=Path, help="metric scores (default VAR_DIR/cache)")
    parser.add_argument(
        "--without", default="", help="blend: metrics left out, comma-separated (e.g. meteor)"
    )
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args()
    if (
        args.judge not in METRICS
        and args.judge != "blend"
        and not args.judge.startswith("synthetic:")
    ):
        parser.error(f"no judge {args.judge!r}: choose from {', '.join(JUDGES)}")

    started = time.perf_counter()
    campaign = read_campaign(args.ratings, args.criterion)
    unjudged = add_unjudged_outputs(campaign, args.outputs) if args.outputs else 0
    references = read_references(args.references)
    arrays, n = campaign.arrays(), len(campaign.systems)
    capped = int((arrays["score"] > args.cap).sum()) if args.cap else 0
    if args.cap:
        arrays["score"] = np.minimum(arrays["score"], args.cap)
    everything = np.ones(len(arrays["hit"]), dtype=bool)
    truth_y = output_means(arrays, everything, len(campaign.key), args.scale)
    full = ppi_means(arrays["output_system"], np.zeros(len(campaign.key)), truth_y, n, (0.0, 0.0))
    truth = full["humans_only"]
    order = np.argsort(-truth, kind="stable")
    judge_of, fixed = judge_function(args, campaign, references, truth_y, arrays, n)
    target = point(full, truth, order, len(everything))["separated"]
    checkpoints = sorted({*range(args.step, campaign.hits, args.step), campaign.hits})
    setup = {
        "arrays": arrays,
        "n_systems": n,
        "judge_of": judge_of,
        "hits": campaign.hits,
        "units": hit_units(arrays, campaign.hits),
        "replay": args.replay,
        "scale": args.scale,
        "truth": truth,
        "order": order,
    }
    runs = [
        replay(setup, seed, checkpoints)
        for seed in range(args.first_seed, args.first_seed + args.seeds)
    ]
    summary = summarise(runs, target, n, campaign.hits)
    result = {
        "ratings": str(args.ratings),
        "criterion": args.criterion,
        "judge": args.judge,
        "scale": args.scale,
        "replay": args.replay,
        "cap": args.cap,
        "scores_capped": capped,
        "file_hits": campaign.hits,
        "outputs": {"judged": int((~np.isnan(truth_y)).sum()), "unjudged": unjudged},
        "systems": campaign.systems,
        "truth": dict(zip(campaign.systems, truth.tolist(), strict=True)),
        "target": target,
        "judge_against_humans": correlations(fixed, truth_y, arrays["output_system"], truth),
        "coverage": summary["coverage"],
        "human_hits_ratio": summary["human_hits_ratio"],
        "summary": summary,
        "runs": runs,
        "seconds": time.perf_counter() - started,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1))
    print(
        f"{args.judge}: coverage {summary['coverage']:.3f} (humans only"
        f" {summary['coverage_humans_only']:.3f}, lowest checkpoint"
        f" {summary['coverage_lowest_checkpoint']:.3f}); target {target} pairs;"
        f" human HITs ratio {summary['human_hits_ratio']} (per seed"
        f" {[round(r, 2) if r else r for r in summary['human_hits_ratios']]});"
        f" judge vs humans {result['judge_against_humans']}; {result['seconds']:.0f} s"
    )
    for row in summary["same_mean"]:
        print(
            f"  at {row['hits']} HITs fused separates {row['fused_separated']:.1f} pairs"
            f" (humans only {row['humans_separated']:.1f}), humans only needs"
            f" {row['humans_hits_for_same']} HITs for as many: ratio {row['ratio']}"
        )
    if args.plot:
        plot(args.plot, result)


if __name__ == "__main__":
    main()
