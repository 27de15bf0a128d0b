"""How often each ranking view claims an order that is not there, and how often it finds one
that is: every view, through the worker's own path from judgment rows to the stored table,
on null campaigns of the platform's designs (every system the same), on campaigns where one
system is truly better, on campaigns of three tiers of two equal systems, and on E2E's own
quality HITs with the system labels permuted within units (so that any order is false).

    python benchmarks/calibration.py                     # 100 campaigns per design
    python benchmarks/calibration.py --campaigns 300 --json calibration.json
    python benchmarks/calibration.py --designs rankme3,da --views calibrated,wmt

A view claims an order wherever a reader would read one: two ranked systems in different
clusters, rank ranges that do not overlap, or intervals that do not overlap (views that
show them). The share of null campaigns with any claim is the table's false-claim rate; its
95% Wilson interval is printed beside it. With one system better than the others ("power"),
the table gives how often the better one is singled out (a rank of its own: best rank and
worst rank both 1) and how often any claim falls among the equal systems; with three tiers,
how often a claim splits a tier (a view that tests each pair alone shows it there). Ranges and
intervals that should cover the truth are counted too: on a null campaign the truth is
"every system tied", which a rank range covers when it spans every place.

Designs, each with item, output and annotator effects:
- rankme3: RankME pages of 5 of 6 systems, each page judged by 3 annotators (E2E's design:
  the three share the outputs), magnitudes with E2E-like ties and a few typos far off scale;
- rankme1: the same, each page judged once;
- da: direct assessment, 0-100 sliders, 3 outputs a page;
- da1: direct assessment, one output a page;
- pairwise: a preference between two outputs, ties allowed;
- bestworst: the best and the worst of 4;
- esa: error-span scores (0-100), one output a page;
- e2e-units, e2e-items: E2E's 2,979 quality HITs, each unit's five labels drawn at random
  from the 21 (the issue's construction), or each item's labels permuted (../shared/data/e2e).

No Django: the rows go through ranking.service's readers (the bundle's path, the same as the
database's rows) and ranking.protocols' engines, as a ranking run does.
"""

import argparse
import csv
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

if __name__ == "__main__":  # run as a script; imported by the tests, Django is set up there
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    os.environ.setdefault("DEBUG", "true")  # the readers below touch no database
    django.setup()

from ranking.protocols import PROTOCOLS  # noqa: E402
from ranking.service import (  # noqa: E402
    NothingToRank,
    choices_input_from_rows,
    rank_input,
    ranking_input_from_rows,
    result_rows,
)

E2E_QUALITY = Path(__file__).resolve().parents[2] / "shared" / "data" / "e2e" / "human_ratings"
Row = tuple[int, int, int, float, int]  # (assignment, annotator, system, score, item)


# Campaigns -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Design:
    """A campaign's shape: what a page shows and asks, and how many of each there are."""

    name: str
    form: str  # rankme, da, pairwise, bestworst, esa
    systems: int = 6
    items: int = 200
    pages_per_item: int = 2
    per_page: int = 5
    judgments_per_page: int = 3  # annotators who judge the same page (E2E: 3)
    annotators: int = 40
    chooses: bool = False

    def views(self) -> list[str]:
        fits = {
            "rankme": ("calibrated", "e2e", "bootstrap", "bt", "wmt", "bws"),
            "da": ("calibrated", "e2e", "bt", "wmt", "webnlg"),
            "esa": ("calibrated", "e2e", "bt", "wmt"),
            "pairwise": ("calibrated", "e2e", "bt", "bws"),
            "bestworst": ("calibrated", "e2e", "bt", "bws"),
        }[self.form]
        return [view for view in fits if view in PROTOCOLS]


DESIGNS = {
    design.name: design
    for design in (
        Design("rankme3", "rankme"),
        Design("rankme1", "rankme", pages_per_item=6, judgments_per_page=1),
        Design("da", "da", pages_per_item=4, per_page=3, judgments_per_page=1),
        Design("da1", "da", pages_per_item=12, per_page=1, judgments_per_page=1),
        Design(
            "pairwise",
            "pairwise",
            pages_per_item=10,
            per_page=2,
            judgments_per_page=1,
            chooses=True,
        ),
        Design(
            "bestworst",
            "bestworst",
            pages_per_item=6,
            per_page=4,
            judgments_per_page=1,
            chooses=True,
        ),
        Design("esa", "esa", pages_per_item=12, per_page=1, judgments_per_page=1),
    )
}
E2E_DESIGNS = ("e2e-units", "e2e-items")


