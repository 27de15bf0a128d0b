"""Ratings of a form of scores in and out (direct assessment's, and any form whose layout's
shape is SCORES, annotation/judging/base.py), in the long CSV layout of
nlgdata/ratings_da.py: `item,system,annotator,criterion,score[,hit,seconds]`, one row per
score. What follows says DA; another form's file is read and written alike, except that
its pages have one criterion each (no further criteria: FileLayout.asks_further).

Import: the rows of one page (the same `hit` and annotator, or without a `hit` the same
annotator and item) become one submitted HIT of the file's first criterion, its systems in
the order they first appear; scores of the other criteria named on the page are its further
criteria (a Judgment of theirs on the HIT's slot, and the first criterion's `also_asks`).
Items are found by the id they were imported with, systems by name, and each (item, system)
must have an output. A criterion the campaign lacks is created, judged by direct assessment
and closed to annotators. A `hit` is the crowd platform's task, shared by the workers who
did it (Mechanical Turk's HIT and its assignments): each worker's page of it is a HIT here,
of the same item, and a second score of the same (hit, annotator, criterion, system) is
refused naming both lines.

Export writes the judgments rankings use in the same layout, in ranking order, so that
importing it into a new campaign gives the same rankings.
"""

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from django.db import transaction

from annotation.csvsafe import unguarded
from annotation.handout import sql
from annotation.judging import JudgmentForm, da
from annotation.models import (
    Assignment,
    Campaign,
    CampaignCriterion,
    DataFile,
    Hit,
    HitOutput,
    Judgment,
)
from nlgdata.datafiles import DataFileError, batches
from nlgdata.ratings_da import COLUMNS, OPTIONAL_COLUMNS, DaRating, read_da_ratings

from .form_ratings import FormRatingsWriter, file_criteria, made_note, record_changes
from .importers import BATCH_CHARS, BATCH_ROWS, ImportSummary, open_data_file, record_file

HEADER = [*COLUMNS, *OPTIONAL_COLUMNS]
CHUNK_ROWS = 2000


@dataclass
class DaPage:
    """The rows of one page: per system (in order of appearance), per criterion, a score."""

    line: int
    hit: str
    item: str
    annotator: str
    seconds: float | None
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # the first line of each system
    scored: dict[tuple[str, str], int] = field(default_factory=dict)  # (system, criterion)
    named: dict[str, int] = field(default_factory=dict)  # the first line of each criterion

    def add(self, rating: DaRating, file_name: str) -> None:
        scores = self.scores.setdefault(rating.system, {})
        self.lines.setdefault(rating.system, rating.line)
        self.named.setdefault(rating.criterion, rating.line)
        first = self.scored.setdefault((rating.system, rating.criterion), rating.line)
        if first != rating.line:
            raise DataFileError(
                file_name,
                f"a second score of system {rating.system} on {rating.criterion} in the same HIT"
                f" by the same annotator (line {first})",
                rating.line,
                "score",
            )
        scores[rating.criterion] = rating.score

    def chars(self) -> int:
        """About what the page holds in memory, for the batches' bound."""
        names = sum(len(system) + 16 * len(scores) for system, scores in self.scores.items())
        return len(self.hit) + len(self.item) + len(self.annotator) + names


def import_da_ratings(
    campaign: Campaign, file: BinaryIO, file_name: str, user=None, *, form: JudgmentForm = da.FORM
) -> ImportSummary:
    """Read the file page by page and write it in batches (BATCH_ROWS pages or BATCH_CHARS
    characters, whichever comes first), all in one transaction: memory follows a batch,
    not the file, and an error anywhere leaves the campaign as it was."""
    opened = open_data_file(campaign, DataFile.Kind.RATINGS, file, file_name)
    ratings = (unguarded_rating(r) for r in read_da_ratings(opened.lines, file_name))
    with transaction.atomic():
        writer = DaWriter(campaign, file_name, form)
        for batch in batches(file_pages(ratings, file_name), BATCH_ROWS, BATCH_CHARS, DaPage.chars):
            writer.write(batch)
        if not writer.rows:
            raise DataFileError(file_name, "no rows after the header")
        record_changes(campaign, writer.finish())
        sql.analyze(Hit, HitOutput, Assignment, Judgment)
        note = made_note(writer.judged_as.replace(" ", "-"), writer.made)
        summary = ImportSummary(file_name, writer.rows, writer.created, note)
        record_file(campaign, DataFile.Kind.RATINGS, opened, summary, user=user)
    return summary


