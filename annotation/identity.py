"""Who an annotator is, without an account.

Crowd workers arrive with their platform's query parameters (Prolific: PROLIFIC_PID,
STUDY_ID, SESSION_ID; Mechanical Turk: workerId, assignmentId, hitId); invited annotators
with their private token. The first visit finds or creates the Annotator row, and the
browser session remembers it per campaign, so later pages need no parameters; a worker
who comes back through the platform's link (any browser) is the same row again.
"""

from urllib.parse import quote

from django.conf import settings
from django.db import transaction
from django.db.models import Count, OuterRef, Q, Subquery
from django.urls import reverse

from .loads import lock_criteria, shift_loads
from .models import Annotator, Campaign, CampaignCriterion, Screening

SESSION_KEY = "annotators"  # {campaign id: annotator id}
PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"


def annotator_from_link(campaign: Campaign, source: str, external_id: str, study: dict):
    """The annotator a crowd platform's link names, created on the first visit."""
    annotator, created = Annotator.objects.get_or_create(
        campaign=campaign, source=source, external_id=external_id, defaults={"study_data": study}
    )
    if not created and study and annotator.study_data != study:
        annotator.study_data = study
        annotator.save(update_fields=["study_data"])
    return annotator


def invited_annotator(campaign: Campaign, token: str) -> Annotator | None:
    return Annotator.objects.filter(campaign=campaign, token=token).first()


def remember(session, annotator: Annotator) -> None:
    known = dict(session.get(SESSION_KEY, {}))
    known[str(annotator.campaign_id)] = annotator.pk
    session[SESSION_KEY] = known


def remembered_id(session, campaign: Campaign) -> int | None:
    """The id of the annotator the session remembers for the campaign (the session is a
    signed cookie: only this site can have written it)."""
    return session.get(SESSION_KEY, {}).get(str(campaign.pk))


def remembered_ids(session) -> list[int]:
    """The annotators the session remembers, one per campaign it has entered."""
    return [int(pk) for pk in session.get(SESSION_KEY, {}).values()]


def remembered_in_query(session) -> Subquery:
    """The id of the annotator the session remembers for the campaign of the outer query's
    row (its `campaign_id`), or NULL: lets a view read it with that row, in one query."""
    known = remembered_ids(session)
    annotators = Annotator.objects.filter(campaign_id=OuterRef("campaign_id"), pk__in=known)
    return Subquery(annotators.values("pk")[:1])


def remembered(session, campaign: Campaign) -> Annotator | None:
    annotator_id = remembered_id(session, campaign)
    if annotator_id is None:
        return None
    return Annotator.objects.filter(pk=annotator_id, campaign=campaign).first()


def invite(campaign: Campaign, name: str) -> Annotator:
    """A named annotator with a private link (see `invite_path`); the same one again when
    the name was invited before."""
    annotator, _ = Annotator.objects.get_or_create(
        campaign=campaign,
        source=Annotator.Source.INVITED,
        external_id=name[:200],
        defaults={"name": name[:200]},
    )
    return annotator


# What Prolific replaces in a study's URL with each participant's own values.
PROLIFIC_PLACEHOLDERS = (
    "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)


def site_url(request=None) -> str:
    """The site's address, no trailing slash: the host the request came to where there is
    one, else the SITE_URL setting ("" when unset: links are then paths)."""
    if request is not None:
        return request.build_absolute_uri("/").rstrip("/")
    return settings.SITE_URL


def prolific_entry_url(criterion: CampaignCriterion, request=None) -> str:
    """The study URL an organiser pastes into Prolific for one criterion."""
    entry = reverse("annotation:entry", args=[criterion.campaign.slug, criterion.criterion])
    return f"{site_url(request)}{entry}?{PROLIFIC_PLACEHOLDERS}"


def invite_path(annotator: Annotator, criterion_name: str) -> str:
    entry = reverse("annotation:entry", args=[annotator.campaign.slug, criterion_name])
    return f"{entry}?token={annotator.token}"


# An annotator at least this share of whose submitted HITs were flagged did not do the task.
FAILING_FLAGGED_SHARE = 0.5


# Why an annotator's work does not pass the checks (failed_check): the completion page
# tells them which.
EXCLUDED, FAILED_ATTENTION, FAILED_COMPREHENSION, TOO_FAST = (
    "excluded",
    "attention",
    "comprehension",
    "too fast",
)


def failed_check(annotator: Annotator) -> str:
    """Why the completion code is the failed one, or "" when the work passes: excluded by
    an organiser or by the attention checks, screened out by a comprehension check, or at
    least FAILING_FLAGGED_SHARE of their submitted HITs flagged."""
    if annotator.is_excluded:
        return FAILED_ATTENTION if annotator.failed_attention_at is not None else EXCLUDED
    if annotator.screenings.filter(passed=False, attempts__gte=Screening.MAX_ATTEMPTS).exists():
        return FAILED_COMPREHENSION
    counts = annotator.assignments.submitted().aggregate(
        done=Count("id"), flagged=Count("id", filter=~Q(flag=""))
    )
    if counts["done"] and counts["flagged"] / counts["done"] >= FAILING_FLAGGED_SHARE:
        return TOO_FAST
    return ""


def passes_checks(annotator: Annotator) -> bool:
    return not failed_check(annotator)


def completion_code(annotator: Annotator, failure: str | None = None) -> str:
    """The code for `failure` (failed_check's, worked out here when not given)."""
    campaign = annotator.campaign
    failure = failed_check(annotator) if failure is None else failure
    return campaign.failed_completion_code if failure else campaign.completion_code


def completion_url(annotator: Annotator, code: str) -> str:
    """Where the annotator goes back to their platform with `code`; empty if nowhere."""
    if annotator.source == Annotator.Source.PROLIFIC:
        return PROLIFIC_COMPLETION_URL.format(code=quote(code))
    return ""


def set_excluded(annotator: Annotator, excluded: bool) -> None:
    """Leave the annotator's judgments out of rankings (or take them back in), recorded as
    a change of the criteria they worked on."""
    with transaction.atomic():
        criteria = CampaignCriterion.objects.filter(
            campaign_id=annotator.campaign_id,
            criterion__in=annotator.assignments.submitted().values("hit__criterion"),
        )
        locked = lock_criteria(criteria)
        changes = Annotator.objects.filter(pk=annotator.pk).exclude(is_excluded=excluded)
        if changes.update(is_excluded=excluded):
            for criterion in locked:
                # Their unflagged HITs stop (or start again) counting towards balance.
                counted = annotator.assignments.submitted().filter(
                    flag="", hit__criterion=criterion.criterion
                )
                shift_loads(criterion, counted, -1 if excluded else +1)
        annotator.is_excluded = excluded
        criteria.record_judgments_change()
