"""Error-span annotation (ESA) judgments in and out, in the JSON Lines layout of
nlgdata/judgment_files.py: `{"item", "system", "annotator", "criterion", "score", "spans":
[{"start", "end", "severity"}]}`, optional `hit`, one judgment a line.

Import: the lines of one page (the same `hit`, annotator and criterion, or without a `hit`
the same annotator, item and criterion) become one submitted HIT of their criterion, its
systems in the order their lines come; each span becomes an ErrorSpan of its judgment. Items
are found by the id they were imported with, systems by name; each (item, system) must have
an output, and each span must lie within that output's text (`check_spans`, in code points).
A span marked twice in one judgment is refused; overlapping spans are kept (published files
may have them, the page does not make them). A `hit` is the crowd platform's task, shared by
the workers who did it and the criteria asked on it (Mechanical Turk's HIT and its
assignments): it shows one item, and a second judgment of the same (hit, annotator,
criterion, system) is refused naming both lines. A criterion the campaign lacks is created,
judged with ESA and closed to annotators, and the summary says so. All or nothing: one
transaction.

Export writes the judgments rankings use, in ranking order, with their spans: importing it
into a new campaign gives the same rankings and the same spans.
"""

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from django.db import transaction

from annotation.handout import sql
from annotation.judging import JudgmentForm, esa
from annotation.models import (
    Assignment,
    Campaign,
    CampaignCriterion,
    DataFile,
    ErrorSpan,
    Hit,
    HitOutput,
    Judgment,
)
from nlgdata.datafiles import DataFileError
from nlgdata.judgment_files import EsaJudgment, Span, check_spans, read_esa, write_esa

from .form_ratings import FormRatingsWriter, file_criteria, made_note, record_changes
from .importers import ImportSummary, open_data_file, record_file

CHUNK_ROWS = 2000


@dataclass
class EsaPage:
    """The lines of one page: one judgment per system, in the order they come."""

    line: int
    hit: str | None
    item: str
    annotator: str
    criterion: str
    judgments: dict[str, EsaJudgment] = field(default_factory=dict)


def import_esa_judgments(
    campaign: Campaign, file: BinaryIO, file_name: str, user=None, *, form: JudgmentForm = esa.FORM
) -> ImportSummary:
    """Read the whole file, check it, then write it in one transaction."""
    opened = open_data_file(campaign, DataFile.Kind.RATINGS, file, file_name)
    judgments = list(read_esa(opened.lines, file_name))
    if not judgments:
        raise DataFileError(file_name, "no judgments in the file")
    pages = group_pages(judgments, file_name)
    with transaction.atomic():
        criteria, made = esa_criteria(campaign, judgments, file_name, form.name)
        writer = EsaWriter(campaign, criteria, file_name)
        writer.write(pages)
        record_changes(campaign, criteria.values())
        note = made_note("error-span", made)
        summary = ImportSummary(file_name, len(judgments), writer.created, note)
        record_file(campaign, DataFile.Kind.RATINGS, opened, summary, user=user)
    return summary


def group_pages(judgments: list[EsaJudgment], file_name: str) -> list[EsaPage]:
    pages: dict[tuple, EsaPage] = {}
    items: dict[str, EsaJudgment] = {}  # hit -> its first line
    for j in judgments:
        key = ("hit" if j.hit else "page", j.hit or j.item, j.annotator, j.criterion)
        if j.hit:
            shown = items.setdefault(j.hit, j)
            if shown.item != j.item:
                message = f"HIT {j.hit} has another item on line {shown.line}"
                raise DataFileError(file_name, message, j.line, "item")
        page = pages.get(key)
        if page is None:
            page = pages[key] = EsaPage(j.line, j.hit, j.item, j.annotator, j.criterion)
        if j.system in page.judgments:
            first = page.judgments[j.system].line
            message = f"a second judgment of system {j.system} in the same HIT (line {first})"
            raise DataFileError(file_name, message, j.line, "system")
        seen: set[tuple[int, int]] = set()
        for index, span in enumerate(j.spans):
            if (span.start, span.end) in seen:
                raise DataFileError(file_name, "the same span twice", j.line, f"spans[{index}]")
            seen.add((span.start, span.end))
        page.judgments[j.system] = j
    return list(pages.values())


def esa_criteria(
    campaign: Campaign, judgments: list[EsaJudgment], file_name: str, form: str = esa.NAME
) -> tuple[dict[str, CampaignCriterion], list[str]]:
    """The file's criteria by name: found (judged with ESA), or made."""
    lines: dict[str, int] = {}
    for j in judgments:
        lines.setdefault(j.criterion, j.line)

    return file_criteria(
        campaign,
        lines,
        form=form,
        judged_as="error-span annotation",
        question="How good is the sentence's {name}? Mark its errors, then score it.",
        file_name=file_name,
    )


