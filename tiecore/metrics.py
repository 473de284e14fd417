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
qrels DataFrames, bit for bit, without them: the matrix (or the ragged cells) becomes
the engine's judgments and ranking directly (integer codes, one sort: with a cutoff ``k``
a partition of each row and a sort of the tie groups that start within its first ``k``
ranks), and the core's profiles and kernels compute every measure.  ``ties="aware"`` is the
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

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import DOCNO_POLICIES, FLOAT32_POLICIES, Ranking, float32_scores
from tiecore.errors import InputError
from tiecore.evaluation.evaluator import Evaluator
from tiecore.io.frames import FLOAT64_EXACT, float64_merges
from tiecore.measures import Measure, parse_measures
from tiecore.measures.registry import refuse_inexact
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
        # bfloat16, float8 ... (JAX's and ml_dtypes' arrays): float64 holds each value
        kind = "i" if array.dtype.type.__name__.startswith(("int", "uint")) else "f"
        array = array.astype(np.int64 if kind == "i" else np.float64)
    if array.dtype.kind not in "biuf":
        raise InputError(name, None, f"a {array.dtype} array", "numbers")
    return array


def _where(index: tuple[int | np.integer, ...] | int) -> str:
    return f"[{', '.join(map(str, index))}]" if isinstance(index, tuple) else f"[{index}]"


def _prepare(
    y_true: ArrayLike, y_score: ArrayLike, qid: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, int, int]:
    """Flat ``levels, scores, query codes, candidate positions`` of the kept cells, the
    number of queries and of columns (0 when ragged); the cells keep their row-major (or
    given) order.  Codes and positions are None when the cells are a whole matrix (cell
    ``i`` is then at position ``i``, in row ``i // columns``)."""
    true = _numbers(y_true, "y_true")
    score = _numbers(y_score, "y_score")
    merged = float64_merges(score.ravel())
    if merged is not None:
        a, b = (_where(np.unravel_index(i, score.shape)) for i in merged)
        values = score.ravel()[list(merged)].tolist()
        raise InputError(
            "y_score", None,
            f"{b} = {values[1]} differs from {a} = {values[0]} but not as a 64-bit float",
            FLOAT64_EXACT,
        )  # fmt: skip
    score = score.astype(np.float64)
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
        codes = None  # row i // columns, made below when cells are left out
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

    true = _levels(true, score, at)
    columns = shape[1] if shape else 0
    if np.isfinite(score).all():  # nothing to refuse, nothing left out
        if qid is None:  # the cells are the matrix: cell i is in row i // columns
            return true, score, None, None, queries, columns
        return true, score, codes, np.arange(true.size), queries, columns
    bad = np.flatnonzero(np.isinf(score))
    if bad.size:
        raise InputError(
            "y_score", None, f"y_score{at(bad[0])} = {score[bad[0]].item()!r} is not finite",
            "finite scores (NaN leaves a cell out)",
        )  # fmt: skip
    keep = ~np.isnan(score)
    codes = np.repeat(np.arange(queries), columns) if codes is None else codes
    empty = np.flatnonzero(np.bincount(codes[keep], minlength=queries) == 0)
    if empty.size:
        query = f"row {empty[0]}" if qid is None else f"query {uniques[empty[0]]!r}"
        raise InputError(
            "y_score",
            None,
            f"{query} has no candidates (every score is NaN)",
            "at least one score per query",
        )
    position = np.flatnonzero(keep)
    return true[keep], score[keep], codes[keep], position, queries, columns


def _levels(true: np.ndarray, score: np.ndarray, at: Callable[[int], str]) -> np.ndarray:
    """``y_true`` (flat) as int64 levels, refusing what is not an integer in range
    (``at`` names a flat index); a left-out cell (NaN score) may hold NaN."""
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
    return true.astype(np.int64, copy=False)


