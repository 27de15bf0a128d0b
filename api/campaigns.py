"""A campaign made or changed through the API, in two functions: the one place that maps
a request onto Campaign's fields and checks what the admin's form checks (the standard's
input against its kind; a campaign opened only with the standard its pages need,
annotation.judging.why_not_open). A refusal names the field: the endpoint answers 422 with it."""

from django.db import IntegrityError, transaction

from annotation.judging import why_not_open
from annotation.models import Campaign
from nlgdata.inputs import InputError, check_input, check_kind

from .schemas import CampaignIn, CampaignPatch


class CampaignRefused(Exception):
    def __init__(self, field: str, detail: str):
        super().__init__(detail)
        self.field = field
        self.detail = detail


def create_campaign(payload: CampaignIn) -> Campaign | None:
    """The new campaign (a draft), or None if the slug is taken."""
    campaign = Campaign(**payload.dict(exclude_none=True))
    check_standard(campaign)
    try:
        with transaction.atomic():
            campaign.save()
    except IntegrityError:
        return None
    return campaign


def update_campaign(campaign: Campaign, payload: CampaignPatch) -> Campaign:
    """The fields the request sets, checked together, then saved (only those)."""
    changed = payload.dict(exclude_unset=True, exclude_none=True)
    for field, value in changed.items():
        setattr(campaign, field, value)
    check_standard(campaign)
    problem = why_not_open(campaign)
    if problem:
        raise CampaignRefused("status" if "status" in changed else "standard_text", problem)
    if changed:
        campaign.save(update_fields=list(changed))
    return campaign


def check_standard(campaign: Campaign) -> None:
    """The standard's input as its kind reads it ({}: the standard is shown without one)."""
    try:
        check_kind(campaign.standard_input_kind)
    except InputError as error:
        raise CampaignRefused("standard_input_kind", f"standard_input_kind: {error}") from None
    if not campaign.standard_input:
        return
    try:
        check_input(campaign.standard_input_kind, campaign.standard_input)
    except InputError as error:
        raise CampaignRefused("standard_input", f"standard_input: {error}") from None
