"""A campaign's Human Evaluation Datasheet (HEDS 3.0, evalsite/heds.py), filled from what the
platform knows, as JSON; evalsite/datasheet_markdown.py renders it.

Each question has an `answer` (null where the platform cannot know it) and, where something
is left to a person, `by_hand` saying what; `to_be_filled_by_hand` lists those. `facts` are
what the platform counted, to help whoever completes the sheet.

It lives in the project, not in an app: it reads annotation, ranking and generation.
"""

import json
import statistics
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from annotation.attention import attention_summary
from annotation.judging import form_of
from annotation.models import (
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    DataFile,
    Judgment,
    Output,
    Screening,
    counted_q,
    unflagged_q,
)
from api.bonuses import bonus_facts
from generation.models import HostedSystem
from nlgdata.attention import checks_needed
from ranking.agreement.models import RunAgreement
from ranking.models import RankingRun
from ranking.protocols import PROTOCOLS
from ranking.protocols.base import Datasheet

from .datasheet_markdown import render_markdown
from .heds import HEDS_VERSION, SECTION_TITLES, question, to_be_filled

# HEDS 2.1 input types of the platform's input kinds (nlgdata.inputs.KINDS).
KIND_INPUT_TYPES = {
    "mr": "raw/structured data",
    "table": "raw/structured data",
    "boxscore": "raw/structured data",
    "triples": "raw/structured data",
    "document": "text: document (with a question)",
}
# HEDS 4.1-4.2 properties of the RankME criteria (DESIGN.md): quality is judged with the
# input shown, naturalness without it.
CRITERION_PROPERTIES = {
    "quality": {
        "4.1.1": "goodness",
        "4.1.2": "both form and content of output",
        "4.1.3": "quality of output relative to the input (the input is shown)",
    },
    "naturalness": {
        "4.1.1": "goodness",
        "4.1.2": "form of output",
        "4.1.3": "quality of output in its own right (the input is not shown)",
    },
}
# Hosted systems' settings that say what generated the outputs; others (endpoints, the
# names of secret variables, devices, timeouts) stay out of a published sheet.
DESCRIPTIVE_SETTINGS = {
    "checkpoint",
    "architecture",
    "model",
    "prompt_template",
    "system_prompt",
    "num_beams",
    "do_sample",
    "temperature",
    "top_p",
    "seed",
    "max_new_tokens",
    "max_tokens",
}
IMPORTED_NOTE = "for the imported ratings, which were collected elsewhere: how"
SOURCE_RECRUITMENT = {
    Annotator.Source.PROLIFIC: "Prolific (arrived through the study's link)",
    Annotator.Source.MTURK: "Mechanical Turk (arrived through the HIT's link)",
    Annotator.Source.INVITED: "invited by the organisers, each with a private link",
    Annotator.Source.CROWDFLOWER: "CrowdFlower (ratings imported from its export)",
}


def datasheet_files(campaign: Campaign) -> dict[str, str]:
    """The datasheet as JSON and as Markdown, by file name."""
    sheet = build_datasheet(campaign)
    return {
        f"{campaign.slug}-datasheet.json": json.dumps(sheet, indent=2, ensure_ascii=False) + "\n",
        f"{campaign.slug}-datasheet.md": render_markdown(sheet),
    }


def build_datasheet(campaign: Campaign) -> dict:
    criteria = evaluated_criteria(campaign)
    imported = imported_ratings(campaign)
    sections: dict[str, dict[str, Any]] = {
        "1": {"questions": resource_questions()},
        "2": {"questions": system_questions(campaign), "systems": system_facts(campaign)},
        "3": {"questions": sample_and_design_questions(campaign, criteria, imported)},
        "4": {"criteria": [criterion_section(criterion) for criterion in criteria]},
        "5": {"questions": ethics_questions()},
    }
    for number, section in sections.items():
        section["title"] = SECTION_TITLES[number]
    return {
        "heds_version": HEDS_VERSION,
        "campaign": {"slug": campaign.slug, "name": campaign.name},
        "generated_at": timezone.now().isoformat(),
        "sections": sections,
        "to_be_filled_by_hand": to_be_filled(sections),
    }


