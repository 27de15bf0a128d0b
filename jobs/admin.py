"""What the admins of background jobs (ranking runs, generation jobs) show alike."""

from django.utils.html import format_html
from django.utils.safestring import SafeString


def progress_html(done: int, total: int) -> SafeString:
    """A job's progress in a changelist: a bar, and how many of how many."""
    return format_html('<progress max="{}" value="{}"></progress> {}/{}', total, done, done, total)
