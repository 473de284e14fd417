"""The app's glossary: every measure the sidebar offers is defined with its cutoff, no entry
repeats its own key or a word, and the old ``charts.GLOSSARY`` still reads the same terms."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # app_lib lives next to app.py

from app_lib import charts, glossary
from app_lib.settings import MEASURE_CHOICES
from tiecore.errors import InputError
from tiecore.measures import DEFAULT_MEASURES, Measure
from tiecore.measures.registry import FAMILIES

OFFERED = sorted({*MEASURE_CHOICES, *DEFAULT_MEASURES})
#: A word, then (after spaces or punctuation) the same word: "aware: aware", "the the".
DOUBLED = re.compile(r"\b(\w+)\b[\s:,;.-]+\1\b", re.IGNORECASE)


@pytest.mark.parametrize("name", OFFERED)
def test_every_offered_measure_is_defined_with_its_cutoff(name):
    text = glossary.define(name)
    head, _, body = text.partition(": ")
    assert head == name and len(body) > 40
    cutoff = Measure.parse(name).cutoff
    if cutoff is not None:  # the cutoff is in the words, not only in the name
        assert re.search(rf"\b{cutoff}\b", body), text
        assert re.search(rf"\b{cutoff}\b", body.partition(": ")[2]), text


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_has_a_definition(family):
    spec = FAMILIES[family]
    required = ",".join(f"{name}=3" for name, param in spec.params.items() if param.required)
    named = f"{family}({required})" if required else family  # SDCG(max_rel=3)
    names = []
    if spec.cutoff != "none":
        names.append(f"{named}@7")
    if spec.cutoff != "required":
        names.append("IPrec@0.3" if family == "IPrec" else named)
    for name in names:
        text = glossary.define(name)
        assert text.startswith(f"{name}: ") and text.endswith(".")
        assert "{" not in text and "None" not in text, text
        if name.endswith("@7"):
            assert re.search(r"\b7\b", text.partition(": ")[2]), text
    if family == "IPrec":
        assert "recall 0.3" in glossary.define("IPrec@0.3")


def test_parameters_reach_the_definition():
    assert "2^level − 1" in glossary.define("nDCG(gain=exp)@10")
    assert "its relevance level" in glossary.define("nDCG@10")
    assert "0.5" in glossary.define("RBP(p=0.5)@10") and "0.8" in glossary.define("RBP")
    assert "smaller of 10 and" in glossary.define("AP(denom=min)@10")
    assert "top 10" in glossary.define("ndcg_cut_10")  # trec_eval's spelling too


def test_an_unknown_measure_or_term_is_refused():
    with pytest.raises(InputError, match="unknown measure"):
        glossary.define("Nonsense@3")
    with pytest.raises(KeyError, match="no glossary entry"):
        glossary.term("nonsense")


def test_no_entry_repeats_its_key_or_a_word():
    texts = {**glossary.TERMS, **{m: glossary.define(m) for m in OFFERED}}
    for key, text in texts.items():
        assert not DOUBLED.search(text), (key, DOUBLED.search(text).group(0))
    for key, text in glossary.TERMS.items():
        spoken = key.replace("_", " ").lower()
        lowered = text.lower()
        for start in (spoken, f"tie-{spoken}", f"tie {spoken}"):
            assert not lowered.startswith(start), (key, text)
    # a page writes "**aware**: <entry>": no "aware: tie-aware: ..." any more
    for key in ("aware", "tie_sd", "tie_noise", "z", "oblivious"):
        shown = f"{key.replace('_', ' ')}: {glossary.term(key)}"
        assert not DOUBLED.search(shown.replace("tie-", "")), shown


def test_terms_by_any_spelling_and_the_old_name():
    assert glossary.term("tie-aware") == glossary.term("aware") == charts.GLOSSARY["aware"]
    assert glossary.term("tie sd") == glossary.TERMS["tie_sd"]
    assert charts.GLOSSARY is glossary.TERMS
    assert charts.help_of("z") == glossary.term("z")
