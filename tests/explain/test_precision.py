"""Scores at lower precision (``tiecore.explain.precision``) against independent references.

- float16 and float32 equal numpy's casts; bfloat16 equals :mod:`ml_dtypes`'
  ``bfloat16`` on every float32 whose dropped half is near a rounding midpoint
  (all of them), on a sweep of every 4099th float32 bit pattern, and on random
  float32 values (subnormals, zeros, huge values), and equals values derived by
  hand as exact binary fractions;
- ``k`` decimals equal Python's :mod:`decimal` rounding the float's exact value
  half to even (what ``"%.kf"`` prints), also on values next to every kind of
  midpoint, where :func:`numpy.round` can differ;
- coarsening never separates equal scores, never reverses an order, and is
  idempotent;
- scores the precision cannot hold, bad precisions and bad frames are refused
  with plain messages.
"""

from __future__ import annotations

import decimal
import re

import ml_dtypes
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tiecore
from tiecore.errors import InputError
from tiecore.explain.precision import (
    PRECISIONS,
    coarsen,
    coarsen_run,
    parse_precision,
    precision_label,
)

FLOAT32 = st.floats(width=32, allow_nan=False, allow_infinity=False, allow_subnormal=True)
FLOAT64 = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)
DECIMALS = st.integers(0, 15)
ANY_PRECISION = st.sampled_from(PRECISIONS) | DECIMALS


def bfloat16_reference(x32: np.ndarray) -> np.ndarray:
    """float32 values through ml_dtypes' bfloat16, as float64."""
    return np.asarray(x32, np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)


def decimal_reference(x: float, k: int) -> float:
    """``x``'s exact binary value rounded half to even to ``k`` decimals, read back."""
    with decimal.localcontext() as context:
        context.prec = 400  # every digit of the integer part and k decimals
        exact = decimal.Decimal(x)  # the float's exact value, no rounding
        step = decimal.Decimal(1).scaleb(-k)
        return float(exact.quantize(step, rounding=decimal.ROUND_HALF_EVEN))


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, equal signs of zero, NaN where the other has NaN."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return bool(
        np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))
    )


# --------------------------------------------------------------------------- bfloat16


def check_bfloat16(x32: np.ndarray) -> None:
    """coarsen(bf16) equals ml_dtypes where it is finite and refuses the rest, counted."""
    reference = bfloat16_reference(x32)
    overflow = np.isinf(reference)
    finite = x32[~overflow]
    assert same(coarsen(finite, "bf16"), reference[~overflow])
    if overflow.any():
        with pytest.raises(InputError, match=rf"^scores: {overflow.sum()} of {x32.size} scores"):
            coarsen(x32, "bf16")


def test_bfloat16_equals_ml_dtypes_near_every_midpoint():
    """Every kept half (sign, exponent, 7 bits) with the dropped half at and around 0x8000."""
    kept = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    dropped = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    x32 = (kept[:, None] | dropped[None, :]).ravel().view(np.float32)
    check_bfloat16(x32[np.isfinite(x32)])


def test_bfloat16_equals_ml_dtypes_on_a_sweep_of_float32():
    x32 = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    check_bfloat16(x32[np.isfinite(x32)])


@given(st.lists(FLOAT32, min_size=1, max_size=50))
def test_bfloat16_equals_ml_dtypes(values):
    check_bfloat16(np.array(values, np.float32))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # 8 significant bits: near 1 the step is 2**-7, the midpoints are odd multiples of 2**-8
        (1 + 2**-8, 1.0),  # midpoint, kept part 1.0000000 even: down
        (1 + 3 * 2**-8, 1 + 2**-6),  # midpoint, kept part 1.0000001 odd: up to the even 1.0000010
        (1 + 2**-8 + 2**-23, 1 + 2**-7),  # just above the midpoint: up
        (1 + 3 * 2**-8 - 2**-23, 1 + 2**-7),  # just below the midpoint: down
        (1 + 2**-9, 1.0),  # a quarter step: down
        (-(1 + 3 * 2**-8), -(1 + 2**-6)),  # the sign does not matter
        (2 - 2**-23, 2.0),  # the carry runs into the exponent
        (0.1, 205 * 2**-11),  # float32 0.1 = 0x3DCCCCCD: dropped 0xCCCD > 0x8000, up
        (0.0, 0.0),
        (-0.0, -0.0),
        # bfloat16's smallest subnormal is 2**-126 * 2**-7 = 2**-133
        (2**-134, 0.0),  # half of it: to the even 0
        (2**-134 + 2**-149, 2**-133),  # just above half: up
        (3 * 2**-134, 2**-132),  # 1.5 of it: to the even 2
        (2**-149, 0.0),  # float32's smallest subnormal
        # the largest bfloat16 is (2 - 2**-7) * 2**127; the midpoint to 2**128 overflows
        ((2 - 2**-7) * 2**127, (2 - 2**-7) * 2**127),
        ((2 - 2**-8) * 2**127 - 2**104, (2 - 2**-7) * 2**127),  # last float32 below it
    ],
)
def test_bfloat16_by_hand(value, expected):
    assert np.float32(value) == value  # the inputs are float32 values
    assert same(coarsen([value], "bf16"), [expected])


