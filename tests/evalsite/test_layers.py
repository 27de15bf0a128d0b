"""The direction of dependence (docs/architecture.md): ranking and generation use
annotation, the API (api) uses those three and only the project imports it, the project
(evalsite) uses all of them and no app imports it, annotation knows neither of the others
(not by import, not by URL), and nlgdata, which all may use, uses none of them; jobs (the
background jobs' claim and heartbeat), which the apps use, uses none of them either; the
engines under ranking/engine and generation/backends use nlgdata and nothing else of ours,
nor Django.

Imports inside functions count too. Relative imports stay inside their package: ruff's
TID252 (pyproject.toml) refuses those that climb to a parent.
"""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def imported_modules(app: str) -> dict[str, set[str]]:
    found = {}
    for path in (REPO / app).rglob("*.py"):
        modules = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module)
        found[str(path.relative_to(REPO))] = modules
    return found


@pytest.mark.parametrize(
    "app, forbidden",
    [
        ("annotation", ("ranking", "generation", "judges", "api", "evalsite")),
        ("ranking", ("generation", "judges", "api", "evalsite")),
        ("generation", ("ranking", "judges", "api", "evalsite")),
        # Judges use annotation, generation (the endpoint backend) and ranking (metrics,
        # the fused estimator); none of those uses judges. Only evalsite uses the api.
        ("judges", ("api", "evalsite")),
        ("api", ("evalsite",)),
        ("jobs", ("annotation", "ranking", "generation", "judges", "api", "evalsite")),
        ("ranking/engine", ("django", "annotation", "ranking", "generation", "evalsite", "jobs")),
        (
            "generation/backends",
            ("django", "annotation", "ranking", "generation", "evalsite", "jobs"),
        ),
        ("nlgdata", ("django", "annotation", "ranking", "generation", "evalsite", "jobs")),
    ],
)
def test_app_imports_only_what_it_may(app, forbidden):
    wrong = {
        path: sorted(m for m in modules if m.split(".")[0] in forbidden)
        for path, modules in imported_modules(app).items()
    }
    assert {path: mods for path, mods in wrong.items() if mods} == {}


def test_annotation_templates_name_no_other_app():
    other = re.compile(r"""['"](ranking|generation):|/results/""")
    for path in (REPO / "templates" / "annotation").rglob("*"):
        if path.is_file():
            assert not other.search(path.read_text()), path
