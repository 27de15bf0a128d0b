"""The annotator's pages: entry link, instructions, HITs one after another, completion.

Annotators have no accounts: the entry link names them (see identity.py) and the session
remembers them. Everything else 404s for a visitor the session does not know, and an
annotator can reach only their own assignments.
"""

from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from nlgdata.inputs import InputError, check_input

from . import identity, rate_limits, screening
from .forms import EntryForm, SubmissionKeyForm
from .handout import flow
from .handout.assignment import active_assignment, hits_submitted, hits_taken, next_assignment
from .handout.shown import shown_outputs
from .handout.submission import Outcome
from .judging import form_of
from .models import Annotator, Assignment, Campaign, CampaignCriterion, Screening

# Why a page 404s (said to the log, not to the visitor: the 404 page is the same for all).
NO_CRITERION = "No such campaign or criterion open to annotators."
NO_ANNOTATOR = "No annotator known in this browser for this campaign."
NO_ANNOTATOR_OR_CRITERION = f"{NO_CRITERION} Or: {NO_ANNOTATOR}"
NO_HIT = "No such HIT of yours."

# Said when one address has followed more entry links than RATE_LIMIT_ENTRY allows.
TOO_MANY_ENTRIES = "This address has opened too many study links in a short time."

# Where a Prolific worker with no code to bring goes back to, to return the study.
PROLIFIC_HOME = "https://app.prolific.com/"

# What a worker is told when the page they sent, or went back to, is not the one they are
# on now (followed by where they are: NEXT_PAGE or NO_MORE_PAGES).
OUTCOME_MESSAGES = {
    # The same page sent again (Back, then Submit; a double click; a retry): its answers
    # were saved the first time and nothing is saved twice.
    Outcome.REPEATED: "You had already submitted that page, and its answers were saved then;"
    " nothing was saved twice.",
    Outcome.ALREADY_SUBMITTED: "You had already submitted that page: the answers sent first"
    " were kept, and the ones sent again were not saved.",
    Outcome.TAKEN: "That page timed out and was given to someone else, so your answers to it"
    " could not be kept.",
}
BACK_TO_SUBMITTED = "You had already submitted that page, and its answers were saved."
BACK_TO_EXPIRED = "That page timed out."
NEXT_PAGE = "You are now on your next page."
NO_MORE_PAGES = "There are no more pages for you here."

# Says only that the attempt failed: a hint at the answer would make the second attempt
# screen nobody.
CHECK_RETRY_MESSAGE = (
    "Not quite: the ranking your scores give is not the right one. Read both sentences again"
    " carefully; you have one more try."
)

# Shown on the next page after a HIT sent sooner than the campaign's minimum (its flag,
# submission.quality_flag): before the flags add up to the failed code (identity.py).
SPEED_WARNING = (
    "Please slow down: you sent that page after {taken}, sooner than the {minimum}"
    " seconds that reading its sentences carefully takes, so it was flagged. If {share} or"
    " more of your pages are flagged, your work does not pass this study's checks and your"
    " completion code will be the one for work that did not pass."
)
SPEED_WARNING_TAG = "too-fast"

# What the completion page says of each reason the work failed (identity.failed_check).
FAILURE_REASONS = {
    identity.TOO_FAST: "Too fast: {share} or more of your pages were sent sooner than the"
    " {minimum} seconds that reading their sentences carefully takes, so they were flagged"
    " and cannot be used.",
    identity.FAILED_ATTENTION: "Failed attention checks: some pages held a check sentence, a"
    " scrambled copy of another sentence on the page, and your scores did not put those"
    " copies below the sentences they came from.",
    identity.FAILED_COMPREHENSION: "Failed comprehension check: the check after the"
    " instructions was not passed in either of its two attempts.",
    identity.EXCLUDED: "Excluded: the organisers of this study have left your work out of it.",
}
FLAGGED_SHARE = f"{identity.FAILING_FLAGGED_SHARE:.0%}"

# How long the completion page shows the code before it takes a Prolific worker back.
COMPLETION_REDIRECT_SECONDS = 10

# The input of the worked example on the instructions page (E2E style).
EXAMPLE_INPUT = {
    "attributes": [
        ["name", "The Eagle"],
        ["eatType", "coffee shop"],
        ["food", "French"],
        ["priceRange", "moderate"],
        ["area", "riverside"],
        ["near", "Burger King"],
    ]
}


