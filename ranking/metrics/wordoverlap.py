"""Word-overlap metrics of several systems against their items' references: E2E Table 8
(BLEU, NIST, METEOR, ROUGE-L, CIDEr and their normalised average) and chrF.

A system is scored on its outputs for items that have references, against those items'
references; systems with outputs for the same items share the reference-side work.
METEOR runs in its own Java process, in a thread beside the Python metrics.
"""

import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import ranking.metrics.coco as coco
import ranking.metrics.mteval as mteval

TABLE_8 = ("bleu", "nist", "meteor", "rouge_l", "cider")
WORD_OVERLAP = (*TABLE_8, "chrf")
JAVA_METRICS = ("meteor", "rouge_l", "cider")
# Table 8's "normalised average": each metric divided by the top of its range (BLEU,
# METEOR and ROUGE-L are in 0-1, NIST and CIDEr in 0-10), then the mean of the five. The
# published averages are exactly this (tgen: (0.6593 + 0.86094 + 0.4483 + 0.6850 +
# 0.22338) / 5 = 0.5754), not a min-max scaling across systems.
RANGE_TOP = {"bleu": 1.0, "nist": 10.0, "meteor": 1.0, "rouge_l": 1.0, "cider": 10.0}

IMPLEMENTATIONS = {
    "nist": "mteval-v13a NIST (n=5), case-insensitive, on sacrebleu's 13a tokens",
    "meteor": "METEOR 1.5 (pycocoevalcap jar, -l en -norm) on PTB tokens, lowercased",
    "rouge_l": (
        "pycocoevalcap's ROUGE-L (beta 1.2; its LCS counted bit-parallel, the same scores) "
        "on PTB tokens, lowercased"
    ),
    "cider": (
        "pycocoevalcap's CIDEr-D (its reference side computed once for all systems, the same "
        "scores) on PTB tokens, lowercased"
    ),
    "normalised_average": "mean of BLEU, NIST/10, METEOR, ROUGE-L, CIDEr/10 (E2E Table 8)",
}

Key = TypeVar("Key", bound=Hashable)  # an item: the service's item ids
System = TypeVar("System", bound=Hashable)  # a system: the service's system ids
Progress = Callable[[int, int], None]  # (systems done, systems to score)
# How often the caller hears of METEOR's progress once the Python metrics are done.
REPORT_SECONDS = 2.0


@dataclass
class WordOverlap(Generic[System]):
    scores: dict[System, dict[str, float]] = field(default_factory=dict)  # system -> metric
    missing: dict[str, str] = field(default_factory=dict)  # metric -> why not computed
    implementations: dict[str, str] = field(default_factory=dict)  # metric -> what computed it
    scored: dict[System, int] = field(default_factory=dict)  # system -> outputs scored


def normalised_average(scores: Mapping[str, float]) -> float | None:
    if any(name not in scores for name in TABLE_8):
        return None
    return sum(scores[name] / RANGE_TOP[name] for name in TABLE_8) / len(TABLE_8)


def score_systems(
    references: Mapping[Key, Sequence[str]],
    outputs: Mapping[System, Mapping[Key, str]],
    progress: Progress | None = None,
) -> WordOverlap[System]:
    """`references`: item -> its references, in item order; `outputs`: system -> item ->
    text. Items without references are left out; so are systems without such outputs."""
    keys = {
        system: tuple(key for key in references if key in texts and references[key])
        for system, texts in outputs.items()
    }
    keys = {system: ks for system, ks in keys.items() if ks}
    result: WordOverlap[System] = WordOverlap(implementations=dict(IMPLEMENTATIONS))
    result.scored = {system: len(ks) for system, ks in keys.items()}
    if not keys:
        return result
    java_reason = coco.java_missing()
    if java_reason:
        result.missing = {name: java_reason for name in (*JAVA_METRICS, "normalised_average")}
    tokens = None if java_reason else _tokenise(references, outputs, keys)
    stop = threading.Event()
    done = _Done(len(keys), with_meteor=tokens is not None, report=progress)
    with ThreadPoolExecutor(max_workers=1) as pool:
        meteor = None if tokens is None else pool.submit(_meteor_all, tokens, keys, stop, done)
        try:
            _score_in_python(references, outputs, keys, tokens, result, done)
            # Reported from this thread, the caller's: a report may write to its database.
            while meteor is not None and wait([meteor], timeout=REPORT_SECONDS).not_done:
                done.tell()
        except BaseException:
            stop.set()  # METEOR stops after the system in hand
            raise
        if meteor is not None:
            for system, value in meteor.result().items():
                result.scores[system]["meteor"] = value
            done.tell()
    for scores in result.scores.values():
        average = normalised_average(scores)
        if average is not None:
            scores["normalised_average"] = average
    return result


