"""What the importers of a judgment form's own layout share (ratings_da.py,
ratings_pairwise.py, ratings_esa.py): the file's criteria found or made with the form, and a
writer's lookups and checks — items by the id they were imported with, systems by name,
outputs by (item, system), annotators by their file's name, HITs not already in the campaign.
"""

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, Protocol

from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.judging import clean_criterion
from annotation.models import (
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    Hit,
    HitOutput,
    Output,
)
from nlgdata.datafiles import DataFileError
from nlgdata.dataset_files import shown


def file_criteria(
    campaign: Campaign,
    lines: dict[str, int],
    *,
    form: str,
    judged_as: str,
    question: str,
    file_name: str,
) -> tuple[dict[str, CampaignCriterion], list[str]]:
    """The criteria named in `lines` (name -> the line that names it first, in the file's
    order): found, judged with `form` (else an error naming the line), or made with it,
    closed to annotators. Returns them by name and the names of those made.

    The file does not say what was asked: `question` ({name} filled in) is one the organiser
    may rewrite. A name a criterion may not have (the model's own rule) is an error naming
    its line, before anything is made."""
    found = {c.name: c for c in campaign.criteria.filter(name__in=list(lines))}
    criteria: dict[str, CampaignCriterion] = {}
    made: list[str] = []
    for name, line in lines.items():
        criterion = found.get(name)
        if criterion is None:
            criterion = CampaignCriterion(
                campaign=campaign,
                name=name,
                form=form,
                is_open=False,
                question=question.format(name=name),
            )
            check_new_criterion(criterion, file_name, line)
            criterion.save()
            made.append(name)
        elif criterion.form != form:
            raise DataFileError(
                file_name,
                f"criterion {name} of '{campaign.slug}' is judged with {criterion.form},"
                f" not {judged_as}",
                line,
                "criterion",
            )
        criteria[name] = criterion
    return criteria, made


def check_new_criterion(criterion: CampaignCriterion, file_name: str, line: int) -> None:
    """The criterion a file names, checked as the admin checks one before it is made: a
    name like `<script>`, `Bad Name!` or one of 200 characters is refused (the DA import
    made such criteria, or failed with a database error, issue 39)."""
    try:
        clean_criterion(criterion, exclude=["campaign"], validate_unique=False)
    except ValidationError as error:
        message = f"criterion {shown(criterion.name)!r}: {' '.join(error.messages)}"
        raise DataFileError(file_name, message, line, "criterion") from None


def made_note(what: str, made: list[str]) -> str:
    """The summary's note on the criteria an import created, if any."""
    if not made:
        return ""
    return (
        f"Created the {what} criteria {', '.join(made)} (closed to annotators: they were"
        " judged elsewhere)"
    )


def record_changes(campaign: Campaign, criteria: Iterable[CampaignCriterion]) -> None:
    """The counts an import changed: the criteria's judgments, the campaign's pools."""
    ids = [c.pk for c in criteria]
    CampaignCriterion.objects.filter(pk__in=ids).record_judgments_change()
    campaign.criteria.record_pool_change(recount=True)


class HasHit(Protocol):
    @property
    def line(self) -> int: ...

    @property
    def hit(self) -> str | None: ...

    @property
    def annotator(self) -> str: ...


# A page as a crowd platform keys it: the task shown (its HIT id, shared by the workers who
# did it and the criteria asked on it), the worker, the criterion.
PageKey = tuple[str, str, str]


