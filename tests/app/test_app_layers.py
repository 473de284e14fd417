"""The explorer's code keeps its layers: no import circle, public tiecore names, tiecore's ranks.

The import graph is read with :mod:`ast` (imports inside functions counted), so a
circle hidden in a function-level import fails here as one at the top does.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP_FILES = sorted([ROOT / "app.py", *ROOT.glob("app_lib/*.py"), *ROOT.glob("app_pages/*.py")])
#: The app layer from the bottom up: a module imports only modules listed before it.
LAYERS = (
    "settings",
    "glossary",
    "recent",
    "charts",
    "rank_tables",
    "data",
    "warm",
    "cache",
    "warmup",
    "track",
    "sidebar",
)


def _module(path: Path) -> str:
    if path.name == "app.py":
        return "app"
    return f"{path.parent.name}.{path.stem}".removesuffix(".__init__")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module(path): path for path in APP_FILES}
    return {name: _imports(path) & set(modules) - {name} for name, path in modules.items()}


def test_app_lib_has_the_modules_the_layers_name() -> None:
    assert {p.stem for p in ROOT.glob("app_lib/*.py")} - {"__init__"} == set(LAYERS)


def test_the_app_imports_have_no_circle() -> None:
    graph = _graph()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            assert state.get(target) != 1, " -> ".join([*path, node, target])
            if target not in state:
                visit(target, [*path, node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


@pytest.mark.parametrize("name", LAYERS)
def test_app_lib_imports_only_lower_layers(name: str) -> None:
    imported = _graph()[f"app_lib.{name}"]
    assert not {m for m in imported if m.startswith("app_pages")}, name
    higher = {f"app_lib.{n}" for n in LAYERS[LAYERS.index(name) :]}
    assert not imported & higher, (name, sorted(imported & higher))


@pytest.mark.parametrize("path", APP_FILES, ids=_module)
def test_the_app_uses_public_tiecore_names_only(path: Path) -> None:
    """No ``tiecore.x._private`` module and no ``_private`` name imported from tiecore."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tiecore"):
            names = [*node.module.split("."), *(alias.name for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [
                p for a in node.names if a.name.startswith("tiecore") for p in a.name.split(".")
            ]
        else:
            continue
        assert not [n for n in names if n.startswith("_")], (path.name, node.lineno, names)
        assert "cli" not in names, (path.name, node.lineno, "the app does not import the CLI")


@pytest.mark.parametrize("path", sorted(ROOT.glob("app_pages/*.py")), ids=_module)
def test_pages_rank_with_tiecore_stats(path: Path) -> None:
    """A rank a page shows comes from :mod:`tiecore.stats.ranks` (compare ranks within a
    tolerance there), never ``DataFrame.rank`` or ``scipy.stats.rankdata``."""
    found = re.findall(r"\.rank\(|rankdata", path.read_text())
    assert not found, (path.name, found)


@pytest.mark.parametrize(
    "path", sorted([*ROOT.glob("app_lib/*.py"), *ROOT.glob("app_pages/*.py")]), ids=_module
)
def test_no_app_or_tiecore_module_is_imported_inside_a_function(path: Path) -> None:
    """Lazy imports only for heavy third-party modules (kaleido, plotly.io).  ``app.py`` alone
    imports ``app_lib`` late, on purpose: the page's name shows before pandas and plotly load."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    names = [inner.module or ""]
                elif isinstance(inner, ast.Import):
                    names = [alias.name for alias in inner.names]
                else:
                    continue
                local = [n for n in names if n.split(".")[0] in ("tiecore", "app_lib")]
                assert not local, (path.name, node.name, inner.lineno, local)


def test_the_app_caches_results_in_one_way() -> None:
    """Results are kept by :func:`app_lib.cache.memo` in :mod:`app_lib.recent`'s stores, never
    by Streamlit's ``st.cache_data`` (a second mechanism, with its own bounds and scopes)."""
    for path in APP_FILES:
        assert "cache_data" not in path.read_text(), path.name


def test_memo_keeps_a_result_once_and_hands_out_copies() -> None:
    """A result is computed once per key; a caller that changes its copy changes nothing kept."""
    import pandas as pd  # here: the other tests of this file read sources only

    from app_lib import cache

    calls = []

    def compute():
        calls.append(1)
        return {"table": pd.DataFrame({"x": [1.0, 2.0]}), "note": "n"}

    first = cache.memo("anatomy", ("test-memo", 1), compute, 4, True)
    first["table"]["x"] = 0.0
    first["table"]["y"] = 1
    again = cache.memo("anatomy", ("test-memo", 1), compute, 4, True)
    assert len(calls) == 1
    assert again["table"].columns.tolist() == ["x"] and again["table"]["x"].tolist() == [1.0, 2.0]
