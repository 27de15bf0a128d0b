"""How long a job took, or has left, as a person reads it: "0.42 s", "12.3 s", "1 min 25 s",
"2 h 05 min". No Django: the admins' columns (jobs/admin.py) and the pages' estimates use it."""


def human_duration(seconds: float | None) -> str:
    """'–' for None (not measured, or not finished)."""
    if seconds is None:
        return "–"
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, rest = divmod(round(seconds / 60), 60)
    return f"{hours} h {rest:02d} min"


def rough_time_left(seconds: float) -> str:
    """An estimate, rounded as far as it deserves: 'about 5 s', 'about 40 s', 'about 3 min',
    'about 1 h 10 min'."""
    if seconds < 60:
        return f"about {max(5, round(seconds / 5) * 5)} s"
    if seconds < 3600:
        return f"about {max(1, round(seconds / 60))} min"
    hours, minutes = divmod(round(seconds / 600) * 10, 60)
    return f"about {hours} h {minutes:02d} min" if minutes else f"about {hours} h"
