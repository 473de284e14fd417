"""Systems and rankings: how tie treatment reorders runs, and whether the order means anything.

Every run is scored by one measure under each oblivious tie-break, tie-aware,
and under each of ``samples`` random tie-breaks.  The runs are then ranked
under each of these orderings; the rankings are compared (Kendall's tau-b and
the AP correlation ``tau_AP`` with Urbano & Marrero's treatment of ties); and
every pair of runs gets the probability that one beats the other under random
tie-breaking, next to a paired t-test and a paired randomization test on the
tie-aware per-query values.

A run's score is its mean over its own queries (the qrels queries it
retrieved for), exactly as :func:`tiecore.evaluate` reports it, or with
``complete`` over every qrels query, missing ones scoring 0; paired tests use
the queries both runs have.

Equal scores.  Scores computed along different paths can differ by rounding
noise (``3e-16``) where they are mathematically equal.  Ranks, rank
correlations, swaps and P(a beats b) therefore treat two values as tied when
they are within ``RTOL`` times the largest magnitude compared (sorted values
closer than that to a neighbour form one tie group, with average ranks).

Undefined statistics are NaN in the frames and are printed as ``undefined``
in text, an empty field in csv and ``null`` in json, never as NaN, inf or a
p-value of 0: Kendall's tau and tau_AP when an ordering gives every run the
same score; the t-test and the effect size when the per-query difference does
not vary (sd within ``RTOL`` of the values' magnitude) or fewer than two
queries are shared; the randomization test when no query is shared.

Pairwise work is array operations over all pairs at once: one sign-flip
matrix times the ``queries x runs`` value matrix gives every pair's
randomization statistics, and the t-tests, normal approximations and
P(a beats b) are computed for all pairs together.

For reviewers: a Wilcoxon signed-rank test per pair (scipy's, batched), the
t-test, randomization and Wilcoxon p-values corrected over all pairs (Holm,
Bonferroni or Benjamini-Hochberg), bootstrap intervals of each run's mean
and of each pair's mean difference (one matrix product of resample counts
and values serves every run and pair), Tukey's HSD on request, per-query
help/hurt against a baseline, and in every table the tie noise (the exact
sd that random tie-breaking adds) beside the topic noise (the standard error
from the spread between topics).
"""

from __future__ import annotations

import contextvars
import itertools
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence, Sized
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
import pandas as pd
from scipy import special, stats

from tiecore.engine.budget import check_compare
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import TIEBREAKS, Ranking
from tiecore.errors import InputError, TieCoreWarning
from tiecore.evaluation.core import (
    RunsOrFiles,
    _PartValues,
    as_run_dict,
    merge_parts,
    part_values,
    query_values,
    run_seed,
)
from tiecore.evaluation.parallel import THREADS, map_runs, run_items
from tiecore.io.files import stem
from tiecore.io.writers import json_rows
from tiecore.measures import Measure, parse_measures
from tiecore.measures.registry import refuse_inexact
from tiecore.options import (
    BOOL,
    CI_METHOD,
    COMPARE,
    COMPARE_FORMAT,
    CONFIDENCE,
    CORRECTION,
    POSITIVE,
    RUN_NAME,
    SEED,
    SIGNIFICANCE,
    STATISTICS,
    ZERO_METHOD,
    Options,
    pick,
    validate_params,
)
from tiecore.options import CI_METHODS as CI_METHODS  # re-exported, declared there
from tiecore.options import CORRECTIONS as CORRECTIONS
from tiecore.options import ZERO_METHODS as ZERO_METHODS
from tiecore.spread import query_spread
from tiecore.stats.ranks import RTOL as RTOL  # declared there, with tie_levels
from tiecore.stats.ranks import tie_levels as tie_levels

#: Oblivious tie-break policies with one deterministic order ("random" is the samples).
OBLIVIOUS = tuple(policy for policy in TIEBREAKS if policy != "random")
#: Columns of :attr:`Comparison.scores` and :attr:`Comparison.ranks`.
ORDERINGS = ("aware", *OBLIVIOUS)
#: Which ordering :func:`swapped_pairs` compares.
ORDERING = Options(*ORDERINGS)
#: Name of the random tie-break orderings (one per sample) in the agreement table.
RANDOM = "random"
#: ``within_tie_noise``: ``|mu_A - mu_B| <= NOISE_WIDTH * sqrt(var_A + var_B)``.
NOISE_WIDTH = 2.0
#: Cells of the temporary arrays built at once (resamples x pairs, samples x runs x runs).
CHUNK_CELLS = 1 << 21
#: Bytes the random tie-breaks may take (``samples x (runs + queries)`` doubles).
MEMORY_BUDGET = 1 << 30
#: The smallest p-value reported; a t-distribution tail below it is reported as it.
SMALLEST_P = float(np.finfo(np.float64).tiny)
#: Columns of :attr:`Comparison.pairs`.
PAIR_COLUMNS = (
    "mean_diff", "p_beats_sampled", "p_beats_normal", "tie_noise", "within_tie_noise",
    "t_pvalue", "randomization_pvalue", "randomization_exact", "n_queries", "effect_size",
    "tie_sd", "topic_sd", "wilcoxon_pvalue", "diff_low", "diff_high",
)  # fmt: skip
#: The p-values of :attr:`Comparison.pairs` that get a corrected ``<name>_adj`` column.
CORRECTED = ("t_pvalue", "randomization_pvalue", "wilcoxon_pvalue")
#: Significance level of the verdicts in the text output.
ALPHA = 0.05
#: Key of the bootstrap resamples' generator, beside the seed.
BOOTSTRAP_KEY = 0x426F_6F74

Progress = Callable[[int, int, str], None]


class TooLarge(ValueError):
    """A request that does not fit in memory; the message gives what it needs and what fits."""


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
        Ranks of ``scores`` per column, 1 = best; scores within :data:`RTOL`
        are tied and get their average rank.
    agreement : DataFrame
        Index ``(ordering_a, ordering_b)``; ``kendall_tau`` (tau-b),
        ``tau_ap`` (ordering ``a`` judged against ``b``, :func:`tau_ap`) and
        ``tau_ap_sym`` (:func:`tau_ap_b`, the mean of both directions).  Rows
        with ``random`` hold the mean over the samples where it is defined.
        NaN: undefined (an ordering that ties every run).
    swaps : DataFrame
        Runs ranked differently by ``trec_eval`` and ``aware``: ``run``,
        ``rank_trec_eval``, ``rank_aware``, ``shift = rank_trec_eval -
        rank_aware`` (positive: the run climbs under tie-aware scoring).
    pairs : DataFrame
        Index ``(a, b)`` over ordered pairs of runs; see :func:`compare`.
    per_query : DataFrame
        Tie-aware per-query values: index qid, one column per run (NaN where
        a run has no rows for the query; 0 there with ``complete``).
    tie_var : Series
        Per run: the exact variance of its mean score over random tie-breaks,
        ``sum_q var_q / Q**2`` over its ``Q`` averaged queries (queries break
        their ties independently; :func:`tiecore.spread.query_spread`).
    complete : bool
        Whether every qrels query was averaged (missing ones scoring 0).
    n_resamples : int
        Resample budget of the randomization test.
    per_query_var : DataFrame
        Like ``per_query``: each value's exact variance over random tie-breaks.
    systems : DataFrame
        Per run (:func:`system_table`): ``mean, n_queries``, tie noise
        ``tie_sd`` beside topic noise ``topic_sd``, bootstrap ``ci_low,
        ci_high``.
    correction : str
        The correction of the ``*_adj`` columns of ``pairs`` (:data:`CORRECTIONS`).
    baseline : str or None
        The run of ``help_hurt``.
    help_hurt, help_hurt_queries : DataFrame
        :func:`help_hurt` against ``baseline`` (empty without one).
    tukey : DataFrame or None
        Tukey's HSD per ordered pair (:func:`tukey_hsd`): ``tukey_pvalue,
        tukey_low, tukey_high``; None unless asked for.
    confidence, ci_method, n_bootstrap, zero_method
        The options of the intervals and the Wilcoxon test.
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
    complete: bool = False
    n_resamples: int = 2000
    per_query_var: pd.DataFrame = field(default_factory=pd.DataFrame)
    systems: pd.DataFrame = field(default_factory=pd.DataFrame)
    correction: str = "none"
    baseline: str | None = None
    help_hurt: pd.DataFrame = field(default_factory=pd.DataFrame)
    help_hurt_queries: pd.DataFrame = field(default_factory=pd.DataFrame)
    tukey: pd.DataFrame | None = None
    confidence: float = 0.95
    ci_method: str = "BCa"
    n_bootstrap: int = 2000
    zero_method: str = "wilcox"

    @validate_params(
        {
            "correction": [CORRECTION, None],
            "baseline": [RUN_NAME, None],
            "tukey": [BOOL, None],
        }
    )
    def with_options(
        self,
        *,
        correction: str | None = None,
        baseline: str | None = None,
        tukey: bool | None = None,
    ) -> Comparison:
        """The same comparison with another correction, baseline or Tukey (nothing is rescored).

        ``baseline=""`` drops the baseline; ``tukey=True`` adds Tukey's HSD
        (at :attr:`confidence`) when it is missing, ``False`` drops it;
        ``None`` keeps what is set.

        Raises
        ------
        InputError
            An unknown correction, or a baseline that is not one of the runs.
        """
        correction = self.correction if correction is None else correction
        baseline = self.baseline if baseline is None else (baseline or None)
        pairs = self.pairs.drop(columns=[c for c in self.pairs if c.endswith("_adj")])
        names = self.per_query.columns
        adjusted = _adjusted(pairs, names, correction)
        out = replace(self, pairs=adjusted, correction=correction, baseline=baseline)
        if tukey is False:
            out.tukey = None
        elif tukey and self.tukey is None:
            out.tukey = _tukey(self.per_query.to_numpy(np.float64), names, self.confidence)
        if baseline is None:
            out.help_hurt, out.help_hurt_queries = pd.DataFrame(), pd.DataFrame()
        else:
            out.help_hurt, out.help_hurt_queries = help_hurt(out, baseline)
        return out

    @validate_params({"alpha": SIGNIFICANCE})
    def significant(self, alpha: float = ALPHA, test: str = "t_pvalue") -> pd.DataFrame:
        """The unordered pairs (``a`` ahead) whose corrected ``test`` p-value is below ``alpha``.

        ``test``: a p-value column of ``pairs`` (its ``_adj`` column is used)
        or ``tukey_pvalue``.
        """
        column = test if test == "tukey_pvalue" else f"{test}_adj"
        table = self.pairs if test != "tukey_pvalue" else self.tukey
        if table is None or column not in table:
            raise InputError(
                "test",
                None,
                f"{test!r} is not a p-value of this comparison",
                "one of " + ", ".join(self.p_value_columns()),
            )
        upper = table[self.pairs["mean_diff"].reindex(table.index) > 0]
        return upper[upper[column] < alpha]

    @validate_params({"alpha": SIGNIFICANCE})
    def verdict(self, alpha: float = ALPHA) -> str:
        """One sentence: how many pairs each test finds significant at ``alpha`` after the
        correction, or that none does."""
        return _verdict(self, alpha)

    def p_value_columns(self) -> list[str]:
        """The tests whose p-values this comparison holds."""
        return [*CORRECTED, *(["tukey_pvalue"] if self.tukey is not None else [])]


