"""CIDEr-D of E2E's systems (630 outputs each, against the test set's references):
pycocoevalcap's Cider (the reference side computed again for each system) against
`ranking.metrics.coco.CiderReferences` (computed once, then each system scored), in one
process, with the scores checked equal to the last bit.

Run from the repository root:  python benchmarks/bench_cider.py
Texts are lowercased and split on spaces (the metrics command tokenises them in Java
first; CIDEr itself takes any text). Takes about a minute and a half on two cores.
"""

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pycocoevalcap.cider.cider import Cider  # noqa: E402

from benchmarks.bench_rouge import E2E, e2e_texts, timed  # noqa: E402
from ranking.metrics.coco import CiderReferences  # noqa: E402


def pycocoevalcap_cider(hypotheses: list[str], groups: list[list[str]]) -> float:
    gts = {n: list(group) for n, group in enumerate(groups)}
    res = {n: [hypothesis] for n, hypothesis in enumerate(hypotheses)}
    return float(Cider().compute_score(gts, res)[0])


def shared_references_cider(outputs: dict[str, list[str]], groups) -> dict[str, float]:
    references = CiderReferences(groups)
    return {system: references.score(hypotheses) for system, hypotheses in outputs.items()}


def main() -> None:
    if not E2E.is_dir():
        sys.exit(f"needs the E2E data at {E2E}")
    mrs, outputs, groups = e2e_texts()
    print(f"{len(outputs)} systems x {len(mrs)} outputs, {sum(map(len, groups))} references")
    theirs, their_scores = timed(pycocoevalcap_cider, outputs, groups)
    started = time.perf_counter()
    our_scores = shared_references_cider(outputs, groups)
    ours = time.perf_counter() - started
    assert our_scores == their_scores, "the scores differ"
    for label, seconds in (("pycocoevalcap Cider", theirs), ("CiderReferences", ours)):
        print(f"{label:22s} {seconds:6.2f} s for all, {seconds / len(outputs):5.2f} s a system")
    print(f"{theirs / ours:.1f}x faster; scores equal to the last bit for every system")
    started = time.perf_counter()
    shared_references_cider(dict(list(outputs.items())[:1]), groups)
    print(f"one system alone with CiderReferences: {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
