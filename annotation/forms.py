"""Forms of the annotator pages: the entry link's parameters, and the HIT itself."""

import re
import secrets
from dataclasses import dataclass

from django import forms
from django.core.validators import RegexValidator
from django.utils.html import escape
from django.utils.safestring import mark_safe

from nlgdata.judgments import (
    COVERAGE_MARKS,
    COVERAGE_RULE,
    MAX_SCORE,
    MAX_SCORE_DIGITS,
    coverage_allowed,
)

from .handout.shown import Answer, Shown
from .models import Annotator

# What a score box takes (its maxlength): room for leading zeros, and short enough that
# nothing typed or posted reaches int()'s 4300-digit limit.
MAX_SCORE_CHARS = 20
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"

platform_id = RegexValidator(
    r"^[A-Za-z0-9_-]+$", "Only letters, digits, '-' and '_' can appear in this identifier."
)


def id_field() -> forms.CharField:
    return forms.CharField(required=False, max_length=100, validators=[platform_id])


@dataclass(frozen=True)
class Link:
    """Who the entry link says the visitor is."""

    source: str
    external_id: str = ""
    study: dict | None = None
    token: str = ""


class EntryForm(forms.Form):
    """The query parameters a crowd platform or an invitation puts on the entry link."""

    PROLIFIC_PID = id_field()
    STUDY_ID = id_field()
    SESSION_ID = id_field()
    workerId = id_field()
    assignmentId = id_field()
    hitId = id_field()
    token = id_field()

    def clean(self):
        data = super().clean() or {}
        mturk = data.get("workerId") and not (data.get("PROLIFIC_PID") or data.get("token"))
        if mturk and data.get("assignmentId", MTURK_PREVIEW) in ("", MTURK_PREVIEW):
            # The assignment id binds the worker id (identity.BINDING): one every preview
            # shares, or none, would bind it to nothing.
            self.add_error("assignmentId", "A Mechanical Turk link needs its assignment id.")
        return data

    def link(self) -> Link | None:
        data = self.cleaned_data
        if data["token"]:
            return Link(Annotator.Source.INVITED, token=data["token"])
        if data["PROLIFIC_PID"]:
            study = {"study_id": data["STUDY_ID"], "session_id": data["SESSION_ID"]}
            return Link(Annotator.Source.PROLIFIC, data["PROLIFIC_PID"], study)
        if data["workerId"]:
            study = {"assignment_id": data["assignmentId"], "hit_id": data["hitId"]}
            return Link(Annotator.Source.MTURK, data["workerId"], study)
        return None

    def is_mturk_preview(self) -> bool:
        return self.cleaned_data["assignmentId"] == MTURK_PREVIEW


class DirectInput:
    """A widget mixin that writes its <input> in Python, exactly as Django's input.html and
    attrs.html templates would: a HIT page has some twenty inputs, and rendering each
    through the template engine was a third of the page's time."""

    def render(self, name, value, attrs=None, renderer=None):
        widget = self.get_context(name, value, attrs)["widget"]  # type: ignore[attr-defined]
        html = [f' type="{escape(widget["type"])}" name="{escape(widget["name"])}"']
        if widget["value"] is not None:
            html.append(f' value="{escape(str(widget["value"]))}"')
        for key, given in widget["attrs"].items():
            if given is True:
                html.append(f" {escape(key)}")
            elif given is not False:
                html.append(f' {escape(key)}="{escape(str(given))}"')
        return mark_safe("<input" + "".join(html) + ">")  # every part escaped above


class ScoreInput(DirectInput, forms.TextInput):
    pass


class MarkInput(DirectInput, forms.CheckboxInput):
    pass


class KeyInput(DirectInput, forms.HiddenInput):
    pass


class MagnitudeField(forms.CharField):
    """A whole number above 0 of at most six digits, relative to the standard's 100."""

    default_error_messages = {
        "required": "Give this sentence a score (the standard is 100).",
        "invalid": "Enter a number, such as 100, 150 or 50.",
        "negative": "Scores must be positive: above 0.",
        "zero": "Scores must be above 0; give a small number such as 1 for a very bad one.",
        "fraction": "Use whole numbers only, such as 150 rather than 150.5.",
        "too_long": f"Use at most {MAX_SCORE_DIGITS} digits (up to {MAX_SCORE}).",
    }

    widget = ScoreInput

    def __init__(self, **kwargs):
        super().__init__(max_length=None, strip=True, **kwargs)
        self.widget.attrs.update(
            inputmode="numeric",
            autocomplete="off",
            size=7,
            maxlength=MAX_SCORE_CHARS,
            spellcheck="false",
        )

    # The field reads text (CharField: stripped, no length limit) and gives back a number.
    def to_python(self, value) -> int | None:  # type: ignore[override]
        value = super().to_python(value)
        if value in self.empty_values:
            return None
        if len(value) > MAX_SCORE_CHARS:
            raise forms.ValidationError(self.error_messages["too_long"], code="too_long")
        if not re.fullmatch(r"[0-9]+", value):
            raise forms.ValidationError(self.error_messages[self._mistake(value)])
        digits = value.lstrip("0")
        if len(digits) > MAX_SCORE_DIGITS:
            raise forms.ValidationError(self.error_messages["too_long"], code="too_long")
        if not digits:
            raise forms.ValidationError(self.error_messages["zero"], code="zero")
        return int(digits)

    @staticmethod
    def _mistake(value: str) -> str:
        if re.fullmatch(r"-\s*[0-9.,]+", value):
            return "negative"
        if re.fullmatch(r"[0-9]*[.,][0-9]+", value):
            return "fraction"
        return "invalid"


