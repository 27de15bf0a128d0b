"""Direct assessment (DA; WMT, WebNLG+ 2020): each output of a page scored on a 0-100
slider, for the criterion and for the further criteria asked on the same page.

Settings (CampaignCriterion.settings), all optional:
- `also_asks`: names of other DA criteria of the campaign asked on this criterion's page,
  after it (WebNLG's five on one page). They get no HITs of their own: their scores are
  Judgments of this criterion's assignments whose `criterion` is theirs.
- `outputs_per_page`: outputs per page, 1 to 10 (default: the campaign's outputs per HIT).
- `low_label`, `high_label`: the words at the slider's ends.

A slider starts unset: the page refuses a sentence whose slider was not moved (or whose
box was not typed in), so no score is one the annotator did not give.
"""

import secrets
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from annotation import form_names
from annotation.forms import SubmissionKeyForm
from annotation.handout import sql
from annotation.handout.shown import Shown
from annotation.models import CampaignCriterion, Judgment

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

NAME = form_names.DA
DEFAULT_LABELS = {"low_label": "0: very poor", "high_label": "100: excellent"}


@dataclass(frozen=True)
class PageCriterion:
    """One criterion asked on the page: the page's own (index 0) or a further one."""

    index: int
    criterion: CampaignCriterion

    @property
    def label(self) -> str:
        return self.criterion.label

    @property
    def question(self) -> str:
        return self.criterion.question_text


def page_criteria(criterion: CampaignCriterion) -> list[PageCriterion]:
    """The criterion, then the further ones its settings ask on its page, in that order."""
    names = criterion.settings.get("also_asks", [])
    found = {}
    if names:
        found = {c.name: c for c in campaign_criteria(criterion).filter(name__in=names)}
    further = [found[name] for name in names if name in found]
    return [PageCriterion(i, c) for i, c in enumerate([criterion, *further])]


class DaPageForm(SubmissionKeyForm):
    """One slider score per sentence shown and per criterion of the page."""

    def __init__(self, *args, shown: list[Shown], criteria: list[PageCriterion], **kwargs):
        kwargs.setdefault("initial", {"submission_key": secrets.token_urlsafe(16)})
        super().__init__(*args, **kwargs)
        self.shown, self.criteria = shown, criteria
        for sentence in shown:
            for asked in criteria:
                self.fields[field_name(sentence.key, asked.index)] = SliderScoreField(
                    label=f"{asked.label}: score of sentence {sentence.label}"
                )

    def answers(self) -> dict[int, list[int]]:
        """Per sentence (its key), the scores in the order of the page's criteria."""
        data = self.cleaned_data
        return {
            s.key: [data[field_name(s.key, asked.index)] for asked in self.criteria]
            for s in self.shown
        }

    def key(self) -> str:
        return self.cleaned_data.get("submission_key") or secrets.token_urlsafe(16)

    def error_list(self) -> list[tuple[str, str, str]]:
        errors = []
        for s in self.shown:
            for asked in self.criteria:
                name = field_name(s.key, asked.index)
                if name in self.errors:
                    field = self[name]
                    message = f"{asked.label}: "
                    errors += [
                        (s.label, message + str(e), field.id_for_label) for e in field.errors
                    ]
        return errors

    def rows(self) -> list[dict]:
        return [
            {
                "shown": s,
                "sliders": [
                    (asked, self[field_name(s.key, asked.index)]) for asked in self.criteria
                ],
                "has_error": any(
                    self[field_name(s.key, asked.index)].errors for asked in self.criteria
                ),
            }
            for s in self.shown
        ]

    def page_context(self) -> dict:
        return {
            "rows": self.rows(),
            "page_criteria": self.criteria,
            **labels(self.criteria[0].criterion),
        }


def labels(criterion: CampaignCriterion) -> dict[str, str]:
    """The words at the slider's ends."""
    return slider_labels(criterion, DEFAULT_LABELS)


def field_name(key: int, index: int) -> str:
    return f"score_{key}_{index}"


def page_form(data, shown: list[Shown], criterion: CampaignCriterion) -> DaPageForm:
    return DaPageForm(data, shown=shown, criteria=page_criteria(criterion))


def save(assignment, criterion: CampaignCriterion, shown: list[Shown], answers, also) -> None:
    """A Judgment per slot and criterion of the page, in one statement with `also` and the
    change of each further criterion's judgments (the page's own is among `also`)."""
    asked = page_criteria(criterion)
    judgments = [
        Judgment(
            assignment=assignment,
            slot=slot,
            criterion=page.criterion,
            score=answers[s.key][page.index],
        )
        for s in shown
        for slot in s.slots
        for page in asked
    ]
    changes = [sql.judgments_change(page.criterion) for page in asked[1:]]
    sql.insert(judgments, also=[*also, *changes])


