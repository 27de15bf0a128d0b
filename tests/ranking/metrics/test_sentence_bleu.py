"""LogicNLG's BLEU-1/2/3 (its evaluate.py, nltk's sentence_bleu), by hand and on Table 2."""

import math

import pytest

from nlgdata.published import read_logicnlg
from ranking.metrics.sentence_bleu import References, logicnlg_scores, score_systems

REFERENCES = ["the cat sat on the mat", "a cat is on the mat"]


def test_logicnlg_scores_match_a_hand_count():
    # Unigrams 6/6, bigrams 5/5, trigrams 3/4 ("the cat is" is in neither reference);
    # both references have the hypothesis's length, so no brevity penalty.
    scores = logicnlg_scores(References(REFERENCES), "The cat is on the mat")
    assert scores["bleu1"] == pytest.approx(1.0)
    assert scores["bleu2"] == pytest.approx(1.0)
    assert scores["bleu3"] == pytest.approx(0.75**0.33)  # weights .33, not thirds


def test_logicnlg_scores_without_trigram_matches_are_zero_for_bleu3_only():
    scores = logicnlg_scores(References(REFERENCES), "cat is a mat on")
    # 5 of 5 unigrams, 1 of 4 bigrams ("cat is"), no trigram; lengths 6 and 6 -> BP e^(1-6/5).
    penalty = math.exp(1 - 6 / 5)
    assert scores["bleu1"] == pytest.approx(penalty)
    assert scores["bleu2"] == pytest.approx(penalty * math.sqrt(1 / 4))
    assert scores["bleu3"] < 1e-100


def test_logicnlg_scores_are_zero_without_a_unigram_match():
    assert logicnlg_scores(References(REFERENCES), "dogs bark") == {
        "bleu1": 0.0,
        "bleu2": 0.0,
        "bleu3": 0.0,
    }


def test_references_split_on_single_spaces_as_evaluate_py_does():
    # "a  b" is three tokens there ("a", "", "b"): the closest reference length is 3, not 2.
    spaced = References(["a  b"])
    assert spaced.lengths == [3]
    assert logicnlg_scores(spaced, "a b")["bleu1"] == pytest.approx(math.exp(1 - 3 / 2))


def test_score_systems_averages_over_outputs_with_references():
    references = {1: REFERENCES, 2: []}
    outputs = {"s": {1: "the cat is on the mat", 2: "anything"}}
    count, means = score_systems(references, outputs)["s"]
    assert count == 1 and means["bleu1"] == pytest.approx(1.0)


# LogicNLG's Table 2 (test set), times 100.
TABLE_2 = {
    "field-infusing-trans": (43.7, 20.9, 8.4),
    "gpt-tabgen-sm": (48.8, 27.1, 12.6),
    "gpt-coarse-to-fine-sm": (46.6, 26.8, 13.3),
}


def test_score_systems_reproduces_logicnlg_table_2(logicnlg_data):
    dataset = read_logicnlg(logicnlg_data)
    references = {item.external_id: item.references for item in dataset.items}
    results = score_systems(references, {s.name: s.outputs for s in dataset.systems})
    for system, published in TABLE_2.items():
        count, means = results[system]
        assert count == 4305
        ours = [100 * means[name] for name in ("bleu1", "bleu2", "bleu3")]
        assert ours == pytest.approx(published, abs=0.2), system
    # The outputs' file names carry their BLEU-3 to two decimals.
    assert 100 * results["gpt-tabgen-sm"][1]["bleu3"] == pytest.approx(12.65, abs=0.005)
    assert 100 * results["gpt-coarse-to-fine-sm"][1]["bleu3"] == pytest.approx(13.35, abs=0.005)
