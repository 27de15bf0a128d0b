"""A published dataset loaded from the admin by a worker, as `manage.py load_published`
loads it (annotation/published.py), so no request waits on a load.

The organiser names the dataset and either uploads its folder as a .zip archive or picks a
folder on the server under PUBLISHED_DATA_DIR (unset: no folder may be named). The archive
is stored under UPLOAD_DIR/published/<job id>/ and unpacked there by the worker, with the
bounds of nlgdata/archives.py; the folder is removed when the job is over. The load and the
job's result are one transaction: an error leaves the database as it was. While it runs,
the worker writes its latest step to progress.json beside the archive (not to the database,
for the reason annotation/uploads.py gives).
"""

import json
import os
import shutil
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from jobs.claims import Heartbeat, work_as_holder
from nlgdata.archives import unpack_zip
from nlgdata.datafiles import DataFileError

from .models import PublishedLoad
from .published import load_published

ARCHIVE = "dataset.zip"
UNPACKED = "unpacked"
PROGRESS = "progress.json"


def job_folder(job: PublishedLoad) -> Path:
    return Path(settings.UPLOAD_DIR) / "published" / str(job.pk)


def server_folders() -> list[str]:
    """The folders an organiser may name: those directly under PUBLISHED_DATA_DIR; none
    where it is unset or missing."""
    base = published_data_dir()
    if base is None or not base.is_dir():
        return []
    return sorted(entry.name for entry in base.iterdir() if server_folder(entry.name))


def published_data_dir() -> Path | None:
    return Path(settings.PUBLISHED_DATA_DIR).resolve() if settings.PUBLISHED_DATA_DIR else None


def server_folder(name: str) -> Path | None:
    """The folder `name` under PUBLISHED_DATA_DIR, None unless it is one (a link that
    leads out of it included)."""
    base = published_data_dir()
    if base is None or not name or name.startswith(".") or "/" in name or "\\" in name:
        return None
    folder = (base / name).resolve()
    if folder.parent != base or not folder.is_dir():
        return None
    return folder


def queue_published_load(
    dataset: str,
    campaign_slug: str,
    *,
    archive: UploadedFile | None = None,
    folder: str = "",
    user=None,
) -> PublishedLoad:
    """Store the archive (if any) and a queued job, sent to a worker once committed."""
    with transaction.atomic():
        job = PublishedLoad.objects.create(
            dataset=dataset,
            campaign_slug=campaign_slug,
            archive=Path(archive.name or ARCHIVE).name[:255] if archive else "",
            folder=folder,
            created_by=user,
        )
        if archive is not None:
            stored = job_folder(job)
            stored.mkdir(parents=True, exist_ok=True)
            with (stored / ARCHIVE).open("wb") as out:
                for chunk in archive.chunks():
                    out.write(chunk)
        job.send_to_worker()
    return job


def execute_published_load(job: PublishedLoad) -> bool:
    """Load the job's dataset; False if another worker has it or took it."""
    token = job.claim()
    if token is None:
        return False
    try:
        return work_as_holder(
            job, token, lambda heartbeat: load(job, token, heartbeat), expected=(DataFileError,)
        )
    finally:
        job.refresh_from_db(fields=["status"])
        if job.status in (PublishedLoad.Status.DONE, PublishedLoad.Status.FAILED):
            shutil.rmtree(job_folder(job), ignore_errors=True)


def load(job: PublishedLoad, token: str, heartbeat: Heartbeat) -> None:
    progress_file = job_folder(job) / PROGRESS

    def progress(message: str) -> None:
        heartbeat.check()
        write_progress(progress_file, message)

    folder = dataset_folder(job, progress)
    with transaction.atomic():
        summary = load_published(job.dataset, folder, job.campaign_slug, progress)
        job.finish_as_holder(
            token,
            PublishedLoad.Status.DONE,
            summary=str(summary),
            error="",
            campaign=summary.campaign,
        )


def dataset_folder(job: PublishedLoad, progress) -> Path:
    """The folder to read: the archive unpacked, or the server folder, checked again now
    (the setting may have changed since the form was filled in)."""
    if job.archive:
        progress(f"unpacking {job.archive}")
        target = job_folder(job) / UNPACKED
        shutil.rmtree(target, ignore_errors=True)  # a half-unpacked one of a dead worker
        target.mkdir(parents=True)
        return unpack_zip(
            job_folder(job) / ARCHIVE,
            target,
            name=job.archive,
            max_bytes=settings.PUBLISHED_UNPACKED_MAX_BYTES,
            max_files=settings.PUBLISHED_UNPACKED_MAX_FILES,
        )
    folder = server_folder(job.folder)
    if folder is None:
        raise DataFileError(
            job.folder, "not a folder under PUBLISHED_DATA_DIR (or the setting is unset)"
        )
    return folder


def write_progress(path: Path, message: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps({"message": message}))
    os.replace(partial, path)


def read_progress(job: PublishedLoad) -> str:
    try:
        return str(json.loads((job_folder(job) / PROGRESS).read_text())["message"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
