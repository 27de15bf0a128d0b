"""Degraded copies of sentences, for attention checks.

An attention check shows, among a HIT's outputs, a copy of one of them made clearly worse:
some words dropped, a stretch of words shuffled, one word repeated. A careful annotator
scores the copy below its original, for naturalness as for quality (the copy loses content
and reads badly), whatever the system; Appraise's "BAD references" work the same way.

The damage grows with the sentence, so that a long sentence is not degraded by one dropped
word that a reader may miss: about a quarter of the words dropped, a third shuffled.
"""

from __future__ import annotations

import random

from .text import normalise


def degrade(sentence: str, rng: random.Random) -> str:
    """A degraded copy of `sentence`; never equal to it once whitespace is normalised."""
    words = sentence.split()
    if not words:
        raise ValueError("cannot degrade an empty sentence")
    for _ in range(10):
        copy = _repeat_one(_shuffle_stretch(_drop_some(words, rng), rng), rng)
        if normalise(" ".join(copy)) != normalise(sentence):
            return " ".join(copy)
    # Shuffles that gave the sentence back every time: a sentence of one repeated word.
    return " ".join([*words, *words])


def _drop_some(words: list[str], rng: random.Random) -> list[str]:
    if len(words) < 4:
        return list(words)
    dropped = set(rng.sample(range(len(words)), max(1, len(words) // 4)))
    return [word for i, word in enumerate(words) if i not in dropped]


def _shuffle_stretch(words: list[str], rng: random.Random) -> list[str]:
    length = max(2, len(words) // 3)
    if len(words) < 2:
        return list(words)
    start = rng.randrange(0, len(words) - length + 1)
    stretch = words[start : start + length]
    rng.shuffle(stretch)
    return [*words[:start], *stretch, *words[start + length :]]


def _repeat_one(words: list[str], rng: random.Random) -> list[str]:
    i = rng.randrange(len(words))
    return [*words[: i + 1], words[i], *words[i + 1 :]]