def _score_in_python(
    references: Mapping[Key, Sequence[str]],
    outputs: Mapping[System, Mapping[Key, str]],
    keys: Mapping[System, tuple[Key, ...]],
    tokens: "_Tokens[Key, System] | None",
    result: WordOverlap[System],
    done: "_Done",
) -> None:
    corpora: dict[tuple[Key, ...], mteval.Corpus] = {}
    cider_corpora: dict[tuple[Key, ...], coco.CiderReferences] = {}
    for system, ks in keys.items():
        if ks not in corpora:
            corpora[ks] = mteval.Corpus([references[key] for key in ks])
        corpus, hypotheses = corpora[ks], [outputs[system][key] for key in ks]
        bleu, chrf = corpus.bleu(hypotheses), corpus.chrf(hypotheses)
        scores = {"bleu": bleu.value, "nist": corpus.nist(hypotheses), "chrf": chrf.value}
        result.implementations.update(bleu=f"sacrebleu BLEU {bleu.signature}")
        result.implementations.update(chrf=f"sacrebleu chrF2 {chrf.signature}")
        if tokens is not None:
            hyp_tokens, ref_tokens = tokens.hypotheses[system], tokens.references_for(ks)
            scores["rouge_l"] = coco.rouge_l(hyp_tokens, ref_tokens)
            if ks not in cider_corpora:
                cider_corpora[ks] = coco.CiderReferences(ref_tokens)
            scores["cider"] = cider_corpora[ks].score(hyp_tokens)
        result.scores[system] = scores
        done.python += 1
        done.tell()


@dataclass
class _Tokens(Generic[Key, System]):
    references: dict[Key, list[str]]
    hypotheses: dict[System, list[str]]

    def references_for(self, keys: Sequence[Key]) -> list[list[str]]:
        return [self.references[key] for key in keys]


def _tokenise(
    references: Mapping[Key, Sequence[str]],
    outputs: Mapping[System, Mapping[Key, str]],
    keys: Mapping[System, tuple[Key, ...]],
) -> _Tokens[Key, System]:
    """PTB tokens of every reference and output scored, in one Java call."""
    scored = {key for ks in keys.values() for key in ks}
    used = [key for key in references if key in scored]
    texts = [ref for key in used for ref in references[key]]
    for system, ks in keys.items():
        texts += [outputs[system][key] for key in ks]
    tokenised = iter(coco.ptb_tokenize(texts))
    refs = {key: [next(tokenised) for _ in references[key]] for key in used}
    hyps = {system: [next(tokenised) for _ in ks] for system, ks in keys.items()}
    return _Tokens(refs, hyps)


def _meteor_all(
    tokens: _Tokens[Key, System],
    keys: Mapping[System, tuple[Key, ...]],
    stop: threading.Event,
    done: "_Done",
) -> dict[System, float]:
    scores: dict[System, float] = {}
    with coco.meteor_scorer() as scorer:
        for system, ks in keys.items():
            if stop.is_set():
                break
            scores[system] = coco.meteor(
                scorer, tokens.hypotheses[system], tokens.references_for(ks)
            )
            done.meteor += 1  # only this thread writes it; the caller's thread reports it
    return scores


@dataclass
class _Done:
    """Systems scored so far by the Python metrics and by METEOR (its own thread): a
    system is done when both have scored it."""

    total: int
    with_meteor: bool
    report: Progress | None
    python: int = 0
    meteor: int = 0

    @property
    def systems(self) -> int:
        return min(self.python, self.meteor) if self.with_meteor else self.python

    def tell(self) -> None:
        if self.report is not None:
            self.report(self.systems, self.total)
