"""A published dataset (nlgdata.published) written into a campaign, ready to open.

One transaction: the campaign (made with the dataset's criteria and questions when it does
not exist), its items, its systems and their outputs, each written in batches through the
importers' own writers. Loading is idempotent: every part is recorded as a DataFile with a
digest of the files it came from, and a part already recorded is left alone, so a second
run changes nothing and a run after a new system's file appeared adds only that system.
"""

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction

from nlgdata.datafiles import DataFileError, batches
from nlgdata.dataset_files import file_inside, files_inside
from nlgdata.inputs import InputError, check_input, input_key
from nlgdata.published import (
    E2E_STANDARD,
    READERS,
    Dataset,
    PublishedItem,
    PublishedSystem,
)

from .datafiles.importers import (
    BATCH_CHARS,
    BATCH_ROWS,
    BY_ID,
    EMPTY,
    ItemRecord,
    ItemWriter,
    OutputRow,
    import_items,
    import_outputs,
    output_row_chars,
    write_outputs,
)
from .handout import sql
from .models import (
    DEFAULT_QUESTIONS,
    NATURALNESS,
    Campaign,
    CampaignCriterion,
    DataFile,
    Item,
    Output,
    System,
)

Progress = Callable[[str], None]

# What `load_published` and the admin's "Load a published dataset" offer.
DATASETS = {
    "logicnlg": "LogicNLG (test set: tables and statements)",
    "rotowire": "RotoWire (games/*.jsonl: box scores and summaries; outputs.jsonl, if any)",
    "webnlg2020": "WebNLG+ 2020 (English: triple sets)",
    "e2e": "E2E NLG Challenge (test set and 21 systems' outputs)",
}


@dataclass
class LoadSummary:
    campaign: Campaign
    created_campaign: bool = False
    items: int = 0
    outputs: dict[str, int] = field(default_factory=dict)  # system -> outputs written
    empty: dict[str, int] = field(default_factory=dict)  # system -> of them empty
    skipped: list[str] = field(default_factory=list)  # parts loaded by an earlier run
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        done = [f"{self.items:,} items"] if self.items else []
        done += [
            f"{count:,} outputs of {name}" + empty_count(self.empty.get(name, 0))
            for name, count in self.outputs.items()
        ]
        lines = [f"'{self.campaign.slug}': " + ("loaded " + ", ".join(done) if done else "")]
        if self.skipped:
            lines.append("already loaded, left as they were: " + ", ".join(self.skipped))
        if not done:
            lines[0] += "nothing new to load"
        return "\n".join(lines + self.notes)


def empty_count(empty: int) -> str:
    return f" ({empty:,} empty: the system produced no text)" if empty else ""


def load_published(
    dataset: str, folder: Path, slug: str | None = None, progress: Progress | None = None
) -> LoadSummary:
    """The dataset named `dataset` (a key of DATASETS) read from `folder` and loaded: what
    the command and the admin's background job both call."""
    if not folder.is_dir():
        raise DataFileError(str(folder), "no such folder")
    if dataset == "e2e":
        return load_e2e(folder, slug, progress)
    if progress:
        progress(f"reading {folder.name}")
    return load_dataset(READERS[dataset](folder), slug, progress)


def load_dataset(
    dataset: Dataset, slug: str | None = None, progress: Progress | None = None
) -> LoadSummary:
    progress = progress or (lambda message: None)
    with transaction.atomic():
        campaign, created = campaign_for(dataset, slug or dataset.name)
        summary = LoadSummary(campaign, created, notes=list(dataset.notes))
        summary.notes.append(standard_note(campaign, created))
        load_items(campaign, dataset, summary, progress)
        for system in dataset.systems:
            load_system(campaign, system, summary, progress)
        if summary.items or summary.outputs:
            campaign.criteria.record_pool_change(recount=True)
            sql.analyze(Item, Output)
    return summary


