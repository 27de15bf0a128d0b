"""The direction of dependence (docs/architecture.md): ranking and generation use
annotation, the API (api) uses those three and only the project imports it, the project
(evalsite) uses all of them and no app imports it, annotation knows neither of the others
(not by import, not by URL), and nlgdata, which all may use, uses none of them; jobs (the
background jobs' claim and heartbeat), which the apps use, uses none of them either; the
engines under ranking/engine and generation/backends use nlgdata (and outbound, the one
door for HTTP requests to servers outside) and nothing else of ours, nor Django; outbound
uses nothing of ours, nor Django, and nothing else opens a connection.

Imports inside functions count too. Relative imports stay inside their package: ruff's
TID252 (pyproject.toml) refuses those that climb to a parent.
"""

import ast
import re

import pytest

from tests.evalsite.imports import REPO, absolute_imports, python_files


def imported_modules(app: str) -> dict[str, set[str]]:
    return {
        str(path.relative_to(REPO)): absolute_imports(ast.parse(path.read_text()))
        for path in python_files(app)
    }


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
        (
            "outbound",
            ("django", "nlgdata", "jobs", "annotation", "ranking", "generation", "judges", "api")
            + ("evalsite",),
        ),
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


# Modules that open connections or speak a network protocol; outbound/ is the only place
# that may use them, so that every request to a server outside is pinned, has a deadline
# and bounded reads.
NETWORK_MODULES = {
    "http.client",
    "urllib.request",
    "urllib3",
    "requests",
    "httpx",
    "aiohttp",
    "ftplib",
    "smtplib",
    "xmlrpc.client",
}
SOCKET_CALLS = {"create_connection", "socket", "getaddrinfo", "socketpair", "fromfd"}
PACKAGES = ("nlgdata", "jobs", "annotation", "ranking", "generation", "judges", "api", "evalsite")
# The users' client of the platform's own API: it runs in their notebooks (standard library
# only, so the file can be copied alone); the server never imports it.
NOT_THE_SERVERS = {"api/client.py"}


def network_uses(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            names = {f"{node.value.id}.{node.attr}"}
        else:
            continue
        found |= {
            name
            for name in names
            if name.split(".")[0] in NETWORK_MODULES
            or name in NETWORK_MODULES
            or name in {f"socket.{call}" for call in SOCKET_CALLS}
        }
    return found


def test_only_outbound_opens_connections():
    """Hosted backends, judges, webhooks and Prolific's client all go through outbound/."""
    offenders = {}
    for package in PACKAGES:
        for path in python_files(package):
            name = str(path.relative_to(REPO))
            uses = network_uses(ast.parse(path.read_text()))
            if uses and name not in NOT_THE_SERVERS:
                offenders[name] = sorted(uses)
    assert offenders == {}


def test_the_layer_check_sees_each_way_of_opening_a_connection():
    for source in (
        "import urllib.request",
        "from urllib.request import urlopen",
        "from urllib import request",
        "import http.client",
        "from http import client",
        "import requests",
        "socket.create_connection(('x', 1))",
        "from socket import create_connection",
    ):
        assert network_uses(ast.parse(source)), source
    assert not network_uses(ast.parse("import socket; socket.gethostname()"))
    assert not network_uses(ast.parse("from urllib.parse import urlsplit"))
