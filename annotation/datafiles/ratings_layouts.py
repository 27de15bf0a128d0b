"""The layouts a ratings file may be in besides E2E's CrowdFlower CSV: each judgment form's
own (JudgmentForm.layout, named after the form), read by the reader of its layout's shape.
`import_ratings --form`, the admin's upload and the API offer these. A form of an existing
shape needs no line here: its module declares its layout."""

from collections.abc import Callable
from functools import partial

from annotation.judging import FORMS, REGISTERED
from annotation.judging.base import Shape

from .importers import ImportSummary
from .ratings_da import import_da_ratings
from .ratings_esa import import_esa_judgments
from .ratings_pairwise import import_pairwise_ratings

# A layout's shape -> its reader: (campaign, file, file name, user=None, *, form).
READERS: dict[str, Callable[..., ImportSummary]] = {
    Shape.SCORES: import_da_ratings,
    Shape.CHOICES: import_pairwise_ratings,
    Shape.SPANS: import_esa_judgments,
}
# Form name -> (campaign, file, file name, user=None) -> what the file brought in.
IMPORTERS: dict[str, Callable[..., ImportSummary]] = {
    form.name: partial(READERS[form.layout.shape], form=form)
    for form in REGISTERED
    if form.layout is not None
}


def layout_label(name: str) -> str:
    """How the upload page names a form's layout."""
    return f"{FORMS[name].label.split(':')[0]} ({name})"