@validate_params(COMPARE)
def compare(
    runs: RunsOrFiles,
    qrels: pd.DataFrame,
    measure: str | Measure,
    *,
    samples: int = 200,
    seed: int = 0,
    rel_level: int = 1,
    depth: int | None = None,
    n_resamples: int = 2000,
    complete: bool = False,
    progress: Progress | None = None,
    client: object | None = None,
    correction: str = "holm",
    baseline: str | None = None,
    confidence: float = 0.95,
    ci_method: str = "BCa",
    n_bootstrap: int = 2000,
    zero_method: str = "wilcox",
    tukey: bool = False,
) -> Comparison:
    """Rank runs by ``measure`` under every tie treatment and compare them pairwise.

    Parameters
    ----------
    runs : mapping of name to DataFrame, or run files
        At least two runs (columns ``qid, docno, score``), or LETOR feature
        columns from :func:`tiecore.read_letor`; or what :func:`tiecore.evaluate`
        takes (paths, a generator, ...): files are read one at a time and named as
        :func:`tiecore.read_runs` names them.  Without a ``client``, up to
        :data:`tiecore.evaluation.parallel.THREADS` runs are scored at once, on threads (the
        same numbers; runs' warnings come once all are scored).
    qrels : DataFrame
        Columns ``qid, docno, level``.
    measure : str or Measure
        One measure, such as ``"AP"`` or ``"nDCG@10"``.
    samples, seed : int
        Random tie-breaks per run and their seed; each run draws from
        :func:`tiecore.evaluation.core.run_seed`, so its sample mean is the value of
        ``evaluate(..., ties="sampled")`` with the same arguments.  Samples
        are drawn once per run and shared by all its pairs.
    rel_level, depth, complete
        As in :func:`tiecore.evaluate` (``complete``: average over every
        qrels query, missing ones scoring 0, trec_eval ``-c``).
    n_resamples : int
        Sign-flip budget of the paired randomization test.  When ``2**n <=
        n_resamples`` for the ``n`` shared queries every sign flip is
        enumerated (exact p); otherwise ``n_resamples`` random sign vectors,
        drawn from ``seed`` with one column per qrels query and shared by all
        pairs, give ``p = (b + 1) / (n_resamples + 1)``.  Either way a pair's
        p-value depends on the seed, the qrels and its own values only, and
        the work runs in chunks of bounded memory.
    progress : callable, optional
        Called as ``progress(done, total, label)`` after each run (label: its
        name), after the pairwise tests (``"pairs"``) and after the rank
        correlations (``"agreement"``).
    client : dask.distributed.Client, optional
        Scores the runs on a cluster (:func:`tiecore.evaluation.parallel.map_runs`), a big
        run in query partitions as :func:`tiecore.evaluate` splits it; the
        result is the local one, bit for bit.
    correction : {"holm", "none", "bonferroni", "bh"}
        Multiple-comparison correction of the pairs' p-values
        (:func:`adjust_pvalues`), over the ``R (R - 1) / 2`` unordered pairs
        of each test separately; the ``<test>_adj`` columns.
    baseline : str, optional
        A run; :attr:`Comparison.help_hurt` counts the queries each other run
        helps and hurts against it (:func:`help_hurt`).
    confidence, ci_method, n_bootstrap
        Level, method (:data:`CI_METHODS`) and resamples of the bootstrap
        intervals of each run's mean and of each pair's mean difference
        (:func:`bootstrap_intervals`, seeded by ``seed``), and the level of
        Tukey's intervals.
    zero_method : {"wilcox", "pratt", "zsplit"}
        Zero differences in the Wilcoxon test (:func:`wilcoxon_pvalues`).
    tukey : bool
        Also Tukey's HSD over the runs' per-query values (:func:`tukey_hsd`;
        scipy's studentized range takes seconds for 20 runs).

    Returns
    -------
    Comparison
        ``pairs`` columns, for runs ``a`` and ``b`` with tie-aware means
        ``mu`` and exact tie-breaking variances ``var`` of their means
        (``Comparison.tie_var``):

        - ``mean_diff = mu_a - mu_b`` (0 when within :data:`RTOL`);
        - ``p_beats_sampled``: P(a random tie-break of ``a`` scores above an
          independent one of ``b``), over all sample pairs, equality counting
          half; so ``p(a, b) + p(b, a) = 1``;
        - ``p_beats_normal = Phi(mean_diff / sqrt(var_a + var_b))`` (a step
          1, 1/2, 0 when neither run has tie noise);
        - ``tie_noise = 2 sqrt(var_a + var_b)`` and ``within_tie_noise =
          |mean_diff| <= tie_noise``;
        - over the per-query tie-aware differences ``d`` of the ``n_queries``
          queries both runs have: ``t_pvalue`` (paired t-test, two-sided, as
          :func:`scipy.stats.ttest_rel`), ``effect_size = mean(d) / sd(d)``
          (both undefined when ``d`` does not vary or ``n < 2``),
          ``randomization_pvalue`` (sign-flip test of the mean, two-sided:
          the share of sign vectors ``s`` with ``|sum s d| >= |sum d|``) and
          ``randomization_exact`` (every sign flip enumerated).
        - ``tie_sd = sqrt(var_a + var_b)`` (the tie noise is twice it) beside
          ``topic_sd = sd(d) / sqrt(n)`` (NaN when ``n < 2``);
        - ``wilcoxon_pvalue``: :func:`wilcoxon_pvalues` of ``d``;
        - ``diff_low, diff_high``: the bootstrap interval of ``mean(d)``;
        - ``<test>_adj``: the corrected p-values of :data:`CORRECTED`.

    Raises
    ------
    TooLarge
        When ``samples x (runs + queries)`` doubles exceed
        :data:`MEMORY_BUDGET`; the message gives the memory needed and the
        largest ``samples`` that fits.
    InputError
        An unknown ``correction``, ``ci_method`` or ``zero_method``, a
        ``confidence`` outside (0, 1), or a ``baseline`` that is not a run.
    """
    measure = _one_measure(measure)
    in_memory = (
        isinstance(runs, pd.DataFrame)
        or (isinstance(runs, Mapping) and all(isinstance(r, pd.DataFrame) for r in runs.values()))
        or (isinstance(runs, Sized) and len(runs) == 0)  # refused as evaluate refuses it
    )
    # frames are checked up front; files are read one at a time as they are scored
    runs = as_run_dict(runs) if in_memory else run_items(runs)
    count = len(runs) if isinstance(runs, Sized) else None
    if count is not None:  # (a file's name may still change, to its stem: both may do here)
        known = list(runs) if in_memory else [i.name for i in runs]
        stems = [] if in_memory else [stem(i.display) for i in runs if i.file]
        _check_runs(count, known, baseline if baseline not in stems else None)
    judgments = Judgments.from_qrels(qrels, rel_level)
    if count is not None:
        check_memory(samples, count, len(judgments.qids))
        check_compare(n_resamples, n_bootstrap, count, len(judgments.qids))  # tiecore.engine.budget

    def step(done: int, runs_total: int | None, label: str) -> None:
        if progress is not None:  # the runs, then the pairs and the agreement
            progress(done, None if runs_total is None else runs_total + 2, label)

    work = partial(
        score_run,
        judgments=judgments,
        measure=measure,
        samples=samples,
        seed=seed,
        depth=depth,
        complete=complete,
    )
    bootstrap = {"confidence": confidence, "ci_method": ci_method, "n_bootstrap": n_bootstrap}
    options = {**bootstrap, "zero_method": zero_method}
    merge = partial(merge_scores, samples=samples, complete=complete)
    found = map_runs(work, runs, client=client, progress=step, merge=merge, threads=THREADS)
    names = pd.Index([f.name for f in found], name="run")  # files' names are final now
    _check_runs(len(found), list(names), baseline)
    check_compare(n_resamples, n_bootstrap, len(found), len(judgments.qids))
    scores = pd.DataFrame(
        {o: [f.scores[o] for f in found] for o in ORDERINGS}, index=names, dtype=np.float64
    )
    sample_scores = pd.DataFrame(np.column_stack([f.samples for f in found]), columns=names)
    sample_scores.index.name = "sample"
    chosen = np.array([f.chosen for f in found])  # (runs, queries)
    covered = chosen.any(axis=0)
    warn_unequal_queries(names, chosen, stacklevel=3)  # compare's caller
    values = np.where(chosen, np.array([f.aware for f in found]), np.nan)[:, covered].T
    per_query = pd.DataFrame(
        values, index=pd.Index(judgments.qids[covered], name="qid"), columns=names
    )
    variances = np.where(chosen, np.array([f.var for f in found]), np.nan)[:, covered].T
    per_query_var = pd.DataFrame(variances, index=per_query.index, columns=names)
    counts = chosen.sum(axis=1)
    tie_var = pd.Series(
        [
            float(np.where(c, f.var, 0.0).sum()) / max(n, 1) ** 2
            for f, c, n in zip(found, chosen, counts, strict=True)
        ],
        index=names,
        name="tie_var",
    )
    ranks = scores.apply(lambda column: pd.Series(_ranks(column.to_numpy()), index=names))
    pairs = _pairs(
        scores["aware"].to_numpy(),
        tie_var.to_numpy(),
        sample_scores.to_numpy(),
        values,
        np.flatnonzero(covered),
        len(judgments.qids),
        names,
        seed,
        n_resamples,
        options,
    )
    systems = system_table(per_query, tie_var, seed=seed, **bootstrap)
    step(len(found) + 1, len(found), "pairs")
    agreement = _agreement(scores, sample_scores)
    step(len(found) + 2, len(found), "agreement")
    comparison = Comparison(
        measure=measure,
        scores=scores,
        sample_scores=sample_scores,
        ranks=ranks,
        agreement=agreement,
        swaps=_swaps(ranks),
        pairs=pairs,
        per_query=per_query,
        tie_var=tie_var,
        complete=complete,
        n_resamples=n_resamples,
        per_query_var=per_query_var,
        systems=systems,
        tukey=_tukey(values, names, confidence) if tukey else None,
        confidence=confidence,
        ci_method=ci_method,
        n_bootstrap=n_bootstrap,
        zero_method=zero_method,
    )
    return comparison.with_options(correction=correction, baseline=baseline or "")


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


