"""The annotator's pages: entry link, instructions, HITs one after another, completion.

Annotators have no accounts: the entry link names them (see identity.py) and the session
remembers them. Everything else 404s for a visitor the session does not know, and an
annotator can reach only their own assignments.
"""

from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from nlgdata.inputs import InputError, check_input

from . import identity
from .assignment import active_assignment, hits_submitted, hits_taken, next_assignment, release
from .forms import COVERAGE_RULE, EntryForm, HitForm, SubmissionKeyForm
from .models import Annotator, Assignment, Campaign, CampaignCriterion
from .submission import Outcome, shown_outputs, submit

OUTCOME_MESSAGES = {
    Outcome.ALREADY_SUBMITTED: "That HIT had already been submitted; the answers sent first "
    "were kept.",
    Outcome.TAKEN: "That HIT timed out and was given to someone else, so your answers to it "
    "could not be kept. Here is a new one.",
}

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


def _task_or_404(slug: str, criterion: str) -> CampaignCriterion:
    tasks = CampaignCriterion.objects.select_related("campaign")
    tasks = tasks.exclude(campaign__status=Campaign.Status.DRAFT)
    return get_object_or_404(tasks, campaign__slug=slug, criterion=criterion)


def _annotator_or_404(request, task: CampaignCriterion) -> Annotator:
    annotator = identity.remembered(request.session, task.campaign)
    if annotator is None:
        raise Http404("No annotator known in this browser for this campaign.")
    return annotator


def _assignment_for(annotator: Annotator, task: CampaignCriterion, pk: int) -> Assignment:
    assignments = Assignment.objects.select_related("hit__item")
    return get_object_or_404(
        assignments,
        pk=pk,
        annotator=annotator,
        hit__campaign=task.campaign_id,
        hit__criterion=task.criterion,
    )


def _url(name: str, task: CampaignCriterion, *args) -> str:
    return reverse(f"annotation:{name}", args=[task.campaign.slug, task.criterion, *args])


def _notice(request, title: str, text: str, status: int = 200):
    return render(request, "annotation/notice.html", {"title": title, "text": text}, status=status)


@require_GET
def entry(request, slug: str, criterion: str):
    task = _task_or_404(slug, criterion)
    form = EntryForm(request.GET)
    if not form.is_valid():
        return _notice(request, "This link is not valid", _errors_text(form), status=400)
    link = form.link()
    if link is not None:
        return _enter_with(request, task, link)
    if form.is_mturk_preview():
        return _instructions(request, task, preview=True)
    annotator = identity.remembered(request.session, task.campaign)
    if annotator is None:
        return render(request, "annotation/link_needed.html", {"task": task}, status=403)
    current = active_assignment(annotator, task)
    if current is not None:
        return redirect(_url("hit", task, current.pk))
    if not _can_take_more(annotator, task):
        return redirect(_url("done", task))
    return _instructions(request, task)


def _instructions(request, task: CampaignCriterion, preview: bool = False):
    context = {"task": task, "preview": preview, "example_input": EXAMPLE_INPUT}
    return render(request, "annotation/instructions.html", context)


def _enter_with(request, task: CampaignCriterion, link):
    if link.token:
        annotator = identity.invited_annotator(task.campaign, link.token)
        if annotator is None:
            text = "This invitation link is not known. Please check it with the organisers."
            return _notice(request, "Unknown invitation", text, status=404)
    else:
        annotator = identity.annotator_from_link(
            task.campaign, link.source, link.external_id, link.study
        )
    identity.remember(request.session, annotator)
    # The parameters have done their work; a clean address is safe to bookmark and share.
    return redirect(_url("entry", task))


def _errors_text(form) -> str:
    return " ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())


def _can_take_more(annotator: Annotator, task: CampaignCriterion) -> bool:
    is_open = task.is_open and task.campaign.status == Campaign.Status.OPEN
    return is_open and hits_taken(annotator, task) < task.campaign.max_hits_per_annotator


@require_POST
def start(request, slug: str, criterion: str):
    task = _task_or_404(slug, criterion)
    return _next_hit(_annotator_or_404(request, task), task)


def _next_hit(annotator: Annotator, task: CampaignCriterion):
    assignment = next_assignment(annotator, task)
    if assignment is None:
        return redirect(_url("done", task))
    return redirect(_url("hit", task, assignment.pk))


@require_http_methods(["GET", "POST"])
def hit(request, slug: str, criterion: str, assignment_id: int):
    task = _task_or_404(slug, criterion)
    annotator = _annotator_or_404(request, task)
    assignment = _assignment_for(annotator, task, assignment_id)
    if assignment.status == Assignment.Status.SUBMITTED:
        if not SubmissionKeyForm(request.POST or None).is_repeat_of(assignment):
            messages.info(request, OUTCOME_MESSAGES[Outcome.ALREADY_SUBMITTED])
        return _next_hit(annotator, task)
    if assignment.status == Assignment.Status.EXPIRED and request.method == "GET":
        messages.info(request, "That HIT timed out; here is a new one.")
        return _next_hit(annotator, task)
    shown = shown_outputs(assignment.hit)
    form = HitForm(request.POST or None, shown=shown, coverage=task.shows_input)
    if form.is_valid():
        outcome = submit(assignment, task, form.answers(), form.key())
        if outcome in OUTCOME_MESSAGES:
            messages.warning(request, OUTCOME_MESSAGES[outcome])
        return _next_hit(annotator, task)
    return render(request, "annotation/hit.html", _hit_context(annotator, task, assignment, form))


def _hit_context(annotator, task, assignment, form) -> dict:
    done = hits_submitted(annotator, task)
    return {
        "task": task,
        "campaign": task.campaign,
        "assignment": assignment,
        "item": assignment.hit.item,
        "form": form,
        "rows": form.rows(),
        "standard": _standard(task.campaign),
        "number": done + 1,
        "max_chars": settings.MAX_OUTPUT_CHARS,
        "coverage_rule": COVERAGE_RULE,
        "can_finish": done > 0,
    }


def _standard(campaign: Campaign) -> dict | None:
    """The STANDARD shown with its score of 100: the campaign's own, or else the first
    reference of the campaign's first item that has one."""
    if campaign.standard_text:
        text, kind, data = (
            campaign.standard_text,
            campaign.standard_input_kind,
            campaign.standard_input,
        )
    else:
        item = campaign.items.exclude(references=[]).first()
        if item is None:
            return None
        text, kind, data = item.references[0], item.input_kind, item.input_data
    try:
        check_input(kind, data)
    except InputError:
        data = None  # a standard without a usable input still shows its sentence
    return {"text": text, "kind": kind, "data": data}


@require_POST
def finish(request, slug: str, criterion: str):
    task = _task_or_404(slug, criterion)
    release(_annotator_or_404(request, task), task)
    return redirect(_url("done", task))


@require_GET
def done(request, slug: str, criterion: str):
    task = _task_or_404(slug, criterion)
    annotator = _annotator_or_404(request, task)
    current = active_assignment(annotator, task)
    others = task.campaign.criteria.filter(is_open=True).exclude(pk=task.pk)
    context = {
        "task": task,
        "campaign": task.campaign,
        "submitted": hits_submitted(annotator, task),
        "current": current,
        "completion_url": identity.completion_url(annotator),
        "others": [t for t in others if _can_take_more(annotator, t)],
    }
    return render(request, "annotation/done.html", context)
