"""Which queries move, for which systems, and one query's two ranked lists side by side.

The tie effect of a run on one query is its *shift*: the tie-aware value (the mean over
every order of the tied docs) minus the value under one tie-break (trec_eval's order by
default: scores compared as float32, then docno descending).  For a whole track:

- :func:`shift_matrix`: query x system shifts of one measure, the queries and systems
  that move most first;
- :func:`ranked_lists`: one query's ranked list of each chosen run, its tie groups
  (docs of one float64 score: the groups the aware value averages over), relevance,
  and where another tie-break would put each doc;
- :func:`query_values`: each chosen run's value on that query under the tie-break, under
  another tie-break, tie-aware with its ``[min, max]`` over all orders, and the shifts;
- :func:`movement`: what a shift matrix says at a glance (how many queries and systems
  move visibly, the largest shift, each query's largest, each query's systems by shift);
- :func:`parse_topics`: query titles from a TREC topics file, to label queries.

Every value is :func:`tiecore.evaluate`'s (or :func:`tiecore.evaluate_spread`'s) on the
runs given, so it equals the per-query value any other page shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd

from tiecore.engine.judgments import relevant as is_relevant
from tiecore.errors import InputError
from tiecore.evaluation.core import evaluate
from tiecore.explain.anatomy import as_measure
from tiecore.explain.orderings import ranked_list
from tiecore.measures import Measure
from tiecore.options import TIEBREAKS
from tiecore.report.effects import quietly
from tiecore.spread import evaluate_spread

__all__ = [
    "Movement",
    "movement",
    "parse_topics",
    "query_values",
    "ranked_lists",
    "shift_matrix",
    "topic_label",
]

Progress = Callable[[int, int | None, str], None]


def _tiebreak(name: str, what: str = "tiebreak") -> str:
    if name not in TIEBREAKS:
        raise InputError(what, None, f"unknown tie-break {name!r}", ", ".join(TIEBREAKS))
    return name


def _per_query(frame: pd.DataFrame) -> pd.DataFrame:
    """The per-query rows of an evaluate frame (the summary row, ``qid`` NA, dropped)."""
    return frame[frame["qid"].notna()]


def shift_matrix(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    measure: str | Measure,
    *,
    tiebreak: str = "trec_eval",
    rel_level: int = 1,
    seed: int = 0,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Query x system shifts: ``aware - oblivious`` per query, largest first.

    Parameters
    ----------
    runs : mapping of str to DataFrame
        The systems (``qid, docno, score``).
    qrels : DataFrame
        ``qid, docno, level``.
    measure : str or Measure
        One measure (``"nDCG@10"``).
    tiebreak : str
        The oblivious order the shift is measured from (trec_eval's by default).
    rel_level, seed : int
        As in :func:`tiecore.evaluate` (``seed`` only for the ``random`` tie-break).
    progress : callable, optional
        ``progress(done, total, name)`` after each run of each of the two passes
        (``total`` is twice the number of runs).

    Returns
    -------
    DataFrame
        Index ``qid`` (the judged queries some run retrieves), one column per run, each
        cell ``v_aware(q) - v_tiebreak(q)``; NaN where the run has no docs for the query
        (no value: trec_eval skips it).  Rows are sorted by their largest ``|shift|``
        (then by query id), columns likewise (then by the order given), so the cells
        that move most lead at the top left.

    Examples
    --------
    >>> run = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"],
    ...                     "score": [1.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["a", "c"], "level": [1, 1]})
    >>> shifts = shift_matrix({"r": run}, qrels, "RR")
    >>> shifts.index.tolist(), shifts["r"].tolist()
    (['1', '2'], [0.25, 0.0])
    """
    measure = str(as_measure(measure))
    tiebreak = _tiebreak(tiebreak)
    names = list(runs)
    total = 2 * len(names)

    def passed(offset: int) -> Progress | None:
        if progress is None:
            return None
        return lambda done, _total, name: progress(offset + done, total, name)

    common = {"rel_level": rel_level, "per_query": True}
    aware = quietly(
        evaluate, dict(runs), qrels, measure, ties="aware", progress=passed(0), **common
    )
    oblivious = quietly(
        evaluate,
        dict(runs),
        qrels,
        measure,
        ties="oblivious",
        tiebreak=tiebreak,
        seed=seed,
        progress=passed(len(names)),
        **common,
    )
    key = ["run", "qid"]
    both = _per_query(aware)[[*key, "value"]].merge(
        _per_query(oblivious)[[*key, "value"]], on=key, suffixes=("_aware", "_oblivious")
    )
    both["shift"] = both["value_aware"] - both["value_oblivious"]
    wide = both.pivot(index="qid", columns="run", values="shift")
    wide = wide.reindex(columns=[n for n in names if n in wide.columns])
    return _largest_first(wide)


