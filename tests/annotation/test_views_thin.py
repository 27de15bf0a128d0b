"""annotation/views.py stays thin: the pages parse the request, make one call into the
hand-out (annotation/handout/flow.py) and render; the transactions, the criterion's lock and
the SQL are the hand-out's."""

import ast
from pathlib import Path

VIEWS = Path(__file__).resolve().parents[2] / "annotation" / "views.py"
HELD_BY_THE_HANDOUT = {"django.db.transaction", "annotation.handout.sql"}


def imported_names(path: Path) -> set[str]:
    """Every module and every name imported, dotted in full (relative imports resolved
    within the annotation package)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join(filter(None, ["annotation", module]))
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_views_import_no_transaction_and_no_sql():
    assert imported_names(VIEWS) & HELD_BY_THE_HANDOUT == set()


def test_views_take_no_lock():
    source = VIEWS.read_text()
    assert "select_for_update" not in source
    assert "atomic" not in source


def test_imported_names_sees_what_a_view_module_could_import(tmp_path):
    module = tmp_path / "views.py"
    module.write_text("from django.db import transaction\nfrom .handout import sql\n")
    assert imported_names(module) == HELD_BY_THE_HANDOUT | {"django.db", "annotation.handout"}