def campaign_for(dataset: Dataset, slug: str) -> tuple[Campaign, bool]:
    """The campaign of that slug; made with the dataset's settings if there is none (an
    existing campaign's settings are the organiser's and stay as they are)."""
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is not None:
        return campaign, False
    standard_text, standard_kind, standard_input = dataset.standard or ("", "mr", {})
    check_input(standard_kind, standard_input)  # the dataset's own: a fault here is ours
    campaign = Campaign.objects.create(
        slug=slug,
        name=dataset.title,
        description=dataset.description,
        outputs_per_hit=dataset.outputs_per_hit,
        standard_text=standard_text,
        standard_input_kind=standard_kind,
        standard_input=standard_input,
    )
    for name in DEFAULT_QUESTIONS:
        CampaignCriterion.objects.create(
            campaign=campaign,
            name=name,
            shows_input=name != NATURALNESS,
            question=dataset.questions.get(name, ""),
            coverage_required=dataset.coverage_required,
        )
    return campaign, True


def standard_note(campaign: Campaign, created: bool) -> str:
    """What the summary says of the standard RankME's pages show: the one written for the
    dataset, which the organiser should read before opening, or that there is none (the
    campaign then opens only once one is written)."""
    if not campaign.standard_text.strip():
        return (
            f"'{campaign.slug}' has no standard: write one on its admin page before opening"
            " it (RankME's pages score every output against the standard's 100)."
        )
    made = "written for the dataset" if created else "the campaign's own, kept"
    return (
        f"Standard ({made}; change it on the campaign's admin page before opening if it does"
        f" not suit): {campaign.standard_text}"
    )


def already_loaded(campaign: Campaign, kind: str, sha256: str) -> bool:
    return DataFile.objects.filter(campaign=campaign, kind=kind, sha256=sha256).exists()


def load_items(campaign: Campaign, dataset: Dataset, summary: LoadSummary, progress) -> None:
    if already_loaded(campaign, DataFile.Kind.ITEMS, dataset.items_sha256):
        summary.skipped.append("items")
        return
    if campaign.items.exists():
        raise DataFileError(
            dataset.items_source,
            f"campaign '{campaign.slug}' already has items that did not come from these "
            "files; load into another campaign (--campaign)",
        )
    progress(f"items: {len(dataset.items):,} from {dataset.items_source}")
    writer = ItemWriter(campaign, dataset.items_source)
    summary.items = writer.write(item_records(dataset.items))
    DataFile.objects.create(
        campaign=campaign,
        kind=DataFile.Kind.ITEMS,
        name=f"{dataset.name}: {dataset.items_source}"[:255],
        sha256=dataset.items_sha256,
        rows=summary.items,
        summary=f"{summary.items:,} items",
    )


def item_records(items: Iterable[PublishedItem]) -> Iterator[ItemRecord]:
    for number, item in enumerate(items, start=1):
        try:
            check_input(item.kind, item.data)
        except InputError as error:
            raise DataFileError(item.source, str(error), column="input") from None
        key = input_key(item.kind, item.data)
        if len(key) > settings.MAX_INPUT_CHARS:
            raise DataFileError(item.source, "the input is too large", column="input")
        yield ItemRecord(number, item.external_id, item.kind, item.data, key, item.references)


def load_system(
    campaign: Campaign, published: PublishedSystem, summary: LoadSummary, progress
) -> None:
    if already_loaded(campaign, DataFile.Kind.OUTPUTS, published.sha256):
        summary.skipped.append(published.name)
        return
    system, _ = System.objects.get_or_create(
        campaign=campaign,
        name=published.name,
        defaults={"label": published.label, "architecture": published.architecture},
    )
    rows = output_rows(published)
    written = empty = 0
    for batch in batches(rows, BATCH_ROWS, BATCH_CHARS, output_row_chars):
        write_outputs(campaign, system, batch, BY_ID, published.source)
        written += len(batch)
        empty += sum(not row.text for row in batch)
        progress(f"{published.name}: {written:,}/{len(published.outputs):,} outputs")
    summary.outputs[published.name] = written
    if empty:
        summary.empty[published.name] = empty
    if published.missing:
        shown = ", ".join(published.missing[:5])
        summary.notes.append(f"{published.name} has no output for {shown}")
    DataFile.objects.create(
        campaign=campaign,
        kind=DataFile.Kind.OUTPUTS,
        name=published.source[:255],
        sha256=published.sha256,
        system=system,
        rows=written,
        summary=f"{written:,} outputs of {published.name}{empty_count(empty)}",
    )


