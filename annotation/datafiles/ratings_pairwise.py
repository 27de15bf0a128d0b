"""Pairwise preferences in and out, in the CSV layout of nlgdata/judgment_files.py:
`item,system_a,system_b,annotator,criterion,winner` (`winner` a, b or tie), optional `hit`.

Import: each row is one submitted HIT of its criterion showing system_a's output first and
system_b's second, judged as the pairwise page stores a choice (annotation/judging/
pairwise.py: the winner 1, the loser 0, a tie 0.5 each). Items are found by the id they were
imported with, systems by name, and each (item, system) must have an output; a refused row
is named by its line, and nothing is written. A `hit` is the crowd platform's task, shared
by the workers who did it and the criteria asked on it (Mechanical Turk's HIT and its
assignments): each of its rows is a HIT here, done by that row's annotator, and the same
(hit, annotator, criterion, pair) twice is refused naming both lines. A criterion the
campaign lacks is created, judged by pairwise preference and closed to annotators (it was
judged elsewhere).

Export writes the counted judgments of the campaign's pairwise criteria (or one) in the same
layout, in ranking order, so that importing it into a new campaign gives the same rankings.
A best-worst page of more than two outputs has no line in this layout: such a criterion is
refused before the first line.
"""

from collections.abc import Iterator
from typing import BinaryIO

from django.db import transaction

from annotation.csvsafe import unguarded
from annotation.handout import sql
from annotation.judging import JudgmentForm, pairwise
from annotation.models import (
    Assignment,
    Campaign,
    CampaignCriterion,
    DataFile,
    Hit,
    HitOutput,
    Judgment,
)
from nlgdata.datafiles import DataFileError
from nlgdata.judgment_files import PairwiseJudgment, Winner, read_pairwise

from . import form_ratings
from .form_ratings import FormRatingsWriter, made_note, record_changes
from .importers import ImportSummary, open_data_file, record_file

CHUNK_ROWS = 2000


class PairwiseExportError(ValueError):
    pass


def import_pairwise_ratings(
    campaign: Campaign,
    file: BinaryIO,
    file_name: str,
    user=None,
    *,
    form: JudgmentForm = pairwise.FORM,
) -> ImportSummary:
    """Read the whole file, check it, then write it in one transaction."""
    opened = open_data_file(campaign, DataFile.Kind.RATINGS, file, file_name)
    rows = [unguarded_row(r) for r in read_pairwise(opened.lines, file_name)]
    if not rows:
        raise DataFileError(file_name, "no rows after the header")
    with transaction.atomic():
        criteria, made = file_criteria(campaign, rows, file_name, form.name)
        writer = PairwiseWriter(campaign, criteria, file_name)
        writer.write(rows)
        record_changes(campaign, criteria.values())
        note = made_note("pairwise-preference", made)
        summary = ImportSummary(file_name, len(rows), writer.created, note)
        record_file(campaign, DataFile.Kind.RATINGS, opened, summary, user=user)
    return summary


def unguarded_row(row: PairwiseJudgment) -> PairwiseJudgment:
    """The texts as exported before the spreadsheet guard (annotation/csvsafe.py)."""
    return PairwiseJudgment(
        row.line,
        unguarded(row.item),
        unguarded(row.system_a),
        unguarded(row.system_b),
        unguarded(row.annotator),
        unguarded(row.criterion),
        row.winner,
        None if row.hit is None else unguarded(row.hit),
    )


def file_criteria(
    campaign: Campaign, rows: list[PairwiseJudgment], file_name: str, form: str = pairwise.NAME
) -> tuple[dict[str, CampaignCriterion], list[str]]:
    """The criteria the file names: found, or made with the pairwise form (`form`)."""
    lines: dict[str, int] = {}
    for r in rows:
        lines.setdefault(r.criterion, r.line)

    return form_ratings.file_criteria(
        campaign,
        lines,
        form=form,
        judged_as="pairwise preference",
        question="Which sentence is better for {name}?",
        file_name=file_name,
    )


