"""LETOR / svmlight files: ``label qid:Q i:v i:v ... # comment`` as one run per feature.

The label must be a non-negative integer (a relevance grade), the feature indexes
1-based, decimal and strictly increasing within a line; a missing feature counts as
0 and some line must have one. A ``#`` anywhere starts a comment, as in svmlight.
Every check names the line of the first bad token (:class:`tiecore.io.text._Locator`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tiecore.errors import InputError
from tiecore.io.arrays import Kernels, kernel, to_numpy
from tiecore.io.text import Locator, Source, Tokens, cast_column, load_text, text_lines

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_CHOSEN_FEATURES", "MAX_FEATURES", "MAX_FEATURE_INDEX", "read_letor"]

LETOR_FIELDS = "'label qid:<id> index:value ...'"
#: The largest feature index read without a choice of features: LETOR sets number theirs
#: from 1 (MSLR-WEB 136, Yahoo! 700, Istella 220); an index of 10^15 is a typo or another
#: format, not 10^15 features to evaluate.
MAX_FEATURE_INDEX = 100_000
#: The most distinct features evaluated without a choice of features (each is a run: its
#: scores, its measures); 3,000 took 5.6 s, which a file with stray indexes should not cost.
MAX_FEATURES = 1_000
#: The most features one choice may name (as the command line's ``--features``).
MAX_CHOSEN_FEATURES = 100_000


@dataclass
class _Pairs:
    """Every ``index:value`` token of a file: its record (content line), index and value."""

    record: np.ndarray
    index: np.ndarray
    value: np.ndarray


def _ragged_take(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for every start ``s`` and length ``n``."""
    total = int(lengths.sum())
    shift = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return shift + np.arange(total)