def _tukey(values: np.ndarray, names: pd.Index, confidence: float) -> pd.DataFrame:
    """:func:`tukey_hsd` of each run's values over its own queries, per ordered pair."""
    found = tukey_hsd([column[~np.isnan(column)] for column in values.T], confidence)
    a, b = np.nonzero(~np.eye(len(names), dtype=bool))
    return pd.DataFrame(
        {f"tukey_{k}": v[a, b] for k, v in found.items()},
        index=pd.MultiIndex.from_arrays([names[a], names[b]], names=["a", "b"]),
    )


def _adjusted(pairs: pd.DataFrame, names: pd.Index, correction: str) -> pd.DataFrame:
    """``pairs`` with a ``<test>_adj`` column per :data:`CORRECTED` test, corrected over the
    unordered pairs (each counted once; both orders get the same value)."""
    out = pairs.copy()
    a = names.get_indexer(pairs.index.get_level_values("a"))
    b = names.get_indexer(pairs.index.get_level_values("b"))
    upper = a < b
    key = np.minimum(a, b) * len(names) + np.maximum(a, b)
    for column in CORRECTED:
        table = np.full(len(names) ** 2, np.nan)
        table[key[upper]] = adjust_pvalues(pairs[column].to_numpy()[upper], correction)
        out[f"{column}_adj"] = table[key]
    return out


def check_memory(samples: int, n_runs: int, n_queries: int, budget: int = MEMORY_BUDGET) -> None:
    """Refuse up front when the random tie-breaks would not fit in ``budget`` bytes.

    The sampled scores take ``samples x runs`` doubles and one run's draws
    ``samples x queries``; everything else compare builds is either smaller
    or made in chunks of :data:`CHUNK_CELLS` cells.

    >>> check_memory(200, 143, 250)
    >>> check_memory(10**8, 3, 50)
    Traceback (most recent call last):
    ...
    tiecore.compare.TooLarge: 100000000 samples of 3 runs on 50 queries need 39.5 GiB \
(samples x (runs + queries) x 8 bytes); at most 2532409 samples fit in 1.0 GiB
    """
    need = samples * (n_runs + n_queries) * 8
    if need > budget:
        fits = budget // ((n_runs + n_queries) * 8)
        raise TooLarge(
            f"{samples} samples of {n_runs} runs on {n_queries} queries need "
            f"{need / 2**30:.1f} GiB (samples x (runs + queries) x 8 bytes); "
            f"at most {fits} samples fit in {budget / 2**30:.1f} GiB"
        )


@dataclass
class RunScores:
    """One run's scores under every ordering (what :func:`score_run` returns).

    ``aware``, ``var`` and ``chosen`` are per qrels query (judgments order):
    the tie-aware value, its exact variance over random tie-breaks, and
    whether the query counts in the run's mean.
    """

    name: str
    scores: dict[str, float]
    samples: np.ndarray  # (samples,) mean over the chosen queries
    aware: np.ndarray
    var: np.ndarray
    chosen: np.ndarray


def score_run(
    name: str,
    run: pd.DataFrame,
    *,
    judgments: Judgments,
    measure: Measure,
    samples: int,
    seed: int,
    depth: int | None,
    complete: bool = False,
) -> RunScores | _PartValues:
    """One run under every ordering; aware, oblivious and sampled exactly as :func:`evaluate`.

    A top-level function of ``(name, run)`` plus keywords, so that
    ``functools.partial`` of it pickles and can be sent to other processes.
    Queries missing from the run score 0 with ``complete`` (and vary not).  A
    query partition of a run (``run.attrs["part"]``, on a cluster) gives its
    per-query arrays, which :func:`merge_scores` puts together.
    """
    compute = partial(
        _score_arrays, judgments=judgments, measure=measure, samples=samples, seed=seed, depth=depth
    )
    if run.attrs.get("part") is not None:
        return part_values(name, run, judgments, compute)
    base, arrays = compute(name, run)
    return _run_scores(name, base.counts > 0, arrays, complete)


def merge_scores(
    name: str, parts: list[_PartValues], *, samples: int, complete: bool = False
) -> RunScores:
    """:func:`score_run` of a whole run from its query partitions' per-query arrays."""
    shapes = dict.fromkeys(("aware", "var", *OBLIVIOUS), ()) | {"samples": (samples,)}
    return _run_scores(name, *merge_parts(name, parts, shapes), complete)


def _score_arrays(
    name: str,
    run: pd.DataFrame,
    *,
    judgments: Judgments,
    measure: Measure,
    samples: int,
    seed: int,
    depth: int | None,
) -> tuple[Ranking, dict[str, np.ndarray]]:
    """The run's ranking and per-query arrays (the judgments' order): ``aware``, ``var``,
    one per oblivious tie-break, and ``samples`` ``(samples, queries)``."""
    rng = run_seed(seed, name)
    base = Ranking.build(run, judgments, tiebreak="file_order", seed=rng, name=name)
    spread = query_spread(base, judgments, [measure], depth=depth)[measure]
    arrays = {"aware": spread["value"].to_numpy(), "var": spread["var"].to_numpy()}
    arrays["samples"] = query_values(
        base, judgments, [measure], ties="sampled", depth=depth, samples=samples, rng=rng
    )[measure]
    for tiebreak in OBLIVIOUS:
        if tiebreak == "trec_eval_double" and not base.float32_merges:  # trec_eval's order
            arrays[tiebreak] = arrays["trec_eval"]
            continue
        ranking = base if tiebreak == "file_order" else base.retie(tiebreak)
        found = query_values(ranking, judgments, [measure], ties="oblivious", depth=depth)
        arrays[tiebreak] = found[measure]
    return base, arrays


def _run_scores(
    name: str, present: np.ndarray, arrays: dict[str, np.ndarray], complete: bool
) -> RunScores:
    """Means over the run's queries (every qrels query with ``complete``) of its arrays."""
    chosen = np.ones(len(present), bool) if complete else present
    scores = {key: _mean(arrays[key][chosen]) for key in ("aware", *OBLIVIOUS)}
    drawn = arrays["samples"]
    means = drawn[:, chosen].mean(axis=1) if chosen.any() else np.zeros(len(drawn))
    return RunScores(
        name=name,
        scores=scores,
        samples=means,
        aware=arrays["aware"],
        var=arrays["var"],
        chosen=chosen,
    )


def _mean(values: np.ndarray) -> float:
    """Mean of a run's per-query values; 0 without queries (as :func:`evaluate`)."""
    return float(values.mean()) if values.size else 0.0


