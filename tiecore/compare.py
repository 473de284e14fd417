"""Systems and rankings: how tie treatment reorders runs, and whether the order means anything.

Every run is scored by one measure under each oblivious tie-break, tie-aware,
and under each of ``samples`` random tie-breaks.  The runs are then ranked
under each of these orderings; the rankings are compared (Kendall's tau and
Yilmaz, Aslam & Robertson's AP correlation ``tau_AP``); and every pair of runs
gets the probability that one beats the other under random tie-breaking, next
to a paired t-test and a paired randomization test on the tie-aware per-query
values.

A run's score is its mean over its own queries (the qrels queries it
retrieved for), exactly as :func:`tiecore.evaluate` reports it; paired tests
use the queries both runs share.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special, stats

from tiecore.evaluate import as_run_dict, query_values, run_seed
from tiecore.judgments import Judgments
from tiecore.measures import Measure, parse_measures
from tiecore.ranking import Ranking
from tiecore.spread import query_spread

#: Oblivious tie-break policies with one deterministic order ("random" is the samples).
OBLIVIOUS = ("trec_eval", "docno_asc", "file_order", "optimistic", "pessimistic")
#: Columns of :attr:`Comparison.scores` and :attr:`Comparison.ranks`.
ORDERINGS = ("aware", *OBLIVIOUS)
#: Name of the random tie-break orderings (one per sample) in the agreement table.
RANDOM = "random"
#: ``within_tie_noise``: ``|mu_A - mu_B| <= NOISE_WIDTH * sqrt(var_A + var_B)``.
NOISE_WIDTH = 2.0
FORMATS = ("text", "csv", "json")
#: Cells of the pairwise arrays built at once when ranking the samples.
BATCH_CELLS = 1_000_000


@dataclass
class Comparison:
    """Runs ranked by one measure under every tie treatment, with pairwise statistics.

    Attributes
    ----------
    measure : Measure
    scores : DataFrame
        Index run names; one column per ordering in :data:`ORDERINGS`.
    sample_scores : DataFrame
        One row per random tie-break, one column per run.
    ranks : DataFrame
        Ranks of ``scores`` per column, 1 = best, ties get their average rank.
    agreement : DataFrame
        Index ``(ordering_a, ordering_b)``; ``kendall_tau`` (tau-b), ``tau_ap``
        (ordering ``a`` judged against ``b`` as the reference) and
        ``tau_ap_sym`` (mean of both directions).  Rows with ``random`` hold
        the mean over the samples.
    swaps : DataFrame
        Runs ranked differently by ``trec_eval`` and ``aware``: ``run``,
        ``rank_trec_eval``, ``rank_aware``, ``shift = rank_trec_eval -
        rank_aware`` (positive: the run climbs under tie-aware scoring).
    pairs : DataFrame
        Index ``(a, b)`` over ordered pairs of runs; see :func:`compare`.
    per_query : DataFrame
        Tie-aware per-query values: index qid, one column per run (NaN where
        a run has no rows for the query).
    tie_var : Series
        Per run: the exact variance of its mean score over random tie-breaks
        (:func:`tiecore.spread.query_spread`), the ``var`` of ``p_beats_normal``.
    """

    measure: Measure
    scores: pd.DataFrame
    sample_scores: pd.DataFrame
    ranks: pd.DataFrame
    agreement: pd.DataFrame
    swaps: pd.DataFrame
    pairs: pd.DataFrame
    per_query: pd.DataFrame
    tie_var: pd.Series


def compare(
    runs: pd.DataFrame | Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    measure: str | Measure,
    *,
    samples: int = 200,
    seed: int = 0,
    rel_level: int = 1,
    depth: int | None = None,
    n_resamples: int = 2000,
) -> Comparison:
    """Rank runs by ``measure`` under every tie treatment and compare them pairwise.

    Parameters
    ----------
    runs : mapping of name to DataFrame
        At least two runs (columns ``qid, docno, score``), or LETOR feature
        columns from :func:`tiecore.read_letor`.
    qrels : DataFrame
        Columns ``qid, docno, level``.
    measure : str or Measure
        One measure, such as ``"AP"`` or ``"nDCG@10"``.
    samples, seed : int
        Random tie-breaks per run and their seed; each run draws from
        :func:`tiecore.evaluate.run_seed`, so its sample mean is the value of
        ``evaluate(..., ties="sampled")`` with the same arguments.
    rel_level, depth : int
        As in :func:`tiecore.evaluate`.
    n_resamples : int
        Resamples of the paired randomization test (seeded by ``seed`` and the
        two run names, so a pair's p-value does not depend on the other runs).

    Returns
    -------
    Comparison
        ``pairs`` columns, for runs ``a`` and ``b`` with tie-aware means
        ``mu`` and exact tie-breaking variances ``var`` of their means
        (``Comparison.tie_var``):

        - ``mean_diff = mu_a - mu_b``;
        - ``p_beats_sampled``: P(a random tie-break of ``a`` scores above an
          independent one of ``b``), over all sample pairs, equality counting
          half; so ``p(a, b) + p(b, a) = 1``;
        - ``p_beats_normal = Phi(mean_diff / sqrt(var_a + var_b))``;
        - ``tie_noise = 2 sqrt(var_a + var_b)`` and ``within_tie_noise =
          |mean_diff| <= tie_noise``;
        - ``t_pvalue`` (paired t-test), ``randomization_pvalue`` (paired
          sign-flip test, two-sided, of the mean difference), ``n_queries``
          and ``effect_size = mean(d) / std(d)`` of the per-query tie-aware
          differences ``d`` over the queries both runs have.
    """
    measure = _one_measure(measure)
    _check_int("samples", samples, 2)
    _check_int("n_resamples", n_resamples, 1)
    if depth is not None:
        _check_int("depth", depth, 1)
    runs = as_run_dict(runs)
    if len(runs) < 2:
        raise ValueError(f"compare needs at least two runs, got {len(runs)}")
    judgments = Judgments.from_qrels(qrels, rel_level)
    found = {
        name: _score_run(name, run, judgments, measure, samples, seed, depth)
        for name, run in runs.items()
    }
    names = pd.Index(list(found), name="run")
    scores = pd.DataFrame({o: [found[n].scores[o] for n in names] for o in ORDERINGS}, index=names)
    sample_scores = pd.DataFrame({n: found[n].samples for n in names})
    sample_scores.index.name = "sample"
    sample_scores.columns.name = "run"
    covered = np.any([found[n].chosen for n in names], axis=0)
    per_query_values = pd.DataFrame(
        {n: np.where(found[n].chosen, found[n].aware, np.nan)[covered] for n in names},
        index=pd.Index(judgments.qids[covered], name="qid"),
    )
    per_query_values.columns.name = "run"
    tie_var = pd.Series({n: found[n].tie_var for n in names}, name="tie_var").rename_axis("run")
    ranks = scores.rank(ascending=False, method="average")
    return Comparison(
        measure=measure,
        scores=scores,
        sample_scores=sample_scores,
        ranks=ranks,
        agreement=_agreement(scores, sample_scores),
        swaps=_swaps(ranks),
        pairs=_pairs(scores["aware"], tie_var, sample_scores, per_query_values, seed, n_resamples),
        per_query=per_query_values,
        tie_var=tie_var,
    )


@dataclass
class _RunScores:
    scores: dict[str, float]
    samples: np.ndarray  # (samples,) mean over the run's queries
    aware: np.ndarray  # (queries,) in judgments order
    chosen: np.ndarray  # queries the run has
    tie_var: float


def _score_run(name, run, judgments, measure, samples, seed, depth) -> _RunScores:
    """One run under every ordering; aware and sampled exactly as :func:`tiecore.evaluate`.

    The variance of the run's mean over random tie-breaks is exact: queries
    break their ties independently, so it is the sum of the per-query variances
    of :func:`tiecore.spread.query_spread` over the square of the query count.
    """
    rng = run_seed(seed, name)
    base = Ranking.build(run, judgments, tiebreak="file_order", seed=rng, name=name)
    chosen = base.counts > 0
    spread = query_spread(base, judgments, [measure], depth=depth)[measure]
    aware = spread["value"].to_numpy()
    drawn = query_values(
        base, judgments, [measure], ties="sampled", depth=depth, samples=samples, rng=rng
    )[measure]
    scores = {"aware": float(aware[chosen].mean())}
    for tiebreak in OBLIVIOUS:
        ranking = base.retie(tiebreak)
        found = query_values(ranking, judgments, [measure], ties="oblivious", depth=depth)
        scores[tiebreak] = float(found[measure][chosen].mean())
    return _RunScores(
        scores=scores,
        samples=drawn[:, chosen].mean(axis=1),
        aware=aware,
        chosen=chosen,
        tie_var=float(spread["var"].to_numpy()[chosen].sum() / np.count_nonzero(chosen) ** 2),
    )


# --------------------------------------------------------------------------- rank correlation


def kendall_tau(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of score vectors along the last axis (as :func:`scipy.stats.kendalltau`).

    ``tau_b = (concordant - discordant) / sqrt(pairs untied in x * pairs untied in y)``;
    NaN when either vector is constant.

    >>> float(kendall_tau(np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])))
    -1.0
    """
    x, y = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(y, np.float64))
    upper = np.triu_indices(x.shape[-1], k=1)
    sx = np.sign(x[..., None, :] - x[..., :, None])[..., upper[0], upper[1]]
    sy = np.sign(y[..., None, :] - y[..., :, None])[..., upper[0], upper[1]]
    untied = np.count_nonzero(sx, axis=-1) * np.count_nonzero(sy, axis=-1)
    agree = (sx * sy).sum(axis=-1)
    return np.divide(agree, np.sqrt(untied), out=np.full(agree.shape, np.nan), where=untied > 0)