@dataclass(frozen=True)
class _Cells:
    """The kept cells as a run against its own judgments, in the engine's structures.

    Queries are numbered by their row (or order of first appearance in ``qid``) and the
    judgments hold them in the order of those numbers as text, as :func:`tiecore.evaluate`
    orders the same data written as run and qrels frames with those numbers as qids: so
    every value and every mean is the DataFrame path's, bit for bit.  Each query is
    judged on its first candidate (so that a query without relevant candidates is
    evaluated and scores 0) and on every candidate of a non-zero level (every one when
    ``rel_level <= 0``: a level-0 candidate is then relevant).

    ``order`` holds the cells a measure cut at ``k`` can see, sorted by query, score
    descending, then position (the file order): every tie group that starts within the
    first ``k`` ranks, whole.  A head sum over ranks ``<= k`` reads those rows and the
    counts of the groups above, so it is the same sum, in the same order, as over the
    whole row (the ideal DCG and ``num_rel`` come from the judgments, which hold every
    cell).  Without a cut it holds every cell.
    """

    judgments: Judgments
    code: np.ndarray  # each query's place in the judgments' order
    query: np.ndarray  # per cell of ``order``: its query's code
    levels: np.ndarray
    scores: np.ndarray
    judged: np.ndarray
    position: np.ndarray | None  # per cell: its flat index in the input (None: the cell's)
    order: np.ndarray  # the cells kept, sorted (see above)

    @classmethod
    def of(
        cls,
        y_true: ArrayLike,
        y_score: ArrayLike,
        qid: ArrayLike | None,
        rel_level: int,
        k: int | None,
        float32: bool = False,
    ) -> _Cells:
        """Check and flatten the input, judge its cells and sort them (one sort, of the
        cells within reach of the cut ``k`` when given: with ``float32``, of the tie groups
        of the scores rounded to float32, trec_eval's, each a run of whole groups of the
        scores as given)."""
        levels, scores, codes, position, queries, columns = _prepare(y_true, y_score, qid)
        names = np.arange(queries).astype(str)
        by_text = np.argsort(names, kind="stable")
        code = np.empty(queries, np.int64)
        code[by_text] = np.arange(queries)
        judged = levels != 0 if rel_level > 0 else np.ones(levels.size, bool)
        if codes is None:  # a whole matrix
            judged[::columns] = True
        elif columns:  # a matrix with cells left out: each row's kept cells are adjacent
            judged[np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])] = True
        else:  # ragged: a query's cells need not be adjacent
            judged[np.unique(codes, return_index=True)[1]] = True
        rows = np.flatnonzero(judged)
        flat = rows if position is None else position[rows]
        if columns:
            doc, docs = flat % columns, columns
        else:  # ragged: the cells' positions are given
            assert position is not None
            doc, docs = flat, int(position[-1]) + 1
        judgments = Judgments.from_codes(
            names[by_text].astype(object), code[_row_of(rows, codes, columns)], doc,
            levels[rows], rel_level, docs=docs,
        )  # fmt: skip
        # the file order: score descending (-0.0 and 0.0 compare equal), then position
        sort = _Sort.of(-scores, codes, position, code, queries, columns, by_text)
        if k is None:
            order = sort.all()
        else:
            order = sort.top(k, -float32_scores(scores) if float32 else sort.key)
        query = code[_row_of(order, codes, columns)]
        return cls(judgments, code, query, levels, scores, judged, position, order)

    def ranking(self, tiebreak: str) -> Ranking:
        """The ranking of the cells in :attr:`order` under ``tiebreak`` (``file_order``:
        their order, kept as it is; the other policies sort them again inside ties)."""
        o = self.order
        docno = o if self.position is None else self.position[o]
        docno = docno.astype(str) if tiebreak in DOCNO_POLICIES else docno
        return Ranking.build_codes(
            self.query, self.scores[o], self.levels[o], self.judged[o], self.judgments,
            row=o, docno=docno, tiebreak=tiebreak,
        )  # fmt: skip

    def by_row(self, values: np.ndarray) -> np.ndarray:
        """Per-query values in the judgments' order -> in row (first appearance) order."""
        return values[..., self.code]


