"""The judgment forms' names, as a criterion stores them (`CampaignCriterion.form`): what the
model checks a criterion's form against, without the registry (annotation/judging/), whose
forms are built on the models. A form's name is its module's in annotation/judging/, so the
names are read from the folder, importing nothing: a new form is a module there and needs
no line here. tests/annotation/test_judging.py checks that the registry holds these names,
in this order."""

from pathlib import Path

RANKME = "rankme"
DA = "da"
PAIRWISE = "pairwise"
ESA = "esa"

# The modules of annotation/judging/ that are not forms but what the forms are built on.
HELPERS = ("__init__", "base", "sliders")
# The order the admin offers the forms in: these first, then any other by name.
FIRST = (RANKME, DA, PAIRWISE, ESA)


def form_modules(folder: Path = Path(__file__).parent / "judging") -> list[str]:
    """The names of the form modules in `folder`, in the admin's order."""
    found = {path.stem for path in folder.glob("*.py")} - set(HELPERS)
    return [name for name in FIRST if name in found] + sorted(found - set(FIRST))


NAMES: tuple[str, ...] = tuple(form_modules())
# The form of a new criterion (CampaignCriterion.form's default, which a migration records).
DEFAULT = RANKME


def unknown_form(name: str) -> str:
    """What is said of a name that is none of the forms'."""
    return f"unknown judgment form {name!r}: use one of {', '.join(NAMES)}"
