"""tiecore.report.formats against json.dumps of the same rows (the reference encoder)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from tiecore.report.formats import json_rows

NAMES = st.text(min_size=1, max_size=4)


def reference(frame: pd.DataFrame) -> list[dict]:
    """The rows as json.dumps writes them, NaN and missing values as null, read back."""
    rows = zip(*(frame.iloc[:, k].tolist() for k in range(frame.shape[1])), strict=True)
    names = [str(c) for c in frame.columns]
    out = []
    for row in rows:
        record = {
            n: None if v is None or (isinstance(v, float) and math.isnan(v)) else v
            for n, v in zip(names, row, strict=True)
        }
        out.append(json.loads(json.dumps(record)))
    return out


def same(a: object, b: object) -> bool:
    """Equal values of equal types; floats bit for bit (-0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return math.copysign(1.0, a) == math.copysign(1.0, b) and (a == b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    rows = draw(st.integers(1, 6))
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    columns = {}
    for name in names:
        kind = draw(st.sampled_from(["float", "int", "bool", "text", "mixed"]))
        if kind == "float":
            values = draw(st.lists(st.floats(), min_size=rows, max_size=rows))
            columns[name] = pd.Series(values, dtype=np.float64)
        elif kind == "int":
            values = draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=rows, max_size=rows))
            columns[name] = pd.Series(values, dtype=np.int64)
        elif kind == "bool":
            columns[name] = pd.Series(draw(st.lists(st.booleans(), min_size=rows, max_size=rows)))
        elif kind == "text":
            values = draw(st.lists(st.text(max_size=5), min_size=rows, max_size=rows))
            columns[name] = pd.Series(values, dtype=object)
        else:
            value = st.one_of(st.none(), st.text(max_size=3), st.floats(), st.integers(-5, 5))
            columns[name] = pd.Series(
                draw(st.lists(value, min_size=rows, max_size=rows)), dtype=object
            )
    return pd.DataFrame(columns)


@given(frames())
def test_rows_read_back_as_json_dumps_writes_them(frame):
    found = [json.loads(row) for row in json_rows(frame)]
    assert len(found) == len(frame)
    for row, expected in zip(found, reference(frame), strict=True):
        assert same(row, expected), (row, expected)


def test_numbers_that_print_whole_stay_floats():
    """pyarrow prints 1.0 as ``1`` and 1e15 as ``1e+15``: each still reads back as the float."""
    values = [1.0, -0.0, 0.0, 1e15, 1e16, 1e-5, 5e-324, 1.7976931348623157e308, 123456789.0]
    rows = json_rows(pd.DataFrame({"x": values}))
    read = [json.loads(row)["x"] for row in rows]
    assert all(same(r, v) for r, v in zip(read, values, strict=True)), rows


def test_undefined_and_infinite_values():
    frame = pd.DataFrame({"x": [np.nan, np.inf, -np.inf], "s": ["a", None, np.nan]})
    assert json_rows(frame) == [
        '{"x": null, "s": "a"}',
        '{"x": Infinity, "s": null}',
        '{"x": -Infinity, "s": null}',
    ]


def test_empty_frames():
    assert json_rows(pd.DataFrame({"x": []})) == []
    assert json_rows(pd.DataFrame(index=[0, 1])) == ["{}", "{}"]


def test_mixed_objects_keep_their_types():
    """1, 1.0 and True (and 0.0, -0.0) are one key to a hash table, not to json."""
    values = [1, 1.0, True, 0.0, -0.0, "1", None]
    rows = json_rows(pd.DataFrame({"x": pd.Series(values, dtype=object)}))
    assert rows == [json.dumps({"x": v}) for v in values]
