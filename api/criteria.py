"""A criterion made through the API, in one function: the one place that maps the request
onto CampaignCriterion's fields, so a change to that model changes only this."""

from django.db import IntegrityError, transaction
from ninja.errors import HttpError

from annotation.models import Campaign, CampaignCriterion, Criterion

from .schemas import CriterionIn


def create_criterion(campaign: Campaign, payload: CriterionIn) -> CampaignCriterion | None:
    """The new criterion, or None if the campaign has one of that name already."""
    if payload.name not in Criterion.values:
        known = ", ".join(Criterion.values)
        raise HttpError(422, f"name: unknown criterion {payload.name!r}; one of {known}")
    # Fail closed: a form or settings this model cannot hold are refused, never dropped.
    if payload.form or payload.settings:
        raise HttpError(422, "form, settings: not supported by this version of the platform")
    try:
        with transaction.atomic():
            return CampaignCriterion.objects.create(
                campaign=campaign,
                criterion=payload.name,
                question=payload.question,
                is_open=payload.is_open,
            )
    except IntegrityError:
        return None
