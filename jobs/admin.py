"""What the admins of background jobs (ranking runs, generation jobs) show alike."""

from django.contrib import admin
from django.utils.html import format_html
from django.utils.safestring import SafeString

from .durations import human_duration


def progress_html(done: int, total: int) -> SafeString:
    """A job's progress in a changelist: a bar, and how many of how many."""
    return format_html('<progress max="{}" value="{}"></progress> {}/{}', total, done, done, total)


def duration_column(field: str, description: str):
    """A ModelAdmin attribute (`compute_time = duration_column("compute_seconds", ...)`) for
    a changelist column or read-only field: the duration in seconds as a person reads it
    (jobs.durations.human_duration), sorted by the field."""

    @admin.display(description=description, ordering=field)
    def column(model_admin, job) -> str:
        return human_duration(getattr(job, field))

    return column