def _largest_first(wide: pd.DataFrame) -> pd.DataFrame:
    """Rows, then columns, by their largest absolute cell (descending, stable: query ids in
    natural order, runs in the order given, for equal ones)."""
    size = np.abs(wide.to_numpy(np.float64))
    size = np.where(np.isnan(size), -1.0, size)
    qids = wide.index.astype(str)
    numeric = pd.to_numeric(pd.Series(qids), errors="coerce").to_numpy()
    natural = np.lexsort((qids, np.isnan(numeric), np.nan_to_num(numeric)))
    position = np.empty(len(qids), np.int64)
    position[natural] = np.arange(len(qids))
    rows = np.lexsort((position, -size.max(axis=1, initial=-1.0)))
    columns = np.lexsort((np.arange(size.shape[1]), -size.max(axis=0, initial=-1.0)))
    out = wide.iloc[rows, columns]
    out.index.name, out.columns.name = "qid", "run"
    return out


class Movement(NamedTuple):
    """What a shift matrix (:func:`shift_matrix`) says at a glance; see :func:`movement`."""

    #: The queries with a visible shift for some system, and all the matrix's queries.
    queries_moved: int
    queries: int
    #: The systems with a visible shift on some query, and all the matrix's systems.
    systems_moved: int
    systems: int
    #: The largest shift by size: ``(qid, run, shift)`` (signed), ``None`` for no cell.
    largest: tuple[str, str, float] | None
    #: Each query's largest ``|shift|`` (0 where no system has a value), in the matrix's order.
    per_query: dict[str, float]

    def systems_of(self, matrix: pd.DataFrame, qid: str) -> list[str]:
        """The systems that retrieve ``qid`` (a value in its row), largest ``|shift|`` first
        (stable: the matrix's column order among equal ones)."""
        row = matrix.loc[qid].dropna()
        return row.abs().sort_values(ascending=False, kind="stable").index.tolist()


def movement(matrix: pd.DataFrame, visible: float = 0.5e-4) -> Movement:
    """How many queries and systems of ``matrix`` move, and by how much at most.

    Parameters
    ----------
    matrix : DataFrame
        Query x system shifts (:func:`shift_matrix`): NaN where a system does not retrieve
        a query (no value, so no shift).
    visible : float
        A shift *moves* a value when ``|shift| >= visible`` (the default: it shows at 4
        decimals).

    Returns
    -------
    Movement
        ``queries_moved`` (rows with a visible cell) of ``queries``, ``systems_moved``
        (columns with one) of ``systems``; ``largest``: the cell of largest ``|shift|``
        (the first in row-major order among equal ones; NaN cells never, unless every cell
        is NaN, when it is the first, its shift NaN); ``per_query``: each row's largest
        ``|shift|``, NaN cells counted as 0.

    Examples
    --------
    >>> matrix = pd.DataFrame({"a": [0.25, np.nan], "b": [-0.5, 0.0]}, index=["1", "2"])
    >>> moved = movement(matrix)
    >>> moved.queries_moved, moved.systems_moved, moved.largest
    (1, 2, ('1', 'b', -0.5))
    >>> moved.per_query, moved.systems_of(matrix, "1")
    ({'1': 0.5, '2': 0.0}, ['b', 'a'])
    """
    size = np.abs(matrix.to_numpy(np.float64))
    moving = np.nan_to_num(size) >= visible
    largest = None
    if size.size:
        row, column = np.unravel_index(np.argmax(np.nan_to_num(size, nan=-1.0)), size.shape)
        largest = (matrix.index[row], matrix.columns[column], float(matrix.iat[row, column]))
    per_query = np.nan_to_num(size, nan=0.0).max(axis=1, initial=0.0)
    return Movement(
        queries_moved=int(moving.any(axis=1).sum()),
        queries=len(matrix.index),
        systems_moved=int(moving.any(axis=0).sum()),
        systems=len(matrix.columns),
        largest=largest,
        per_query=dict(zip(matrix.index, per_query.tolist(), strict=True)),
    )


