"""The registry of judgment forms: how annotators judge a criterion's outputs (its page,
submission, checks, data files, datasheet wording and the ranking views that fit). The
interface is annotation/judging/base.py's JudgmentForm. Adding a form is a module beside
these, its templates, and a line in REGISTERED.

The forms' modules import annotation's forms and submission code: modules under
annotation/handout/ that need a criterion's form import this package inside the function
that asks (they are imported by the forms)."""

from . import da, esa, pairwise, rankme
from .base import JudgmentForm

REGISTERED: tuple[JudgmentForm, ...] = (rankme.FORM, da.FORM, pairwise.FORM, esa.FORM)

FORMS: dict[str, JudgmentForm] = {form.name: form for form in REGISTERED}
NAMES: list[str] = list(FORMS)
CHOICES: list[tuple[str, str]] = [(form.name, form.label) for form in REGISTERED]
# The form of a new criterion (CampaignCriterion.form's default, which a migration records).
DEFAULT = rankme.FORM.name


def form_named(name: str) -> JudgmentForm:
    """The form called `name`; ValueError naming the known ones for any other."""
    try:
        return FORMS[name]
    except KeyError:
        raise ValueError(f"unknown judgment form {name!r}: use one of {', '.join(NAMES)}") from None


def form_of(criterion) -> JudgmentForm:
    """The form a CampaignCriterion is judged with."""
    return form_named(criterion.form)


__all__ = [
    "CHOICES",
    "DEFAULT",
    "FORMS",
    "NAMES",
    "REGISTERED",
    "JudgmentForm",
    "form_named",
    "form_of",
]
