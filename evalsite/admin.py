"""The admin as the project assembles it.

Annotation's campaign list links to ranking's results pages from here: annotation must not
know ranking (the dependency runs the other way), and the project knows both. Re-registering
a model with a subclass of its admin is Django's usual way to extend another app's admin.
The datasheet page is here for the same reason: a datasheet reads all three apps; and so is
the bundle's download, whose bundle holds the datasheet.
"""

import io
import tempfile
import zipfile
from pathlib import Path

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.views.decorators.http import require_http_methods

from annotation.admin import CampaignAdmin
from annotation.models import Campaign
from ranking.bundle.writer import write_bundle
from ranking.models import RankingRun

from .datasheet import build_datasheet, datasheet_files
from .forms import DatasheetForm


class CampaignWithResultsAdmin(CampaignAdmin):
    @admin.display(description="")
    def links(self, campaign):
        results = reverse("ranking:campaign", args=[campaign.slug])
        datasheet = reverse("admin:annotation_campaign_datasheet", args=[campaign.pk])
        bundle = reverse("admin:annotation_campaign_bundle", args=[campaign.pk])
        return format_html(
            '{} · <a href="{}">Results</a> · <a href="{}">Datasheet</a> · <a href="{}">Bundle</a>',
            super().links(campaign),
            results,
            datasheet,
            bundle,
        )

    def get_urls(self):
        get_or_post = require_http_methods(["GET", "HEAD", "POST"])
        datasheet = path(
            "<int:campaign_id>/datasheet/",
            self.admin_site.admin_view(get_or_post(self.datasheet_view)),
            name="annotation_campaign_datasheet",
        )
        bundle = path(
            "<int:campaign_id>/bundle/",
            self.admin_site.admin_view(get_or_post(self.bundle_view)),
            name="annotation_campaign_bundle",
        )
        return [datasheet, bundle, *super().get_urls()]

    def bundle_view(self, request, campaign_id):
        """GET: what the bundle holds, and a button; POST: the bundle, written from the
        campaign as it is now (ranking/bundle/writer.py), with its datasheet."""
        campaign = get_object_or_404(Campaign, pk=campaign_id)
        if not self.has_view_permission(request, campaign):
            raise PermissionDenied
        if request.method == "POST":
            return bundle_download(campaign)
        context = {
            **self.admin_site.each_context(request),
            "campaign": campaign,
            "opts": self.model._meta,
            "title": f"Bundle of {campaign}",
            "runs": latest_finished_runs(campaign),
        }
        return TemplateResponse(request, "admin/annotation/bundle.html", context)

    def datasheet_view(self, request, campaign_id):
        """GET: a page with the choice of format; POST: the datasheet, made from the campaign
        as it is now (a POST, since each download computes a new one)."""
        campaign = get_object_or_404(Campaign, pk=campaign_id)
        if not self.has_view_permission(request, campaign):
            raise PermissionDenied
        form = DatasheetForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            return datasheet_download(campaign, form.cleaned_data["format"])
        context = {
            **self.admin_site.each_context(request),
            "form": form,
            "campaign": campaign,
            "opts": self.model._meta,
            "title": f"Datasheet of {campaign}",
        }
        return TemplateResponse(request, "admin/annotation/datasheet.html", context)


def datasheet_download(campaign: Campaign, kind: str) -> HttpResponse:
    files = datasheet_files(campaign)
    if kind == "markdown":
        name = f"{campaign.slug}-datasheet.md"
        return attachment(files[name].encode(), "text/markdown; charset=utf-8", name)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return attachment(buffer.getvalue(), "application/zip", f"{campaign.slug}-datasheet.zip")


def bundle_download(campaign: Campaign) -> FileResponse:
    """The bundle, written to a temporary file that is gone once the response is sent (the
    open file is what the response reads, and it is unlinked at once)."""
    # Under VAR_DIR rather than /tmp, which may be a small in-memory file system.
    Path(settings.VAR_DIR).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=settings.VAR_DIR) as folder:
        target = Path(folder) / "bundle.zip"
        write_bundle(campaign, target, datasheet_of=build_datasheet)
        stream = target.open("rb")
    name = f"{campaign.slug}-bundle.zip"
    return FileResponse(stream, as_attachment=True, filename=name, content_type="application/zip")


def latest_finished_runs(campaign: Campaign) -> list[tuple[RankingRun, bool]]:
    """The runs the bundle holds, the newest finished one per criterion and protocol, each
    with whether it covers the criterion's current judgments (ranking the bundle again
    gives its result only then)."""
    versions = dict(campaign.criteria.values_list("pk", "judgments_version"))
    latest: dict[tuple[str, str], RankingRun] = {}
    runs = RankingRun.objects.filter(campaign=campaign).select_related("criterion")
    for run in runs.finished():
        latest.setdefault((run.criterion.name, run.protocol), run)
    return [
        (run, run.judgments_version == versions.get(run.criterion_id))
        for _, run in sorted(latest.items())
    ]


def attachment(content: bytes, content_type: str, name: str) -> HttpResponse:
    # The name is made of a slug (letters, digits, '-', '_'): nothing to quote in it.
    disposition = f'attachment; filename="{name}"'
    return HttpResponse(
        content, content_type=content_type, headers={"Content-Disposition": disposition}
    )


admin.site.unregister(Campaign)
admin.site.register(Campaign, CampaignWithResultsAdmin)
