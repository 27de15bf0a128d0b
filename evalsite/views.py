"""The site's front page: the one page that links to both the annotators' tasks and the
organisers' results, so it belongs to the project rather than to either app."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from annotation.models import Campaign


@require_safe
def home(request):
    campaigns = Campaign.objects.prefetch_related("criteria")
    if not request.user.is_staff:
        campaigns = campaigns.exclude(status=Campaign.Status.DRAFT)
    return render(request, "home.html", {"campaigns": campaigns})
