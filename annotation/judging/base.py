"""What a judgment form is: everything that differs between the ways an annotator judges
outputs (RankME's magnitude estimation, a 0-100 slider, a preference between two, error
spans), so that the pages, the submission, the checks, the data files and the datasheet ask
the criterion's form and name none.

A criterion stores its form's `name` (`CampaignCriterion.form`) and the settings the form
reads (`CampaignCriterion.settings`, checked by `JudgmentForm.clean_settings` from the
registry's `clean_criterion`, after the model's own checks); `form_of(criterion)` is its
JudgmentForm. Adding a form is one module beside rankme.py, named as the form, whose `FORM`
is its JudgmentForm, and its templates: the registry (annotation/judging/__init__.py) finds
it, and nothing else names it (tests/annotation/test_judging.py holds that).

The interface, field by field (rankme.py is the worked example):

- `name`, `label`: stored on the criterion (at most 20 characters, [a-z0-9_]); shown in the
  admin's select.
- `page_template`: the HIT page, a whole template extending annotation/_task_base.html. The
  view gives it the context of `annotation.views._hit_context` (criterion, campaign,
  assignment, item, form, standard, number, max_chars, can_finish, judging_form) plus
  `form.page_context()` if the page form has one.
- `instructions_template`: a partial included in annotation/instructions.html between the
  organiser's own instructions and the Start button: what to do, and a worked example.
  Context: `criterion`, `example_input` (views.EXAMPLE_INPUT, an E2E MR).
- `outputs_per_hit(criterion)`: how many outputs a HIT shows (at most: the hand-out takes
  the smaller of this and the active systems with outputs, annotation/handout/loads.py);
  `fewest_outputs`: no HIT shows fewer (default 2).
- `page_form(data, shown, criterion)`: the page's Django form, bound to a POST (`data`) or
  unbound (None, for the GET). `shown` are the page's sentences
  (annotation.handout.shown.Shown: identical outputs merged, an attention check's
  degraded copy among them). The form must give: `is_valid()`; `answers()` (anything; the
  same object goes to `slot_scores` and `save`); `key()` (the submission key,
  SubmissionKeyForm's field); `error_list()`: (sentence label, message, field id) in page
  order, for the page's summary. Errors name the field (`add_error(field, ...)`) and a bound
  form re-renders what was typed. The form should subclass
  annotation.forms.SubmissionKeyForm so a repeated POST is recognised.
- `slot_scores(shown, answers)`: (system id, score) per slot of an output (not the attention
  check), in slot order, higher better: what the kept loads and the online estimate
  learn from (annotation/handout/composition.py turns them into pairwise comparisons).
- `save(assignment, criterion, shown, answers, also)`: write the judgments, in the
  transaction that holds the criterion's lock, together with the statements `also`
  (`sql.insert(rows, also=also)`). One `Judgment` per slot and criterion judged (its
  `criterion`: the page's own, or a further one the page asks too, as DA's `also_asks`,
  whose judgments change is then the form's to record among `also`), whose `score` is the
  one rankings and the attention check read (higher better); anything more (coverage
  marks, error spans) in the Judgment's own fields or in a table of the form's.
- `attention`: how the attention check (a degraded copy of one output, shown in some HITs)
  is judged: `pairs(rows)` turns the annotator's judgments of checked HITs (of each HIT's
  own criterion: one judgment per slot, whatever further criteria it asks) into (original,
  degraded) score pairs; the one-sided Mann-Whitney verdict of nlgdata.attention then asks
  that originals score above their copies. Score forms keep `score_pairs`; a preference form
  stores its winner as a score (1 wins, 0.5 tie, 0 loses) and keeps it too.
- `comprehension`: the check before the first HIT (annotation.views.check): a worked pair
  (a sentence and a degraded copy) per criterion, the page that asks it (context:
  criterion, campaign, form, example_input, attempts_left), its Django form built from
  (data, text shown as A, text shown as B), and whether a valid form passes given whether
  the sentence was A; screening.record_attempt counts the attempt.
- `export_formats`, `import_formats`: the data-file layouts the form's judgments are written
  in and read from (names known to annotation/datafiles/exporters.FORMATS and to
  import_ratings).
- `layout`: the form's own layout (`FileLayout`), named after the form: the shape of its
  rows, which annotation/datafiles reads and writes for any form of that shape, so a new
  form of scores (a Likert item) takes the long CSV without a line in annotation/datafiles.
- `datasheet`: HEDS wording (`FormDatasheet`): what evaluators are shown (3.2.4), where
  the judgments were collected (3.3.2), how the pages were laid out (3.3.4), whether
  outputs are judged alone or together (4.2.2), the scale (4.3.3-4.3.5), the response
  elicitation (4.3.8), what a rating means, and how the checks are worded.
- `protocols`: the names of the ranking views that fit the form's judgments (annotation
  never imports ranking: the sweep reads these names and ranks with those views only).
- `clean_settings(settings, criterion)`: the criterion's `settings` checked and completed
  (defaults filled in); raises django.core.exceptions.ValidationError naming the key.
- `chooses`: True for a form whose judgments are choices (pairwise preference, best-worst
  of k), each Judgment's score 1 for the page's best (a pair's winner), 0 for its worst,
  0.5 for the others and for a tie: rankings rebuild the choices from the scores
  (ranking/service.py) rather than compare the scores within a page.
- `has_own_hits(criterion)`: False for a criterion asked on another criterion's page (DA's
  `also_asks`): its entry link takes nobody.
- `agreement_on`: what Krippendorff's alpha (interval) compares: "ranks", the order within
  each HIT (RankME, whose magnitudes are each annotator's own scale), or "scores", the
  scores as given, for a form whose scores share one absolute scale (ESA's 0-100).
- `marks_error_spans`: True for a form whose judgments carry ErrorSpan rows (ESA): the
  results page then shows the errors per 100 words by severity per system.
- `shows_standard`: True for a form whose page shows the campaign's standard with its fixed
  score (RankME): a campaign with such a criterion opens only with a written standard.
- `scale`: the scores past which a judgment is "off the scale" (`OnScale`): stored as given,
  counted by the ratings imports' summaries and shown per annotator on the monitor. The
  rule of each form lives in its module (rankme.py, da.py, esa.py); a form without bounds
  (pairwise's choices) has nothing off its scale.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.db.models import Q

# A row the attention check reads of each judgment of an annotator's submitted HITs:
# (assignment id, output id, the slot's degraded text or "", score).
CheckRow = tuple[int, int, str, float]


def score_pairs(rows: Iterable[CheckRow]) -> list[tuple[float, float]]:
    """(original's score, degraded copy's score) per check: the copy and the output it was
    made from, in the same assignment. For every form whose Judgment.score is higher for a
    better output."""
    original: dict[tuple[int, int], float] = {}
    copy: dict[tuple[int, int], float] = {}
    for assignment_id, output_id, degraded_text, score in rows:
        (copy if degraded_text else original)[(assignment_id, output_id)] = score
    return [(original[key], score) for key, score in copy.items() if key in original]


@dataclass(frozen=True)
class AttentionRule:
    # How the instructions, the completion page and the datasheet say what is checked.
    wording: str
    pairs: Callable[[Iterable[CheckRow]], list[tuple[float, float]]] = score_pairs


@dataclass(frozen=True)
class WorkedPair:
    sentence: str
    degraded: str  # the sentence's words dropped and shuffled


@dataclass(frozen=True)
class Comprehension:
    """The check after the instructions (annotation/screening.py counts the attempts)."""

    # The pair shown for a criterion (the input is views.EXAMPLE_INPUT where it is shown).
    worked_pair: Callable[[Any], WorkedPair]
    template: str  # the check page, extending annotation/_task_base.html
    # The page's Django form: (data or None, first text, second text) -> a form whose
    # `rows()` the template shows; the texts are the pair's, in the order shown (A, B).
    page_form: Callable[..., Any]
    # Whether a valid form passes, given whether the sentence was shown first (as A).
    passes: Callable[[Any, bool], bool]
    wording: str  # for the datasheet (HEDS 3.2.3, 3.3.3)


@dataclass(frozen=True)
class FormDatasheet:
    """HEDS wording of a form; `{k}` in `pages` is replaced by the outputs per HIT."""

    training: str  # 3.2.4: what evaluators are shown before and on each HIT
    pages: str  # 3.3.4: what one page shows and asks
    relative: str  # 4.2.2: outputs judged alone or together
    scale_size: Callable[[Any], Any]  # 4.3.3, from the criterion (a number, or "continuous")
    scale: Callable[[Any], str]  # 4.3.4: the list or range of values, from the criterion
    presented: Callable[[Any], str]  # 4.3.5: how the instrument is presented
    elicitation: str  # 4.3.8: the response elicitation method
    rating_means: str  # what a rating means (with 4.3.2/4.3.7's question)
    collected: str  # 3.3.2: where the judgments were collected


@dataclass(frozen=True)
class OnScale:
    """The scores a form's judgments are meant to take: a score below `lowest` or above
    `highest` is off the scale (a slip, such as extra digits typed), kept as given and
    flagged. `wording` says the rule in a summary: "above 1,000 (ten times the standard)"."""

    lowest: float | None = None
    highest: float | None = None
    wording: str = ""

    def holds(self, score: float) -> bool:
        return (self.lowest is None or score >= self.lowest) and (
            self.highest is None or score <= self.highest
        )

    def outside(self, field: str = "score") -> Q | None:
        """The filter of the scores off the scale; None where there are none."""
        q = Q(**{f"{field}__lt": self.lowest}) if self.lowest is not None else None
        if self.highest is not None:
            above = Q(**{f"{field}__gt": self.highest})
            q = above if q is None else q | above
        return q


class Shape(StrEnum):
    """The shapes of a form's own file layout, each with one reader
    (datafiles/ratings_layouts.py) and one writer (datafiles/exporters.py) that take the
    form."""

    SCORES = "scores"  # long CSV, a score per output: item,system,annotator,criterion,score
    CHOICES = "choices"  # pairwise CSV: item,system_a,system_b,annotator,criterion,winner
    SPANS = "spans"  # JSON Lines, a score and its error spans per output


@dataclass(frozen=True)
class FileLayout:
    """A form's own data-file layout, named after the form (`import_ratings --form NAME`,
    `export_judgments --format NAME`, the admin's upload and export, the API)."""

    shape: Shape
    label: str  # how the export's menu names it
    # Whether a page's rows may score further criteria (DA's `also_asks`): a file's other
    # criteria are then asked on its first criterion's pages. Else a page has one criterion.
    asks_further: bool = False


