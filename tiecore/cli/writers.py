"""``tiecore eval``'s writers: trec_eval-like text, CSV and JSON of the result rows.

Each takes the rows as plain columns (``run``, ``qid`` -- None on a summary row --,
``measure``, ``value`` and, when present, ``std``, ``stderr``, ``var``, ``min``,
``max``) and ``num_q``, each run's number of queries; the ``format_*`` functions take
:func:`tiecore.cli.eval.evaluate_runs`'s DataFrame.  No pandas is imported here.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas loads only when a command needs it (start-up)
    import pandas as pd


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
    """:func:`format_json` of plain columns."""
    records = _records(columns)
    return "[\n" + ",\n".join(json.dumps(r) for r in records) + ("\n]\n" if records else "]\n")
