"""A measure is one file: every family declares its words, its rows of the docs table and
(in tests/reference.py) its reference, and the package finds every family module itself."""

from __future__ import annotations

import re
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
    """No list to keep: the package imports every module of its folder that registers a
    family (all but the few helpers it names), so a new family module needs no line."""
    modules = {path.stem for path in PACKAGE.glob("*.py") if not path.stem.startswith("_")}
    helpers = tiecore.measures._NOT_FAMILIES
    assert helpers <= modules
    found = set(tiecore.measures._modules())
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
