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

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tiecore.version import __version__

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


# ----------------------------------------------------------------------------- tables as CSV

#: Significant digits kept in CSV output (float noise such as 0.26799999999999996 goes).
DIGITS = 12


def provenance(**fields: object) -> dict[str, object]:
    """The settings behind a result, in a fixed order, with the tiecore version added.

    Examples
    --------
    >>> list(provenance(measure="AP", seed=0))
    ['measure', 'seed', 'tiecore version']
    """
    out = {k.replace("_", " "): v for k, v in fields.items() if v is not None}
    out["tiecore version"] = __version__
    return out


def to_csv(frame: pd.DataFrame, provenance: Mapping[str, object] | None = None) -> str:
    """CSV that a plain ``pandas.read_csv`` reads: the settings behind the table as columns
    of their own after its columns (``data_set``, ``seed``, ``tiecore_version``: the same
    value on every row), floats to 12 significant digits.

    A setting the table holds as a column already (``measure``) is not repeated.  Comment
    lines would read more easily in a text editor, but ``pandas.read_csv`` and most CSV
    readers take them as rows unless told otherwise.

    Examples
    --------
    >>> import pandas as pd
    >>> print(to_csv(pd.DataFrame({"v": [0.1 + 0.2]}), {"measure": "P@10"}), end="")
    v,measure
    0.3,P@10
    """
    import pandas as pd

    settings = {k.replace(" ", "_"): v for k, v in (provenance or {}).items()}
    table = frame.assign(**{k: v for k, v in settings.items() if k not in frame.columns})
    index = frame.index.name is not None or isinstance(frame.index, pd.MultiIndex)
    return table.to_csv(index=index, float_format=f"%.{DIGITS}g")


# ------------------------------------------------- tiecore eval's rows: trec_eval text, CSV, JSON
# Plain columns: run, qid (None on a summary row), measure, value and, when present, std,
# stderr, var, min, max; num_q: each run's number of queries.  The format_* functions take
# tiecore.cli.eval.evaluate_runs' DataFrame.


def format_trec(result: pd.DataFrame, num_q: dict[str, int]) -> str:
    """trec_eval-like text: per run a ``runid`` and a ``num_q`` line, then the rows.

    The summary rows (qid None) are labelled ``all``, as trec_eval labels them; a
    query really named ``all`` among the rows would be mistaken for them, so it
    raises ``ValueError``.
    """
    return trec_text(plain_columns(result), num_q)


def trec_text(columns: dict[str, list], num_q: dict[str, int]) -> str:
    """:func:`format_trec` of plain columns (``qid`` None on summary rows)."""
    if "all" in columns["qid"]:
        raise ValueError(
            "a query is named 'all', the name trec format gives the summary rows "
            "(expected --format csv or json, whose summary rows have no qid, or no -q)"
        )
    blocks: dict[str, list[int]] = {}
    for i, run in enumerate(columns["run"]):
        blocks.setdefault(run, []).append(i)
    measure, qid, value = columns["measure"], columns["qid"], columns["value"]
    lines: list[str] = []
    for run, rows in blocks.items():
        lines.append(f"{'runid':<22}\tall\t{run}")
        lines.append(f"{'num_q':<22}\tall\t{num_q[run]}")
        lines.extend(
            f"{measure[i]:<22}\t{'all' if qid[i] is None else qid[i]}\t{value[i]:.4f}" for i in rows
        )
    return "".join(line + "\n" for line in lines)


def _columns(result: pd.DataFrame) -> list[str]:
    extra = [c for c in ("std", "stderr", "var", "min", "max") if c in result.columns]
    return ["run", "qid", "measure", "value", *extra]


def plain_columns(result: pd.DataFrame) -> dict[str, list]:
    """The output columns as plain Python lists: str run and measure, qid str or None
    (a summary row), floats at full precision."""
    return {
        c: result[c].astype(str).tolist()
        if c in ("run", "measure")
        else [None if q is None else str(q) for q in result[c].to_numpy(object, na_value=None)]
        if c == "qid"
        else result[c].astype(float).tolist()
        for c in _columns(result)
    }


def _records(columns: dict[str, list]) -> list[dict[str, object]]:
    """Rows of plain columns as dicts; NaN becomes None (so is a summary row's qid)."""
    names = list(columns)
    return [
        {
            c: (None if isinstance(v, float) and math.isnan(v) else v)
            for c, v in zip(names, row, strict=True)
        }
        for row in zip(*columns.values(), strict=True)
    ]


def format_csv(result: pd.DataFrame, num_q: dict[str, int]) -> str:
    """CSV with a header; floats are written with ``repr`` so they read back exactly.

    A summary row (the mean over queries) has an empty qid, which no query id can be.
    """
    return csv_text(plain_columns(result), num_q)


def csv_text(columns: dict[str, list], num_q: dict[str, int]) -> str:
    """:func:`format_csv` of plain columns."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(columns))
    writer.writerows(
        ["" if v is None else repr(v) if isinstance(v, float) else v for v in record.values()]
        for record in _records(columns)
    )
    return buffer.getvalue()


def format_json(result: pd.DataFrame, num_q: dict[str, int]) -> str:
    """A JSON list of records, one per line; floats read back exactly.

    A summary row (the mean over queries) has ``"qid": null``.
    """
    return json_text(plain_columns(result), num_q)


def json_text(columns: dict[str, list], num_q: dict[str, int]) -> str:
    """:func:`format_json` of plain columns (:func:`json_table` of their rows)."""
    return json_table(_records(columns))
