"""Error-span annotation (ESA) judgments in and out, in the JSON Lines layout of
nlgdata/judgment_files.py: `{"item", "system", "annotator", "criterion", "score", "spans":
[{"start", "end", "severity"}]}`, optional `hit`, one judgment a line.

Import: the lines of one page (the same `hit`, or without it the same annotator, item and
criterion) become one submitted HIT of their criterion, its systems in the order their lines
come; each span becomes an ErrorSpan of its judgment. Items are found by the id they were
imported with, systems by name; each (item, system) must have an output, and each span must
lie within that output's text (`check_spans`, in code points). A span marked twice in one
judgment is refused; overlapping spans are kept (published files may have them, the page
does not make them). A criterion the campaign lacks is created, judged with ESA and closed
to annotators, and the summary says so. All or nothing: one transaction.

Export writes the judgments rankings use, in ranking order, with their spans: importing it
into a new campaign gives the same rankings and the same spans.
"""

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.handout import sql
from annotation.judging import esa
from annotation.models import (
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    DataFile,
    ErrorSpan,
    Hit,
    HitOutput,
    Judgment,
    Output,
)
from nlgdata.datafiles import DataFileError
from nlgdata.judgment_files import EsaJudgment, Span, check_spans, read_esa, write_esa

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
    campaign: Campaign, file: BinaryIO, file_name: str, user=None
) -> ImportSummary:
    """Read the whole file, check it, then write it in one transaction."""
    opened = open_data_file(campaign, DataFile.Kind.RATINGS, file, file_name)
    judgments = list(read_esa(opened.lines, file_name))
    if not judgments:
        raise DataFileError(file_name, "no judgments in the file")
    pages = group_pages(judgments, file_name)
    with transaction.atomic():
        criteria, made = esa_criteria(campaign, judgments, file_name)
        writer = EsaWriter(campaign, criteria, file_name)
        writer.write(pages)
        CampaignCriterion.objects.filter(
            pk__in=[c.pk for c in criteria.values()]
        ).record_judgments_change()
        campaign.criteria.record_pool_change(recount=True)
        note = ""
        if made:
            note = (
                f"Created the error-span criteria {', '.join(made)} (closed to annotators:"
                " they were judged elsewhere)"
            )
        summary = ImportSummary(file_name, len(judgments), writer.created, note)
        record_file(campaign, DataFile.Kind.RATINGS, opened, summary, user=user)
    return summary


def group_pages(judgments: list[EsaJudgment], file_name: str) -> list[EsaPage]:
    pages: dict[tuple, EsaPage] = {}
    for j in judgments:
        key = ("hit", j.hit) if j.hit else ("page", j.annotator, j.item, j.criterion)
        page = pages.get(key)
        if page is None:
            page = pages[key] = EsaPage(j.line, j.hit, j.item, j.annotator, j.criterion)
        else:
            for what in ("item", "annotator", "criterion"):
                if getattr(j, what) != getattr(page, what):
                    message = f"HIT {j.hit} has another {what} on line {page.line}"
                    raise DataFileError(file_name, message, j.line, what)
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
    campaign: Campaign, judgments: list[EsaJudgment], file_name: str
) -> tuple[dict[str, CampaignCriterion], list[str]]:
    """The file's criteria by name: found (judged with ESA), or made."""
    names = list(dict.fromkeys(j.criterion for j in judgments))
    found = {c.name: c for c in campaign.criteria.filter(name__in=names)}
    made = []
    for name in names:
        criterion = found.get(name)
        if criterion is None:
            # The file does not say what was asked: a question the organiser may rewrite.
            criterion = CampaignCriterion(
                campaign=campaign,
                name=name,
                form=esa.NAME,
                is_open=False,
                question=f"How good is the sentence's {name}? Mark its errors, then score it.",
            )
            try:
                criterion.full_clean(exclude=["campaign"])
            except ValidationError as error:  # a name that is not a criterion's name
                line = next(j.line for j in judgments if j.criterion == name)
                message = f"criterion {name!r}: {'; '.join(error.messages)}"
                raise DataFileError(file_name, message, line, "criterion") from None
            criterion.save()
            found[name] = criterion
            made.append(name)
        elif criterion.form != esa.NAME:
            line = next(j.line for j in judgments if j.criterion == name)
            raise DataFileError(
                file_name,
                f"criterion {name} of '{campaign.slug}' is judged with {criterion.form},"
                " not error-span annotation",
                line,
                "criterion",
            )
    return found, made