# --------------------------------------------------------------------------- ties and ranks


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks along the last axis, 1 = highest, ties (within :data:`RTOL`) averaged."""
    return stats.rankdata(-tie_levels(values), method="average", axis=-1)


# --------------------------------------------------------------------------- rank correlation


def kendall_tau(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of score vectors along the last axis (as :func:`scipy.stats.kendalltau`).

    ``tau_b = (concordant - discordant) / sqrt(pairs untied in x * pairs untied
    in y)``, scores within :data:`RTOL` counting as tied.  Undefined (NaN)
    when either vector ties every item.

    >>> float(kendall_tau(np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])))
    -1.0
    """
    return _correlations(_above(x), _above(y))[0]


def tau_ap(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """AP correlation of the ranking by scores ``x`` judged against the ranking by ``y``.

    Yilmaz, Aslam & Robertson (SIGIR 2008), higher scores ranked first, with
    Urbano & Marrero's treatment of ties (ICTIR 2017, one direction of their
    ``tau_AP_b``)::

        tau_AP = 2 / |I| * sum_{i in I} C(i) / A(i) - 1

    where ``A(i)`` counts the items strictly above item ``i`` in ``x``, ``I``
    the items with ``A(i) > 0`` (all but the top tie group of ``x``), and
    ``C(i)`` the items strictly above ``i`` in both ``x`` and ``y``.  Without
    ties this is the original ``2 / (N - 1) sum_{i=2..N} C(i) / (i - 1) - 1``;
    a ranking judged against itself scores exactly 1, ties or not.  Scores
    within :data:`RTOL` are tied.  Undefined (NaN) when ``x`` or ``y`` ties
    every item.  Works along the last axis.

    >>> float(tau_ap(np.array([3.0, 2.0, 2.0, 1.0]), np.array([3.0, 2.0, 2.0, 1.0])))
    1.0
    >>> float(tau_ap(np.array([3.0, 2.0, 1.0]), np.array([3.0, 1.0, 2.0])))
    0.5
    """
    if np.shape(x)[-1] < 2:
        raise ValueError("tau_ap needs at least two items")
    return _correlations(_above(x), _above(y))[1]


def tau_ap_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Urbano & Marrero's symmetric ``tau_AP_b``: the mean of :func:`tau_ap` both ways.

    >>> float(tau_ap_b(np.array([3.0, 2.0, 1.0]), np.array([2.0, 2.0, 1.0])))
    0.5
    """
    _, forward, backward = _correlations(_above(x), _above(y))
    return (forward + backward) / 2.0


def _above(x: np.ndarray) -> np.ndarray:
    """``[..., i, j]``: item ``j`` strictly above item ``i`` (tie levels, :func:`tie_levels`)."""
    level = tie_levels(x)
    return level[..., None, :] > level[..., :, None]


def _correlations(ax: np.ndarray, ay: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kendall's tau-b, tau_AP(x vs y) and tau_AP(y vs x) from two :func:`_above` arrays.

    With ``A`` the above matrices: concordant pairs ``sum A_x A_y``,
    discordant ``sum A_x A_y^T``, untied pairs ``sum A``; ``C(i)`` of both
    tau_AP directions is the same row sum of ``A_x A_y``.  Broadcasts.
    """
    both = np.logical_and(ax, ay).sum(axis=-1)  # (..., n): above i in both
    crossed = np.logical_and(ax, np.swapaxes(ay, -1, -2)).sum(axis=(-1, -2))
    above_x, above_y = ax.sum(axis=-1), ay.sum(axis=-1)
    untied_x, untied_y = above_x.sum(axis=-1), above_y.sum(axis=-1)
    untied = untied_x * untied_y
    with np.errstate(divide="ignore", invalid="ignore"):
        kendall = np.where(untied > 0, (both.sum(axis=-1) - crossed) / np.sqrt(untied), np.nan)
    defined = untied > 0
    return kendall, _tau_ap_of(both, above_x, defined), _tau_ap_of(both, above_y, defined)


def _tau_ap_of(correct: np.ndarray, above: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """``2 / |I| sum_{i in I} C(i) / A(i) - 1`` over ``I = {i : A(i) > 0}``; NaN where undefined."""
    correct, above = np.broadcast_arrays(correct, above)
    ratio = np.divide(correct, above, out=np.zeros(above.shape), where=above > 0)
    counted = np.count_nonzero(above, axis=-1)
    return np.where(defined, 2.0 * ratio.sum(axis=-1) / np.maximum(counted, 1) - 1.0, np.nan)


def _agreement(scores: pd.DataFrame, sample_scores: pd.DataFrame) -> pd.DataFrame:
    """Kendall's tau and tau_AP between every ordered pair of orderings (and the samples).

    The samples go in batches whose ``(samples, runs, runs)`` arrays stay
    within :data:`CHUNK_CELLS` cells; each batch serves every ordering.
    """
    above = {o: _above(scores[o].to_numpy()) for o in ORDERINGS}
    rows = {}
    for a in ORDERINGS:
        for b in ORDERINGS:
            if a != b:
                tau, forward, backward = (float(v) for v in _correlations(above[a], above[b]))
                rows[a, b] = (tau, forward, (forward + backward) / 2)
    sampled = sample_scores[scores.index].to_numpy()
    batch = max(1, CHUNK_CELLS // len(scores) ** 2)
    found = {o: ([], [], []) for o in ORDERINGS}
    for start in range(0, len(sampled), batch):
        drawn = _above(sampled[start : start + batch])
        for o in ORDERINGS:
            for column, values in zip(found[o], _correlations(above[o], drawn), strict=True):
                column.append(values)
    for a in ORDERINGS:
        tau, forward, backward = (np.concatenate(column) for column in found[a])
        both = (forward + backward) / 2
        rows[a, RANDOM] = (_defined_mean(tau), _defined_mean(forward), _defined_mean(both))
        rows[RANDOM, a] = (_defined_mean(tau), _defined_mean(backward), _defined_mean(both))
    frame = pd.DataFrame.from_dict(
        rows, orient="index", columns=["kendall_tau", "tau_ap", "tau_ap_sym"]
    )
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["ordering_a", "ordering_b"])
    return frame


def _defined_mean(values: np.ndarray) -> float:
    """Mean over the defined (non-NaN) values; NaN when none is."""
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


@validate_params({"first": ORDERING, "second": ORDERING})
def swapped_pairs(
    comparison: Comparison, first: str = "trec_eval", second: str = "aware"
) -> pd.DataFrame:
    """Pairs of runs in opposite order under two orderings (a tie in one of them counts too).

    Each row names as ``a`` the run ahead under ``first``, or, for a pair that
    ``first`` ties, the run ahead under ``second``; ties are within
    :data:`RTOL`.  Columns: both scores under each ordering, the pair's
    ``p_beats_sampled`` and ``within_tie_noise``.
    """
    scores = comparison.scores
    level1 = tie_levels(scores[first].to_numpy())
    level2 = tie_levels(scores[second].to_numpy())
    a, b = np.triu_indices(len(scores), k=1)
    d1, d2 = np.sign(level1[a] - level1[b]), np.sign(level2[a] - level2[b])
    flip = (d1 != d2) & ((d1 != 0) | (d2 != 0))
    # a is ahead under first; where first ties them, a is ahead under second
    keep = np.where(d1 != 0, d1 > 0, d2 > 0)
    ahead = np.where(keep, a, b)[flip]
    behind = np.where(keep, b, a)[flip]
    names = scores.index.to_numpy()
    where = comparison.pairs.index.get_indexer(
        pd.MultiIndex.from_arrays([names[ahead], names[behind]])
    )
    pairs = comparison.pairs.iloc[where]
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


def p_beats(first: np.ndarray, second: np.ndarray, rtol: float = RTOL) -> float:
    """P(X > Y) + P(X = Y) / 2 for X, Y drawn independently from two samples.

    Values within ``rtol`` times the largest magnitude count as equal.

    >>> p_beats(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    0.875
    """
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    if (
        first.size == 0
        or second.size == 0
        or not (np.isfinite(first).all() and np.isfinite(second).all())
    ):
        return float("nan")  # undefined: no sample, or a NaN / inf one
    tol = rtol * max(float(np.abs(first).max()), float(np.abs(second).max()))
    ordered = np.sort(second)
    below = np.searchsorted(ordered, first - tol, side="left").sum()
    at_most = np.searchsorted(ordered, first + tol, side="right").sum()
    return float((below + at_most) / (2.0 * first.size * second.size))


def _p_beats_all(samples: np.ndarray) -> np.ndarray:
    """``[a, b]``: :func:`p_beats` of the sample columns ``a`` and ``b``, for all pairs.

    One sort per run, then per run ``b`` one vectorized search of every
    sample of every run (in row chunks of at most :data:`CHUNK_CELLS` cells).
    """
    size, n_runs = samples.shape
    tol = RTOL * float(np.abs(samples).max(initial=0.0))
    ordered = np.sort(samples, axis=0)
    counts = np.zeros((n_runs, n_runs))
    rows = max(1, CHUNK_CELLS // max(n_runs, 1))
    for start in range(0, size, rows):
        chunk = samples[start : start + rows]
        low, high = (chunk - tol).ravel(), (chunk + tol).ravel()
        for b in range(n_runs):
            below = np.searchsorted(ordered[:, b], low, side="left")
            at_most = np.searchsorted(ordered[:, b], high, side="right")
            counts[:, b] += (below + at_most).reshape(chunk.shape).sum(axis=0)
    return counts / (2.0 * size * size)


def _pairs(
    mu: np.ndarray,
    tie_var: np.ndarray,
    samples: np.ndarray,
    values: np.ndarray,
    columns: np.ndarray,
    n_columns: int,
    names: pd.Index,
    seed: int,
    n_resamples: int,
    options: Mapping[str, object] | None = None,
) -> pd.DataFrame:
    """Every ordered pair of runs; the symmetric statistics computed once per unordered pair.

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
    sampled = _p_beats_all(samples)[i, j]
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


# --------------------------------------------------------------------------- reviewer statistics


@validate_params({"method": CORRECTION})
def adjust_pvalues(pvalues: np.ndarray, method: str = "holm") -> np.ndarray:
    """p-values corrected for multiple comparisons; NaN (undefined) ones are left out.

    Over the ``m`` defined p-values sorted ascending, ``p_(1) <= ... <= p_(m)``:

    - ``bonferroni``: ``min(1, m p)``;
    - ``holm`` (step-down): ``max_{k <= i} min(1, (m - k + 1) p_(k))``;
    - ``bh`` (Benjamini-Hochberg, the false discovery rate, as
      :func:`scipy.stats.false_discovery_control`): ``min_{k >= i} min(1, m p_(k) / k)``;
    - ``none``: unchanged.

    >>> adjust_pvalues(np.array([0.01, 0.04, np.nan, 0.03]), "holm").round(6).tolist()
    [0.03, 0.06, nan, 0.06]
    >>> adjust_pvalues(np.array([0.01, 0.04, 0.03]), "bh").round(6).tolist()
    [0.03, 0.04, 0.04]
    """
    p = np.asarray(pvalues, np.float64)
    out = np.full(p.shape, np.nan)
    defined = ~np.isnan(p)
    found = p[defined]
    if ((found < 0) | (found > 1)).any():  # inf too: no p-value, so no corrected one
        bad = found[(found < 0) | (found > 1)][0]
        raise InputError(
            "pvalues", None, f"{float(bad)!r} is not a p-value", "numbers in [0, 1] or NaN"
        )
    m = found.size
    if method == "none" or m == 0:
        out[defined] = found
        return out
    if method == "bonferroni":
        out[defined] = np.minimum(1.0, m * found)
        return out
    order = np.argsort(found, kind="stable")
    ordered = found[order]
    k = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - k + 1) * ordered))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, m * ordered / k)[::-1])[::-1]
    result = np.empty(m)
    result[order] = adjusted
    out[defined] = result
    return out


def _snap(d: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``d`` with magnitudes within ``RTOL * scale`` of a smaller one in the column made equal.

    Each column's sorted ``|d|`` splits into groups where consecutive values
    are closer than ``RTOL * scale``; every member takes its group's first
    (smallest) magnitude and keeps its sign, so rounding noise neither breaks
    a tie of ranks nor hides a zero.
    """
    magnitude = np.abs(d)
    order = np.argsort(magnitude, axis=0, kind="stable")
    ordered = np.take_along_axis(magnitude, order, axis=0)
    start = np.ones(ordered.shape, bool)
    start[1:] = np.diff(ordered, axis=0) > RTOL * scale
    first = np.maximum.accumulate(np.where(start, np.arange(len(d))[:, None], 0), axis=0)
    snapped = np.empty_like(magnitude)
    np.put_along_axis(snapped, order, np.take_along_axis(ordered, first, axis=0), axis=0)
    return np.sign(d) * snapped


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


@validate_params({"zero_method": ZERO_METHOD})
def wilcoxon_pvalues(
    d: np.ndarray, zero_method: str = "wilcox", scale: np.ndarray | None = None
) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p-value of each column of ``d`` (``queries x pairs``).

    Each column gets what :func:`scipy.stats.wilcoxon` (``method="auto"``)
    gives that column alone: the exact null distribution when ``n <= 50`` and
    no difference is zero or tied in magnitude; else an exact enumeration of
    every sign flip (a permutation test, :func:`_wilcoxon_flips`) when ``n <=
    13``; else the normal approximation.  scipy decides that once per call,
    so the columns are grouped by the choice and each group is one call along
    ``axis=0``.
    Differences within ``RTOL * scale`` (default: the column's largest
    ``|d|``) of 0 are zero and magnitudes that close are tied
    (:func:`_snap`).  NaN (undefined) when no difference is nonzero, or a
    column holds NaN or inf (as scipy's ``nan_policy="propagate"``); never
    below :data:`SMALLEST_P`.  A 1-D ``d`` is one column (one sample).

    >>> wilcoxon_pvalues(np.array([[0.5, 0.0], [0.25, 0.0], [0.125, 0.0]])).tolist()
    [0.25, nan]
    >>> wilcoxon_pvalues(np.array([0.5, 0.25, 0.125])).tolist()
    [0.25]
    """
    d = np.array(d, np.float64)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2:
        raise ValueError(f"d must be 1-D or 2-D (queries x pairs), got {d.ndim}-D")
    n, width = d.shape
    out = np.full(width, np.nan)
    if n == 0 or width == 0:
        return out
    finite = np.isfinite(d).all(axis=0)
    if not finite.all():  # undefined columns: computed as all-zero (NaN), so set back
        out[finite] = wilcoxon_pvalues(
            d[:, finite], zero_method, None if scale is None else np.asarray(scale)[finite]
        )
        return out
    if scale is None:
        scale = np.abs(d).max(axis=0)
    scale = np.broadcast_to(np.asarray(scale, np.float64), (width,))
    d[np.abs(d) <= RTOL * scale] = 0.0
    d = _snap(d, scale)
    zeros = d == 0
    ordered = np.sort(np.abs(d), axis=0)
    tied = ((np.diff(ordered, axis=0) == 0) & (ordered[1:] > 0)).any(axis=0)
    plain = ~(tied | zeros.any(axis=0))
    defined = ~zeros.all(axis=0)
    if n > 50:
        kinds = [("asymptotic", defined)]
    else:
        kinds = [
            ("exact", defined & plain),
            ("asymptotic" if n > 13 else "flips", defined & ~plain),
        ]
    for method, chosen in kinds:
        if not chosen.any():
            continue
        if method == "flips":
            out[chosen] = _wilcoxon_flips(d[:, chosen], zero_method)
            continue
        with np.errstate(all="ignore"):
            found = stats.wilcoxon(d[:, chosen], zero_method=zero_method, method=method, axis=0)
        out[chosen] = np.maximum(np.atleast_1d(found.pvalue), SMALLEST_P)
    return out


def _wilcoxon_flips(d: np.ndarray, zero_method: str) -> np.ndarray:
    """Two-sided p of the signed-rank sum ``W+`` over all ``2**n`` sign flips, per column.

    What ``scipy.stats.wilcoxon(..., method=PermutationMethod())`` enumerates
    for ``n <= 13``, as one product: with ``b`` the rows of flip bits, ``W+
    = sum r [d > 0] + b @ (r ([d < 0] - [d > 0]))`` (+ half the zeros' ranks
    for ``zsplit``), where ``r`` are the average ranks of ``|d|`` (zeros
    unranked for ``wilcox``).  ``p = min(1, 2 min(P(W+ <= w), P(W+ >= w)))``;
    rank sums are multiples of 1/2, so they compare exactly.
    """
    n = len(d)
    zeros = d == 0
    magnitude = np.where(zeros, np.inf, np.abs(d)) if zero_method == "wilcox" else np.abs(d)
    ranks = stats.rankdata(magnitude, axis=0)
    if zero_method == "wilcox":
        ranks[zeros] = 0.0
    positive, negative = ranks * (d > 0), ranks * (d < 0)
    base = positive.sum(axis=0)
    if zero_method == "zsplit":
        base = base + (ranks * zeros).sum(axis=0) / 2.0
    bits = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
    out = np.empty(d.shape[1])
    step = max(1, CHUNK_CELLS // 2**n)
    for start in range(0, d.shape[1], step):
        part = slice(start, start + step)
        null = base[part] + bits @ (negative[:, part] - positive[:, part])
        observed = base[part]
        below = np.count_nonzero(null <= observed + 0.25, axis=0)
        above = np.count_nonzero(null >= observed - 0.25, axis=0)
        out[part] = np.minimum(1.0, 2.0 * np.minimum(below, above) / 2**n)
    return out


@validate_params({"n_resamples": POSITIVE, "seed": SEED})
def resample_counts(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """``(n_resamples, n)``: how often each of ``n`` items is drawn by each bootstrap resample.

    Row ``r`` counts the indices of row ``r`` of
    ``default_rng([seed, BOOTSTRAP_KEY]).integers(0, n, (n_resamples, n))``,
    the resamples :func:`scipy.stats.bootstrap` draws from that generator.
    """
    rng = np.random.default_rng([seed, BOOTSTRAP_KEY])
    counts = np.zeros((n_resamples, n))
    step = max(1, CHUNK_CELLS // max(n, 1))
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        drawn = rng.integers(0, n, (rows, n))
        flat = (np.arange(rows)[:, None] * n + drawn).ravel()
        counts[start : start + rows] = np.bincount(flat, minlength=rows * n).reshape(rows, n)
    return counts


@validate_params(
    {"confidence": CONFIDENCE, "method": CI_METHOD, "n_resamples": POSITIVE, "seed": SEED}
)
def bootstrap_intervals(
    x: np.ndarray,
    i: np.ndarray | None = None,
    j: np.ndarray | None = None,
    *,
    confidence: float = 0.95,
    method: str = "BCa",
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap confidence intervals of column means of ``x`` or of paired differences.

    ``x`` is ``(n, columns)`` without NaN.  Without ``i, j`` the statistic
    of column ``c`` is ``mean(x[:, c])``; with them, pair ``k`` is
    ``mean(x[:, i[k]] - x[:, j[k]])``.  The result equals
    :func:`scipy.stats.bootstrap` of that statistic with ``method``,
    ``confidence_level=confidence``, ``n_resamples`` and ``rng =
    default_rng([seed, BOOTSTRAP_KEY])``, but the mean is linear: one matrix
    product of the :func:`resample_counts` with ``x`` gives every column's
    bootstrap means, a pair's are a difference of two columns, and the
    jackknife means are ``(sum - x_q) / (n - 1)``; so all pairs cost array
    operations on ``resamples x pairs``.  Bootstrap means within ``RTOL`` of
    the observed one count as equal to it (BCa's bias correction), so
    rounding noise does not move the interval.  A statistic whose data do not
    vary has the interval ``[mean, mean]``; ``n < 2``: NaN (undefined).

    >>> x = np.array([[0.0], [1.0], [0.5], [0.25]])
    >>> low, high = bootstrap_intervals(x, method="percentile")
    >>> bool(0.0 <= low[0] < 0.4375 < high[0] <= 1.0)
    True
    """
    x = np.asarray(x, np.float64)
    n = len(x)
    paired = i is not None
    width = len(i) if paired else x.shape[1]
    low, high = np.full(width, np.nan), np.full(width, np.nan)
    if n < 2 or width == 0:
        return low, high
    alpha = (1.0 - confidence) / 2.0
    counts = resample_counts(n, n_resamples, seed)
    means = counts @ x / n  # (resamples, columns)
    jack = (x.sum(axis=0) - x) / (n - 1)  # (n, columns)
    observed = x.mean(axis=0)
    magnitude = np.abs(x).max(axis=0)
    step = max(1, CHUNK_CELLS // max(n_resamples, n))
    for start in range(0, width, step):
        part = slice(start, start + step)
        if paired:
            a, b = i[part], j[part]
            boot, theta = means[:, a] - means[:, b], observed[a] - observed[b]
            leave = jack[:, a] - jack[:, b]
            d = x[:, a] - x[:, b]
            scale = np.maximum(magnitude[a], magnitude[b])
        else:
            boot, theta, leave, d = means[:, part], observed[part], jack[:, part], x[:, part]
            scale = magnitude[part]
        varies = d.std(axis=0) > RTOL * scale
        lo, hi = _interval(boot, theta, leave, alpha, method, RTOL * np.maximum(scale, 1e-300))
        low[part] = np.where(varies, lo, theta)
        high[part] = np.where(varies, hi, theta)
    return low, high


def _interval(boot, theta, leave, alpha, method, tol) -> tuple[np.ndarray, np.ndarray]:
    """One chunk of :func:`bootstrap_intervals`: columns of bootstrap and jackknife statistics."""
    ordered = np.sort(boot, axis=0)
    if method == "BCa":
        below = np.count_nonzero(boot < theta - tol, axis=0)
        equal = np.count_nonzero(np.abs(boot - theta) <= tol, axis=0)
        z0 = special.ndtri((2 * below + equal) / (2.0 * len(boot)))
        n = len(leave)
        u = (n - 1) * (leave.mean(axis=0) - leave)
        with np.errstate(divide="ignore", invalid="ignore"):
            accel = (u**3).sum(axis=0) / n**3 / 6.0 / ((u**2).sum(axis=0) / n**2) ** 1.5
            z = special.ndtri(alpha)
            levels = [
                special.ndtr(z0 + (z0 + edge) / (1 - accel * (z0 + edge))) for edge in (z, -z)
            ]
    else:
        levels = [np.full(boot.shape[1], alpha), np.full(boot.shape[1], 1.0 - alpha)]
    lo, hi = (_quantile(ordered, level) for level in levels)
    if method == "basic":
        lo, hi = 2 * theta - hi, 2 * theta - lo
    return lo, hi


def _quantile(ordered: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Per column, the ``level`` quantile of sorted columns (numpy's linear method); NaN stays."""
    size = len(ordered)
    position = np.clip(np.nan_to_num(level, nan=0.0), 0.0, 1.0) * (size - 1)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, size - 1)
    frac = position - below
    columns = np.arange(ordered.shape[1])
    value = ordered[below, columns] * (1 - frac) + ordered[above, columns] * frac
    value = np.where(frac == 0, ordered[below, columns], value)
    return np.where(np.isnan(level), np.nan, value)


@validate_params({"confidence": CONFIDENCE})
def tukey_hsd(groups: list[np.ndarray], confidence: float = 0.95) -> dict[str, np.ndarray]:
    """Tukey's HSD over independent groups, as :func:`scipy.stats.tukey_hsd`: ``(k, k)`` arrays.

    With the pooled within-group variance ``s2`` (``N - k`` degrees of
    freedom) and ``se = sqrt(s2 / 2 (1/n_a + 1/n_b))`` (Tukey-Kramer),
    ``pvalue[a, b] = P(Q > |mean_a - mean_b| / se)`` for the studentized range
    ``Q`` of ``k`` groups, and ``[low, high] = mean_a - mean_b -+ q_conf se``
    the simultaneous interval.  scipy's studentized range is slow, so each
    unordered pair is computed once.  The test ignores the pairing by query.
    NaN (undefined) when a group is empty, no degree of freedom is left or the
    pooled variance is 0; p at least :data:`SMALLEST_P`.
    """
    k = len(groups)
    out = {name: np.full((k, k), np.nan) for name in ("pvalue", "low", "high")}
    sizes = np.array([len(g) for g in groups], np.float64)
    if k < 2 or sizes.min() < 1 or sizes.sum() <= k:
        return out
    means = np.array([g.mean() for g in groups])
    df = sizes.sum() - k
    pooled = sum(float(((g - g.mean()) ** 2).sum()) for g in groups) / df
    scale = max(float(np.abs(np.concatenate(groups)).max()), 1e-300)
    if pooled <= (RTOL * scale) ** 2:
        return out
    a, b = np.triu_indices(k, 1)
    diff = means[a] - means[b]
    se = np.sqrt(pooled / 2.0 * (1.0 / sizes[a] + 1.0 / sizes[b]))
    with np.errstate(all="ignore"):
        p = np.maximum(stats.studentized_range.sf(np.abs(diff) / se, k, df), SMALLEST_P)
        critical = float(stats.studentized_range.ppf(confidence, k, df))
    for rows, cols, sign in ((a, b, 1.0), (b, a, -1.0)):
        out["pvalue"][rows, cols] = p
        out["low"][rows, cols] = sign * diff - critical * se
        out["high"][rows, cols] = sign * diff + critical * se
    return out


@validate_params({"seed": SEED} | pick(STATISTICS, "confidence", "ci_method", "n_bootstrap"))
def system_table(
    per_query: pd.DataFrame,
    tie_var: pd.Series,
    *,
    confidence: float = 0.95,
    ci_method: str = "BCa",
    n_bootstrap: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Each run's tie-aware mean with its tie noise, topic noise and bootstrap interval.

    Columns: ``mean`` over the run's ``n_queries`` (its non-NaN rows of
    ``per_query``); ``tie_sd = sqrt(tie_var)``, the exact sd of the mean over
    random tie-breaks; ``topic_sd = sd(values) / sqrt(n)`` (``ddof=1``), the
    standard error from the spread between topics; ``ci_low, ci_high``:
    :func:`bootstrap_intervals` of the mean.  ``topic_sd`` and the interval
    are NaN (undefined) below two queries.
    """
    values = per_query.to_numpy(np.float64)
    present = ~np.isnan(values)
    out = pd.DataFrame(index=per_query.columns)
    n = present.sum(axis=0)
    out["mean"] = np.where(n > 0, np.nansum(values, axis=0) / np.maximum(n, 1), 0.0)
    out["n_queries"] = n
    out["tie_sd"] = np.sqrt(tie_var.reindex(per_query.columns).to_numpy())
    topic = np.full(len(n), np.nan)
    low, high = np.full(len(n), np.nan), np.full(len(n), np.nan)
    patterns, code = np.unique(present.T, axis=0, return_inverse=True)
    for g, pattern in enumerate(patterns):
        members = np.flatnonzero(code.ravel() == g)
        x = values[np.ix_(pattern, members)]
        if len(x) > 1:
            constant = np.ptp(x, axis=0) == 0  # std's rounding residue, not topic noise
            topic[members] = np.where(constant, 0.0, x.std(axis=0, ddof=1)) / math.sqrt(len(x))
        low[members], high[members] = bootstrap_intervals(
            x, confidence=confidence, method=ci_method, n_resamples=n_bootstrap, seed=seed
        )
    out["topic_sd"] = topic
    out["ci_low"], out["ci_high"] = low, high
    out.index.name = "run"
    return out


def help_hurt(comparison: Comparison, baseline: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per run, the queries it helps, hurts and leaves equal against ``baseline``.

    Over the queries both runs have, ``diff = run - baseline`` of the
    tie-aware values; equal when ``|diff| <= RTOL * max(|run|, |baseline|)``.

    Returns
    -------
    counts : DataFrame
        Index run (every run but the baseline): ``help, hurt, equal,
        n_queries``; ``within_tie_noise``, how many helped or hurt queries
        differ by at most ``NOISE_WIDTH * tie_sd`` (``tie_sd = sqrt(var_run +
        var_baseline)`` of that query: ties alone could reverse them); and the
        pair's ``mean_diff, tie_sd, topic_sd`` and p-values from
        :attr:`Comparison.pairs`.
    queries : DataFrame
        One row per run and shared query: ``run, qid, baseline_value,
        run_value, diff, tie_sd, outcome`` (``help``, ``hurt`` or ``equal``).
    """
    runs = list(comparison.per_query.columns)
    if baseline not in runs:
        raise InputError(
            "baseline", None, f"{baseline!r} is not one of the runs", "one of " + ", ".join(runs)
        )
    others = [r for r in runs if r != baseline]
    values = comparison.per_query.to_numpy(np.float64)
    var = comparison.per_query_var.reindex_like(comparison.per_query).to_numpy(np.float64)
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
    pairs = comparison.pairs.loc[[(r, baseline) for r in others]]
    wanted = ["mean_diff", "tie_sd", "topic_sd", "diff_low", "diff_high"]
    wanted += [c for c in pairs.columns if c.endswith("pvalue") or c.endswith("_adj")]
    for column in wanted:
        counts[column] = pairs[column].to_numpy()
    row, col = np.nonzero(shared)
    order = np.lexsort((row, col))
    row, col = row[order], col[order]
    outcome = np.where(helped, "help", np.where(hurt, "hurt", "equal"))
    queries = pd.DataFrame(
        {
            "run": np.asarray(others, dtype=object)[col],
            "qid": comparison.per_query.index.to_numpy()[row],
            "baseline_value": base[row, 0],
            "run_value": x[row, col],
            "diff": np.where(equal, 0.0, diff)[row, col],
            "tie_sd": tie_sd[row, col],
            "outcome": outcome[row, col],
        }
    )
    return counts, queries


# --------------------------------------------------------------------------- output


@validate_params({"fmt": COMPARE_FORMAT})
def format_comparison(comparison: Comparison, fmt: str = "text") -> str:
    """What ``tiecore compare`` prints.

    ``text``: the scores and ranks of every run under each ordering (with the
    random tie-breaks' mean and sd), the runs that move between ``trec_eval``
    and ``aware``, the pairs of runs that swap, the tests of the runs next to
    each other under ``aware``, and the agreement of ``trec_eval`` with the
    other orderings; each run's ``tie_sd``, ``topic_sd`` and bootstrap
    interval; the neighbours' Wilcoxon, corrected and Tukey p-values and
    intervals; the :meth:`Comparison.verdict`; the help/hurt table against
    the baseline.  ``csv``: one tidy table with columns ``measure, table,
    run, other, field, value`` holding the scores (with the noise and
    intervals), ranks, swaps, pairs (with Tukey's columns), agreement and,
    with a baseline, ``help_hurt`` (``other``: the baseline) and
    ``help_hurt_queries`` (``other``: the qid).  ``json``: an object with
    those tables as lists of records and the options (``correction``,
    ``baseline``, ``confidence``, ...).
    Undefined statistics are ``undefined`` in text, empty in csv and ``null``
    in json.
    """
    if fmt == "text":
        return _text(comparison)
    if fmt == "csv":
        return _csv_frame(comparison).to_csv(index=False)
    return _json_text(_document(comparison))


def _ranking_table(comparison: Comparison) -> pd.DataFrame:
    """Scores and ranks side by side; the random column is the samples' mean, sd and mean rank."""
    scores, ranks = comparison.scores, comparison.ranks
    sampled = comparison.sample_scores[scores.index]
    table = scores.copy()
    table[RANDOM] = sampled.mean().to_numpy()
    table[f"{RANDOM}_sd"] = sampled.std(ddof=1).to_numpy()
    for column in ORDERINGS:
        table[f"rank_{column}"] = ranks[column]
    table[f"rank_{RANDOM}"] = _ranks(sampled.to_numpy()).mean(axis=0)
    for column in ("tie_sd", "topic_sd", "ci_low", "ci_high"):
        if column in comparison.systems:
            table[column] = comparison.systems[column].reindex(table.index).to_numpy()
    return table


def _pair_table(comparison: Comparison) -> pd.DataFrame:
    """:attr:`Comparison.pairs` with Tukey's columns when there are any."""
    if comparison.tukey is None:
        return comparison.pairs
    return comparison.pairs.join(comparison.tukey)


#: p-values below this print as ``<1e-300`` in text: a t or Wilcoxon tail that underflows
#: is floored at :data:`SMALLEST_P`, a bound (corrected: ``m * SMALLEST_P``), not a value.
SHOWN_BELOW = 1e-300


def format_pvalue(value: float) -> str:
    """A p-value for text: three significant digits, scientific when small; never 0, and
    ``<1e-300`` below :data:`SHOWN_BELOW` (where the floor stands for an underflowed tail).

    >>> [format_pvalue(p) for p in (0.01234, SMALLEST_P, 4 * SMALLEST_P, float("nan"))]
    ['0.0123', '<1e-300', '<1e-300', 'undefined']
    """
    if value is not None and value < SHOWN_BELOW:
        return f"<{SHOWN_BELOW:g}"
    return _show(value, "{:.3g}")


def _verdict(comparison: Comparison, alpha: float = ALPHA) -> str:
    """One line: how many pairs each test finds significant after the correction."""
    names = comparison.per_query.columns
    pairs = _pair_table(comparison)
    a = names.get_indexer(pairs.index.get_level_values("a"))
    b = names.get_indexer(pairs.index.get_level_values("b"))
    upper = pairs[a < b]
    tests = [(f"{t}_adj", t.removesuffix("_pvalue")) for t in CORRECTED]
    if comparison.tukey is not None:
        tests.append(("tukey_pvalue", "tukey"))
    found = {label: int((upper[column] < alpha).sum()) for column, label in tests}
    how = "uncorrected" if comparison.correction == "none" else f"{comparison.correction}-corrected"
    if not any(found.values()):
        return (
            f"no pair of runs differs significantly at alpha = {alpha:g} ({how} p-values "
            f"over {len(upper)} pairs; tests: {', '.join(found)})"
        ) + _resolution_note(comparison, upper, alpha, how)
    counts = ", ".join(f"{label} {k}" for label, k in found.items())
    note = _resolution_note(comparison, upper, alpha, how) if not found["randomization"] else ""
    return f"pairs significant at alpha = {alpha:g} ({how}, of {len(upper)}): {counts}" + note


def _resolution_note(comparison: Comparison, upper: pd.DataFrame, alpha: float, how: str) -> str:
    """Why the randomization test finds nothing when its resamples are too few to.

    With ``N`` random sign flips its p-value is at least ``1 / (N + 1)``; pairs
    that reach that floor (no flip as extreme) are the clearest differences, and
    if even they stay at or above ``alpha`` once corrected, only more flips can
    tell: say so, rather than let 0 read as "no difference".
    """
    floor = 1.0 / (comparison.n_resamples + 1)
    p = upper["randomization_pvalue"].to_numpy()
    at_floor = ~upper["randomization_exact"].to_numpy(bool) & (p <= floor * (1 + 1e-9))
    if not at_floor.any() or (upper["randomization_pvalue_adj"].to_numpy()[at_floor] < alpha).any():
        return ""
    return (
        f"; randomization cannot find any: with N = {comparison.n_resamples} sign flips its "
        f"p-values are at least 1/(N+1) = {floor:.2g}, and the {int(at_floor.sum())} pairs at "
        f"that floor stay at or above alpha{'' if how == 'uncorrected' else ' once ' + how}: "
        "raise the resamples (--resamples)"
    )


def _percent(confidence: float) -> str:
    """A confidence level as a percentage with the digits it has (not 0.9999999 as 100%).

    >>> _percent(0.95), _percent(0.9999999), _percent(0.995), _percent(1e-9)
    ('95%', '99.99999%', '99.5%', '1e-07%')
    """
    return f"{100 * confidence:.10g}%"


def _show(value: float, spec: str = "{:.4f}") -> str:
    """A number for text output; NaN is ``undefined``."""
    return "undefined" if value is None or np.isnan(value) else spec.format(value)


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
    level = _percent(comparison.confidence)
    if "tie_sd" in table:
        shown["tie_sd"] = table["tie_sd"].map(lambda v: _show(v, "{:.2e}"))
        shown["topic_sd"] = table["topic_sd"].map(lambda v: _show(v, "{:.2e}"))
        shown[f"ci{level}"] = [
            "undefined" if np.isnan(lo) else f"[{lo:.4f}, {hi:.4f}]"
            for lo, hi in zip(table["ci_low"], table["ci_high"], strict=True)
        ]
    samples = len(comparison.sample_scores)
    over = "every qrels query (missing = 0)" if comparison.complete else "each run's queries"
    lines = [
        f"{comparison.measure}: {len(table)} runs, mean over {over}; "
        f"(rank), 1 = best; {RANDOM} = mean+-sd over {samples} random tie-breaks (mean rank)",
        f"tie_sd: sd of the aware mean over random tie-breaks (exact); topic_sd: sd of the "
        f"per-query values / sqrt(queries); ci{level}: {comparison.ci_method} bootstrap "
        f"interval of the mean ({comparison.n_bootstrap} resamples)",
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
        lines += [
            "pairs in opposite order under trec_eval and aware (a: ahead under trec_eval, "
            "or under aware where trec_eval ties them):"
        ]
        lines += [flipped.to_string(index=False, float_format="{:.6f}".format)]
    lines += ["", *_neighbour_lines(comparison, table.index)]
    lines += ["", _verdict(comparison)]
    if comparison.baseline is not None:
        lines += ["", *_help_hurt_lines(comparison)]
    agreement = comparison.agreement.xs("trec_eval", level="ordering_a")
    lines += ["", "agreement of trec_eval's order with (tau_ap: trec_eval judged against it):"]
    lines += [agreement.apply(lambda c: c.map(_show)).to_string()]
    return "\n".join(lines) + "\n"


def _neighbour_lines(comparison: Comparison, order: pd.Index) -> list[str]:
    """The pairs of runs next to each other under ``aware``: difference, noise and tests."""
    pairs = comparison.pairs.loc[list(itertools.pairwise(order))]
    frame = pd.DataFrame(
        {
            "a": pairs.index.get_level_values("a"),
            "b": pairs.index.get_level_values("b"),
            "mean_diff": pairs["mean_diff"].map(_show).to_numpy(),
            "tie_noise": pairs["tie_noise"].map(_show).to_numpy(),
            "p_beats": pairs["p_beats_sampled"].map(_show).to_numpy(),
            "p_normal": pairs["p_beats_normal"].map(_show).to_numpy(),
            "t_p": pairs["t_pvalue"].map(format_pvalue).to_numpy(),
            "rand_p": pairs["randomization_pvalue"].map(format_pvalue).to_numpy(),
            "wilcoxon_p": pairs["wilcoxon_pvalue"].map(format_pvalue).to_numpy(),
            "t_p_adj": pairs["t_pvalue_adj"].map(format_pvalue).to_numpy(),
            "effect": pairs["effect_size"].map(lambda v: _show(v, "{:.3f}")).to_numpy(),
            "tie_sd": pairs["tie_sd"].map(lambda v: _show(v, "{:.2e}")).to_numpy(),
            "topic_sd": pairs["topic_sd"].map(lambda v: _show(v, "{:.2e}")).to_numpy(),
            "ci": [
                "undefined" if np.isnan(lo) else f"[{lo:.4f}, {hi:.4f}]"
                for lo, hi in zip(pairs["diff_low"], pairs["diff_high"], strict=True)
            ],
            "queries": pairs["n_queries"].to_numpy(),
        }
    )
    if comparison.tukey is not None:
        frame.insert(
            9,
            "tukey_p",
            comparison.tukey.loc[pairs.index, "tukey_pvalue"].map(format_pvalue).to_numpy(),
        )
    exact = pairs["randomization_exact"]
    how = (
        "exact over every sign flip"
        if exact.all()
        else f"{comparison.n_resamples} random sign flips, p = (b+1)/(N+1)"
        if not exact.any()
        else "exact where 2^queries <= the budget, else random sign flips"
    )
    return [
        "runs next to each other under aware (a above b): tie noise = 2 sd over random "
        f"tie-breaks; paired t-test t_p; randomization test rand_p ({how}); Wilcoxon "
        f"signed-rank wilcoxon_p ({comparison.zero_method} zeros); t_p_adj: t_p "
        f"{comparison.correction}-corrected over all pairs"
        + ("; tukey_p: Tukey's HSD" if comparison.tukey is not None else "")
        + f"; tie_sd beside topic_sd of the difference; ci: {_percent(comparison.confidence)} "
        f"bootstrap interval of the difference; undefined: the difference does not vary",
        frame.to_string(index=False),
    ]


def _help_hurt_lines(comparison: Comparison) -> list[str]:
    """The help/hurt table against the baseline."""
    counts = comparison.help_hurt
    frame = pd.DataFrame(
        {
            "run": counts.index,
            "help": counts["help"].to_numpy(),
            "hurt": counts["hurt"].to_numpy(),
            "equal": counts["equal"].to_numpy(),
            "within_ties": counts["within_tie_noise"].to_numpy(),
            "mean_diff": counts["mean_diff"].map(_show).to_numpy(),
            "tie_sd": counts["tie_sd"].map(lambda v: _show(v, "{:.2e}")).to_numpy(),
            "topic_sd": counts["topic_sd"].map(lambda v: _show(v, "{:.2e}")).to_numpy(),
            "t_p_adj": counts["t_pvalue_adj"].map(format_pvalue).to_numpy(),
            "wilcoxon_p_adj": counts["wilcoxon_pvalue_adj"].map(format_pvalue).to_numpy(),
        }
    )
    return [
        f"per-query help/hurt against the baseline {comparison.baseline} (queries both runs "
        "have; within_ties: helped or hurt by at most 2 tie sd of that query, so ties alone "
        "could reverse it):",
        frame.to_string(index=False),
    ]


def _csv_frame(comparison: Comparison) -> pd.DataFrame:
    """Every table as rows ``table, run, other, field, value``."""
    parts = []
    table = _ranking_table(comparison)
    long = table.rename_axis("run").reset_index().melt(id_vars="run", var_name="field")
    parts.append(long.assign(table="scores", other=""))
    swaps = comparison.swaps.melt(id_vars="run", var_name="field")
    parts.append(swaps.assign(table="swaps", other=""))
    pairs = _pair_table(comparison).rename_axis(["run", "other"]).reset_index()
    pairs = pairs.melt(id_vars=["run", "other"], var_name="field")
    parts.append(pairs.assign(table="pairs"))
    if comparison.baseline is not None:
        counts = comparison.help_hurt.reset_index().melt(id_vars="run", var_name="field")
        parts.append(counts.assign(table="help_hurt", other=comparison.baseline))
        queries = comparison.help_hurt_queries.rename(columns={"qid": "other"})
        parts.append(
            queries.melt(id_vars=["run", "other"], var_name="field").assign(
                table="help_hurt_queries"
            )
        )
    agreement = comparison.agreement.rename_axis(["run", "other"]).reset_index()
    parts.append(
        agreement.melt(id_vars=["run", "other"], var_name="field").assign(table="agreement")
    )
    out = pd.concat(parts, ignore_index=True)[["table", "run", "other", "field", "value"]]
    out.insert(0, "measure", str(comparison.measure))
    return out


def _json_text(document: dict) -> str:
    """``document`` as JSON with one key a line and one record a line of each table.

    ``json.dumps(indent=...)`` takes the pure-Python encoder: 2.5 s for the 14,280
    pairs of 120 runs, most of ``compare``'s output time.  Each table (a
    DataFrame) is encoded a column at a time instead (:func:`json_rows`).

    >>> pairs = pd.DataFrame({"a": ["x"], "p": [np.nan]})
    >>> print(_json_text({"measure": "AP", "pairs": pairs, "empty": pairs[:0]}), end="")
    {
     "measure": "AP",
     "pairs": [
      {"a": "x", "p": null}
     ],
     "empty": []
    }
    """
    lines = []
    for key, value in document.items():
        head = f" {json.dumps(key)}: "
        if isinstance(value, pd.DataFrame):
            rows = json_rows(value)
        elif isinstance(value, list):
            rows = [json.dumps(item) for item in value]
        else:
            lines.append(head + json.dumps(value))
            continue
        body = ",\n".join(f"  {row}" for row in rows)
        lines.append(f"{head}[\n{body}\n ]" if rows else f"{head}[]")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _document(comparison: Comparison) -> dict:
    """The JSON document: settings, and the tables as DataFrames (one record a row)."""
    return {
        "measure": str(comparison.measure),
        "samples": len(comparison.sample_scores),
        "complete": comparison.complete,
        "orderings": list(ORDERINGS),
        "scores": _ranking_table(comparison).rename_axis("run").reset_index(),
        "tie_var": comparison.tie_var.rename_axis("run").reset_index(),
        "swaps": comparison.swaps,
        "swapped_pairs": swapped_pairs(comparison),
        "correction": comparison.correction,
        "confidence": comparison.confidence,
        "ci_method": comparison.ci_method,
        "n_bootstrap": comparison.n_bootstrap,
        "zero_method": comparison.zero_method,
        "baseline": comparison.baseline,
        "pairs": _pair_table(comparison).reset_index(),
        "agreement": comparison.agreement.reset_index(),
        "help_hurt": comparison.help_hurt.reset_index()
        if comparison.baseline is not None
        else pd.DataFrame(),
        "help_hurt_queries": comparison.help_hurt_queries,
    }


# --------------------------------------------------------------------------- checks


def _check_runs(count: int, names: list[str], baseline: str | None) -> None:
    """At least two runs, and the baseline one of them."""
    if count < 2:
        raise ValueError(f"compare needs at least two runs, got {count}")
    if baseline is not None and baseline not in names:
        raise InputError(
            "baseline", None, f"{baseline!r} is not one of the runs", "one of " + ", ".join(names)
        )


def _one_measure(measure: str | Measure) -> Measure:
    parsed = parse_measures(measure)
    if len(parsed) != 1:
        raise ValueError(f"compare takes one measure, got {[str(m) for m in parsed]}")
    refuse_inexact(parsed, "compare (its statistics are over arithmetic means)")
    return parsed[0]
