import random

import pytest

from nlgdata.attention import attention_verdict, checks_needed, describe_verdict
from nlgdata.degrade import degrade
from nlgdata.text import normalise

SENTENCES = [
    "The Vaults is a pub near Café Adriatic.",
    "Near Burger King by the riverside, The Eagle is a coffee shop serving French food.",
    "Fine food.",
    "Yes",
    "a a a a",
]


@pytest.mark.parametrize("sentence", SENTENCES)
def test_a_degraded_copy_differs_from_its_sentence_and_keeps_only_its_words(sentence):
    for seed in range(50):
        copy = degrade(sentence, random.Random(seed))
        assert normalise(copy) != normalise(sentence)
        assert set(copy.split()) <= set(sentence.split())


def test_a_long_sentence_loses_about_a_quarter_of_its_words():
    sentence = " ".join(f"w{i}" for i in range(20))
    copy = degrade(sentence, random.Random(1)).split()
    assert len(set(copy)) == 15  # 5 dropped, one of the rest repeated
    assert len(copy) == 16


def test_an_empty_sentence_cannot_be_degraded():
    with pytest.raises(ValueError, match="empty"):
        degrade("  ", random.Random(0))


def test_checks_needed_are_those_with_which_a_perfect_annotator_can_pass():
    # With n checks and no ties the smallest one-sided p is 1 / C(2n, n).
    assert [checks_needed(t) for t in (0.5, 0.2, 0.10, 0.05, 0.01)] == [1, 2, 3, 3, 5]


def test_a_careful_annotator_passes_once_there_are_enough_checks():
    open_verdict = attention_verdict([80, 90], [20, 30], 0.10)
    assert open_verdict.p == pytest.approx(1 / 6) and not open_verdict.failed
    verdict = attention_verdict([80, 90, 70], [20, 30, 10], 0.10)
    assert verdict.p == pytest.approx(1 / 20) and not verdict.failed


def test_scoring_everything_alike_or_the_copies_higher_fails():
    assert attention_verdict([50] * 4, [50] * 4, 0.10).failed
    reversed_verdict = attention_verdict([20, 30, 10], [80, 90, 70], 0.10)
    assert reversed_verdict.failed and reversed_verdict.p > 0.9


def test_no_checks_no_verdict():
    verdict = attention_verdict([], [], 0.10)
    assert verdict.checks == 0 and verdict.p is None and not verdict.failed


def test_the_verdict_reads_with_its_rule():
    assert describe_verdict(0, None, 0.1) == "no checks yet (passes at p ≤ 0.1)"
    assert describe_verdict(2, 1 / 6, 0.1).startswith("open: p = 0.167 after 2 of the 3")
    assert describe_verdict(3, 0.05, 0.1).startswith("passed: p = 0.050 over 3 checks")
    assert describe_verdict(4, 0.6, 0.1).startswith("failed: p = 0.600 over 4 checks")
