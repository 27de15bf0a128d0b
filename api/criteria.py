"""A criterion made through the API, in one function: the one place that maps the request
onto CampaignCriterion's fields, so a change to that model changes only this.

The model checks what it holds, and the form the settings (`clean_criterion`): the name's
characters, the form among the registry's (annotation/judging/), a question where the name
has no default one, and the settings as the form's `clean_settings` reads them. Its errors
come back as 422 naming the field (and, for settings, the key)."""

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, transaction

from annotation.judging import clean_criterion
from annotation.models import NATURALNESS, Campaign, CampaignCriterion

from .schemas import CriterionIn

# The order in which a request's faults are named (the first one is the error's `field`).
FIELDS = ("name", "form", "question", "shows_input", "is_open", "settings")


class CriterionRefused(Exception):
    """What the model refused, by field: the endpoint answers 422 with it."""

    def __init__(self, field: str, detail: str):
        super().__init__(detail)
        self.field = field
        self.detail = detail


def create_criterion(campaign: Campaign, payload: CriterionIn) -> CampaignCriterion | None:
    """The new criterion, or None if the campaign has one of that name already; a request
    the model refuses raises CriterionRefused."""
    criterion = CampaignCriterion(
        campaign=campaign,
        name=payload.name,
        form=payload.form,
        settings=payload.settings if payload.settings is not None else {},
        question=payload.question,
        # As the importers and the demo make them: naturalness judges the sentences alone.
        shows_input=(
            payload.shows_input if payload.shows_input is not None else payload.name != NATURALNESS
        ),
        is_open=payload.is_open,
    )
    try:
        # The name once per campaign is the database's to say (a 409, not a 422).
        clean_criterion(criterion, exclude=["campaign"], validate_constraints=False)
    except ValidationError as error:
        raise refused(error) from None
    try:
        with transaction.atomic():
            criterion.save()
    except IntegrityError:
        return None
    return criterion


def refused(error: ValidationError) -> CriterionRefused:
    found = error.message_dict
    fields = [f for f in FIELDS if f in found] + [f for f in found if f not in FIELDS]
    parts = []
    for field in fields:
        where = "criterion" if field == NON_FIELD_ERRORS else field
        parts.append(f"{where}: {' '.join(found[field])}")
    first = fields[0]
    return CriterionRefused("" if first == NON_FIELD_ERRORS else first, "; ".join(parts))