@dataclass(frozen=True)
class Effects:
    """Standard deviations on the latent quality scale (one unit: a clearly better output)."""

    item: float = 1.0
    output: float = 0.6
    annotator_noise: float = 0.8
    typo_rate: float = 0.003  # RankME scores typed far off scale (E2E: 78 above 100 of 14,895)


def simulate(
    design: Design, strength: np.ndarray, rng: np.random.Generator, effects: Effects = Effects()
) -> list[Row]:
    """One campaign's judgment rows in ranking order (page by page, slot by slot), scores as
    the platform stores them (choices: 1 best, 0 worst, 0.5 neither)."""
    quality = (
        strength[None, :]
        + rng.normal(0, effects.item, (design.items, 1))
        + rng.normal(0, effects.output, (design.items, design.systems))
    )
    scale = rng.uniform(0.5, 1.5, design.annotators)  # each annotator's own spread
    offset = rng.normal(0, 0.5, design.annotators)
    rows: list[Row] = []
    assignment = 0
    for item in range(design.items):
        for _ in range(design.pages_per_item):
            shown = rng.choice(design.systems, design.per_page, replace=False)
            judges = rng.choice(design.annotators, design.judgments_per_page, replace=False)
            for annotator in judges:
                seen = quality[item, shown] + rng.normal(0, effects.annotator_noise, len(shown))
                scores = page_scores(
                    design, seen, scale[annotator], offset[annotator], rng, effects
                )
                rows.extend(
                    (assignment, int(annotator), int(s), float(v), item)
                    for s, v in zip(shown, scores, strict=True)
                )
                assignment += 1
    return rows


def page_scores(
    design: Design,
    seen: np.ndarray,
    scale: float,
    offset: float,
    rng: np.random.Generator,
    effects: Effects,
) -> np.ndarray:
    if design.form == "rankme":
        # Magnitudes against a standard of 100, in steps of 5 as people type them: many ties.
        magnitude = 100 * np.exp(0.35 * scale * seen + 0.2 * offset)
        scores = np.maximum(5 * np.round(magnitude / 5), 1)
        typo = rng.random(len(scores)) < effects.typo_rate
        return np.where(typo, scores * 1111, scores)
    if design.form in ("da", "esa"):
        return np.clip(np.round(60 + 15 * (scale * seen + offset)), 0, 100)
    if design.form == "pairwise":
        gap = seen[0] - seen[1]
        if abs(gap) < 0.3:
            return np.array([0.5, 0.5])
        return np.array([1.0, 0.0]) if gap > 0 else np.array([0.0, 1.0])
    # best-worst of k
    scores = np.full(len(seen), 0.5)
    scores[np.argmax(seen)], scores[np.argmin(seen)] = 1.0, 0.0
    return scores