def evaluated_criteria(campaign: Campaign) -> list[CampaignCriterion]:
    """The criteria with submitted HITs (HEDS section 4 is one per criterion evaluated); all
    of them before any, for a sheet written ahead of the experiment."""
    criteria = list(campaign.criteria.order_by("name"))
    judged = [c for c in criteria if submitted_hits(c).exists()]
    return judged or criteria


def sample_and_design_questions(
    campaign: Campaign, criteria: list[CampaignCriterion], imported: list[str]
) -> dict:
    questions = {
        **sample_questions(campaign, criteria, imported),
        **evaluator_questions(campaign, criteria),
        **design_questions(campaign, criteria, imported),
    }
    if imported:
        # What these answers describe is the platform's own HIT pages; imported ratings
        # were collected elsewhere, by a process only the organiser can describe.
        for qid in ("3.2.2", "3.2.4", "3.3.3", "3.3.4", "3.3.5"):
            entry = questions[qid]
            entry["by_hand"] = "; ".join(filter(None, [entry["by_hand"], IMPORTED_NOTE]))
    return questions


# Section 1 and 5: the platform knows nothing of papers and ethics -------------------------


def resource_questions() -> dict:
    return {
        "1.1": question("1.1"),
        "1.2": question(
            "1.2",
            by_hand="where the bundle (manage.py bundle) and other resources are published",
        ),
        "1.3": question("1.3"),
    }


def ethics_questions() -> dict:
    return {
        "5.1": question("5.1"),
        "5.2": question(
            "5.2",
            by_hand="whether outputs or responses hold personal data, and how that is handled",
            platform=(
                "the platform stores crowd workers' platform ids and study ids, and invited "
                "annotators' names; exports and the bundle give each annotator as the number "
                "of their row"
            ),
        ),
        "5.3": question("5.3"),
        "5.4": question("5.4"),
    }


# Section 2: systems --------------------------------------------------------------------------


def system_questions(campaign: Campaign) -> dict:
    kinds = item_kinds(campaign)
    input_types = sorted({KIND_INPUT_TYPES.get(kind, "other") for kind in kinds})
    return {
        "2.1": question("2.1", input_types or None, input_kinds=kinds),
        "2.2": question("2.2", by_hand="which kind of text (sentence, several, document)"),
        "2.3": question("2.3", by_hand="the task (e.g. data-to-text generation)"),
        "2.4": question("2.4"),
        "2.5": question("2.5"),
    }


def item_kinds(campaign: Campaign) -> dict[str, int]:
    rows = campaign.items.order_by().values_list("input_kind").annotate(n=Count("pk"))
    return {kind: n for kind, n in sorted(rows)}


def system_facts(campaign: Campaign) -> list[dict]:
    """Each system with its outputs, and how they were obtained: imported from files, or
    generated by a hosted backend (its settings that say what generated them)."""
    generated = Q(outputs__origin=Output.Origin.GENERATED)
    systems = campaign.systems.order_by("name").annotate(
        n_outputs=Count("outputs"), n_generated=Count("outputs", filter=generated)
    )
    hosting = {
        hosted.system_id: hosted
        for hosted in HostedSystem.objects.filter(system__campaign=campaign)
    }
    return [
        {
            "name": system.name,
            "label": system.label,
            "architecture": system.architecture,
            "description": system.description,
            "active": system.is_active,
            "outputs": system.n_outputs,
            "imported": system.n_outputs - system.n_generated,
            "generated": system.n_generated,
            "hosted": hosting_of(hosting.get(system.pk)),
        }
        for system in systems
    ]


def hosting_of(hosted: HostedSystem | None) -> dict | None:
    if hosted is None:
        return None
    settings = {k: v for k, v in sorted(hosted.settings.items()) if k in DESCRIPTIVE_SETTINGS}
    return {"backend": hosted.backend, "settings": settings}


# Section 3: sample, evaluators, design ------------------------------------------------------


