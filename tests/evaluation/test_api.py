"""The public surface of ``tiecore``: the README's names, each with one meaning, loaded lazily."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tiecore

ROOT = Path(__file__).resolve().parents[2]


def test_public_names_resolve_to_one_thing_each():
    for name in tiecore.__all__:
        assert getattr(tiecore, name) is not None
    assert callable(tiecore.evaluate) and not isinstance(tiecore.evaluate, type(tiecore))
    # the module behind evaluate is private, so importing it cannot hide the function
    importlib.import_module("tiecore.evaluation.core")
    assert callable(tiecore.evaluate) and tiecore.evaluate.__module__ == "tiecore.evaluation.core"
    assert tiecore.evaluate_spread is importlib.import_module("tiecore.spread").evaluate_spread
    assert tiecore.Comparison is importlib.import_module("tiecore.compare").Comparison


def test_private_names_are_not_at_the_top():
    for name in ("MODES", "parse_measures", "no_such"):
        assert name not in tiecore.__all__
        with pytest.raises(AttributeError, match=name):
            getattr(tiecore, name)


def test_the_options_and_measure_at_the_top_are_their_homes_objects():
    """The explorer's public names (tiecore/__init__.pyi) are the declarations themselves,
    not copies: an option declared once in tiecore.options is the same object at the top."""
    options = importlib.import_module("tiecore.options")
    measures = importlib.import_module("tiecore.measures")
    for name in ("CORRECTIONS", "GAINS", "SAMPLES", "SEED", "TIEBREAKS"):
        assert name in tiecore.__all__ and getattr(tiecore, name) is getattr(options, name)
    for name in ("Measure", "DEFAULT_MEASURES", "split_measures"):
        assert name in tiecore.__all__ and getattr(tiecore, name) is getattr(measures, name)


def test_readme_python_names_are_public():
    """Every ``tiecore.NAME`` the README uses is in ``__all__``."""
    text = (ROOT / "README.md").read_text()
    used = set(re.findall(r"\btiecore\.([A-Za-z_]\w*)\s*\(", text))
    for names in re.findall(r"^from tiecore import (.+)$", text, flags=re.M):
        used |= {name.split(" as ")[0].strip() for name in names.split(",")}
    assert used <= set(tiecore.__all__), used - set(tiecore.__all__)


def test_docstring_references_resolve():
    """``:func:`tiecore.x.y``` in the package's docstrings names something that exists."""
    pattern = re.compile(r":(?:func|class|data|attr|meth):`~?(tiecore(?:\.\w+)+)`")
    missing = []
    for path in sorted((ROOT / "tiecore").glob("*.py")):
        for ref in set(pattern.findall(path.read_text())):
            parts = ref.split(".")
            obj, i = importlib.import_module(parts[0]), 1
            while i < len(parts):  # the longest importable module, then attributes
                fields = getattr(obj, "__dataclass_fields__", {})
                try:
                    obj = fields[parts[i]] if parts[i] in fields else getattr(obj, parts[i])
                except AttributeError:
                    try:
                        obj = importlib.import_module(".".join(parts[: i + 1]))
                    except ImportError:
                        missing.append(f"{path.name}: {ref}")
                        break
                i += 1
    assert not missing, missing


def test_import_is_light():
    """``import tiecore`` loads none of numpy, pandas, pyarrow, scipy or dask."""
    code = (
        "import sys, tiecore; heavy = ('numpy', 'pandas', 'pyarrow', 'scipy', 'dask'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