def unguarded_rating(rating: DaRating) -> DaRating:
    """The texts as exported before the spreadsheet guard (annotation/csvsafe.py)."""
    return DaRating(
        rating.line,
        unguarded(rating.item),
        unguarded(rating.system),
        unguarded(rating.annotator),
        unguarded(rating.criterion),
        rating.score,
        unguarded(rating.hit),
        rating.seconds,
    )


def file_pages(ratings: Iterable[DaRating], file_name: str) -> Iterator[DaPage]:
    """The file's pages, one at a time: the rows of one `hit` and annotator (or without a
    `hit`, of one annotator and item) come together, as the export writes them. A row of a
    page that ended before other rows is an error naming both lines, and so is a `hit` of
    another item; only the pages' keys and the hits' items are kept."""
    page: DaPage | None = None
    key: tuple[str, ...] = ()
    ended: dict[tuple[str, ...], int] = {}
    items: dict[str, tuple[str, int]] = {}  # hit -> its item and the line that names it
    for r in ratings:
        here: tuple[str, ...] = (
            ("hit", r.hit, r.annotator) if r.hit else ("page", r.annotator, r.item)
        )
        if r.hit:
            item, line = items.setdefault(r.hit, (r.item, r.line))
            if item != r.item:
                raise DataFileError(
                    file_name, f"HIT {r.hit} has another item on line {line}", r.line, "item"
                )
        if page is not None and here != key:
            ended[key] = page.line
            yield page
            page = None
        if page is None:
            if here in ended:
                raise DataFileError(
                    file_name,
                    f"a row of the page that began on line {ended[here]}, after other pages'"
                    " rows: keep each page's rows together",
                    r.line,
                    "hit" if r.hit else "item",
                )
            page, key = DaPage(r.line, r.hit, r.item, r.annotator, r.seconds), here
        page.add(r, file_name)
    if page is not None:
        yield page


class DaWriter(FormRatingsWriter):
    """Writes pages batch by batch, keeping what later batches need: the criteria met so
    far (the first one named is every page's own, the others its further ones), and the
    ids of items, systems, outputs and annotators."""

    def __init__(self, campaign: Campaign, file_name: str, form: JudgmentForm = da.FORM):
        super().__init__(campaign, file_name, ["further scores"])
        self.form = form.name
        self.asks_further = form.layout is not None and form.layout.asks_further
        self.judged_as = form.label.split(":")[0].lower()  # "direct assessment"
        self.main: CampaignCriterion | None = None
        self.criteria: dict[str, CampaignCriterion] = {}
        self.made: list[str] = []
        self.rows = 0

    def write(self, pages: list[DaPage]) -> None:
        self.ensure_criteria(pages)
        for page in pages:
            self.check(page)
        main = self.main
        assert main is not None  # ensure_criteria found it
        self.check_new_hits(pages, lambda p: main.name)
        self.ensure_annotators(p.annotator for p in pages)
        slots, assignments = self.write_hits(
            pages,
            criterion=lambda p: main,
            systems=lambda p: p.scores,
            seconds=lambda p: p.seconds or 0,
        )
        self.write_scores(pages, slots, assignments)
        self.rows += sum(len(scores) for p in pages for scores in p.scores.values())

    def write_scores(self, pages, slots, assignments) -> None:
        """A Judgment per slot and criterion scored: the page's own and its further ones."""
        slot_at = iter(slots)
        judgments, further = [], 0
        for page, assignment in zip(pages, assignments, strict=True):
            for scores in page.scores.values():
                slot = next(slot_at)
                judgments += [
                    Judgment(assignment=assignment, slot=slot, criterion=self.criteria[n], score=s)
                    for n, s in scores.items()
                ]
                further += len(scores) - 1
        Judgment.objects.bulk_create(judgments)
        self.created["judgments"] += len(judgments) - further
        self.created["further scores"] += further

    def ensure_criteria(self, pages: list[DaPage]) -> None:
        """The criteria the batch names that earlier ones did not: found, or made with
        DA's form; the first the file names is the pages' own."""
        lines: dict[str, int] = {}  # in the order the file names them
        for page in pages:
            for name, line in page.named.items():
                if name not in self.criteria:
                    lines.setdefault(name, line)
        if not lines:
            return
        criteria, made = file_criteria(
            self.campaign,
            lines,
            form=self.form,
            judged_as=self.judged_as,
            question="How do you rate the sentence's {name}?",
            file_name=self.file_name,
        )
        self.criteria.update(criteria)
        self.made += made
        self.main = self.main or criteria[next(iter(lines))]

    def finish(self) -> list[CampaignCriterion]:
        """The file's criteria, its first one's page now asking the others too."""
        assert self.main is not None
        asked = self.main.settings.get("also_asks", [])
        further = [name for name in self.criteria if name != self.main.name and name not in asked]
        if further:
            self.main.settings = {**self.main.settings, "also_asks": [*asked, *further]}
            self.main.save(update_fields=["settings"])
        return list(self.criteria.values())

    def check(self, page: DaPage) -> None:
        assert self.main is not None  # ensure_criteria found it
        self.check_item(page.item, page.line)
        if not self.asks_further and len(page.named) > 1:
            line = list(page.named.values())[1]
            message = f"a second criterion on a page: the {self.judged_as} form asks one"
            raise DataFileError(self.file_name, message, line, "criterion")
        for system, scores in page.scores.items():
            line = page.lines[system]
            self.check_output(page.item, system, line)
            if self.main.name not in scores:
                raise DataFileError(
                    self.file_name,
                    f"no {self.main.name} score of system {system!r} on this page (the"
                    " file's first criterion is the one each page is judged on)",
                    line,
                    "criterion",
                )


