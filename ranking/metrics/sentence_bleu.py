"""BLEU-1/2/3 as LogicNLG's evaluate.py computes them (Chen et al., ACL 2020, Table 2).

evalute.py scores each generated statement with nltk's `sentence_bleu`, no smoothing,
weights (1,0,0), (.5,.5,0) and (.33,.33,.33) (not thirds), against every reference
statement of its table, and averages over all statements. Tokens: the hypothesis
lowercased and split on white space, each reference lowercased and split on single spaces
(so a double space gives an empty token, as there). This is that computation in plain
Python, nltk's rules included: no unigram match scores 0; an order with no match counts as
the smallest float (log about -708), so it zeroes a score that weighs it and is ignored by
one that does not; the brevity penalty takes the reference length closest to the
hypothesis's (the shorter on a tie).
"""

import math
import sys
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

WEIGHTS = {
    "bleu1": (1.0, 0.0, 0.0),
    "bleu2": (0.5, 0.5, 0.0),
    "bleu3": (0.33, 0.33, 0.33),
}
IMPLEMENTATION = (
    "LogicNLG evaluate.py: nltk sentence_bleu without smoothing against all references of "
    "the item, lowercased, weights (1,0,0), (.5,.5,0), (.33,.33,.33); mean over outputs"
)

Key = TypeVar("Key", bound=Hashable)
System = TypeVar("System", bound=Hashable)


def ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


class References:
    """An item's references, tokenised, with their clipping counts per order: made once and
    shared by every system's output for the item."""

    def __init__(self, texts: Sequence[str], orders: int = 3):
        tokenised = [text.lower().split(" ") for text in texts]
        self.lengths = [len(reference) for reference in tokenised]
        self.most: list[Counter] = []
        for n in range(1, orders + 1):
            most: Counter = Counter()
            for reference in tokenised:
                most |= ngrams(reference, n)
            self.most.append(most)

    def precisions(self, hypothesis: list[str], orders: int) -> list[tuple[int, int]]:
        """(clipped matches, hypothesis n-grams but at least 1) for n = 1..orders."""
        found = []
        for n in range(1, orders + 1):
            counts, most = ngrams(hypothesis, n), self.most[n - 1]
            matches = sum(min(count, most[gram]) for gram, count in counts.items())
            found.append((matches, max(1, sum(counts.values()))))
        return found

    def brevity_penalty(self, hypothesis: list[str]) -> float:
        length = len(hypothesis)
        closest = min(self.lengths, key=lambda r: (abs(r - length), r))
        if length > closest:
            return 1.0
        if length == 0:
            return 0.0
        return math.exp(1 - closest / length)


def sentence_bleu(references: References, hypothesis: list[str], weights: Sequence[float]) -> float:
    found = references.precisions(hypothesis, len(weights))
    if found[0][0] == 0:
        return 0.0
    logs = [
        weight * (math.log(m / d) if m else math.log(sys.float_info.min))
        for weight, (m, d) in zip(weights, found, strict=True)
    ]
    return references.brevity_penalty(hypothesis) * math.exp(math.fsum(logs))


def logicnlg_scores(references: References, hypothesis: str) -> dict[str, float]:
    hyp = hypothesis.lower().split()
    return {name: sentence_bleu(references, hyp, weights) for name, weights in WEIGHTS.items()}


def score_systems(
    references: Mapping[Key, Sequence[str]], outputs: Mapping[System, Mapping[Key, str]]
) -> dict[System, tuple[int, dict[str, float]]]:
    """system -> (outputs scored, metric -> mean over its outputs for items with
    references), in 0-1 (the paper prints them times 100)."""
    prepared = {key: References(texts) for key, texts in references.items() if texts}
    results = {}
    for system, texts in outputs.items():
        scored = [logicnlg_scores(prepared[k], t) for k, t in texts.items() if k in prepared]
        if scored:
            means = {name: math.fsum(s[name] for s in scored) / len(scored) for name in WEIGHTS}
            results[system] = (len(scored), means)
    return results