def tau_ap(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """AP correlation of the ranking by scores ``x`` against the reference ranking by ``y``.

    Yilmaz, Aslam & Robertson (SIGIR 2008), higher scores ranked first::

        tau_AP = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1

    where ``C(i)`` counts the items above position ``i`` in the ``x`` ranking
    that the ``y`` ranking also puts above item ``i``.  It weighs errors near
    the top more and is asymmetric.  Ties are averaged out, as the tie-aware
    measures do: the value is the mean over every ordering of both rankings
    consistent with the scores, so a pair tied in ``y`` counts 1/2, and an item
    in an ``x`` tie group of size ``n`` with ``t`` items above sits at each
    position ``t + k`` with probability ``1/n``, with each group mate above it
    with probability ``(k - 1) / (n - 1)``.  Works along the last axis.

    >>> float(tau_ap(np.array([3.0, 2.0, 1.0]), np.array([3.0, 2.0, 1.0])))
    1.0
    """
    x, y = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(y, np.float64))
    n = x.shape[-1]
    if n < 2:
        raise ValueError("tau_ap needs at least two items")
    # [..., i, j]: is j above i (in x), tied with i (in x), correctly above i (in y)?
    above = x[..., None, :] > x[..., :, None]
    level = (x[..., None, :] == x[..., :, None]) & ~np.eye(n, dtype=bool)
    correct = (y[..., None, :] > y[..., :, None]) + 0.5 * (y[..., None, :] == y[..., :, None])
    from_above = (above * correct).sum(axis=-1)
    from_group = (level * correct).sum(axis=-1)
    t = above.sum(axis=-1)
    size = level.sum(axis=-1) + 1
    # Positions m = t .. t + size - 1 items above; m = 0 (the top) adds nothing.
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, n + 1))))
    low = np.maximum(t, 1)
    high = t + size - 1
    inverse_sum = harmonic[high] - harmonic[low - 1]  # sum 1/m
    share_sum = (high - low + 1) - t * inverse_sum  # sum (m - t)/m
    expected = (from_above * inverse_sum + from_group * share_sum / np.maximum(size - 1, 1)) / size
    return 2.0 / (n - 1) * expected.sum(axis=-1) - 1.0


