"""Every ordering of one small ranked list, and the measure of each.

The tie-aware value is the mean of a measure over all orders of the tied docs; for a
list short enough, :func:`orderings` lists them and :func:`ordering_values` scores each,
so the mean can be seen (and checked) by enumeration.  :func:`ranked_list` gives the
one order a tie-break picks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.evaluation.core import evaluate
from tiecore.explain.anatomy import QueryList
from tiecore.measures import Measure
from tiecore.options import ANATOMY, pick, validate_params
from tiecore.report.effects import quietly

#: At most this many orderings are listed by :func:`orderings` (7! = 5040).
MAX_ORDERINGS = 5040


def count_orderings(scores: Sequence[float], above: int | None = None) -> int:
    """``prod(n_i!)`` over the tie groups: how many orders the scores allow.

    With ``above``, the product stops as soon as it passes ``above`` (a number larger
    than ``above`` is returned, not the count): a limit is checked in a few
    multiplications, where 3 million tied scores' exact count would take half a minute.

    Examples
    --------
    >>> count_orderings([0.9, 0.7, 0.7, 0.7, 0.4, 0.4])
    12
    >>> count_orderings([0.5] * 3_000_000, above=5040) > 5040
    True
    """
    _, sizes = np.unique(np.asarray(scores, np.float64) + 0.0, return_counts=True)
    if above is None:
        return math.prod(math.factorial(int(n)) for n in sizes)
    total = 1
    for n in sizes[sizes > 1].tolist():  # each factor >= 2: past `above` within log2 steps
        for k in range(2, n + 1):
            total *= k
            if total > above:
                return total
    return total


@validate_params(pick(ANATOMY, "limit"))
def orderings(scores: Sequence[float], limit: int = MAX_ORDERINGS) -> np.ndarray | None:
    """Every order of the rows consistent with ``scores`` (descending), or None past ``limit``.

    Permutations inside each tie group, in the Cartesian product across groups.

    Returns
    -------
    ndarray or None
        ``(orderings, rows)`` row indices, or None when there are more than ``limit``.

    Examples
    --------
    >>> orderings([1.0, 2.0, 1.0]).tolist()
    [[1, 0, 2], [1, 2, 0]]
    """
    scores = np.asarray(scores, dtype=np.float64) + 0.0
    if count_orderings(scores, above=limit) > limit:
        return None
    order = np.argsort(-scores, kind="stable")
    _, sizes = np.unique(-scores[order], return_counts=True)
    groups = np.split(order, np.cumsum(sizes)[:-1])
    blocks = [list(itertools.permutations(group)) for group in groups]
    return np.array(
        [np.concatenate(choice) for choice in itertools.product(*blocks)], dtype=np.int64
    ).reshape(-1, len(scores))


@validate_params(pick(ANATOMY, "rel_level"))
def ordering_values(
    query: QueryList, orders: np.ndarray, measure: str | Measure, rel_level: int = 1
) -> np.ndarray:
    """The measure of each ordering of one query's list (rows of ``orders``).

    Every ordering becomes a query of one run, its file order that ordering,
    scored by :func:`tiecore.evaluate` with ``tiebreak="file_order"``.

    Examples
    --------
    >>> docs = pd.DataFrame({"docno": list("abc"), "score": [1.0, 1.0, 1.0], "level": [1, 0, 0]})
    >>> query = QueryList.from_docs(docs)
    >>> ordering_values(query, orderings(query.score), "RR").round(4).tolist()
    [1.0, 1.0, 0.5, 0.3333, 0.5, 0.3333]
    """
    count, width = orders.shape
    names = np.array([f"o{i:06d}" for i in range(count)], dtype=object)
    run, qrels = query.frames()
    flat = orders.ravel()
    many_run = pd.DataFrame(
        {
            "qid": np.repeat(names, width),
            "docno": run["docno"].to_numpy()[flat],
            "score": run["score"].to_numpy()[flat],
        }
    )
    many_qrels = pd.DataFrame(
        {
            "qid": np.repeat(names, len(qrels)),
            "docno": np.tile(qrels["docno"].to_numpy(), count),
            "level": np.tile(qrels["level"].to_numpy(np.int64), count),
        }
    )
    if len(qrels) == 0:  # no judgments at all: every ordering scores 0
        return np.zeros(count)
    found = quietly(
        evaluate,
        many_run,
        many_qrels,
        measure,
        ties="oblivious",
        tiebreak="file_order",
        rel_level=rel_level,
        per_query=True,
        complete=True,
    )
    found = found[found["qid"].notna()]
    return found.set_index("qid")["value"].reindex(names).to_numpy(np.float64)


@validate_params(pick(ANATOMY, "tiebreak", "rel_level"))
def ranked_list(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    qid: str,
    tiebreak: str = "trec_eval",
    rel_level: int = 1,
) -> pd.DataFrame:
    """One query's docs in the order a tie-break gives (the order its oblivious value uses).

    Returns
    -------
    DataFrame
        ``rank, docno, score, level`` (``level`` missing for docs not in the qrels).

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["b", "a", "c"], "score": [1.0, 1.0, 2.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": [1]})
    >>> ranked_list(run, qrels, "1")["docno"].tolist()
    ['c', 'b', 'a']
    """
    qid = str(qid)
    rows = run[run["qid"].astype(str) == qid]
    judged = qrels[qrels["qid"].astype(str) == qid]
    columns = {"rank": [], "docno": [], "score": [], "level": []}
    if rows.empty or judged.empty:
        return pd.DataFrame(columns).astype({"rank": "int64", "score": "float64", "level": "Int64"})
    judgments = Judgments.from_qrels(judged, rel_level)
    ranking = quietly(Ranking.build, rows, judgments, tiebreak=tiebreak)
    level = pd.array(np.where(ranking.judged, ranking.level, 0), dtype="Int64")
    level[~np.asarray(ranking.judged, bool)] = pd.NA
    return pd.DataFrame(
        {
            "rank": np.asarray(ranking.rank, np.int64),
            "docno": np.asarray(ranking.docno.to_pylist(), dtype=object),
            "score": rows["score"].to_numpy(np.float64)[np.asarray(ranking.row)],
            "level": level,
        }
    )