class EsaWriter:
    def __init__(self, campaign: Campaign, criteria: dict[str, CampaignCriterion], file_name: str):
        self.campaign, self.criteria, self.file_name = campaign, criteria, file_name
        self.items = dict(campaign.items.values_list("external_id", "id"))
        self.systems = dict(campaign.systems.values_list("name", "id"))
        outputs = Output.objects.filter(item__campaign=campaign)
        self.outputs = {
            (i, s): (pk, text)
            for i, s, pk, text in outputs.values_list("item_id", "system_id", "id", "text")
        }
        annotators = campaign.annotators.filter(source=Annotator.Source.CROWDFLOWER)
        self.annotators = dict(annotators.values_list("external_id", "id"))
        self.created = dict.fromkeys(["annotators", "HITs", "judgments", "error spans"], 0)

    def write(self, pages: list[EsaPage]) -> None:
        for page in pages:
            self.check(page)
        self.check_new_hits(pages)
        self.ensure_annotators(pages)
        now = timezone.now()
        hits = Hit.objects.bulk_create(
            Hit(
                campaign=self.campaign,
                criterion=self.criteria[p.criterion],
                item_id=self.items[p.item],
                external_id=p.hit or f"{self.file_name[:150]}:{p.line}",
            )
            for p in pages
        )
        slots = HitOutput.objects.bulk_create(
            HitOutput(hit=hit, output_id=self.output(p, system)[0], position=position)
            for hit, p in zip(hits, pages, strict=True)
            for position, system in enumerate(p.judgments, start=1)
        )
        assignments = Assignment.objects.bulk_create(
            Assignment(
                hit=hit,
                annotator_id=self.annotators[p.annotator],
                status=Assignment.Status.SUBMITTED,
                started_at=now,
                submitted_at=now,
            )
            for hit, p in zip(hits, pages, strict=True)
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
        self.created["HITs"] += len(hits)
        self.created["judgments"] += len(judgments)
        self.created["error spans"] += len(spans)
        sql.analyze(Hit, HitOutput, Assignment, Judgment, ErrorSpan)

    def check(self, page: EsaPage) -> None:
        if page.item not in self.items:
            message = f"no item {page.item!r} in '{self.campaign.slug}'"
            raise DataFileError(self.file_name, message, page.line, "item")
        for system, judgment in page.judgments.items():
            if system not in self.systems:
                raise DataFileError(
                    self.file_name, f"no system {system!r}", judgment.line, "system"
                )
            if (self.items[page.item], self.systems[system]) not in self.outputs:
                raise DataFileError(
                    self.file_name,
                    f"system {system!r} has no output for item {page.item!r}",
                    judgment.line,
                    "system",
                )
            check_spans(judgment, self.output(page, system)[1], self.file_name)

    def check_new_hits(self, pages: list[EsaPage]) -> None:
        ids = [p.hit for p in pages if p.hit]
        taken = set(
            self.campaign.hits.filter(external_id__in=ids).values_list("external_id", flat=True)
        )
        for page in pages:
            if page.hit in taken:
                raise DataFileError(
                    self.file_name, f"HIT {page.hit} is already in the campaign", page.line, "hit"
                )

    def output(self, page: EsaPage, system: str) -> tuple[int, str]:
        return self.outputs[(self.items[page.item], self.systems[system])]

    def ensure_annotators(self, pages: list[EsaPage]) -> None:
        new = dict.fromkeys(p.annotator for p in pages if p.annotator not in self.annotators)
        created = Annotator.objects.bulk_create(
            Annotator(campaign=self.campaign, source=Annotator.Source.CROWDFLOWER, external_id=a)
            for a in new
        )
        self.annotators.update((a.external_id, a.id) for a in created)
        self.created["annotators"] += len(created)


# Export --------------------------------------------------------------------------------------


def esa_judgments(
    campaign: Campaign, criterion: CampaignCriterion | None = None
) -> Iterator[EsaJudgment]:
    """The counted judgments of the campaign's ESA criteria (or `criterion`'s) with their
    spans, in ranking order; annotators as their row's number."""
    criteria = campaign.criteria.filter(form=esa.NAME)
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


def esa_chunks(campaign: Campaign, criterion: CampaignCriterion | None = None) -> Iterator[str]:
    """The export's text, a chunk of lines at a time."""
    batch: list[EsaJudgment] = []
    for judgment in esa_judgments(campaign, criterion):
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