# Export --------------------------------------------------------------------------------------


def da_rows(
    campaign: Campaign, criterion: CampaignCriterion | None = None, form: str = da.NAME
) -> Iterator[list]:
    """The header, then the counted judgments of the campaign's DA criteria (or of
    `criterion` alone) in ranking order, page by page: per slot, the page's own criterion,
    then the further ones in the order the page asks them."""
    yield HEADER
    judgments = Judgment.objects.counted().filter(
        assignment__hit__campaign=campaign, criterion__form=form
    )
    if criterion is not None:
        judgments = judgments.for_criterion(criterion)
    rows = judgments.order_by(
        "assignment__hit__criterion__name", "assignment__hit_id", "assignment_id", "slot__position"
    ).values_list(
        "assignment_id",
        "slot_id",
        "assignment__hit__criterion_id",
        "criterion_id",
        "assignment__hit__item__external_id",
        "slot__output__system__name",
        "assignment__annotator_id",
        "score",
        "assignment__hit__external_id",
        "assignment__hit_id",
        "assignment__started_at",
        "assignment__submitted_at",
    )
    order = asked_order(campaign)
    names = dict(campaign.criteria.values_list("pk", "name"))
    for _, slot_rows in itertools.groupby(
        rows.iterator(chunk_size=CHUNK_ROWS), key=lambda row: row[:2]
    ):
        for row in sorted(slot_rows, key=lambda row: order.get(row[2:4], len(order))):
            *_, criterion_id, item, system, annotator, score, hit_id, hit, start, end = row
            seconds = round((end - start).total_seconds(), 3)
            yield [item, system, annotator, names[criterion_id], score, hit_id or str(hit), seconds]


def asked_order(campaign: Campaign) -> dict[tuple[int, int], int]:
    """(page criterion, criterion asked) -> where the page asks it: its own first, then
    its `also_asks` in order."""
    criteria = list(campaign.criteria.filter(form=da.NAME))
    ids = {c.name: c.pk for c in criteria}
    order: dict[tuple[int, int], int] = {}
    for page in criteria:
        asked = [page.pk, *(ids[n] for n in page.settings.get("also_asks", []) if n in ids)]
        order.update(((page.pk, pk), n) for n, pk in enumerate(asked))
    return order
