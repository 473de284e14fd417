"""Systems ranked under every tie treatment: the tables the System rankings page shows.

A :class:`tiecore.compare.Comparison` holds each system's score under every
ordering (``trec_eval``, ``aware``, the other tie-breaks) and the pairs of systems.
These functions turn it into what a reader looks at: integer competition ranks
with shared ranks marked (``1, =2, =2, 4``, :func:`tiecore.stats.ranks.tie_ranks`),
the systems whose rank differs between two orderings (largest move first), each
system's slot in a slope chart, the agreement matrices of the orderings and the
upper triangle of the pairs in rank order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tiecore.stats.ranks import mean_ranks, rank_change, rank_labels, tie_ranks


@dataclass(frozen=True)
class Ranks:
    """Each system's rank under each ordering.

    Attributes
    ----------
    ranks : DataFrame
        systems x orderings, integer competition ranks (1 = best).
    labels : DataFrame
        the same as text, a shared rank prefixed with ``=`` (``"=2"``).
    order : list of str
        the systems by tie-aware rank, then trec_eval's rank, then as given.
    """

    ranks: pd.DataFrame
    labels: pd.DataFrame
    order: list[str]


def ordering_ranks(scores: pd.DataFrame, orderings: Sequence[str]) -> Ranks:
    """Competition ranks of the systems (rows of ``scores``) in each ordering (a column).

    ``rank = 1 + #{systems scoring higher}``, equal scores (within
    :data:`tiecore.stats.ranks.RTOL`) sharing the rank.  The order sorts by the
    ``aware`` column's rank, then ``trec_eval``'s, where present.

    Examples
    --------
    >>> scores = pd.DataFrame({"trec_eval": [0.3, 0.5, 0.3], "aware": [0.4, 0.4, 0.2]},
    ...                       index=["a", "b", "c"])
    >>> r = ordering_ranks(scores, ["trec_eval", "aware"])
    >>> r.ranks["aware"].tolist(), r.labels["aware"].tolist(), r.order
    ([1, 1, 3], ['=1', '=1', '3'], ['b', 'a', 'c'])
    """
    ranks = pd.DataFrame(
        {c: tie_ranks(scores[c].to_numpy(np.float64)) for c in orderings}, index=scores.index
    )
    labels = pd.DataFrame(
        {c: rank_labels(ranks[c].to_numpy()) for c in orderings}, index=ranks.index
    )
    keys = [c for c in ("aware", "trec_eval") if c in ranks.columns]
    order = ranks.sort_values(keys, kind="stable").index.tolist() if keys else list(ranks.index)
    return Ranks(ranks, labels, order)


def rank_moves(ranks: Ranks, before: str = "trec_eval", after: str = "aware") -> pd.DataFrame:
    """The systems whose rank differs between ``before`` and ``after``, largest move first.

    Returns
    -------
    DataFrame
        ``system, rank_before, rank_after, change`` (``after - before``: negative is a
        climb) and the labels ``label_before, label_after``; ties in the size of the move
        keep the rank order.

    Examples
    --------
    >>> scores = pd.DataFrame({"trec_eval": [0.1, 0.5, 0.3], "aware": [0.6, 0.5, 0.3]},
    ...                       index=["a", "b", "c"])
    >>> moves = rank_moves(ordering_ranks(scores, ["trec_eval", "aware"]))
    >>> moves[["system", "change"]].values.tolist()
    [['a', -2], ['b', 1], ['c', 1]]
    """
    r = ranks.ranks.loc[ranks.order]
    moved = r.index[(r[before] != r[after]).to_numpy()]
    change = rank_change(r.loc[moved, before].to_numpy(), r.loc[moved, after].to_numpy())
    out = pd.DataFrame(
        {
            "system": list(moved),
            "rank_before": r.loc[moved, before].to_numpy(),
            "rank_after": r.loc[moved, after].to_numpy(),
            "change": np.asarray(change, np.int64),
            "label_before": ranks.labels.loc[moved, before].to_numpy(),
            "label_after": ranks.labels.loc[moved, after].to_numpy(),
        }
    )
    size = -np.abs(out["change"].to_numpy())
    return out.iloc[np.argsort(size, kind="stable")].reset_index(drop=True)


def slope_slots(ranks: np.ndarray) -> np.ndarray:
    """Each row's place (1..n) in each column of ``ranks`` (rows x orderings): sorted by
    the rank, equal ranks kept in row order, so a slope chart draws shared ranks side by
    side.

    Examples
    --------
    >>> slope_slots(np.array([[1, 2], [1, 1], [3, 3]])).tolist()
    [[1, 2], [2, 1], [3, 3]]
    """
    ranks = np.asarray(ranks)
    rows = np.arange(ranks.shape[0])
    slots = np.empty(ranks.shape, np.int64)
    for j in range(ranks.shape[1]):  # one column per ordering drawn: a handful
        slots[np.lexsort((rows, ranks[:, j])), j] = rows + 1
    return slots


def movers(ranks: np.ndarray) -> np.ndarray:
    """Rows of ``ranks`` (systems x orderings) whose rank is not the same in every column."""
    ranks = np.asarray(ranks)
    return ranks.max(axis=1) > ranks.min(axis=1)


def sample_mean_ranks(sample_scores: pd.DataFrame) -> pd.Series:
    """Each system's competition rank averaged over the random tie-breaks (samples x
    systems), :func:`tiecore.stats.ranks.mean_ranks`."""
    return pd.Series(mean_ranks(sample_scores.to_numpy()), index=sample_scores.columns)


def agreement_matrices(agreement: pd.DataFrame, orderings: Sequence[str]) -> dict[str, np.ndarray]:
    """Each statistic of ``agreement`` (index ``(ordering_a, ordering_b)``, one column per
    statistic, as :class:`~tiecore.compare.Comparison` holds it) as an orderings x orderings
    matrix, NaN where undefined."""
    return {
        s: pd.to_numeric(agreement[s], errors="coerce")
        .unstack(-1)
        .reindex(index=list(orderings), columns=list(orderings))
        .to_numpy(np.float64)
        for s in agreement.columns
    }


def all_agree(matrices: Mapping[str, np.ndarray], atol: float = 1e-9) -> bool:
    """Whether every statistic is 1 for every pair of different orderings (NaN is not 1).

    Examples
    --------
    >>> all_agree({"kendall_tau": np.array([[1.0, 1.0], [1.0, 1.0]])})
    True
    >>> all_agree({"kendall_tau": np.array([[1.0, 0.6], [0.6, 1.0]])})
    False
    """
    for m in matrices.values():
        off = ~np.eye(len(m), dtype=bool)
        if not np.allclose(m[off], 1.0, rtol=0, atol=atol):
            return False
    return True


def pairs_in_order(pairs: pd.DataFrame, order: Sequence[str], alpha: float) -> pd.DataFrame:
    """Each unordered pair once, ``a`` ranked above ``b`` in ``order``, with
    ``significant`` (the corrected t-test's ``t_pvalue_adj < alpha``; an undefined p is
    not significant) and ``abs_diff = |mean_diff|``.

    ``pairs`` has a column or index level ``a`` and ``b`` for every ordered pair.
    """
    position = {run: i for i, run in enumerate(order)}
    frame = pairs.reset_index() if "a" not in pairs.columns else pairs
    upper = frame[frame["a"].map(position) < frame["b"].map(position)].copy()
    upper["significant"] = pd.to_numeric(upper["t_pvalue_adj"], errors="coerce") < alpha
    upper["abs_diff"] = upper["mean_diff"].abs()
    return upper.reset_index(drop=True)


def nearest_in_rank(upper: pd.DataFrame, order: Sequence[str], limit: int) -> pd.DataFrame:
    """At most ``limit`` rows of ``upper`` (one row per pair, columns ``a`` and ``b``, as
    :func:`pairs_in_order` gives them): the pairs closest in rank first.

    A pair's distance is ``|place(b) - place(a)|`` in ``order``: neighbours (1) are kept
    first, then the pairs two places apart, and so on; among equal distances the pair
    higher in ``order`` first.  With n systems there are n(n-1)/2 pairs (11,175 for 150),
    far more than a reader can look at, while the pairs whose order is in question are
    those close in rank.  The rows kept stay in ``upper``'s order.

    Examples
    --------
    >>> upper = pd.DataFrame({"a": ["x", "x", "y"], "b": ["y", "z", "z"]})
    >>> nearest_in_rank(upper, ["x", "y", "z"], 2)[["a", "b"]].values.tolist()
    [['x', 'y'], ['y', 'z']]
    """
    if len(upper) <= limit:
        return upper
    place = {run: i for i, run in enumerate(order)}
    first = upper["a"].map(place).to_numpy()
    second = upper["b"].map(place).to_numpy()
    distance = np.abs(second - first)
    keep = np.lexsort((np.minimum(first, second), distance))[: max(int(limit), 0)]
    return upper.iloc[np.sort(keep)]


def compared_systems(
    best: Sequence[str], top: int, marked: Sequence[str] = (), only_marked: bool = False
) -> list[str]:
    """The systems a ranking compares: the ``top`` first of ``best`` and every ``marked``
    one besides (or the marked ones alone), in ``best``'s order.

    Examples
    --------
    >>> compared_systems(["a", "b", "c", "d"], 2, ["d"])
    ['a', 'b', 'd']
    >>> compared_systems(["a", "b", "c", "d"], 2, ["d", "c"], only_marked=True)
    ['c', 'd']
    """
    chosen = set(marked) if only_marked else {*best[: max(int(top), 0)], *marked}
    return [run for run in best if run in chosen]


def rankings_table(result, ranks: Ranks, orderings: Sequence[str]) -> pd.DataFrame:
    """Every system's rank under each ordering (``rank_<ordering>``), its mean rank over the
    random tie-breaks and its tie-aware and trec_eval values, systems in rank order.

    ``result`` is a :class:`tiecore.compare.Comparison` (its ``scores`` and
    ``sample_scores``).
    """
    order = ranks.order
    table = pd.DataFrame({"system": order})
    for c in orderings:
        table[f"rank_{c}"] = ranks.ranks.loc[order, c].to_numpy()
    table["mean_rank_sampled"] = sample_mean_ranks(result.sample_scores[order]).to_numpy()
    table["aware_value"] = result.scores.loc[order, "aware"].to_numpy()
    table["trec_eval_value"] = result.scores.loc[order, "trec_eval"].to_numpy()
    return table


#: The multiple-comparison corrections as a sentence names them.
CORRECTION_WORDS = {
    "holm": "Holm's correction",
    "bonferroni": "Bonferroni's correction",
    "bh": "the Benjamini-Hochberg correction",
    "none": "no correction",
}
#: The tests whose corrected p-values a comparison holds -> their names in words.
TEST_WORDS = {
    "t_pvalue_adj": "the paired t-test",
    "randomization_pvalue_adj": "the randomization test",
    "wilcoxon_pvalue_adj": "the Wilcoxon signed-rank test",
    "tukey_pvalue": "Tukey's HSD",
}


def significance_sentence(upper: pd.DataFrame, alpha: float, correction: str) -> str:
    """How many pairs each test finds significant, in plain words.

    ``upper`` holds each pair once (:func:`pairs_in_order`) with the corrected p-values
    of :data:`TEST_WORDS` that were computed; a pair is significant when its p-value is
    below ``alpha`` (an undefined p-value is not).

    Examples
    --------
    >>> upper = pd.DataFrame({"t_pvalue_adj": [0.01, 0.2], "randomization_pvalue_adj":
    ...                       [0.02, 0.3], "wilcoxon_pvalue_adj": [0.5, 0.6]})
    >>> print(significance_sentence(upper, 0.05, "holm"))  # doctest: +NORMALIZE_WHITESPACE
    At α = 0.05, after Holm's correction over the 2 pairs: the paired t-test finds 1 pair
    significant, the randomization test 1 and the Wilcoxon signed-rank test none.
    >>> print(significance_sentence(upper, 0.001, "none"))  # doctest: +NORMALIZE_WHITESPACE
    No pair of systems differs significantly at α = 0.001 (no correction over the 2 pairs;
    the paired t-test, the randomization test and the Wilcoxon signed-rank test).
    """
    tests = [c for c in TEST_WORDS if c in upper.columns]
    found = {c: int((pd.to_numeric(upper[c], errors="coerce") < alpha).sum()) for c in tests}
    pairs = len(upper)
    over = f"over the {pairs} pair{'s' if pairs != 1 else ''}"
    how = CORRECTION_WORDS.get(correction, correction)
    if not any(found.values()):
        names = [TEST_WORDS[c] for c in tests]
        listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
        return (
            f"No pair of systems differs significantly at α = {alpha:g} ({how} {over}; {listed})."
        )

    def count(k: int) -> str:
        return "none" if k == 0 else str(k)

    first, *rest = tests
    said = [
        f"{TEST_WORDS[first]} finds {count(found[first])} "
        f"pair{'s' if found[first] != 1 else ''} significant"
    ]
    said += [f"{TEST_WORDS[c]} {count(found[c])}" for c in rest]
    head = f"At α = {alpha:g}, " + (
        "without correction" if correction == "none" else f"after {how}"
    )
    tail = ", ".join(said[:-1]) + f" and {said[-1]}" if len(said) > 1 else said[0]
    return f"{head} {over}: {tail}."