def sample_questions(
    campaign: Campaign, criteria: list[CampaignCriterion], imported: list[str]
) -> dict:
    judged = {c.name: outputs_judged_per_system(c) for c in criteria}
    selection = (
        "other: the platform gives each evaluator the unseen item with the fewest judgments "
        "and the k systems with the fewest judgments for it (balanced, not random)"
    )
    return {
        "3.1.1": question(
            "3.1.1",
            judged,
            items=campaign.items.count(),
            items_by_kind=item_kinds(campaign),
            items_judged={c.name: items_judged(c) for c in criteria},
        ),
        "3.1.2": question(
            "3.1.2",
            None if imported else selection,
            by_hand=(
                "how the imported ratings' items were selected: they were collected elsewhere"
                if imported
                else None
            ),
            imported_ratings_files=imported,
        ),
        "3.1.3": question("3.1.3"),
    }


def outputs_judged_per_system(criterion: CampaignCriterion) -> dict[str, int]:
    rows = (
        Judgment.objects.counted()
        .for_criterion(criterion)
        .order_by()
        .values_list("slot__output__system__name")
        .annotate(n=Count("slot__output", distinct=True))
    )
    return dict(sorted(rows))


def items_judged(criterion: CampaignCriterion) -> int:
    return submitted_hits(criterion).filter(counted_q()).values("hit__item").distinct().count()


def submitted_hits(criterion: CampaignCriterion):
    """The submitted HITs that judged the criterion: a criterion asked on another's page
    (DA's further ones) has no HITs of its own, and its judgments on that page's."""
    own_hits = form_of(criterion).has_own_hits(criterion)
    return Assignment.objects.submitted().judging(criterion, own_hits)


def imported_ratings(campaign: Campaign) -> list[str]:
    files = campaign.data_files.filter(kind=DataFile.Kind.RATINGS).order_by("imported_at")
    return list(files.values_list("name", flat=True))


def evaluator_questions(campaign: Campaign, criteria: list[CampaignCriterion]) -> dict:
    evaluators = campaign.annotators.filter(assignments__status=Assignment.Status.SUBMITTED)
    by_source = dict(
        sorted(evaluators.order_by().values_list("source").annotate(n=Count("pk", distinct=True)))
    )
    recruitment = [f"{SOURCE_RECRUITMENT.get(s, s)}: {n}" for s, n in by_source.items()]
    return {
        "3.2.1": question(
            "3.2.1",
            evaluators.distinct().count(),
            per_criterion={c.name: evaluator_count(c) for c in criteria},
        ),
        "3.2.2": pay_question(campaign, by_source),
        "3.2.3": question(
            "3.2.3",
            recruitment + comprehension_checks(criteria) or None,
            by_hand="screening: the recruiting platform's filters (e.g. Prolific's "
            "prescreeners, native speakers), inclusion and exclusion criteria",
            **screening_facts(criteria),
        ),
        "3.2.4": question(
            "3.2.4",
            per_form(criteria, lambda sheet: sheet.training),
            instructions=campaign.instructions,
            standard=campaign.standard_text,
        ),
        "3.2.5": question("3.2.5"),
    }


def pay_question(campaign: Campaign, by_source: dict[str, int]) -> dict:
    """HEDS 3.2.2 with the campaign's pay per HIT, and what it makes per hour at the
    median time of the HITs done on the platform's pages (imported ones took their time
    elsewhere)."""
    nature = "expert or not, known to the authors or not"
    if not campaign.pay_per_hit:
        return question(
            "3.2.2",
            by_hand=f"{nature}; paid or not, and how much (the campaign's pay per HIT is 0)",
            evaluators_by_source=by_source,
            pay_per_hit="0",
        )
    seconds = median_seconds_here(campaign)
    answer = f"paid {campaign.pay_per_hit} per HIT (in the study's currency)"
    if seconds:
        hourly = float(campaign.pay_per_hit) * 3600 / seconds
        answer += f", about {hourly:.2f} per hour at the median {seconds:.0f} s per HIT"
    bonuses = bonus_facts(campaign)
    if bonuses:
        answer += (
            f"; bonuses of {bonuses['per_counted_hit']} per counted HIT and"
            f" {bonuses['for_passing_checks']} for passing the quality checks,"
            f" {bonuses['paid']} paid to {bonuses['annotators_paid']} evaluators so far"
        )
    return question(
        "3.2.2",
        answer,
        by_hand=f"{nature}; the currency; whether every evaluator was paid so",
        evaluators_by_source=by_source,
        pay_per_hit=str(campaign.pay_per_hit),
        median_seconds_per_hit=seconds,
        **({"bonuses": bonuses} if bonuses else {}),
    )