class PairwiseWriter(FormRatingsWriter):
    def __init__(self, campaign: Campaign, criteria: dict[str, CampaignCriterion], file_name: str):
        super().__init__(campaign, file_name, [])
        self.criteria = criteria

    def write(self, rows: list[PairwiseJudgment]) -> None:
        for row in rows:
            self.check(row)
        self.check_new_pairs(rows)
        self.ensure_annotators(r.annotator for r in rows)
        slots, assignments = self.write_hits(
            rows,
            criterion=lambda r: self.criteria[r.criterion],
            systems=lambda r: (r.system_a, r.system_b),
        )
        slot_at = iter(slots)
        judgments = []
        for row, assignment in zip(rows, assignments, strict=True):
            scores = pairwise.preference_scores(row.winner)
            for score in scores:
                judgments.append(
                    Judgment(
                        assignment=assignment,
                        slot=next(slot_at),
                        criterion=self.criteria[row.criterion],
                        score=score,
                    )
                )
        Judgment.objects.bulk_create(judgments)
        self.created["judgments"] += len(judgments)
        sql.analyze(Hit, HitOutput, Assignment, Judgment)

    def check(self, row: PairwiseJudgment) -> None:
        self.check_item(row.item, row.line)
        for column, system in (("system_a", row.system_a), ("system_b", row.system_b)):
            self.check_output(row.item, system, row.line, column)

    def check_new_pairs(self, rows: list[PairwiseJudgment]) -> None:
        """A HIT is the task a crowd platform showed: several workers did it, and answered
        several criteria (and maybe several pairs) on it. Each of them judges a pair once:
        (HIT, annotator, criterion, pair) once in the file, and not already in the campaign."""
        taken = self.taken_pairs(rows)
        first: dict[tuple, int] = {}
        for row in rows:
            if not row.hit:
                continue
            key = pair_key(row)
            if key in taken:
                raise DataFileError(
                    self.file_name,
                    f"HIT {row.hit} of annotator {row.annotator} on {row.criterion} with"
                    f" {row.system_a} and {row.system_b} is already in the campaign",
                    row.line,
                    "hit",
                )
            if key in first:
                raise DataFileError(
                    self.file_name,
                    f"HIT {row.hit}: annotator {row.annotator} judged {row.system_a} and"
                    f" {row.system_b} on {row.criterion} also on line {first[key]}",
                    row.line,
                    "hit",
                )
            first[key] = row.line

    def taken_pairs(self, rows: list[PairwiseJudgment]) -> set[tuple]:
        """The pair_keys of the rows' `hit`s that the campaign already has."""
        ids = [r.hit for r in rows if r.hit]
        shown = Assignment.objects.filter(
            hit__campaign=self.campaign, hit__external_id__in=ids
        ).values_list(
            "pk",
            "hit__external_id",
            "annotator__external_id",
            "hit__criterion__name",
            "hit__slots__output__system__name",
        )
        pages: dict[int, tuple] = {}
        for pk, hit, annotator, criterion, system in shown:
            page = pages.setdefault(pk, (hit, annotator, criterion, set()))
            page[3].add(system)
        return {(*page[:3], frozenset(page[3])) for page in pages.values()}


def pair_key(row: PairwiseJudgment) -> tuple:
    return (row.hit, row.annotator, row.criterion, frozenset((row.system_a, row.system_b)))


# Export --------------------------------------------------------------------------------------


def pairwise_criteria(
    campaign: Campaign, criterion: CampaignCriterion | None = None, form: str = pairwise.NAME
) -> list[CampaignCriterion]:
    """The criteria the export writes; PairwiseExportError, before any line, for one that
    is not pairwise or asks best-worst of more than two."""
    if criterion is not None and criterion.form != form:
        raise PairwiseExportError(
            f"criterion {criterion.name} is judged with {criterion.form}, not pairwise preference"
        )
    criteria = campaign.criteria.filter(form=form).order_by("pk")
    if criterion is not None:
        criteria = criteria.filter(pk=criterion.pk)
    chosen = list(criteria)
    for c in chosen:
        if pairwise.best_worst_k(c):
            raise PairwiseExportError(
                f"criterion {c.name} asks the best and the worst of {pairwise.best_worst_k(c)}:"
                " the pairwise layout holds pairs only (use the csv or jsonl export)"
            )
    return chosen


def pairwise_records(criteria: list[CampaignCriterion]) -> Iterator[PairwiseJudgment]:
    """The counted judgments of the criteria, a record per HIT, in ranking order."""
    for criterion in criteria:
        rows = (
            Judgment.objects.counted()
            .for_criterion(criterion)
            .in_ranking_order()
            .values_list(
                "assignment_id",
                "assignment__hit__item__external_id",
                "slot__output__system__name",
                "assignment__annotator_id",
                "score",
                "assignment__hit__external_id",
                "assignment__hit_id",
            )
        )
        page: list = []
        for row in rows.iterator(chunk_size=CHUNK_ROWS):
            if page and page[0][0] != row[0]:
                yield from pair_record(criterion, page)
                page = []
            page.append(row)
        if page:
            yield from pair_record(criterion, page)


def pair_record(criterion: CampaignCriterion, page: list) -> Iterator[PairwiseJudgment]:
    if len(page) != 2:
        return  # one output shown (the others switched off meanwhile): no pair to write
    (_, item, system_a, annotator, score_a, external, hit), (_, _, system_b, _, score_b, *_) = page
    winner: Winner = "tie"
    if score_a > score_b:
        winner = "a"
    elif score_b > score_a:
        winner = "b"
    yield PairwiseJudgment(
        0, item, system_a, system_b, str(annotator), criterion.name, winner, external or str(hit)
    )
