"""The site's error pages, by who meets them. Annotators get templates/<status>.html, which
tell someone taking part in a study what to do (open their study link again); organisers in
the admin get templates/admin/error.html, in the admin's own layout, which says what
happened to a page of the admin and never sends them to a study link.

Each handler renders without the request's context processors, as Django's own 500 view
does: an error page must not fail on what failed the page (the session, the database).
"""

from django.http import HttpRequest, HttpResponse
from django.template import loader
from django.urls import NoReverseMatch, reverse
from django.views import csrf, defaults

# What went wrong -> (status, title, what to do).
ADMIN_ERRORS = {
    "bad_request": (
        400,
        "Bad request",
        "This request could not be understood. Go back and try again.",
    ),
    "forbidden": (
        403,
        "Not allowed",
        "Your account may not open this page. Ask someone who manages the site for the"
        " permission, or log in with an account that has it.",
    ),
    "expired": (
        403,
        "This page has expired",
        "What you sent was not accepted: the form it came from is no longer valid in this"
        " browser (it was open for a long time, or you logged in again since). Nothing was"
        " saved. Go back, reload the form and send it again.",
    ),
    "not_found": (404, "Page not found", "There is no such page, or what it shows was deleted."),
    "server_error": (
        500,
        "Something went wrong on our side",
        "The page could not be shown: an error on the server, written to its log with the"
        " time. Nothing was changed by this request. Reload the page in a minute; if it fails"
        " again, tell whoever runs the site what you did.",
    ),
}


def in_admin(request: HttpRequest) -> bool:
    try:
        return request.path.startswith(reverse("admin:index"))
    except NoReverseMatch:  # a URLconf without the admin (some tests)
        return False


def admin_error(what: str) -> HttpResponse:
    status, title, message = ADMIN_ERRORS[what]
    context = {"title": title, "message": message, "status": status}
    return HttpResponse(loader.render_to_string("admin/error.html", context), status=status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if in_admin(request):
        return admin_error("bad_request")
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if in_admin(request):
        return admin_error("forbidden")
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if in_admin(request):
        return admin_error("not_found")
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if in_admin(request):
        return admin_error("server_error")
    return defaults.server_error(request)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    if in_admin(request):
        return admin_error("expired")
    return csrf.csrf_failure(request, reason)