def output_rows(published: PublishedSystem) -> Iterator[OutputRow]:
    limit = settings.MAX_OUTPUT_CHARS
    for number, (external_id, text) in enumerate(published.outputs.items(), start=1):
        text = text.strip()  # kept when empty: the system produced no text for the item
        if len(text) > limit:
            problem = f"{len(text):,} characters; the limit is {limit:,}"
            raise DataFileError(published.source, f"the output for item {external_id!r}: {problem}")
        yield OutputRow(number, external_id, text)


# E2E: the existing importers of its CSV and TSV files -------------------------------------

E2E_ARCHITECTURES = {  # the data's README, after the challenge's findings paper
    **dict.fromkeys(
        "adapt chen gong harv nle sheff2 slug slug-alt tgen tnt1 tnt2 tr1 zhang".split(),
        "seq2seq",
    ),
    **dict.fromkeys(["dangnt", "forge1"], "rule-based"),
    **dict.fromkeys(["forge3", "tr2", "tuda"], "templates"),
    **dict.fromkeys(["sheff1", "zhaw1", "zhaw2"], "data-driven"),
}
E2E_QUESTIONS = {"quality": "", "naturalness": ""}  # RankME's own questions


def load_e2e(
    folder: Path, slug: str | None = None, progress: Progress | None = None
) -> LoadSummary:
    """The E2E test set (testset_w_refs.csv) and every outputs/<system>.tsv, through
    import_items and import_outputs; files imported before are left alone."""
    progress = progress or (lambda message: None)
    # Only files inside the folder, links that lead out refused (nlgdata/dataset_files.py).
    items_path = file_inside(folder, "testset_w_refs.csv")
    output_paths = files_inside(folder, "outputs", "*.tsv")
    dataset = Dataset(
        name="e2e",
        title="E2E NLG Challenge test set: restaurant descriptions",
        description="The E2E NLG Challenge test set (Dušek, Novikova and Rieser, 2020): 630 "
        "MRs with their references, and the 21 primary systems' outputs. CC BY-SA 4.0.",
        items=[],
        items_sha256="",
        items_source=items_path.name,
        systems=[],
        questions=E2E_QUESTIONS,
        standard=E2E_STANDARD,
    )
    with transaction.atomic():
        campaign, created = campaign_for(dataset, slug or dataset.name)
        summary = LoadSummary(campaign, created, notes=[standard_note(campaign, created)])
        if import_once(campaign, DataFile.Kind.ITEMS, items_path, summary, progress):
            with items_path.open("rb") as file:
                result = import_items(campaign, file, items_path.name)
            summary.items = result.created["items"]
        for path in output_paths:
            if not import_once(campaign, DataFile.Kind.OUTPUTS, path, summary, progress):
                continue
            system, _ = System.objects.get_or_create(
                campaign=campaign,
                name=path.stem,
                defaults={"architecture": E2E_ARCHITECTURES.get(path.stem, "")},
            )
            with path.open("rb") as file:
                imported = import_outputs(campaign, system, file, path.name)
            summary.outputs[path.stem] = imported.rows
            if imported.created.get(EMPTY):
                summary.empty[path.stem] = imported.created[EMPTY]
    return summary


def import_once(campaign, kind: str, path: Path, summary: LoadSummary, progress) -> bool:
    """Whether the file still has to be imported (the importers refuse a repeat with an
    error; a repeat load skips it instead)."""
    with path.open("rb") as file:  # in chunks: the importer bounds the size, not this
        sha256 = hashlib.file_digest(file, "sha256").hexdigest()
    if already_loaded(campaign, kind, sha256):
        summary.skipped.append(path.name)
        return False
    progress(f"{kind}: {path.name}")
    return True
