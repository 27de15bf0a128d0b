"""Who may open the organisers' pages: the admin's own rule, applied outside the admin.

Staff status only lets a person into the admin; what they may see or do there is decided by
the model permissions on Campaign (the admin's has_view_permission / has_change_permission).
The results pages, CSVs and buttons that queue work decide the same way, so a staff member
without a permission on campaigns gets 403 on every organiser page, not only in the admin.
"""

from collections.abc import Callable
from functools import wraps
from typing import Literal

from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied

Action = Literal["view", "change"]

# Set on a view that accepts a large request body (an upload): the middleware that bounds
# request sizes (evalsite/middleware.py) lets such a body through only to it, and only from
# a user who may change campaigns.
UPLOAD_ATTRIBUTE = "accepts_upload_from"


def may(user, action: Action) -> bool:
    """Whether `user` may view or change campaigns, as the admin decides: active staff with
    the model permission, and a change permission also lets one view."""
    if not (user.is_active and user.is_staff):
        return False
    actions = ("view", "change") if action == "view" else ("change",)
    return any(user.has_perm(f"annotation.{name}_campaign") for name in actions)


def campaign_permission_required(action: Action) -> Callable:
    """A view for organisers: a visitor who is not staff is sent to the admin's login (as
    staff_member_required does), a staff member without the permission gets 403. The check
    runs before the view and before the method check, so it is the same on every method."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def checked(request, *args, **kwargs):
            if not may(request.user, action):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return staff_member_required(checked)

    return decorator


def accepts_upload(view: Callable) -> Callable:
    """Marks a view that takes a file of up to IMPORT_MAX_BYTES from a user who may change
    campaigns; every other request body is bounded by REQUEST_MAX_BYTES before it is read."""
    setattr(view, UPLOAD_ATTRIBUTE, "change")
    return view
