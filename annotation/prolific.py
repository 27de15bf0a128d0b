"""Prolific's API for a campaign that names its study: confirm the annotators who have a
submission in the study (only their work counts) and flag those who have none; approve the
submissions of annotators with counted work who pass the checks, reject those who fail
them, and give the open HITs of places that were returned or timed out back to the pool.

A Prolific id and the study's completion codes are public knowledge, not credentials: the
review, not the code a participant pasted, decides who is paid. The periodic sweep asks
Prolific about new participants (`poll_studies`), so their work counts within a minute.

The token is read from an environment variable the campaign names, under the deployment's
rule for secrets (HOSTED_SECRET_ENV_PREFIX and HOSTED_SECRET_ENV_ALLOWED, as hosted systems'
keys): an organiser can name a variable, never read the deployment's own secrets with it.

Requests go through the outbound module (outbound/): to PROLIFIC_API_URL's host only (the
deployment names it, so it is allowed by name: a test's fake on loopback too), never to
another one that an answer's link names (the token would go with it), no redirect
followed, PROLIFIC_TIMEOUT_SECONDS for each request in all, PROLIFIC_MAX_BYTES of answer.
The periodic poll runs on the "outbound" queue's workers (`annotation.poll_prolific`), so a
slow API never holds the workers that rankings need.
"""

import json
import logging
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urljoin

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

import outbound
from outbound import AddressPolicy, Limits, OutboundError, OutboundRefused, Target

from .handout.assignment import release
from .identity import passes_checks, set_prolific_check
from .models import COUNTED_CHECKS, Annotator, Assignment, Campaign, ProlificCheck
from .secret_env import secret_env_policy

# Prolific's statuses of a submission (a participant's place in a study).
AWAITING_REVIEW = "AWAITING REVIEW"
GONE = ("RETURNED", "TIMED-OUT")
REJECTION = {
    "action": "REJECT",
    "message": "Your answers did not pass the study's quality checks (scrambled sentences scored"
    " above their originals, or most pages answered faster than the minimum time).",
    "rejection_category": "LOW_EFFORT",
}
logger = logging.getLogger(__name__)


class ProlificError(Exception):
    pass


@dataclass
class Review:
    approved: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)  # returned or timed out: HITs back
    unknown: list[str] = field(default_factory=list)  # participants who never arrived here
    # Awaiting review with no counted work but no failed check: left for the organiser.
    held: list[str] = field(default_factory=list)
    # Annotators here with no submission in the study: left out of rankings.
    flagged: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"{len(self.approved)} approved, {len(self.rejected)} rejected, "
            f"{len(self.released)} returned or timed-out places whose open HITs went back to "
            f"the pool, {len(self.unknown)} participants this campaign has not seen, "
            f"{len(self.held)} awaiting review with no counted work (neither approved nor"
            f" rejected: yours to decide on Prolific), {len(self.flagged)} annotators with no"
            " submission in the study (flagged: left out of rankings, never approved)"
        )


def token_for(campaign: Campaign) -> str:
    name, policy = campaign.prolific_token_env, secret_env_policy()
    if not name or not policy.allows(name):
        raise ProlificError(
            f"the campaign's Prolific token variable {name!r} is not one this deployment"
            f" allows: it {policy.refusal(name)}"
        )
    token = os.environ.get(name, "")
    if not token:
        raise ProlificError(f"the environment variable {name} is not set")
    return token


def call(token: str, method: str, path: str, body: dict | None = None) -> dict:
    """One request to Prolific's API (`path` relative to PROLIFIC_API_URL, or a link its
    answers gave); its JSON answer, or ProlificError saying what went wrong."""
    where = f"Prolific's API, {method} {path}"
    api = settings.PROLIFIC_API_URL.rstrip("/") + "/"
    try:
        url, host = api_url(api, path), Target.of(api).host
        response = outbound.request(
            method,
            url,
            body=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
            policy=AddressPolicy.allowing([host]),
            limits=Limits(
                deadline=settings.PROLIFIC_TIMEOUT_SECONDS, max_body=settings.PROLIFIC_MAX_BYTES
            ),
        )
    except OutboundError as error:
        raise ProlificError(f"{where}: {error}") from error
    return answer_of(response, where)


def api_url(api: str, path: str) -> str:
    """The URL of `path` under the API; OutboundRefused for a link to another origin, which
    the token must not reach."""
    url = urljoin(api, path if "://" in path else path.lstrip("/"))
    if Target.of(url).origin != Target.of(api).origin:
        raise OutboundRefused("a link away from PROLIFIC_API_URL's host is not followed")
    return url


def answer_of(response: outbound.Response, where: str) -> dict:
    if not 200 <= response.status < 300:
        message = outbound.error_message(response.body)
        raise ProlificError(f"{where}: HTTP {response.status}: {message}")
    if not response.complete:
        raise ProlificError(f"{where}: an answer over PROLIFIC_MAX_BYTES, not read")
    try:
        answer = json.loads(response.body or b"{}")
    except (ValueError, RecursionError):
        raise ProlificError(f"{where}: the answer is not JSON") from None
    if not isinstance(answer, dict):
        raise ProlificError(f"{where}: the answer is not a JSON object")
    return answer


def study_submissions(token: str, study_id: str) -> list[dict]:
    """Every submission of the study, following the API's pages."""
    found, path = [], f"studies/{study_id}/submissions/"
    while path:
        page = call(token, "GET", path)
        found += page.get("results", [])
        path = ((page.get("_links") or {}).get("next") or {}).get("href") or ""
    return found


