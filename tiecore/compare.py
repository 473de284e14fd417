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
correlations, swaps and P(a beats b) therefore tie values within ``RTOL`` of
each other (:mod:`tiecore.stats.ranks`; runs get average ranks).

The statistics are :mod:`tiecore.stats`' (array operations over all pairs at
once); this module scores the runs and puts the tables together.

Undefined statistics are NaN in the frames and are printed as ``undefined``
in text, an empty field in csv and ``null`` in json, never as NaN, inf or a
p-value of 0: Kendall's tau and tau_AP when an ordering gives every run the
same score; the t-test and the effect size when the per-query difference does
not vary (sd within ``RTOL`` of the values' magnitude) or fewer than two
queries are shared; the randomization test when no query is shared.

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

from collections.abc import Callable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from tiecore.engine.budget import check_compare
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import TIEBREAKS, Ranking
from tiecore.errors import InputError
from tiecore.evaluation.core import (
    PartValues,
    RunsOrFiles,
    as_run_dict,
    merge_parts,
    part_values,
)
from tiecore.evaluation.evaluator import query_values
from tiecore.evaluation.parallel import THREADS, Item, map_runs, run_items
from tiecore.evaluation.summaries import run_seed
from tiecore.io.files import stem
from tiecore.io.runs import Run
from tiecore.measures import Measure, parse_measures
from tiecore.measures.registry import refuse_inexact
from tiecore.options import (
    BOOL,
    COMPARE,
    CORRECTION,
    RUN_NAME,
    SIGNIFICANCE,
    Options,
    validate_params,
)
from tiecore.options import CI_METHODS as CI_METHODS  # re-exported, declared there
from tiecore.options import CORRECTIONS as CORRECTIONS
from tiecore.options import ZERO_METHODS as ZERO_METHODS
from tiecore.spread import query_spread
from tiecore.stats.correlation import rank_agreement
from tiecore.stats.paired import warn_unequal_queries
from tiecore.stats.pairs import adjust_pairs, help_hurt, pair_statistics, tukey_pairs
from tiecore.stats.ranks import tie_levels, tie_ranks
from tiecore.stats.summary import system_table

#: Oblivious tie-break policies with one deterministic order ("random" is the samples).
OBLIVIOUS = tuple(policy for policy in TIEBREAKS if policy != "random")
#: Columns of :attr:`Comparison.scores` and :attr:`Comparison.ranks`.
ORDERINGS = ("aware", *OBLIVIOUS)
#: Which ordering :func:`swapped_pairs` compares.
ORDERING = Options(*ORDERINGS)
#: Name of the random tie-break orderings (one per sample) in the agreement table.
RANDOM = "random"
#: Bytes the random tie-breaks may take (``samples x (runs + queries)`` doubles).
MEMORY_BUDGET = 1 << 30
#: The p-values of :attr:`Comparison.pairs` that get a corrected ``<name>_adj`` column.
CORRECTED = ("t_pvalue", "randomization_pvalue", "wilcoxon_pvalue")
#: Significance level of the verdicts in the text output.
ALPHA = 0.05

#: ``progress(done, total, label)``; ``total`` is None while the runs are not counted
#: (files read as they come).
Progress = Callable[[int, int | None, str], None]


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
        Ranks of ``scores`` per column, 1 = best; scores within :data:`~tiecore.stats.ranks.RTOL`
        are tied and get their average rank.
    agreement : DataFrame
        :func:`~tiecore.stats.correlation.rank_agreement`: index ``(ordering_a,
        ordering_b)``; ``kendall_tau`` (tau-b), ``tau_ap`` (ordering ``a`` judged
        against ``b``) and ``tau_ap_sym`` (the mean of both directions).  Rows
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
        Per run (:func:`~tiecore.stats.summary.system_table`): ``mean, n_queries``, tie noise
        ``tie_sd`` beside topic noise ``topic_sd``, bootstrap ``ci_low,
        ci_high``.
    correction : str
        The correction of the ``*_adj`` columns of ``pairs`` (:data:`CORRECTIONS`).
    baseline : str or None
        The run of ``help_hurt``.
    help_hurt, help_hurt_queries : DataFrame
        :func:`~tiecore.stats.pairs.help_hurt` against ``baseline`` (empty without one).
    tukey : DataFrame or None
        Tukey's HSD per ordered pair (:func:`~tiecore.stats.tukey.tukey_hsd`): ``tukey_pvalue,
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
        adjusted = adjust_pairs(pairs, names, correction, CORRECTED)
        out = replace(self, pairs=adjusted, correction=correction, baseline=baseline)
        if tukey is False:
            out.tukey = None
        elif tukey and self.tukey is None:
            out.tukey = tukey_pairs(self.per_query.to_numpy(np.float64), names, self.confidence)
        if baseline is None:
            out.help_hurt, out.help_hurt_queries = pd.DataFrame(), pd.DataFrame()
        else:
            out.help_hurt, out.help_hurt_queries = help_hurt(
                out.per_query, out.per_query_var, out.pairs, baseline
            )
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
        :func:`tiecore.evaluation.summaries.run_seed`, so its sample mean is the value of
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
        name; ``total`` None when the runs come from an iterator), after the
        pairwise tests (``"pairs"``) and after the rank correlations
        (``"agreement"``).
    client : dask.distributed.Client, optional
        Scores the runs on a cluster (:func:`tiecore.evaluation.parallel.map_runs`), a big
        run in query partitions as :func:`tiecore.evaluate` splits it; the
        result is the local one, bit for bit.
    correction : {"holm", "none", "bonferroni", "bh"}
        Multiple-comparison correction of the pairs' p-values
        (:func:`~tiecore.stats.corrections.adjust_pvalues`), over the ``R (R -
        1) / 2`` unordered pairs of each test separately; the ``<test>_adj`` columns.
    baseline : str, optional
        A run; :attr:`Comparison.help_hurt` counts the queries each other run
        helps and hurts against it (:func:`~tiecore.stats.pairs.help_hurt`).
    confidence, ci_method, n_bootstrap
        Level, method (:data:`CI_METHODS`) and resamples of the bootstrap
        intervals of each run's mean and of each pair's mean difference
        (:func:`~tiecore.stats.bootstrap.bootstrap_intervals`, seeded by ``seed``), and the level of
        Tukey's intervals.
    zero_method : {"wilcox", "pratt", "zsplit"}
        Zero differences in the Wilcoxon test (:func:`~tiecore.stats.wilcoxon.wilcoxon_pvalues`).
    tukey : bool
        Also Tukey's HSD over the runs' per-query values (:func:`~tiecore.stats.tukey.tukey_hsd`;
        scipy's studentized range takes seconds for 20 runs).

    Returns
    -------
    Comparison
        ``pairs`` columns, for runs ``a`` and ``b`` with tie-aware means
        ``mu`` and exact tie-breaking variances ``var`` of their means
        (``Comparison.tie_var``):

        - ``mean_diff = mu_a - mu_b`` (0 when within :data:`~tiecore.stats.ranks.RTOL`);
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
        - ``wilcoxon_pvalue``: :func:`~tiecore.stats.wilcoxon.wilcoxon_pvalues` of ``d``;
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
    runs = _runs_to_score(runs, baseline)
    judgments = Judgments.from_qrels(qrels, rel_level)
    if isinstance(runs, Sized):
        check_memory(samples, len(runs), len(judgments.qids))
        check_compare(n_resamples, n_bootstrap, len(runs), len(judgments.qids))  # engine.budget

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
    merge = partial(merge_scores, samples=samples, complete=complete)
    found = map_runs(work, runs, client=client, progress=step, merge=merge, threads=THREADS)
    names = pd.Index([f.name for f in found], name="run")  # files' names are final now
    _check_runs(len(found), list(names), baseline)
    check_compare(n_resamples, n_bootstrap, len(found), len(judgments.qids))
    tables = _tables(found, names, judgments.qids)
    bootstrap: dict[str, Any] = {
        "confidence": confidence,
        "ci_method": ci_method,
        "n_bootstrap": n_bootstrap,
    }
    pairs = pair_statistics(
        tables.scores["aware"].to_numpy(),
        tables.tie_var.to_numpy(),
        tables.sample_scores.to_numpy(),
        tables.per_query.to_numpy(),
        np.flatnonzero(tables.covered),
        len(judgments.qids),
        names,
        seed,
        n_resamples,
        {**bootstrap, "zero_method": zero_method},
    )
    systems = system_table(tables.per_query, tables.tie_var, seed=seed, **bootstrap)
    step(len(found) + 1, len(found), "pairs")
    agreement = rank_agreement(
        {o: tables.scores[o].to_numpy() for o in ORDERINGS},
        tables.sample_scores[names].to_numpy(),
        RANDOM,
    )
    step(len(found) + 2, len(found), "agreement")
    comparison = Comparison(
        measure=measure,
        scores=tables.scores,
        sample_scores=tables.sample_scores,
        ranks=tables.ranks,
        agreement=agreement,
        swaps=_swaps(tables.ranks),
        pairs=pairs,
        per_query=tables.per_query,
        tie_var=tables.tie_var,
        complete=complete,
        n_resamples=n_resamples,
        per_query_var=tables.per_query_var,
        systems=systems,
        tukey=tukey_pairs(tables.per_query.to_numpy(), names, confidence) if tukey else None,
        **bootstrap,
        zero_method=zero_method,
    )
    return comparison.with_options(correction=correction, baseline=baseline or "")


def _runs_to_score(
    runs: RunsOrFiles, baseline: str | None
) -> dict[str, pd.DataFrame] | Iterator[Item] | list[Item]:
    """The runs as :func:`tiecore.evaluation.parallel.map_runs` takes them, checked when counted.

    Frames are checked up front (:func:`as_run_dict`); files are read one at a
    time as they are scored (:func:`run_items`).  When the runs can be counted,
    at least two, and the baseline one of them (a file's name may still change,
    to its stem: either may do here).
    """
    in_memory = (
        isinstance(runs, pd.DataFrame)
        or (isinstance(runs, Mapping) and all(isinstance(r, pd.DataFrame) for r in runs.values()))
        or (isinstance(runs, Sized) and len(runs) == 0)  # refused as evaluate refuses it
    )
    if in_memory:
        frames = as_run_dict(runs)
        _check_runs(len(frames), list(frames), baseline)
        return frames
    items = run_items(runs)
    if isinstance(items, list):
        stems = [stem(i.display) for i in items if i.file]
        known = [i.name for i in items]
        _check_runs(len(items), known, baseline if baseline not in stems else None)
    return items


@dataclass
class _Tables:
    """The scored runs as tables (what :func:`_tables` builds)."""

    scores: pd.DataFrame  # runs x ORDERINGS
    ranks: pd.DataFrame  # their average ranks, 1 = best
    sample_scores: pd.DataFrame  # samples x runs
    per_query: pd.DataFrame  # covered queries x runs, tie-aware; NaN where a run lacks one
    per_query_var: pd.DataFrame  # the same, the values' exact variances over tie-breaks
    tie_var: pd.Series  # per run: the variance of its mean over tie-breaks
    covered: np.ndarray  # per qrels query: whether some run has it


def _tables(found: Sequence[RunScores], names: pd.Index, qids: np.ndarray) -> _Tables:
    """Each run's scores, samples and per-query values side by side.

    A run's ``tie_var`` is ``sum_q var_q / Q**2`` over its ``Q`` averaged
    queries (queries break their ties independently); ranks are
    :func:`tiecore.stats.ranks.tie_ranks` ``average`` of each ordering's scores.
    """
    scores = pd.DataFrame(
        {o: [f.scores[o] for f in found] for o in ORDERINGS}, index=names, dtype=np.float64
    )
    sample_scores = pd.DataFrame(np.column_stack([f.samples for f in found]), columns=names)
    sample_scores.index.name = "sample"
    chosen = np.array([f.chosen for f in found])  # (runs, queries)
    covered = np.asarray(chosen.any(axis=0))
    warn_unequal_queries(names, chosen, stacklevel=4)  # compare's caller
    values = np.where(chosen, np.array([f.aware for f in found]), np.nan)[:, covered].T
    per_query = pd.DataFrame(values, index=pd.Index(qids[covered], name="qid"), columns=names)
    variances = np.where(chosen, np.array([f.var for f in found]), np.nan)[:, covered].T
    counts = chosen.sum(axis=1)
    tie_var = pd.Series(
        [
            float(np.where(c, f.var, 0.0).sum()) / max(n, 1) ** 2
            for f, c, n in zip(found, chosen, counts, strict=True)
        ],
        index=names,
        name="tie_var",
    )
    ranks = scores.apply(lambda column: pd.Series(tie_ranks(column, "average"), index=names))
    return _Tables(
        scores=scores,
        ranks=ranks,
        sample_scores=sample_scores,
        per_query=per_query,
        per_query_var=pd.DataFrame(variances, index=per_query.index, columns=names),
        tie_var=tie_var,
        covered=covered,
    )


def check_memory(samples: int, n_runs: int, n_queries: int, budget: int = MEMORY_BUDGET) -> None:
    """Refuse up front when the random tie-breaks would not fit in ``budget`` bytes.

    The sampled scores take ``samples x runs`` doubles and one run's draws
    ``samples x queries``; everything else compare builds is either smaller
    or made in chunks of :data:`tiecore.stats.CHUNK_CELLS` cells.

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
) -> RunScores | PartValues:
    """One run under every ordering; aware, oblivious and sampled exactly as :func:`evaluate`.

    A top-level function of ``(name, run)`` plus keywords, so that
    ``functools.partial`` of it pickles and can be sent to other processes.
    Queries missing from the run score 0 with ``complete`` (and vary not).  A
    query partition of a run (:attr:`tiecore.io.runs.Run.part`, on a cluster) gives its
    per-query arrays, which :func:`merge_scores` puts together.
    """
    compute = partial(
        _score_arrays, judgments=judgments, measure=measure, samples=samples, seed=seed, depth=depth
    )
    if Run.of(run).part is not None:
        return part_values(name, run, judgments, compute)
    base, arrays = compute(name, run)
    return _run_scores(name, base.counts > 0, arrays, complete)


def merge_scores(
    name: str, parts: list[PartValues], *, samples: int, complete: bool = False
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
    :data:`~tiecore.stats.ranks.RTOL`.  Columns: both scores under each ordering, the pair's
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


# --------------------------------------------------------------------------- reviewer statistics


# --------------------------------------------------------------------------- output


def pair_table(comparison: Comparison) -> pd.DataFrame:
    """:attr:`Comparison.pairs` with Tukey's columns when there are any."""
    if comparison.tukey is None:
        return comparison.pairs
    return comparison.pairs.join(comparison.tukey)


def _verdict(comparison: Comparison, alpha: float = ALPHA) -> str:
    """One line: how many pairs each test finds significant after the correction."""
    names = comparison.per_query.columns
    pairs = pair_table(comparison)
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
