"""Who an annotator is, without an account.

Crowd workers arrive with their platform's query parameters (Prolific: PROLIFIC_PID,
STUDY_ID, SESSION_ID; Mechanical Turk: workerId, assignmentId, hitId); invited annotators
with their private token. The first visit finds or creates the Annotator row, and the
browser session remembers it per campaign, so later pages need no parameters. A crowd
worker who comes back through the platform's link is the same row again only with the
value that bound their id on the first visit (Prolific's session id, Mechanical Turk's
assignment id: any browser), or in the browser that holds them. Mechanical Turk closed on
30 September 2026, so its links are refused unless the campaign accepts them.
"""

from urllib.parse import quote

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.urls import reverse

from .handout.loads import lock_criteria, shift_loads
from .models import (
    Annotator,
    Campaign,
    CampaignCriterion,
    ProlificCheck,
    Screening,
    unflagged_q,
)

SESSION_KEY = "annotators"  # {campaign id: annotator id}
PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"


class EntryRefused(Exception):
    """An entry link that may not name the annotator it claims; the message tells the
    visitor why."""


ANOTHER_SESSION = (
    "This Prolific ID has already started this study in another Prolific session. Please"
    " carry on in the browser where you started, or contact the researchers through Prolific."
)
ANOTHER_ASSIGNMENT = (
    "This worker ID has already started this task in another Mechanical Turk assignment."
    " Please carry on in the browser where you started, or contact the requester."
)
NO_MTURK = (
    "This study does not take Mechanical Turk links. Please use the link the researchers gave you."
)
REFUSALS: dict[str, str] = {
    Annotator.Source.PROLIFIC: ANOTHER_SESSION,
    Annotator.Source.MTURK: ANOTHER_ASSIGNMENT,
}
# What binds a crowd id to its first entry: a value on the link that the platform gives
# that participant alone (a worker id is public, shown to others and guessable).
BINDING: dict[str, str] = {
    Annotator.Source.PROLIFIC: "session_id",
    Annotator.Source.MTURK: "assignment_id",
}
ANOTHER_STUDY = (
    "This link belongs to another Prolific study. Please start again from the study's page"
    " on Prolific."
)


def annotator_from_link(
    campaign: Campaign,
    source: str,
    external_id: str,
    study: dict | None,
    remembered_id: int | None = None,
) -> Annotator:
    """The annotator a crowd platform's link names, created on the first visit with what the
    link says of their study (`study`), which no later entry changes.

    A worker id is public, so it is a claim, not a credential: a later entry reaches the
    annotator only with the binding value of the first (BINDING: the same participant on
    another device), or from the browser session that holds them already
    (`remembered_id`); any other raises EntryRefused. Where the campaign can ask Prolific, a
    new annotator's work counts only once Prolific confirms them (prolific.py)."""
    study = study or {}
    prolific = source == Annotator.Source.PROLIFIC
    refuse_link(campaign, source, study)
    check = (
        ProlificCheck.AWAITING if prolific and campaign.asks_prolific else ProlificCheck.NOT_ASKED
    )
    annotator, created = Annotator.objects.get_or_create(
        campaign=campaign,
        source=source,
        external_id=external_id,
        defaults={"study_data": study, "prolific_check": check},
    )
    if created or annotator.pk == remembered_id or same_binding(annotator, study):
        return annotator
    raise EntryRefused(REFUSALS.get(source, ANOTHER_SESSION))


def refuse_link(campaign: Campaign, source: str, study: dict) -> None:
    """EntryRefused for a link the campaign does not take: Mechanical Turk's, unless it
    accepts them; Prolific's of another study than the one it names."""
    if source == Annotator.Source.MTURK and not campaign.accepts_mturk:
        raise EntryRefused(NO_MTURK)
    named = campaign.prolific_study_id
    if source == Annotator.Source.PROLIFIC and named and study.get("study_id") != named:
        raise EntryRefused(ANOTHER_STUDY)


def same_binding(annotator: Annotator, study: dict) -> bool:
    """Whether the link carries the value that bound the annotator's id on their first
    entry; an id bound to nothing (a link without it) is reached from its browser only."""
    key = BINDING.get(annotator.source)
    bound = annotator.study_data.get(key, "") if key else ""
    return bool(bound) and bound == study.get(key, "")


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
    entry = reverse("annotation:entry", args=[criterion.campaign.slug, criterion.name])
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
        done=Count("id"), flagged=Count("id", filter=~unflagged_q())
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
    set_counting(annotator, is_excluded=excluded)


def set_prolific_check(annotator: Annotator, check: str) -> None:
    """Record what Prolific says of the annotator; their judgments count only once it
    confirms them (models.COUNTED_CHECKS)."""
    set_counting(annotator, prolific_check=check)


def set_counting(annotator: Annotator, **fields) -> None:
    """Set fields of the annotator that decide whether their work counts (Annotator.counts);
    when that changes, move the loads of their submitted, unflagged HITs and record the
    change on the criteria they worked on, in the same transaction."""
    with transaction.atomic():
        # Every criterion of the campaign, not only those with their work so far: a
        # submission takes its criterion's lock, so none lands unseen between the two.
        locked = lock_criteria(CampaignCriterion.objects.filter(campaign_id=annotator.campaign_id))
        row = Annotator.objects.get(pk=annotator.pk)
        counted_before = row.counts
        for name, value in fields.items():
            setattr(row, name, value)
            setattr(annotator, name, value)
        Annotator.objects.filter(pk=annotator.pk).update(**fields)
        if row.counts == counted_before:
            return
        done = annotator.assignments.submitted().unflagged()
        for criterion in locked:
            # Their unflagged HITs stop (or start again) counting towards balance.
            hits = done.for_criterion(criterion)
            if hits.exists():
                shift_loads(criterion, hits, +1 if row.counts else -1)
        # Every criterion their pages judged: a DA page's further ones too.
        changed = done.judged_criteria()
        CampaignCriterion.objects.filter(pk__in=changed).record_judgments_change()
