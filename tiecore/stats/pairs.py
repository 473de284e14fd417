"""Pairs of runs: the difference of their means against the tie noise, P(beats), tests.

:func:`pair_statistics` builds the table of every ordered pair of runs that
:attr:`tiecore.compare.Comparison.pairs` holds, :func:`adjust_pairs` adds its
corrected p-values and :func:`tukey_pairs` Tukey's HSD; :func:`help_hurt` counts the
queries a run helps and hurts against a baseline, and how many of them ties
alone could reverse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from tiecore.errors import InputError
from tiecore.stats.beats import p_beats_all
from tiecore.stats.corrections import adjust_pvalues
from tiecore.stats.paired import paired_tests
from tiecore.stats.ranks import RTOL
from tiecore.stats.tukey import tukey_hsd

#: ``within_tie_noise``: ``|mu_A - mu_B| <= NOISE_WIDTH * sqrt(var_A + var_B)``.
NOISE_WIDTH = 2.0

#: Columns of :attr:`Comparison.pairs`.
PAIR_COLUMNS = (
    "mean_diff", "p_beats_sampled", "p_beats_normal", "tie_noise", "within_tie_noise",
    "t_pvalue", "randomization_pvalue", "randomization_exact", "n_queries", "effect_size",
    "tie_sd", "topic_sd", "wilcoxon_pvalue", "diff_low", "diff_high",
)  # fmt: skip


def pair_statistics(
    mu: np.ndarray,
    tie_var: np.ndarray,
    samples: np.ndarray,
    values: np.ndarray,
    columns: np.ndarray,
    n_columns: int,
    names: pd.Index,
    seed: int,
    n_resamples: int,
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Every ordered pair of runs: which is ahead, by how much against the tie noise, and tests.

    For runs ``a, b`` with tie-aware means ``mu`` and exact variances
    ``tie_var`` of those means over random tie-breaks: ``mean_diff = mu_a -
    mu_b`` (0 within :data:`~tiecore.stats.ranks.RTOL`), ``tie_sd = sqrt(var_a
    + var_b)``, ``tie_noise = NOISE_WIDTH tie_sd``, ``within_tie_noise =
    |mean_diff| <= tie_noise``, ``p_beats_sampled`` (:func:`p_beats_all` of the
    ``samples``, ``(samples, runs)``), ``p_beats_normal = Phi(mean_diff /
    tie_sd)`` (a step 1, 1/2, 0 without tie noise), and the columns of
    :func:`~tiecore.stats.paired.paired_tests` (``seed``, ``n_resamples`` and
    ``options`` go to it).  The symmetric statistics are computed once per
    unordered pair; the frame's index is ``(a, b)``, ``for a in runs, for b in
    runs (b != a)``; its columns :data:`PAIR_COLUMNS`.

    ``values``: ``(queries, runs)`` tie-aware values, NaN where a run lacks
    the query; ``columns``: each row's qrels query (column of the sign flips).
    """
    i, j = np.triu_indices(len(mu), k=1)
    diff = mu[i] - mu[j]
    diff[np.abs(diff) <= RTOL * np.maximum(np.abs(mu[i]), np.abs(mu[j]))] = 0.0
    sd = np.sqrt(tie_var[i] + tie_var[j])
    with np.errstate(divide="ignore", invalid="ignore"):
        normal = np.where(sd > 0, special.ndtr(diff / sd), 0.5 + 0.5 * np.sign(diff))
    noise = NOISE_WIDTH * sd
    sampled = p_beats_all(samples)[i, j]
    tests = paired_tests(values, i, j, columns, n_columns, seed, n_resamples, **(options or {}))
    upper = {
        "mean_diff": diff,
        "p_beats_sampled": sampled,
        "p_beats_normal": normal,
        "tie_noise": noise,
        "within_tie_noise": np.abs(diff) <= noise,
        "tie_sd": sd,
        **tests,
    }
    lower = dict(upper)
    for column in ("mean_diff", "effect_size"):
        lower[column] = -upper[column]
    lower["diff_low"], lower["diff_high"] = -upper["diff_high"], -upper["diff_low"]
    for column in ("p_beats_sampled", "p_beats_normal"):
        lower[column] = 1.0 - upper[column]
    frame = pd.DataFrame(
        {c: np.concatenate([upper[c], lower[c]]) for c in PAIR_COLUMNS},
        index=pd.MultiIndex.from_arrays(
            [names.to_numpy()[np.r_[i, j]], names.to_numpy()[np.r_[j, i]]], names=["a", "b"]
        ),
    )
    # Ordered as: for a in runs, for b in runs (b != a)
    position = np.r_[i, j] * len(mu) + np.r_[j, i]
    return frame.iloc[np.argsort(position)]