class EsaWriter(FormRatingsWriter):
    def __init__(self, campaign: Campaign, criteria: dict[str, CampaignCriterion], file_name: str):
        super().__init__(campaign, file_name, ["error spans"], texts=True)
        self.criteria = criteria

    def write(self, pages: list[EsaPage]) -> None:
        for page in pages:
            self.check(page)
        self.check_new_hits(pages, lambda p: p.criterion)
        self.ensure_annotators(p.annotator for p in pages)
        slots, assignments = self.write_hits(
            pages, criterion=lambda p: self.criteria[p.criterion], systems=lambda p: p.judgments
        )
        slot_at = iter(slots)
        judged = [
            (
                Judgment(
                    assignment=assignment,
                    slot=next(slot_at),
                    criterion=self.criteria[p.criterion],
                    score=j.score,
                ),
                j,
            )
            for p, assignment in zip(pages, assignments, strict=True)
            for j in p.judgments.values()
        ]
        judgments = Judgment.objects.bulk_create([judgment for judgment, _ in judged])
        spans = ErrorSpan.objects.bulk_create(
            ErrorSpan(judgment=judgment, start=s.start, end=s.end, severity=s.severity)
            for judgment, j in zip(judgments, (j for _, j in judged), strict=True)
            for s in j.spans
        )
        self.created["judgments"] += len(judgments)
        self.created["error spans"] += len(spans)
        sql.analyze(Hit, HitOutput, Assignment, Judgment, ErrorSpan)

    def check(self, page: EsaPage) -> None:
        self.check_item(page.item, page.line)
        for system, judgment in page.judgments.items():
            self.check_output(page.item, system, judgment.line)
            text = self.texts[self.output_id(page.item, system)]
            check_spans(judgment, text, self.file_name)


# Export --------------------------------------------------------------------------------------


def esa_judgments(
    campaign: Campaign, criterion: CampaignCriterion | None = None, form: str = esa.NAME
) -> Iterator[EsaJudgment]:
    """The counted judgments of the campaign's ESA criteria (or `criterion`'s) with their
    spans, in ranking order; annotators as their row's number."""
    criteria = campaign.criteria.filter(form=form)
    if criterion is not None:
        criteria = criteria.filter(pk=criterion.pk)
    for judged in criteria.order_by("name"):
        judgments = Judgment.objects.counted().for_criterion(judged).in_ranking_order()
        # The spans in the judgments' order, read beside them: memory follows a chunk.
        marked = (
            ErrorSpan.objects.filter(judgment__in=judgments.order_by().values("pk"))
            .order_by(
                "judgment__assignment__hit_id",
                "judgment__assignment_id",
                "judgment__slot__position",
                "start",
                "end",
            )
            .values_list("judgment_id", "start", "end", "severity")
            .iterator(chunk_size=CHUNK_ROWS)
        )
        pending = next(marked, None)
        rows = judgments.values_list(
            "pk",
            "assignment__hit__item__external_id",
            "slot__output__system__name",
            "assignment__annotator_id",
            "score",
            "assignment__hit__external_id",
            "assignment__hit_id",
        )
        for pk, item, system, annotator, score, hit_name, hit in rows.iterator(
            chunk_size=CHUNK_ROWS
        ):
            spans = []
            while pending is not None and pending[0] == pk:
                spans.append(Span(pending[1], pending[2], pending[3]))  # type: ignore[arg-type]
                pending = next(marked, None)
            yield EsaJudgment(
                line=0,
                item=item,
                system=system,
                annotator=str(annotator),
                criterion=judged.name,
                score=float(score),
                spans=tuple(spans),
                hit=hit_name or str(hit),
            )


def esa_chunks(
    campaign: Campaign, criterion: CampaignCriterion | None = None, form: str = esa.NAME
) -> Iterator[str]:
    """The export's text, a chunk of lines at a time."""
    batch: list[EsaJudgment] = []
    for judgment in esa_judgments(campaign, criterion, form):
        batch.append(judgment)
        if len(batch) == CHUNK_ROWS:
            yield lines_of(batch)
            batch = []
    if batch:
        yield lines_of(batch)


def lines_of(judgments: list[EsaJudgment]) -> str:
    out = io.StringIO()
    write_esa(judgments, out)
    return out.getvalue()