def test_bfloat16_overflow_is_refused():
    midpoint = (2 - 2**-8) * 2**127  # to even: 2**128, infinite
    with pytest.raises(InputError, match=r"1 of 2 scores are too large for bfloat16"):
        coarsen([midpoint, 1.0], "bf16")


# --------------------------------------------------------------------------- float16, float32


@given(st.lists(FLOAT64, min_size=1, max_size=50))
def test_float16_and_float32_equal_numpy(values):
    x = np.array(values)
    for precision, dtype in (("fp16", np.float16), ("fp32", np.float32)):
        with np.errstate(over="ignore"):
            reference = x.astype(dtype).astype(np.float64)
        overflow = np.isinf(reference)
        assert same(coarsen(x[~overflow], precision), reference[~overflow])
        if overflow.any():
            with pytest.raises(InputError, match=rf"{overflow.sum()} of {x.size} scores"):
                coarsen(x, precision)


def test_float16_range():
    largest = 65504.0
    # 65520 is the midpoint between 65504 and 2**16: to even, 2**16, infinite
    assert coarsen([largest, 65519.99, -65519.99], "fp16").tolist() == [largest, largest, -largest]
    with pytest.raises(InputError) as error:
        coarsen([65520.0, -1e6, 3.0], "fp16")
    assert str(error.value) == (
        "scores: 2 of 3 scores are too large for float16, which would make them infinite"
        " (expected scores between -65504 and 65504, the largest finite float16)"
    )
    with pytest.raises(InputError, match=r"1 of 1 scores are too large for float32"):
        coarsen([1e39], "fp32")


@pytest.mark.parametrize("precision", [*PRECISIONS, 0, 3, 15])
def test_nan_and_infinity_stay(precision):
    x = np.array([np.nan, np.inf, -np.inf, 1.0])
    assert same(coarsen(x, precision), x)


# --------------------------------------------------------------------------- decimals


@given(FLOAT64, DECIMALS)
def test_decimals_equal_decimal_rounding(value, k):
    assert same(coarsen([value], k), [decimal_reference(value, k)])


@st.composite
def near_midpoints(draw):
    """Doubles at and next to ``(m + 1/2) / 10**k``, where the rounding direction is decided."""
    k = draw(DECIMALS)
    m = draw(st.integers(-(10**17), 10**17) | st.integers(-1000, 1000))
    x = float((decimal.Decimal(m) + decimal.Decimal("0.5")).scaleb(-k))
    x = draw(st.sampled_from([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)]))
    return float(x), k


@given(near_midpoints())
def test_decimals_near_midpoints_equal_decimal_rounding(case):
    value, k = case
    assert same(coarsen([value], k), [decimal_reference(value, k)])


def test_decimals_by_hand_and_where_numpy_round_differs():
    # 4.35 is stored as 4.3499999999999996447...: below the midpoint, so 4.3 ("%.1f"),
    # while np.round multiplies first (43.5 after rounding) and gives 4.4.
    assert coarsen([4.35], 1).tolist() == [4.3] == [float(f"{4.35:.1f}")]
    assert np.round(4.35, 1) == 4.4
    # exact midpoints (binary fractions) go to the even neighbour
    assert same(coarsen([0.5, 1.5, 2.5, -0.5], 0), [0.0, 2.0, 2.0, -0.0])
    assert coarsen([0.125, 0.375, 0.625], 2).tolist() == [0.12, 0.38, 0.62]
    assert coarsen([123.456789], 3).tolist() == [123.457]
    big = 2.0**60 + 2048  # spacing 256 >= 1: already whole, stays
    assert coarsen([big], 0).tolist() == [big]


