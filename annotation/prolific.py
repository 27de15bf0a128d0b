"""Prolific's API for a campaign that names its study: approve the submissions of annotators
who pass the checks, reject those who do not, and give the open HITs of places that were
returned or timed out back to the pool at once.

The token is read from an environment variable the campaign names, under the deployment's
rule for secrets (HOSTED_SECRET_ENV_PREFIX and HOSTED_SECRET_ENV_ALLOWED, as hosted systems'
keys): an organiser can name a variable, never read the deployment's own secrets with it.
"""

import json
import os
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urljoin

from django.conf import settings

from .assignment import release
from .identity import passes_checks
from .models import Annotator, Campaign
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
TIMEOUT_SECONDS = 20


class ProlificError(Exception):
    pass


@dataclass
class Review:
    approved: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)  # returned or timed out: HITs back
    unknown: list[str] = field(default_factory=list)  # participants who never arrived here

    def __str__(self) -> str:
        return (
            f"{len(self.approved)} approved, {len(self.rejected)} rejected, "
            f"{len(self.released)} returned or timed-out places whose open HITs went back to "
            f"the pool, {len(self.unknown)} participants this campaign has not seen"
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
    url = urljoin(settings.PROLIFIC_API_URL.rstrip("/") + "/", path.lstrip("/"))
    request = urllib.request.Request(
        url,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            return json.loads(response.read() or b"{}")
    except (OSError, ValueError) as error:
        raise ProlificError(f"Prolific's API, {method} {path}: {error}") from error


def study_submissions(token: str, study_id: str) -> list[dict]:
    """Every submission of the study, following the API's pages."""
    found, path = [], f"studies/{study_id}/submissions/"
    while path:
        page = call(token, "GET", path)
        found += page.get("results", [])
        path = ((page.get("_links") or {}).get("next") or {}).get("href") or ""
    return found


def review_submissions(campaign: Campaign) -> Review:
    """Approve or reject every submission awaiting review by the verdict the completion code
    carried, and release the open HITs of returned and timed-out places."""
    if not campaign.prolific_study_id:
        raise ProlificError("the campaign names no Prolific study")
    token, review = token_for(campaign), Review()
    annotators = {
        a.external_id: a
        for a in Annotator.objects.filter(campaign=campaign, source=Annotator.Source.PROLIFIC)
    }
    for submission in study_submissions(token, campaign.prolific_study_id):
        participant, status = submission.get("participant_id", ""), submission.get("status")
        annotator = annotators.get(participant)
        if annotator is None:
            review.unknown.append(participant)
        elif status in GONE:
            for criterion in campaign.criteria.all():
                release(annotator, criterion)
            review.released.append(participant)
        elif status == AWAITING_REVIEW:
            transition = submission_transition(annotator)
            call(token, "POST", f"submissions/{submission['id']}/transition/", transition)
            verdict = review.approved if transition["action"] == "APPROVE" else review.rejected
            verdict.append(participant)
    return review


def submission_transition(annotator: Annotator) -> dict:
    return {"action": "APPROVE"} if passes_checks(annotator) else REJECTION
