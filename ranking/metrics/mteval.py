"""BLEU, NIST and chrF as the E2E challenge's scripts computed BLEU and NIST (mteval-v13a).

The E2E metrics scripts ran NIST's mteval-v13a.pl on the detokenised outputs: its default
("13a") tokenisation, case-insensitive. sacrebleu's BLEU with the same tokeniser and
`lowercase=True` is that computation (closest reference length, ties to the shorter), and
gives E2E Table 8 to the fourth decimal. sacrebleu has no NIST, nor does any maintained
package compute mteval's NIST (nltk's `corpus_nist` scores each output against its single
best reference, and lengthens the reference by averaging per segment, which puts its
scores 1.2-1.7 below Table 8), so `nist` below follows mteval-v13a.pl's `score_segment`,
`compute_ngram_info` and `nist_score` on sacrebleu's 13a tokens:

- information weight of an n-gram w1..wn: log2(count(w1..wn-1) / count(w1..wn)), counted
  over every reference of the corpus (for unigrams, the total number of reference words);
- an output's matched n-grams: its n-gram counts clipped by the largest count in any one
  of its references, each weighted by its information;
- score: the sum over n = 1..5 of matched information / output n-grams, times the length
  penalty exp(-beta log^2(min(1, L_sys / L_ref))), beta = -log 0.5 / log^2 1.5;
- L_ref: the reference words over the number of references, times the number of outputs,
  which is mteval's "reference words / number of reference sets" for a fixed number of
  references, and what the challenge's edited mteval (variable references) computes: it
  gives Table 8 to the fourth decimal for all 21 systems.

chrF is sacrebleu's chrF2 with its defaults (character 6-grams, case-sensitive).
BLEU and chrF are given in 0-1 like mteval's BLEU, not sacrebleu's 0-100.
"""

import math
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

NIST_ORDER = 5
NIST_BETA = -math.log(0.5) / math.log(1.5) ** 2

References = Sequence[Sequence[str]]


def _reference_streams(references: References) -> list[list[str | None]]:
    """sacrebleu's layout: one stream per reference position, None where an output has
    fewer references than the most any output has."""
    width = max((len(refs) for refs in references), default=0)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


class Score(NamedTuple):
    value: float
    signature: str  # sacrebleu's: number of references, case, tokeniser, version


class Corpus:
    """The references of a list of outputs, with the reference-side work done once, so that
    many systems are scored against the same references quickly."""

    def __init__(self, references: References) -> None:
        streams = _reference_streams(references)
        # The streams hold None where an output has fewer references than the most: sacrebleu
        # drops those (its _cache_references: "can be '' or `None` to allow the use of variable
        # number of references per segment"), though its annotation says strings only. An ''
        # would not do: it stays, as an empty reference.
        # force: E2E outputs often end in " ."; sacrebleu would warn that they look tokenised.
        self._bleu = BLEU(
            lowercase=True,
            tokenize="13a",
            force=True,
            references=streams,  # type: ignore[arg-type]  # None: see above
        )
        self._chrf = CHRF(references=streams)  # type: ignore[arg-type]  # None: see above
        self._nist = NistReferences(references)
        self.size = len(references)

    def bleu(self, hypotheses: Sequence[str]) -> Score:
        """Corpus BLEU in 0-1, mteval-v13a style (13a tokens, lowercased)."""
        return self._sacrebleu(self._bleu, hypotheses)

    def chrf(self, hypotheses: Sequence[str]) -> Score:
        """Corpus chrF2 in 0-1 (sacrebleu's defaults)."""
        return self._sacrebleu(self._chrf, hypotheses)

    def nist(self, hypotheses: Sequence[str]) -> float:
        return self._nist.score(hypotheses)

    def _sacrebleu(self, metric: BLEU | CHRF, hypotheses: Sequence[str]) -> Score:
        if len(hypotheses) != self.size:
            raise ValueError(f"{len(hypotheses)} outputs for {self.size} reference groups")
        score = metric.corpus_score(list(hypotheses), None)
        return Score(score.score / 100, str(metric.get_signature()))


def bleu(hypotheses: Sequence[str], references: References) -> Score:
    return Corpus(references).bleu(hypotheses)


def chrf(hypotheses: Sequence[str], references: References) -> Score:
    return Corpus(references).chrf(hypotheses)


def nist(hypotheses: Sequence[str], references: References) -> float:
    return NistReferences(references).score(hypotheses)


def _ngrams(words: list[str], n: int) -> Counter:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


class NistReferences:
    """mteval-v13a's NIST against fixed references (see the module docstring)."""

    def __init__(self, references: References, order: int = NIST_ORDER) -> None:
        self.order = order
        self._tokenizer = Tokenizer13a()
        refs = [[self._words(ref) for ref in group] for group in references]
        self.info = information_weights([ref for group in refs for ref in group], order)
        # Per output and order: each n-gram's largest count in any one of its references.
        self._clip = [[_max_counts(group, n) for n in range(1, order + 1)] for group in refs]
        ref_count = sum(len(group) for group in refs)
        ref_words = sum(len(ref) for group in refs for ref in group)
        self.ref_length = ref_words / ref_count * len(refs) if ref_count else 0.0

    def _words(self, text: str) -> list[str]:
        return self._tokenizer(text.lower()).split()

    def score(self, hypotheses: Sequence[str]) -> float:
        if len(hypotheses) != len(self._clip):
            raise ValueError(f"{len(hypotheses)} outputs for {len(self._clip)} reference groups")
        matched = [0.0] * (self.order + 1)
        produced = [0] * (self.order + 1)
        length = 0
        for hypothesis, clips in zip(hypotheses, self._clip, strict=True):
            words = self._words(hypothesis)
            length += len(words)
            for n, most in enumerate(clips, start=1):
                counts = _ngrams(words, n)
                matched[n] += sum(
                    self.info[gram] * min(count, most[gram])
                    for gram, count in counts.items()
                    if gram in most
                )
                produced[n] += max(len(words) - n + 1, 0)
        score = sum(matched[n] / max(produced[n], 1) for n in range(1, self.order + 1))
        return score * nist_length_penalty(length, self.ref_length)


def _max_counts(group: list[list[str]], n: int) -> Counter:
    most: Counter = Counter()
    for ref in group:
        most |= _ngrams(ref, n)
    return most


def information_weights(references: list[list[str]], order: int = NIST_ORDER) -> dict:
    """log2(count(w1..wn-1) / count(w1..wn)) over all references; for unigrams the
    numerator is the total number of reference words."""
    counts: Counter = Counter()
    for ref in references:
        for n in range(1, order + 1):
            counts.update(_ngrams(ref, n))
    total_words = sum(len(ref) for ref in references)
    return {
        gram: math.log2((counts[gram[:-1]] if len(gram) > 1 else total_words) / count)
        for gram, count in counts.items()
    }


def nist_length_penalty(system_length: float, reference_length: float) -> float:
    ratio = system_length / reference_length if reference_length else 0.0
    if ratio >= 1:
        return 1.0
    if ratio <= 0:
        return 0.0
    return math.exp(-NIST_BETA * math.log(ratio) ** 2)
