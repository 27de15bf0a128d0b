"""Error-span annotation (ESA; Kocmi et al., WMT 2024): for each output of a page the
annotator marks the spans of the text that are errors, each minor or major, then scores the
output on a 0-100 slider.

A span is characters [start, end) of the text shown, counted in Unicode code points (as
Python's str, not the browser's UTF-16 units: the page's script converts), stored as an
ErrorSpan row of the slot's Judgment; the Judgment's score is the 0-100 score, which the
rankings read. Spans of one output may not overlap (a character is one error, of one
severity) and at most MAX_SPANS are kept per output. The page's script keeps the spans in a
hidden field per output as JSON ([{"start", "end", "severity"}]); the server checks them
against the text and, on an error, shows the page again with what was marked.

Identical outputs of different systems are shown once (annotation.handout.submission):
the spans marked on that text are stored for each of its slots, as offsets into each
slot's own text (which may differ from the one shown in white space only: `spans_in`).

Settings (CampaignCriterion.settings), all optional:
- `outputs_per_page`: outputs per page, 1 to 10 (default: the campaign's outputs per HIT).
- `low_label`, `high_label`: the words at the slider's ends.
"""

import json
import secrets
from dataclasses import dataclass
from typing import TypeGuard

from django import forms
from django.core.exceptions import ValidationError

from annotation import form_names
from annotation.forms import SubmissionKeyForm
from annotation.handout import sql
from annotation.handout.shown import Shown
from annotation.models import CampaignCriterion, ErrorSpan, Judgment
from nlgdata.datafiles import check_json_shape

from .base import AttentionRule, FileLayout, FormDatasheet, JudgmentForm, Shape
from .sliders import (
    HIGHEST,
    LOWEST,
    SCALE,
    SliderScoreField,
    comprehension,
    outputs_per_hit,
    slot_scores,
)
from .sliders import clean_settings as clean_slider_settings
from .sliders import labels as slider_labels

NAME = form_names.ESA
MAX_SPANS = 50  # per output: more is a sentence to score low, not to mark word by word
SPANS_CHARS = MAX_SPANS * 64  # the hidden field's JSON: 50 spans with room to spare
SEVERITIES = tuple(ErrorSpan.Severity.values)  # ("minor", "major")
DEFAULT_LABELS = {"low_label": "0: no meaning preserved", "high_label": "100: perfect"}


@dataclass(frozen=True)
class Span:
    """Characters [start, end) of an output, in code points."""

    start: int
    end: int
    severity: str


class SpansField(forms.CharField):
    """The spans the page's script wrote, as JSON; checked against the text by the form."""

    widget = forms.HiddenInput

    def __init__(self, **kwargs):
        super().__init__(required=False, strip=True, **kwargs)

    def to_python(self, value) -> str:
        value = super().to_python(value)
        if len(value) > SPANS_CHARS:
            raise ValidationError(f"Too many error spans: mark at most {MAX_SPANS}.")
        return value


def parse_spans(value: str, text: str) -> list[Span]:
    """The spans of `value` (JSON), checked against `text`, sorted by start: offsets whole
    numbers with 0 <= start < end <= len(text) (code points), severity minor or major, no
    span twice, none overlapping another, at most MAX_SPANS. ValidationError otherwise."""
    if not value:
        return []
    try:
        # A list of flat objects is 2 deep: deeper is refused before parsing, since 990
        # levels reached Python's recursion limit (a 500, issue 39).
        check_json_shape(value, "spans", max_depth=2)
        given = json.loads(value)
    except ValueError:  # DataFileError is one too
        raise ValidationError("The marked errors could not be read: mark them again.") from None
    if not isinstance(given, list):
        raise ValidationError("The marked errors could not be read: mark them again.")
    if len(given) > MAX_SPANS:
        raise ValidationError(f"Too many error spans ({len(given)}): mark at most {MAX_SPANS}.")
    spans = []
    for n, span in enumerate(given, start=1):
        if not isinstance(span, dict):
            raise ValidationError(f"Error span {n} could not be read: mark it again.")
        start, end, severity = span.get("start"), span.get("end"), span.get("severity")
        if not (is_whole(start) and is_whole(end)):
            raise ValidationError(f"Error span {n}: its start and end must be whole numbers.")
        if not 0 <= start < end <= len(text):
            raise ValidationError(
                f"Error span {n} (characters {start} to {end}) is not within the sentence"
                f" ({len(text)} characters)."
            )
        if severity not in SEVERITIES:
            raise ValidationError(f"Error span {n}: its severity must be minor or major.")
        spans.append(Span(start, end, severity))
    spans.sort(key=lambda s: (s.start, s.end))
    for before, after in zip(spans, spans[1:], strict=False):
        if (before.start, before.end) == (after.start, after.end):
            raise ValidationError(f"The error '{excerpt(text, after)}' is marked twice.")
        if after.start < before.end:
            raise ValidationError(
                f"The errors '{excerpt(text, before)}' and '{excerpt(text, after)}' overlap:"
                " remove one of them."
            )
    return spans


