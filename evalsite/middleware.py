"""A request body is bounded before anything reads it.

Django reads a body when a view or the CSRF check first touches request.POST: a multipart
body is then parsed, and its files are written to temporary files, whoever sent them. Left
alone, an anonymous POST of 1.8 GB to the upload page was spooled to /tmp before the CSRF
token or the user's permissions were looked at. This middleware runs before any view (and
so before the CSRF check), on the declared Content-Length: Django reads no more than that
(a body without one is read as empty).

- Any request: up to REQUEST_MAX_BYTES.
- A view marked with annotation.permissions.accepts_upload: up to UPLOAD_MAX_BYTES, for a
  logged-in user who may change campaigns; the session and the user are read from the
  cookie and the database, never from the body.

Larger requests are refused with 413 and the body is never read. The web server in front
should refuse them too (nginx: client_max_body_size at UPLOAD_MAX_BYTES, and its default
request buffering, so that a slow upload holds nginx rather than a gunicorn worker).
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from annotation.permissions import UPLOAD_ATTRIBUTE, may


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return HttpResponse("Invalid Content-Length.", status=400, content_type="text/plain")
        if declared > settings.REQUEST_MAX_BYTES and not self._may_send(request, declared):
            return HttpResponse("Request body too large.", status=413, content_type="text/plain")
        return self.get_response(request)

    @staticmethod
    def _may_send(request: HttpRequest, declared: int) -> bool:
        """Whether this is an upload, within its limit, by someone who may upload."""
        if declared > settings.UPLOAD_MAX_BYTES:
            return False
        try:
            view = resolve(request.path_info).func
        except Resolver404:
            return False
        action = getattr(view, UPLOAD_ATTRIBUTE, None)
        return action is not None and may(request.user, action)
