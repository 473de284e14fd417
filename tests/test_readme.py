"""The README is true as written: its examples run, and its install facts hold.

Every ```python block runs on its own, in a namespace of its own, from the repository root;
every line of a ```bash block that starts with ``tiecore `` runs through the command
line in-process (globs expanded as a shell would). The test extra must provide every
package that the tests, the package and the app import, so that the README's test
command works in a new virtual environment (.ci/run does exactly that).
"""

from __future__ import annotations

import ast
import contextlib
import glob
import importlib.metadata as metadata
import io
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tiecore.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", README, flags=re.S | re.M)
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def commands() -> list[str]:
    return [
        line.strip()
        for lang, body in BLOCKS
        if lang == "bash"
        for line in body.splitlines()
        if line.strip().startswith("tiecore ")
    ]


def test_readme_has_examples() -> None:
    assert sum(lang == "python" for lang, _ in BLOCKS) >= 2
    assert len(commands()) >= 5


PYTHON = [body for lang, body in BLOCKS if lang == "python"]


@pytest.mark.parametrize("k", range(len(PYTHON)))
def test_python_examples_run_each_on_its_own(monkeypatch, k) -> None:
    """Each block runs alone, in a namespace of its own: a reader may copy any one."""
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "__main__"}  # as `python block.py` runs it
    exec(compile(PYTHON[k], f"README.md python block {k}", "exec"), namespace)


@pytest.mark.parametrize("line", commands())
def test_command_line_examples_run(monkeypatch, line) -> None:
    monkeypatch.chdir(ROOT)
    argv: list[str] = []
    for word in shlex.split(line, comments=True)[1:]:
        matches = sorted(glob.glob(word)) if any(c in word for c in "*?[") else []
        argv += matches or [word]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue()
    assert out.getvalue() and "Traceback" not in err.getvalue()


def test_readme_states_python_version_and_app_url() -> None:
    assert "Python 3.11 or newer" in README
    assert PYPROJECT["project"]["requires-python"] == ">=3.11"
    assert "http://localhost:8501" in README


def test_ci_runs_the_readme_test_command_in_a_new_venv() -> None:
    assert "bash scripts/test.sh" in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python3 -m venv" in ci and "scripts/test.sh" in ci
    script = (ROOT / "scripts" / "test.sh").read_text()
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    assert "sudo" not in code  # says what it installs instead of escalating silently
    assert 'pip install --quiet --disable-pip-version-check -e ".[test]"' in code


# --------------------------------------------------------- the test extra is complete


def _imports(path: Path) -> set[str]:
    """Top-level modules a file imports (anywhere in it, lazily too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def _closure(requirements: list[str], extras: set[str] = frozenset()) -> set[str]:
    """Every distribution a fresh ``pip install`` of ``requirements`` brings (installed ones)."""
    seen: set[str] = set()
    todo = [(Requirement(r), set()) for r in requirements]
    while todo:
        req, _ = todo.pop()
        name = canonicalize_name(req.name)
        key = name + "[" + ",".join(sorted(req.extras)) + "]"
        if key in seen:
            continue
        seen.add(key)
        seen.add(name)
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            sub = Requirement(text)
            envs = [{"extra": e} for e in req.extras] or [{"extra": ""}]
            if sub.marker is None or any(sub.marker.evaluate(env) for env in envs):
                todo.append((sub, set()))
    return {s for s in seen if "[" not in s}


def test_test_extra_provides_every_import() -> None:
    project = PYPROJECT["project"]
    provided = _closure([*project["dependencies"], *project["optional-dependencies"]["test"]])
    sources = [
        *ROOT.glob("tests/*.py"),
        *ROOT.glob("tiecore/**/*.py"),
        *ROOT.glob("app*.py"),
        *ROOT.glob("app_lib/**/*.py"),
        *ROOT.glob("app_pages/*.py"),
    ]
    local = {p.stem for p in sources} | {"tiecore", "app_lib", "app_pages", "tests"}
    owners = metadata.packages_distributions()
    missing = {}
    for path in sources:
        for module in _imports(path) - local - set(sys.stdlib_module_names):
            dists = {canonicalize_name(d) for d in owners.get(module, [module])}
            if not dists & provided:
                missing[module] = f"{path.relative_to(ROOT)} (from {sorted(dists)})"
    assert not missing, f"imported but not in the test extra: {missing}"
