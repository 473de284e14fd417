"""The architecture, checked: imports go down the layers only, with no circle.

The graph is built with :mod:`ast` from every module of ``tiecore/``, ``app_lib/``,
``app_pages/`` and ``app.py``, counting every import statement wherever it stands --
inside functions and ``TYPE_CHECKING`` blocks too -- so that a circle cannot hide in
an import made at call time.  An import inside a function says on its first line why
it is not at the module's top (``# lazy: reason``: a measured start-up cost, or a
circle), unless it is of a heavy third-party package (:data:`HEAVY`); third-party
edges leave the project and are not part of the graph.  Such an import is one of the
two ways to be lazy; the other is a package's ``_lazy.attach_stub`` facade over its
public names, and there is no third (:func:`other_lazy_mechanisms`).

The layers, lowest first (``docs/design.md`` says why each sits where it does)::

    errors, version, _lazy   the error types; the version number; the lazy facades' helper
    options           every option's constraint, declared once
    io                reading runs, qrels and LETOR files from anything
    engine            judgments, rankings and tie groups, per-rank profiles, moments
    measures          Measure, the registry and one module per measure family
    evaluation        the one evaluation core, run by run, in or across processes
    stats             statistics over per-query values (tests, intervals, ranks)
    spread, distributed, interop   public entry points over the evaluation
    metrics, compare, pytrec   the array API; comparing systems; pytrec_eval's evaluator
    ir_measures_provider   tiecore as an ir_measures provider
    report            tables, effects and every writer
    explain           the math the explorer draws (it uses report's effect rules)
    cli, __main__     the ``tiecore`` command
    app_lib, app_pages, app   the explorer

A module may import its own package and anything in a lower layer, never a higher
one; nothing inside ``tiecore`` imports the lazy facade ``tiecore/__init__.py``.
"""

from __future__ import annotations

import ast
import graphlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The layers, lowest first; a module belongs to the longest prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("tiecore.errors", "tiecore.version", "tiecore._lazy"),
    ("tiecore.options",),
    ("tiecore.io",),
    ("tiecore.engine",),
    ("tiecore.measures",),
    ("tiecore.evaluation",),
    ("tiecore.stats",),
    ("tiecore.spread", "tiecore.distributed", "tiecore.interop"),
    ("tiecore.metrics", "tiecore.compare", "tiecore.pytrec"),
    ("tiecore.ir_measures_provider",),
    ("tiecore.report",),
    ("tiecore.explain",),
    ("tiecore.cli",),
    ("tiecore.__main__",),
    ("app_lib",),
    ("app_pages",),
    ("app",),
)


def module_name(path: Path) -> str:
    """``tiecore/io/trec.py`` -> ``tiecore.io.trec``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    """Every module of the project by its dotted name."""
    paths = [*ROOT.glob("tiecore/**/*.py"), *ROOT.glob("app_lib/*.py")]
    paths += [*ROOT.glob("app_pages/*.py"), ROOT / "app.py"]
    return {module_name(path): path for path in paths}


def imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that ``name`` (at ``path``) imports, wherever the import stands.

    ``from package import name`` is an edge to ``package.name`` when that is a module,
    else to ``package``; a relative import is resolved against ``name``'s package.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # import a.b.c: the module a.b.c
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each project module and the project modules it imports."""
    modules = project_modules()
    return {name: imported(name, path, modules) for name, path in modules.items()}


def layer(name: str) -> tuple[int, str]:
    """The layer index of ``name`` and the prefix that placed it there."""
    best = (-1, "")
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > len(best[1]):
                best = (index, prefix)
    return best


def test_every_module_has_a_layer():
    unplaced = sorted(
        name for name in project_modules() if name != "tiecore" and layer(name)[0] < 0
    )
    assert unplaced == []


def test_no_import_circle():
    """graphlib's topological sort fails with the circle it met."""
    try:
        tuple(graphlib.TopologicalSorter(import_graph()).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"import circle: {' -> '.join(error.args[1])}")


