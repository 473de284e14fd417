"""Validate run and qrels DataFrames as strictly as the file readers validate files.

The DataFrame API (:func:`tiecore.evaluate`, :func:`tiecore.evaluate_spread`,
:func:`tiecore.compare`, the app) takes frames built by anyone, so it checks them
with the rules of :mod:`tiecore.io`: the columns exist; ``qid`` and ``docno`` are
non-empty strings (integers are accepted and read as their decimal strings, so
qid ``301`` equals ``"301"``); a score is a finite number; a level is an integer
(``2.0`` is, ``2.9`` is not: it is never truncated); a boolean is neither (``True``
is refused, not read as 1); nothing is missing (None,
NaN, NA); a (qid, docno) pair appears once. A problem raises
:class:`~tiecore.errors.InputError` naming the run (or ``qrels``), the row (its
index label), the value and what was expected.

Every check is vectorized (numpy / pyarrow over whole columns); Python loops run
only on the error path, to find and describe the first bad value, or on columns
that mix Python objects of several types.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from numbers import Integral, Real
from typing import NoReturn

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tiecore.errors import InputError
from tiecore.io.ids import first_duplicate
from tiecore.io.runs import Qrels, Run, run_name

__all__ = ["check_qrels", "check_run", "check_runs"]

RUN_COLUMNS = ("qid", "docno", "score")
QRELS_COLUMNS = ("qid", "docno", "level")

_IDS = "a non-empty string or an integer"
_TEXT = pa.large_string()  # what read_run gives pandas, so the frames share one layout


class _Frame:
    """One DataFrame under check: its name in errors and its row labels."""

    def __init__(self, frame: object, where: str, columns: tuple[str, ...]) -> None:
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{where} must be a pandas DataFrame, got {type(frame).__name__}")
        self.frame = frame
        self.where = where
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            has = ", ".join(repr(str(c)) for c in frame.columns) or "none"
            raise InputError(
                where,
                None,
                f"missing column{'s' if len(missing) > 1 else ''} "
                f"{', '.join(map(repr, missing))} (its columns: {has})",
                f"columns {', '.join(map(repr, columns))}",
            )
        twice = [c for c in columns if (frame.columns == c).sum() > 1]
        if twice:
            raise InputError(
                where, None, f"column {twice[0]!r} appears more than once", "each column once"
            )
        if not len(frame):
            raise InputError(where, None, "no rows (the DataFrame is empty)", "at least one row")

    def fail(self, row: int, problem: str, expected: str) -> NoReturn:
        """Raise for positional ``row``, named by its index label."""
        label = _py(self.frame.index[row])
        raise InputError(self.where, None, f"row {label!r}: {problem}", expected)

    def first(self, mask: np.ndarray | pa.Array) -> int | None:
        """Position of the first true value of ``mask``, or None."""
        if isinstance(mask, (pa.Array, pa.ChunkedArray)):
            mask = mask.to_numpy(zero_copy_only=False)
        hit = np.flatnonzero(mask)
        return int(hit[0]) if len(hit) else None

    # ------------------------------------------------------------------ ids

    def ids(self, column: str) -> tuple[pa.Array | pa.ChunkedArray, object]:
        """``column`` as arrow strings, and the values to put in the frame instead when
        it did not hold strings already (``None``: keep the column as it is)."""
        series = self.frame[column]
        dtype = series.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            series = series.astype(object)
            dtype = series.dtype
        converted = True
        if _is_integer_dtype(dtype):
            arr = pc.cast(self._no_nulls(column, _arrow(series)), _TEXT)
        elif _is_string_dtype(dtype):
            arr = self._no_nulls(column, _arrow(series))
            converted = False
        elif pd.api.types.is_object_dtype(dtype):
            arr = self._object_ids(column, series)
        else:  # floats, booleans, dates...: name a missing value first, else the first row
            missing = self.first(series.isna().to_numpy())
            self.fail(missing or 0, f"{column} {_describe(series.iloc[missing or 0])}", _IDS)
        if len(arr) and pc.min(pc.binary_length(arr)).as_py() == 0:
            self.fail(self.first(pc.equal(pc.binary_length(arr), 0)), f"{column} '' is empty", _IDS)
        if not converted:
            return arr, None
        return arr, pa.chunked_array([arr]).cast(_TEXT).to_pandas().array

    def _object_ids(self, column: str, series: pd.Series) -> pa.Array:
        """Python objects: all ``str``, all ``int``, or a mix of both."""
        kind = pd.api.types.infer_dtype(series, skipna=False)
        if kind in ("string", "empty"):
            try:
                return pa.array(series, type=_TEXT)
            except (pa.ArrowException, UnicodeError):  # lone surrogates, say
                pass
        elif kind == "integer":
            try:
                return pc.cast(pa.array(series, type=pa.int64()), _TEXT)
            except (pa.ArrowException, OverflowError):  # beyond int64: Python's str()
                pass
        self._bad_ids(column, series, _is_id)  # a mix of str and int remains
        values = [v if isinstance(v, str) else str(int(v)) for v in series.array]
        try:
            return pa.array(values, type=_TEXT)
        except (pa.ArrowException, UnicodeError):
            self._bad_ids(column, series, _is_utf8)
            raise

    def _bad_ids(self, column: str, series: pd.Series, ok) -> None:
        """Fail on the first value that is not a string or an integer (error path)."""
        for row, value in enumerate(series.array):
            if not ok(value):
                self.fail(row, f"{column} {_describe(value)}", _IDS)

    def _no_nulls(self, column: str, arr: pa.Array | pa.ChunkedArray) -> pa.Array:
        if arr.null_count:
            row = self.first(pc.is_null(arr))
            self.fail(row, f"{column} is missing ({_py(self.frame[column].iloc[row])!r})", _IDS)
        return arr

    # -------------------------------------------------------------- numbers

    def numbers(self, column: str, *, integer: bool) -> np.ndarray:
        """``column`` as float64 (scores: finite) or int64 (levels: integral)."""
        series = self.frame[column]
        dtype = series.dtype
        expected = "an integer level" if integer else "a finite number"
        if pd.api.types.is_bool_dtype(dtype):  # True is no score or level (nor 1)
            self.fail(0, f"{column} {_describe(series.iloc[0])} (a {dtype} column)", expected)
        if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(dtype):
            values = self._object_numbers(column, series, expected)
        elif isinstance(dtype, np.dtype) and dtype.kind in "iuf":
            values = series.to_numpy()
        elif pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
            missing = self.first(series.isna().to_numpy())
            if missing is not None:
                self.fail(missing, f"{column} is missing ({_py(series.iloc[missing])!r})", expected)
            values = series.to_numpy(dtype=np.float64 if dtype.kind == "f" else None)
        else:
            self.fail(0, f"{column} {_describe(series.iloc[0])} (a {dtype} column)", expected)
        if values.dtype.kind == "f":
            bad = self.first(~np.isfinite(values))
            if bad is not None:
                value = _py(values[bad])
                problem = "is missing (nan)" if np.isnan(value) else f"{value!r} is not finite"
                self.fail(bad, f"{column} {problem}", expected)
        if not integer:
            merged = float64_merges(values)
            if merged is not None:
                a, b = merged
                self.fail(
                    b,
                    f"{column} {_py(values[b])} differs from row "
                    f"{_py(self.frame.index[a])!r}'s {_py(values[a])} but not as a 64-bit float",
                    FLOAT64_EXACT,
                )
            return values.astype(np.float64, copy=False)
        if values.dtype.kind == "f":
            bad = self.first(values != np.trunc(values))
            if bad is not None:
                self.fail(bad, f"{column} {_py(values[bad])!r} is not an integer", expected)
            bad = self.first(np.abs(values) >= 2.0**63)
            if bad is not None:
                self.fail(bad, f"{column} {_py(values[bad])!r} is too large", "a 64-bit integer")
        elif values.dtype.kind == "u" and len(values) and values.max() > np.iinfo(np.int64).max:
            bad = self.first(values > np.iinfo(np.int64).max)
            self.fail(bad, f"{column} {_py(values[bad])!r} is too large", "a 64-bit integer")
        return values.astype(np.int64, copy=False)

    def _object_numbers(self, column: str, series: pd.Series, expected: str) -> np.ndarray:
        """Python numbers (int, float, Decimal); anything else, a bool included, fails
        (error path)."""
        kind = pd.api.types.infer_dtype(series, skipna=False)
        try:
            if kind == "integer":
                return np.asarray(series.to_numpy(), dtype=np.int64)
            if kind in ("floating", "mixed-integer-float", "decimal"):
                return np.asarray(series.to_numpy(), dtype=np.float64)
        except (OverflowError, TypeError, ValueError):
            pass
        for row, value in enumerate(series.array):
            if not _is_number(value):
                self.fail(row, f"{column} {_describe(value)}", expected)
        values = series.array
        if all(isinstance(v, Integral) for v in values):
            try:
                return np.asarray([int(v) for v in values], dtype=np.int64)
            except OverflowError:
                pass
        return np.asarray([float(v) for v in values], dtype=np.float64)

    # ----------------------------------------------------------- duplicates

    def unique(self, qid: pa.Array, docno: pa.Array, expected: str) -> None:
        dup = first_duplicate(qid, docno)
        if dup is not None:
            first, second = dup
            self.fail(
                second,
                f"docno {docno[second].as_py()!r} appears twice for query "
                f"{qid[second].as_py()!r} (first at row {_py(self.frame.index[first])!r})",
                expected,
            )


def _arrow(series: pd.Series) -> pa.Array | pa.ChunkedArray:
    return pa.array(series, from_pandas=True)


def _is_integer_dtype(dtype: object) -> bool:
    return pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _is_string_dtype(dtype: object) -> bool:
    if isinstance(dtype, pd.StringDtype):
        return True
    if isinstance(dtype, pd.ArrowDtype):
        return pa.types.is_string(dtype.pyarrow_dtype) or pa.types.is_large_string(
            dtype.pyarrow_dtype
        )
    return False


def _is_id(value: object) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def _is_utf8(value: object) -> bool:
    try:
        str(value).encode("utf-8")
    except UnicodeError:
        return False
    return True


def _is_number(value: object) -> bool:
    if isinstance(value, (bool, np.bool_)):  # a Real to Python, but no score or level
        return False
    return isinstance(value, (Real, Decimal)) and not _is_na(value)


def _is_na(value: object) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _py(value: object) -> object:
    """A numpy scalar as the Python value it holds (for its repr in messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _describe(value: object) -> str:
    """How a bad value reads in an error: missing, or its repr and type."""
    value = _py(value)
    if value is None or _is_na(value):
        return f"is missing ({value!r})"
    if isinstance(value, str):
        if not _is_utf8(value):
            return f"{value!r} is not valid UTF-8 text"
        return f"{value!r} is a string"
    return f"{value!r} is a {type(value).__name__}"


def _replace(frame: Run | Qrels, columns: dict[str, object]) -> Run | Qrels:
    """``frame`` with some columns replaced by arrays, by position (the original when
    there are none; a copy keeps the fields, which pandas carries)."""
    if not columns:
        return frame
    out = frame.copy(deep=False)
    for name, values in columns.items():
        out[name] = values
    return out


#: What an integer score column must hold (see :func:`float64_merges`).
FLOAT64_EXACT = (
    "integer scores that 64-bit floats tell apart (below 2**53 = 9007199254740992 in size), "
    "or their ranks"
)


def float64_merges(values: np.ndarray) -> tuple[int, int] | None:
    """Two positions of distinct integers that are equal as float64 (integers past 2**53:
    nanosecond timestamps, hashes), or None.

    Scores are compared as float64; such a pair would tie there and change the measures
    (a relevant doc and a non-relevant one at once), so the readers refuse it, naming
    both, rather than compute a silently wrong number.  Only integer arrays with a value
    past 2**53 are sorted to look.

    >>> float64_merges(np.array([2**53, 2**53 + 1, 3])), float64_merges(np.array([1, 1]))
    ((0, 1), None)
    """
    if values.dtype.kind not in "iu" or not len(values):
        return None
    if max(abs(int(values.min())), abs(int(values.max()))) <= 2**53:
        return None
    order = np.argsort(values, kind="stable")
    ints = values[order]
    floats = ints.astype(np.float64)
    merged = np.flatnonzero((ints[1:] != ints[:-1]) & (floats[1:] == floats[:-1]))
    if not len(merged):
        return None
    a, b = sorted((int(order[merged[0]]), int(order[merged[0] + 1])))
    return a, b


def run_where(run: pd.DataFrame, name: str) -> str:
    """Where an error about run ``name`` points: its file and its name (``results.test
    (run STANDARD)``), or its name alone for a frame read from no file."""
    source = Run.of(run).source
    return f"{source} (run {name})" if source else f"run {name}"


def check_run(run: pd.DataFrame, name: str = "run") -> Run:
    """Check a run DataFrame; return it with ``qid``/``docno`` as strings, ``score`` float64.

    Parameters
    ----------
    run : pandas.DataFrame
        Columns ``qid``, ``docno`` (strings or integers) and ``score`` (numbers);
        other columns are kept as they are.
    name : str
        The run's name in errors (``run NAME``).

    Returns
    -------
    tiecore.io.runs.Run
        ``run`` itself (a plain DataFrame: a :class:`~tiecore.io.runs.Run` over the
        same columns) when nothing needed converting, else a shallow copy with the
        converted columns (same index and fields), marked checked.

    Raises
    ------
    InputError
        A missing column, a missing (None / NaN) or empty id, a score that is not a
        finite number, a (qid, docno) pair twice: with the row's index label.

    Examples
    --------
    >>> run = pd.DataFrame({"qid": [301, 301], "docno": ["a", "b"], "score": [2, 1.5]})
    >>> check_run(run).dtypes.astype(str).tolist()
    ['str', 'str', 'float64']
    >>> check_run(run.assign(score=[1.0, float("nan")]), "bm25")
    Traceback (most recent call last):
    ...
    tiecore.errors.InputError: run bm25: row 1: score is missing (nan) (expected a finite number)
    """
    checked = _Frame(run, f"run {name}", RUN_COLUMNS)
    run = Run.of(run)
    changed = {}
    if not run.is_checked():  # ids checked once (by read_run or before)
        qid, changed["qid"] = checked.ids("qid")
        docno, changed["docno"] = checked.ids("docno")
    score = checked.numbers("score", integer=False)
    if changed:
        checked.unique(qid, docno, "each docno at most once per query")
    changed = {k: v for k, v in changed.items() if v is not None}
    if run["score"].dtype != np.float64:
        changed["score"] = score
    run = _replace(run, changed)
    run.mark_checked()
    return run


def check_qrels(qrels: pd.DataFrame) -> Qrels:
    """Check a qrels DataFrame; return it with ``qid``/``docno`` as strings, ``level`` int64.

    Parameters
    ----------
    qrels : pandas.DataFrame
        Columns ``qid``, ``docno`` (strings or integers) and ``level`` (integers,
        or floats with integral values such as ``2.0``).

    Returns
    -------
    tiecore.io.runs.Qrels
        ``qrels`` itself (a plain DataFrame: :class:`~tiecore.io.runs.Qrels` over the
        same columns) when nothing needed converting, else a shallow copy; marked checked.

    Raises
    ------
    InputError
        A missing column, a missing or empty id, a level that is missing or not an
        integer (``2.9`` is not truncated), a (qid, docno) pair judged twice.

    Examples
    --------
    >>> qrels = pd.DataFrame({"qid": [301, 301], "docno": ["a", "b"], "level": [1.0, 2.9]})
    >>> check_qrels(qrels)
    Traceback (most recent call last):
    ...
    tiecore.errors.InputError: qrels: row 1: level 2.9 is not an integer (expected an integer level)
    """
    checked = _Frame(qrels, "qrels", QRELS_COLUMNS)
    qrels = Qrels.of(qrels)
    changed = {}
    if not qrels.is_checked():  # ids checked once (by read_qrels or before)
        qid, changed["qid"] = checked.ids("qid")
        docno, changed["docno"] = checked.ids("docno")
    level = checked.numbers("level", integer=True)
    if changed:
        checked.unique(qid, docno, "one judgment per query and docno")
    changed = {k: v for k, v in changed.items() if v is not None}
    if qrels["level"].dtype != np.int64:
        changed["level"] = level
    qrels = _replace(qrels, changed)
    qrels.mark_checked()
    return qrels


def check_runs(runs: Mapping[str, pd.DataFrame] | Iterable) -> dict[str, Run]:
    """Check every run of a mapping ``{name: run}`` (see :func:`check_run`).

    Raises
    ------
    InputError
        No runs at all (an empty mapping), or a bad run.
    TypeError
        Not a mapping of names to DataFrames.
    """
    if isinstance(runs, pd.DataFrame):
        runs = {run_name(runs): runs}
    if not isinstance(runs, Mapping):
        try:
            runs = dict(runs)
        except (TypeError, ValueError):
            raise TypeError(
                f"runs must be a DataFrame or a mapping of names to DataFrames, "
                f"got {type(runs).__name__}"
            ) from None
    if not runs:
        raise InputError("runs", None, "no runs given (the mapping is empty)", "at least one run")
    first: dict[str, object] = {}
    for key in runs:  # 1 and "1" print alike: two runs would get one name
        if str(key) in first:
            raise InputError(
                "runs",
                None,
                f"the keys {first[str(key)]!r} and {key!r} both name a run {str(key)!r}",
                "a distinct name for each run",
            )
        first[str(key)] = key
    return {str(name): check_run(run, str(name)) for name, run in runs.items()}
