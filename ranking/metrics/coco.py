"""METEOR, ROUGE-L and CIDEr as the E2E challenge computed them: the COCO caption
evaluation code (pycocoevalcap), which the E2E metrics scripts run on their texts.

What that code does, and so what is done here:
- every reference and output is tokenised by Stanford CoreNLP's PTBTokenizer 3.4.1 (the jar
  shipped in pycocoevalcap) with `-preserveLines -lowerCase`, and the tokens that are
  punctuation (pycocoevalcap's PUNCTUATIONS list) are dropped;
- METEOR 1.5 (pycocoevalcap's jar, `-l en -norm`, with paraphrases) scores all outputs
  of a system in one call and returns the corpus score (from the summed statistics, not
  the mean of segment scores);
- ROUGE-L: per output, the best LCS precision and recall over its references, F with
  beta 1.2; the corpus score is the mean over outputs. Computed here, as pycocoevalcap's
  Rouge computes it step for step, except the LCS length: pycocoevalcap fills a table
  (a Python step per pair of tokens), `lcs_length` counts it bit-parallel (a step per token,
  the same integer): 19 E2E systems' 630 outputs each, 0.69 s instead of 11.3 s, every
  score equal to the last bit (benchmarks/bench_rouge.py);
- CIDEr: pycocoevalcap's CIDEr-D (n-grams up to 4, Gaussian length penalty sigma 6,
  clipped counts, x10), document frequencies from the references scored. `CiderReferences`
  does its steps in its order, except that the reference side (document frequencies, each
  reference's tf-idf vector) is computed once for all systems scored against the same
  references, where pycocoevalcap computes it again for each: 19 E2E systems' 630 outputs
  in 5.4 s instead of 31.1 s, every score equal to the last bit (benchmarks/bench_cider.py).

The tokeniser and METEOR run in Java. Without Java the three metrics are not computed
(`java_missing` says why): another tokeniser would give other numbers under these names.
pycocoevalcap's own tokeniser wrapper writes its temporary file inside the installed
package, which a production install may not allow; `ptb_tokenize` runs the same jar with
the same options on standard input instead.
"""

import math
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import pycocoevalcap.tokenizer.ptbtokenizer as ptb
from pycocoevalcap.meteor.meteor import Meteor