def test_imports_go_down_only():
    upward = []
    for name, targets in import_graph().items():
        if name == "tiecore":
            continue
        here, home = layer(name)
        for target in targets:
            if target == "tiecore":
                if name.startswith("tiecore."):
                    upward.append(f"{name} -> tiecore (the lazy facade)")
                continue
            there, prefix = layer(target)
            if there > here or (there == here and prefix != home):
                upward.append(f"{name} -> {target}")
    assert sorted(upward) == []


def test_the_graph_sees_imports_inside_functions(tmp_path):
    """The checker itself: an import inside a function body is an edge."""
    module = tmp_path / "late.py"
    module.write_text("def f():\n    from tiecore.io import read_run\n    return read_run\n")
    modules = {"tiecore.io": ROOT / "tiecore/io/__init__.py", "late": module}
    assert imported("late", module, modules) == {"tiecore.io"}


#: Third-party packages heavy enough that importing them inside a function needs no
#: comment: being on this list is the reason (each costs tens of milliseconds to seconds).
HEAVY = frozenset(
    "pandas pyarrow scipy dask distributed ir_measures pytrec_eval plotly kaleido streamlit".split()
)

#: The comment a function-level import carries on its first line, with its reason after it.
LAZY = re.compile(r"# lazy: \S")


def unexplained_lazy_imports(name: str, path: Path) -> list[str]:
    """The imports inside a function body of ``name`` that give no ``# lazy: reason``.

    An import belongs at the module's top unless importing it there would cost start-up
    time or close an import circle; the comment on the statement's first line says which
    (``# lazy: scipy.stats (~0.5 s) only for the t test``, ``# lazy: import circle with
    tiecore.x``).  Heavy third-party packages (:data:`HEAVY`) need no comment.
    """
    text = path.read_text()
    lines = text.splitlines()
    found: dict[int, str] = {}
    for function in ast.walk(ast.parse(text, str(path))):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                tops = {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                tops = {"tiecore" if node.level else (node.module or "").partition(".")[0]}
            else:
                continue
            if tops <= HEAVY or LAZY.search(lines[node.lineno - 1]):
                continue
            found[node.lineno] = f"{name}:{node.lineno} {lines[node.lineno - 1].strip()}"
    return [found[line] for line in sorted(found)]


def test_function_level_imports_give_a_reason():
    """Every import inside a function of ``tiecore`` is a heavy package or says why it
    is not at the module's top."""
    unexplained = [
        line
        for name, path in project_modules().items()
        if name == "tiecore" or name.startswith("tiecore.")
        for line in unexplained_lazy_imports(name, path)
    ]
    assert unexplained == []


def test_the_lazy_check_sees_unexplained_imports(tmp_path):
    """The checker itself: a project or light module imported in a function needs the
    comment, a heavy one does not, and a module-level import is not its business."""
    module = tmp_path / "late.py"
    module.write_text(
        "import json\n"
        "def f():\n"
        "    import pandas as pd\n"
        "    from scipy import stats\n"
        "    import json\n"
        "    from tiecore.io import read_run\n"
        "    from . import sibling  # lazy: import circle with late.sibling\n"
        "    from tiecore.engine import (  # lazy: engine.x (~5 ms) only for -q\n"
        "        budget,\n"
        "    )\n"
        "    def g():\n"
        "        import numpy as np  # only for g\n"
        "    import pyarrow.compute as pc, json\n"
        "    return pd, stats, json, read_run, sibling, budget, g, pc\n"
    )
    assert unexplained_lazy_imports("late", module) == [
        "late:5 import json",
        "late:6 from tiecore.io import read_run",
        "late:12 import numpy as np  # only for g",
        "late:13 import pyarrow.compute as pc, json",
    ]


def _attach_stub_call(value: ast.expr) -> bool:
    """Whether ``value`` is ``_lazy.attach_stub(...)`` (or ``attach_stub(...)``)."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    return (isinstance(func, ast.Attribute) and func.attr == "attach_stub") or (
        isinstance(func, ast.Name) and func.id == "attach_stub"
    )


def other_lazy_mechanisms(name: str, path: Path) -> list[str]:
    """The laziness in ``name`` (at ``path``) that is neither of the house's two idioms.

    The house has one lazy facade for its own public names -- a package's
    ``__init__.py`` binds ``__getattr__, __dir__ = _lazy.attach_stub(__name__,
    __file__)`` over its ``__init__.pyi`` -- and for everything else an import inside the
    function that needs it (:func:`unexplained_lazy_imports`).  Found here: a module-level
    ``__getattr__`` bound any other way or anywhere else (a ``def``, an assignment), a
    name made on demand with ``globals()[...] = ...`` or ``globals().update(...)``, and a
    lazy import proxy: a class whose ``__getattr__`` or ``__getattribute__`` imports.
    """
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__getattr__":
            found.append(f"{name}:{node.lineno} module-level def __getattr__")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {
                leaf.id
                for target in targets
                for leaf in ast.walk(target)
                if isinstance(leaf, ast.Name)
            }
            facade = path.name == "__init__.py" and _attach_stub_call(node.value)
            if "__getattr__" in names and not facade:
                found.append(f"{name}:{node.lineno} module-level __getattr__ not from attach_stub")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target, how = node.func.value, f"globals().{node.func.attr}(...)"
            if node.func.attr not in ("update", "setdefault", "__setitem__"):
                continue
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            target, how = node.value, "globals()[...] ="
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if (
                    isinstance(item, ast.FunctionDef)
                    and item.name in ("__getattr__", "__getattribute__")
                    and any(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(item))
                ):
                    found.append(f"{name}:{item.lineno} {node.name}.{item.name} imports (a proxy)")
            continue
        else:
            continue
        if (
            isinstance(target, ast.Call)
            and isinstance(target.func, ast.Name)
            and target.func.id == "globals"
        ):
            found.append(f"{name}:{node.lineno} {how}")
    return sorted(set(found), key=lambda line: int(line.split(":")[1].split()[0]))


def test_one_lazy_facade_and_function_level_imports_only():
    """Laziness is done two ways: ``_lazy.attach_stub`` for a package's public names,
    an import inside a function for the rest; no module ``__getattr__`` elsewhere, no
    names built on demand, no lazy proxy objects."""
    found = [
        line
        for name, path in project_modules().items()
        for line in other_lazy_mechanisms(name, path)
    ]
    assert found == []


def test_the_lazy_mechanism_check_sees_each_other_way(tmp_path):
    """The checker itself: the facades' line passes in a package's ``__init__.py`` only;
    a module ``__getattr__``, ``globals()`` writes and a proxy class are found; a class's
    ``__getattr__`` that imports nothing and a read of ``globals()`` are not."""
    module = tmp_path / "late.py"
    module.write_text(
        "__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)\n"
        "class Proxy:\n"
        "    def __getattr__(self, name):\n"
        "        import pyarrow.compute\n"
        "        return getattr(pyarrow.compute, name)\n"
        "class Columns:\n"
        "    def __getattr__(self, name):\n"
        "        return self.column(name)\n"
        "def __getattr__(name):\n"
        "    globals()[name] = value = globals()['make'](name)\n"
        "    globals().update({name: value})\n"
        "    return value\n"
    )
    assert other_lazy_mechanisms("late", module) == [
        "late:1 module-level __getattr__ not from attach_stub",
        "late:3 Proxy.__getattr__ imports (a proxy)",
        "late:9 module-level def __getattr__",
        "late:10 globals()[...] =",
        "late:11 globals().update(...)",
    ]
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from tiecore import _lazy\n__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)\n"
    )
    assert other_lazy_mechanisms("pkg", package / "__init__.py") == []


#: The longest module and the longest function (body lines, docstring left out) allowed.
MAX_MODULE_LINES = 850
MAX_FUNCTION_LINES = 90


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def test_modules_and_functions_stay_short():
    long = []
    for name, path in project_modules().items():
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            long.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if _body_lines(node) > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {_body_lines(node)} lines")
    assert sorted(long) == []


def _owner_package(module: str, modules: dict[str, Path]) -> str:
    """The package a module belongs to: itself for a package, else its parent."""
    return module if modules[module].name == "__init__.py" else module.rpartition(".")[0]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_reaches(name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    """Private names (``_x``, or any name in a private module) that ``name`` reaches in
    another package: ``from a.b import _x``, ``from a._b import x`` or ``b._x`` after
    ``from a import b``, where ``name`` is not inside ``a`` (or ``a.b`` for a package).

    A private name is a module's or a package's own business; what another package
    needs is a service and gets a public name.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    found, aliases = [], {}

    def outside(owner: str) -> bool:
        home = _owner_package(owner, modules)
        return not (name == home or name.startswith(home + "."))

    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            full = f"{base}.{alias.name}"
            if full in modules:  # a module: remembered for attribute access
                aliases[alias.asname or alias.name] = full
                if _private(alias.name) and outside(full):
                    found.append(f"{name}:{node.lineno} {full}")
            elif base in modules and outside(base):
                if _private(alias.name) or any(map(_private, base.split("."))):
                    found.append(f"{name}:{node.lineno} {full}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and outside(aliases[node.value.id])
        ):
            found.append(f"{name}:{node.lineno} {aliases[node.value.id]}.{node.attr}")
    return found


def test_no_private_name_across_packages():
    modules = project_modules()
    reached = [
        line for name, path in modules.items() for line in private_reaches(name, path, modules)
    ]
    assert sorted(reached) == []


def test_the_private_check_sees_attribute_access(tmp_path):
    """The checker itself: ``b._x`` after ``from a import b`` counts, inside ``a`` it does not."""
    module = tmp_path / "late.py"
    module.write_text("from tiecore.engine import sampling\nsampling._Layout\n")
    modules = {
        "tiecore.engine": ROOT / "tiecore/engine/__init__.py",
        "tiecore.engine.sampling": ROOT / "tiecore/engine/sampling.py",
        "tiecore.measures.late": module,
        "tiecore.engine.late": module,
    }
    assert private_reaches("tiecore.measures.late", module, modules) == [
        "tiecore.measures.late:2 tiecore.engine.sampling._Layout"
    ]
    assert private_reaches("tiecore.engine.late", module, modules) == []


def private_attributes(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each private attribute a class keeps (``_x: T`` in its body, ``self._x = ...``
    in a method) -> the packages whose classes keep one of that name."""
    owned: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = _owner_package(name, modules)
        for cls in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(cls, ast.ClassDef):
                continue
            for node in ast.walk(cls):
                kept = None
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    kept = node.target.id
                elif (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in ("self", "cls")
                ):
                    kept = node.attr
                if kept and _private(kept):
                    owned.setdefault(kept, set()).add(package)
    return owned


def private_attribute_reaches(
    name: str, path: Path, modules: dict[str, Path], owned: dict[str, set[str]]
) -> list[str]:
    """``x._a`` in ``name`` where ``_a`` is a private attribute that only classes of other
    packages keep: an object handed in (a parameter) read past its public surface."""
    package = _owner_package(name, modules)
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            and node.attr in owned
            and package not in owned[node.attr]
        ):
            found.append(f"{name}:{node.lineno} .{node.attr}")
    return found


def test_no_private_attribute_of_another_packages_class():
    modules = project_modules()
    owned = private_attributes(modules)
    reached = [
        line
        for name, path in modules.items()
        for line in private_attribute_reaches(name, path, modules, owned)
    ]
    assert sorted(reached) == []


def test_the_private_attribute_check_sees_a_parameters_attribute(tmp_path):
    """The checker itself: ``judgments._kept`` outside the engine counts, inside it does not."""
    keeper = tmp_path / "keeper.py"
    keeper.write_text(
        "class Judgments:\n    _kept: dict\n    def put(self):\n        self._x = 1\n"
    )
    reader = tmp_path / "reader.py"
    reader.write_text("def f(judgments):\n    return judgments._kept, judgments._x, self._y\n")
    modules = {
        "tiecore.engine": ROOT / "tiecore/engine/__init__.py",
        "tiecore.engine.keeper": keeper,
        "tiecore.measures": ROOT / "tiecore/measures/__init__.py",
        "tiecore.measures.reader": reader,
        "tiecore.engine.reader": reader,
    }
    owned = private_attributes(modules)
    assert owned == {"_kept": {"tiecore.engine"}, "_x": {"tiecore.engine"}}
    assert private_attribute_reaches("tiecore.measures.reader", reader, modules, owned) == [
        "tiecore.measures.reader:2 ._kept",
        "tiecore.measures.reader:2 ._x",
    ]
    assert private_attribute_reaches("tiecore.engine.reader", reader, modules, owned) == []
