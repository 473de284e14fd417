"""The explorer (``app.py``, ``app_lib/``, ``app_pages/``) uses public tiecore names only.

Public means what ``tiecore/__init__.pyi`` declares (what a type checker reads and
``tiecore.__all__`` lists): its names (``tiecore.evaluate``, ``tiecore.Measure``...),
and its public modules (``tiecore.report``, ``tiecore.explain``, ``tiecore.errors``...)
with their submodules.  A module with a stub of its own (``tiecore.report``,
``tiecore.io``) gives only its stub's names and its submodules.  Nothing private
(``_x``) anywhere.  Read with :mod:`ast`, imports inside functions counted, and
``tiecore.x`` attribute access too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tiecore._lazy import read_stub

ROOT = Path(__file__).resolve().parents[2]
APP_FILES = sorted([ROOT / "app.py", *ROOT.glob("app_lib/*.py"), *ROOT.glob("app_pages/*.py")])


def _stub(package: str) -> dict[str, tuple[str, str | None]]:
    path = ROOT.joinpath(*package.split("."), "__init__.pyi")
    return read_stub(package, str(path)) if path.is_file() else {}


TOP = _stub("tiecore")
#: The public modules: those the top-level stub declares (``from . import m as m``).
PUBLIC_MODULES = {home for home, attribute in TOP.values() if attribute is None}


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _module_ok(dotted: str) -> bool:
    """``tiecore.report.ranks``: under a public module, no private part, a real module."""
    parts = dotted.split(".")
    public = any(dotted == m or dotted.startswith(m + ".") for m in PUBLIC_MODULES)
    return public and not any(p.startswith("_") for p in parts) and _is_module(dotted)


def non_public(path: Path) -> list[tuple[str, int, str]]:
    """``(module, line, what)`` for each use of a non-public tiecore name in ``path``."""
    found = []
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                if name.startswith("tiecore.") and not _module_ok(name):
                    found.append((name, node.lineno, f"import {name}"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tiecore":
            module = node.module or ""
            names = [alias.name for alias in node.names]
            if module == "tiecore":
                bad = [n for n in names if n not in TOP]
                found += [(module, node.lineno, f"from tiecore import {n}") for n in bad]
                continue
            if not _module_ok(module):
                found.append((module, node.lineno, f"from {module} import {', '.join(names)}"))
                continue
            declared = _stub(module)
            for name in names:
                submodule = _is_module(f"{module}.{name}")
                if name.startswith("_") or (declared and name not in declared and not submodule):
                    found.append((module, node.lineno, f"from {module} import {name}"))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "tiecore"
            and node.attr not in TOP
        ):
            found.append(("tiecore", node.lineno, f"tiecore.{node.attr}"))
    return found


def test_the_stub_declares_what_the_app_needs() -> None:
    """The names the explorer takes from tiecore's top level, declared once in the stub."""
    needed = {"Measure", "DEFAULT_MEASURES", "split_measures", "memory_budget", "evaluate"}
    needed |= {"CORRECTIONS", "GAINS", "SAMPLES", "SEED", "TIEBREAKS", "InputError"}
    assert needed <= set(TOP)
    assert {"tiecore.report", "tiecore.explain", "tiecore.errors", "tiecore.io"} <= PUBLIC_MODULES
    assert not {"tiecore.options", "tiecore.measures", "tiecore.engine"} & PUBLIC_MODULES


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_app_uses_public_tiecore_names_only(path: Path) -> None:
    name = str(path.relative_to(ROOT))
    found = non_public(path)
    modules = {module for module, _, _ in found}
    assert modules == set(), (name, found)


def test_the_checker_sees_each_kind_of_use(tmp_path: Path) -> None:
    """The checker itself: a private module, a non-public module, a name the stub lacks,
    a name a facade's stub lacks and attribute access fail; public uses pass."""
    module = tmp_path / "page.py"
    module.write_text(
        "import tiecore\n"
        "from tiecore import Measure, report\n"
        "from tiecore.report import ranks, escape_markdown\n"
        "from tiecore.explain.views import iprec_curve\n"
        "from tiecore.errors import InputError\n"
        "from tiecore.options import GAINS\n"
        "from tiecore.io import _checked\n"
        "from tiecore.report import effects_helper\n"
        "from tiecore import engine\n"
        "import tiecore.measures.iprec\n"
        "def f():\n"
        "    from tiecore.engine import budget\n"
        "    return tiecore.options, tiecore.evaluate\n"
    )
    assert sorted((line, what) for _, line, what in non_public(module)) == [
        (6, "from tiecore.options import GAINS"),
        (7, "from tiecore.io import _checked"),
        (8, "from tiecore.report import effects_helper"),
        (9, "from tiecore import engine"),
        (10, "import tiecore.measures.iprec"),
        (12, "from tiecore.engine import budget"),
        (13, "tiecore.options"),
    ]