PTB_JAR = os.path.join(os.path.dirname(ptb.__file__), ptb.STANFORD_CORENLP_3_4_1_JAR)
PUNCTUATION = frozenset(ptb.PUNCTUATIONS)
# PTBTokenizer ends a line at any of these; one text must stay one line.
LINE_BREAKS = str.maketrans({c: " " for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


class JavaError(RuntimeError):
    """The tokeniser or METEOR did not answer as expected."""


def java_missing() -> str | None:
    """Why the Java metrics cannot run here, or None when they can."""
    java = shutil.which("java")
    if java is None:
        return (
            "needs Java, which is not on this machine's PATH: METEOR 1.5 and the Stanford "
            "PTB tokenizer that the E2E scripts use for METEOR, ROUGE-L and CIDEr run in Java"
        )
    try:
        subprocess.run([java, "-version"], capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return f"needs Java, and `java -version` failed here: {error}"
    return None


def ptb_tokenize(texts: Sequence[str]) -> list[str]:
    """Lowercased PTB tokens without punctuation, space-separated, one string per text, as
    pycocoevalcap's PTBTokenizer gives them; all texts in one Java call."""
    if not texts:
        return []
    lines = "\n".join(text.translate(LINE_BREAKS) for text in texts)
    command = ["java", "-cp", PTB_JAR, "edu.stanford.nlp.process.PTBTokenizer"]
    result = subprocess.run(
        [*command, "-preserveLines", "-lowerCase"],
        input=lines.encode("utf-8"),
        capture_output=True,
        timeout=600,
    )
    if result.returncode != 0:
        raise JavaError(f"PTBTokenizer failed: {result.stderr.decode(errors='replace')[-500:]}")
    tokenised = result.stdout.decode("utf-8").split("\n")
    if len(tokenised) < len(texts):
        raise JavaError(f"PTBTokenizer gave {len(tokenised)} lines for {len(texts)} texts")
    return [
        " ".join(w for w in line.rstrip().split(" ") if w not in PUNCTUATION)
        for line in tokenised[: len(texts)]
    ]


def _as_coco(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} outputs for {len(references)} reference groups")
    gts = {i: list(group) for i, group in enumerate(references)}
    res = {i: [hypothesis] for i, hypothesis in enumerate(hypotheses)}
    return gts, res


ROUGE_BETA = 1.2  # pycocoevalcap's: recall weighs 1.44 times precision


def rouge_l(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Mean ROUGE-L over outputs, as pycocoevalcap's Rouge().compute_score gives it; texts
    tokenised by `ptb_tokenize`."""
    gts, res = _as_coco(hypotheses, references)
    scores = [_rouge_l(res[key][0], gts[key]) for key in gts]
    return float(np.mean(np.array(scores)))


def _rouge_l(candidate: str, references: Sequence[str]) -> float:
    """pycocoevalcap's Rouge.calc_score: tokens split on single spaces, the best precision
    and the best recall over the references, F with beta 1.2 (its operations in its order,
    so that the floats are the same)."""
    if not references:
        raise ValueError("ROUGE-L needs at least one reference for every output")
    candidate_tokens = candidate.split(" ")
    best_precision = best_recall = 0.0
    for reference in references:
        reference_tokens = reference.split(" ")
        common = lcs_length(reference_tokens, candidate_tokens)
        best_precision = max(best_precision, common / len(candidate_tokens))
        best_recall = max(best_recall, common / len(reference_tokens))
    if best_precision == 0 or best_recall == 0:
        return 0.0
    weight = ROUGE_BETA**2
    return ((1 + weight) * best_precision * best_recall) / (best_recall + weight * best_precision)


def lcs_length(first: Sequence[str], second: Sequence[str]) -> int:
    """The length of the longest common subsequence of two token lists, bit-parallel
    (Hyyrö 2004, "Bit-parallel LCS-length computation revisited"): `row` holds the LCS
    table's current column as its steps, a bit per token of the longer list (0 where the
    length grows at that token); each token of the shorter list updates the whole column
    with one addition. The LCS length is the number of 0 bits."""
    longer, shorter = (first, second) if len(first) >= len(second) else (second, first)
    positions: dict[str, int] = {}
    for index, token in enumerate(longer):
        positions[token] = positions.get(token, 0) | (1 << index)
    ones = (1 << len(longer)) - 1
    row = ones
    for token in shorter:
        matched = row & positions.get(token, 0)
        row = ((row + matched) | (row - matched)) & ones
    return len(longer) - row.bit_count()


def cider(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Corpus CIDEr-D; texts tokenised by `ptb_tokenize`."""
    return CiderReferences(references).score(hypotheses)


CIDER_N = 4  # n-grams of 1 to 4 words
CIDER_SIGMA = 6.0  # the Gaussian length penalty's standard deviation

# A text's CIDEr vector: per n-gram length, tf-idf weight by n-gram; the norm of each
# length's weights; the text's length in pycocoevalcap's sense (its count of bigrams).
Vector = tuple[list[dict[tuple[str, ...], float]], list[float], int]


class CiderReferences:
    """pycocoevalcap's CIDEr-D (`CiderScorer`) against one corpus of references, computed
    once: the document frequencies (from the references alone, as there), the log of the
    number of items and each reference's vector. `score` then does pycocoevalcap's steps
    for the hypotheses, with the same float operations in the same order, so the scores
    are its scores to the last bit. The differences do not change a value: a missing
    n-gram reads as 0.0 where pycocoevalcap's defaultdict would insert one (and a product
    with 0.0 added to a sum leaves it as it was), the logarithms of the few distinct
    document frequencies are kept, and the length penalty is computed once per pair of
    texts instead of once per n-gram length."""

    def __init__(self, references: Sequence[Sequence[str]]) -> None:
        if any(not group for group in references):
            raise ValueError("CIDEr needs at least one reference for every output")
        counted = [[_ngram_counts(reference) for reference in group] for group in references]
        frequency: Counter[tuple[str, ...]] = Counter()
        for group in counted:
            frequency.update({ngram for counts in group for ngram in counts})
        self._frequency = frequency
        self._log_frequency: dict[float, np.float64] = {}
        self._log_items = np.log(float(len(counted)))
        self._references = [[self._vector(counts) for counts in group] for group in counted]

    def score(self, hypotheses: Sequence[str]) -> float:
        """The corpus CIDEr-D of `hypotheses`, one per reference group, in their order."""
        if len(hypotheses) != len(self._references):
            raise ValueError(
                f"{len(hypotheses)} outputs for {len(self._references)} reference groups"
            )
        scores = []
        for hypothesis, group in zip(hypotheses, self._references, strict=True):
            vector = self._vector(_ngram_counts(hypothesis))
            total = np.array([0.0] * CIDER_N)
            for reference in group:
                total += _similarity(vector, reference)
            scores.append(np.mean(total) / len(group) * 10.0)
        return float(np.mean(np.array(scores)))

    def _vector(self, counts: dict[tuple[str, ...], int]) -> Vector:
        """pycocoevalcap's `counts2vec`."""
        weights: list[dict[tuple[str, ...], float]] = [{} for _ in range(CIDER_N)]
        norms = [0.0] * CIDER_N
        length = 0
        for ngram, term_frequency in counts.items():
            size = len(ngram) - 1
            weight = float(term_frequency) * (self._log_items - self._log_of(ngram))
            weights[size][ngram] = weight
            norms[size] += pow(weight, 2)
            if size == 1:
                length += term_frequency
        return weights, [np.sqrt(norm) for norm in norms], length

    def _log_of(self, ngram: tuple[str, ...]) -> np.float64:
        # An n-gram no reference has counts once, as in pycocoevalcap.
        frequency = max(1.0, float(self._frequency.get(ngram, 0)))
        if frequency not in self._log_frequency:
            self._log_frequency[frequency] = np.log(frequency)
        return self._log_frequency[frequency]


def _ngram_counts(text: str) -> dict[tuple[str, ...], int]:
    """pycocoevalcap's `precook`: the counts of the text's 1- to 4-grams, split on spaces."""
    words = text.split()
    counts: dict[tuple[str, ...], int] = {}
    for size in range(1, CIDER_N + 1):
        for start in range(len(words) - size + 1):
            ngram = tuple(words[start : start + size])
            counts[ngram] = counts.get(ngram, 0) + 1
    return counts


def _similarity(hypothesis: Vector, reference: Vector) -> list[float]:
    """pycocoevalcap's `sim`: per n-gram length, the clipped cosine of the two vectors with
    the Gaussian penalty of their length difference."""
    (hyp_weights, hyp_norms, hyp_length), (ref_weights, ref_norms, ref_length) = (
        hypothesis,
        reference,
    )
    delta = float(hyp_length - ref_length)
    penalty = np.e ** (-(delta**2) / (2 * CIDER_SIGMA**2))
    values = []
    for size in range(CIDER_N):
        value = 0.0
        weights = ref_weights[size]
        for ngram, weight in hyp_weights[size].items():
            if ngram in weights:
                value += min(weight, weights[ngram]) * weights[ngram]
        if hyp_norms[size] != 0 and ref_norms[size] != 0:
            value /= hyp_norms[size] * ref_norms[size]
        assert not math.isnan(value)
        values.append(value * penalty)
    return values


# The METEOR process that `kept_meteor()` keeps open, once started; None outside it.
_kept: list[Meteor] | None = None


@contextmanager
def kept_meteor() -> Iterator[None]:
    """Inside, every `meteor_scorer()` uses one METEOR process, started on first use and
    stopped on exit, instead of a process each: each start loads the paraphrase table, which
    takes seconds on a quiet machine and a minute on a loaded one (the test session). Inside
    another `kept_meteor()`, the outer one keeps the process."""
    global _kept
    if _kept is not None:
        yield
        return
    _kept = []
    try:
        yield
    finally:
        kept, _kept = _kept, None
        for scorer in kept:
            _stop(scorer)


@contextmanager
def meteor_scorer() -> Iterator[Meteor]:
    """One METEOR 1.5 process (it loads its paraphrase table once, in seconds) for several
    calls of `meteor(scorer, ...)`; stopped on exit, unless `kept_meteor()` keeps it."""
    if _kept is None:
        scorer = Meteor()
        try:
            yield scorer
        finally:
            _stop(scorer)
        return
    if not _kept or _kept[0].meteor_p.poll() is not None:
        _kept[:] = [Meteor()]
    try:
        yield _kept[0]
    except JavaError:
        # Its lock may be left held: the next caller gets a new process.
        _stop(_kept.pop())
        raise


def _stop(scorer: Meteor) -> None:
    process = scorer.meteor_p
    process.stdin.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def meteor(scorer: Meteor, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Corpus METEOR 1.5; texts tokenised by `ptb_tokenize`."""
    return _meteor_scores(scorer, hypotheses, references)[0]


def sentence_meteor(
    scorer: Meteor, hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> list[float]:
    """METEOR 1.5 of each output against its references, in one call of the process."""
    return _meteor_scores(scorer, hypotheses, references)[1]


def _meteor_scores(
    scorer: Meteor, hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> tuple[float, list[float]]:
    gts, res = _as_coco(hypotheses, references)
    # METEOR's input separates references with '|||': one inside a text would shift them.
    gts = {i: [ref.replace("|||", "") for ref in group] for i, group in gts.items()}
    try:
        score, scores = scorer.compute_score(gts, res)
    except ValueError as error:  # an empty line where a number was due: the JVM died
        raise JavaError(
            f"METEOR stopped answering: {scorer.meteor_p.stderr.read()[-500:]!r}"
        ) from error
    return float(score), [float(s) for s in scores]
