"""What of a remote answer may be kept or shown: a short, printable part, never the body.

An answer can be an internal service's page (where a policy allows an internal host), a
megabyte of HTML, or text made to look like the platform's own messages in the admin.
"""

import json

MAX_CHARS = 200


def error_message(body: bytes) -> str:
    """The message of a JSON error body ({"error": {"message": ...}}, {"error": "..."},
    {"detail": "..."} or {"message": "..."}), short and printable; of any other body only
    its size."""
    message = None
    try:
        document = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        document = None
    if isinstance(document, dict):
        error = document.get("error", document.get("detail", document.get("message")))
        message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str) or not message.strip():
        return f"no error message ({len(body):,} bytes of body, not shown)"
    return printable(message)


def excerpt(body: bytes) -> str:
    """The body's first characters, printable only (a receiver's "ok" or "thanks")."""
    return printable(body[: MAX_CHARS * 4].decode("utf-8", errors="replace"))


def printable(text: str) -> str:
    shown = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return shown if len(shown) <= MAX_CHARS else shown[:MAX_CHARS] + "..."
