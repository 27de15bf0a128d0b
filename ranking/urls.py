from django.urls import path

from . import views

app_name = "ranking"

# The metrics' pages share results/<slug>/ (ranking/automatic_metrics/urls.py, included first).
urlpatterns = [
    path("<slug:slug>/", views.campaign_results, name="campaign"),
    path("<slug:slug>/<str:criterion_name>/", views.results, name="results"),
    path("<slug:slug>/<str:criterion_name>/recompute/", views.recompute, name="recompute"),
    path("<slug:slug>/<str:criterion_name>/csv/", views.results_csv, name="csv"),
]
