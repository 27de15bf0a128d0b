"""A URLconf whose views fail, for the error page tests (tests/evalsite/test_error_pages.py):
the same views outside the admin and under its prefix, with the site's own error handlers."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import include, path

from evalsite.urls import handler400, handler403, handler404, handler500

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]


def not_found(request: HttpRequest) -> HttpResponse:
    raise Http404("secret detail: no row 42")


def forbidden(request: HttpRequest) -> HttpResponse:
    raise PermissionDenied("secret detail: not yours")


def bad_request(request: HttpRequest) -> HttpResponse:
    raise SuspiciousOperation("secret detail: odd header")


def broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("secret detail: the database fell over")


failing = [
    path("not-found/", not_found),
    path("forbidden/", forbidden),
    path("bad-request/", bad_request),
    path("broken/", broken),
]
urlpatterns = [*failing, path("admin/fail/", include(failing)), path("admin/", admin.site.urls)]
