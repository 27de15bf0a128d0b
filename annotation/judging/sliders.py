"""The 0-100 slider that direct assessment (da.py) and error-span annotation (esa.py) score
with: its field, the comprehension check scored on it, the words at its ends and the
settings both forms take (`outputs_per_page`, `low_label`, `high_label`)."""

import re

from django import forms
from django.core.exceptions import ValidationError

from annotation.forms import ScoreInput
from annotation.handout.shown import Shown
from annotation.models import CampaignCriterion

from .base import Comprehension, OnScale
from .rankme import worked_pair

LOWEST, HIGHEST = 0, 100
# Off the slider's scale: anything outside 0-100. The page and the importers refuse such a
# score, so only judgments stored by other means (an older import, the database) can be.
SCALE = OnScale(lowest=LOWEST, highest=HIGHEST, wording=f"outside the slider's {LOWEST}-{HIGHEST}")
MAX_OUTPUTS = 10
SLIDER_CHARS = 8  # what a score box takes: "100" with room for spaces and a mistake


class SliderScoreField(forms.CharField):
    """A whole number from 0 to 100: what the slider or its box gave; empty when neither
    was touched."""

    default_error_messages = {
        "required": "Move the slider (or type a number from 0 to 100): it has no score yet.",
        "invalid": "Enter a whole number from 0 to 100.",
    }
    widget = ScoreInput

    def __init__(self, **kwargs):
        super().__init__(max_length=None, strip=True, **kwargs)
        self.widget.attrs.update(
            inputmode="numeric", autocomplete="off", size=4, maxlength=SLIDER_CHARS
        )

    def to_python(self, value) -> int | None:  # type: ignore[override]
        value = super().to_python(value)
        if value in self.empty_values:
            return None
        if len(value) > SLIDER_CHARS or not re.fullmatch(r"[0-9]+", value):
            raise ValidationError(self.error_messages["invalid"], code="invalid")
        number = int(value)
        if not LOWEST <= number <= HIGHEST:
            raise ValidationError(self.error_messages["invalid"], code="invalid")
        return number


class SliderCheckForm(forms.Form):
    """The comprehension check: the worked pair scored on the 0-100 slider."""

    score_a = SliderScoreField(label="Score of sentence A")
    score_b = SliderScoreField(label="Score of sentence B")

    def __init__(self, data=None, first: str = "", second: str = "", **kwargs):
        super().__init__(data, **kwargs)
        self.texts = (first, second)

    def rows(self) -> list[tuple[str, str, forms.BoundField]]:
        first, second = self.texts
        return [("A", first, self["score_a"]), ("B", second, self["score_b"])]


def check_passes(form: SliderCheckForm, sentence_first: bool) -> bool:
    """The degraded copy scored below the sentence."""
    a, b = form.cleaned_data["score_a"], form.cleaned_data["score_b"]
    sentence, degraded = (a, b) if sentence_first else (b, a)
    return degraded < sentence


def comprehension(template: str) -> Comprehension:
    """The comprehension check of a slider form, its page `template`."""
    return Comprehension(
        worked_pair=worked_pair,
        template=template,
        page_form=SliderCheckForm,
        passes=check_passes,
        wording="before the first HIT, a sentence and a degraded copy of it (words dropped"
        " and shuffled) scored on the 0-100 slider; two attempts that do not score the copy"
        " lower screen the evaluator out (no HITs)",
    )


def slot_scores(shown: list[Shown], answers) -> list[tuple[int, float]]:
    """The score per slot of an output (the first of each sentence's answers), in slot
    order."""
    slots = [
        (slot, answers[s.key][0]) for s in shown for slot in s.slots if not slot.is_attention_check
    ]
    slots.sort(key=lambda pair: pair[0].position)
    return [(slot.output.system_id, score) for slot, score in slots]


def labels(criterion: CampaignCriterion, defaults: dict[str, str]) -> dict[str, str]:
    """The words at the slider's ends: the criterion's, else the form's `defaults`."""
    return {key: criterion.settings.get(key) or words for key, words in defaults.items()}


def outputs_per_hit(criterion: CampaignCriterion) -> int:
    return criterion.settings.get("outputs_per_page") or criterion.campaign.outputs_per_hit


def clean_settings(settings: dict, defaults: dict[str, str], known: set[str]) -> dict:
    """The settings checked and completed with the end labels' `defaults`; `known` the
    other keys the form takes besides `outputs_per_page`. A ValidationError names the key."""
    known = {*known, "outputs_per_page", *defaults}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValidationError(
            {"settings": f"unknown setting(s) {', '.join(unknown)}: use {', '.join(sorted(known))}"}
        )
    cleaned = {**defaults, **settings}
    for key in defaults:
        if not isinstance(cleaned[key], str) or not 0 < len(cleaned[key]) <= 40:
            raise ValidationError({"settings": f"{key}: a text of 1 to 40 characters"})
    k = cleaned.get("outputs_per_page")
    if k is not None and (type(k) is not int or not 1 <= k <= MAX_OUTPUTS):
        raise ValidationError(
            {"settings": f"outputs_per_page: a whole number from 1 to {MAX_OUTPUTS}"}
        )
    return cleaned
