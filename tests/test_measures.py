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
    ],
)
def test_bad_names_raise_input_error(text):
    with pytest.raises(InputError, match="measure"):
        Measure.parse(text)


measures = st.builds(
    lambda family, k, exp: Measure(
        family,
        k if FAMILIES[family][0] or (FAMILIES[family][1] and k % 2) else None,
        "exp" if family == "nDCG" and exp else "linear",
    ),
    st.sampled_from(sorted(FAMILIES)),
    st.integers(1, 1000),
    st.booleans(),
)


@given(measures)
def test_str_round_trips(measure):
    assert Measure.parse(str(measure)) == measure


def test_parse_measures_keeps_order_and_drops_repeats():
    assert parse_measures(["AP", "P@5", "map", Measure("P", 5)]) == [Measure("AP"), Measure("P", 5)]
    assert parse_measures("RR") == [Measure("RR")]