def is_whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def excerpt(text: str, span: Span, limit: int = 40) -> str:
    marked = text[span.start : span.end]
    return marked if len(marked) <= limit else marked[: limit - 1] + "…"


def spans_json(spans: list[Span]) -> str:
    return json.dumps([{"start": s.start, "end": s.end, "severity": s.severity} for s in spans])


class EsaPageForm(SubmissionKeyForm):
    """Per sentence shown, its error spans (a hidden JSON field) and its 0-100 score."""

    def __init__(self, *args, shown: list[Shown], criterion: CampaignCriterion, **kwargs):
        kwargs.setdefault("initial", {"submission_key": secrets.token_urlsafe(16)})
        super().__init__(*args, **kwargs)
        self.shown, self.criterion = shown, criterion
        for s in shown:
            self.fields[spans_name(s.key)] = SpansField(label=f"Errors in sentence {s.label}")
            self.fields[score_name(s.key)] = SliderScoreField(label=f"Score of sentence {s.label}")
        self.spans: dict[int, list[Span]] = {}

    def clean(self):
        data = super().clean() or self.cleaned_data
        for s in self.shown:
            name = spans_name(s.key)
            if name not in data:
                continue  # the field refused it already
            try:
                self.spans[s.key] = parse_spans(data[name], s.text)
            except ValidationError as error:
                self.add_error(name, error)
        return data

    def answers(self) -> dict[int, tuple[int, list[Span]]]:
        """Per sentence (its key): its score and its spans."""
        return {
            s.key: (self.cleaned_data[score_name(s.key)], self.spans[s.key]) for s in self.shown
        }

    def key(self) -> str:
        return self.cleaned_data.get("submission_key") or secrets.token_urlsafe(16)

    def error_list(self) -> list[tuple[str, str, str]]:
        errors = []
        for s in self.shown:
            for name, where in ((spans_name(s.key), text_id(s.key)), (score_name(s.key), None)):
                if name in self.errors:
                    anchor = where or self[name].id_for_label
                    errors += [(s.label, str(e), anchor) for e in self[name].errors]
        return errors

    def kept_spans(self, s: Shown) -> list[dict]:
        """The spans to show again: those sent, where they could be read (a bound form),
        for the page's list before its script runs."""
        value = self[spans_name(s.key)].value() or ""
        try:
            spans = parse_spans(value, s.text)
        except ValidationError:
            return []
        return [{"span": span, "text": excerpt(s.text, span)} for span in spans]

    def rows(self) -> list[dict]:
        return [
            {
                "shown": s,
                "text_id": text_id(s.key),
                "spans_field": self[spans_name(s.key)],
                "score_field": self[score_name(s.key)],
                "kept": self.kept_spans(s),
                "has_error": bool(self[spans_name(s.key)].errors or self[score_name(s.key)].errors),
            }
            for s in self.shown
        ]

    def page_context(self) -> dict:
        return {"rows": self.rows(), "max_spans": MAX_SPANS, **labels(self.criterion)}


def labels(criterion: CampaignCriterion) -> dict[str, str]:
    """The words at the slider's ends."""
    return slider_labels(criterion, DEFAULT_LABELS)


def score_name(key: int) -> str:
    return f"score_{key}"


def spans_name(key: int) -> str:
    return f"spans_{key}"


def text_id(key: int) -> str:
    return f"esa-text-{key}"


def page_form(data, shown: list[Shown], criterion: CampaignCriterion) -> EsaPageForm:
    return EsaPageForm(data, shown=shown, criterion=criterion)


def save(assignment, criterion: CampaignCriterion, shown: list[Shown], answers, also) -> None:
    """A Judgment per slot with the sentence's score, an ErrorSpan per span marked."""
    judged = [
        (
            Judgment(
                assignment=assignment, slot=slot, criterion=criterion, score=answers[s.key][0]
            ),
            s,
        )
        for s in shown
        for slot in s.slots
    ]
    sql.insert([judgment for judgment, _ in judged], also=also)
    spans = [
        ErrorSpan(judgment=judgment, start=span.start, end=span.end, severity=span.severity)
        for judgment, s in judged
        for span in spans_in(answers[s.key][1], s.text, judgment.slot.text)
    ]
    if spans:
        sql.insert(spans)