class FormRatingsWriter:
    """The lookups a writer keeps across batches, and the checks made with them.

    `texts`: also keep each output's text (self.texts, by output id)."""

    def __init__(self, campaign: Campaign, file_name: str, counts: list[str], texts=False):
        self.campaign, self.file_name = campaign, file_name
        self.items = dict(campaign.items.values_list("external_id", "id"))
        self.systems = dict(campaign.systems.values_list("name", "id"))
        outputs = Output.objects.filter(item__campaign=campaign)
        self.texts: dict[int, str] = {}
        if texts:
            rows = list(outputs.values_list("item_id", "system_id", "id", "text"))
            self.outputs = {(i, s): pk for i, s, pk, _ in rows}
            self.texts = {pk: text for *_, pk, text in rows}
        else:
            self.outputs = {
                (i, s): pk for i, s, pk in outputs.values_list("item_id", "system_id", "id")
            }
        annotators = campaign.annotators.filter(source=Annotator.Source.CROWDFLOWER)
        self.annotators = dict(annotators.values_list("external_id", "id"))
        self.created = dict.fromkeys(["annotators", "HITs", "judgments", *counts], 0)

    def check_item(self, item: str, line: int) -> None:
        if item not in self.items:
            raise DataFileError(
                self.file_name, f"no item {item!r} in '{self.campaign.slug}'", line, "item"
            )

    def check_output(self, item: str, system: str, line: int, column: str = "system") -> None:
        """The system is the campaign's, with an output for the (known) item."""
        if system not in self.systems:
            raise DataFileError(self.file_name, f"no system {system!r}", line, column)
        if (self.items[item], self.systems[system]) not in self.outputs:
            raise DataFileError(
                self.file_name,
                f"system {system!r} has no output for item {item!r}",
                line,
                column,
            )

    def output_id(self, item: str, system: str) -> int:
        return self.outputs[(self.items[item], self.systems[system])]

    def taken_hits(self, rows: Iterable[HasHit]) -> set[PageKey]:
        """The pages of the rows' `hit`s the campaign already has: (hit, annotator, criterion)."""
        ids = [r.hit for r in rows if r.hit]
        pages = Assignment.objects.filter(hit__campaign=self.campaign, hit__external_id__in=ids)
        return set(
            pages.values_list("hit__external_id", "annotator__external_id", "hit__criterion__name")
        )

    def check_not_taken(self, row: HasHit, criterion: str, taken: set[PageKey]) -> None:
        if (row.hit, row.annotator, criterion) in taken:
            raise DataFileError(
                self.file_name,
                f"HIT {row.hit} of annotator {row.annotator} on {criterion} is already in the"
                " campaign",
                row.line,
                "hit",
            )

    def check_new_hits(self, rows: list, criterion: Callable[[Any], str]) -> None:
        taken = self.taken_hits(rows)
        for row in rows:
            self.check_not_taken(row, criterion(row), taken)

    def write_hits(
        self,
        pages: list[Any],
        criterion: Callable[[Any], CampaignCriterion],
        systems: Callable[[Any], Iterable[str]],
        seconds: Callable[[Any], float] = lambda page: 0,
    ) -> tuple[list[HitOutput], list[Assignment]]:
        """A submitted HIT per page (its `item`, `hit`, `line`, `annotator`, checked): of
        `criterion(page)`, showing the outputs of `systems(page)` in that order, its
        assignment begun `seconds(page)` before now. Returns the slots, page after page,
        and the assignments, in the pages' order; the annotators must exist."""
        now = timezone.now()
        hits = Hit.objects.bulk_create(
            Hit(
                campaign=self.campaign,
                criterion=criterion(p),
                item_id=self.items[p.item],
                external_id=p.hit or f"{self.file_name[:150]}:{p.line}",
            )
            for p in pages
        )
        slots = HitOutput.objects.bulk_create(
            HitOutput(hit=hit, output_id=self.output_id(p.item, system), position=position)
            for hit, p in zip(hits, pages, strict=True)
            for position, system in enumerate(systems(p), start=1)
        )
        assignments = Assignment.objects.bulk_create(
            Assignment(
                hit=hit,
                annotator_id=self.annotators[p.annotator],
                status=Assignment.Status.SUBMITTED,
                started_at=now - timedelta(seconds=seconds(p)),
                submitted_at=now,
            )
            for hit, p in zip(hits, pages, strict=True)
        )
        self.created["HITs"] += len(hits)
        return slots, assignments

    def ensure_annotators(self, names: Iterable[str]) -> None:
        """The annotators named that the campaign lacks, created (from the file)."""
        new = dict.fromkeys(a for a in names if a not in self.annotators)
        created = Annotator.objects.bulk_create(
            Annotator(campaign=self.campaign, source=Annotator.Source.CROWDFLOWER, external_id=a)
            for a in new
        )
        self.annotators.update((a.external_id, a.id) for a in created)
        self.created["annotators"] += len(created)
