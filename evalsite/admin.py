"""The admin as the project assembles it.

Annotation's campaign list links to ranking's results pages from here: annotation must not
know ranking (the dependency runs the other way), and the project knows both. Re-registering
a model with a subclass of its admin is Django's usual way to extend another app's admin.
"""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from annotation.admin import CampaignAdmin
from annotation.models import Campaign


class CampaignWithResultsAdmin(CampaignAdmin):
    @admin.display(description="")
    def links(self, campaign):
        results = reverse("ranking:campaign", args=[campaign.slug])
        return format_html('{} · <a href="{}">Results</a>', super().links(campaign), results)


admin.site.unregister(Campaign)
admin.site.register(Campaign, CampaignWithResultsAdmin)
