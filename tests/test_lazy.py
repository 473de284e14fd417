"""The lazy facades (tiecore._lazy): each stub's names, and only they, at run time."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tiecore._lazy import attach_stub, read_stub

ROOT = Path(__file__).resolve().parents[1]
FACADES = ["tiecore", "tiecore.io", "tiecore.report"]


@pytest.mark.parametrize("package", FACADES)
def test_every_name_of_the_stub_is_the_object_its_module_defines(package) -> None:
    module = importlib.import_module(package)
    declared = read_stub(package, str(Path(module.__file__).with_suffix(".pyi")))
    assert module.__all__ == sorted(n for n in declared if not n.startswith("_"))
    for name, (home, attribute) in declared.items():
        found = importlib.import_module(home)
        assert getattr(module, name) is (found if attribute is None else getattr(found, attribute))
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("package", FACADES)
def test_a_name_the_stub_lacks_is_an_attribute_error(package) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such'"):
        module.no_such  # noqa: B018


def test_report_keeps_its_modules_as_attributes() -> None:
    """The modules the names come from, one level down, as when report imported them."""
    code = "import tiecore.report as r; print(r.latex.__name__, r.pairs.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["tiecore.report.latex", "tiecore.report.pairs"]


def test_the_stub_is_read_on_first_use_only(tmp_path) -> None:
    """Importing a facade reads no stub (nor imports ast); a missing stub is an ImportError
    that names it, on first use."""
    code = "import sys, tiecore, tiecore.io, tiecore.report; print('ast' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    getattr_, _ = attach_stub("tiecore", str(tmp_path / "__init__.py"))
    with pytest.raises(ImportError, match=r"tiecore: its stub .*__init__\.pyi is missing"):
        getattr_("evaluate")
