"""Tie-aware ranking metrics on arrays, in the style of :mod:`sklearn.metrics`.

Recommender and link-prediction code holds its results as matrices: one row per
query (user, or test triple), one column per candidate, ``y_true`` the relevance
levels and ``y_score`` the model's scores.  These functions take them as they are,
or ragged (1-D arrays with a ``qid`` array naming each row's query), and return
the per-query values or their mean:

* :func:`average_precision` (AP, AP@k), :func:`reciprocal_rank` (RR, its mean is
  MRR), :func:`ndcg` (nDCG, nDCG@k; linear or exponential gain),
  :func:`hits_at_k` (Success@k), :func:`precision_at_k`, :func:`recall_at_k`.

Every number is the one :func:`tiecore.evaluate` gives on the same data as run and
qrels DataFrames (these functions build them and call it): ``ties="aware"`` is the
exact mean over all orderings of tied scores (McSherry & Najork, ECIR 2008),
``ties="oblivious"`` one ordering, by default the columns' order inside a tie
(``tiebreak="file_order"``; ``"optimistic"`` and ``"pessimistic"`` give the best
and the worst case).  Conventions are trec_eval's: a candidate is relevant when its
level is ``>= rel_level``; AP divides by the number of relevant candidates; nDCG's
gain is the level (``gain="exp"``: ``2**level - 1``), its ideal is the row's own
best ordering; a query without relevant candidates scores 0.

With ``spread=True`` every function returns a :class:`Spread` instead of a number: the
exact tie-aware value with its variance, minimum and maximum over all orderings of the
tied scores (:func:`tiecore.spread.evaluate_spread`), the tie-oblivious value of the
``tiebreak`` order and its bias (oblivious minus aware), per query or (``average=True``)
for the mean over queries.

Any array-like is taken: lists, numpy arrays, and objects with ``__array__`` (torch,
JAX, CuPy... tensors; a bfloat16 or GPU tensor is turned into float32 numbers on the CPU
first, and ml_dtypes' bfloat16 and float8 arrays too: float32 holds each of their values,
so their ties, exactly).

A NaN score leaves its cell out altogether (not ranked, not counted as relevant;
its ``y_true`` may be NaN too): padding of rows of different lengths, or the
*filtered* setting of link prediction, where the other known true entities are
removed before ranking.

Link prediction
---------------
MRR and Hits@k of knowledge-graph embeddings are usually computed with the rank
``1 + #(scores > true score)``, the optimistic convention: a model that gives many
candidates the score of the true entity (saturated or quantised scores) then has
inflated published results.  ``ties="aware"`` gives the expected value under a
random order of the tied candidates, exactly:

>>> import numpy as np
>>> y_true = np.array([[0, 0, 1, 0]])  # the true entity is candidate 2
>>> y_score = np.array([[0.9, 0.9, 0.9, 0.1]])  # tied with two others
>>> reciprocal_rank(y_true, y_score, ties="oblivious", tiebreak="optimistic")
1.0
>>> round(reciprocal_rank(y_true, y_score), 4), round(hits_at_k(y_true, y_score, k=1), 4)
(0.6111, 0.3333)
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from tiecore.errors import InputError
from tiecore.options import METRICS, METRICS_AT_K, pick, validate_params

__all__ = [
    "Spread",
    "average_precision",
    "hits_at_k",
    "ndcg",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
]

#: The options each metric checks (tiecore.options, sklearn-style): one message naming
#: the option, the value and what was expected.
_OPTIONS = pick(METRICS, "k", "ties", "tiebreak", "rel_level", "average", "spread")
_OPTIONS_AT_K = pick(METRICS_AT_K, "k", "ties", "tiebreak", "rel_level", "average", "spread")


@dataclass(frozen=True)
class Spread:
    """A metric under random tie-breaking, per query (arrays) or for the mean (floats).

    Attributes
    ----------
    value
        The tie-aware value: the exact mean over all orderings of the tied scores.
    var
        Its exact variance over those orderings.  For the mean over ``Q`` queries,
        ``sum of the queries' variances / Q**2`` (each query's ties are broken
        independently).
    min, max
        The smallest and largest value any ordering gives (for the mean: the means of
        the queries' min and max, which the best and worst orders reach together).
    oblivious
        The value of the one order ``tiebreak`` gives (``file_order``: the columns'
        order inside a tie), as a tie-oblivious evaluation reports it.
    bias
        ``oblivious - value``: how far that one order is from the mean over orders.

    ``min <= value <= max`` and ``min <= oblivious <= max`` hold; :attr:`std` is
    ``sqrt(var)``; :meth:`to_frame` gives a table (one row per query, or one row).
    """

    value: float | np.ndarray
    var: float | np.ndarray
    min: float | np.ndarray
    max: float | np.ndarray
    oblivious: float | np.ndarray
    bias: float | np.ndarray

    @property
    def std(self) -> float | np.ndarray:
        """Standard deviation over orderings, ``sqrt(var)``."""
        return np.sqrt(self.var)

    def to_frame(self) -> pd.DataFrame:
        """The fields as columns: one row per query, or one row for the mean."""
        columns = {f.name: np.atleast_1d(getattr(self, f.name)) for f in fields(self)}
        return pd.DataFrame(columns)


# ---------------------------------------------------------------- validation


def _as_array(values: ArrayLike) -> np.ndarray:
    """``np.asarray``, and tensors numpy cannot take as they are (bfloat16, on a GPU):
    their ``float()`` (float32 holds every bfloat16 and float16 value) on the CPU."""
    try:
        return np.asarray(values)
    except (TypeError, RuntimeError):  # torch: "Got unsupported ScalarType BFloat16", CUDA
        tensor = values
        for method in ("detach", "cpu", "float"):
            if callable(getattr(tensor, method, None)):
                tensor = getattr(tensor, method)()
        if tensor is values:
            raise
        return np.asarray(tensor)


def _numbers(values: ArrayLike, name: str) -> np.ndarray:
    try:
        array = _as_array(values)
    except ValueError:  # ragged nested lists
        raise InputError(
            name, None, "rows of different lengths", "a 2-D array, or 1-D arrays with qid="
        ) from None
    if array.dtype.kind == "V" and array.dtype.type.__module__ == "ml_dtypes":
        # bfloat16, float8 ... (JAX's and ml_dtypes' arrays): float32 holds each value
        kind = "i" if array.dtype.type.__name__.startswith(("int", "uint")) else "f"
        array = array.astype(np.int64 if kind == "i" else np.float32)
    if array.dtype.kind not in "biuf":
        raise InputError(name, None, f"a {array.dtype} array", "numbers")
    return array


def _where(index: tuple[int, ...] | int) -> str:
    return f"[{', '.join(map(str, index))}]" if isinstance(index, tuple) else f"[{index}]"


def _prepare(
    y_true: ArrayLike, y_score: ArrayLike, qid: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Flat ``levels, scores, query codes, candidate positions`` of the kept cells and
    the number of queries; the cells keep their row-major (or given) order."""
    true = _numbers(y_true, "y_true")
    score = _numbers(y_score, "y_score").astype(np.float64)
    if true.shape != score.shape:
        raise InputError(
            "y_score", None, f"shape {score.shape} differs from y_true's {true.shape}",
            "arrays of one shape",
        )  # fmt: skip
    if qid is None:
        if true.ndim != 2:
            raise InputError(
                "y_true", None, f"a {true.ndim}-D array without qid=",
                "a 2-D array (one row per query), or 1-D arrays with qid=",
            )  # fmt: skip
        queries = true.shape[0]
        codes = np.repeat(np.arange(queries), true.shape[1])
        true, score = true.ravel(), score.ravel()
        shape = (queries, true.size // max(queries, 1))
    else:
        if true.ndim != 1:
            raise InputError("y_true", None, f"a {true.ndim}-D array with qid=", "1-D arrays")
        labels = _as_array(qid)
        if labels.shape != true.shape:
            raise InputError(
                "qid", None, f"shape {labels.shape} differs from y_true's {true.shape}",
                "one query id per element",
            )  # fmt: skip
        codes, uniques = pd.factorize(labels, sort=False)
        if (codes < 0).any():
            raise InputError(
                "qid",
                None,
                f"qid{_where(int(np.flatnonzero(codes < 0)[0]))} is missing",
                "a query id",
            )
        queries = len(uniques)
        shape = None
    if true.size == 0 or queries == 0:
        raise InputError("y_true", None, "no queries (an empty array)", "at least one query")

    def at(flat: int) -> str:
        return _where(tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else flat)

    if true.dtype.kind == "f":  # a left-out cell (NaN score) may pad y_true with NaN too
        true = np.where(np.isnan(score), 0.0, true)
        bad = np.flatnonzero(~np.isfinite(true) | (true != np.trunc(true)))
        if bad.size:
            raise InputError(
                "y_true", None, f"y_true{at(bad[0])} = {true[bad[0]].item()!r} is not an integer",
                "integer relevance levels",
            )  # fmt: skip
    if true.dtype.kind in "uf":  # past int64 the cast would wrap (2**63 + 5 -> negative)
        if true.dtype.kind == "u":
            outside = true > np.uint64(np.iinfo(np.int64).max)
        else:
            outside = (true >= 2.0**63) | (true < -(2.0**63))
        bad = np.flatnonzero(outside)
        if bad.size:
            raise InputError(
                "y_true", None, f"y_true{at(bad[0])} = {true[bad[0]].item()!r} is out of range",
                "integer relevance levels within 64-bit integers",
            )  # fmt: skip
    true = true.astype(np.int64)
    bad = np.flatnonzero(np.isinf(score))
    if bad.size:
        raise InputError(
            "y_score", None, f"y_score{at(bad[0])} = {score[bad[0]].item()!r} is not finite",
            "finite scores (NaN leaves a cell out)",
        )  # fmt: skip
    keep = ~np.isnan(score)
    empty = np.flatnonzero(np.bincount(codes[keep], minlength=queries) == 0)
    if empty.size:
        query = f"row {empty[0]}" if qid is None else f"query {uniques[empty[0]]!r}"
        raise InputError(
            "y_score",
            None,
            f"{query} has no candidates (every score is NaN)",
            "at least one score per query",
        )
    position = np.arange(true.size)
    return true[keep], score[keep], codes[keep], position[keep], queries


def _values(
    measure: str,
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    qid: ArrayLike | None,
    ties: str,
    tiebreak: str,
    rel_level: int,
    average: bool,
    spread: bool = False,
) -> float | np.ndarray | Spread:
    """``measure`` per query via :func:`tiecore.evaluate`; their mean when ``average``;
    with ``spread`` a :class:`Spread` (:func:`tiecore.spread.evaluate_spread` and the
    oblivious evaluation)."""
    from tiecore.evaluation.core import evaluate

    if spread and ties != "aware":
        raise InputError(
            "ties", None, f"ties={ties!r} with spread=True",
            "ties='aware' (the spread gives the tie-aware value and the oblivious one of "
            "the tiebreak order together)",
        )  # fmt: skip
    levels, scores, codes, position, queries = _prepare(y_true, y_score, qid)
    run = pd.DataFrame({"qid": codes, "docno": position, "score": scores})
    # Every query gets a judgment (its first candidate, with its own level), so that a
    # query without relevant candidates is evaluated (and scores 0), not skipped.
    first = np.ones(codes.size, bool)
    first[1:] = codes[1:] != codes[:-1]
    if qid is not None:  # ragged: a query's cells need not be adjacent
        first = np.zeros(codes.size, bool)
        first[np.unique(codes, return_index=True)[1]] = True
    # With rel_level <= 0 a level-0 candidate is relevant, so it must be judged too.
    judged = first | (levels != 0) | (rel_level <= 0)
    qrels = pd.DataFrame({"qid": codes[judged], "docno": position[judged], "level": levels[judged]})
    if spread:
        return _spread(run, qrels, measure, queries, tiebreak, rel_level, average)
    result = evaluate(
        run, qrels, measure, ties=ties, tiebreak=tiebreak, rel_level=rel_level, per_query=True
    )
    values = _per_query(result, ["value"], queries)["value"]
    if average:
        return float(result.loc[result["qid"].isna(), "value"].iloc[0])
    return values


def _per_query(result: pd.DataFrame, columns: list[str], queries: int) -> dict[str, np.ndarray]:
    """Columns of a per-query result in row order (``qid`` holds the row numbers)."""
    rows = result[result["qid"].notna()]
    order = rows["qid"].astype(np.int64).to_numpy()
    out = {}
    for column in columns:
        values = np.empty(queries)
        values[order] = rows[column].to_numpy(dtype=np.float64)
        out[column] = values
    return out


def _spread(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measure: str,
    queries: int,
    tiebreak: str,
    rel_level: int,
    average: bool,
) -> Spread:
    """The aware value, its exact variance and bounds, and the oblivious value and bias."""
    from tiecore.evaluation.core import evaluate
    from tiecore.spread import evaluate_spread

    found = evaluate_spread(run, qrels, measure, rel_level=rel_level, per_query=True)
    oblivious = evaluate(
        run, qrels, measure, ties="oblivious", tiebreak=tiebreak, rel_level=rel_level,
        per_query=True,
    )  # fmt: skip
    columns = _per_query(found, ["value", "var", "min", "max"], queries)
    one = _per_query(oblivious, ["value"], queries)["value"]
    # one order lies within [min, max]; float sums in other orders may put it an ulp out
    low, high = np.minimum(columns["min"], one), np.maximum(columns["max"], one)
    if not average:
        value = columns["value"]
        return Spread(value, columns["var"], low, high, one, one - value)
    value = float(found.loc[found["qid"].isna(), "value"].iloc[0])
    one = float(oblivious.loc[oblivious["qid"].isna(), "value"].iloc[0])
    var = float(found.loc[found["qid"].isna(), "var"].iloc[0])
    low = min(float(low.mean()), value, one)
    high = max(float(high.mean()), value, one)
    return Spread(value, var, low, high, one, one - value)


def _cut(family: str, k: int | None, params: str = "") -> str:
    return f"{family}{params}" + ("" if k is None else f"@{int(k)}")


# ------------------------------------------------------------------ metrics


@validate_params(_OPTIONS)
def average_precision(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    ties: str = "aware",
    tiebreak: str = "file_order",
    rel_level: int = 1,
    qid: ArrayLike | None = None,
    average: bool = True,
    spread: bool = False,
) -> float | np.ndarray | Spread:
    """Average precision (AP, or AP@k as trec_eval's ``map_cut``) of each query.

    ``sum over relevant ranks r <= k of P@r, divided by the number of relevant
    candidates`` (trec_eval; ties="aware" takes its exact mean over orderings).

    Parameters
    ----------
    y_true : array of shape (n_queries, n_candidates), or (n,) with ``qid``
        Relevance levels (integers; 0 or below ``rel_level`` is not relevant).
    y_score : array of the same shape
        Scores, higher first; NaN leaves a cell out.
    k : int, optional
        Cutoff (precision summed over the first ``k`` ranks only).
    ties : {"aware", "oblivious"}
        Exact mean over all orders of tied scores, or one order chosen by ``tiebreak``.
    tiebreak : str
        ``file_order`` (the columns' order), ``optimistic``, ``pessimistic``,
        ``trec_eval``, ``trec_eval_double`` or ``docno_asc`` (candidates' numbers as text).
    rel_level : int
        Lowest relevant level.
    qid : array of shape (n,), optional
        The query of each element of 1-D ``y_true`` / ``y_score`` (ragged input).
    average : bool
        Return the mean over queries (True) or each query's value, in row order
        (ragged: in order of first appearance in ``qid``).
    spread : bool
        Return a :class:`Spread`: the aware value with its exact variance, min and max
        over orderings, the oblivious value of ``tiebreak``'s order and its bias
        (floats for the mean, or arrays per query with ``average=False``).

    Returns
    -------
    float or ndarray of shape (n_queries,), or Spread

    Examples
    --------
    >>> average_precision([[1, 0, 1], [0, 1, 0]], [[3, 2, 1], [1, 1, 1]], average=False)
    array([0.83333333, 0.61111111])

    The second row's relevant candidate is first, second or third with equal
    probability: ``(1 + 1/2 + 1/3) / 3``.
    """
    return _values(
        _cut("AP", k), y_true, y_score, qid=qid, ties=ties, tiebreak=tiebreak,
        rel_level=rel_level, average=average, spread=spread,
    )  # fmt: skip


@validate_params(_OPTIONS)
def reciprocal_rank(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    ties: str = "aware",
    tiebreak: str = "file_order",
    rel_level: int = 1,
    qid: ArrayLike | None = None,
    average: bool = True,
    spread: bool = False,
) -> float | np.ndarray | Spread:
    """Reciprocal rank of the first relevant candidate (0 past ``k``); its mean is MRR.

    Tie-aware: the first relevant candidate of a tie group of ``n`` holding ``r``
    relevant ones sits at its ``p``-th place with probability ``C(n-1-p, r-1)/C(n, r)``.
    Parameters as in :func:`average_precision`.

    Examples
    --------
    >>> reciprocal_rank([[0, 1, 0], [1, 0, 0]], [[0.5, 0.5, 0.1], [0.2, 0.9, 0.9]], average=False)
    array([0.75      , 0.33333333])
    """
    return _values(
        _cut("RR", k), y_true, y_score, qid=qid, ties=ties, tiebreak=tiebreak,
        rel_level=rel_level, average=average, spread=spread,
    )  # fmt: skip


@validate_params(pick(METRICS, "k", "gain", "ties", "tiebreak", "average", "spread"))
def ndcg(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    gain: str = "linear",
    ties: str = "aware",
    tiebreak: str = "file_order",
    qid: ArrayLike | None = None,
    average: bool = True,
    spread: bool = False,
) -> float | np.ndarray | Spread:
    """Normalised discounted cumulative gain (nDCG, nDCG@k) of each query.

    ``DCG@k / ideal DCG@k`` with ``DCG@k = sum_{r <= k} gain_r / log2(r + 1)``; the gain
    is the level (``gain="linear"``, as trec_eval and ``sklearn.metrics.ndcg_score``)
    or ``2**level - 1`` (``gain="exp"``); the ideal orders the row's own levels.  With
    ``ties="aware"`` it equals ``sklearn.metrics.ndcg_score`` (which averages the gains
    of tied candidates) on non-negative levels.  Other parameters as in
    :func:`average_precision`.

    Examples
    --------
    >>> round(ndcg([[3, 2, 0, 1]], [[0.1, 0.5, 0.5, 0.5]], k=2), 6)  # = sklearn's ndcg_score
    0.38268
    """
    params = "(gain=exp)" if gain == "exp" else ""
    return _values(
        _cut("nDCG", k, params), y_true, y_score, qid=qid, ties=ties, tiebreak=tiebreak,
        rel_level=1, average=average, spread=spread,
    )  # fmt: skip


@validate_params(_OPTIONS_AT_K)
def hits_at_k(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int,
    ties: str = "aware",
    tiebreak: str = "file_order",
    rel_level: int = 1,
    qid: ArrayLike | None = None,
    average: bool = True,
    spread: bool = False,
) -> float | np.ndarray | Spread:
    """Hits@k (ir_measures' Success@k): 1 when a relevant candidate is in the top ``k``.

    Tie-aware: the probability of it, under a random order of the tied candidates.
    Parameters as in :func:`average_precision`.

    Examples
    --------
    >>> hits_at_k([[0, 1, 0, 0]], [[1, 1, 1, 1]], k=2)
    0.5
    """
    return _values(
        _cut("Success", k), y_true, y_score, qid=qid, ties=ties, tiebreak=tiebreak,
        rel_level=rel_level, average=average, spread=spread,
    )  # fmt: skip


@validate_params(_OPTIONS_AT_K)
def precision_at_k(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int,
    ties: str = "aware",
    tiebreak: str = "file_order",
    rel_level: int = 1,
    qid: ArrayLike | None = None,
    average: bool = True,
    spread: bool = False,
) -> float | np.ndarray | Spread:
    """P@k: relevant candidates in the top ``k``, divided by ``k`` (trec_eval).

    Parameters as in :func:`average_precision`.

    Examples
    --------
    >>> precision_at_k([[1, 0, 1, 0]], [[2, 1, 1, 1]], k=2)
    0.6666666666666666
    """
    return _values(
        _cut("P", k), y_true, y_score, qid=qid, ties=ties, tiebreak=tiebreak,
        rel_level=rel_level, average=average, spread=spread,
    )  # fmt: skip


@validate_params(_OPTIONS_AT_K)
def recall_at_k(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int,
    ties: str = "aware",
    tiebreak: str = "file_order",
    rel_level: int = 1,
    qid: ArrayLike | None = None,
    average: bool = True,
    spread: bool = False,
) -> float | np.ndarray | Spread:
    """R@k: relevant candidates in the top ``k``, divided by all relevant ones.

    Parameters as in :func:`average_precision`.

    Examples
    --------
    >>> recall_at_k([[1, 0, 1, 0]], [[2, 1, 1, 1]], k=2)
    0.6666666666666666
    """
    return _values(
        _cut("R", k), y_true, y_score, qid=qid, ties=ties, tiebreak=tiebreak,
        rel_level=rel_level, average=average, spread=spread,
    )  # fmt: skip
