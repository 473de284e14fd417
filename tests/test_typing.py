"""The public surface is typed: mypy finds no error in the facades, the public modules
behind them, or the README's and docs' examples.

The examples are the ```python blocks of README.md and docs/*.md that import tiecore,
each in a file of its own (as tests/test_readme.py runs each in a namespace of its own).
The public modules are the facades' stubs (``__init__.pyi``: what a type checker reads
for ``tiecore``, ``tiecore.io`` and ``tiecore.report``), the modules their names come
from, and the facades' ``__init__.py``.  mypy's settings are pyproject.toml's
``[tool.mypy]``: errors in the files given only (the rest of the package is read for
its types), peers without type information as ``Any``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from mypy import api
from test_readme import BLOCKS

from tiecore._lazy import read_stub

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"
STUBS = sorted(ROOT.glob("tiecore/**/__init__.pyi"))


def examples() -> dict[str, str]:
    """File name -> code of every python block of the README and docs that imports tiecore."""
    found = {}
    for block in BLOCKS:
        pages = block.page == "README.md" or block.page.startswith("docs/")
        if (
            block.lang == "python"
            and pages
            and re.search(r"^(from|import) tiecore\b", block.body, re.M)
        ):
            found[re.sub(r"\W", "_", f"{block.page}_line{block.line}") + ".py"] = block.body
    return found


def public_modules() -> list[Path]:
    """The stubs and every module a stub takes a name from (a package: its stub or init)."""
    files = set(STUBS)
    for stub in STUBS:
        package = ".".join(stub.parent.relative_to(ROOT).parts)
        for home, _ in read_stub(package, str(stub)).values():
            path = ROOT.joinpath(*home.split("."))
            for candidate in (path / "__init__.pyi", path / "__init__.py", path.with_suffix(".py")):
                if candidate.is_file():
                    files.add(candidate)
                    break
    return sorted(files)


def mypy(files: list[Path | str]) -> list[str]:
    """mypy's error lines for ``files`` (``path:line: error: ...``), run from the root."""
    cache = ROOT / ".mypy_cache"
    argv = ["--config-file", str(CONFIG), "--cache-dir", str(cache), "--no-error-summary"]
    stdout, stderr, status = api.run([*argv, *map(str, files)])
    assert status in (0, 1) and not stderr, stderr  # 2: mypy itself failed
    return [line for line in stdout.splitlines() if ": error:" in line]


def test_examples_and_public_modules_type_check(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    code = examples()
    assert len(code) >= 10  # the README's and docs/python.md's examples, at least
    for name, body in code.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    modules = public_modules()
    assert len(modules) >= 20  # the stubs, evaluation.core, io.readers, spread, compare...
    assert mypy([*sorted(tmp_path.glob("*.py")), *modules]) == []


def test_the_facades_type_check(monkeypatch) -> None:
    """The ``__init__.py`` beside each stub (mypy reads one of the two per run), and the
    helper they share."""
    monkeypatch.chdir(ROOT)
    assert mypy([*(stub.with_suffix(".py") for stub in STUBS), ROOT / "tiecore/_lazy.py"]) == []


def test_the_stubs_re_export_every_name() -> None:
    """``from .m import a as a``: the redundant alias marks a re-export (PEP 484), so that a
    checker (pyright's and mypy's strict modes too) lets users import it."""
    for stub in STUBS:
        for line in stub.read_text().splitlines():
            if line.startswith("from "):
                assert re.fullmatch(r"from \.[\w.]* import (\w+) as \1", line), f"{stub}: {line}"


def test_the_package_ships_its_types() -> None:
    """PEP 561's marker, and the stubs (which the facades read at run time too)."""
    assert (ROOT / "tiecore" / "py.typed").is_file()
    data = tomllib.loads(CONFIG.read_text())["tool"]["setuptools"]["package-data"]
    assert {"py.typed", "*.pyi"} <= set(data["*"])


def test_a_metrics_result_type_follows_its_flags(tmp_path, monkeypatch) -> None:
    """A float by default, an array with ``average=False``, a Spread with ``spread=True``;
    a misspelt option and a missing ``k`` are errors."""
    monkeypatch.chdir(ROOT)
    code = (
        "import numpy as np\nfrom tiecore import metrics\n"
        "y, s = np.array([[0, 1]]), np.array([[1.0, 1.0]])\n"
        "reveal_type(metrics.ndcg(y, s))\n"
        "reveal_type(metrics.reciprocal_rank(y, s, average=False))\n"
        "reveal_type(metrics.ndcg(y, s, average=False, spread=True, gain='exp'))\n"
        "reveal_type(metrics.hits_at_k(y, s, k=1, average=False))\n"
        "metrics.hits_at_k(y, s)\n"
        "metrics.ndcg(y, s, tiez='aware')\n"
    )
    (tmp_path / "flags.py").write_text(code)
    stdout = api.run(["--config-file", str(CONFIG), "--cache-dir", str(ROOT / ".mypy_cache"),
                      str(tmp_path / "flags.py")])[0]  # fmt: skip
    revealed = re.findall(r':(\d+): note: Revealed type is "([\w.]+)', stdout)
    assert revealed == [
        ("4", "float"),
        ("5", "numpy.ndarray"),
        ("6", "tiecore.metrics.Spread"),
        ("7", "numpy.ndarray"),
    ]
    assert set(re.findall(r":(\d+): error", stdout)) == {"8", "9"}
