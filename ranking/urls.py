from django.urls import path

from ranking.automatic_metrics import views as metric_views

from . import views

app_name = "ranking"

urlpatterns = [
    path("<slug:slug>/", views.campaign_results, name="campaign"),
    # Before the criterion pages, whose pattern would take "metrics" for a criterion.
    path("<slug:slug>/metrics/compute/", metric_views.compute, name="metrics_compute"),
    path("<slug:slug>/metrics/csv/", metric_views.metrics_csv, name="metrics_csv"),
    path(
        "<slug:slug>/metrics/correlations/csv/",
        metric_views.correlations_csv,
        name="metrics_correlations_csv",
    ),
    path("<slug:slug>/<str:criterion_name>/", views.results, name="results"),
    path("<slug:slug>/<str:criterion_name>/recompute/", views.recompute, name="recompute"),
    path("<slug:slug>/<str:criterion_name>/csv/", views.results_csv, name="csv"),
]
