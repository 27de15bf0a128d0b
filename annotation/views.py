from django.shortcuts import render

from .models import Campaign


def home(request):
    campaigns = Campaign.objects.prefetch_related("criteria")
    return render(request, "annotation/home.html", {"campaigns": campaigns})
