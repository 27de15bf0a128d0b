"""Uploads imported by a worker (annotation/uploads.py): the admin's "Upload data" stores
the files and this row, and a worker imports them, so no request waits on an import.
Imported by annotation.models, so that Django sees the model."""

from django.conf import settings
from django.db import models

# The job machinery moves to a top-level `jobs` package (jobs/ in docs/architecture.md),
# which annotation may use; until then it is evalsite's.
from jobs.claims import BackgroundJob, JobQuerySet

from .models import Campaign, DataFile, validate_criterion_name


class UploadJob(BackgroundJob):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="uploads")
    kind = models.CharField(max_length=10, choices=DataFile.Kind.choices)
    # For a ratings file: the name of the criterion it rates (made if the campaign has none
    # by that name yet, so a name rather than the row); empty: from the file's columns.
    criterion = models.CharField(max_length=40, blank=True, validators=[validate_criterion_name])
    # For a ratings file: the judgment form whose layout it is in (datafiles/ratings_layouts);
    # empty: E2E's CrowdFlower CSV.
    form = models.CharField(max_length=20, blank=True)
    # For one outputs file: the system to import into (a new one by this name if the
    # campaign has none); empty: each file's system is its name without the extension.
    system_name = models.CharField(max_length=200, blank=True)
    # The uploaded files, in the order given: [{"name": as uploaded, "stored": file name in
    # the job's folder under UPLOAD_DIR}]. Removed once the job is done or failed.
    files = models.JSONField(default=list)
    summary = models.TextField(blank=True, help_text="what each file brought in")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    objects = JobQuerySet.as_manager()

    task_name = "annotation.import_upload"
    task_id_argument = "job_id"

    class Meta:
        ordering = ["-queued_at", "-id"]
        indexes = [models.Index(fields=["campaign", "status"])]

    def __str__(self) -> str:
        return f"{self.campaign.slug} upload {self.pk} ({self.status})"


class PublishedLoad(BackgroundJob):
    """A published dataset loaded by a worker (annotation/published_uploads.py), from a
    .zip archive the organiser uploaded or a folder under PUBLISHED_DATA_DIR."""

    dataset = models.CharField(max_length=20)  # a key of annotation.published.DATASETS
    campaign_slug = models.SlugField(help_text="the campaign it loads into, made if missing")
    # Set once loaded; a campaign deleted later leaves the record of its load.
    campaign = models.ForeignKey(
        Campaign,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="published_loads",
    )
    # One of the two: the uploaded archive's name as the browser gave it (stored under
    # UPLOAD_DIR/published/<id>/ until the job is over), or a folder's name under
    # PUBLISHED_DATA_DIR.
    archive = models.CharField(max_length=255, blank=True)
    folder = models.CharField(max_length=255, blank=True)
    summary = models.TextField(blank=True, help_text="what the load brought in")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    objects = JobQuerySet.as_manager()

    task_name = "annotation.load_published"
    task_id_argument = "job_id"

    class Meta:
        ordering = ["-queued_at", "-id"]

    def __str__(self) -> str:
        return f"{self.dataset} into {self.campaign_slug} ({self.status})"

    @property
    def source(self) -> str:
        return f"archive {self.archive}" if self.archive else f"server folder {self.folder}"