def help_hurt(
    per_query: pd.DataFrame, per_query_var: pd.DataFrame, pairs: pd.DataFrame, baseline: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per run, the queries it helps, hurts and leaves equal against ``baseline``.

    ``per_query`` holds the tie-aware values (queries x runs, NaN where a run
    lacks the query), ``per_query_var`` their exact variances over random
    tie-breaks, ``pairs`` the table of :func:`pair_statistics` (with any
    ``_adj`` columns).  Over the queries both runs have, ``diff = run - baseline`` of the
    tie-aware values; equal when ``|diff| <= RTOL * max(|run|, |baseline|)``.

    Returns
    -------
    counts : DataFrame
        Index run (every run but the baseline): ``help, hurt, equal,
        n_queries``; ``within_tie_noise``, how many helped or hurt queries
        differ by at most ``NOISE_WIDTH * tie_sd`` (``tie_sd = sqrt(var_run +
        var_baseline)`` of that query: ties alone could reverse them); and the
        pair's ``mean_diff, tie_sd, topic_sd`` and p-values from
        ``pairs``.
    queries : DataFrame
        One row per run and shared query: ``run, qid, baseline_value,
        run_value, diff, tie_sd, outcome`` (``help``, ``hurt`` or ``equal``).
    """
    runs = list(per_query.columns)
    if baseline not in runs:
        raise InputError(
            "baseline", None, f"{baseline!r} is not one of the runs", "one of " + ", ".join(runs)
        )
    others = [r for r in runs if r != baseline]
    values = per_query.to_numpy(np.float64)
    var = per_query_var.reindex_like(per_query).to_numpy(np.float64)
    at = runs.index(baseline)
    base, base_var = values[:, [at]], var[:, [at]]
    picked = [runs.index(r) for r in others]
    x, x_var = values[:, picked], var[:, picked]
    shared = ~np.isnan(x) & ~np.isnan(base)
    diff = x - base
    scale = np.maximum(np.abs(x), np.abs(base))
    equal = shared & (np.abs(diff) <= RTOL * scale)
    helped = shared & ~equal & (diff > 0)
    hurt = shared & ~equal & (diff < 0)
    tie_sd = np.sqrt(x_var + base_var)
    close = (helped | hurt) & (np.abs(diff) <= NOISE_WIDTH * tie_sd)
    counts = pd.DataFrame(
        {
            "help": helped.sum(axis=0),
            "hurt": hurt.sum(axis=0),
            "equal": equal.sum(axis=0),
            "n_queries": shared.sum(axis=0),
            "within_tie_noise": close.sum(axis=0),
        },
        index=pd.Index(others, name="run"),
    )
    chosen = pairs.loc[[(r, baseline) for r in others]]
    wanted = ["mean_diff", "tie_sd", "topic_sd", "diff_low", "diff_high"]
    wanted += [c for c in chosen.columns if c.endswith("pvalue") or c.endswith("_adj")]
    for column in wanted:
        counts[column] = chosen[column].to_numpy()
    row, col = np.nonzero(shared)
    order = np.lexsort((row, col))
    row, col = row[order], col[order]
    outcome = np.where(helped, "help", np.where(hurt, "hurt", "equal"))
    queries = pd.DataFrame(
        {
            "run": np.asarray(others, dtype=object)[col],
            "qid": per_query.index.to_numpy()[row],
            "baseline_value": base[row, 0],
            "run_value": x[row, col],
            "diff": np.where(equal, 0.0, diff)[row, col],
            "tie_sd": tie_sd[row, col],
            "outcome": outcome[row, col],
        }
    )
    return counts, queries


def adjust_pairs(
    pairs: pd.DataFrame, names: pd.Index, correction: str, columns: Sequence[str]
) -> pd.DataFrame:
    """``pairs`` with a ``<test>_adj`` column per p-value column in ``columns``, corrected over the
    unordered pairs (each counted once; both orders get the same value)."""
    out = pairs.copy()
    a = names.get_indexer(pairs.index.get_level_values("a"))
    b = names.get_indexer(pairs.index.get_level_values("b"))
    upper = a < b
    key = np.minimum(a, b) * len(names) + np.maximum(a, b)
    for column in columns:
        table = np.full(len(names) ** 2, np.nan)
        table[key[upper]] = adjust_pvalues(pairs[column].to_numpy()[upper], correction)
        out[f"{column}_adj"] = table[key]
    return out


def tukey_pairs(values: np.ndarray, names: pd.Index, confidence: float) -> pd.DataFrame:
    """:func:`~tiecore.stats.tukey.tukey_hsd` of each run's values over its own queries,
    per ordered pair."""
    found = tukey_hsd([column[~np.isnan(column)] for column in values.T], confidence)
    a, b = np.nonzero(~np.eye(len(names), dtype=bool))
    return pd.DataFrame(
        {f"tukey_{k}": v[a, b] for k, v in found.items()},
        index=pd.MultiIndex.from_arrays([names[a], names[b]], names=["a", "b"]),
    )
