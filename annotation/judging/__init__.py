"""The registry of judgment forms: how annotators judge a criterion's outputs (its page,
submission, checks, data files, datasheet wording and the ranking views that fit). The
interface is annotation/judging/base.py's JudgmentForm. Adding a form is a module beside
these, named as the form, whose `FORM` is its JudgmentForm, and its templates: the registry
imports every module here and holds each one's FORM, in annotation/form_names.py's order.

The forms are built on annotation's models, page forms (annotation/forms.py) and the
hand-out's statements (annotation/handout/sql.py, shown.py), so none of those asks the
registry: the model stores a form's name (annotation/form_names.py checks it), and what a
criterion's form says is asked here, by the callers (`form_of(criterion)`,
`clean_criterion`, `why_not_open`)."""

import importlib
import pkgutil

from django.core.exceptions import ValidationError

from annotation import form_names
from annotation.models import Campaign, CampaignCriterion

from .base import JudgmentForm


def module_forms() -> tuple[JudgmentForm, ...]:
    """The FORM of every module of this package that has one, in form_names' order."""
    forms = {}
    for module in pkgutil.iter_modules(__path__):
        found = getattr(importlib.import_module(f"{__name__}.{module.name}"), "FORM", None)
        if isinstance(found, JudgmentForm):
            forms[found.name] = found
    return tuple(forms[name] for name in form_names.NAMES if name in forms)


REGISTERED: tuple[JudgmentForm, ...] = module_forms()

FORMS: dict[str, JudgmentForm] = {form.name: form for form in REGISTERED}
NAMES: list[str] = list(FORMS)
CHOICES: list[tuple[str, str]] = [(form.name, form.label) for form in REGISTERED]
# The form of a new criterion (CampaignCriterion.form's default, which a migration records).
DEFAULT = form_names.DEFAULT


def form_named(name: str) -> JudgmentForm:
    """The form called `name`; ValueError naming the known ones for any other."""
    try:
        return FORMS[name]
    except KeyError:
        raise ValueError(form_names.unknown_form(name)) from None


def form_of(criterion: CampaignCriterion) -> JudgmentForm:
    """The form a CampaignCriterion is judged with."""
    return form_named(criterion.form)


def clean_criterion(criterion: CampaignCriterion, **options) -> None:
    """Check a CampaignCriterion before it is saved: the model's own checks
    (`criterion.full_clean(**options)`), then its settings as its form reads them, checked
    and completed (defaults filled in). One ValidationError names every field wrong."""
    errors: dict = {}
    try:
        criterion.full_clean(**options)
    except ValidationError as error:
        errors = error.update_error_dict(errors)
    # The form's settings are read once the model has found the form and its settings an
    # object, and the question given (as the model's clean() said before it).
    if not errors.keys() & {"form", "question", "settings"}:
        try:
            complete_settings(criterion)
        except ValidationError as error:
            errors = error.update_error_dict(errors)
    if errors:
        raise ValidationError(errors)


def complete_settings(criterion: CampaignCriterion) -> None:
    """The criterion's settings as its form reads them, checked (a ValidationError names
    the key) and completed; after the model's own checks (CampaignCriterion.clean)."""
    criterion.settings = form_of(criterion).clean_settings(criterion.settings, criterion)


def why_not_open(campaign: Campaign, criteria_forms: dict[str, str] | None = None) -> str:
    """Why the campaign, as it stands (its status and standard, saved or not), may not
    be open to annotators; '' where it may. A criterion whose pages show the standard
    scored 100 (RankME) needs the organiser's own: none is made up from the items.
    `criteria_forms`: name -> judgment form of its criteria as a save will leave them,
    where the caller knows (the admin's criteria); else the database's."""
    if campaign.status != campaign.Status.OPEN or campaign.standard_text.strip():
        return ""
    if criteria_forms is None:
        criteria_forms = dict(campaign.criteria.values_list("name", "form")) if campaign.pk else {}
    showing = sorted(
        name
        for name, form in criteria_forms.items()
        if form in FORMS and FORMS[form].shows_standard
    )
    if not showing:
        return ""
    return (
        f"A campaign opens to annotators with a standard: its {', '.join(showing)}"
        f" {'criterion is' if len(showing) == 1 else 'criteria are'} judged with RankME,"
        " whose pages score every output against the standard's 100. Write the standard"
        " utterance (with its input, for criteria that show the input) first, or keep the"
        " campaign a draft."
    )


__all__ = [
    "CHOICES",
    "DEFAULT",
    "FORMS",
    "NAMES",
    "REGISTERED",
    "JudgmentForm",
    "clean_criterion",
    "complete_settings",
    "form_named",
    "form_of",
    "why_not_open",
]