class SubmissionKeyForm(forms.Form):
    """The key a HIT page sends with its answers, so a repeat of one POST is recognised."""

    submission_key = forms.CharField(
        required=False, max_length=64, widget=KeyInput, validators=[platform_id]
    )

    def sent_key(self) -> str:
        """The key sent, or "" when none was or it is not a valid one."""
        return (self.cleaned_data.get("submission_key") or "") if self.is_valid() else ""


# Said where a sentence has no coverage box ticked and the criterion requires one.
COVERAGE_MISSING = (
    "Tick at least one box: it contains additional information, it misses some information,"
    " or it reflects the input perfectly."
)


class HitForm(SubmissionKeyForm):
    """One score (and for quality three coverage boxes) per sentence shown; with
    `coverage_required`, at least one of a sentence's boxes must be ticked."""

    def __init__(
        self, *args, shown: list[Shown], coverage: bool, coverage_required: bool = False, **kwargs
    ):
        kwargs.setdefault("initial", {"submission_key": secrets.token_urlsafe(16)})
        super().__init__(*args, **kwargs)
        self.shown, self.coverage = shown, coverage
        self.coverage_required = coverage and coverage_required
        for sentence in shown:
            self.fields[f"score_{sentence.key}"] = MagnitudeField(
                label=f"Score for sentence {sentence.label}"
            )
            if coverage:
                for mark, label in COVERAGE_MARKS.items():
                    field = forms.BooleanField(required=False, label=label, widget=MarkInput)
                    self.fields[f"{mark}_{sentence.key}"] = field

    def clean(self):
        super().clean()
        data = self.cleaned_data
        if self.coverage:
            for sentence in self.shown:
                key = sentence.key
                ticked = [m for m in COVERAGE_MARKS if data.get(f"{m}_{key}")]
                if not coverage_allowed(ticked):
                    self.add_error(f"perfect_{key}", COVERAGE_RULE)
                elif self.coverage_required and not ticked:
                    self.add_error(f"perfect_{key}", COVERAGE_MISSING)
        return data

    def answers(self) -> dict[int, Answer]:
        data = self.cleaned_data
        return {
            s.key: Answer(
                score=data[f"score_{s.key}"],
                adds_information=bool(data.get(f"adds_{s.key}")),
                misses_information=bool(data.get(f"misses_{s.key}")),
                reflects_perfectly=bool(data.get(f"perfect_{s.key}")),
            )
            for s in self.shown
        }

    def key(self) -> str:
        return self.cleaned_data.get("submission_key") or secrets.token_urlsafe(16)

    def error_list(self) -> list[tuple[str, str, str]]:
        """(sentence, message, field id) per error in page order, for the page's summary."""
        errors = []
        for s in self.shown:
            for name in [f"score_{s.key}", *(f"{m}_{s.key}" for m in COVERAGE_MARKS)]:
                if name in self.errors:
                    field = self[name]
                    errors += [(s.label, str(e), field.id_for_label) for e in field.errors]
        return errors

    def page_context(self) -> dict:
        """What the HIT page (annotation/hit.html) reads beside the common context."""
        return {"rows": self.rows(), "coverage_rule": COVERAGE_RULE}

    def rows(self) -> list[dict]:
        """Per sentence: the sentence, its bound fields and its coverage errors."""
        rows = []
        for s in self.shown:
            marks = [self[f"{m}_{s.key}"] for m in COVERAGE_MARKS] if self.coverage else []
            errors = [e for mark in marks for e in mark.errors]
            score = self[f"score_{s.key}"]
            # Django points aria-describedby of the ticked 'perfect' box at this id.
            error_id = f"{marks[-1].id_for_label}_error" if marks else ""
            rows.append(
                {
                    "shown": s,
                    "score": score,
                    "marks": marks,
                    "coverage_errors": errors,
                    "coverage_error_id": error_id,
                    "has_error": bool(score.errors or errors),
                }
            )
        return rows


class CheckForm(forms.Form):
    """The comprehension check's two scores, as a HIT asks for them, of the sentences shown
    as A and B (`first`, `second`)."""

    score_a = MagnitudeField(label="Score for sentence A")
    score_b = MagnitudeField(label="Score for sentence B")

    def __init__(self, data=None, first: str = "", second: str = "", **kwargs):
        super().__init__(data, **kwargs)
        self.texts = (first, second)

    def rows(self) -> list[tuple[str, str, forms.BoundField]]:
        """(label, sentence, score field) per sentence, as the check page shows them."""
        first, second = self.texts
        return [("A", first, self["score_a"]), ("B", second, self["score_b"])]