def spans_in(spans: list[Span], shown: str, text: str) -> list[Span]:
    """The spans marked in the text shown, as offsets into `text`: the same text, or one
    that differs from it only in white space (identical outputs are shown once). Offsets
    follow the characters that are not white space, which both texts hold in the same
    order; a span of white space only has no counterpart and is left out."""
    if text == shown:
        return spans
    where = [i for i, c in enumerate(text) if not c.isspace()]
    before = [0]  # characters that are not white space before each offset of `shown`
    for c in shown:
        before.append(before[-1] + (not c.isspace()))
    mapped = []
    for span in spans:
        first, last = before[span.start], before[span.end]  # [first, last) of `where`
        if first < last:
            mapped.append(Span(where[first], where[last - 1] + 1, span.severity))
    return mapped


def clean_settings(settings: dict, criterion: CampaignCriterion) -> dict:
    """The settings checked and completed; a ValidationError names the key."""
    return clean_slider_settings(settings, DEFAULT_LABELS, known=set())


FORM = JudgmentForm(
    name=NAME,
    label="Error-span annotation: errors marked minor or major, then a 0-100 score",
    page_template="annotation/judging/esa_hit.html",
    instructions_template="annotation/judging/esa_instructions.html",
    outputs_per_hit=outputs_per_hit,
    page_form=page_form,
    slot_scores=slot_scores,
    save=save,
    attention=AttentionRule(
        wording="an evaluator's first HIT and one in every {every} after it show a degraded"
        " copy of one of its outputs, never ranked; an evaluator whose 0-100 scores do not"
        " put the outputs above their copies"
    ),
    comprehension=comprehension("annotation/judging/esa_check.html"),
    export_formats=(NAME,),
    import_formats=(NAME,),
    datasheet=FormDatasheet(
        training="instructions with a worked example (an output with a minor and a major"
        " error marked, and its score) before the first HIT; each page states the question",
        pages="one HIT per page: the outputs of up to {k} systems for one input, shuffled;"
        " in each the evaluator marks error spans (selected with the mouse, or with the"
        " arrow keys), each minor or major, shown highlighted and removable, then scores the"
        " output on a 0-100 slider (and a number box), ends labelled; a slider the evaluator"
        f" did not move is refused; at most {MAX_SPANS} spans per output, none overlapping;"
        " identical outputs are shown once and their spans and score given to each system",
        relative="absolute: each output annotated and scored on its own, beside the others"
        " of its page",
        scale_size=lambda criterion: HIGHEST - LOWEST + 1,
        scale=lambda criterion: (
            f"{LOWEST}-{HIGHEST}, ends labelled"
            f" '{labels(criterion)['low_label']}' and '{labels(criterion)['high_label']}';"
            " error spans of two severities, minor and major"
        ),
        presented=lambda criterion: (
            "slider: a 0-100 slider per output with its value shown and a number box for the"
            " keyboard, after marking error spans in the output's text (minor or major)"
        ),
        elicitation="error-span annotation (ESA; Kocmi et al., 2024): error spans marked"
        " with a severity, then direct quality estimation on a 0-100 slider",
        rating_means="the score: how well the output meets the criterion's question, from 0"
        " to 100, given after marking its errors (the spans are not subtracted from it); a"
        " span: characters of the output the evaluator judged an error, minor (a flaw that"
        " does not hinder understanding) or major (one that changes or obscures the"
        " meaning); rankings use each annotator's scores standardised, or the order within"
        " a page, and the spans give errors per 100 words per system",
        collected="online, on the platform's error-span annotation HIT pages",
    ),
    # TrueSkill and Bradley-Terry rank the order of a page's scores; WMT's z-scores the
    # scores themselves. The errors per 100 words come with the results page.
    protocols=("calibrated", "e2e", "bt", "wmt", "fused"),
    clean_settings=clean_settings,
    fewest_outputs=1,
    # The 0-100 scores share one scale (and a page of one output has no order).
    agreement_on="scores",
    marks_error_spans=True,
    scale=SCALE,
    layout=FileLayout(Shape.SPANS, "Error-span annotation JSON Lines (import_ratings --form)"),
)