def _for_query(run: pd.DataFrame, qid: str) -> pd.DataFrame:
    return run[run["qid"].astype(str) == qid]


def ranked_lists(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    qid: str,
    *,
    tiebreak: str = "trec_eval",
    other: str = "docno_asc",
    rel_level: int = 1,
) -> pd.DataFrame:
    """One query's ranked list of each run, in the order ``tiebreak`` gives.

    Returns
    -------
    DataFrame
        One row per retrieved doc: ``run, rank`` (1-based, under ``tiebreak``),
        ``docno, score, level`` (NA: not judged), ``relevant`` (``level >= rel_level``),
        ``group`` (1-based number of its tie group: the docs of one score, as given in
        float64, best score first), ``group_size``, ``first, last`` (the ranks the group
        spans: any order of the group puts each doc somewhere in ``[first, last]``;
        under trec_eval's float32 order a group whose scores differ below float32's
        precision is drawn by the ranks it takes), and ``other_rank`` (its rank under
        ``other``).  Runs without the query have no rows.

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "score": [1.0, 1.0, 2.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": [1]})
    >>> ranked_lists({"r": run}, qrels, "1")[["rank", "docno", "group", "first", "last",
    ...                                       "other_rank"]]
       rank docno  group  first  last  other_rank
    0     1     c      1      1     1           1
    1     2     b      2      2     3           3
    2     3     a      2      2     3           2
    """
    qid = str(qid)
    tiebreak, other = _tiebreak(tiebreak), _tiebreak(other, "other")
    frames = []
    for name, run in runs.items():  # two runs on the page: one small list each
        rows = _for_query(run, qid)
        shown = ranked_list(rows, qrels, qid, tiebreak=tiebreak, rel_level=rel_level)
        if shown.empty:
            continue
        then = ranked_list(rows, qrels, qid, tiebreak=other, rel_level=rel_level)
        score = shown["score"].to_numpy(np.float64) + 0.0
        distinct, group = np.unique(-score, return_inverse=True)
        ranks = shown["rank"].to_numpy(np.int64)
        first = np.full(len(distinct), np.iinfo(np.int64).max)
        last = np.zeros(len(distinct), np.int64)
        np.minimum.at(first, group, ranks)
        np.maximum.at(last, group, ranks)
        level = shown["level"]
        relevant = is_relevant(level.fillna(-1).to_numpy(np.int64), rel_level)
        other_rank = then.set_index("docno")["rank"].reindex(shown["docno"]).to_numpy(np.int64)
        frames.append(
            pd.DataFrame(
                {
                    "run": name,
                    "rank": ranks,
                    "docno": shown["docno"].to_numpy(object),
                    "score": score,
                    "level": level.to_numpy(),
                    "relevant": np.asarray(relevant, bool) & level.notna().to_numpy(),
                    "group": group + 1,
                    "group_size": np.bincount(group)[group],
                    "first": first[group],
                    "last": last[group],
                    "other_rank": other_rank,
                }
            ).astype({"level": "Int64"})
        )
    if not frames:
        columns = ["run", "rank", "docno", "score", "level", "relevant", "group"]
        return pd.DataFrame(columns=[*columns, "group_size", "first", "last", "other_rank"])
    return pd.concat(frames, ignore_index=True)