def _agreement(scores: pd.DataFrame, sample_scores: pd.DataFrame) -> pd.DataFrame:
    """Kendall's tau and tau_AP between every ordered pair of orderings (and the samples)."""
    rows = {}
    sampled = sample_scores[scores.index].to_numpy()
    for a in ORDERINGS:
        x = scores[a].to_numpy()
        for b in ORDERINGS:
            if a != b:
                y = scores[b].to_numpy()
                forward, backward = float(tau_ap(x, y)), float(tau_ap(y, x))
                rows[a, b] = (float(kendall_tau(x, y)), forward, (forward + backward) / 2)
        tau, forward, backward = _against_samples(x, sampled)
        rows[a, RANDOM] = (_mean(tau), forward.mean(), ((forward + backward) / 2).mean())
        rows[RANDOM, a] = (_mean(tau), backward.mean(), ((forward + backward) / 2).mean())
    frame = pd.DataFrame.from_dict(
        rows, orient="index", columns=["kendall_tau", "tau_ap", "tau_ap_sym"]
    )
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["ordering_a", "ordering_b"])
    return frame


def _against_samples(x: np.ndarray, sampled: np.ndarray) -> tuple[np.ndarray, ...]:
    """Kendall's tau, tau_AP(x vs sample) and tau_AP(sample vs x) per sample.

    In batches of samples, so that the ``(samples, runs, runs)`` pair arrays
    stay within :data:`BATCH_CELLS` cells.
    """
    batch = max(1, BATCH_CELLS // len(x) ** 2)
    parts = [
        (kendall_tau(x, chunk), tau_ap(x, chunk), tau_ap(chunk, x))
        for chunk in np.array_split(sampled, range(batch, len(sampled), batch))
    ]
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def _mean(values: np.ndarray) -> float:
    """Mean ignoring NaN (constant rankings), NaN when nothing is left."""
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else math.nan


def _swaps(ranks: pd.DataFrame, first: str = "trec_eval", second: str = "aware") -> pd.DataFrame:
    """Runs whose rank differs between two orderings, largest moves first."""
    moved = ranks[ranks[first] != ranks[second]]
    out = pd.DataFrame(
        {
            "run": moved.index.to_numpy(),
            f"rank_{first}": moved[first].to_numpy(),
            f"rank_{second}": moved[second].to_numpy(),
            "shift": (moved[first] - moved[second]).to_numpy(),
        }
    )
    order = np.lexsort((out[f"rank_{second}"], -out["shift"].abs()))
    return out.iloc[order].reset_index(drop=True)


def swapped_pairs(
    comparison: Comparison, first: str = "trec_eval", second: str = "aware"
) -> pd.DataFrame:
    """Pairs of runs in opposite order under two orderings (a tie in one of them counts too).

    Each row names the run ahead under ``first`` as ``a``; columns: both scores
    under each ordering, the pair's ``p_beats_sampled`` and ``within_tie_noise``.
    """
    scores = comparison.scores
    a, b = np.triu_indices(len(scores), k=1)
    d1 = scores[first].to_numpy()[a] - scores[first].to_numpy()[b]
    d2 = scores[second].to_numpy()[a] - scores[second].to_numpy()[b]
    flip = (np.sign(d1) != np.sign(d2)) & ((d1 != 0) | (d2 != 0))
    ahead = np.where(d1 > 0, a, b)[flip]
    behind = np.where(d1 > 0, b, a)[flip]
    if (d1[flip] == 0).any():  # tied under ``first``: name the run ahead under ``second``
        tied = d1[flip] == 0
        ahead, behind = (
            np.where(tied & (d2[flip] < 0), behind, ahead),
            np.where(tied & (d2[flip] < 0), ahead, behind),
        )
    names = scores.index.to_numpy()
    pairs = comparison.pairs.loc[list(zip(names[ahead], names[behind], strict=True))]
    out = pd.DataFrame(
        {
            "a": names[ahead],
            "b": names[behind],
            f"{first}_a": scores[first].to_numpy()[ahead],
            f"{first}_b": scores[first].to_numpy()[behind],
            f"{second}_a": scores[second].to_numpy()[ahead],
            f"{second}_b": scores[second].to_numpy()[behind],
            "p_beats_sampled": pairs["p_beats_sampled"].to_numpy(),
            "within_tie_noise": pairs["within_tie_noise"].to_numpy(),
        }
    )
    return out.sort_values(f"{first}_a", ascending=False, kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- pairs of runs


def p_beats(first: np.ndarray, second: np.ndarray) -> float:
    """P(X > Y) + P(X = Y) / 2 for X, Y drawn independently from two samples.

    >>> p_beats(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    0.875
    """
    ordered = np.sort(second)
    below = np.searchsorted(ordered, first, side="left").sum()
    at_most = np.searchsorted(ordered, first, side="right").sum()
    return float((below + at_most) / (2.0 * first.size * second.size))


def _pairs(
    mu: pd.Series,
    tie_var: pd.Series,
    sample_scores: pd.DataFrame,
    per_query_values: pd.DataFrame,
    seed: int,
    n_resamples: int,
) -> pd.DataFrame:
    """One row per ordered pair of runs; the symmetric tests are run once per pair."""
    names = list(mu.index)
    rows = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diff = float(mu[a] - mu[b])
            sd = math.sqrt(tie_var[a] + tie_var[b])
            p_sampled = p_beats(sample_scores[a].to_numpy(), sample_scores[b].to_numpy())
            p_normal = _normal_beats(diff, sd)
            noise = NOISE_WIDTH * sd
            t_p, r_p, n, effect = _paired_tests(
                per_query_values[a].to_numpy(), per_query_values[b].to_numpy(),
                _pair_rng(seed, a, b), n_resamples,
            )  # fmt: skip
            close = abs(diff) <= noise
            rows[a, b] = (diff, p_sampled, p_normal, noise, close, t_p, r_p, n, effect)
            rows[b, a] = (-diff, 1 - p_sampled, 1 - p_normal, noise, close, t_p, r_p, n, -effect)
    columns = [
        "mean_diff", "p_beats_sampled", "p_beats_normal", "tie_noise", "within_tie_noise",
        "t_pvalue", "randomization_pvalue", "n_queries", "effect_size",
    ]  # fmt: skip
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["a", "b"])
    order = pd.MultiIndex.from_tuples([(a, b) for a in names for b in names if a != b])
    frame = frame.reindex(order)
    frame.index.names = ["a", "b"]
    return frame.astype({"within_tie_noise": bool, "n_queries": np.int64})


def _normal_beats(diff: float, sd: float) -> float:
    """``Phi(diff / sd)``; a step (1, 1/2, 0) when neither run has tie noise."""
    if sd == 0:
        return 0.5 if diff == 0 else float(diff > 0)
    return float(special.ndtr(diff / sd))


def _pair_rng(seed: int, a: str, b: str) -> np.random.Generator:
    """The randomization test's generator: a function of the seed and the unordered pair."""
    first, second = sorted((a, b))
    return np.random.default_rng([seed, zlib.crc32(first.encode()), zlib.crc32(second.encode())])


def _paired_tests(
    x: np.ndarray, y: np.ndarray, rng: np.random.Generator, n_resamples: int
) -> tuple[float, float, int, float]:
    """Paired t-test and sign-flip randomization test over the queries both runs have.

    Differences that do not vary (identical runs, or a constant offset) give
    the limit values directly: p = 1 for no difference, 0 for a constant one,
    effect size 0 or +-inf; scipy would divide by zero there.
    """
    common = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[common], y[common]
    n = int(common.sum())
    d = x - y
    if n < 2:
        return math.nan, math.nan, n, math.nan
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd <= 1e-12 * max(float(np.abs(d).max()), 1e-300):
        constant = 1.0 if mean == 0 else 0.0
        effect = 0.0 if mean == 0 else math.copysign(math.inf, mean)
        return constant, constant, n, effect
    t_p = float(stats.ttest_rel(x, y).pvalue)
    test = stats.permutation_test(
        (x, y),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=rng,
    )
    return t_p, float(test.pvalue), n, mean / sd


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


# --------------------------------------------------------------------------- output


def format_comparison(comparison: Comparison, fmt: str = "text") -> str:
    """What ``tiecore compare`` prints.

    ``text``: the scores and ranks of every run under each ordering (with the
    random tie-breaks' mean and sd), the runs that move between ``trec_eval``
    and ``aware``, the pairs of runs that swap, and the agreement of
    ``trec_eval`` with the other orderings.  ``csv``: one tidy table with
    columns ``table, run, other, field, value`` holding the scores, ranks,
    swaps and pairs.  ``json``: an object with those tables as lists of records.
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}, got {fmt!r}")
    if fmt == "text":
        return _text(comparison)
    if fmt == "csv":
        return _tidy(comparison).to_csv(index=False)
    return json.dumps(_records(comparison), indent=1) + "\n"


def _ranking_table(comparison: Comparison) -> pd.DataFrame:
    """Scores and ranks side by side; the random column is the samples' mean, sd and mean rank."""
    scores, ranks = comparison.scores, comparison.ranks
    sampled = comparison.sample_scores[scores.index]
    table = scores.copy()
    table[RANDOM] = sampled.mean().to_numpy()
    table[f"{RANDOM}_sd"] = sampled.std(ddof=1).to_numpy()
    for column in ORDERINGS:
        table[f"rank_{column}"] = ranks[column]
    table[f"rank_{RANDOM}"] = sampled.rank(axis=1, ascending=False).mean().to_numpy()
    return table


def _text(comparison: Comparison) -> str:
    table = _ranking_table(comparison).sort_values(["rank_aware", "rank_trec_eval"])
    shown = pd.DataFrame(index=table.index)
    for column in (*ORDERINGS, RANDOM):
        rank = table[f"rank_{column}"].map(lambda r: f"({r:g})" if r == int(r) else f"({r:.1f})")
        shown[column] = table[column].map("{:.4f}".format) + " " + rank
    shown[RANDOM] = (
        table[RANDOM].map("{:.4f}".format)
        + "+-"
        + table[f"{RANDOM}_sd"].map("{:.4f}".format)
        + " "
        + table[f"rank_{RANDOM}"].map("({:.1f})".format)
    )
    samples = len(comparison.sample_scores)
    lines = [
        f"{comparison.measure}: {len(table)} runs, mean over each run's queries; "
        f"(rank), 1 = best; {RANDOM} = mean+-sd over {samples} random tie-breaks (mean rank)",
        shown.to_string(),
        "",
    ]
    swaps = comparison.swaps
    if swaps.empty:
        lines.append("rank changes trec_eval -> aware: none")
    else:
        lines += ["rank changes trec_eval -> aware (shift > 0: climbs under aware):"]
        lines += [swaps.to_string(index=False, float_format="{:g}".format), ""]
        flipped = swapped_pairs(comparison)
        lines += ["pairs in opposite order under trec_eval and aware (a is ahead under trec_eval):"]
        lines += [flipped.to_string(index=False, float_format="{:.6f}".format)]
    agreement = comparison.agreement.xs("trec_eval", level="ordering_a")
    lines += ["", "agreement of trec_eval's order with (tau_ap: trec_eval judged against it):"]
    lines += [agreement.to_string(float_format="{:.4f}".format)]
    return "\n".join(lines) + "\n"


def _tidy(comparison: Comparison) -> pd.DataFrame:
    """Every table as rows ``table, run, other, field, value``."""
    parts = []
    table = _ranking_table(comparison)
    long = table.rename_axis("run").reset_index().melt(id_vars="run", var_name="field")
    parts.append(long.assign(table="scores", other=""))
    swaps = comparison.swaps.melt(id_vars="run", var_name="field")
    parts.append(swaps.assign(table="swaps", other=""))
    pairs = comparison.pairs.rename_axis(["run", "other"]).reset_index()
    pairs = pairs.melt(id_vars=["run", "other"], var_name="field")
    parts.append(pairs.assign(table="pairs"))
    agreement = comparison.agreement.rename_axis(["run", "other"]).reset_index()
    parts.append(
        agreement.melt(id_vars=["run", "other"], var_name="field").assign(table="agreement")
    )
    out = pd.concat(parts, ignore_index=True)[["table", "run", "other", "field", "value"]]
    out.insert(0, "measure", str(comparison.measure))
    return out


def _records(comparison: Comparison) -> dict:
    """JSON-ready tables (NaN and infinities as null)."""

    def records(frame: pd.DataFrame) -> list[dict]:
        return json.loads(frame.to_json(orient="records", double_precision=15))

    return {
        "measure": str(comparison.measure),
        "samples": len(comparison.sample_scores),
        "orderings": list(ORDERINGS),
        "scores": records(_ranking_table(comparison).rename_axis("run").reset_index()),
        "tie_var": records(comparison.tie_var.reset_index()),
        "swaps": records(comparison.swaps),
        "swapped_pairs": records(swapped_pairs(comparison)),
        "pairs": records(comparison.pairs.reset_index()),
        "agreement": records(comparison.agreement.reset_index()),
    }


# --------------------------------------------------------------------------- checks


def _one_measure(measure: str | Measure) -> Measure:
    parsed = parse_measures(measure)
    if len(parsed) != 1:
        raise ValueError(f"compare takes one measure, got {[str(m) for m in parsed]}")
    return parsed[0]


def _check_int(name: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