@dataclass(frozen=True)
class JudgmentForm:
    name: str  # stored in CampaignCriterion.form
    label: str
    page_template: str
    instructions_template: str
    outputs_per_hit: Callable[[Any], int]
    # (data or None, shown: list[Shown], criterion) -> the page's Django form
    page_form: Callable[[Any, Any, Any], Any]
    # (shown, answers) -> [(system id, score)]
    slot_scores: Callable[[Any, Any], list[tuple[int, float]]]
    # (assignment, criterion, shown, answers, also: list of sql statements) -> None
    save: Callable[[Any, Any, Any, Any, Any], None]
    attention: AttentionRule
    comprehension: Comprehension
    export_formats: tuple[str, ...]
    import_formats: tuple[str, ...]
    datasheet: FormDatasheet
    protocols: tuple[str, ...]
    clean_settings: Callable[[dict, Any], dict] = lambda settings, criterion: dict(settings)
    # The fewest outputs a HIT may show (RankME's order needs two; a DA page may show one).
    fewest_outputs: int = 2
    # Whether the criterion is handed out on pages of its own (False: another criterion's
    # page asks it, as DA's further criteria; its entry link then takes nobody).
    has_own_hits: Callable[[Any], bool] = lambda criterion: True
    # The other criteria a page of the criterion writes judgments of (DA's further ones):
    # a submission locks them with its own, in one order (annotation.handout.flow.submit).
    also_writes: Callable[[Any], list] = lambda criterion: []
    # What the agreement measure compares: "ranks" within a HIT, or the "scores" as given.
    agreement_on: str = "ranks"
    # Whether its judgments carry error spans (annotation.models.ErrorSpan).
    marks_error_spans: bool = False
    # Whether the judgments are choices, scored 1 best, 0 worst, 0.5 neither (see above).
    chooses: bool = False
    # Whether its pages show the campaign's standard, scored 100 (RankME): such a campaign
    # opens only once the organiser has written one (annotation.judging.why_not_open).
    shows_standard: bool = False
    # The scores on the form's scale; those outside are flagged, never changed (OnScale).
    scale: OnScale = OnScale()
    # Its own data-file layout (FileLayout), if it has one.
    layout: FileLayout | None = None