def query_values(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    qid: str,
    measure: str | Measure,
    *,
    tiebreak: str = "trec_eval",
    other: str = "docno_asc",
    rel_level: int = 1,
    seed: int = 0,
) -> pd.DataFrame:
    """Each run's value on one query: under ``tiebreak``, under ``other``, tie-aware and
    its range.

    Returns
    -------
    DataFrame
        One row per run that retrieves the query (in the order given): ``run``,
        ``oblivious`` (under ``tiebreak``), ``other`` (under ``other``), ``aware`` (the
        mean over all orders of the tied docs), ``min, max`` (over all orders), ``var``
        (the variance over uniformly random orders), ``shift = aware - oblivious`` and
        ``other_shift = other - oblivious``.  The measure needs an exact spread
        (:attr:`Measure.exact_spread`).

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["a"], "level": [1]})
    >>> query_values({"r": run}, qrels, "1", "RR")[["oblivious", "other", "aware", "min",
    ...                                             "max"]]
       oblivious  other  aware  min  max
    0        0.5    1.0   0.75  0.5  1.0
    """
    qid = str(qid)
    measure = str(as_measure(measure))
    tiebreak, other = _tiebreak(tiebreak), _tiebreak(other, "other")
    chosen = {name: _for_query(run, qid) for name, run in runs.items()}
    chosen = {name: rows for name, rows in chosen.items() if len(rows)}
    judged = qrels[qrels["qid"].astype(str) == qid]
    columns = ["run", "oblivious", "other", "aware", "min", "max", "var", "shift", "other_shift"]
    if not chosen or judged.empty:
        return pd.DataFrame(columns=columns)
    common = {"rel_level": rel_level, "per_query": True}
    # the whole qrels: nDCG(ideal=max) takes its top grade from them
    first = quietly(
        evaluate, chosen, qrels, measure, ties="oblivious", tiebreak=tiebreak, seed=seed, **common
    )
    then = quietly(
        evaluate, chosen, qrels, measure, ties="oblivious", tiebreak=other, seed=seed, **common
    )
    spread = quietly(evaluate_spread, chosen, qrels, measure, **common)
    out = pd.DataFrame({"run": list(chosen)})
    for frame, names in (
        (first, {"value": "oblivious"}),
        (then, {"value": "other"}),
        (spread, {"value": "aware", "min": "min", "max": "max", "var": "var"}),
    ):
        rows = _per_query(frame).set_index("run")
        for column, name in names.items():
            out[name] = rows[column].reindex(out["run"]).to_numpy(np.float64)
    out["shift"] = out["aware"] - out["oblivious"]
    out["other_shift"] = out["other"] - out["oblivious"]
    return out[columns]


_TOP = re.compile(r"<top>(.*?)(?:</top>|(?=<top>)|\Z)", re.S | re.I)
_NUM = re.compile(r"<num>\s*(?:Number\s*:)?\s*(\S+)", re.I)
_TITLE = re.compile(r"<title>\s*(?:Topic\s*:)?\s*(.*?)\s*(?=<\w+>|</top>|\Z)", re.S | re.I)


def parse_topics(text: str | bytes, source: str = "topics") -> dict[str, str]:
    """Query id -> title, from a TREC topics file (``<top> <num> Number: 301 <title> ...``).

    The title runs to the next tag (``<desc>``, ``</top>``...), its whitespace folded;
    ``Topic:`` before it is dropped.  Raises :class:`InputError` (``source``, the
    line of the ``<top>``) for a topic without ``<num>``, a number given twice, or a
    file with no ``<top>`` at all.

    Examples
    --------
    >>> parse_topics("<top>\\n<num> Number: 301\\n<title> International Organized Crime\\n"
    ...              "<desc> Description:\\n...\\n</top>")
    {'301': 'International Organized Crime'}
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    found: dict[str, str] = {}
    for top in _TOP.finditer(text):
        line = text.count("\n", 0, top.start()) + 1
        body = top.group(1)
        number = _NUM.search(body)
        if number is None:
            raise InputError(source, line, "a topic without <num>", "<num> Number: 301")
        qid = number.group(1)
        if qid in found:
            raise InputError(source, line, f"topic {qid} given twice", "each number once")
        title = _TITLE.search(body)
        found[qid] = " ".join(title.group(1).split()) if title else ""
    if not found:
        raise InputError(
            source, None, "no <top> found", "TREC topics: <top> <num> Number: 301 <title> ..."
        )
    return found


def topic_label(qid: str, topics: Mapping[str, str] | None, width: int = 60) -> str:
    """``301 · International Organized Crime`` (the title cut at ``width`` characters), or
    the query id where no title is known.

    >>> topic_label("301", {"301": "International Organized Crime"})
    '301 · International Organized Crime'
    >>> topic_label("302", {})
    '302'
    """
    title = (topics or {}).get(str(qid), "")
    if len(title) > width:
        title = title[: width - 1].rstrip() + "…"
    return f"{qid} · {title}" if title else str(qid)
