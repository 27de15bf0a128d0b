"""Data files imported by a worker: the admin stores the uploaded files under UPLOAD_DIR
with an UploadJob row, and a worker imports them (annotation.tasks), so no request waits
on an import.

All the files of one upload are imported in one transaction: an error in any of them (the
importers name the file, line and column) leaves the campaign as it was. While it runs the
worker writes how far it has read to a small file beside the uploads (progress.json), not
to the database: the import's transaction holds the database's write lock on SQLite, and a
progress row written inside it would be seen by nobody before the end.
"""

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from jobs.claims import Heartbeat, work_as_holder
from nlgdata.datafiles import DataFileError

from .datafiles.importers import ImportSummary, import_items, import_outputs
from .datafiles.ratings_import import import_ratings
from .datafiles.ratings_layouts import IMPORTERS
from .models import Campaign, DataFile, System, UploadJob, validate_system_name

# progress.json is written at the start of each file, then after every hundredth of its
# lines, at most this many apart (a 631-line file used to show "0 of 631 lines read" until
# it was done: its first report was due at line 2,000), and at its last line.
REPORT_EVERY_LINES = 2000
REPORTS_PER_FILE = 100
PROGRESS = "progress.json"


def job_folder(job: UploadJob) -> Path:
    return Path(settings.UPLOAD_DIR) / str(job.pk)


def queue_upload(
    campaign: Campaign,
    kind: str,
    files: list[UploadedFile],
    criterion: str = "",
    system_name: str = "",
    user=None,
    form: str = "",
) -> UploadJob:
    """Store the files and a queued job, sent to a worker once the transaction commits."""
    with transaction.atomic():
        job = UploadJob.objects.create(
            campaign=campaign,
            kind=kind,
            criterion=criterion,
            form=form,
            system_name=system_name,
            created_by=user,
        )
        folder = job_folder(job)
        folder.mkdir(parents=True, exist_ok=True)
        job.files = [store(folder, n, upload) for n, upload in enumerate(files, start=1)]
        job.save(update_fields=["files"])
        job.send_to_worker()
    return job


def store(folder: Path, number: int, upload: UploadedFile) -> dict:
    # Stored under a name of our making: the uploaded name is the browser's to choose.
    stored = f"{number:03d}.data"
    with (folder / stored).open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return {"name": Path(upload.name or stored).name, "stored": stored}


def execute_upload(job: UploadJob) -> bool:
    """Import the job's files; False if another worker has it or took it."""
    token = job.claim()
    if token is None:
        return False
    try:
        return work_as_holder(
            job,
            token,
            lambda heartbeat: import_all(job, token, heartbeat),
            expected=(DataFileError,),
        )
    finally:
        job.refresh_from_db(fields=["status"])
        if job.status in (UploadJob.Status.DONE, UploadJob.Status.FAILED):
            shutil.rmtree(job_folder(job), ignore_errors=True)


def import_all(job: UploadJob, token: str, heartbeat: Heartbeat) -> None:
    folder = job_folder(job)
    progress = ProgressFile(folder / PROGRESS, files=len(job.files))
    with transaction.atomic():
        summaries = []
        for number, entry in enumerate(job.files, start=1):
            heartbeat.check()
            progress.start(number, entry["name"])
            with (folder / entry["stored"]).open("rb") as raw:
                # The importers use read, readline and seek, which CountingFile has.
                file = cast(BinaryIO, CountingFile(raw, progress.lines_read))
                summaries.append(import_one(job, file, entry["name"]))
        text = "\n".join(str(summary) for summary in summaries)
        job.finish_as_holder(token, UploadJob.Status.DONE, summary=text, error="")


def import_one(job: UploadJob, file: BinaryIO, name: str) -> ImportSummary:
    campaign, user = job.campaign, job.created_by
    if job.kind == DataFile.Kind.ITEMS:
        return import_items(campaign, file, name, user=user)
    if job.kind == DataFile.Kind.RATINGS and job.form:
        return IMPORTERS[job.form](campaign, file, name, user=user)
    if job.kind == DataFile.Kind.RATINGS:
        return import_ratings(campaign, file, name, job.criterion or None, user=user)
    system, _ = System.objects.get_or_create(
        campaign=campaign, name=job.system_name or system_name_of(name)
    )
    return import_outputs(campaign, system, file, name, user=user)


def system_name_of(file_name: str) -> str:
    """The system an outputs file is of: its name without the extension (tgen.tsv: tgen),
    as the README's loop over E2E's outputs names them."""
    stem = Path(file_name).stem
    try:
        validate_system_name(stem)
    except ValidationError as error:
        raise DataFileError(
            file_name,
            f"the file name does not make a system name ({error.messages[0]}); "
            "rename the file, or upload it alone and pick its system",
        ) from None
    return stem


@dataclass
class Progress:
    file_number: int = 0
    files: int = 0
    file_name: str = ""
    lines: int = 0
    total_lines: int = 0  # of the file being read, once its first pass has counted them


class ProgressFile:
    """How far the worker has read, in a file the job's page reads (replaced whole, so a
    reader never sees half of it)."""

    def __init__(self, path: Path, files: int) -> None:
        self.path = path
        self.state = Progress(files=files)

    def start(self, number: int, name: str) -> None:
        self.state.file_number, self.state.file_name = number, name
        self.state.lines = self.state.total_lines = 0
        self.write()

    def lines_read(self, lines: int, total: int) -> None:
        self.state.lines, self.state.total_lines = lines, total
        self.write()

    def write(self) -> None:
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps(self.state.__dict__))
        os.replace(partial, self.path)


def read_progress(job: UploadJob) -> Progress | None:
    """The running job's progress, None before the worker has started reading."""
    try:
        return Progress(**json.loads((job_folder(job) / PROGRESS).read_text()))
    except (OSError, ValueError, TypeError):
        return None


class CountingFile:
    """A binary file that counts the lines read from it. The importers read it twice: a
    first pass in chunks that checks and hashes it, ending with a seek to the start, which
    gives the file's lines; then line by line, whose count is reported as it goes."""

    def __init__(self, file: BinaryIO, report: Callable[[int, int], None]) -> None:
        self.file, self.report = file, report
        self.lines, self.total, self.counting_total = 0, 0, True

    def read(self, size: int = -1) -> bytes:
        data = self.file.read(size)
        if self.counting_total:
            self.total += data.count(b"\n")
        return data

    def readline(self, size: int = -1) -> bytes:
        line = self.file.readline(size)
        if line:
            self.lines += 1
            if self.lines % self.step == 0 or self.lines == self.total:
                self.report(self.lines, self.total)
        return line

    @property
    def step(self) -> int:
        """Lines between reports: a hundredth of the file's, at most REPORT_EVERY_LINES."""
        return max(1, min(REPORT_EVERY_LINES, self.total // REPORTS_PER_FILE))

    def seek(self, offset: int, whence: int = 0) -> int:
        if self.counting_total:
            self.counting_total = False
            self.report(0, self.total)
        self.lines = 0
        return self.file.seek(offset, whence)

    def tell(self) -> int:
        return self.file.tell()
