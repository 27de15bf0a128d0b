from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.text import Truncator

from annotation.rendering import input_context, is_wide

register = template.Library()


@register.inclusion_tag("annotation/inputs/input.html")
def show_input(kind: str, data: dict) -> dict:
    """`{% show_input item.input_kind item.input_data %}`: the input laid out for reading."""
    return input_context(kind, data)


@register.simple_tag
def wide_input(kind: str, data: dict, shown: bool) -> bool:
    """`{% wide_input item.input_kind item.input_data criterion.shows_input as wide %}`:
    whether the page shows an input too wide for the column beside the sentences, which it
    then lays out across the page, above them (templates/annotation/_task_base.html)."""
    return shown and is_wide(kind, data)


@register.simple_tag
def sentence_fieldsets(rows: list[dict], coverage_required: bool, max_chars: int, rule: str):
    """`{% sentence_fieldsets rows form.coverage_required max_chars coverage_rule %}`: the
    HIT form's sentences (HitForm.rows), one fieldset each. Written here, not as a template
    loop: a HIT page's sentences made some hundred template nodes, two thirds of the page's
    rendering (benchmarks/bench_load.py). Every value is escaped; the inputs are the form's
    own bound fields, as the template printed them."""
    return mark_safe("".join(_sentence(r, coverage_required, max_chars, rule) for r in rows))


def _sentence(row: dict, coverage_required: bool, max_chars: int, rule: str) -> str:
    shown, score = row["shown"], row["score"]
    label, key = escape(shown.label), escape(shown.key)
    has_error = " has-error" if row["has_error"] else ""
    html = [
        f'<fieldset class="card output{has_error}" id="sentence-{label}" data-label="{label}">',
        f"<legend>Sentence {label}</legend>",
        f'<p class="utterance" id="text-{key}">{escape(output_text(shown.text, max_chars))}</p>',
        f'<div class="score-row"><label for="{escape(score.id_for_label)}">Score</label> {score}'
        ' <span class="muted small">standard = 100</span></div>',
    ]
    html += [
        f'<p class="field-error" id="{escape(score.id_for_label)}_error"'
        f' data-error-for="{escape(score.html_name)}">{escape(message)}</p>'
        for message in score.errors
    ]
    if row["marks"]:
        required = ' data-required="true"' if coverage_required else ""
        ask = ' <span class="required">(tick at least one)</span>' if coverage_required else ""
        marks = "".join(
            f'<label class="check" for="{escape(mark.id_for_label)}">{mark} {escape(mark.label)}'
            "</label>"
            for mark in row["marks"]
        )
        html += [
            f'<fieldset class="coverage"{required}>',
            f"<legend>Compared with the input, the sentence…{ask}</legend>",
            f'<div class="checks">{marks}</div>',
        ]
        if row["coverage_errors"]:
            errors = " ".join(escape(error) for error in row["coverage_errors"])
            html.append(
                f'<p class="field-error" id="{escape(row["coverage_error_id"])}"'
                f' data-error-for="coverage_{key}">{errors}</p>'
            )
        html.append(f'<p class="field-error coverage-warning" hidden>{escape(rule)}</p>')
        html.append("</fieldset>")
    html.append("</fieldset>")
    return "\n".join(html)


def truncated(text: str, max_chars: int) -> str:
    """The `truncatechars` filter's result, without its walk over every character when the
    text is short enough already (combining characters only shorten its count)."""
    return text if len(text) <= max_chars else Truncator(text).chars(max_chars)


# What a page shows for an empty output: the system produced no text for this input, and
# that is what the annotator judges (published evaluations rate such outputs too).
NO_TEXT = "(this system produced no text)"


@register.filter
def output_text(text: str, max_chars: int) -> str:
    """`{{ shown.text|output_text:max_chars }}`: an output as the page shows it, truncated,
    or NO_TEXT when it is empty."""
    return truncated(text, max_chars) if text else NO_TEXT


@register.simple_tag
def no_text() -> str:
    """`{% no_text %}`: NO_TEXT, where the page keeps an empty output's own (empty) element."""
    return NO_TEXT
