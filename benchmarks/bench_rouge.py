"""ROUGE-L of E2E's systems (630 outputs each, against the test set's references):
pycocoevalcap's Rouge (a table filled in Python for every output and reference) against
`ranking.metrics.coco.rouge_l` (the same steps, the LCS length counted bit-parallel), in
one process, with the scores checked equal.

Run from the repository root:  python benchmarks/bench_rouge.py
Texts are lowercased and split on spaces (the metrics command tokenises them in Java
first; ROUGE-L itself takes any text). Takes about a minute on two cores.
"""

import csv
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pycocoevalcap.rouge.rouge import Rouge  # noqa: E402

from ranking.metrics.coco import rouge_l  # noqa: E402

E2E = ROOT.parent / "shared" / "data" / "e2e"


def e2e_texts() -> tuple[list[str], dict[str, list[str]], list[list[str]]]:
    """The MRs in order, each system's outputs of them, and their references: the systems
    whose files spell every MR as the test set does (the rest write some MRs their own way,
    which the importer reads; this script does not)."""
    references: dict[str, list[str]] = {}
    with (E2E / "testset_w_refs.csv").open(encoding="utf-8", newline="") as file:
        for row in csv.DictReader(file):
            references.setdefault(row["mr"], []).append(row["ref"].lower())
    mrs = list(references)
    outputs = {}
    for path in sorted((E2E / "outputs").glob("*.tsv")):
        with path.open(encoding="utf-8-sig", newline="") as file:
            texts = {
                row["MR"]: row["output"].lower() for row in csv.DictReader(file, delimiter="\t")
            }
        if all(mr in texts for mr in mrs):
            outputs[path.stem] = [texts[mr] for mr in mrs]
    return mrs, outputs, [references[mr] for mr in mrs]


def pycocoevalcap_rouge_l(hypotheses: list[str], groups: list[list[str]]) -> float:
    gts = {n: list(group) for n, group in enumerate(groups)}
    res = {n: [hypothesis] for n, hypothesis in enumerate(hypotheses)}
    return float(Rouge().compute_score(gts, res)[0])


def timed(score, outputs: dict[str, list[str]], groups) -> tuple[float, dict[str, float]]:
    started = time.perf_counter()
    scores = {system: score(hypotheses, groups) for system, hypotheses in outputs.items()}
    return time.perf_counter() - started, scores


def main() -> None:
    if not E2E.is_dir():
        sys.exit(f"needs the E2E data at {E2E}")
    mrs, outputs, groups = e2e_texts()
    print(f"{len(outputs)} systems x {len(mrs)} outputs, {sum(map(len, groups))} references")
    theirs, their_scores = timed(pycocoevalcap_rouge_l, outputs, groups)
    ours, our_scores = timed(rouge_l, outputs, groups)
    assert our_scores == their_scores, "the scores differ"
    print(f"pycocoevalcap Rouge:        {theirs:6.2f} s")
    print(f"ranking.metrics.coco:       {ours:6.2f} s   ({theirs / ours:.0f}x faster)")
    print("scores equal to the last bit for every system")


if __name__ == "__main__":
    main()