def read_letor(
    source: Source, *, features: Iterable[int] | None = None
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Read a LETOR / svmlight file as one run per feature plus qrels.

    Parameters
    ----------
    source : str, path or file object
        Lines ``label qid:Q i:v i:v ... # comment``; the label must be a non-negative
        integer (``2`` or ``2.0``: a relevance grade, so svmlight's ``-1`` class is
        refused), indexes 1-based, in decimal and strictly increasing within a line.
        As in svmlight, a ``#`` anywhere starts a comment that runs to the end of the
        line: ``qid:1#x`` is query ``1`` followed by the comment ``x``.
    features : iterable of int, optional
        1-based feature indexes to turn into runs, at most :data:`MAX_CHOSEN_FEATURES`;
        default every index that occurs, which must then be at most
        :data:`MAX_FEATURE_INDEX`, and at most :data:`MAX_FEATURES` distinct ones.

    Returns
    -------
    runs : dict of str to pandas.DataFrame
        ``"f{index}"`` -> columns ``qid``, ``docno``, ``score`` (the feature value, 0
        where the line lacks it). ``docno`` is the 1-based line number zero-padded to
        the width of the last line number, so string order equals line order.
    qrels : pandas.DataFrame
        Columns ``qid``, ``docno``, ``level`` (the labels, int64).

    Raises
    ------
    InputError
        A malformed line (with its number), a file without any feature, a
        requested feature absent from the file, too many features or too large an
        index without a choice of features.
    """
    data, where = load_text(source)
    tokens = Tokens.split(text_lines(data, inline_comments=True))
    n_lines = len(tokens.count)
    rows = np.flatnonzero(tokens.count > 0)
    if not len(rows):
        raise InputError(where, None, "no data lines (the file is empty)", LETOR_FIELDS)
    loc = Locator(where, rows + 1)
    count = tokens.count[rows]
    short = np.flatnonzero(count < 2)
    if len(short):
        loc.fail(int(short[0]), "a label without qid:<id>", LETOR_FIELDS)
    label = _labels(tokens.field(rows, 0), loc)
    qid = _qids(tokens.field(rows, 1), loc)
    pairs = _pairs(tokens, rows, count - 2, loc)
    chosen = _chosen(features, pairs, loc)
    width = len(str(n_lines))
    docno = pc.utf8_lpad(pc.cast(pa.array(rows + 1), pa.string()), width, "0")
    return _frames(qid, docno, label, chosen, pairs, where)


def _labels(text: pa.Array, loc: Locator) -> np.ndarray:
    """The labels as float64 numbers, each a non-negative integer below ``2**63``."""
    label, bad = cast_column(text, pa.float64())
    if bad is None:
        label_np = label.to_numpy()
        integral = np.isfinite(label_np) & (label_np == np.round(label_np))
        wrong = np.flatnonzero(~integral | (np.abs(label_np) >= 2.0**63))
        bad = int(wrong[0]) if len(wrong) else None
    if bad is not None:
        loc.fail(bad, f"label {text[bad].as_py()!r} is not an integer", "an integer label")
    negative = np.flatnonzero(label_np < 0)
    if len(negative):  # svmlight's -1/+1 classes are no LETOR grades (trec_eval's would be)
        k = int(negative[0])
        loc.fail(
            k,
            f"label {text[k].as_py()!r} is negative",
            "a relevance grade 0, 1, 2, ... (svmlight's -1/+1 classes are no LETOR grades)",
        )
    return label_np


def _qids(text: pa.Array, loc: Locator) -> pa.Array:
    """The ids of ``qid:<id>`` tokens."""
    ok = pc.and_(pc.starts_with(text, "qid:"), pc.greater(pc.binary_length(text), 4))
    wrong = np.flatnonzero(~ok.to_numpy(zero_copy_only=False))
    if len(wrong):
        k = int(wrong[0])
        loc.fail(k, f"second field {text[k].as_py()!r} is not qid:<id>", LETOR_FIELDS)
    return pc.utf8_slice_codeunits(text, 4)


def _pairs(tokens: Tokens, rows: np.ndarray, n_pairs: np.ndarray, loc: Locator) -> _Pairs:
    """The ``index:value`` tokens after each line's qid, checked: positive decimal
    indexes, strictly increasing within a line, finite values."""
    if not n_pairs.any():
        raise InputError(loc.where, None, "no line has a feature", LETOR_FIELDS)
    record = np.repeat(np.arange(len(rows)), n_pairs)
    pairs = tokens.flat.take(pa.array(_ragged_take(tokens.first[rows] + 2, n_pairs)))
    parts = pc.split_pattern(pairs, ":")
    wrong = np.flatnonzero(pc.list_value_length(parts).to_numpy(zero_copy_only=False) != 2)
    if len(wrong):
        k = int(wrong[0])
        loc.fail(int(record[k]), f"feature {pairs[k].as_py()!r} is not index:value", LETOR_FIELDS)
    index = _indexes(pc.list_element(parts, 0), pairs, record, loc)
    value_text = pc.list_element(parts, 1)
    value, bad = cast_column(value_text, pa.float64())
    if bad is not None:
        loc.fail(
            int(record[bad]),
            f"feature value {value_text[bad].as_py()!r} in {pairs[bad].as_py()!r} is not a number",
            "index:value with a finite number",
        )
    value_np = value.to_numpy()
    bad_values = np.flatnonzero(~np.isfinite(value_np))
    if len(bad_values):
        k = int(bad_values[0])
        loc.fail(int(record[k]), f"feature {pairs[k].as_py()!r} is not finite", "a finite value")
    unordered = np.flatnonzero((record[1:] == record[:-1]) & (index[1:] <= index[:-1]))
    if len(unordered):
        k = int(unordered[0]) + 1
        loc.fail(
            int(record[k]),
            f"feature index {index[k]} after {index[k - 1]}",
            "strictly increasing feature indexes",
        )
    return _Pairs(record, index, value_np)


def _indexes(text: pa.Array, pairs: pa.Array, record: np.ndarray, loc: Locator) -> np.ndarray:
    """Feature indexes written as decimal digits (arrow's cast reads ``0x2`` as 2), >= 1."""
    digits = kernel(
        "match_substring_regex", text, options=Kernels.MatchSubstringOptions(r"^[0-9]+$")
    )
    if kernel("all", digits).as_py():
        index, bad = cast_column(text, pa.int64())
    else:
        bad = int(np.flatnonzero(~to_numpy(digits, False))[0])
    if bad is None:
        index_np = index.to_numpy()
        small = np.flatnonzero(index_np < 1)
        if not len(small):
            return index_np
        bad = int(small[0])
    loc.fail(
        int(record[bad]),
        f"feature index {text[bad].as_py()!r} in {pairs[bad].as_py()!r} is not a positive integer",
        "index:value with a 1-based integer index",
    )


def _chosen(features: Iterable[int] | None, pairs: _Pairs, loc: Locator) -> np.ndarray:
    """The feature indexes to turn into runs: those chosen, each present in the file, or
    every one present, within :data:`MAX_FEATURE_INDEX` and :data:`MAX_FEATURES`."""
    where, index = loc.where, pairs.index
    present = np.unique(index)
    if features is not None:
        return _choice(features, present, where)
    if present[-1] > MAX_FEATURE_INDEX:
        k = int(np.flatnonzero(index > MAX_FEATURE_INDEX)[0])
        loc.fail(
            int(pairs.record[k]),
            f"feature index {index[k]:,} is above {MAX_FEATURE_INDEX:,}, the largest "
            "evaluated without a choice of features",
            "feature indexes up to that, or a choice of features (--features)",
        )
    if len(present) > MAX_FEATURES:
        raise InputError(
            where,
            None,
            f"{len(present):,} distinct feature indexes, each one a run to evaluate",
            f"at most {MAX_FEATURES:,} features at once: choose some (--features)",
        )
    return present


def _choice(features: Iterable[int], present: np.ndarray, where: str) -> np.ndarray:
    """The chosen features, unique and in order (linear time), each 1-based and present."""
    chosen: dict[int, None] = {}
    for f in features:
        if isinstance(f, bool) or not isinstance(f, (int, np.integer)) or f < 1:
            raise InputError(where, None, f"feature {f!r} is not a 1-based index", "an int >= 1")
        chosen[int(f)] = None
        if len(chosen) > MAX_CHOSEN_FEATURES:  # stops a range(1, 10**11) early
            raise InputError(
                where,
                None,
                f"more than {MAX_CHOSEN_FEATURES:,} features chosen",
                f"at most {MAX_CHOSEN_FEATURES:,} features at once",
            )
    missing = sorted(set(chosen) - set(present.tolist()))
    if missing:
        raise InputError(
            where,
            None,
            f"feature {missing[0]} does not occur in the file",
            f"features among {present.min()}..{present.max()}" if len(present) else None,
        )
    return np.array(list(chosen), np.int64)


def _frames(
    qid: pa.Array,
    docno: pa.Array,
    label: np.ndarray,
    chosen: np.ndarray,
    pairs: _Pairs,
    where: str,
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """One run per chosen feature (its values, 0 where a line lacks it) and the qrels."""
    from tiecore.io.runs import Qrels, Run  # lazy: pandas on first use only

    base = pa.table({"qid": qid, "docno": docno}).to_pandas()
    matrix = np.zeros((len(chosen), len(label)))
    if len(chosen):
        order = np.argsort(chosen, kind="stable")
        slot = np.minimum(np.searchsorted(chosen[order], pairs.index), len(chosen) - 1)
        hit = chosen[order][slot] == pairs.index
        matrix[order[slot[hit]], pairs.record[hit]] = pairs.value[hit]
    runs: dict[str, pd.DataFrame] = {}
    for j, f in enumerate(chosen.tolist()):
        run = Run({"qid": base["qid"], "docno": base["docno"], "score": matrix[j]}, copy=False)
        run.name, run.source, run.tags = f"f{f}", where, []
        run.mark_checked()  # docnos are line numbers: unique by construction
        runs[f"f{f}"] = run
    qrels = Qrels({"qid": base["qid"], "docno": base["docno"], "level": label.astype(np.int64)})
    qrels.source = where
    qrels.mark_checked()
    pa.default_memory_pool().release_unused()
    return runs, qrels