def _criterion_or_404(slug: str, criterion_name: str) -> CampaignCriterion:
    """The criterion, with its campaign, in one query (every annotator page reads it)."""
    criterion = flow.find_criterion(slug, criterion_name)
    if criterion is None:
        raise Http404(NO_CRITERION)
    return criterion


def _annotator_or_404(request, criterion: CampaignCriterion) -> Annotator:
    annotator = identity.remembered(request.session, criterion.campaign)
    if annotator is None:
        raise Http404(NO_ANNOTATOR)
    return annotator


def _assignment_or_404(request, criterion: CampaignCriterion, pk: int) -> Assignment:
    """One of the session's annotator's own assignments in the criterion, with the
    annotator, HIT and item, in one query."""
    annotator_id = identity.remembered_id(request.session, criterion.campaign)
    if annotator_id is None:
        raise Http404(NO_ANNOTATOR)
    campaign = criterion.campaign
    assignment = flow.own_assignment(pk, [annotator_id], campaign.slug, criterion.name)
    if assignment is None:
        raise Http404(NO_HIT)
    return assignment


def _url(name: str, criterion: CampaignCriterion, *args) -> str:
    return reverse(f"annotation:{name}", args=[criterion.campaign.slug, criterion.name, *args])


def _notice(request, title: str, text: str, status: int = 200):
    return render(request, "annotation/notice.html", {"title": title, "text": text}, status=status)


@require_GET
def entry(request, slug: str, criterion_name: str):
    form = EntryForm(request.GET)
    criterion = flow.find_criterion(slug, criterion_name)
    if criterion is None:  # a draft, or no such study: said on a page, not a bare 404
        return _not_open(request, form, "This study is not open yet", status=404)
    if not form.is_valid():
        return _notice(request, "This link is not valid", _errors_text(form), status=400)
    link = form.link()
    if link is not None:
        try:
            address = rate_limits.client_address(request)
            rate_limits.count("entry", address, settings.RATE_LIMIT_ENTRY)
        except rate_limits.RateLimited as limited:
            return rate_limits.too_many_requests(request, limited, TOO_MANY_ENTRIES)
        if not _is_open(criterion) and not _is_known(criterion, link):
            return _not_open(request, form, "This study is closed")
        return _enter_with(request, criterion, link)
    if form.is_mturk_preview():
        return _instructions(request, criterion, preview=True)
    annotator = identity.remembered(request.session, criterion.campaign)
    if annotator is None:
        return render(request, "annotation/link_needed.html", {"criterion": criterion}, status=403)
    current = active_assignment(annotator, criterion)
    if current is not None:
        return redirect(_url("hit", criterion, current.pk))
    # Whose code is the failed one already is told why there, and given no more work.
    if not _can_take_more(annotator, criterion) or identity.failed_check(annotator):
        return redirect(_url("done", criterion))
    return _instructions(request, criterion)


def _not_open(request, form: EntryForm, title: str, status: int = 200):
    """The page of a study that takes nobody new: a worker sent by Prolific is shown the
    way back there, to return their place."""
    from_prolific = bool(form.data.get("PROLIFIC_PID"))
    context = {"title": title, "prolific_home": PROLIFIC_HOME if from_prolific else ""}
    return render(request, "annotation/not_open.html", context, status=status)


def _is_known(criterion: CampaignCriterion, link) -> bool:
    """Whether the link names an annotator the campaign already has (who may come back
    for their code once it closes); invitations name only known ones."""
    if link.token:
        return True
    known = Annotator.objects.filter(
        campaign_id=criterion.campaign_id, source=link.source, external_id=link.external_id
    )
    return known.exists()


def _instructions(request, criterion: CampaignCriterion, preview: bool = False):
    context = {
        "criterion": criterion,
        "preview": preview,
        "example_input": EXAMPLE_INPUT,
        "form_instructions": form_of(criterion).instructions_template,
    }
    return render(request, "annotation/instructions.html", context)


def _enter_with(request, criterion: CampaignCriterion, link):
    if link.token:
        annotator = identity.invited_annotator(criterion.campaign, link.token)
        if annotator is None:
            text = "This invitation link is not known. Please check it with the organisers."
            return _notice(request, "Unknown invitation", text, status=404)
    else:
        held = identity.remembered_id(request.session, criterion.campaign)
        try:
            annotator = identity.annotator_from_link(
                criterion.campaign, link.source, link.external_id, link.study, held
            )
        except identity.EntryRefused as refusal:
            return _notice(request, "This link cannot be used here", str(refusal), status=403)
    identity.remember(request.session, annotator)
    # The parameters have done their work; a clean address is safe to bookmark and share.
    return redirect(_url("entry", criterion))


