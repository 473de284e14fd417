"""Writers: tables and documents as text (JSON here; the CLI's trec/csv/text beside it).

One JSON writer for every command.  A table is written one record a line, so a
diff of two outputs shows the rows that changed:

- :func:`json_rows`: each row of a DataFrame as a JSON object, encoded a column
  at a time (``json.dumps`` spends most of its time in ``float.__repr__``, once
  per number: 0.4 s for the 14,280 pairs of 120 runs; pyarrow formats a whole
  column of doubles at once with the shortest digits that read back exactly, and
  joins the columns into rows in C);
- :func:`json_records`: plain records (dicts of Python values) the same way,
  through ``json.dumps`` (no pandas or pyarrow to import: the CLI's start-up);
- :func:`json_table`: a table as a JSON list, one record a line;
- :func:`json_document`: an object of settings and tables, one key a line and
  one record a line of each table (``tiecore compare --format json``).

NaN and missing values are ``null`` throughout; infinities are ``Infinity`` as
``json.dumps`` writes them.  pandas and pyarrow are imported only when a
DataFrame is written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


def json_rows(frame: pd.DataFrame) -> list[str]:
    """Each row of ``frame`` as a JSON object, as ``json.dumps`` writes a dict of it.

    NaN and missing values are ``null``; every other float reads back as the same
    double (and as a float: ``1.0``, not ``1``), though its text may differ from
    ``repr`` (``1e-05`` is ``0.00001``, ``1e15`` is ``1e+15``); infinities are
    ``Infinity`` as ``json.dumps`` writes them.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"run": ["a", 'b"'], "p": [1.0, np.nan], "n": [1, 2]})
    >>> for row in json_rows(frame):
    ...     print(row)
    {"run": "a", "p": 1.0, "n": 1}
    {"run": "b\\"", "p": null, "n": 2}
    """
    import pyarrow.compute as pc

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


def json_records(records: Iterable[Mapping[str, object]]) -> list[str]:
    """Plain records as JSON objects, ``json.dumps`` of each with NaN as ``null``.

    >>> json_records([{"qid": None, "P@5": float("nan")}, {"qid": "q1", "P@5": 0.4}])
    ['{"qid": null, "P@5": null}', '{"qid": "q1", "P@5": 0.4}']
    """
    return [
        json.dumps({k: None if _undefined(v) else v for k, v in record.items()})
        for record in records
    ]


def json_table(table: pd.DataFrame | Sequence[Mapping[str, object]]) -> str:
    """A table (a DataFrame or plain records) as a JSON list, one record a line.

    >>> print(json_table([{"run": "a", "AP": 0.5}, {"run": "b", "AP": float("nan")}]), end="")
    [
    {"run": "a", "AP": 0.5},
    {"run": "b", "AP": null}
    ]
    >>> json_table([])
    '[\\n]\\n'
    """
    rows = _rows(table)
    return "[\n" + ",\n".join(rows) + ("\n]\n" if rows else "]\n")


def json_document(document: Mapping[str, object]) -> str:
    """``document`` as a JSON object: one key a line, one record a line of each table.

    A value that is a DataFrame is written with :func:`json_rows`, a list with
    ``json.dumps`` of each item, anything else with ``json.dumps``.
    (``json.dumps(indent=...)`` takes the pure-Python encoder: 2.5 s for the 14,280
    pairs of 120 runs, most of ``compare``'s output time.)

    >>> import pandas as pd
    >>> pairs = pd.DataFrame({"a": ["x"], "p": [np.nan]})
    >>> print(json_document({"measure": "AP", "pairs": pairs, "empty": pairs[:0]}), end="")
    {
     "measure": "AP",
     "pairs": [
      {"a": "x", "p": null}
     ],
     "empty": []
    }
    """
    lines = []
    for key, value in document.items():
        head = f" {json.dumps(key)}: "
        if isinstance(value, list):
            rows = [json.dumps(item) for item in value]
        elif hasattr(value, "iloc"):  # a DataFrame
            rows = json_rows(value)
        else:
            lines.append(head + json.dumps(value))
            continue
        body = ",\n".join(f"  {row}" for row in rows)
        lines.append(f"{head}[\n{body}\n ]" if rows else f"{head}[]")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _rows(table: pd.DataFrame | Sequence[Mapping[str, object]]) -> list[str]:
    """The records of a DataFrame or of a sequence of dicts, as JSON objects."""
    if hasattr(table, "iloc"):
        return json_rows(table)  # type: ignore[arg-type]
    return json_records(table)  # type: ignore[arg-type]


def _encoded(values: pd.Series) -> pa.Array:
    """One column as JSON values (strings)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

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
    import pyarrow as pa
    import pyarrow.compute as pc

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
    """None, pandas' NA and float NaN: written as ``null``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    return type(value).__name__ == "NAType"  # pandas.NA, without importing pandas
