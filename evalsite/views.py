"""The site's front page: the one page that links to both the annotators' tasks and the
organisers' results, so it belongs to the project rather than to either app."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from annotation.models import Campaign
from annotation.permissions import may


@require_safe
def home(request):
    # Campaign names and descriptions are the organisers' business (an annotator reaches a
    # task through the link of a study or an invitation), so only those who may see
    # campaigns in the admin find them listed here.
    organiser = may(request.user, "view")
    campaigns = (
        Campaign.objects.prefetch_related("criteria") if organiser else Campaign.objects.none()
    )
    return render(request, "home.html", {"campaigns": campaigns, "organiser": organiser})
