"""The layouts a ratings file may be in besides E2E's CrowdFlower CSV: a judgment form's
own (JudgmentForm.import_formats), with the importer that reads it. `import_ratings --form`
and the admin's upload offer these."""

from collections.abc import Callable

from annotation.judging import FORMS, da, esa, pairwise

from .importers import ImportSummary
from .ratings_da import import_da_ratings
from .ratings_esa import import_esa_judgments
from .ratings_pairwise import import_pairwise_ratings

# (campaign, file, file name, user=None) -> what the file brought in.
IMPORTERS: dict[str, Callable[..., ImportSummary]] = {
    da.NAME: import_da_ratings,
    pairwise.NAME: import_pairwise_ratings,
    esa.NAME: import_esa_judgments,
}


def layout_label(name: str) -> str:
    """How the upload page names a form's layout."""
    return f"{FORMS[name].label.split(':')[0]} ({name})"
