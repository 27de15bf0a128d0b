from django.contrib import admin
from django.urls import include, path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    # Before the admin's own: the same login, with its rate limits.
    path("admin/login/", views.admin_login, name="admin_login"),
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    path("", include("annotation.urls")),
    # The metrics first: ranking's <slug>/<criterion_name>/csv/ would take "metrics/csv/".
    path("results/", include("ranking.automatic_metrics.urls")),
    path("results/", include("ranking.urls")),
]

# Organisers in the admin get the admin's error pages, annotators the site's own.
handler400 = "evalsite.errors.bad_request"
handler403 = "evalsite.errors.permission_denied"
handler404 = "evalsite.errors.page_not_found"
handler500 = "evalsite.errors.server_error"
