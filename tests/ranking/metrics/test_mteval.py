import math

import pytest

from ranking.metrics import mteval


def test_bleu_is_case_insensitive_on_13a_tokens():
    score = mteval.bleu(
        ["The Mill is a pub near the river."], [["the mill is a pub near the river ."]]
    )
    assert score.value == pytest.approx(1.0)
    assert "case:lc" in score.signature and "tok:13a" in score.signature


def test_bleu_takes_a_variable_number_of_references():
    hyps = ["a pub in the city centre", "a cheap coffee shop by the river"]
    refs = [["a pub in the city centre", "there is a pub"], ["a cheap coffee shop by the river"]]
    score = mteval.bleu(hyps, refs)
    assert score.value == pytest.approx(1.0)
    assert "nrefs:var" in score.signature


def test_chrf_of_identical_texts_is_one():
    assert mteval.chrf(["Blue Spice is a pub."], [["Blue Spice is a pub."]]).value == 1.0


def test_nist_of_a_one_reference_copy_is_the_unigram_information():
    # Unigrams a, b, c: log2(3 words / 1) each; every longer n-gram follows its prefix
    # always, so carries no information.
    assert mteval.nist(["a b c"], [["a b c"]]) == pytest.approx(math.log2(3))


def test_nist_clips_by_the_largest_count_in_one_reference():
    # "a a" in the output: one reference has "a" twice, so both count.
    refs = [["a a b", "a c"]]
    info = mteval.information_weights([["a", "a", "b"], ["a", "c"]])
    expected_unigrams = 2 * info[("a",)] / 2
    expected_bigrams = info[("a", "a")] / 1
    ref_length = (3 + 2) / 2
    penalty = mteval.nist_length_penalty(2, ref_length)
    assert mteval.nist(["A a"], refs) == pytest.approx(
        (expected_unigrams + expected_bigrams) * penalty
    )


def test_nist_length_penalty_halves_at_two_thirds_of_the_reference_length():
    assert mteval.nist_length_penalty(2, 3) == pytest.approx(0.5)
    assert mteval.nist_length_penalty(4, 3) == 1.0
    assert mteval.nist_length_penalty(0, 3) == 0.0


def test_corpus_refuses_outputs_that_do_not_match_its_references():
    corpus = mteval.Corpus([["a"], ["b"]])
    with pytest.raises(ValueError, match="1 outputs for 2 reference groups"):
        corpus.bleu(["a"])