def test_decimals_vectorised_equals_one_by_one():
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(0, 10, 1000), rng.integers(-999, 999, 1000) / 200 + 1e-16])
    for k in (0, 1, 2, 3, 6, 15):
        assert same(coarsen(x, k), [decimal_reference(v, k) for v in x.tolist()])


# --------------------------------------------------------------------------- ties


@given(st.lists(FLOAT32, min_size=1, max_size=40), ANY_PRECISION)
def test_coarsening_ties_never_separates_and_is_idempotent(values, precision):
    x = np.clip(np.array(values, np.float64), -6e4, 6e4)  # within float16's range
    out = coarsen(x, precision)
    assert len(np.unique(out)) <= len(np.unique(x))
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(out[order]) >= 0)  # monotone: no order reversed
    assert same(coarsen(out, precision), out)


def test_coarsening_creates_ties():
    x = np.array([0.1, 0.1000001, 0.1000002, 0.2])  # distinct in float32
    assert len(np.unique(coarsen(x, "fp32"))) == 4
    assert len(np.unique(coarsen(x, "bf16"))) == 2
    assert len(np.unique(coarsen(x, 3))) == 2


def test_shape_is_kept():
    x = np.arange(12.0).reshape(3, 4) / 7
    for precision in (*PRECISIONS, 2):
        out = coarsen(x, precision)
        assert out.shape == (3, 4) and out.dtype == np.float64


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bf16", "bf16"), ("BFloat16", "bf16"), ("fp16", "fp16"), ("float16", "fp16"),
        ("half", "fp16"), (" FP32 ", "fp32"), ("float32", "fp32"), ("single", "fp32"),
        ("3", 3), ("3 decimals", 3), ("1 decimal", 1), ("0", 0), ("15 places", 15), ("2dp", 2),
    ],
)  # fmt: skip
def test_parse_precision(text, expected):
    assert parse_precision(text) == expected
    assert coarsen([0.5], text).shape == (1,)


@pytest.mark.parametrize("bad", ["fp8", "", "16", "-1", "3.5", "decimals", "bf 16"])
def test_parse_precision_refuses(bad):
    with pytest.raises(
        InputError, match=re.escape("bf16, fp16, fp32 or a number of decimals 0-15")
    ):
        parse_precision(bad)


@pytest.mark.parametrize("bad", ["fp8", 16, -1, True, 2.5, None])
def test_coarsen_refuses_bad_precisions(bad):
    with pytest.raises(InputError) as error:
        coarsen([1.0], bad)
    assert str(error.value).startswith("precision: ")
    assert str(error.value).endswith("(expected bf16, fp16, fp32 or a number of decimals 0-15)")


def test_coarsen_refuses_words():
    with pytest.raises(InputError, match="not all numbers"):
        coarsen(["a", 1.0], "bf16")


def test_precision_label():
    assert [precision_label(p) for p in (*PRECISIONS, 0, 1, 3, np.int64(2), "2 dp")] == [
        "float32", "bfloat16", "float16", "0 decimals", "1 decimal", "3 decimals",
        "2 decimals", "2 decimals",
    ]  # fmt: skip


# --------------------------------------------------------------------------- run frames


def test_coarsen_run():
    run = pd.DataFrame(
        {
            "qid": [1, 1, 2],
            "docno": ["a", "b", "a"],
            "score": [0.1, 0.10001, 7],
            "note": list("xyz"),
        }
    )
    run.attrs["name"] = "dense"
    out = coarsen_run(run, "bf16")
    assert out is not run and run["score"].tolist() == [0.1, 0.10001, 7]  # original untouched
    assert out["score"].tolist() == coarsen([0.1, 0.10001, 7.0], "bf16").tolist()
    assert out["score"].dtype == np.float64
    assert out["qid"].tolist() == ["1", "1", "2"] and out["note"].tolist() == list("xyz")
    assert out.attrs == {"name": "dense"}
    # the copy evaluates as any run does: the two tied documents share the credit
    qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["b", "a"], "level": [1, 1]})
    tied = tiecore.evaluate(out, qrels, measures=["P@1"], per_query=True)
    per_query = tied.dropna(subset="qid").set_index("qid")["value"].to_dict()
    assert per_query == {"1": 0.5, "2": 1.0}


def test_coarsen_run_refuses_bad_frames():
    with pytest.raises(InputError, match="score"):
        coarsen_run(pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [np.nan]}), "bf16")
    with pytest.raises(InputError, match="too large for float16"):
        coarsen_run(pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1e9]}), "fp16")