def median_seconds_here(campaign: Campaign) -> float | None:
    """The median time of the campaign's HITs submitted on the platform's pages."""
    hits = Assignment.objects.submitted().done_here().filter(hit__campaign=campaign)
    times = hits.values_list("started_at", "submitted_at")
    seconds = [(end - start).total_seconds() for start, end in times if end]
    return round(statistics.median(seconds), 1) if seconds else None


def comprehension_checks(criteria: list[CampaignCriterion]) -> list[str]:
    return [
        f"comprehension check ({c.name}): {form_of(c).comprehension.wording}"
        for c in criteria
        if c.comprehension_check
    ]


def per_form(criteria: list[CampaignCriterion], wording, **values) -> str:
    """A campaign-wide answer in the words of its criteria's judgment forms: one form's
    alone, or each form's after its name."""
    forms = {form.name: form for form in map(form_of, criteria)}
    said = {name: wording(form.datasheet).format(**values) for name, form in forms.items()}
    if len(said) == 1:
        return next(iter(said.values()))
    return "; ".join(f"{name}: {text}" for name, text in said.items())


def screening_facts(criteria: list[CampaignCriterion]) -> dict:
    """Evaluators who passed the comprehension check, or were screened out, per criterion."""
    checked = [c for c in criteria if c.comprehension_check]
    if not checked:
        return {}
    screened_out = Q(passed=False, attempts__gte=Screening.MAX_ATTEMPTS)
    counts = {}
    for criterion in checked:
        found = Screening.objects.filter(criterion=criterion).aggregate(
            n_passed=Count("pk", filter=Q(passed=True)),
            n_screened_out=Count("pk", filter=screened_out),
        )
        counts[criterion.name] = {
            "passed": found["n_passed"],
            "screened_out": found["n_screened_out"],
        }
    return {"comprehension_checks": counts}


def evaluator_count(criterion: CampaignCriterion) -> int:
    return submitted_hits(criterion).values("annotator").distinct().count()


def design_questions(
    campaign: Campaign, criteria: list[CampaignCriterion], imported: list[str]
) -> dict:
    collected = per_form(criteria, lambda sheet: sheet.collected)
    if imported:
        collected += "; imported ratings were collected elsewhere (see 3.1.2)"
    return {
        "3.3.1": question("3.3.1"),
        "3.3.2": question("3.3.2", collected),
        "3.3.3": quality_assurance(campaign, criteria),
        "3.3.4": question(
            "3.3.4",
            per_form(criteria, lambda sheet: sheet.pages, k=campaign.outputs_per_hit),
            by_hand="links to screenshots",
        ),
        "3.3.5": question(
            "3.3.5",
            f"each HIT must be submitted within {campaign.assignment_timeout_minutes} "
            "minutes, after which it returns to the pool; at most "
            f"{campaign.max_hits_per_annotator} HITs per evaluator; evaluators may stop and "
            "come back later",
        ),
        "3.3.6": question("3.3.6"),
        "3.3.7": question("3.3.7", "at a place of the evaluators' own choosing, online"),
        "3.3.8": question("3.3.8", "N/A: at a place of the evaluators' own choosing"),
    }


