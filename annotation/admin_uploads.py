"""The admin's "Upload data": a form that stores the files and queues an UploadJob
(annotation/uploads.py), and the job's page, with its progress while a worker imports the
files and then what they brought in, or the error that left the campaign as it was.
CampaignAdmin (annotation/admin.py) routes its upload URLs here."""

from typing import cast

from django import forms
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse

from .datafiles.ratings_layouts import IMPORTERS, layout_label
from .models import (
    NATURALNESS,
    QUALITY,
    Campaign,
    DataFile,
    System,
    UploadJob,
    validate_system_name,
)
from .uploads import queue_upload, read_progress, system_name_of

# More files than E2E's 21 systems' outputs in one upload; each is at most IMPORT_MAX_BYTES.
MAX_FILES = 50


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files from one input: a list of uploaded files, each checked as one."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        files = data if isinstance(data, list | tuple) else [data]
        # No file at all is an empty list, which a loop over it would pass as valid: it
        # made a job of nothing that said "done" (issue 39). Cleaned as one missing file.
        return [super(MultipleFileField, self).clean(file, initial) for file in files or [None]]


class UploadForm(forms.Form):
    kind = forms.ChoiceField(choices=DataFile.Kind.choices)
    # Not `files`, which is the form's own dict of uploaded files.
    data_files = MultipleFileField(
        label="Files",
        help_text="CSV, TSV or JSON Lines, UTF-8; several at once for system outputs (one"
        " file per system, named after it: tgen.tsv is tgen's outputs).",
    )
    system = forms.ModelChoiceField(
        queryset=System.objects.none(),
        required=False,
        help_text="For one file of system outputs: its system (else its file name says).",
    )
    new_system = forms.CharField(
        max_length=200,
        required=False,
        validators=[validate_system_name],
        help_text="Or the name of a new system for that one file.",
    )
    criterion = forms.ChoiceField(
        choices=[("", "from the columns"), (QUALITY, "Quality"), (NATURALNESS, "Naturalness")],
        required=False,
        help_text="For ratings files with both quality and naturalness columns.",
    )
    form = forms.ChoiceField(
        label="Ratings layout",
        choices=[
            ("", "E2E CrowdFlower CSV (RankME's scores)"),
            *((name, layout_label(name)) for name in IMPORTERS),
        ],
        required=False,
        help_text="For ratings files: the layout they are in. A judgment form's layout names"
        " its criteria in a column, and makes those the campaign lacks.",
    )

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        system = cast(forms.ModelChoiceField, self.fields["system"])
        system.queryset = campaign.systems.all()

    def clean_data_files(self) -> list:
        files = self.cleaned_data["data_files"]
        if len(files) > MAX_FILES:
            raise forms.ValidationError(f"At most {MAX_FILES} files at once.")
        for upload in files:
            if upload.size > settings.IMPORT_MAX_BYTES:
                raise forms.ValidationError(
                    f"{upload.name}: the limit is {settings.IMPORT_MAX_BYTES:,} bytes."
                )
        return files

    def clean_new_system(self) -> str:
        name = self.cleaned_data["new_system"]
        if name and self.campaign.systems.filter(name=name).exists():
            raise forms.ValidationError(f"The campaign already has a system '{name}'.")
        return name

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        if cleaned.get("kind") == DataFile.Kind.OUTPUTS:
            cleaned["system_name"] = self.system_name(cleaned)
        if cleaned.get("form") and cleaned.get("kind") != DataFile.Kind.RATINGS:
            self.add_error("form", "A ratings layout is for a ratings file only.")
        if cleaned.get("form") and cleaned.get("criterion"):
            self.add_error(
                "criterion", "The criterion is for the E2E layout: this layout names its own."
            )
        return cleaned

    def system_name(self, cleaned: dict) -> str:
        """The system of a single outputs file, '' where each file's name gives it."""
        files = cleaned.get("data_files") or []
        chosen = cleaned.get("system")
        name = chosen.name if chosen else cleaned.get("new_system", "")
        if name and len(files) > 1:
            raise forms.ValidationError(
                "Several files of outputs are one system each, named by the file: leave the"
                " system empty."
            )
        if not name:
            for upload in files:
                try:
                    system_name_of(upload.name)
                except ValueError as error:
                    raise forms.ValidationError(str(error)) from None
        return name


def upload_view(model_admin, request, campaign_id: int):
    """GET: the form; POST: the files stored and an import queued, then the job's page."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if not model_admin.has_change_permission(request, campaign):
        raise PermissionDenied
    form = UploadForm(request.POST or None, request.FILES or None, campaign=campaign)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        job = queue_upload(
            campaign,
            data["kind"],
            data["data_files"],
            criterion=data["criterion"],
            system_name=data.get("system_name", ""),
            user=request.user,
            form=data["form"],
        )
        return redirect("admin:annotation_campaign_upload_job", campaign.pk, job.pk)
    recent = campaign.uploads.select_related("created_by")[:10]
    title = "Upload data"
    return page(model_admin, request, campaign, "upload.html", title, form=form, recent=recent)


def upload_job_view(model_admin, request, campaign_id: int, job_id: int):
    """The upload's state: queued, its progress while a worker imports it, then what it
    brought in or the error; the page reloads itself until the job is over."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if not model_admin.has_view_permission(request, campaign):
        raise PermissionDenied
    jobs = UploadJob.objects.select_related("created_by")
    job = get_object_or_404(jobs, pk=job_id, campaign=campaign)
    pending = job.status in (UploadJob.Status.QUEUED, UploadJob.Status.RUNNING)
    progress = read_progress(job) if job.status == UploadJob.Status.RUNNING else None
    title = f"Upload {job.pk}"
    return page(
        model_admin,
        request,
        campaign,
        "upload_job.html",
        title,
        job=job,
        pending=pending,
        progress=progress,
        summary_lines=job.summary.splitlines(),
    )


def page(model_admin, request, campaign: Campaign, template: str, title: str, **context):
    context = {
        **model_admin.admin_site.each_context(request),
        "campaign": campaign,
        "opts": model_admin.model._meta,
        "title": f"{title}: {campaign}",
        **context,
    }
    return TemplateResponse(request, f"admin/annotation/{template}", context)
