"""trec_eval's ``-Z FILE`` in ``tiecore eval``: every value as a z-score.

trec_eval 9.0.x's ``-Z`` replaces each per-query value ``v`` of a measure by
``(v - mean) / stddev``, the mean and standard deviation of that query and measure
(its printed name: ``P_10``, ``map``) read from the file
(:func:`tiecore.io.trec_eval_files.read_zscores`), before it accumulates the summary;
a pair missing from the file, or a zero stddev where ``v`` differs from the mean,
gives ``-1000000`` (trec_eval's ``MISSING_ZSCORE_VALUE``; a zero stddev where ``v``
is the mean gives 0).  The summary is then trec_eval's over the z-scores: their mean
(a count's sum; gm_map's geometric mean of ``max(z, 0.00001)``), and every line
prints as ``Z%-22s\\t%s\\t%6.4f`` (``runid`` unchanged, ``num_q`` as ``Znum_q`` with
a fraction).  tiecore prints the same, and names on stderr, in one line, the pairs
that fell back to ``-1000000`` (trec_eval says nothing).

Per query the transform is affine, so under tie-aware evaluation it applies to the
exact mean over orderings: the aware value is the transform of the aware value, the
variance is divided by ``stddev**2`` and the bounds are transformed (swapped for a
negative stddev); the mean's spread follows as for any mean over queries (its
variance the sum over Q**2).  A zero stddev is no affine map: it is taken where the
value does not depend on the ordering (min = max) and refused otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tiecore.cli.trec_eval_names import TrecPlan, rows_by_run
from tiecore.errors import InputError

#: trec_eval's value for a query and measure the file lacks (``MISSING_ZSCORE_VALUE``).
MISSING = -1000000.0
#: gm_map's floor before the logarithm (trec_eval's ``MIN_GEO_MEAN``).
MIN_GEO_MEAN = 0.00001


def zscore_columns(
    columns: dict[str, list],
    num_q: dict[str, int],
    plan: TrecPlan,
    table: dict[tuple[str, str], tuple[float, float]],
    source: str,
) -> tuple[dict[str, list], list[str]]:
    """Per-query rows as z-scores and their summary rows, one row per printed line.

    ``columns`` are the evaluation's per-query and summary rows (tiecore's names);
    the result's ``measure`` is trec_eval's printed name of each line of
    ``plan.lines`` (a measure printed twice, ``Rprec`` and ``Rprec_mult_1.00``, takes
    each name's own mean and stddev), per query in the evaluation's order, then the
    summary rows.  Columns ``var``, ``min``, ``max`` (aware spread) are carried.
    Returns the columns and the missing (query, measure) pairs, as text.
    """
    spread = [name for name in ("var", "min", "max") if name in columns]
    cells: dict[str, dict[tuple[str, str], int]] = {}
    queries: dict[str, dict[str, None]] = {}
    for i, (run, qid, measure) in enumerate(
        zip(columns["run"], columns["qid"], columns["measure"], strict=True)
    ):
        if qid is not None:
            cells.setdefault(run, {})[qid, measure] = i
            queries.setdefault(run, {})[qid] = None
    out: dict[str, list] = {"run": [], "qid": [], "measure": [], "value": []}
    for name in spread:
        out[name] = []
    missing: dict[str, None] = {}
    text: set[str] = set()  # printed names of text lines (no z-score, no summary)
    for run in dict.fromkeys(columns["run"]):
        qids = list(queries.get(run, {}))
        summary: list[tuple[str, list[float], dict[str, list[float]]]] = []
        first = len(out["run"])
        for printed, measure in plan.lines:
            values: list[float] = []
            moments: dict[str, list[float]] = {name: [] for name in spread}
            for qid in qids:
                i = cells[run].get((qid, measure))
                if i is None:
                    continue
                if isinstance(columns["value"][i], str):  # a text line (relstring): as is
                    text.add(printed)
                    out["run"].append(run)
                    out["qid"].append(qid)
                    out["measure"].append(printed)
                    for name in ("value", *spread):
                        out[name].append(columns[name][i])
                    continue
                row = {name: float(columns[name][i]) for name in ("value", *spread)}
                z = _transform(row, table.get((qid, printed)), printed, qid, source)
                if table.get((qid, printed)) is None:
                    missing[f"{qid} {printed}"] = None
                values.append(z["value"])
                for name in spread:
                    moments[name].append(z[name])
                if measure in plan.summary_only:
                    continue
                out["run"].append(run)
                out["qid"].append(qid)
                out["measure"].append(printed)
                for name in ("value", *spread):
                    out[name].append(z[name])
            summary.append((printed, values, moments))
        # the run's per-query rows query by query, each query's in the plan's order
        rank = {qid: k for k, qid in enumerate(qids)}
        order = sorted(range(first, len(out["run"])), key=lambda i: rank[out["qid"][i]])
        for column in out.values():
            column[first:] = [column[i] for i in order]
        for printed, values, moments in summary:
            if printed in text:
                continue  # a text line has no summary
            n = num_q[run]
            measure = dict(plan.lines)[printed]
            out["run"].append(run)
            out["qid"].append(None)
            out["measure"].append(printed)
            out["value"].append(_summary(values, n, measure, plan))
            for name in spread:
                part = moments[name]
                if name == "var":
                    scale = 1.0 if measure in plan.counts else 1.0 / (n * n)
                    out[name].append(_in_order(part) * scale)
                else:
                    out[name].append(_summary(part, n, measure, plan))
    return out, list(missing)


def _in_order(values: Sequence[float]) -> float:
    """The sum added one value after the other, as trec_eval's loop adds."""
    return float(np.cumsum(np.asarray(values, dtype=np.float64))[-1]) if len(values) else 0.0


def _summary(values: Sequence[float], n: int, measure: str, plan: TrecPlan) -> float:
    """trec_eval's summary of the z-scores: a count's sum, gm_map's geometric mean
    (of ``max(z, MIN_GEO_MEAN)``), else the mean over ``n`` queries."""
    if measure in plan.counts:
        return _in_order(values)
    if measure in plan.summary_only:
        logs = np.log(np.maximum(np.asarray(values, dtype=np.float64), MIN_GEO_MEAN))
        return math.exp(_in_order(logs) / n) if n else 0.0
    return _in_order(values) / n if n else 0.0


def _transform(
    row: dict[str, float], entry: tuple[float, float] | None, printed: str, qid: str, source: str
) -> dict[str, float]:
    """One query's value (and spread) as a z-score; trec_eval's -1000000 where the file
    lacks the pair or a zero stddev meets another value."""
    if entry is None:
        return {name: (0.0 if name == "var" else MISSING) for name in row}
    mean, sd = entry
    if sd != 0 or math.isnan(sd):  # C: if (stddev) -- nan is true
        out = {"value": (row["value"] - mean) / sd}
        if "var" in row:
            out["var"] = row["var"] / (sd * sd)
        if "min" in row:
            low, high = (row["min"] - mean) / sd, (row["max"] - mean) / sd
            out["min"], out["max"] = (low, high) if not sd < 0 else (high, low)
        return out
    if "min" in row and row["min"] != row["max"]:
        raise InputError(
            source,
            None,
            f"stddev 0 for query {qid}, measure {printed}, whose value depends on the order "
            f"of tied docs ({row['min']:g} to {row['max']:g}): no z-score for every ordering",
            "a nonzero stddev, or --ties oblivious",
        )
    z = 0.0 if row["value"] == mean else MISSING
    return {name: (0.0 if name == "var" else z) for name in row}


def zscore_text(
    columns: dict[str, list], num_q: dict[str, int], plan: TrecPlan, *, per_query: bool
) -> str:
    """trec_eval's ``-Z`` output of :func:`zscore_columns`' rows: ``Z%-22s\\t%s\\t%6.4f``
    lines per query (with ``per_query``), ``runid`` as is, ``Znum_q`` with a fraction,
    then the summary lines."""
    lines: list[str] = []
    measure, qid, value = columns["measure"], columns["qid"], columns["value"]
    for run, rows in rows_by_run(columns).items():
        if per_query:
            lines.extend(
                f"{measure[i]:<22}\t{qid[i]}\t{value[i]}"
                if isinstance(value[i], str)  # a text line (relstring): no z-score
                else f"Z{measure[i]:<22}\t{qid[i]}\t{value[i]:6.4f}"
                for i in rows
                if qid[i] is not None
            )
        if plan.runid:
            lines.append(f"{'runid':<22}\tall\t{run}")
        if plan.num_q:
            lines.append(f"Z{'num_q':<22}\tall\t{float(num_q[run]):6.4f}")
        lines.extend(f"Z{measure[i]:<22}\tall\t{value[i]:6.4f}" for i in rows if qid[i] is None)
    return "".join(line + "\n" for line in lines)