def _errors_text(form) -> str:
    return " ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())


def _is_open(criterion: CampaignCriterion) -> bool:
    """Open to annotators, on pages of its own (not asked on another criterion's)."""
    is_open = criterion.is_open and criterion.campaign.status == Campaign.Status.OPEN
    return is_open and form_of(criterion).has_own_hits(criterion)


def _can_take_more(annotator: Annotator, criterion: CampaignCriterion) -> bool:
    limit = criterion.campaign.max_hits_per_annotator
    return _is_open(criterion) and hits_taken(annotator, criterion) < limit


@require_POST
def start(request, slug: str, criterion_name: str):
    started = flow.start(slug, criterion_name, identity.remembered_ids(request.session))
    if started is None:
        raise Http404(NO_ANNOTATOR_OR_CRITERION)
    if started.needs_check:
        return redirect(_url("check", started.criterion))
    return _go_to(started.assignment, started.criterion)


@require_http_methods(["GET", "POST"])
def check(request, slug: str, criterion_name: str):
    """The comprehension check (screening.py): the worked pair, two attempts."""
    criterion = _criterion_or_404(slug, criterion_name)
    annotator = _annotator_or_404(request, criterion)
    state = screening.screening_state(annotator.pk, criterion)
    if not criterion.comprehension_check or (state and state.passed):
        return _next_hit(annotator, criterion)
    if state and state.screened_out:
        return redirect(_url("done", criterion))
    comprehension = form_of(criterion).comprehension
    sentence_first = screening.sentence_first(annotator.pk)
    pair = comprehension.worked_pair(criterion)
    first, second = (
        (pair.sentence, pair.degraded) if sentence_first else (pair.degraded, pair.sentence)
    )
    form = comprehension.page_form(request.POST or None, first, second)
    if form.is_valid():
        passed = comprehension.passes(form, sentence_first)
        state = screening.record_attempt(annotator.pk, criterion, passed)
        if not (state.passed or state.screened_out):
            messages.warning(request, CHECK_RETRY_MESSAGE)
        return redirect(_url("check", criterion))  # which shows what comes next
    context = {
        "criterion": criterion,
        "campaign": criterion.campaign,
        "form": form,
        "example_input": EXAMPLE_INPUT,
        "attempts_left": Screening.MAX_ATTEMPTS - (state.attempts if state else 0),
    }
    return render(request, comprehension.template, context)


def _next_hit(annotator: Annotator, criterion: CampaignCriterion):
    return _go_to(next_assignment(annotator, criterion), criterion)


def _go_to(assignment: Assignment | None, criterion: CampaignCriterion):
    if assignment is None:
        return redirect(_url("done", criterion))
    return redirect(_url("hit", criterion, assignment.pk))


@require_http_methods(["GET", "POST"])
def hit(request, slug: str, criterion_name: str, assignment_id: int):
    if request.method == "POST":
        return _submit_hit(request, slug, criterion_name, assignment_id)
    criterion = _criterion_or_404(slug, criterion_name)
    assignment = _assignment_or_404(request, criterion, assignment_id)
    if assignment.status != Assignment.Status.ASSIGNED:
        following = next_assignment(assignment.annotator, criterion)
        submitted = assignment.status == Assignment.Status.SUBMITTED
        _say_where(request, BACK_TO_SUBMITTED if submitted else BACK_TO_EXPIRED, following)
        return _go_to(following, criterion)
    form = form_of(criterion).page_form(None, shown_outputs(assignment.hit), criterion)
    return _hit_page(request, criterion, assignment, form)


