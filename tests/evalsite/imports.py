"""Reading the project's imports from its source, for the layer and import-cycle tests.

Every import statement counts: at the top of a module, inside a function, under
`if TYPE_CHECKING:`. A cycle that only a lazy import closes is still a cycle a reader has to
hold in their head, and the next top-level import turns it into an ImportError.
"""

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = (
    "nlgdata",
    "outbound",
    "jobs",
    "annotation",
    "ranking",
    "generation",
    "judges",
    "api",
    "evalsite",
)
# Directories of scripts, run with the directory on sys.path: their modules import each
# other by bare name (`import simulation_tools`).
SCRIPT_DIRS = ("research",)


def python_files(top: str) -> Iterator[Path]:
    yield from sorted((REPO / top).rglob("*.py"))


def absolute_imports(tree: ast.AST) -> set[str]:
    """The modules a tree names in `import a.b` and `from a.b import c` (not relative ones)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


@dataclass(frozen=True)
class Source:
    path: str  # relative to the repository, as a failure message names it
    text: str
    is_package: bool  # an __init__.py: relative imports start from the package itself


def project_sources() -> dict[str, Source]:
    """Every module of the project by its dotted name."""
    sources = {}
    for package in PACKAGES:
        for path in python_files(package):
            parts = path.relative_to(REPO).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            sources[name] = Source(str(path.relative_to(REPO)), path.read_text(), is_package)
    for directory in SCRIPT_DIRS:
        for path in python_files(directory):
            sources[path.stem] = Source(str(path.relative_to(REPO)), path.read_text(), False)
    return sources


@dataclass(frozen=True)
class Import:
    path: str
    line: int


def _known(name: str, modules: Mapping[str, object]) -> str | None:
    """The project module `name` is, or is inside (the longest such prefix)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in modules:
            return prefix
    return None


def _targets(node: ast.stmt, module: str, source: Source, modules: Mapping) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if found := _known(alias.name, modules):
                yield found
        return
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        package = module.split(".")
        if not source.is_package:
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    for alias in node.names:
        # `from pkg import name` imports the submodule when there is one, else pkg itself.
        if f"{base}.{alias.name}" in modules:
            yield f"{base}.{alias.name}"
        elif found := _known(base, modules):
            yield found


def _with_parents(target: str, module: str, modules: Mapping) -> Iterator[str]:
    """The target, and the packages above it that importing it runs first: those the
    importing module is not inside (its own package is run already)."""
    parts = target.split(".")
    for end in range(1, len(parts)):
        package = ".".join(parts[:end])
        if package in modules and not module.startswith(f"{package}."):
            yield package
    yield target


def import_graph(sources: Mapping[str, Source]) -> dict[str, dict[str, Import]]:
    """module -> {module it imports: the first statement that does}, self-imports left out.
    Importing `a.b.c` from outside `a.b` runs `a.b`'s __init__ too, so it counts."""
    graph: dict[str, dict[str, Import]] = {}
    for module, source in sources.items():
        edges = graph.setdefault(module, {})
        for node in ast.walk(ast.parse(source.text, source.path)):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(node, module, source, sources):
                    for imported in _with_parents(target, module, sources):
                        if imported != module:
                            edges.setdefault(imported, Import(source.path, node.lineno))
    return graph


def strongly_connected(graph: Mapping[str, Mapping[str, object]]) -> list[list[str]]:
    """Tarjan's components of more than one module, without recursion (the graph is deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def cycle_in(component: list[str], graph: Mapping[str, Mapping[str, Import]]) -> list[str]:
    """One shortest way round from the component's first module back to it."""
    start = component[0]
    members = set(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child in members and child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")
