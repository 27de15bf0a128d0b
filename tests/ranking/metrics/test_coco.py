"""ROUGE-L as pycocoevalcap computes it: its own Rouge class (the code the E2E scripts run)
is the oracle, on E2E's published outputs and on made-up token lists."""

import csv

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycocoevalcap.rouge.rouge import Rouge, my_lcs

from ranking.metrics.coco import lcs_length, rouge_l

# Few distinct tokens, so that lists share many; up to 80 tokens, past a 64-bit word.
TOKENS = st.lists(st.sampled_from(["the", "a", "pub", "", "near", "x"]), max_size=80)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(TOKENS, TOKENS)
def test_lcs_length_is_pycocoevalcaps(first, second):
    assert lcs_length(first, second) == my_lcs(first, second)


def oracle(hypotheses, references) -> float:
    gts = {n: list(group) for n, group in enumerate(references)}
    res = {n: [hypothesis] for n, hypothesis in enumerate(hypotheses)}
    return float(Rouge().compute_score(gts, res)[0])


def test_rouge_l_of_texts_with_empty_and_doubled_spaces_is_pycocoevalcaps():
    hypotheses = ["the pub near the river", "", "a  pub", "nothing shared here"]
    references = [["the pub", "a pub by the river"], ["a pub"], ["a pub", " a"], ["the pub"]]
    assert rouge_l(hypotheses, references) == oracle(hypotheses, references)


def test_rouge_l_of_e2e_outputs_is_pycocoevalcaps_to_the_last_bit(e2e_data):
    """Three systems' 630 outputs against the test set's references (lowercased and split on
    spaces here, without Java's tokeniser: ROUGE-L takes any text)."""
    references: dict[str, list[str]] = {}
    with (e2e_data / "testset_w_refs.csv").open(encoding="utf-8", newline="") as file:
        for row in csv.DictReader(file):
            references.setdefault(row["mr"], []).append(row["ref"].lower())
    for system in ("tgen", "slug", "sheff2"):
        with (e2e_data / "outputs" / f"{system}.tsv").open(
            encoding="utf-8-sig", newline=""
        ) as file:
            outputs = {
                row["MR"]: row["output"].lower() for row in csv.DictReader(file, delimiter="\t")
            }
        keys = list(references)
        hypotheses = [outputs[key] for key in keys]
        groups = [references[key] for key in keys]
        assert rouge_l(hypotheses, groups) == oracle(hypotheses, groups)


def test_rouge_l_refuses_an_output_without_references():
    with pytest.raises(ValueError, match="at least one reference"):
        rouge_l(["a pub"], [[]])
