"""The README and the docs are true as written: their examples run, their facts hold.

Every fenced block of README.md, docs/*.md and benchmarks/README.md runs as a test, each
on its own, from the repository root: a ```python block in a namespace of its own, and
every line of a ```bash block through the command line, in-process (globs expanded as a
shell would; a line that pipes into ``tiecore`` runs in bash, with ``tiecore`` as
``python -m tiecore``).  A block that must not run (an install line, an hour-long
benchmark, a cluster address) says so on the line before its fence,
``<!-- not run: why -->``, which GitHub does not show; there are few of them.  A
```text block is a picture (a tree), not code.  Links
between the pages, the ``sample_data/`` files and the ``tiecore/`` paths the pages name
must exist, so that nothing cites what the repository does not ship.  The test extra
must provide every package that the tests, the package and the app import, so that the
README's test command works in a new virtual environment (.ci/run does exactly that).
"""

from __future__ import annotations

import ast
import contextlib
import glob
import importlib
import importlib.metadata as metadata
import importlib.util
import io
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import NamedTuple

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tiecore.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "benchmarks" / "README.md",
]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
FENCE = re.compile(
    r"^(?:<!-- not run: (?P<why>[^\n]*?) -->\n)?```(?P<lang>[\w-]*)\n(?P<body>.*?)^```",
    flags=re.S | re.M,
)
#: Blocks that may skip the test; each says why on the line before its fence.
MAX_NOT_RUN = 4


class Block(NamedTuple):
    page: str  # relative to the repository root
    line: int  # of the opening fence
    lang: str
    body: str
    not_run: str | None  # the reason, for a block that must not run


def _blocks() -> list[Block]:
    found = []
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start("lang")) + 1
            page = str(path.relative_to(ROOT))
            found.append(Block(page, line, m["lang"], m["body"], m["why"]))
    return found


BLOCKS = _blocks()
RUN = [b for b in BLOCKS if b.not_run is None]


def _runnable(line: str) -> bool:
    """A shell line the test runs: ``tiecore ...``, or a pipe into it."""
    return line.startswith("tiecore ") or " | tiecore " in line


def _lines(block: Block) -> list[str]:
    return [s for line in block.body.splitlines() if (s := line.strip()) and s[0] != "#"]


def commands(page: str | None = None) -> list[tuple[str, str]]:
    """(where, line) of every command line of the blocks that run."""
    return [
        (f"{b.page}:{b.line}", line)
        for b in RUN
        if b.lang == "bash" and page in (None, b.page)
        for line in _lines(b)
        if _runnable(line)  # anything else fails test_every_block_runs_or_says_why_not
    ]


def test_readme_is_a_short_users_page() -> None:
    """Reference lives in docs/ and figures in benchmarks/README.md (issue 24)."""
    assert len(README.encode("utf-8")) <= 12 * 1024
    for page in ("measures", "cli", "python", "statistics", "scale-out", "design", "explorer"):
        assert (ROOT / "docs" / f"{page}.md").is_file(), page
        assert f"(docs/{page}.md)" in README, f"the README does not link docs/{page}.md"


def test_readme_has_examples() -> None:
    readme = [b for b in RUN if b.page == "README.md"]
    assert sum(b.lang == "python" for b in readme) >= 2
    assert len(commands("README.md")) >= 5


def test_every_block_runs_or_says_why_not() -> None:
    """Only python and bash blocks, every bash line runnable, few blocks left out."""
    for b in BLOCKS:
        where = f"{b.page}:{b.line}"
        if b.not_run is not None:
            assert b.not_run.strip(), f"{where}: a block left out says why"
            continue
        if b.lang == "text":  # a picture (a tree, the layers), not code
            continue
        assert b.lang in ("python", "bash"), f"{where}: ```{b.lang} neither runs nor says why"
        if b.lang == "bash":
            lines = _lines(b)
            assert lines, f"{where}: a bash block without a command"
            for line in lines:
                assert _runnable(line), f"{where}: {line!r} would not run"
    assert len(BLOCKS) - len(RUN) <= MAX_NOT_RUN, [b[:2] for b in BLOCKS if b.not_run]


PYTHON = [b for b in RUN if b.lang == "python"]


