"""Measures averaged over judgment groups: trec_eval's ``-R qrels_jg`` measures.

With ``qrels_jg`` judgments (``qid jg docno rel``, :func:`tiecore.io.trec_eval_files.read_qrels_jg`)
each judgment group ``jg`` (a user) judges the query on its own.  trec_eval 9.0.x's
``map_avgjg``, ``P_avgjg`` and ``Rprec_mult_avgjg`` score the run against each group's
judgments as ``map``, ``P`` and ``Rprec_mult`` score it against qrels, and average over
the query's groups, in the groups' (string) order:

    value(q) = (1 / G_q) * sum_{g} M(run_q, judgments_{q,g})

(no division for one group), then average over the queries as any measure.

:func:`evaluate_judgment_groups` does exactly that with tiecore's own measures (``AP``,
``P@k``, ``Rprec(mult=m)``): every (query, group) becomes a query of its own, the run's
docs of the query repeated for it, and the values are summed back over the groups one
after the other (trec_eval's order and rounding).  Under tie-aware evaluation the
average of the groups' exact expectations is the exact expectation of the average
(linearity); its variance would need the covariance between the groups (the same
ordering scores every group), so ``--spread`` and sampled mode are refused for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tiecore.errors import InputError
from tiecore.io.trec_eval_files import GroupJudgments

if TYPE_CHECKING:
    import pandas as pd

#: Joins a query id and a group into the id of the (query, group) query; below every
#: printable character, so that the joined ids sort as their query ids do.
SEPARATOR = "\x1f"


def group_queries(groups: GroupJudgments) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judgments as qrels of (query, group) queries, and the map from each query to
    its (query, group) ids (columns ``qid``, ``group_qid``, in group order)."""
    import pandas as pd

    joined = np.char.add(np.char.add(groups.qid.astype(str), SEPARATOR), groups.group.astype(str))
    joined = joined.astype(object)
    qrels = pd.DataFrame({"qid": joined, "docno": groups.docno, "level": groups.level})
    qrels.attrs["source"] = groups.source
    pairs = pd.DataFrame({"qid": groups.qid, "group_qid": joined}).drop_duplicates("group_qid")
    return qrels, pairs.reset_index(drop=True)


def expand_run(run: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The run's docs of each query repeated for each of its (query, group) queries
    (queries without judgments dropped, as trec_eval skips them)."""
    expanded = run.merge(pairs, on="qid", how="inner", sort=False)
    expanded["qid"] = expanded.pop("group_qid")
    expanded.attrs = dict(run.attrs)
    return expanded


def evaluate_judgment_groups(
    runs: dict[str, pd.DataFrame],
    groups: GroupJudgments,
    measures: Sequence[object],
    evaluate: Callable[..., pd.DataFrame],
    **options: object,
) -> tuple[dict[str, list], dict[str, int]]:
    """Every measure averaged over each query's judgment groups, per query and summary.

    ``evaluate(runs, qrels, measures, per_query=True, **options)`` evaluates the
    (query, group) queries (:func:`tiecore.evaluation.core.evaluate`).  Returns plain
    columns ``run, qid, measure, value`` (a summary row's ``qid`` None; the mean over
    the run's queries, added one after the other as trec_eval does) and ``num_q``.
    """
    qrels, pairs = group_queries(groups)
    expanded = {name: expand_run(run, pairs) for name, run in runs.items()}
    for name, run in expanded.items():
        if not len(run):  # trec_eval: "No queries with both results and relevance info"
            source = run.attrs.get("source")
            raise InputError(
                f"{source} (run {name})" if source else f"run {name}",
                None,
                "none of its queries has judgments in the qrels_jg file",
                "query ids that match the judgments",
            )
    result = evaluate(expanded, qrels, list(measures), per_query=True, **options)
    rows = result[result["qid"].notna()]
    # each (query, group) query's query and its group's place among the query's groups
    place = pairs.assign(place=pairs.groupby("qid", sort=False).cumcount()).set_index("group_qid")
    group_qid = rows["qid"].astype(str)
    qid = place["qid"].reindex(group_qid).to_numpy(dtype=object)
    position = place["place"].reindex(group_qid).to_numpy(dtype=np.int64)
    run = rows["run"].astype(str).to_numpy(dtype=object)
    measure = rows["measure"].astype(str).to_numpy(dtype=object)
    value = rows["value"].to_numpy(dtype=np.float64)
    # one cell per (run, query, measure), in the order of its first row
    import pandas as pd

    cell, _ = pd.factorize(pd.MultiIndex.from_arrays([run, qid, measure]))
    cells = int(cell.max(initial=-1)) + 1
    table = np.zeros((cells, int(position.max(initial=0)) + 1))
    table[cell, position] = value
    counts = np.bincount(cell, minlength=cells)
    sums = np.cumsum(table, axis=1)[:, -1]  # one group after the other, as trec_eval's loop
    averaged = np.where(counts > 1, sums / np.maximum(counts, 1), sums)
    first = np.unique(cell, return_index=True)[1]
    columns = {
        "run": run[first].tolist(),
        "qid": qid[first].tolist(),
        "measure": measure[first].tolist(),
        "value": averaged.tolist(),
    }
    return _with_means(columns, [str(m) for m in measures])


def _with_means(
    columns: dict[str, list], measures: list[str]
) -> tuple[dict[str, list], dict[str, int]]:
    """The per-query rows followed by each run's means over its queries (added one after
    the other, as trec_eval does), in ``measures``' order, and ``num_q``."""
    run = np.asarray(columns["run"], dtype=object)
    measure = np.asarray(columns["measure"], dtype=object)
    value = np.asarray(columns["value"], dtype=np.float64)
    out: dict[str, list] = {name: [] for name in columns}
    num_q: dict[str, int] = {}
    for name in dict.fromkeys(columns["run"]):  # a loop over runs and measures only
        mine = run == name
        num_q[name] = len(set(np.asarray(columns["qid"], dtype=object)[mine].tolist()))
        for column in columns:
            out[column].extend(np.asarray(columns[column], dtype=object)[mine].tolist())
        for m in measures:
            values = value[mine & (measure == m)]
            total = float(np.cumsum(values)[-1]) if len(values) else 0.0
            out["run"].append(name)
            out["qid"].append(None)
            out["measure"].append(m)
            out["value"].append(total / num_q[name] if num_q[name] else 0.0)
    return out, num_q
