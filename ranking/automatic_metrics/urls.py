from django.urls import path

from . import views

app_name = "metrics"

# Under results/ beside ranking's pages, and included before them (evalsite/urls.py), whose
# pattern <slug>/<criterion_name>/csv/ would take "metrics" for a criterion.
urlpatterns = [
    path("<slug:slug>/metrics/compute/", views.compute, name="compute"),
    path("<slug:slug>/metrics/csv/", views.metrics_csv, name="csv"),
    path(
        "<slug:slug>/metrics/correlations/csv/",
        views.correlations_csv,
        name="correlations_csv",
    ),
]
