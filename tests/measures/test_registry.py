"""A measure is one file: every family declares its words, its rows of the docs table and
(in tests/reference.py) its reference, and the package finds every family module itself."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import reference as ref

import tiecore.measures
from tiecore.measures import FAMILIES, Measure, registry
from tiecore.measures.registry import Doc, Family, Param, Words, describe, docs_table, register

PACKAGE = Path(tiecore.measures.__file__).parent


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_declares_its_words_docs_and_reference(name):
    family = FAMILIES[name]
    assert family.words is not None, f"{name}: no words (describe(..., words=Words(...)))"
    assert family.docs, f"{name}: no rows of the docs table"
    assert name in ref.REFERENCES, f"{name}: no @reference in tests/reference.py"
    texts = [part for form in (family.words.cut, family.words.whole) if form for part in form]
    for param, _, said in family.words.extra:
        assert param in family.params, (name, param)
        texts.append(said)
    for text in texts:
        fields = set(re.findall(r"{(\w+)}", text))
        assert fields <= {"k", "gain", *family.params}, (name, fields)


def test_every_family_module_of_the_package_is_found():
    """Listing the table imports every module of the folder that registers a family (all
    but the few helpers the registry names), whether HOMES has its line or not."""
    modules = {path.stem for path in PACKAGE.glob("*.py") if not path.stem.startswith("_")}
    helpers = registry.NOT_FAMILIES
    assert helpers <= modules
    found = set(registry.family_modules())
    assert found == modules - helpers
    declares = re.compile(r"^(?:register|register_gain_family|describe)\(", re.M)
    for name in modules:
        text = (PACKAGE / f"{name}.py").read_text(encoding="utf-8")
        assert bool(declares.search(text)) == (name in found), name


def test_the_reference_dispatch_goes_by_the_registrys_name():
    labels = [1, None, 0, 2]
    assert ref.measure(ref.Spec("P", 2), labels, [1, 0, 2]) == 0.5
    assert ref.measure(ref.Spec("map"), labels, [1, 2]) == ref.average_precision(labels, [1, 2], 1)
    with pytest.raises(ValueError, match="unknown family"):
        ref.measure(ref.Spec("Nonsense"), labels, [1])


def test_words_need_one_form_and_rows_no_pipe():
    with pytest.raises(ValueError, match="a cut or a whole form"):
        Words()
    assert Words(cut=("a", "b")).form(None) == ("a", "b")
    assert Words(cut=("a", "b"), whole=("c", "d")).form(None) == ("c", "d")
    with pytest.raises(ValueError, match=r"a \| or a line break"):
        Doc("`X`", "", "a | b").row()
    assert Doc("`X`", "", "f").row() == "| `X` | | f | – |"


def test_describe_fills_a_family_once(monkeypatch):
    monkeypatch.setattr(registry, "FAMILIES", dict(FAMILIES))
    registry.FAMILIES.pop("P")
    register(Family("P", "test", cutoff="required"))
    described = describe("P", words=Words(cut=("x", "y")), docs=(Doc("`P@k`", "", "z"),))
    assert registry.FAMILIES["P"] is described and described.docs[0].formula == "z"
    with pytest.raises(ValueError, match="described already"):
        describe("P", words=Words(cut=("x", "y")), docs=())


def test_the_docs_table_has_every_familys_rows_in_order():
    rows = docs_table().splitlines()[2:]
    assert rows == [doc.row() for family in FAMILIES.values() for doc in family.docs]


def test_an_integer_parameter_keeps_its_integer_spelling():
    param = Param("", low=0, high=1e9, closed=True, integer=True)
    assert param.canonical("3") == "3" and param.canonical("3.0") == "3"
    with pytest.raises(ValueError, match="an integer"):
        param.canonical("2.5")
    assert str(Measure.parse("P@5")) == "P@5"


#: Imports every family module in family_modules()' order, each module's families noted
#: as it registers them (the module whose top level calls register, through helpers such
#: as gains.register_gain_family), and prints what each registered and FAMILIES' order.
_DECLARED = """
import json, sys
from tiecore.measures import registry
done, seen = {}, []
plain = registry.register
def register(family):
    frame = sys._getframe(1)
    while frame.f_code.co_name != "<module>":
        frame = frame.f_back
    module = frame.f_globals["__name__"].rsplit(".", 1)[1]
    done.setdefault(module, []).extend(dict.fromkeys((family.name.lower(), *family.aliases)))
    seen.append(family.name)
    return plain(family)
registry.register = register
for module in registry.family_modules():
    __import__("tiecore.measures." + module)
print(json.dumps([list(done.items()), seen, list(registry.FAMILIES)]))
"""


def test_homes_says_which_module_registers_which_names():
    """HOMES (what a look-up imports) is what each module registers, in the order the
    modules are listed (FAMILIES' order: the docs table's and the messages'), so the
    index cannot drift from the families' own declarations."""
    import json

    run = subprocess.run([sys.executable, "-c", _DECLARED], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    done, seen, listed = json.loads(run.stdout)
    assert [(module, tuple(names)) for module, names in done] == list(registry.HOMES.items())
    assert listed == seen == list(FAMILIES)


_ONE = """
import sys
from tiecore.measures import FAMILIES, Measure, lookup
assert not {m for m in sys.modules if m.startswith("tiecore.measures.") and m.endswith("ap")}
names = sys.argv[1:]
found = [lookup(name).name for name in names]
assert str(Measure.parse("map")) == "AP"
print(FAMILIES._complete, sorted(m for m in sys.modules if m.startswith("tiecore.measures.")))
"""


def test_a_look_up_imports_the_module_of_the_name_alone():
    """``-m map`` imports ap.py (and what it imports), not the 36 family modules; every
    name of HOMES is found in its own module, without listing the table."""
    names = [name for module_names in registry.HOMES.values() for name in module_names]
    run = subprocess.run(
        [sys.executable, "-c", _ONE, "map"], capture_output=True, text=True, check=True
    )
    complete, modules = run.stdout.split(" ", 1)
    assert complete == "False" and "tiecore.measures.ap" in modules
    assert "tiecore.measures.ndcg" not in modules and "tiecore.measures.err" not in modules
    run = subprocess.run(
        [sys.executable, "-c", _ONE, *names], capture_output=True, text=True, check=True
    )
    assert run.stdout.startswith("False "), run.stdout  # no name needed every module


def test_an_unknown_name_lists_every_family():
    """An unknown name imports every family module (a module HOMES lacks may have it);
    the message names every family, in FAMILIES' order."""
    code = (
        "from tiecore.measures import Measure, FAMILIES\n"
        "try:\n    Measure.parse('Nonsense@3')\nexcept Exception as e:\n    print(e)\n"
        "print(FAMILIES._complete)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert "one of P, R, F1, AP, RR, Success" in out and out.split()[-1] == "True"