def review_submissions(campaign: Campaign) -> Review:
    """Confirm or flag the campaign's Prolific annotators by the study's submissions, then
    approve or reject every submission awaiting review (or hold it: see `transition_for`),
    and release the open HITs of returned and timed-out places."""
    if not campaign.prolific_study_id:
        raise ProlificError("the campaign names no Prolific study")
    token = token_for(campaign)
    submissions = study_submissions(token, campaign.prolific_study_id)
    review = Review(flagged=check_participants(campaign, submissions))
    annotators = {
        a.external_id: a
        for a in Annotator.objects.filter(campaign=campaign, source=Annotator.Source.PROLIFIC)
    }
    for submission in submissions:
        participant, status = submission.get("participant_id", ""), submission.get("status")
        annotator = annotators.get(participant)
        if annotator is None:
            review.unknown.append(participant)
        elif status in GONE:
            for criterion in campaign.criteria.all():
                release(annotator, criterion)
            review.released.append(participant)
        elif status == AWAITING_REVIEW:
            transition = transition_for(annotator, submission.get("id"))
            if transition is None:
                review.held.append(participant)
                continue
            call(token, "POST", f"submissions/{submission['id']}/transition/", transition)
            verdict = review.approved if transition["action"] == "APPROVE" else review.rejected
            verdict.append(participant)
    return review


def transition_for(annotator: Annotator, submission_id: str | None) -> dict | None:
    """Approve an annotator Prolific vouches for, whose session is this submission, who has
    counted work and passes the checks; reject one who fails them; hold (None) the rest:
    one with nothing counted (a participant who found no HIT left), or a submission whose
    participant's id someone else entered with first (their work is not the participant's)."""
    confirmed = annotator.prolific_check == ProlificCheck.CONFIRMED
    if not confirmed or annotator.study_data.get("session_id") != submission_id:
        return None
    if not passes_checks(annotator):
        return REJECTION
    if Assignment.objects.counted().filter(annotator=annotator).exists():
        return {"action": "APPROVE"}
    return None


def confirmed_for_study(campaign: Campaign) -> QuerySet[Annotator]:
    """The campaign's Prolific annotators whom Prolific confirmed as participants of the
    study the campaign names now: a submission in it from the session their id is bound to
    (check_participants, or a signed event), and an entry link that named that study. No
    one without a study; an annotator who arrived before the campaign named it is one only
    once Prolific has confirmed them."""
    if not campaign.prolific_study_id:
        return Annotator.objects.none()
    return Annotator.objects.filter(
        campaign=campaign,
        source=Annotator.Source.PROLIFIC,
        prolific_check=ProlificCheck.CONFIRMED,
        study_data__study_id=campaign.prolific_study_id,
    )


def check_participants(campaign: Campaign, submissions: list[dict]) -> list[str]:
    """Confirm the campaign's Prolific annotators who have a submission in the study, so
    their work counts, and flag the others, whose work stops counting until a later check
    finds them; the ids flagged.

    A submission's id is the SESSION_ID Prolific put on the participant's link, so it must
    be the session the annotator's id was bound to on their first entry: whoever entered
    first with someone else's id and a made-up session is flagged, not confirmed."""
    in_study = {(s.get("participant_id"), s.get("id")) for s in submissions}
    flagged, unchanged_counting = [], defaultdict(list)
    for annotator in Annotator.objects.filter(campaign=campaign, source=Annotator.Source.PROLIFIC):
        found = (annotator.external_id, annotator.study_data.get("session_id")) in in_study
        check = ProlificCheck.CONFIRMED if found else ProlificCheck.NOT_IN_STUDY
        if not found:
            flagged.append(annotator.external_id)
        if annotator.prolific_check == check:
            continue
        if (annotator.prolific_check in COUNTED_CHECKS) == (check in COUNTED_CHECKS):
            unchanged_counting[annotator.prolific_check, check].append(annotator.pk)
        else:  # their work starts or stops counting: loads and judgments_version move
            set_prolific_check(annotator, check)
    # The rest change nothing that counts: one statement each way (awaiting -> flagged...).
    for (before, after), pks in unchanged_counting.items():
        Annotator.objects.filter(pk__in=pks, prolific_check=before).update(prolific_check=after)
    return flagged


def poll_studies(now=None) -> int:
    """Ask Prolific which participants are in the study, for each open campaign with
    annotators awaiting its confirmation, at most once per PROLIFIC_POLL_SECONDS each; the
    number of campaigns asked. An unreachable API is logged and asked again next time.

    Prolific annotators who arrived before the campaign named its study and token were not
    asked about then: they are checked too, so theirs counts only once Prolific confirms them."""
    now = now or timezone.now()
    since = now - timedelta(seconds=settings.PROLIFIC_POLL_SECONDS)
    unchecked = Q(annotators__prolific_check=ProlificCheck.AWAITING) | Q(
        annotators__source=Annotator.Source.PROLIFIC,
        annotators__prolific_check=ProlificCheck.NOT_ASKED,
    )
    due = (
        Campaign.objects.filter(unchecked, status=Campaign.Status.OPEN)
        .exclude(prolific_study_id="")
        .exclude(prolific_token_env="")
        .exclude(prolific_polled_at__gt=since)
        .distinct()
    )
    asked = 0
    for campaign in due:
        mine = Campaign.objects.filter(
            pk=campaign.pk, prolific_polled_at=campaign.prolific_polled_at
        )
        if not campaign.asks_prolific or not mine.update(prolific_polled_at=now):
            continue  # another sweep claimed it
        try:
            submissions = study_submissions(token_for(campaign), campaign.prolific_study_id)
        except ProlificError as error:
            logger.warning("Prolific study of campaign %s: %s", campaign.slug, error)
            continue
        check_participants(campaign, submissions)
        asked += 1
    return asked
