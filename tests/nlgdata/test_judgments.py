import pytest

from nlgdata.judgments import COVERAGE_MARKS, E2E_COVERAGE_WORDS, coverage_allowed


@pytest.mark.parametrize(
    "marks, allowed",
    [
        ([], True),
        (["adds"], True),
        (["misses"], True),
        (["adds", "misses"], True),
        (["perfect"], True),
        (["perfect", "adds"], False),
        (["misses", "perfect"], False),
        (["adds", "misses", "perfect"], False),
    ],
)
def test_coverage_allowed_keeps_perfect_alone(marks, allowed):
    assert coverage_allowed(marks) is allowed


def test_e2e_coverage_words_name_every_mark_once():
    assert sorted(E2E_COVERAGE_WORDS.values()) == sorted(COVERAGE_MARKS)
