"""trec_eval's preference measures over runs: ``tiecore eval -R prefs`` / ``qrels_prefs``.

:func:`evaluate_prefs` ranks each run's docs of each query as trec_eval 9.0.x ranks
them for preferences -- score descending compared as 32-bit floats, then docno
*ascending* (its preference code breaks ties the other way round from its qrels
code), cut at the depth -- and computes :data:`tiecore.measures.prefs.PREFS_MEASURES`
per query (:func:`tiecore.measures.prefs.query_values`) and their summary: the mean
over the queries (the counts: their sum), added one after the other.

Tie-aware (``ties="aware"``): the docs of equal scores (as given) form tie groups; the
retrieved set does not depend on their order (a depth that cuts a tie group is
refused), so each preference between two tied docs is fulfilled in half of the
orderings and the counts, ``simp``, ``avgjg`` and ``pair`` measures, linear in those
indicators over fixed denominators, have their exact expectation, and with
``spread`` their exact variance and range (:func:`tiecore.measures.prefs.tied_spread`).
The ``Rnonrel`` measures have none here (nan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tiecore.errors import InputError
from tiecore.io.trec_eval_files import GroupJudgments
from tiecore.measures.prefs import PREFS_MEASURES, PrefsError, query_values

if TYPE_CHECKING:
    import pandas as pd


def _codes(values: np.ndarray) -> np.ndarray:
    """Codes whose order is the values' string order."""
    return np.unique(values.astype(str), return_inverse=True)[1]


def _ranked(run: pd.DataFrame, aware: bool) -> tuple[np.ndarray, np.ndarray]:
    """One query's docnos in trec_eval's preference order, and each one's tie group
    (aware: equal scores as given; oblivious: every doc its own)."""
    docno = run["docno"].to_numpy(dtype=str)
    score = run["score"].to_numpy(dtype=np.float64)
    if aware:
        order = np.lexsort((docno, -score))
        ranked = score[order]
        group = np.concatenate([[0], np.cumsum(ranked[1:] != ranked[:-1])]).astype(np.int64)
        return docno[order], group
    as_float = score.astype(np.float32)
    order = np.lexsort((docno, -as_float))
    return docno[order], np.arange(len(order), dtype=np.int64)


def evaluate_prefs(
    runs: dict[str, pd.DataFrame],
    prefs: GroupJudgments,
    *,
    ties: str = "oblivious",
    depth: int | None = None,
    complete: bool = False,
    spread: bool = False,
) -> tuple[dict[str, list], dict[str, int]]:
    """Every preference measure of every run, per query and summary.

    Returns plain columns ``run, qid, measure, value`` (per query in query-id order,
    then the summary rows, whose ``qid`` is None) and ``num_q`` per run (with
    ``complete``, every judged query: one the run lacks adds 0).  An inconsistent
    preference, or (aware) a depth that cuts a tie group, is an :class:`InputError`.
    ``spread`` (aware): columns ``var``, ``min``, ``max`` too, per query the exact
    variance over random orderings and the range over all of them
    (:func:`tiecore.measures.prefs.tied_spread`); for the summary, the mean's (the
    variances summed over ``num_q**2``).
    """
    aware = ties == "aware"
    qids = prefs.qid.astype(str)
    starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]])
    ends = np.r_[starts[1:], len(qids)]
    spread = spread and aware
    names = ("value", "var", "min", "max") if spread else ("value",)
    columns: dict[str, list] = {"run": [], "qid": [], "measure": [], **{n: [] for n in names}}
    num_q: dict[str, int] = {}
    for name, run in runs.items():
        by_query = {str(q): part for q, part in run.groupby("qid", sort=False)}
        values = []
        for a, b in zip(starts, ends, strict=True):  # judged queries in id order
            qid = str(qids[a])
            part = by_query.get(qid)
            if part is None:
                continue
            found = _query(part, prefs, a, b, aware, depth, name, qid, spread)
            values.append(found.reshape(len(names), len(PREFS_MEASURES)))
            for k, measure in enumerate(PREFS_MEASURES):
                columns["run"].append(name)
                columns["qid"].append(qid)
                columns["measure"].append(measure)
                for row, column in enumerate(names):
                    columns[column].append(float(values[-1][row, k]))
        if not values:  # trec_eval: "No queries with both results and relevance info"
            source = run.attrs.get("source")
            raise InputError(
                f"{source} (run {name})" if source else f"run {name}",
                None,
                "none of its queries has preference judgments",
                "query ids that match the judgments",
            )
        n = len(starts) if complete else len(values)
        num_q[name] = n
        table = np.stack(values)
        sums = np.cumsum(table, axis=0)[-1]
        for k, measure in enumerate(PREFS_MEASURES):
            columns["run"].append(name)
            columns["qid"].append(None)
            columns["measure"].append(measure)
            for row, column in enumerate(names):
                scale = n * n if column == "var" else n
                columns[column].append(float(sums[row, k]) / scale if n else 0.0)
    return columns, num_q


def _query(
    part: pd.DataFrame,
    prefs: GroupJudgments,
    a: int,
    b: int,
    aware: bool,
    depth: int | None,
    name: str,
    qid: str,
    spread: bool = False,
) -> np.ndarray:
    """One query's values: docid ranks of its judged docs, then the measures."""
    docno, tie = _ranked(part, aware)
    if depth is not None and len(docno) > depth:
        if aware and tie[depth] == tie[depth - 1]:
            raise InputError(
                f"run {name}",
                None,
                f"query {qid}: the depth {depth} cuts a group of tied scores, so the docs "
                "retrieved depend on the ordering",
                "--ties oblivious, or a depth between tie groups, for the preference measures",
            )
        docno, tie = docno[:depth], tie[:depth]
    judged = np.unique(prefs.docno[a:b].astype(str))
    retrieved = np.isin(docno, judged)
    ranked = docno[retrieved]
    rest = judged[~np.isin(judged, ranked)]
    order = np.concatenate([ranked, rest])
    rank_of = np.empty(len(judged), dtype=np.int64)
    rank_of[np.searchsorted(judged, order)] = np.arange(len(order))
    ranks = rank_of[np.searchsorted(judged, prefs.docno[a:b].astype(str))]
    groups = tie[retrieved] if aware else None
    try:
        return query_values(
            ranks,
            _codes(prefs.group[a:b]),
            _codes(prefs.subgroup[a:b]),
            prefs.level[a:b].astype(np.float32),
            len(judged),
            len(ranked),
            groups,
            spread,
        )
    except PrefsError as error:
        line = int(prefs.line[a + error.row])
        raise InputError(
            prefs.source, line, f"query {qid}: {error.problem}", "consistent preferences"
        ) from None
    except ValueError as error:  # a tie group too large for the bounds
        raise InputError(
            f"run {name}", None, f"query {qid}: {error}", "--ties aware without --spread"
        ) from None