def e2e_hits(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """E2E's quality file as arrays: systems and scores (H, 5), the unit (HITs that show the
    same outputs), the item and the worker of each HIT, and the number of systems."""
    with path.open(newline="", encoding="utf-8") as handle:
        hits = list(csv.DictReader(handle))
    names = sorted({hit[f"sys{i}"] for hit in hits for i in range(1, 6)})
    number = {name: i for i, name in enumerate(names)}
    systems = np.array([[number[hit[f"sys{i}"]] for i in range(1, 6)] for hit in hits])
    scores = np.array([[float(hit[f"quality{i}"]) for i in range(1, 6)] for hit in hits])

    def numbered(column: str) -> np.ndarray:
        return np.unique([hit[column] for hit in hits], return_inverse=True)[1]

    return (
        systems,
        scores,
        numbered("_unit_id"),
        numbered("mr_id"),
        numbered("_worker_id"),
        len(names),
    )


def e2e_rows(path: Path) -> list[Row]:
    """E2E's quality HITs as judgment rows, with their own labels."""
    systems, scores, _, items, workers, _ = e2e_hits(path)
    return [
        (h, int(workers[h]), int(systems[h, slot]), float(scores[h, slot]), int(items[h]))
        for h in range(len(systems))
        for slot in range(5)
    ]


def e2e_null(hits: tuple, how: str, rng: np.random.Generator) -> list[Row]:
    """E2E's HITs with labels that say nothing: each unit's five drawn from the 21 (units),
    or each item's permuted (items)."""
    systems, scores, units, items, workers, n = hits
    if how == "e2e-units":
        labels = np.argsort(rng.random((units.max() + 1, n)), axis=1)[:, :5]
        relabelled = labels[units]
    else:
        permutation = np.argsort(rng.random((items.max() + 1, n)), axis=1)
        relabelled = permutation[items[:, None], systems]
    return [
        (h, int(workers[h]), int(relabelled[h, slot]), float(scores[h, slot]), int(items[h]))
        for h in range(len(systems))
        for slot in range(5)
    ]


# Views ---------------------------------------------------------------------------------------


@dataclass
class Claims:
    """What one view's table claims, read as a reader would."""

    ranked: list[int]
    better_pairs: set[tuple[int, int]]  # (a, b): a is read as better than b
    rank_lo: dict[int, int]
    rank_hi: dict[int, int]


def read_claims(rows) -> Claims:
    """Different clusters, disjoint rank ranges or disjoint intervals: an order read."""
    ranked = [row.system for row in rows]
    better = set()
    for upper in rows:
        for lower in rows:
            if upper is lower:
                continue
            apart = upper.cluster < lower.cluster or upper.rank_hi < lower.rank_lo
            if upper.ci_lo is not None and lower.ci_hi is not None:
                if not (math.isnan(upper.ci_lo) or math.isnan(lower.ci_hi)):
                    apart = apart or upper.ci_lo > lower.ci_hi
            if apart:
                better.add((upper.system, lower.system))
    return Claims(
        ranked,
        better,
        {row.system: row.rank_lo for row in rows},
        {row.system: row.rank_hi for row in rows},
    )


def view_claims(
    rows: list[Row], chooses: bool, view: str, repetitions: int, seed: int
) -> Claims | None:
    data = choices_input_from_rows(rows) if chooses else ranking_input_from_rows(rows)
    try:
        ranking = rank_input(data, view, repetitions, seed)
    except NothingToRank:
        return None
    return read_claims(result_rows(data, ranking, view))


# Tallies -------------------------------------------------------------------------------------


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = (
        z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    )
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Tally:
    campaigns: int = 0
    nothing: int = 0  # campaigns the view found nothing to rank in
    claimed: int = 0  # campaigns with any false claim: a over b where a is not truly better
    false_pairs: int = 0
    pairs: int = 0  # pairs of truly equal systems
    singled_out: int = 0  # the one best system with a rank of its own (where there is one)
    covered: int = 0  # rank ranges covering the truth for every system at once

    def add(self, claims: Claims | None, truth: np.ndarray) -> None:
        """`truth`: each system's true strength (all equal on a null campaign)."""
        self.campaigns += 1
        if claims is None:
            self.nothing += 1
            return
        false = {(a, b) for a, b in claims.better_pairs if truth[a] <= truth[b]}
        self.claimed += bool(false)
        self.false_pairs += len(false)
        ranked = claims.ranked
        self.pairs += sum(
            truth[a] == truth[b] for i, a in enumerate(ranked) for b in ranked[i + 1 :]
        )
        best = int(np.argmax(truth))
        if np.count_nonzero(truth == truth[best]) == 1 and best in ranked:
            self.singled_out += claims.rank_hi[best] == 1 and claims.rank_lo[best] == 1
        self.covered += covers_truth(claims, truth)

    def as_dict(self) -> dict:
        lo, hi = wilson(self.claimed, self.campaigns)
        out = {
            "campaigns": self.campaigns,
            "nothing_to_rank": self.nothing,
            "false_claim_share": self.claimed / max(self.campaigns, 1),
            "false_claim_interval": [lo, hi],
            "false_pairs": self.false_pairs,
            "false_pair_share": self.false_pairs / max(self.pairs, 1),
            "ranges_cover_truth": self.covered / max(self.campaigns, 1),
        }
        if self.singled_out or self.campaigns:
            slo, shi = wilson(self.singled_out, self.campaigns)
            out["singled_out_share"] = self.singled_out / max(self.campaigns, 1)
            out["singled_out_interval"] = [slo, shi]
        return out


def covers_truth(claims: Claims, truth: np.ndarray) -> bool:
    """Every rank range holds the system's true rank set among the ranked systems: from 1 +
    the systems truly better to the number ranked less those truly worse (on a null
    campaign every place, all being tied)."""
    ranked = claims.ranked
    for system in ranked:
        better = sum(truth[other] > truth[system] for other in ranked)
        worse = sum(truth[other] < truth[system] for other in ranked)
        if claims.rank_lo[system] > 1 + better or claims.rank_hi[system] < len(ranked) - worse:
            return False
    return True


# Running -------------------------------------------------------------------------------------

# What is true in a simulated campaign: every system the same; one better by the gap (power,
# and claims among the five equal ones); three tiers of two equal systems a gap apart (claims
# within a tier are false: a view that tests pairs uncorrected shows it here).
KINDS = ("null", "one better", "tiers")


def truths(kind: str, systems: int, gap: float) -> np.ndarray:
    strength = np.zeros(systems)
    if kind == "one better":
        strength[0] = gap
    elif kind == "tiers":
        strength = gap * (np.arange(systems)[::-1] // 2).astype(np.float64)
    elif kind != "null":
        raise ValueError(f"no kind {kind!r}: {', '.join(KINDS)}")
    return strength


@dataclass
class Study:
    campaigns: int
    repetitions: int
    views: list[str] | None
    gap: float
    kinds: tuple[str, ...] = KINDS
    results: dict = field(default_factory=dict)

    def run_design(
        self, design: Design, rng: np.random.Generator, report: Callable[[str], None]
    ) -> None:
        views = [v for v in design.views() if self.views is None or v in self.views]
        for kind in self.kinds:
            strength = truths(kind, design.systems, self.gap)
            tallies = {view: Tally() for view in views}
            started = time.perf_counter()
            for c in range(self.campaigns):
                rows = simulate(design, strength, rng)
                for view in views:
                    claims = view_claims(rows, design.chooses, view, self.repetitions, c)
                    tallies[view].add(claims, strength)
            self.store(design.name, kind, tallies, time.perf_counter() - started, report)

    def run_e2e(
        self, how: str, hits: tuple, rng: np.random.Generator, report: Callable[[str], None]
    ) -> None:
        views = [v for v in DESIGNS["rankme3"].views() if self.views is None or v in self.views]
        tallies = {view: Tally() for view in views}
        started = time.perf_counter()
        for c in range(self.campaigns):
            rows = e2e_null(hits, how, rng)
            for view in views:
                tallies[view].add(
                    view_claims(rows, False, view, self.repetitions, c), np.zeros(hits[5])
                )
        self.store(how, "null", tallies, time.perf_counter() - started, report)

    def store(self, design: str, kind: str, tallies: dict, seconds: float, report) -> None:
        self.results.setdefault(design, {})[kind] = {v: t.as_dict() for v, t in tallies.items()}
        report(table(design, kind, self.results[design][kind], seconds))


def table(design: str, kind: str, views: dict, seconds: float) -> str:
    lines = [f"\n{design}, {kind} ({seconds:.0f} s)"]
    lines.append(
        f"  {'view':11s} {'false claims':>24s} {'false pairs':>12s} {'ranges cover':>13s}"
        + ("   singled out" if kind == "one better" else "")
    )
    for view, t in views.items():
        lo, hi = t["false_claim_interval"]
        line = (
            f"  {view:11s} {t['false_claim_share']:6.1%} [{lo:5.1%}, {hi:5.1%}]"
            f" {t['false_pair_share']:12.2%} {t['ranges_cover_truth']:13.1%}"
        )
        if kind == "one better":
            slo, shi = t["singled_out_interval"]
            line += f"   {t['singled_out_share']:6.1%} [{slo:5.1%}, {shi:5.1%}]"
        if t["nothing_to_rank"]:
            line += f"  ({t['nothing_to_rank']} with nothing to rank)"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaigns", type=int, default=100)
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--designs", default=",".join([*DESIGNS, *E2E_DESIGNS]))
    parser.add_argument("--views", default=None)
    parser.add_argument(
        "--gap",
        type=float,
        default=0.5,
        help="how much better the better system is, on the latent scale",
    )
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help="what is true: " + ", ".join(KINDS)
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    study = Study(
        args.campaigns,
        args.repetitions,
        args.views.split(",") if args.views else None,
        args.gap,
        tuple(args.kinds.split(",")),
    )
    rng = np.random.default_rng(args.seed)
    for name in args.designs.split(","):
        if name in DESIGNS:
            study.run_design(DESIGNS[name], rng, print)
        elif (E2E_QUALITY / "quality.csv").exists():
            study.run_e2e(name, e2e_hits(E2E_QUALITY / "quality.csv"), rng, print)
        else:
            print(f"\n{name}: skipped, {E2E_QUALITY / 'quality.csv'} is absent")
    if args.json:
        args.json.write_text(json.dumps(study.results, indent=2))
    return study.results


if __name__ == "__main__":
    main()
