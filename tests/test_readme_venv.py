"""README examples run for a new user: in a NEW virtual environment, with what it installs.

tests/test_readme.py runs the blocks in this test environment, which holds the whole test
extra; this file builds a fresh virtual environment from the README's own install line
(``pip install -e ".[app]"`` of the Quick start) and runs each example there, alone, in a
process of its own, from the repository root.  A block that needs more says so on a
comment line of its own, ``# pip install -e ".[ir_measures]"``, which is run in that
environment before the block.  Blocks that ask for nothing run before any such line has
installed anything, so an example that silently needs an extra fails here.

Python blocks run as scripts from a temporary folder with ``python -I`` (the repository is
not on ``sys.path``: tiecore comes from the install); each line of a bash block (but the
Quick start's) runs through ``bash -c`` with the environment's ``bin`` first on ``PATH``,
so globs, pipes and the ``tiecore`` script are the shell's and the install's.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", README, flags=re.S | re.M)
# `pip install ARGS`, alone on a line or commented out, up to `&&`, `;` or a trailing comment
INSTALL = re.compile(r"^(?:#\s*)?pip install (?P<args>[^#;&]+?)\s*(?:(?:&&|;|\s#).*)?$")


def _installs(body: str) -> list[str]:
    return [m["args"] for line in body.splitlines() if (m := INSTALL.match(line.strip()))]


def _base_install() -> tuple[int, list[str]]:
    """The Quick start's install line: the first bash block that installs tiecore itself."""
    for k, (lang, body) in enumerate(BLOCKS):
        if lang == "bash":
            lines = [a for a in _installs(body) if "-e ." in a or '-e ".' in a]
            if lines:
                return k, lines
    raise AssertionError("the README has no `pip install -e ...` line in a bash block")


#: The slow tier (tests/conftest.py): a new environment installs the package's dependencies.
pytestmark = pytest.mark.slow

BASE_BLOCK, BASE_INSTALL = _base_install()


def _examples() -> list[tuple[str, str, tuple[str, ...], str]]:
    """(id, language, its own install lines, code) for every block but the Quick start's."""
    found = []
    for k, (lang, body) in enumerate(BLOCKS):
        if k == BASE_BLOCK or lang not in ("python", "bash"):
            continue
        line = README[: README.index(body)].count("\n") + 1
        found.append((f"{lang}-line{line}", lang, tuple(_installs(body)), body))
    # blocks that ask for nothing first, then grouped by what they install
    return sorted(found, key=lambda e: (bool(e[2]), e[2]))


EXAMPLES = _examples()


class FreshVenv:
    """A new virtual environment holding what the README's install lines put there."""

    def __init__(self, where: Path) -> None:
        self.where = where
        venv.EnvBuilder(with_pip=True, clear=True).create(where / "venv")
        self.bin = where / "venv" / "bin"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        self.env |= {
            "VIRTUAL_ENV": str(where / "venv"),
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "MPLBACKEND": "Agg",
        }
        self.done: set[str] = set()
        self.seconds: dict[str, float] = {}

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run(
            argv, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def install(self, args: str) -> None:
        """``pip install ARGS`` as the README writes it, once."""
        if args in self.done:
            return
        start = time.perf_counter()
        argv = [str(self.bin / "python"), "-m", "pip", "install", "-q", *shlex.split(args)]
        done = self.run(argv, timeout=600)
        assert done.returncode == 0, f"pip install {args} failed:\n{done.stdout}\n{done.stderr}"
        # pip < 23.3 only warns when an extra's name does not match the metadata's
        assert "does not provide the extra" not in done.stderr, done.stderr
        self.done.add(args)
        self.seconds[f"pip install {args}"] = time.perf_counter() - start


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> FreshVenv:
    env = FreshVenv(tmp_path_factory.mktemp("readme_venv"))
    for args in BASE_INSTALL:
        env.install(args)
    return env


def test_readme_names_an_install_line_and_examples() -> None:
    assert BASE_INSTALL == ['-e ".[app]"'], BASE_INSTALL
    assert sum(lang == "python" for _, lang, _, _ in EXAMPLES) >= 5
    assert sum(lang == "bash" for _, lang, _, _ in EXAMPLES) >= 4
    # every extra a block asks for exists
    from tomllib import loads

    extras = loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for _, _, lines, _ in EXAMPLES:
        for args in lines:
            for name in re.findall(r"\.\[([\w,-]+)\]", args):
                assert set(name.split(",")) <= set(extras), args


def test_the_fresh_environment_lacks_what_the_install_line_does_not_bring(fresh) -> None:
    """Without this, the blocks below would prove nothing about their install lines."""
    code = "import importlib.util as u, sys, tiecore; print(sys.prefix, u.find_spec('ir_measures'))"
    done = fresh.run([str(fresh.bin / "python"), "-I", "-c", code], timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(fresh.where / "venv"), "None"]
    assert Path(sys.prefix) != fresh.where / "venv"


@pytest.mark.parametrize(
    ("lang", "installs", "code"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES]
)
def test_readme_block_runs_alone_in_a_fresh_venv(fresh, tmp_path, lang, installs, code) -> None:
    for args in installs:
        fresh.install(args)
    if lang == "python":
        script = tmp_path / "block.py"
        script.write_text(code, encoding="utf-8")
        done = fresh.run([str(fresh.bin / "python"), "-I", str(script)], timeout=300)
        assert done.returncode == 0, f"{code}\n--- stderr:\n{done.stderr[-4000:]}"
        return
    lines = [s for line in code.splitlines() if (s := line.strip()) and not s.startswith("#")]
    assert lines, code
    for line in lines:
        done = fresh.run(["bash", "-o", "pipefail", "-c", line], timeout=300)
        assert done.returncode == 0, f"{line}\n--- stderr:\n{done.stderr[-4000:]}"
        assert done.stdout and "Traceback" not in done.stderr, line
