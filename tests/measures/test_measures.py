"""Measure names: parsing, aliases, validation."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tiecore.errors import InputError
from tiecore.measures import FAMILIES, Measure, parse_measures


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("P@10", Measure("P", 10)),
        ("R@100", Measure("R", 100)),
        ("F1@5", Measure("F1", 5)),
        ("AP", Measure("AP")),
        ("AP@100", Measure("AP", 100)),
        ("RR", Measure("RR")),
        ("RR@10", Measure("RR", 10)),
        ("nDCG", Measure("nDCG")),
        ("nDCG@10", Measure("nDCG", 10)),
        ("nDCG(gain=exp)@10", Measure("nDCG", 10, "exp")),
        ("nDCG(gain=linear)", Measure("nDCG")),
        ("Rprec", Measure("Rprec")),
        ("Success@1", Measure("Success", 1)),
        ("Bpref", Measure("Bpref")),
        ("P_5", Measure("P", 5)),
        ("recall_1000", Measure("R", 1000)),
        ("map", Measure("AP")),
        ("map_cut_20", Measure("AP", 20)),
        ("ndcg_cut_10", Measure("nDCG", 10)),
        ("recip_rank", Measure("RR")),
        ("success_5", Measure("Success", 5)),
        ("bpref", Measure("Bpref")),
        (" ndcg@3 ", Measure("nDCG", 3)),
        ("MAP@10", Measure("AP", 10)),
        ("MRR", Measure("RR")),
        ("AP(denom=min)@10", Measure("AP", 10, params=(("denom", "min"),))),
        ("AP(denom=num_rel)@10", Measure("AP", 10)),
        ("nDCG(ideal=max)@5", Measure("nDCG", 5, params=(("ideal", "max"),))),
        ("nDCG(ideal=global)@5", Measure("nDCG", 5)),
        ("DCG(gain=exp)@5", Measure("DCG", 5, "exp")),
        ("CG@5", Measure("CG", 5)),
        ("Judged@10", Measure("Judged", 10)),
        ("RBP", Measure("RBP", None, params=(("p", "0.8"),))),
        ("RBP(p=0.5)", Measure("RBP", None, params=(("p", "0.5"),))),
        ("RBP(p=.5,gain=binary)@5", Measure("RBP", 5, "binary", (("p", "0.5"),))),
        ("RBP_residual(p=0.9)", Measure("RBP_residual", None, params=(("p", "0.9"),))),
    ],
)
def test_parse(text, expected):
    assert Measure.parse(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "P",
        "Success",
        "P@0",
        "Rprec@10",
        "Bpref@5",
        "AP(gain=exp)",
        "nDCG(gain=log)@10",
        "XYZ@3",
        "nDCG(foo=1)",
        "P@-1",
        "P@ten",
        "nDCG(ideal=max)",
        "nDCG(ideal=best)@5",
        "RBP(p=1)",
        "RBP(p=0)",
        "RBP(p=x)",
        "P(gain=binary)@5",
        "AP(denom=k)",
        "Judged(gain=exp)@5",
    ],
)
def test_bad_names_raise_input_error(text):
    with pytest.raises(InputError, match="measure"):
        Measure.parse(text)


@st.composite
def measures(draw):
    """Any family, with a cutoff where it takes one and any of its parameters' values."""
    family = FAMILIES[draw(st.sampled_from(sorted(FAMILIES)))]
    cutoff = None
    if family.cutoff == "required" or (family.cutoff == "optional" and draw(st.booleans())):
        cutoff = draw(st.integers(1, 1000))
    values = {}
    for name, param in family.params.items():
        if param.choices is not None:
            values[name] = draw(st.sampled_from(param.choices))
        elif name == "gains":  # trec_eval's level=gain pairs (as level:gain)
            values[name] = draw(st.sampled_from(("", "1:3.0;2:9.0", "0:0.5;4:-1.0")))
        elif param.integer:  # SDCG's max_rel
            values[name] = str(draw(st.integers(int(param.low), int(param.low) + 5)))
        else:
            values[name] = str(draw(st.floats(0.01, 0.99)))
    if values.get("gains"):  # they go with nDCG's linear gain and global ideal
        values |= {"gain": "linear", "ideal": "global"} if "ideal" in values else {}
    if values.get("ideal") == "max" and cutoff is None:
        cutoff = 10
    gain = values.pop("gain", None)
    return Measure(family.name, cutoff, gain, tuple(values.items()))


@given(measures())
def test_str_round_trips(measure):
    assert Measure.parse(str(measure)) == measure


def test_parse_measures_keeps_order_and_drops_repeats():
    assert parse_measures(["AP", "P@5", "map", Measure("P", 5)]) == [Measure("AP"), Measure("P", 5)]
    assert parse_measures("RR") == [Measure("RR")]
