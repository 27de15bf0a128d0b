"""The judgment forms' names, as a criterion stores them (`CampaignCriterion.form`): what the
model checks a criterion's form against, without the registry (annotation/judging/), whose
forms are built on the models. Each form's module takes its name from here, and the
registry holds the forms in this order (tests/annotation/test_judging.py checks both)."""

RANKME = "rankme"
DA = "da"
PAIRWISE = "pairwise"
ESA = "esa"

NAMES: tuple[str, ...] = (RANKME, DA, PAIRWISE, ESA)
# The form of a new criterion (CampaignCriterion.form's default, which a migration records).
DEFAULT = RANKME


def unknown_form(name: str) -> str:
    """What is said of a name that is none of the forms'."""
    return f"unknown judgment form {name!r}: use one of {', '.join(NAMES)}"