#: A block that imports ranx is the slow tier's: ranx compiles its numba functions on first
#: use (about a minute in a new environment on two cores; tests/io/test_peers.py).
EXAMPLES = [
    pytest.param(b, id=f"{b.page}:{b.line}", marks=[pytest.mark.slow] * ("import ranx" in b.body))
    for b in PYTHON
]


@pytest.mark.parametrize("block", EXAMPLES)
def test_python_examples_run_each_on_its_own(monkeypatch, block) -> None:
    """Each block runs alone, in a namespace of its own: a reader may copy any one."""
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "__main__"}  # as `python block.py` runs it
    exec(compile(block.body, f"{block.page} line {block.line}", "exec"), namespace)


@pytest.mark.parametrize(("where", "line"), commands(), ids=[w for w, _ in commands()])
def test_command_line_examples_run(monkeypatch, where, line) -> None:
    monkeypatch.chdir(ROOT)
    if not line.startswith("tiecore "):  # a pipe: the shell's, tiecore as this Python's
        python = shlex.quote(sys.executable)
        script = line.replace("| tiecore ", f"| {python} -m tiecore ")
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", script],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout and "Traceback" not in done.stderr
        return
    argv: list[str] = []
    for word in shlex.split(line, comments=True)[1:]:
        matches = sorted(glob.glob(word)) if any(c in word for c in "*?[") else []
        argv += matches or [word]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue()
    assert out.getvalue() and "Traceback" not in err.getvalue()


# ------------------------------------------------- what the pages cite exists


def _prose(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_links_between_the_pages_resolve() -> None:
    for path in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", _prose(path)):
            if target.startswith(("http://", "https://")):
                continue
            assert (path.parent / target).exists(), f"{path.relative_to(ROOT)}: {target}"


def test_cited_sample_data_is_shipped() -> None:
    """A page may cite only the data the repository ships (sample_data/)."""
    for path in PAGES:
        for cited in re.findall(r"sample_data/[\w./*-]*[\w*]", _prose(path)):
            assert glob.glob(str(ROOT / cited)), f"{path.relative_to(ROOT)}: {cited}"


def test_cited_module_paths_exist() -> None:
    """Paths (``tiecore/x/y.py``, ``app_lib/z.py``, ``tests/t.py``) and ``tiecore.x.y``
    names the pages give are still there: modules move, the pages must follow.  In a
    clean checkout (CI's) a file the repository does not track, such as the browser
    test's screenshots/, fails here too."""
    folders = "tiecore|app_lib|app_pages|tests|scripts|benchmarks|screenshots|sample_data"
    for path in PAGES:
        text = _prose(path)
        for cited in re.findall(rf"(?<![\w/.-])(?:{folders})/[\w/.*-]*\w", text):
            assert glob.glob(str(ROOT / cited)), f"{path.relative_to(ROOT)}: {cited}"
        for dotted in set(re.findall(r"`(tiecore(?:\.\w+)+)", text)):
            parts = dotted.split(".")
            for k in range(len(parts), 0, -1):  # the longest importable module, then attributes
                with contextlib.suppress(ImportError):
                    obj = importlib.import_module(".".join(parts[:k]))
                    break
            for name in parts[k:]:
                assert hasattr(obj, name), f"{path.relative_to(ROOT)}: {dotted}"
                obj = getattr(obj, name)


def test_the_table_of_measures_is_written_from_the_registry() -> None:
    """docs/measures.md's table is each family's ``Doc`` rows as
    ``tiecore.measures.registry.docs_table`` lays them out: a family's rows are written once,
    beside its kernel, and the page cannot drift (``python scripts/measures_table.py``
    rewrites it)."""
    from tiecore.measures.registry import FAMILIES, docs_table

    spec = importlib.util.spec_from_file_location(
        "measures_table", ROOT / "scripts" / "measures_table.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = (ROOT / "docs" / "measures.md").read_text(encoding="utf-8")
    assert script.table_in(page) == docs_table(), "run python scripts/measures_table.py"
    for name, family in FAMILIES.items():
        assert family.docs, f"{name} declares no row of the docs table"


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
        *ROOT.glob("tests/**/*.py"),
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
