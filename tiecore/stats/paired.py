"""Paired tests of many pairs of columns at once: t-test, effect size, randomization.

Columns are runs, rows queries (NaN where a run lacks one); a pair uses the
rows both columns have.  Pairs that share the same rows are tested together:
the t-test in chunks of pairs, the sign-flip randomization test (Fisher's
paired permutation test of the mean) as one product of a sign-flip matrix with
the values, beside the Wilcoxon test (:mod:`tiecore.stats.wilcoxon`) and the
bootstrap interval of the mean difference (:mod:`tiecore.stats.bootstrap`).
"""

from __future__ import annotations

import contextvars
import math
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np

from tiecore.errors import TieCoreWarning
from tiecore.options import POSITIVE, SEED, STATISTICS, pick, validate_params
from tiecore.stats import CHUNK_CELLS, SMALLEST_P
from tiecore.stats.bootstrap import bootstrap_intervals
from tiecore.stats.ranks import RTOL
from tiecore.stats.wilcoxon import wilcoxon_pvalues


def paired_t(
    values: np.ndarray, i: np.ndarray, j: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Two-sided paired t-test of columns ``i[k]`` vs ``j[k]`` of ``values``, over shared rows.

    The t-test of :func:`paired_tests` (``tiecore compare``) and of
    :func:`tiecore.report.significance_vs_best`: for pair ``k`` the
    differences ``d = x_i - x_j`` on the ``n`` rows where neither is NaN give
    ``t = mean(d) / (sd(d) / sqrt(n))`` (``sd`` with ``ddof=1``) with ``n -
    1`` degrees of freedom and ``p = 2 P(T > |t|)``, at least
    :data:`SMALLEST_P` (as :func:`scipy.stats.ttest_rel` on those rows).  The
    p-value is NaN when ``n < 2`` or ``d`` does not vary: ``sd <= RTOL *
    max |x|, |y|`` (a constant difference up to rounding).  Vectorised in
    chunks of pairs of at most :data:`CHUNK_CELLS` cells.

    Parameters
    ----------
    values : ndarray
        ``(queries, runs)``, NaN where a run lacks a query.
    i, j : integer arrays
        The pairs (columns of ``values``).

    Returns
    -------
    p_value, mean, sd, n : ndarray
        Over the pairs: the p-value, ``mean(d)`` (0 when ``n = 0``),
        ``sd(d)`` (0 when ``n < 2``) and ``n``, the number of shared rows.

    Examples
    --------
    >>> p, mean, sd, n = paired_t(np.array([[1.0, 0.0], [2.0, 0.0], [3.0, np.nan], [4.0, 1.0]]),
    ...                           np.array([0]), np.array([1]))
    >>> p.round(4).tolist(), mean.tolist(), sd.tolist(), n.tolist()
    ([0.0742], [2.0], [1.0], [3])
    """
    from scipy import stats  # here, not at import: scipy.stats takes ~0.5 s to import

    values = np.asarray(values, np.float64)
    i, j = np.asarray(i, np.intp), np.asarray(j, np.intp)
    p, mean, sd = np.full(len(i), np.nan), np.zeros(len(i)), np.zeros(len(i))
    n = np.zeros(len(i), np.int64)
    step = max(1, CHUNK_CELLS // max(len(values), 1))
    for start in range(0, len(i), step):
        part = slice(start, start + step)
        x, y = values[:, i[part]], values[:, j[part]]
        d = x - y  # NaN where either lacks the row
        missing = np.isnan(d)
        # in place: a fresh array of this size costs more (page faults) than the arithmetic
        magnitude = np.maximum(np.abs(x, out=x), np.abs(y, out=y), out=x)
        magnitude[missing] = 0.0
        d[missing] = 0.0
        n[part] = count = len(d) - missing.sum(axis=0)
        mean[part] = d.sum(axis=0) / np.maximum(count, 1)
        d -= mean[part]
        d[missing] = 0.0
        sd[part] = np.sqrt(np.square(d, out=d).sum(axis=0) / np.maximum(count - 1, 1))
        varies = (count > 1) & (sd[part] > RTOL * magnitude.max(axis=0, initial=0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = mean[part] / (sd[part] / np.sqrt(count))
            p[part] = np.where(
                varies,
                np.maximum(2.0 * stats.t.sf(np.abs(t), np.maximum(count - 1, 1)), SMALLEST_P),
                np.nan,
            )
    return p, mean, sd, n


@validate_params(
    {"seed": SEED, "n_resamples": POSITIVE}
    | pick(STATISTICS, "zero_method", "confidence", "ci_method", "n_bootstrap")
)
def paired_tests(
    values: np.ndarray,
    i: np.ndarray,
    j: np.ndarray,
    columns: np.ndarray | None = None,
    n_columns: int | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
    *,
    zero_method: str = "wilcox",
    confidence: float = 0.95,
    ci_method: str = "BCa",
    n_bootstrap: int = 2000,
) -> dict[str, np.ndarray]:
    """Paired t-test, effect size, sign-flip randomization and Wilcoxon tests of pairs ``(i, j)``.

    Parameters
    ----------
    values : ndarray
        ``(queries, runs)``, NaN where a run lacks a query; pair ``k`` uses
        the queries both ``i[k]`` and ``j[k]`` have.
    i, j : integer arrays
        The pairs (columns of ``values``).
    columns, n_columns
        Each row's column in the shared sign-flip matrix and its width (by
        default the rows themselves); the random signs of query ``q`` are
        column ``columns[q]`` of ``n_resamples`` rows drawn from ``seed``.
    seed, n_resamples, zero_method, confidence, ci_method, n_bootstrap
        As in :func:`compare`.

    Returns
    -------
    dict
        Arrays over the pairs: ``t_pvalue``, ``randomization_pvalue``,
        ``randomization_exact``, ``n_queries``, ``effect_size``,
        ``topic_sd = sd(d) / sqrt(n)``, ``wilcoxon_pvalue``
        (:func:`wilcoxon_pvalues`) and the bootstrap interval ``diff_low,
        diff_high`` of ``mean(d)`` (:func:`bootstrap_intervals`).  The
        differences ``d = x_i - x_j`` give ``t = mean(d) / (sd(d) / sqrt(n))``
        with ``n - 1`` degrees of freedom and ``p = 2 P(T > |t|)`` (at least
        :data:`SMALLEST_P`), and ``effect_size = mean(d) / sd(d)``; both are
        NaN when ``n < 2`` or ``d`` does not vary (``sd <= RTOL *
        max |x|, |y|``).  The randomization p-value is the share of sign
        vectors ``s`` with ``|sum s d| >= |sum d|`` (up to ``RTOL`` of
        ``sum |x| + |y|``): over all ``2**n`` of them when that is at most
        ``n_resamples``, else ``(b + 1) / (n_resamples + 1)`` for the ``b``
        of the random vectors; NaN when ``n = 0``.

    Examples
    --------
    A constant difference on two queries: exact p 1/2, the t-test undefined.

    >>> out = paired_tests(np.array([[0.5, 0.25], [0.75, 0.5]]), np.array([0]), np.array([1]))
    >>> out["randomization_pvalue"].tolist(), out["t_pvalue"].tolist()
    ([0.5], [nan])
    """
    values = np.asarray(values, np.float64)
    i, j = np.asarray(i, np.int64), np.asarray(j, np.int64)
    if columns is None:
        columns, n_columns = np.arange(len(values)), len(values)
    out = {
        "t_pvalue": np.full(len(i), np.nan),
        "randomization_pvalue": np.full(len(i), np.nan),
        "randomization_exact": np.zeros(len(i), bool),
        "n_queries": np.zeros(len(i), np.int64),
        "effect_size": np.full(len(i), np.nan),
        "topic_sd": np.full(len(i), np.nan),
        "wilcoxon_pvalue": np.full(len(i), np.nan),
        "diff_low": np.full(len(i), np.nan),
        "diff_high": np.full(len(i), np.nan),
    }
    options = {
        "zero_method": zero_method,
        "confidence": confidence,
        "ci_method": ci_method,
        "n_bootstrap": n_bootstrap,
    }
    present = ~np.isnan(values)
    # Pairs grouped by the queries they share (one group when every run has every query)
    patterns, code = np.unique(present.T, axis=0, return_inverse=True)
    code = code.ravel()
    low, high = np.minimum(code[i], code[j]), np.maximum(code[i], code[j])
    group_keys, group_of = np.unique(low * len(patterns) + high, return_inverse=True)
    for g, key in enumerate(group_keys):
        shared = patterns[key // len(patterns)] & patterns[key % len(patterns)]
        members = np.flatnonzero(group_of.ravel() == g)
        runs, local = np.unique(np.r_[i[members], j[members]], return_inverse=True)
        x = values[np.ix_(shared, runs)]
        li, lj = local[: len(members)], local[len(members) :]
        found = _shared_tests(x, li, lj, columns[shared], n_columns, seed, n_resamples, options)
        for name, column in found.items():
            out[name][members] = column
    return out


def _shared_tests(
    x, li, lj, columns, n_columns, seed, n_resamples, options
) -> dict[str, np.ndarray]:
    """:func:`paired_tests` of pairs that share every row of ``x`` (``n x runs``)."""
    n, pairs = len(x), len(li)
    magnitude = np.abs(x)
    scale = np.maximum(
        magnitude.max(axis=0, initial=0.0)[li], magnitude.max(axis=0, initial=0.0)[lj]
    )
    spread = magnitude.sum(axis=0)
    total = np.zeros(pairs)
    wilcoxon = np.full(pairs, np.nan)
    # the bootstrap intervals on a thread meanwhile (their sorts release the GIL), in this
    # context (numpy's error state)
    bootstrap = ThreadPoolExecutor(1)
    intervals = bootstrap.submit(
        contextvars.copy_context().run,
        partial(
            bootstrap_intervals,
            x,
            li,
            lj,
            confidence=options["confidence"],
            method=options["ci_method"],
            n_resamples=options["n_bootstrap"],
            seed=seed,
        ),
    )
    bootstrap.shutdown(wait=False)
    step = max(1, CHUNK_CELLS // max(n, 1))
    for start in range(0, pairs, step):
        part = slice(start, start + step)
        d = x[:, li[part]] - x[:, lj[part]]
        total[part] = d.sum(axis=0)
        if n:
            wilcoxon[part] = wilcoxon_pvalues(d, options["zero_method"], scale[part])
    t_p, mean, sd, _ = paired_t(x, li, lj)
    varies = ~np.isnan(t_p)
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(varies, mean / sd, np.nan)
    threshold = np.abs(total) - RTOL * (spread[li] + spread[lj])
    if n == 0:
        r_p, exact = np.full(pairs, np.nan), False
    else:
        exact = n < 63 and 2**n <= n_resamples
        rows = 2**n if exact else n_resamples
        hits = _sign_flip_counts(x, li, lj, threshold, columns, n_columns, seed, rows, exact)
        r_p = hits / rows if exact else (hits + 1.0) / (rows + 1.0)
    low, high = intervals.result()
    return {
        "t_pvalue": t_p,
        "randomization_pvalue": r_p,
        "randomization_exact": np.full(pairs, exact),
        "n_queries": np.full(pairs, n),
        "effect_size": effect,
        "topic_sd": np.where(varies, sd, 0.0) / math.sqrt(n) if n > 1 else np.full(pairs, np.nan),
        "wilcoxon_pvalue": wilcoxon,
        "diff_low": low,
        "diff_high": high,
    }


def _sign_flip_counts(x, li, lj, threshold, columns, n_columns, seed, rows, exact) -> np.ndarray:
    """Per pair, how many of ``rows`` sign vectors ``s`` give ``|s . (x_i - x_j)| >= threshold``.

    A sign vector is a row of bits ``f`` (``s = 1 - 2 f``), so ``s . x = sum x -
    2 f . x`` for every run at once, and a pair's statistic is the difference
    of two runs' values.  ``f . x`` is summed a byte at a time from tables of
    the 256 partial sums of each byte's queries.  Exact: row ``k`` is the bits
    of ``k`` (query ``q`` is bit ``q``); random: row ``k`` is the ``k``-th row
    of a stream seeded by ``seed`` with ``n_columns`` bits per row, query
    ``q`` taking bit ``columns[q]`` (the same rows whatever the chunking and
    the other runs).
    """
    n, width = x.shape
    if exact:
        columns, words = np.arange(n), 1
    else:
        words = (n_columns + 63) // 64
        stream = np.random.default_rng([seed, 0x5167_4E5F]).bit_generator
    byte, bit = np.divmod(np.asarray(columns, np.int64), 8)
    patterns = np.arange(256)[:, None]
    used = np.unique(byte)
    tables = [(((patterns >> bit[byte == b]) & 1).astype(np.float64) @ x[byte == b]) for b in used]
    base = x.sum(axis=0)
    chunk = max(1, CHUNK_CELLS // max(width, 8 * words))
    hits = np.zeros(len(li), np.int64)
    for start in range(0, rows, chunk):
        size = min(chunk, rows - start)
        if exact:
            raw = np.arange(start, start + size, dtype="<u8")
        else:
            raw = stream.random_raw(size * words).astype("<u8")
        flipped = raw.view(np.uint8).reshape(size, 8 * words)
        product = np.zeros((size, width))
        for b, table in zip(used, tables, strict=True):
            product += table[flipped[:, b]]
        product = base - 2.0 * product  # (size, runs): s . x
        pair_step = max(1, CHUNK_CELLS // size)
        for first in range(0, len(li), pair_step):
            part = slice(first, first + pair_step)
            statistic = np.abs(product[:, li[part]] - product[:, lj[part]])
            hits[part] += np.count_nonzero(statistic >= threshold[part], axis=0)
    return hits


def warn_unequal_queries(names: Sequence[str], chosen: np.ndarray, stacklevel: int = 2) -> None:
    """Warn when the runs' means are over different queries (``chosen``: runs x
    queries): each run's mean (and a difference of means) is then over its own
    queries, while the paired tests use the queries both runs have.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unequal_queries(["a", "b"], np.array([[True, True], [True, False]]))
    >>> str(caught[0].message)[:46]
    'the runs retrieved for different queries (b: 1'
    """
    chosen = np.asarray(chosen, bool)
    if len(chosen) == 0 or (chosen == chosen[0]).all():
        return
    counts = chosen.sum(axis=1)
    fewest = int(np.argmin(counts))
    warnings.warn(
        f"the runs retrieved for different queries ({names[fewest]}: {counts[fewest]} of "
        f"{int(chosen.any(axis=0).sum())}): each run's mean (and mean_diff) is over its own "
        "queries, the paired tests over the queries both runs have; complete (-c) scores a "
        "missing query 0 and averages over every qrels query",
        TieCoreWarning,
        stacklevel=stacklevel + 1,
    )
