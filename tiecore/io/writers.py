"""Tables as JSON objects, one a row, encoded a column at a time.

``json.dumps`` spends most of its time in ``float.__repr__``, once per number
(0.4 s for the 14,280 pairs of 120 runs); pyarrow formats a whole column of
doubles at once with the same shortest digits that read back exactly, and joins
the columns into rows in C.  Other columns are encoded by ``json.dumps`` once
per distinct value (per value in columns of mixed types).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def json_rows(frame: pd.DataFrame) -> list[str]:
    """Each row of ``frame`` as a JSON object, as ``json.dumps`` writes a dict of it.

    NaN and missing values are ``null``; every other float reads back as the same
    double (and as a float: ``1.0``, not ``1``), though its text may differ from
    ``repr`` (``1e-05`` is ``0.00001``, ``1e15`` is ``1e+15``); infinities are
    ``Infinity`` as ``json.dumps`` writes them.

    >>> frame = pd.DataFrame({"run": ["a", 'b"'], "p": [1.0, np.nan], "n": [1, 2]})
    >>> for row in json_rows(frame):
    ...     print(row)
    {"run": "a", "p": 1.0, "n": 1}
    {"run": "b\\"", "p": null, "n": 2}
    """
    if len(frame) == 0:
        return []
    if frame.shape[1] == 0:
        return ["{}"] * len(frame)
    pieces: list[object] = []
    for k, name in enumerate(frame.columns):
        pieces += [("{" if k == 0 else ", ") + json.dumps(str(name)) + ": "]
        pieces += [_encoded(frame.iloc[:, k])]
    pieces += ["}"]
    return pc.binary_join_element_wise(*pieces, "").to_pylist()


def _encoded(values: pd.Series) -> pa.Array:
    """One column as JSON values (strings)."""
    if values.dtype.kind == "f":
        return _numbers(values.to_numpy(np.float64))
    if values.dtype.kind not in "iub" and pd.api.types.infer_dtype(values) not in (
        "string",
        "empty",
    ):
        # mixed objects: 1, 1.0 and True (or 0.0 and -0.0) are one key to factorize
        items = [None if _undefined(v) else v for v in values.tolist()]
        return pa.array([json.dumps(item) for item in items], pa.string())
    codes, distinct = pd.factorize(values, use_na_sentinel=True)
    encoded = [json.dumps(value) for value in distinct.tolist()] + ["null"]
    codes = np.where(codes < 0, len(encoded) - 1, codes)
    return pc.take(pa.array(encoded, pa.string()), pa.array(codes))


def _numbers(numbers: np.ndarray) -> pa.Array:
    """Doubles as JSON numbers: pyarrow's shortest round-trip text, a point added to
    whole numbers (``1`` would read back as an int)."""
    text = pc.cast(pa.array(numbers), pa.string())
    whole = np.isfinite(numbers) & ~pc.match_substring_regex(text, "[.e]").to_numpy(False)
    text = pc.if_else(pa.array(whole), pc.binary_join_element_wise(text, ".0", ""), text)
    special = np.select(
        [np.isnan(numbers), numbers == np.inf, numbers == -np.inf],
        ["null", "Infinity", "-Infinity"],
        "",
    )
    return pc.if_else(pa.array(special != ""), pa.array(special), text)


def _undefined(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))
