"""The package's import graph: no cycles, and every import points down the layer picture of
docs/architecture.md.

Every module of ``paimon_engine`` is parsed with ``ast``; every ``import`` and ``from ... import`` in it (at module
level, in functions, in classes; relative ones resolved against the module's package) becomes an edge to the
most specific module of the package it names. Imports under ``if TYPE_CHECKING:`` never run, so they do not make a
cycle, but they still may not point up the layers.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ROOT = "paimon_engine"

#: top to bottom; a module may import modules of its own layer or of the layers below it. A module belongs to
#: the entry with the longest matching name (``a.b`` covers ``a.b`` and ``a.b.*``; the bare package name covers
#: only the package's ``__init__``). Keep this table and the one in docs/architecture.md the same.
LAYERS = [
    ("entry points", ["paimon_engine", "paimon_engine.__main__", "paimon_engine.cli", "paimon_engine.cli_commands",
                      "paimon_engine.demo", "paimon_engine.spark", "paimon_engine.rest.server"]),
    ("catalogs", ["paimon_engine.catalog"]),
    ("table API", ["paimon_engine.table", "paimon_engine.rest", "paimon_engine.rest.updates"]),
    ("scan", ["paimon_engine.scan"]),
    ("spec", ["paimon_engine.spec", "paimon_engine.iceberg_types"]),
    ("formats and indexes", ["paimon_engine.formats", "paimon_engine.index"]),
    ("expressions", ["paimon_engine.expressions"]),
    ("column batches", ["paimon_engine.batch", "paimon_engine.encoding"]),
    ("types", ["paimon_engine.types"]),
    ("foundation", ["paimon_engine.io", "paimon_engine.errors", "paimon_engine._parallel", "paimon_engine._speedups",
                    "paimon_engine._kernels", "paimon_engine._pykernels"]),
]


# ---------------------------------------------------------------------------
# the graph
# ---------------------------------------------------------------------------

def package_modules(src: Path, root: str = ROOT) -> dict:
    """module name -> (path, package name the module's relative imports start from)."""
    out = {}
    for path in sorted((src / root).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
            package = parts
        else:
            package = parts[:-1]
        out[".".join(parts)] = (path, ".".join(package))
    return out


def _type_checking_lines(tree) -> set:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                for child in node.body:
                    for sub in ast.walk(child):
                        if hasattr(sub, "lineno"):
                            lines.add(sub.lineno)
    return lines


def import_edges(modules: dict, root: str = ROOT) -> list:
    """[(importer, imported, path, line, type_checking_only)] for every import of a module of the package."""
    edges = []
    for name, (path, package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        typing_only = _type_checking_lines(tree)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
            for target in targets:
                if not (target == root or target.startswith(root + ".")):
                    continue
                while target not in modules and "." in target:   # ``import a.b.c`` of a name inside a.b
                    target = target.rsplit(".", 1)[0]
                if target != name:
                    edges.append((name, target, path, node.lineno, node.lineno in typing_only))
    return edges


def layer_of(module: str, layers=LAYERS, root: str = ROOT):
    """(index, layer name) of the most specific entry naming ``module``, or None."""
    best = None
    for i, (layer, names) in enumerate(layers):
        for entry in names:
            hit = module == entry if entry == root else (module == entry or module.startswith(entry + "."))
            if hit and (best is None or len(entry) > best[0]):
                best = (len(entry), i, layer)
    return None if best is None else best[1:]


def upward_imports(edges, layers=LAYERS, root: str = ROOT) -> list:
    """Messages for every import of a module from a higher layer."""
    out = []
    for src, dst, path, line, _ in edges:
        a, b = layer_of(src, layers, root), layer_of(dst, layers, root)
        if a is not None and b is not None and b[0] < a[0]:
            out.append(f"{_where(path, line)}: {src} ({a[1]}) imports {dst} ({b[1]}), a higher layer")
    return out


def import_cycles(edges) -> list:
    """Every cycle of runtime imports, one per strongly connected component, as a message naming each import
    (file:line) along the cycle."""
    graph, where = {}, {}
    for src, dst, path, line, typing_only in edges:
        if typing_only:
            continue
        graph.setdefault(src, set()).add(dst)
        graph.setdefault(dst, set())
        where.setdefault((src, dst), (path, line))
    index, low, stack, on_stack, comps = {}, {}, [], set(), []

    def strongconnect(v):   # Tarjan, iterative
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    out = []
    for comp in comps:
        members = set(comp)
        cycle = _one_cycle(comp[0], graph, members)
        steps = [f"  {a} -> {b}  ({_where(*where[(a, b)])})" for a, b in zip(cycle, cycle[1:])]
        out.append(f"import cycle among {', '.join(comp)}:\n" + "\n".join(steps))
    return out


def _one_cycle(start, graph, members):
    """The shortest path start -> ... -> start inside ``members`` (breadth first)."""
    prev, queue = {start: None}, [start]
    while queue:
        node = queue.pop(0)
        for w in sorted(graph[node] & members):
            if w == start:
                path = [node]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return path[::-1] + [start]
            if w not in prev:
                prev[w] = node
                queue.append(w)
    return [start, start]


def _where(path, line) -> str:
    try:
        path = Path(path).relative_to(REPO)
    except ValueError:
        pass
    return f"{path}:{line}"


# ---------------------------------------------------------------------------
# the package
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def graph():
    modules = package_modules(REPO)
    return modules, import_edges(modules)


def test_every_module_has_a_layer(graph):
    modules, _ = graph
    missing = [m for m in modules if layer_of(m) is None]
    assert not missing, "modules without a layer (add them to LAYERS and docs/architecture.md): " + ", ".join(missing)


def test_imports_point_down_the_layers(graph):
    _, edges = graph
    bad = upward_imports(edges)
    assert not bad, "imports that point up the layers:\n" + "\n".join(bad)


def test_no_import_cycles(graph):
    _, edges = graph
    cycles = import_cycles(edges)
    assert not cycles, "\n".join(cycles)


def test_architecture_page_lists_the_layers():
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    for layer, names in LAYERS:
        assert layer in page, f"docs/architecture.md does not name the layer {layer!r}"
        for name in names:
            assert f"`{name}`" in page, f"docs/architecture.md does not place `{name}` in a layer"


# ---------------------------------------------------------------------------
# the checker itself finds what it is meant to find
# ---------------------------------------------------------------------------

def _write(root: Path, rel: str, text: str):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_checker_reports_a_planted_upward_import_and_cycle(tmp_path):
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/low/__init__.py", "")
    _write(tmp_path, "pkg/low/a.py", "def f():\n    from ..high import b\n")          # upward, in a function
    _write(tmp_path, "pkg/high/__init__.py", "")
    _write(tmp_path, "pkg/high/b.py", "from pkg.low import a\nfrom . import c\n")
    _write(tmp_path, "pkg/high/c.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from .b import x\n")                          # typing only: no cycle
    layers = [("high", ["pkg.high"]), ("low", ["pkg.low"])]
    modules = package_modules(tmp_path, "pkg")
    edges = import_edges(modules, "pkg")
    assert ("pkg.low.a", "pkg.high.b") in {(e[0], e[1]) for e in edges}
    up = upward_imports(edges, layers, "pkg")
    assert len(up) == 1 and "pkg/low/a.py:2" in up[0] and "pkg.high.b (high)" in up[0]
    cycles = import_cycles(edges)
    assert len(cycles) == 1
    assert "pkg.high.b -> pkg.low.a" in cycles[0] and "pkg.low.a -> pkg.high.b" in cycles[0]
    assert "pkg.high.c" not in cycles[0]
