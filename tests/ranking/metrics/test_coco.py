"""ROUGE-L and CIDEr as pycocoevalcap computes them: its own Rouge and Cider classes (the
code the E2E scripts run) are the oracles, on E2E's published outputs and on made-up token
lists."""

import csv

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.rouge.rouge import Rouge, my_lcs

from ranking.metrics.coco import CiderReferences, cider, lcs_length, rouge_l

# Few distinct tokens, so that lists share many; up to 80 tokens, past a 64-bit word.
TOKENS = st.lists(st.sampled_from(["the", "a", "pub", "", "near", "x"]), max_size=80)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(TOKENS, TOKENS)
def test_lcs_length_is_pycocoevalcaps(first, second):
    assert lcs_length(first, second) == my_lcs(first, second)


def oracle(hypotheses, references, metric=Rouge) -> float:
    gts = {n: list(group) for n, group in enumerate(references)}
    res = {n: [hypothesis] for n, hypothesis in enumerate(hypotheses)}
    return float(metric().compute_score(gts, res)[0])


def test_rouge_l_of_texts_with_empty_and_doubled_spaces_is_pycocoevalcaps():
    hypotheses = ["the pub near the river", "", "a  pub", "nothing shared here"]
    references = [["the pub", "a pub by the river"], ["a pub"], ["a pub", " a"], ["the pub"]]
    assert rouge_l(hypotheses, references) == oracle(hypotheses, references)


def e2e_outputs(e2e_data, systems) -> tuple[dict[str, list[str]], list[list[str]]]:
    """Each system's 630 outputs and their references, in the test set's order (lowercased
    and split on spaces here, without Java's tokeniser: both metrics take any text)."""
    references: dict[str, list[str]] = {}
    with (e2e_data / "testset_w_refs.csv").open(encoding="utf-8", newline="") as file:
        for row in csv.DictReader(file):
            references.setdefault(row["mr"], []).append(row["ref"].lower())
    hypotheses = {}
    for system in systems:
        with (e2e_data / "outputs" / f"{system}.tsv").open(
            encoding="utf-8-sig", newline=""
        ) as file:
            outputs = {
                row["MR"]: row["output"].lower() for row in csv.DictReader(file, delimiter="\t")
            }
        hypotheses[system] = [outputs[key] for key in references]
    return hypotheses, list(references.values())


def test_rouge_l_of_e2e_outputs_is_pycocoevalcaps_to_the_last_bit(e2e_data):
    outputs, groups = e2e_outputs(e2e_data, ("tgen", "slug", "sheff2"))
    for hypotheses in outputs.values():
        assert rouge_l(hypotheses, groups) == oracle(hypotheses, groups)


def test_cider_of_e2e_outputs_is_pycocoevalcaps_to_the_last_bit(e2e_data):
    """Two systems against the references computed once, as the metrics run does."""
    outputs, groups = e2e_outputs(e2e_data, ("tgen", "sheff2"))
    shared = CiderReferences(groups)
    for hypotheses in outputs.values():
        assert shared.score(hypotheses) == oracle(hypotheses, groups, Cider)


# Up to 12 tokens from few distinct ones: n-grams shared, repeated, or in no reference.
TEXTS = st.lists(st.sampled_from(["the", "a", "pub", "near", "x"]), max_size=12).map(" ".join)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(TEXTS, st.lists(TEXTS, min_size=1, max_size=4)), min_size=1, max_size=6))
def test_cider_of_made_up_texts_is_pycocoevalcaps(pairs):
    hypotheses = [hypothesis for hypothesis, _ in pairs]
    references = [group for _, group in pairs]
    assume(any(reference for group in references for reference in group))  # theirs: max([])
    assert cider(hypotheses, references) == oracle(hypotheses, references, Cider)


def test_cider_refuses_an_output_without_references():
    with pytest.raises(ValueError, match="at least one reference"):
        cider(["a pub"], [[]])


def test_rouge_l_refuses_an_output_without_references():
    with pytest.raises(ValueError, match="at least one reference"):
        rouge_l(["a pub"], [[]])
