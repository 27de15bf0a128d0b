"""No module of the project imports, however indirectly, a module that imports it back:
not at the top, not inside a function, not under `if TYPE_CHECKING:`. A lazy import that
closes a cycle only hides it, and each such module can be read, tested and moved only
together with the rest of its cycle (docs/architecture.md, "The rule")."""

import pytest

from tests.evalsite.imports import (
    Import,
    Source,
    cycle_in,
    import_graph,
    project_sources,
    strongly_connected,
)


def cycles_report(graph: dict[str, dict[str, Import]]) -> str:
    """Each cycle's modules, and one way round it, import by import (file:line)."""
    parts = []
    for component in strongly_connected(graph):
        way = cycle_in(component, graph)
        steps = [
            f"    {graph[a][b].path}:{graph[a][b].line}  {a} imports {b}"
            for a, b in zip(way, way[1:], strict=False)
        ]
        parts.append(f"{len(component)} modules: {', '.join(component)}\n" + "\n".join(steps))
    return "\n".join(parts)


def test_no_module_imports_itself_round_a_cycle():
    report = cycles_report(import_graph(project_sources()))
    assert not report, f"import cycles (break each at one of its imports):\n{report}"


def graph_of(files: dict[str, str]) -> dict[str, dict[str, Import]]:
    """The import graph of made-up sources: {"pkg/__init__.py": "...", "pkg/a.py": ...}."""
    sources = {}
    for path, text in files.items():
        parts = path.removesuffix(".py").split("/")
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        sources[name] = Source(path, text, is_package)
    return import_graph(sources)


def test_a_cycle_closed_inside_a_function_is_found_with_its_lines():
    graph = graph_of(
        {
            "app/__init__.py": "",
            "app/models.py": "import os\n\ndef registry():\n    from app import forms\n",
            "app/forms.py": "from .models import Thing\n",
        }
    )
    assert strongly_connected(graph) == [["app.forms", "app.models"]]
    assert cycle_in(["app.forms", "app.models"], graph) == ["app.forms", "app.models", "app.forms"]
    report = cycles_report(graph)
    assert "app/forms.py:1  app.forms imports app.models" in report
    assert "app/models.py:4  app.models imports app.forms" in report


def test_a_cycle_through_type_checking_imports_is_found():
    graph = graph_of(
        {
            "app/__init__.py": "",
            "app/a.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.b import B\n"
            ),
            "app/b.py": "import app.c\n",
            "app/c.py": "from . import a\n",
        }
    )
    assert strongly_connected(graph) == [["app.a", "app.b", "app.c"]]


def test_a_package_importing_its_own_submodules_is_no_cycle():
    graph = graph_of(
        {
            "app/__init__.py": "",
            "app/judging/__init__.py": "from . import da\nfrom .da import FORM\n",
            "app/judging/base.py": "import json\n",
            "app/judging/da.py": "from .base import Form\nfrom app.judging.base import Form\n",
            "app/views.py": "from app.judging import da, FORMS\n",
        }
    )
    assert strongly_connected(graph) == []
    assert set(graph["app.views"]) == {"app.judging", "app.judging.da"}
    assert set(graph["app.judging"]) == {"app.judging.da"}


def test_importing_a_submodule_from_outside_runs_its_package():
    """`from app.judging.base import Form` runs app/judging/__init__.py first: when that
    imports back the importer, it is a cycle (an ImportError waiting for the first import)."""
    graph = graph_of(
        {
            "app/__init__.py": "",
            "app/judging/__init__.py": "from . import da\n",
            "app/judging/base.py": "",
            "app/judging/da.py": "from app.models import Judgment\n",
            "app/models.py": "from app.judging.base import Form\n",
        }
    )
    assert strongly_connected(graph) == [["app.judging", "app.judging.da", "app.models"]]


@pytest.mark.parametrize(
    "source, target",
    [
        ("from ..b import x", "pkg.b"),  # from pkg/sub/m.py: two levels up
        ("from . import n", "pkg.sub.n"),
        ("from .n import f", "pkg.sub.n"),
        ("from pkg.b import f", "pkg.b"),
        ("from pkg import b", "pkg.b"),
        ("from pkg import f", "pkg"),
        ("import pkg.sub.n", "pkg.sub.n"),
    ],
)
def test_each_way_of_importing_resolves_to_the_module(source, target):
    graph = graph_of(
        {
            "pkg/__init__.py": "",
            "pkg/b.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/sub/n.py": "",
            "pkg/sub/m.py": f"import os\n{source}\n",
        }
    )
    assert target in graph["pkg.sub.m"]
