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


#: The names whose calls touch the session, the sidebar or the data: never at a page's top.
SESSION_ROOTS = frozenset({"st", "streamlit", "sb", "track", "cache"})


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def top_level_problems(text: str) -> list[str]:
    """What a page's module level holds besides its docstring, imports, constants, function
    and class definitions, and one final ``page()`` call.

    A constant is an assignment to plain names whose value calls nothing in
    :data:`SESSION_ROOTS` (literals, names, ``pd.DataFrame(...)``, ``report`` or ``ch``
    helpers are fine: they compute the same thing on every run).  Loops, ifs, ``with``
    blocks and bare calls belong in the page's functions, which :func:`page` calls.
    """
    body = ast.parse(text).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    last = body[-1] if body else None
    ends = (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and isinstance(last.value.func, ast.Name)
        and last.value.func.id == "page"
        and not last.value.args
        and not last.value.keywords
    )
    problems = [] if ends else ["does not end with page()"]
    for node in body[:-1] if ends else body:
        kept = ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef
        if isinstance(node, kept):
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            calls = [
                _root(c.func) for c in ast.walk(node.value or ast.Constant(None))
                if isinstance(c, ast.Call)
            ]  # fmt: skip
            if all(isinstance(t, ast.Name) for t in targets) and not set(calls) & SESSION_ROOTS:
                continue
        problems.append(f"line {node.lineno}: {type(node).__name__} at module level")
    return problems


@pytest.mark.parametrize("path", sorted(ROOT.glob("app_pages/*.py")), ids=_module)
def test_a_page_is_functions_and_one_page_call(path: Path) -> None:
    """Every page is drawn by its ``page()`` function, called once at the end: at module
    level only imports, constants and definitions (:func:`top_level_problems`)."""
    assert top_level_problems(path.read_text()) == [], path.name


def test_the_page_check_sees_statements_at_module_level() -> None:
    """The checker itself: constants pass, session calls, loops, ifs, withs and a missing
    final ``page()`` do not."""
    good = (
        '"""Doc."""\nimport numpy as np\nfrom app_lib import charts as ch\nX = 1\n'
        "T = pd.DataFrame({'a': [1]})\nsaid = report.escape_markdown\nY: int = 2\n"
        "class A:\n    pass\ndef page():\n    st.title('t')\n\n\npage()\n"
    )
    assert top_level_problems(good) == []
    bad = (
        "import streamlit as st\ndata, s = sb.context()\nx = st.columns(2)\n"
        "for i in range(2):\n    pass\nif x:\n    pass\nwith x[0]:\n    pass\n"
        "st.title('t')\ndef page():\n    pass\n"
    )
    assert top_level_problems(bad) == [
        "does not end with page()",
        "line 2: Assign at module level",
        "line 3: Assign at module level",
        "line 4: For at module level",
        "line 6: If at module level",
        "line 8: With at module level",
        "line 10: Expr at module level",
    ]
    assert top_level_problems(good.replace("\n\n\npage()\n", "\npage(1)\n")) == [
        "does not end with page()",
        "line 12: Expr at module level",
    ]