def quality_assurance(campaign: Campaign, criteria: list[CampaignCriterion]) -> dict:
    hits = Assignment.objects.submitted().filter(hit__campaign=campaign)
    methods = [
        f"automatic: a HIT submitted in under {campaign.min_seconds_per_hit} s is flagged "
        "and left out of rankings (an organiser may clear the flag)",
        *attention_method(campaign, criteria),
        *[f"screening: {check}" for check in comprehension_checks(criteria)],
        "manual: organisers may exclude an evaluator, whose judgments are then left out",
        "the coverage boxes: 'reflects the input perfectly' cannot be ticked with another",
    ]
    return question(
        "3.3.3",
        methods,
        by_hand="other checks, if any (e.g. native speakers screened by the recruiting platform)",
        flagged_hits=dict(
            sorted(hits.flagged().order_by().values_list("flag").annotate(n=Count("pk")))
        ),
        **attention_facts(campaign),
        **exclusion_facts(campaign),
        **judgment_counts(campaign),
    )


def attention_method(campaign: Campaign, criteria: list[CampaignCriterion]) -> list[str]:
    every = campaign.attention_check_every
    if not every:
        return []
    threshold = campaign.attention_p_threshold
    rule = "; ".join(
        dict.fromkeys(form_of(c).attention.wording.format(every=every) for c in criteria)
    )
    return [
        f"automatic: attention checks: {rule} (one-sided Mann-Whitney "
        f"test, p above {threshold:g} after at least {checks_needed(threshold)} checks) is "
        "left out of rankings"
    ]


def attention_facts(campaign: Campaign) -> dict:
    summary = attention_summary(campaign)
    if not (summary.every or summary.checked):
        return {}
    counts = {
        "evaluators_checked": summary.checked,
        "failed": summary.failed,
        "failed_and_left_out": summary.left_out,
    }
    return {"attention_checks": counts}


def exclusion_facts(campaign: Campaign) -> dict:
    """Evaluators left out of rankings, and why: the attention checks, or an organiser."""
    failed = Q(failed_attention_at__isnull=False)
    counts = campaign.annotators.filter(is_excluded=True).aggregate(
        all=Count("pk"),
        attention=Count("pk", filter=failed),
        organiser=Count("pk", filter=~failed),
    )
    return {
        "excluded_evaluators": counts["all"],
        "excluded_because": {
            "failed the attention checks": counts["attention"],
            "excluded by an organiser": counts["organiser"],
        },
    }


def judgment_counts(campaign: Campaign) -> dict[str, int]:
    """The judgments of submitted HITs, those rankings leave out, and why (both reasons
    may hold for one judgment)."""
    judgments = Judgment.objects.of_originals().filter(
        assignment__hit__campaign=campaign, assignment__status=Assignment.Status.SUBMITTED
    )
    return judgments.aggregate(
        judgments_submitted=Count("pk"),
        judgments_left_out=Count("pk", filter=~counted_q("assignment__")),
        judgments_flagged=Count("pk", filter=~unflagged_q("assignment__")),
        judgments_of_excluded_evaluators=Count(
            "pk", filter=Q(assignment__annotator__is_excluded=True)
        ),
    )


# Section 4: one per criterion ---------------------------------------------------------------


def criterion_section(criterion: CampaignCriterion) -> dict:
    properties = CRITERION_PROPERTIES.get(criterion.name, {})
    questions = {qid: question(qid, properties.get(qid)) for qid in ("4.1.1", "4.1.2", "4.1.3")}
    questions |= {
        "4.2.1": question("4.2.1", "subjective"),
        "4.2.2": question("4.2.2", form_of(criterion).datasheet.relative),
        "4.2.3": question("4.2.3", "intrinsic"),
        **instrument_questions(criterion),
        **aggregation_questions(criterion),
    }
    return {"criterion": criterion.name, "questions": questions}


def instrument_questions(criterion: CampaignCriterion) -> dict:
    sheet = form_of(criterion).datasheet
    return {
        "4.3.1": question("4.3.1", criterion.label),
        "4.3.2": question("4.3.2", criterion.question_text, by_hand="any further definition"),
        "4.3.3": question("4.3.3", sheet.scale_size(criterion)),
        "4.3.4": question("4.3.4", sheet.scale(criterion)),
        "4.3.5": question("4.3.5", sheet.presented(criterion)),
        "4.3.6": question("4.3.6", "N/A: there is a rating instrument"),
        "4.3.7": question("4.3.7", criterion.question_text),
        "4.3.8": question("4.3.8", sheet.elicitation, rating_means=sheet.rating_means),
    }


