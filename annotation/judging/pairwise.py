"""Pairwise preference (Chatbot Arena; the RotoWire human evaluation of Puduppully and
Lapata 2021): two outputs of one input side by side, "A is better", "Tie" or "B is better",
with an optional justification. With the setting `{"best_worst": k}` (k from 3 to
MAX_OUTPUTS), best-worst scaling: k outputs, the annotator picks the best and the worst.

Storage: one Judgment per slot whose score is the choice, higher better, read exactly back
by ranking (ranking/service.py builds `ranking.engine.choices.Choices` from it):
- pairwise: the winner 1, the loser 0, a tie 0.5 each;
- best-worst: the best 1, the worst 0, the others 0.5 (only one output is best and one
  worst, so the scores say exactly what was chosen, whatever k);
- identical outputs are shown once (annotation/handout/shown.py): a page whose
  outputs are all one sentence asks nothing and stores a tie (0.5 each).
The justification is a `Justification` row of the assignment, when one was written.

Attention check: a HIT carrying a degraded copy of one of its outputs asks a second,
separate comparison on the same page, the copy against its original (sides by slot
position); the copy's Judgment stores the copy's result of that comparison (1 won, 0.5
tie, 0 lost) and the check wants it to lose.
"""

import secrets
import string
from dataclasses import dataclass

from django import forms
from django.core.exceptions import ValidationError

from annotation import form_names
from annotation.forms import SubmissionKeyForm
from annotation.handout import sql
from annotation.handout.shown import Shown
from annotation.models import CampaignCriterion, Judgment, Justification

from .base import (
    AttentionRule,
    CheckRow,
    Comprehension,
    FileLayout,
    FormDatasheet,
    JudgmentForm,
    Shape,
)
from .rankme import worked_pair

NAME = form_names.PAIRWISE
MAX_OUTPUTS = 8
WIN, TIE, LOSS = 1.0, 0.5, 0.0
CHOICE_REQUIRED = "Choose which sentence is better, or that they are tied."
BEST_REQUIRED = "Choose the best sentence."
WORST_REQUIRED = "Choose the worst sentence."
SAME_BEST_WORST = "The best and the worst must be two different sentences."
CHECK_REQUIRED = "Choose which sentence of this comparison is better, or that they are tied."


def best_worst_k(criterion: CampaignCriterion) -> int:
    """The outputs of a best-worst page; 0 for a pairwise criterion."""
    return int(criterion.settings.get("best_worst") or 0)


def outputs_per_hit(criterion: CampaignCriterion) -> int:
    return best_worst_k(criterion) or 2


@dataclass
class Page:
    """What a page shows: the compared sentences (labelled A, B, ...) and, with an
    attention check, a second comparison of the copy and its original (left, right)."""

    outputs: list[Shown]
    check: tuple[Shown, Shown] | None  # (left, right), one of them the copy
    copy: Shown | None

    @property
    def best_worst(self) -> bool:
        return len(self.outputs) > 2


def page_of(shown: list[Shown]) -> Page:
    outputs = [s for s in shown if not any(slot.is_attention_check for slot in s.slots)]
    copies = [s for s in shown if any(slot.is_attention_check for slot in s.slots)]
    labels = iter(string.ascii_uppercase)
    # Relabelled for the page: the compared sentences first, then the check's two.
    outputs = [Shown(s.key, next(labels), s.text, s.slots) for s in outputs]
    if not copies:
        return Page(outputs, None, None)
    copy = copies[0]
    made_from = copy.slots[0].output_id
    original = next(
        (s for s in outputs if any(slot.output_id == made_from for slot in s.slots)), outputs[0]
    )
    copy_left = copy.slots[0].position < original.slots[0].position
    first = Shown(copy.key if copy_left else original.key, next(labels), "", [])
    second = Shown(original.key if copy_left else copy.key, next(labels), "", [])
    first.text = copy.text if copy_left else original.text
    second.text = original.text if copy_left else copy.text
    copy = Shown(copy.key, first.label if copy_left else second.label, copy.text, copy.slots)
    return Page(outputs, (first, second), copy)


def preference_field(first: str, second: str, required: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        choices=[("a", f"{first} is better"), ("tie", "Tie"), ("b", f"{second} is better")],
        widget=forms.RadioSelect,
        error_messages={"required": required, "invalid_choice": required},
    )


