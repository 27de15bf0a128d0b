"""What a RankME judgment holds: a magnitude score and, for quality, coverage marks.

The HIT form and the importer of E2E crowd ratings both check judgments by these rules
(DESIGN.md, 'RankME, precisely').
"""

from collections.abc import Iterable

# RankME's pages took whole positive numbers of at most 6 digits.
MAX_SCORE_DIGITS = 6
MAX_SCORE = 10**MAX_SCORE_DIGITS - 1

# The coverage marks, in the order the HIT page shows them, with the words it uses.
COVERAGE_MARKS = {
    "adds": "contains additional information",
    "misses": "misses some information",
    "perfect": "reflects the input perfectly",
}
COVERAGE_RULE = (
    "'Reflects the input perfectly' cannot be ticked together with 'contains additional "
    "information' or 'misses some information'."
)
# The words of the `check` columns in E2E's CrowdFlower exports, for the same marks.
E2E_COVERAGE_WORDS = {"added": "adds", "missing": "misses", "ok": "perfect"}


def coverage_allowed(marks: Iterable[str]) -> bool:
    """False when 'perfect' is ticked together with another mark (COVERAGE_RULE)."""
    marks = set(marks)
    return "perfect" not in marks or marks == {"perfect"}