@dataclass(frozen=True)
class _Sort:
    """The cells' file order: by query code, ``key`` ascending (score descending), then
    position.  Laid out as a ``(queries, width)`` matrix (a matrix, or ragged cells
    grouped by query), the rows are sorted each (a stable argsort, or a partition of each
    row and a lexsort of the cells it keeps); other ragged cells by one stable lexsort."""

    key: np.ndarray
    codes: np.ndarray | None  # per cell, its row (None: a whole matrix, see _prepare)
    code: np.ndarray  # per row, its place in the judgments' order
    queries: int
    width: int  # of the layout; 0: none (ragged cells in no order)
    slot: np.ndarray | None  # per cell, its flat index in the layout (None: its own)
    by_text: np.ndarray  # the rows in the judgments' order

    @classmethod
    def of(cls, key, codes, position, code, queries, columns, by_text) -> _Sort:
        """The layout of the cells: a matrix's own (its cells at their positions), or for
        ragged cells whose queries come one after another, each query's cells in a row
        (when that pads the cells at most four times over)."""
        if columns:
            return cls(key, codes, code, queries, columns, position, by_text)
        width, slot = 0, None
        if (codes[1:] >= codes[:-1]).all():  # first-appearance codes: grouped by query
            counts = np.bincount(codes, minlength=queries)
            if queries * int(counts.max()) <= 4 * codes.size + 1024:
                width, starts = int(counts.max()), np.cumsum(counts) - counts
                slot = codes * width + np.arange(codes.size) - starts[codes]
        return cls(key, codes, code, queries, width, slot, by_text)

    def grid(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """``key`` (a value per cell) laid out ``(queries, width)``, rows in row order, and
        each slot's cell (None: slot ``i`` is cell ``i``; else empty slots have key
        ``+inf`` and cell -1)."""
        shape = (self.queries, self.width)
        if self.slot is None:  # nothing left out: the cells are the matrix
            return key.reshape(shape), None
        grid = np.full(shape[0] * shape[1], np.inf, key.dtype)
        cells = np.full(grid.size, -1, np.int64)
        grid[self.slot], cells[self.slot] = key, np.arange(key.size)
        return grid.reshape(shape), cells.reshape(shape)

    def all(self) -> np.ndarray:
        """Every cell, sorted."""
        if not self.width:
            return np.lexsort((self.key, self.code[self.codes]))
        grid, cells = self.grid(self.key)
        within = np.argsort(grid[self.by_text], axis=1, kind="stable")
        if cells is None:
            return (within + (self.by_text * self.width)[:, None]).ravel()
        flat = np.take_along_axis(cells[self.by_text], within, axis=1).ravel()
        return flat[flat >= 0]

    def top(self, k: int, cut: np.ndarray) -> np.ndarray:
        """The cells of the tie groups of ``cut`` (:attr:`key`, or a coarser key that
        rises with it) that start within a query's first ``k`` ranks, sorted: those whose
        ``cut`` is at most the ``k``-th smallest of their row (a partition, not a sort, of
        each row), then one lexsort of them."""
        if not self.width:  # ragged: each cell has its query's code
            assert self.codes is not None
            order = self.all()
            query, key = self.code[self.codes[order]], cut[order]
            counts = np.bincount(query, minlength=self.queries)
            starts = np.cumsum(counts) - counts
            last = np.where(counts >= k, key[np.minimum(starts + k - 1, key.size - 1)], np.inf)
            return order[key <= last[query]]
        if k >= self.width:
            return self.all()
        grid, cells = self.grid(cut)
        threshold = np.partition(grid, k - 1, axis=1)[:, k - 1 : k]
        within = grid <= threshold
        picked = np.flatnonzero(within) if cells is None else cells[within & (cells >= 0)]
        query = self.code[_row_of(picked, self.codes, self.width)]
        return picked[np.lexsort((self.key[picked], query))]


def _row_of(cells: np.ndarray, codes: np.ndarray | None, columns: int) -> np.ndarray:
    """The rows of ``cells`` (``codes`` None: the cells of a whole matrix)."""
    return cells // columns if codes is None else codes[cells]


def _check_spread(spread: bool, ties: str) -> None:
    if spread and ties != "aware":
        raise InputError(
            "ties", None, f"ties={ties!r} with spread=True",
            "ties='aware' (the spread gives the tie-aware value and the oblivious one of "
            "the tiebreak order together)",
        )  # fmt: skip


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
    """``measure`` per query, in row order, from the engine's kernels over the cells'
    ranking (:class:`_Cells`): :func:`tiecore.evaluate`'s values without its frames;
    their mean when ``average``; with ``spread`` a :class:`Spread`."""
    _check_spread(spread, ties)
    measures = tuple(parse_measures(measure))
    # trec_eval's tie groups are those of float32 scores: its cut keeps them whole
    float32 = tiebreak in FLOAT32_POLICIES and (ties == "oblivious" or spread)
    cells = _Cells.of(y_true, y_score, qid, rel_level, measures[0].cutoff, float32)
    if spread:
        return _spread(cells, measures, tiebreak, average)
    found, mean = _evaluate(cells, measures, ties, tiebreak)
    return mean if average else cells.by_row(found)


def _evaluate(
    cells: _Cells,
    measures: tuple[Measure, ...],
    ties: str,
    tiebreak: str,
    ranking: Ranking | None = None,
) -> tuple[np.ndarray, float]:
    """Per-query values (the judgments' order) and their mean, as :func:`tiecore.evaluate`
    computes them (:class:`~tiecore.evaluation.evaluator.Evaluator`)."""
    evaluator = Evaluator(cells.judgments, measures, ties, tiebreak)
    ranking = ranking if ranking is not None else cells.ranking(evaluator.order)
    found = evaluator.values(ranking)
    summary = evaluator.summary(np.ones(len(cells.code), bool), found)
    return found[measures[0]], float(summary.columns["value"][0, -1])


def _spread(cells: _Cells, measures: tuple[Measure, ...], tiebreak: str, average: bool) -> Spread:
    """The aware value, its exact variance and bounds (:mod:`tiecore.spread`'s arrays),
    and the oblivious value of ``tiebreak``'s order and its bias."""
    from tiecore.spread import spread_arrays  # lazy: ~115 ms, only for spread=True

    refuse_inexact(measures, "spread=True (its value is the tie-aware mean)")
    aware = cells.ranking("file_order")
    found = spread_arrays(aware, cells.judgments, list(measures), None)[measures[0]]
    same = aware if tiebreak == "file_order" else None
    one, one_mean = _evaluate(cells, measures, "oblivious", tiebreak, same)
    columns = {key: cells.by_row(found[key]) for key in ("value", "var", "min", "max")}
    one = cells.by_row(one)
    # one order lies within [min, max]; float sums in other orders may put it an ulp out
    low, high = np.minimum(columns["min"], one), np.maximum(columns["max"], one)
    if not average:
        value = columns["value"]
        return Spread(value, columns["var"], low, high, one, one - value)
    # the summary row of evaluate_spread: means in the judgments' order, var / Q**2
    mean = float(found["value"].mean())
    var = float(found["var"].sum() / len(cells.code) ** 2)
    low_mean = min(float(low.mean()), mean, one_mean)
    high_mean = max(float(high.mean()), mean, one_mean)
    return Spread(mean, var, low_mean, high_mean, one_mean, one_mean - mean)


if TYPE_CHECKING:
    from typing import Literal, Protocol, TypedDict, Unpack, overload

    class _Options(TypedDict, total=False):
        ties: str
        tiebreak: str
        rel_level: int  # not ndcg's
        gain: str  # ndcg's only
        qid: ArrayLike | None

    # fmt: off
    class _Metric(Protocol):  # the result's type follows spread, then average
        @overload
        def __call__(self, y_true: ArrayLike, y_score: ArrayLike, *, k: int | None = ...,
                     average: bool = ..., spread: Literal[True],
                     **options: Unpack[_Options]) -> Spread: ...
        @overload
        def __call__(self, y_true: ArrayLike, y_score: ArrayLike, *, k: int | None = ...,
                     average: Literal[False], spread: Literal[False] = ...,
                     **options: Unpack[_Options]) -> np.ndarray: ...
        @overload
        def __call__(self, y_true: ArrayLike, y_score: ArrayLike, *, k: int | None = ...,
                     average: Literal[True] = ..., spread: Literal[False] = ...,
                     **options: Unpack[_Options]) -> float: ...

    class _MetricAtK(Protocol):  # as _Metric, k required
        @overload
        def __call__(self, y_true: ArrayLike, y_score: ArrayLike, *, k: int,
                     average: bool = ..., spread: Literal[True],
                     **options: Unpack[_Options]) -> Spread: ...
        @overload
        def __call__(self, y_true: ArrayLike, y_score: ArrayLike, *, k: int,
                     average: Literal[False], spread: Literal[False] = ...,
                     **options: Unpack[_Options]) -> np.ndarray: ...
        @overload
        def __call__(self, y_true: ArrayLike, y_score: ArrayLike, *, k: int,
                     average: Literal[True] = ..., spread: Literal[False] = ...,
                     **options: Unpack[_Options]) -> float: ...
    # fmt: on


def _typed(metric: Callable[..., Any]) -> _Metric:
    """``metric`` itself; to a type checker, a :class:`Spread` with ``spread=True``, else
    an array with ``average=False``, else a float (``_typed_at_k``: ``k`` required)."""
    return metric  # type: ignore[return-value]


_typed_at_k: Callable[[Callable[..., Any]], _MetricAtK] = _typed  # type: ignore[assignment]


def _cut(family: str, k: int | None, params: str = "") -> str:
    return f"{family}{params}" + ("" if k is None else f"@{int(k)}")


# ------------------------------------------------------------------ metrics


@_typed
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


@_typed
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


@_typed
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


@_typed_at_k
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


@_typed_at_k
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


@_typed_at_k
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
