"""RankME (Novikova et al., NAACL 2018; DESIGN.md 'RankME, precisely'): k outputs of one
input scored against a standard fixed at 100 (magnitude estimation), with coverage boxes
where the input is shown. The platform's first form; its page is annotation/hit.html."""

from annotation import form_names
from annotation.forms import CheckForm, HitForm
from annotation.handout import sql
from annotation.handout.shown import Answer, Shown
from annotation.models import Assignment, CampaignCriterion, Judgment
from nlgdata.judgments import COVERAGE_MARKS, MAX_SCORE

from .base import (
    AttentionRule,
    Comprehension,
    FormDatasheet,
    JudgmentForm,
    OnScale,
    WorkedPair,
)

STANDARD_SCORE = 100
# Off the scale: more than ten times as good as the standard. The page takes any six digits
# (MAX_SCORE), as RankME's did, so its own maximum bounds nothing; ten times a fluent,
# adequate standard is no judgment of quality but a slip (E2E's crowd typed 111,111 and
# 5,656: 4 of its 14,895 scores are above 1,000, only 11 above 200). No lower bound: the
# page asks for a small number such as 1 for a very bad sentence.
SCALE = OnScale(
    highest=10 * STANDARD_SCORE,
    wording=f"above {10 * STANDARD_SCORE:,}, ten times the standard's {STANDARD_SCORE}",
)

# The input is the instructions page's worked example (views.EXAMPLE_INPUT); the pair is
# not among that example's sentences, so an annotator applies the rule rather than copies.
# One pair for a criterion judged with its input (quality), one without (naturalness).
WITH_INPUT = WorkedPair(
    sentence="Near Burger King by the riverside, The Eagle is a coffee shop serving French "
    "food at moderate prices.",
    degraded="The Eagle riverside coffee near near French the shop prices King.",
)
WITHOUT_INPUT = WorkedPair(
    sentence="The Eagle is a French coffee shop by the river, close to Burger King.",
    degraded="Coffee shop The the Eagle river French close by is Burger.",
)


def worked_pair(criterion) -> WorkedPair:
    return WITH_INPUT if criterion.shows_input else WITHOUT_INPUT


def check_passes(form: CheckForm, sentence_first: bool) -> bool:
    """The degraded copy scored below the sentence."""
    a, b = form.cleaned_data["score_a"], form.cleaned_data["score_b"]
    sentence, degraded = (a, b) if sentence_first else (b, a)
    return degraded < sentence


def page_form(data, shown, criterion) -> HitForm:
    return HitForm(
        data,
        shown=shown,
        coverage=criterion.shows_input,
        coverage_required=criterion.coverage_required,
    )


def presented(criterion) -> str:
    boxes = "; with three coverage check-boxes per output: " + ", ".join(
        f"'{words}'" for words in COVERAGE_MARKS.values()
    )
    typed = "other: a whole number typed in a box per output (magnitude estimation)"
    return typed + (boxes if criterion.shows_input else "")


def slot_scores(sentences: list[Shown], answers: dict[int, Answer]) -> list[tuple[int, float]]:
    """(system, score) per slot of an output, in slot order: an attention check is no
    system's output. RankME's, and any form's whose answers are one `score` per sentence."""
    slots = [
        (slot, answers[shown.key].score)
        for shown in sentences
        for slot in shown.slots
        if not slot.is_attention_check
    ]
    slots.sort(key=lambda pair: pair[0].position)
    return [(slot.output.system_id, score) for slot, score in slots]


def save_judgments(
    assignment: Assignment,
    criterion: CampaignCriterion,
    sentences: list[Shown],
    answers: dict[int, Answer],
    also: list[sql.Statement],
) -> None:
    """RankME's answers as judgments (with coverage marks where the input is shown),
    written with `also` (sql.run_together)."""
    judgments = []
    for shown in sentences:
        answer = answers[shown.key]
        coverage = {}
        if criterion.shows_input:
            coverage = {
                "adds_information": answer.adds_information,
                "misses_information": answer.misses_information,
                "reflects_perfectly": answer.reflects_perfectly,
            }
        judgments += [
            Judgment(
                assignment=assignment,
                slot=slot,
                criterion=criterion,
                score=answer.score,
                **coverage,
            )
            for slot in shown.slots
        ]
    sql.insert(judgments, also=also)


FORM = JudgmentForm(
    name=form_names.RANKME,
    label="RankME: magnitude estimation against a standard of 100",
    page_template="annotation/hit.html",
    instructions_template="annotation/judging/rankme_instructions.html",
    outputs_per_hit=lambda criterion: criterion.campaign.outputs_per_hit,
    page_form=page_form,
    slot_scores=slot_scores,
    save=save_judgments,
    attention=AttentionRule(
        wording="an evaluator's first HIT and one in every {every} after it show a degraded"
        " copy of one of its outputs, never ranked; an evaluator whose scores do not put the"
        " outputs above their copies"
    ),
    comprehension=Comprehension(
        worked_pair=worked_pair,
        template="annotation/check.html",
        page_form=CheckForm,
        passes=check_passes,
        wording="before the first HIT, a sentence and a degraded copy of it (words dropped"
        " and shuffled) scored against the standard; two attempts that do not score the copy"
        " lower screen the evaluator out (no HITs)",
    ),
    export_formats=("csv", "jsonl", "e2e"),
    import_formats=("e2e",),
    datasheet=FormDatasheet(
        training="instructions with a worked example before the first HIT; on every HIT the "
        "standard utterance comes first with its fixed score of 100",
        pages="one HIT per page: the standard with its score of 100, then the outputs of k "
        "systems ({k} per HIT) for one input, shuffled, each with a score box; for quality "
        "also the input and three coverage boxes per output; a live view of the ranking the "
        "numbers imply; identical outputs are shown once and their score given to each system",
        relative="relative: k outputs of different systems judged together",
        scale_size=lambda criterion: MAX_SCORE,
        scale=lambda criterion: f"1-{MAX_SCORE:,}, relative to the standard's fixed score of 100",
        presented=presented,
        elicitation="relative quality estimation (including ranking): RankME, magnitude "
        "estimation of k outputs against a standard",
        rating_means="how good an output is relative to the standard's 100 (twice as good:"
        " 200); only the order within a HIT is ranked",
        collected="online, on the platform's RankME HIT pages",
    ),
    # Every view: the comparisons a HIT's scores imply, and the raw scores.
    protocols=("calibrated", "e2e", "bootstrap", "bt", "wmt", "bws", "fused"),
    shows_standard=True,
    scale=SCALE,
)