class PairwisePageForm(SubmissionKeyForm):
    """The page's choice (a preference of two, or the best and the worst of k), the
    attention check's preference where the HIT carries one, and the justification."""

    def __init__(self, *args, shown: list[Shown], criterion: CampaignCriterion, **kwargs):
        kwargs.setdefault("initial", {"submission_key": secrets.token_urlsafe(16)})
        super().__init__(*args, **kwargs)
        self.criterion = criterion
        self.page = page = page_of(shown)
        labels = [(str(s.key), f"Sentence {s.label}") for s in page.outputs]
        if page.best_worst:
            self.fields["best"] = forms.ChoiceField(
                choices=labels,
                widget=forms.RadioSelect,
                error_messages={"required": BEST_REQUIRED, "invalid_choice": BEST_REQUIRED},
            )
            self.fields["worst"] = forms.ChoiceField(
                choices=labels,
                widget=forms.RadioSelect,
                error_messages={"required": WORST_REQUIRED, "invalid_choice": WORST_REQUIRED},
            )
        elif len(page.outputs) == 2:
            a, b = page.outputs
            self.fields["choice"] = preference_field(a.label, b.label, CHOICE_REQUIRED)
        if page.check is not None:
            left, right = page.check
            self.fields["check"] = preference_field(left.label, right.label, CHECK_REQUIRED)
        self.fields["justification"] = forms.CharField(
            required=False,
            max_length=Justification.MAX_CHARS,
            strip=True,
            label="Why? (optional)",
            widget=forms.Textarea(attrs={"rows": 3, "maxlength": Justification.MAX_CHARS}),
        )

    def clean(self):
        data = super().clean() or {}
        best, worst = data.get("best"), data.get("worst")
        if best is not None and best == worst:
            self.add_error("worst", SAME_BEST_WORST)
        return data

    def answers(self) -> dict:
        """{"scores": sentence key -> score, "justification": text}: every sentence shown
        (the copy's score is its result against its original)."""
        data, page = self.cleaned_data, self.page
        scores = {s.key: TIE for s in page.outputs}
        if page.best_worst:
            for s in page.outputs:
                if str(s.key) == data["best"]:
                    scores[s.key] = WIN
                elif str(s.key) == data["worst"]:
                    scores[s.key] = LOSS
        elif len(page.outputs) == 2:
            a, b = page.outputs
            scores[a.key], scores[b.key] = preference_scores(data["choice"])
        if page.check is not None and page.copy is not None:
            left, right = page.check
            left_score, right_score = preference_scores(data["check"])
            scores[page.copy.key] = left_score if page.copy.key == left.key else right_score
        return {"scores": scores, "justification": data.get("justification", "")}

    def key(self) -> str:
        return self.cleaned_data.get("submission_key") or secrets.token_urlsafe(16)

    def error_list(self) -> list[tuple[str, str, str]]:
        """(what, message, field id) in page order, for the page's summary."""
        names = {
            "choice": "Your choice",
            "best": "The best",
            "worst": "The worst",
            "check": "The second comparison",
            "justification": "Why",
        }
        errors = []
        for name, what in names.items():
            if name in self.fields and name in self.errors:
                field = self[name]
                anchor = f"{field.auto_id}_0" if name != "justification" else field.auto_id
                errors += [(what, str(message), anchor) for message in field.errors]
        return errors

    def page_context(self) -> dict:
        return {
            "outputs": self.page.outputs,
            "check_pair": self.page.check,
            "best_worst": self.page.best_worst,
            "alike": len(self.page.outputs) < 2,
            "max_justification": Justification.MAX_CHARS,
        }


def preference_scores(choice: str) -> tuple[float, float]:
    """(A's score, B's score) of a preference."""
    return {"a": (WIN, LOSS), "b": (LOSS, WIN), "tie": (TIE, TIE)}[choice]


def page_form(data, shown: list[Shown], criterion: CampaignCriterion) -> PairwisePageForm:
    return PairwisePageForm(data, shown=shown, criterion=criterion)


def slot_scores(shown: list[Shown], answers: dict) -> list[tuple[int, float]]:
    scores = answers["scores"]
    slots = [
        (slot, scores[s.key]) for s in shown for slot in s.slots if not slot.is_attention_check
    ]
    slots.sort(key=lambda pair: pair[0].position)
    return [(slot.output.system_id, score) for slot, score in slots]


def save(assignment, criterion: CampaignCriterion, shown: list[Shown], answers, also) -> None:
    """A Judgment per slot (the choice as its score); the justification, if any, beside."""
    scores = answers["scores"]
    judgments = [
        Judgment(assignment=assignment, slot=slot, criterion=criterion, score=scores[s.key])
        for s in shown
        for slot in s.slots
    ]
    sql.insert(judgments, also=also)
    text = answers.get("justification", "")
    if text:
        sql.insert([Justification(assignment=assignment, criterion=criterion, text=text)])


def check_pairs(rows) -> list[tuple[float, float]]:
    """(original's result, copy's result) per attention check: the copy's Judgment holds
    its result against its original (1 won, 0.5 tie, 0 lost); the original's is the rest."""
    checked: list[CheckRow] = list(rows)
    return [(WIN - score, score) for _, _, degraded, score in checked if degraded]