def aggregation_questions(criterion: CampaignCriterion) -> dict:
    runs = latest_runs(criterion)
    protocols = [run["protocol"] for run in runs]
    nothing = nothing_to_rank(criterion)
    missing = None if runs else "no finished ranking run yet"
    if nothing and not runs:
        missing = f"no ranking yet: {nothing[0]['reason']}"
    facts = {"nothing_to_rank": nothing} if nothing else {}
    return {
        "4.3.9": question(
            "4.3.9",
            [f"{p}: {heds(p).aggregation}" for p in protocols] or None,
            by_hand=missing,
            ranking_runs=runs,
            **facts,
        ),
        "4.3.10": question(
            "4.3.10",
            [f"{p}: {heds(p).significance}" for p in protocols] or None,
            by_hand=missing,
        ),
        "4.3.11": agreement_question(criterion),
    }


def heds(protocol: str) -> Datasheet:
    """HEDS 4.3.9 and 4.3.10 as the protocol words them (a run of a protocol this version
    no longer has says so)."""
    known = PROTOCOLS.get(protocol)
    unknown = "see the protocol"
    return known.datasheet if known else Datasheet(aggregation=unknown, significance=unknown)


def agreement_question(criterion: CampaignCriterion) -> dict:
    """What the newest finished run measured of the agreement between annotators."""
    measured = (
        RunAgreement.objects.filter(
            run__in=RankingRun.objects.for_criterion(criterion),
            run__status=RankingRun.Status.DONE,
        )
        .order_by("-run__finished_at", "-run_id")
        .first()
    )
    intra = "intra-annotator agreement, if measured: the platform measures it between annotators"
    if measured is None or measured.alpha is None:
        return question("4.3.11", by_hand=f"no finished run has measured agreement; {intra}")
    answer = (
        "Krippendorff's alpha, interval level, on each HIT's scores as ranks normalised to "
        f"[0, 1], with (item, system) pairs as units: {measured.alpha:.3f}, 95% bootstrap "
        f"interval over items {number(measured.alpha_low)} to {number(measured.alpha_high)} "
        f"({measured.rounds} rounds), on {measured.units} pairs judged twice or more "
        f"({measured.judgments} judgments); per annotator, Pearson's r with the others"
    )
    return question("4.3.11", answer, by_hand=intra, run=measured.run_id)


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def latest_runs(criterion: CampaignCriterion) -> list[dict]:
    """The newest finished run of each protocol: what the results page shows."""
    runs = RankingRun.objects.for_criterion(criterion)
    protocols = runs.finished().order_by("protocol").values_list("protocol", flat=True).distinct()
    latest = [runs.filter(protocol=protocol).latest_done() for protocol in protocols]
    return [run_facts(run, criterion) for run in latest if run is not None]


def nothing_to_rank(criterion: CampaignCriterion) -> list[dict]:
    """The protocols whose newest run found nothing to rank, as their results pages say:
    a ranking listed in 4.3.9 for such a protocol is from before that run."""
    runs = RankingRun.objects.for_criterion(criterion)
    protocols = runs.found_nothing().order_by("protocol").values_list("protocol", flat=True)
    found = []
    for protocol in protocols.distinct():
        run = runs.filter(protocol=protocol).nothing_to_rank_now()
        if run is not None:
            found.append(
                {"run": run.pk, "protocol": protocol, "reason": run.nothing_to_rank_reason}
            )
    return found


def run_facts(run: RankingRun, criterion: CampaignCriterion) -> dict:
    return {
        "run": run.pk,
        "protocol": run.protocol,
        "protocol_label": run.protocol_label,
        "repetitions": run.repetitions,
        "seed": run.seed,
        "judgments": run.judgments,
        "hits": run.hits,
        "comparisons": run.comparisons,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "covers_current_judgments": run.judgments_version == criterion.judgments_version,
    }