def clean_settings(settings: dict, criterion: CampaignCriterion) -> dict:
    """The settings checked and completed; a ValidationError names the key."""
    cleaned = clean_slider_settings(settings, DEFAULT_LABELS, known={"also_asks"})
    cleaned["also_asks"] = further_criteria(cleaned.get("also_asks", []), criterion)
    return cleaned


def further_criteria(names, criterion: CampaignCriterion) -> list[str]:
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValidationError({"settings": "also_asks: a list of criterion names"})
    if len(set(names)) != len(names) or criterion.name in names:
        raise ValidationError({"settings": "also_asks: each other criterion once"})
    found = criteria_forms(criterion)
    wrong = [n for n in names if found.get(n) != NAME]
    if wrong:
        not_da = ", ".join(wrong)
        message = f"also_asks: not direct-assessment criteria of this campaign: {not_da}"
        raise ValidationError({"settings": message})
    return names


def criteria_forms(criterion: CampaignCriterion) -> dict[str, str]:
    """name -> judgment form of the campaign's criteria: as the save being checked leaves
    them where it checks several together (the admin's criteria, added and kept, in
    `criteria_after_save`), else as the database has them."""
    if criterion.criteria_after_save is not None:
        return criterion.criteria_after_save
    return dict(campaign_criteria(criterion).values_list("name", "form"))


def asked_on_another_page(criterion: CampaignCriterion) -> bool:
    """Whether another DA criterion of the campaign asks this one on its page (it then has
    no HITs of its own)."""
    if criterion.form != NAME:
        return False
    others = campaign_criteria(criterion).filter(form=NAME)
    return any(criterion.name in c.settings.get("also_asks", []) for c in others)


def campaign_criteria(criterion: CampaignCriterion):
    """The criteria of the criterion's campaign."""
    return CampaignCriterion.objects.filter(campaign_id=criterion.campaign_id)


FORM = JudgmentForm(
    name=NAME,
    label="Direct assessment: a 0-100 slider per output and criterion",
    page_template="annotation/judging/da_hit.html",
    instructions_template="annotation/judging/da_instructions.html",
    outputs_per_hit=outputs_per_hit,
    page_form=page_form,
    slot_scores=slot_scores,
    save=save,
    attention=AttentionRule(
        wording="an evaluator's first HIT and one in every {every} after it show a degraded"
        " copy of one of its outputs, never ranked; an evaluator whose slider scores do not"
        " put the outputs above their copies"
    ),
    comprehension=comprehension("annotation/judging/da_check.html"),
    export_formats=("da",),
    import_formats=("da",),
    datasheet=FormDatasheet(
        training="instructions with a worked example before the first HIT; each page states"
        " the question of every criterion it asks",
        pages="one HIT per page: the outputs of up to {k} systems for one input, shuffled,"
        " each with a 0-100 slider (and a number box) per criterion of the page, ends"
        " labelled, the value shown; a slider the evaluator did not move is refused;"
        " identical outputs are shown once and their scores given to each system",
        relative="absolute: each output scored on its own scale, beside the others of its page",
        scale_size=lambda criterion: HIGHEST - LOWEST + 1,
        scale=lambda criterion: (
            f"{LOWEST}-{HIGHEST}, ends labelled"
            f" '{criterion.settings.get('low_label', DEFAULT_LABELS['low_label'])}' and"
            f" '{criterion.settings.get('high_label', DEFAULT_LABELS['high_label'])}'"
        ),
        presented=lambda criterion: (
            "slider: a 0-100 slider per output with its value shown,"
            " and a number box for the keyboard"
        ),
        elicitation="direct quality estimation: direct assessment (DA) on a 0-100 slider",
        rating_means="how well the output meets the criterion's question, from 0 (not at"
        " all) to 100 (fully); rankings use each annotator's scores standardised, or the order"
        " within a page",
        collected="online, on the platform's direct-assessment HIT pages",
    ),
    # TrueSkill and Bradley-Terry rank the order of a page's scores; WMT's z-scores the
    # scores themselves. Best-worst and the plain bootstrap are views of RankME's HITs.
    protocols=("calibrated", "e2e", "bt", "wmt", "webnlg", "fused"),
    clean_settings=clean_settings,
    fewest_outputs=1,
    has_own_hits=lambda criterion: not asked_on_another_page(criterion),
    also_writes=lambda criterion: [page.criterion for page in page_criteria(criterion)[1:]],
    scale=SCALE,
    layout=FileLayout(
        Shape.SCORES, "Direct assessment long CSV (import_ratings --form)", asks_further=True
    ),
)
