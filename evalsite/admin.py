"""The admin as the project assembles it.

Annotation's campaign list links to ranking's results pages from here: annotation must not
know ranking (the dependency runs the other way), and the project knows both. Re-registering
a model with a subclass of its admin is Django's usual way to extend another app's admin.
The datasheet page is here for the same reason: a datasheet reads all three apps.
"""

import io
import zipfile

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.views.decorators.http import require_http_methods

from annotation.admin import CampaignAdmin
from annotation.models import Campaign

from .datasheet import datasheet_files
from .forms import DatasheetForm


class CampaignWithResultsAdmin(CampaignAdmin):
    @admin.display(description="")
    def links(self, campaign):
        results = reverse("ranking:campaign", args=[campaign.slug])
        datasheet = reverse("admin:annotation_campaign_datasheet", args=[campaign.pk])
        return format_html(
            '{} · <a href="{}">Results</a> · <a href="{}">Datasheet</a>',
            super().links(campaign),
            results,
            datasheet,
        )

    def get_urls(self):
        view = require_http_methods(["GET", "HEAD", "POST"])(self.datasheet_view)
        datasheet = path(
            "<int:campaign_id>/datasheet/",
            self.admin_site.admin_view(view),
            name="annotation_campaign_datasheet",
        )
        return [datasheet, *super().get_urls()]

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


def attachment(content: bytes, content_type: str, name: str) -> HttpResponse:
    # The name is made of a slug (letters, digits, '-', '_'): nothing to quote in it.
    disposition = f'attachment; filename="{name}"'
    return HttpResponse(
        content, content_type=content_type, headers={"Content-Disposition": disposition}
    )


admin.site.unregister(Campaign)
admin.site.register(Campaign, CampaignWithResultsAdmin)