def _submit_hit(request, slug: str, criterion_name: str, assignment_id: int):
    """Save the answers and hand out the next HIT (flow.submit). The assignment, the
    sentences and the answers are read and checked first, before the criterion's lock is
    taken. A page already submitted is not checked again: only its key is read, to tell
    the same submission sent again from another."""
    remembered = identity.remembered_ids(request.session)
    posted = flow.posted_hit(assignment_id, remembered, slug, criterion_name)
    if posted is None:
        raise Http404(NO_HIT)
    form = form_of(posted.criterion).page_form(request.POST, posted.shown, posted.criterion)
    if posted.submitted:
        answers, key = {}, SubmissionKeyForm(request.POST).sent_key()
    elif form.is_valid():
        answers, key = form.answers(), form.key()
    else:
        criterion = _criterion_or_404(slug, criterion_name)
        return _hit_page(request, criterion, posted.assignment, form)
    submitted = flow.submit(posted, slug, criterion_name, answers, key)
    if submitted is None:
        raise Http404(NO_CRITERION)
    if submitted.too_fast:
        _warn_too_fast(request, posted.assignment, submitted.criterion)
    if submitted.outcome in OUTCOME_MESSAGES:
        _say_where(request, OUTCOME_MESSAGES[submitted.outcome], submitted.following)
    return _go_to(submitted.following, submitted.criterion)


def _warn_too_fast(request, assignment: Assignment, criterion: CampaignCriterion) -> None:
    seconds = int(assignment.seconds_taken or 0)
    taken = f"{seconds} second{pluralize(seconds)}"
    minimum = criterion.campaign.min_seconds_per_hit
    text = SPEED_WARNING.format(taken=taken, minimum=minimum, share=FLAGGED_SHARE)
    messages.warning(request, text, extra_tags=SPEED_WARNING_TAG)


def _say_where(request, what: str, following: Assignment | None) -> None:
    """Tell the worker what became of the page they sent or went back to, and where they
    are now."""
    messages.warning(request, f"{what} {NEXT_PAGE if following else NO_MORE_PAGES}")


def _hit_page(request, criterion: CampaignCriterion, assignment: Assignment, form):
    """The criterion's form's HIT page (annotation/judging/base.py says what it gets)."""
    context = _hit_context(criterion, assignment, form)
    if hasattr(form, "page_context"):
        context |= form.page_context()
    return render(request, form_of(criterion).page_template, context)


def _hit_context(criterion, assignment, form) -> dict:
    done = hits_submitted(assignment.annotator, criterion)
    return {
        "judging_form": form_of(criterion),
        "criterion": criterion,
        "campaign": criterion.campaign,
        "assignment": assignment,
        "item": assignment.hit.item,
        "form": form,
        "standard": _standard(criterion.campaign),
        "number": done + 1,
        "max_chars": settings.MAX_OUTPUT_CHARS,
        "can_finish": done > 0,
    }


def _standard(campaign: Campaign) -> dict | None:
    """The STANDARD shown with its score of 100: the campaign's own, written by the
    organiser (a campaign whose pages show it opens only with one: annotation.judging.why_not_open);
    none is made up from the items."""
    if not campaign.standard_text.strip():
        return None
    text, kind, data = (
        campaign.standard_text,
        campaign.standard_input_kind,
        campaign.standard_input,
    )
    try:
        check_input(kind, data)
    except InputError:
        data = None  # a standard without a usable input still shows its sentence
    return {"text": text, "kind": kind, "data": data}


@require_POST
def finish(request, slug: str, criterion_name: str):
    criterion = flow.finish(slug, criterion_name, identity.remembered_ids(request.session))
    if criterion is None:
        raise Http404(NO_ANNOTATOR_OR_CRITERION)
    return redirect(_url("done", criterion))


@require_GET
def done(request, slug: str, criterion_name: str):
    criterion = _criterion_or_404(slug, criterion_name)
    annotator = _annotator_or_404(request, criterion)
    failure = identity.failed_check(annotator)
    code = identity.completion_code(annotator, failure)
    submitted = hits_submitted(annotator, criterion)
    # A follow-up study is offered, as an option, only to those whose work passed.
    follow_up = criterion.follow_up_url if submitted and not failure else ""
    context = {
        "criterion": criterion,
        "campaign": criterion.campaign,
        "source": annotator.source,
        "submitted": submitted,
        "current": active_assignment(annotator, criterion),
        "completion_code": code,
        "failure": failure,
        "failure_reason": _failure_reason(failure, criterion),
        "redirect_seconds": COMPLETION_REDIRECT_SECONDS,
        "completion_url": identity.completion_url(annotator, code),
        "follow_up_url": follow_up,
        "prolific_home": PROLIFIC_HOME,
    }
    return render(request, "annotation/done.html", context)


def _failure_reason(failure: str, criterion: CampaignCriterion) -> str:
    if not failure:
        return ""
    minimum = criterion.campaign.min_seconds_per_hit
    return FAILURE_REASONS[failure].format(minimum=minimum, share=FLAGGED_SHARE)