# The comprehension check --------------------------------------------------------------------


class PairwiseCheckForm(forms.Form):
    """The worked pair as a page asks it: which of the two is better."""

    choice = preference_field("A", "B", CHOICE_REQUIRED)

    def __init__(self, data=None, first: str = "", second: str = "", **kwargs):
        super().__init__(data, **kwargs)
        self.texts = (first, second)

    def rows(self) -> list[tuple[str, str]]:
        first, second = self.texts
        return [("A", first), ("B", second)]


def check_passes(form: PairwiseCheckForm, sentence_first: bool) -> bool:
    """The sentence preferred to its degraded copy (a tie, or the copy, fails)."""
    return form.cleaned_data["choice"] == ("a" if sentence_first else "b")


# Settings -----------------------------------------------------------------------------------


def clean_settings(settings: dict, criterion: CampaignCriterion) -> dict:
    unknown = sorted(set(settings) - {"best_worst"})
    if unknown:
        raise ValidationError(
            {"settings": f"unknown setting(s) {', '.join(unknown)}: use best_worst"}
        )
    k = settings.get("best_worst")
    if k is not None and (type(k) is not int or not 3 <= k <= MAX_OUTPUTS):
        raise ValidationError(
            {
                "settings": f"best_worst: the outputs of a best-worst page, a whole number from"
                f" 3 to {MAX_OUTPUTS} (leave it out for pairwise preference)"
            }
        )
    return dict(settings)


def scale(criterion: CampaignCriterion) -> str:
    k = best_worst_k(criterion)
    if k:
        return f"best-worst of {k}: one output chosen best, another chosen worst"
    return "three values: A is better, tie, B is better"


def presented(criterion: CampaignCriterion) -> str:
    k = best_worst_k(criterion)
    if k:
        return (
            f"radio buttons: the {k} outputs side by side (stacked on a phone), one 'best' and"
            " one 'worst' button per output; an optional justification box"
        )
    return (
        "radio buttons: the two outputs side by side (stacked on a phone), then 'A is"
        " better', 'Tie', 'B is better'; an optional justification box"
    )


FORM = JudgmentForm(
    name=NAME,
    label="Pairwise preference (A better, tie, B better), or best-worst of k",
    page_template="annotation/judging/pairwise_hit.html",
    instructions_template="annotation/judging/pairwise_instructions.html",
    outputs_per_hit=outputs_per_hit,
    page_form=page_form,
    slot_scores=slot_scores,
    save=save,
    attention=AttentionRule(
        wording="an evaluator's first HIT and one in every {every} after it also ask a second"
        " comparison, an output against a degraded copy of it, never ranked; an evaluator"
        " whose choices do not prefer the outputs to their copies",
        pairs=check_pairs,
    ),
    comprehension=Comprehension(
        worked_pair=worked_pair,
        template="annotation/judging/pairwise_check.html",
        page_form=PairwiseCheckForm,
        passes=check_passes,
        wording="before the first HIT, a sentence and a degraded copy of it (words dropped"
        " and shuffled) compared as on a page; two attempts that do not prefer the sentence"
        " (the copy chosen, or a tie) screen the evaluator out (no HITs)",
    ),
    export_formats=(NAME,),
    import_formats=(NAME,),
    datasheet=FormDatasheet(
        training="instructions with a worked example before the first HIT; each page states"
        " the criterion's question",
        pages="one HIT per page: the outputs of {k} systems for one input, in random order"
        " and side by side (stacked on a phone), with one choice: which is better, or a"
        " tie (pairwise); or the best and the worst (best-worst of k); an optional"
        " justification; identical outputs are shown once and the choice given to each system",
        relative="relative: the outputs of a page compared with each other",
        scale_size=lambda criterion: 2 if best_worst_k(criterion) else 3,
        scale=scale,
        presented=presented,
        elicitation="relative quality estimation: forced choice with a tie allowed (pairwise"
        " preference), or best-worst scaling (the best and the worst of k)",
        rating_means="which output meets the criterion's question better (a tie: equally"
        " well); for best-worst, which of the k meets it best and which worst, nothing being"
        " said between the others",
        collected="online, on the platform's pairwise-preference HIT pages",
    ),
    # The comparisons the choices imply (TrueSkill, Bradley-Terry) and best-worst scores.
    protocols=("calibrated", "e2e", "bt", "bws"),
    clean_settings=clean_settings,
    chooses=True,
    agreement_on="choices",
    layout=FileLayout(Shape.CHOICES, "Pairwise preference CSV (import_ratings --form)"),
)
