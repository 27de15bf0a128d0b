"""The admin's "Load a published dataset": what `manage.py load_published` does, as a
background job (annotation/published_uploads.py). A form names the dataset, the campaign
and where its files are (an uploaded .zip of the dataset's folder, or a folder on the
server under PUBLISHED_DATA_DIR); the job's page follows the worker. CampaignAdmin
(annotation/admin.py) routes its URLs here."""

from typing import cast

from django import forms
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse

from .models import Campaign, PublishedLoad
from .published import DATASETS
from .published_uploads import queue_published_load, read_progress, server_folders


class PublishedLoadForm(forms.Form):
    dataset = forms.ChoiceField(choices=list(DATASETS.items()))
    campaign = forms.SlugField(
        required=False,
        help_text="The campaign's slug; made with the dataset's criteria and questions if "
        "there is none. Empty: the dataset's name (logicnlg, rotowire, ...).",
    )
    archive = forms.FileField(
        required=False,
        label="Archive",
        help_text="A .zip of the dataset's folder, laid out as the dataset publishes it.",
    )
    folder = forms.ChoiceField(
        required=False,
        label="Or a folder on the server",
        help_text="A folder under PUBLISHED_DATA_DIR.",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        folders = server_folders()
        if folders:
            folder = cast(forms.ChoiceField, self.fields["folder"])
            folder.choices = [("", "–")] + [(name, name) for name in folders]
        else:  # PUBLISHED_DATA_DIR unset: archives only
            del self.fields["folder"]

    def clean_archive(self):
        archive = self.cleaned_data["archive"]
        if archive is None:
            return None
        if not archive.name.lower().endswith(".zip"):
            raise forms.ValidationError(f"{archive.name}: a .zip archive, please.")
        if archive.size > settings.IMPORT_MAX_BYTES:
            raise forms.ValidationError(
                f"{archive.name}: the limit is {settings.IMPORT_MAX_BYTES:,} bytes."
            )
        return archive

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        archive, folder = cleaned.get("archive"), cleaned.get("folder", "")
        if not self.errors and bool(archive) == bool(folder):
            where = "a .zip archive"
            if "folder" in self.fields:
                where += " or a folder on the server"
            raise forms.ValidationError(f"Give {where}, one of the two.")
        slug = cleaned.get("campaign") or cleaned.get("dataset", "")
        cleaned["campaign"] = slug
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is not None and not self.user.has_perm("annotation.change_campaign"):
            raise forms.ValidationError(f"You may not change the campaign '{slug}'.")
        return cleaned


def load_view(model_admin, request):
    """GET: the form; POST: the archive stored and a load queued, then the job's page."""
    if not model_admin.has_add_permission(request):
        raise PermissionDenied
    form = PublishedLoadForm(request.POST or None, request.FILES or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        job = queue_published_load(
            data["dataset"],
            data["campaign"],
            archive=data["archive"],
            folder=data.get("folder", ""),
            user=request.user,
        )
        return redirect("admin:annotation_campaign_load_published_job", job.pk)
    recent = PublishedLoad.objects.select_related("created_by", "campaign")[:10]
    context = {
        "form": form,
        "recent": recent,
        "folders_allowed": "folder" in form.fields,
        "max_upload": settings.IMPORT_MAX_BYTES,
    }
    return page(model_admin, request, "load_published.html", "Load a published dataset", context)


def load_job_view(model_admin, request, job_id: int):
    """The load's state: queued, its latest step while a worker loads, then what it
    brought in or the error; the page reloads itself until the job is over."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    jobs = PublishedLoad.objects.select_related("created_by", "campaign")
    job = get_object_or_404(jobs, pk=job_id)
    context = {
        "job": job,
        "dataset": DATASETS.get(job.dataset, job.dataset),
        "pending": job.status in (PublishedLoad.Status.QUEUED, PublishedLoad.Status.RUNNING),
        "progress": read_progress(job) if job.status == PublishedLoad.Status.RUNNING else "",
        "summary_lines": job.summary.splitlines(),
    }
    return page(model_admin, request, "load_published_job.html", f"Load {job.pk}", context)


def page(model_admin, request, template: str, title: str, context: dict):
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": title,
        **context,
    }
    return TemplateResponse(request, f"admin/annotation/{template}", context)
