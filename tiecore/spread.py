"""Spread of each query's value under uniformly random tie-breaking.

The tie-aware value is the mean over all orderings of the tie groups; this module
gives the rest of that picture: the exact variance, the bounds (min and max over
all orderings), the exact distribution of the count-like measures, and which tie
groups the variance comes from.

The math per tie group (exact variances, bounds, distributions) lives in
:mod:`tiecore.engine.moments`; which of it a measure uses, in its family's entry of
:mod:`tiecore.measures.registry`.  Every variance here is exact (``var_method`` "exact").
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from tiecore.engine import kernels
from tiecore.engine.judgments import Judgments, gain_of
from tiecore.engine.moments import Context, group_sum, within_bounds
from tiecore.engine.ranking import Ranking, extra_float32_ties
from tiecore.errors import InputError, TieCoreWarning
from tiecore.evaluation.core import PartValues, Rows, Runs, merge_parts, part_values
from tiecore.evaluation.parallel import map_runs
from tiecore.io.frames import check_run
from tiecore.io.runs import Run, run_name
from tiecore.measures import Measure, parse_measures
from tiecore.measures.registry import FAMILIES, refuse_inexact
from tiecore.options import DEPTH, GAINS, SPREAD, TIE_GROUPS, TIE_PROFILE, validate_params

#: The per-query columns of :func:`query_spread`.
SPREAD_COLUMNS = ("value", "var", "min", "max")

#: Measure families whose exact distribution :func:`distribution` gives.
DISTRIBUTION_FAMILIES = tuple(name for name, f in FAMILIES.items() if f.distribution)

Measures = str | Measure | Sequence[str | Measure]


# ------------------------------------------------------------------ public API


@validate_params(SPREAD)
def evaluate_spread(
    runs: Runs,
    qrels: pd.DataFrame,
    measures: Measures,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    complete: bool = False,
    per_query: bool = False,
    progress: Callable[[int, int | None, str], None] | None = None,
    client: object = None,
) -> pd.DataFrame:
    """Aware value, exact variance and bounds of every measure of every run.

    Parameters
    ----------
    runs, qrels, measures, rel_level, depth, complete, per_query, progress, client
        As in :func:`tiecore.evaluate` (runs may be files, read one at a time).

    Returns
    -------
    DataFrame
        Columns ``run, qid, measure, value, var, min, max, var_method``.  Per
        query: the aware value, the variance over random tie-breaks and the min
        and max over all orderings.  ``qid`` NA (the summary row): means over the ``Q``
        queries of value, min and max, and ``var = sum of variances / Q**2``
        (the queries are shuffled independently).

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["b"], "level": [1]})
    >>> evaluate_spread(run, qrels, "P@1")[["measure", "value", "var", "min", "max"]]
      measure  value   var  min  max
    0     P@1    0.5  0.25  0.0  1.0
    """
    measures = parse_measures(_as_list(measures))
    refuse_inexact(measures, "evaluate_spread (its value is the tie-aware mean)")
    judgments = Judgments.from_qrels(qrels, rel_level)

    keys = [(measure, column) for measure in measures for column in SPREAD_COLUMNS]

    def arrays(name: str, run: pd.DataFrame) -> tuple[Ranking, dict]:
        run = check_run(run, name)  # the rules of the loaders (tiecore.io.frames)
        ranking = Ranking.build(run, judgments, tiebreak="file_order", name=name)
        found = spread_arrays(ranking, judgments, measures, depth)
        return ranking, {(m, c): np.asarray(found[m][c]) for m, c in keys}

    def tidy(name: str, present: np.ndarray, flat: dict) -> Rows:
        chosen = np.ones(len(judgments.qids), bool) if complete else present
        found = {m: {c: flat[m, c] for c in SPREAD_COLUMNS} for m in measures}
        return _spread_rows(name, judgments.qids[chosen], found, chosen, per_query)

    def one_run(name: str, run: pd.DataFrame) -> Rows | PartValues:
        if Run.of(run).part is not None:  # a query partition, on a cluster
            return part_values(name, run, judgments, arrays)
        ranking, flat = arrays(name, run)
        return tidy(name, ranking.counts > 0, flat)

    def merge(name: str, parts: list[PartValues]) -> Rows:
        return tidy(name, *merge_parts(name, parts, dict.fromkeys(keys, ())))

    # One run at a time (paths read and dropped), or one task per run (or per query
    # partition of a big run) on a dask client.
    rows = map_runs(one_run, runs, client=client, progress=progress, merge=merge)
    if not rows:
        raise ValueError("no runs to evaluate")
    frame = Rows.frame(rows)
    frame["var_method"] = "exact"
    return frame


@validate_params({"depth": DEPTH})
def query_spread(
    ranking: Ranking,
    judgments: Judgments,
    measures: Measures,
    *,
    depth: int | None = None,
) -> dict[Measure, pd.DataFrame]:
    """Per-query aware value, exact variance, min and max of each measure.

    Returns
    -------
    dict
        Measure -> DataFrame indexed by qid (the judgments' order, every query)
        with columns ``value, var, min, max``.
    """
    index = pd.Index(judgments.qids, name="qid")
    found = spread_arrays(ranking, judgments, parse_measures(_as_list(measures)), depth)
    return {measure: pd.DataFrame(columns, index=index) for measure, columns in found.items()}


def spread_arrays(
    ranking: Ranking, judgments: Judgments, measures: list[Measure], depth: int | None
) -> dict[Measure, dict[str, np.ndarray]]:
    """:func:`query_spread` as arrays: only the tied groups with a slot above the cut
    carry variance and move the bounds, so only they are visited.

    ``min = fixed + sum_g worst_g`` (and ``max`` with ``best_g``) over those groups,
    ``fixed`` the head sum of every other row: summed directly, since ``value -
    sum_g mean_g`` cancels when one gain dwarfs the others (unscaled exp gains).
    """
    context = Context(ranking, judgments, depth)
    ties = context.select(np.flatnonzero(context.n > 1))  # the groups an order can move
    nq = len(judgments.qids)
    hooked: dict[kernels.HeadSum, dict[str, np.ndarray]] = {}
    for family, group in kernels.families(measures):
        assert family.spread is not None  # a family that is no head sum gives its spread
        found = family.spread(group, ranking, judgments, depth)
        hooked.update(zip(group, found, strict=True))
    out = {}
    for measure in measures:
        if measure in hooked:
            out[measure] = within_bounds(hooked[measure])
            continue
        recipe = kernels.plan(measure, judgments, depth, ranking)
        component = context.profile.component(recipe.component)
        tied = ties.select(np.flatnonzero(ties.slots(recipe) > 0))  # and above the cut
        moved = np.zeros(len(context.n), bool)
        moved[tied.selected] = True
        variance = np.bincount(
            tied.group_query, weights=_group_variance(recipe, tied), minlength=nq
        )
        # the head sum of the rows no order moves, summed apart (not as sums - mean_g)
        sums, fixed = kernels.head_sums_apart(component, recipe.divisor, ranking, recipe.cut, moved)
        bounds = recipe.family.bounds
        assert fixed is not None and bounds is not None  # moved given; a head sum's moments
        worst, best = bounds(tied, tied.slots(recipe), recipe)
        low, high = (
            kernels.finish(recipe, fixed + np.bincount(tied.group_query, weights=e, minlength=nq))
            for e in (worst, best)
        )
        out[measure] = within_bounds(
            {
                "value": kernels.finish(recipe, sums),
                "var": variance.astype(np.float64),
                "min": np.minimum(low, high),
                "max": np.maximum(low, high),
            }
        )
    return out


@validate_params(TIE_GROUPS)
def tie_groups(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measure: str | Measure,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    qid: str | None = None,
) -> pd.DataFrame:
    """Where one measure's variance comes from: one row per (query, tie group).

    Returns
    -------
    DataFrame
        ``qid``, ``group`` (1-based within the query), ``start_rank``,
        ``end_rank``, ``size``, ``relevant``, ``judged_nonrelevant``, ``gain``
        (sum of the group's gains, the measure's gain when it has one, linear
        otherwise), ``straddles_cutoff`` (the cut falls inside the group),
        ``var`` (the group's share of the query's variance, in value units;
        they add up to the query's variance) and ``var_share`` (``var`` over
        the query's variance, 0 when that is 0).

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": [2.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["c"], "level": [1]})
    >>> tie_groups(run, qrels, "P@2")[["start_rank", "size", "straddles_cutoff", "var"]]
       start_rank  size  straddles_cutoff     var
    0           1     1             False  0.0000
    1           2     2              True  0.0625
    """
    measure = parse_measures(measure)[0]
    if not measure.has_tie_groups:
        raise InputError(
            "measure",
            None,
            f"{measure}'s variance does not split by tie group (no sum of per-doc terms "
            "with an exact spread)",
            "a measure such as P@k, R@k, AP, RR, nDCG@k, DCG, RBP (Measure.has_tie_groups)",
        )
    judgments = Judgments.from_qrels(qrels, rel_level)
    if qid is not None:
        qid = str(qid)
        if qid not in set(judgments.qids):
            raise ValueError(f"query {qid!r} has no judgments in the qrels")
        run = run[run["qid"].astype(str) == qid]
        if run.empty:
            return _empty_groups()
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    context = Context(ranking, judgments, depth)
    recipe = kernels.plan(measure, judgments, depth, ranking)
    variance = _group_variance(recipe, context)
    gq = context.group_query
    total = np.bincount(gq, weights=variance, minlength=len(judgments.qids))[gq]
    share = np.zeros_like(variance)
    np.divide(variance, total, out=share, where=total > 0)
    first_group = ranking.group[ranking.starts[gq]]
    cut = recipe.cut[gq]
    gain = measure.gain if measure.gain in GAINS else "linear"
    with np.errstate(over="ignore"):  # not scaled (as the variance's gains): past 2**1023, inf
        gains = np.where(ranking.judged, gain_of(ranking.level, gain), 0.0)
        gain_total = group_sum(gains, ranking)
    frame = pd.DataFrame(
        {
            "qid": judgments.qids[gq].astype(str),
            "group": np.arange(len(gq)) - first_group + 1,
            "start_rank": context.t + 1,
            "end_rank": context.t + context.n,
            "size": context.n,
            "relevant": context.r,
            "judged_nonrelevant": ranking.nonrel_count,
            "gain": gain_total,
            "straddles_cutoff": (context.t < cut) & (context.t + context.n > cut),
            "var": variance,
            "var_share": share,
        }
    )
    return frame if qid is None else frame[frame["qid"] == qid].reset_index(drop=True)


@validate_params(TIE_PROFILE)
def tie_profile(
    run: pd.DataFrame,
    qrels: pd.DataFrame | None = None,
    measure: str | Measure | None = None,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    top: int | None = None,
) -> dict:
    """How tied a run is, and (given qrels and a measure) where its variance sits.

    Returns
    -------
    dict
        ``share_tied_rows``: rows whose score another doc of the same query
        shares; ``largest_group``; ``group_sizes``: Series size -> number of
        tie groups.  With ``qrels`` and ``measure`` also ``var_share_top``: share
        of the run's variance (summed over queries) carried by groups starting
        at rank ``<= top`` (default the measure's cutoff, else 10), and
        ``var_share_straddling``: share carried by groups the cut falls inside.
        Always ``float32_tied_rows`` and ``float32_tied_queries``: rows (and
        their queries) whose score equals another of the query's scores once
        rounded to float32 but not as given.  trec_eval 9 (and the default
        ``trec_eval`` tie-break) sees those ties; the aware and sampled modes
        take the scores as given.  A :class:`~tiecore.TieCoreWarning` says so
        when there are any.

    Examples
    --------
    >>> run = pd.DataFrame({"qid": ["1", "1", "1", "2"], "docno": list("abca"),
    ...                     "score": [1.0, 1.0, 0.0, 1.0]})
    >>> profile = tie_profile(run)
    >>> profile["share_tied_rows"], profile["largest_group"], profile["group_sizes"].to_dict()
    (0.5, 2, {1: 2, 2: 1})
    >>> profile["float32_tied_rows"], profile["float32_tied_queries"]
    (0, 0)
    """
    keys = pd.DataFrame({"qid": run["qid"].astype(str), "score": run["score"] + 0.0})
    sizes = keys.groupby(["qid", "score"], sort=False).size().to_numpy()
    counts = pd.Series(sizes).value_counts().sort_index()
    counts.index.name, counts.name = "size", "groups"
    query = pd.factorize(keys["qid"])[0]
    score = keys["score"].to_numpy(dtype=np.float64)
    order = np.lexsort((-score, query))
    rows, queries = extra_float32_ties(query[order], score[order])
    out = {
        "share_tied_rows": float(sizes[sizes > 1].sum() / max(len(run), 1)),
        "largest_group": int(sizes.max(initial=0)),
        "group_sizes": counts,
        "float32_tied_rows": rows,
        "float32_tied_queries": queries,
    }
    if rows:
        name = run_name(run)
        warnings.warn(
            f"run {name}: {rows} rows in {queries} queries have scores that differ but are "
            "equal in float32; trec_eval 9 (and the trec_eval tie-break) ties them, the aware "
            "and sampled modes do not",
            TieCoreWarning,
            stacklevel=2,
        )
    if qrels is not None and measure is not None:
        measure = parse_measures(measure)[0]
        top = top if top is not None else (measure.cutoff or 10)
        groups = tie_groups(run, qrels, measure, rel_level=rel_level, depth=depth)
        total = groups["var"].sum()
        above = groups.loc[groups["start_rank"] <= top, "var"].sum()
        straddling = groups.loc[groups["straddles_cutoff"], "var"].sum()
        out["var_share_top"] = float(above / total) if total > 0 else 0.0
        out["var_share_straddling"] = float(straddling / total) if total > 0 else 0.0
    return out


@validate_params(TIE_GROUPS)
def distribution(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measure: str | Measure,
    qid: str,
    *,
    rel_level: int = 1,
    depth: int | None = None,
) -> pd.DataFrame:
    """Exact distribution of one query's value over random tie-breaks.

    For P@k, R@k, F1@k, Rprec, SetP, SetR, SetF and NumRelRet (a hypergeometric
    count in the group the cut falls inside), Success@k (Bernoulli) and RR(@k) (the first relevant
    position in the first group holding a relevant doc).

    Returns
    -------
    DataFrame
        ``value, probability``, values ascending, probabilities > 0 summing to 1.

    Raises
    ------
    ValueError
        For another measure family, or a query without judgments.

    Examples
    --------
    >>> run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": [1.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": "1", "docno": ["c"], "level": [1]})
    >>> distribution(run, qrels, "RR@2", "1").round(4)
       value  probability
    0    0.0       0.3333
    1    0.5       0.3333
    2    1.0       0.3333
    """
    measure = parse_measures(measure)[0]
    if measure.spec.distribution is None:
        raise ValueError(
            f"no exact distribution for {measure}: only for {', '.join(DISTRIBUTION_FAMILIES)}"
        )
    qid = str(qid)
    qrels = qrels[qrels["qid"].astype(str) == qid]
    if qrels.empty:
        raise ValueError(f"query {qid!r} has no judgments in the qrels")
    judgments = Judgments.from_qrels(qrels, rel_level)
    run = run[run["qid"].astype(str) == qid]
    if run.empty:
        return _as_distribution(np.zeros(1), np.ones(1))
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    recipe = kernels.plan(measure, judgments, depth, ranking)  # SetP's denominator: retrieved
    if recipe.denominator[0] <= 0:
        return _as_distribution(np.zeros(1), np.ones(1))
    context = Context(ranking, judgments, depth)
    values, probability = measure.spec.distribution(context, context.slots(recipe))
    factor = recipe.scale / recipe.denominator[0]
    return _as_distribution(recipe.offset + values * factor, probability)


def _as_distribution(values: np.ndarray, probability: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame({"value": values, "probability": probability})
    frame = frame.groupby("value", as_index=False, sort=True)["probability"].sum()
    return frame[frame["probability"] > 0].reset_index(drop=True)


def _group_variance(recipe: kernels.Plan, context: Context) -> np.ndarray:
    """Variance each tie group adds to each query's value (value units): the family's
    variance hook of the head sum, times ``(scale / denominator)**2``."""
    variance = recipe.family.variance
    assert variance is not None  # a head sum's family has its moments
    var = variance(context, context.slots(recipe), recipe)
    denominator = recipe.denominator[context.group_query].astype(np.float64)
    factor = np.zeros_like(denominator)
    np.divide(recipe.scale, denominator, out=factor, where=denominator > 0)
    return np.maximum(var, 0.0) * factor * factor


# ---------------------------------------------------------------------- helpers


def _as_list(measures: Measures) -> str | Measure | list:
    return measures if isinstance(measures, str | Measure) else list(measures)


def _spread_rows(name, qids, found, chosen, per_query) -> Rows:
    """Rows ``qid, measure, value, var, min, max``: queries, then the summary (``qid``
    NA); :func:`evaluate_spread` makes one DataFrame of all runs' rows."""
    count = int(chosen.sum())
    columns: dict[str, list] = {key: [] for key in SPREAD_COLUMNS}
    for frame in found.values():
        for key, parts in columns.items():
            column = np.asarray(frame[key])[chosen]
            if key == "var":  # the queries' orderings are independent
                summary = column.sum() / count**2 if count else 0.0
            else:
                summary = column.mean() if count else 0.0
            parts.append(np.append(column, summary) if per_query else np.array([summary]))
    rows = count + 1 if per_query else 1
    labels = np.append(qids.astype(object), [None]) if per_query else np.array([None])
    out = {
        "qid": np.tile(labels.astype(object), len(found)),
        "measure": np.repeat(np.array([str(m) for m in found], dtype=object), rows),
    }
    return Rows(name, out | {key: np.concatenate(parts) for key, parts in columns.items()})


def _empty_groups() -> pd.DataFrame:
    columns = ["qid", "group", "start_rank", "end_rank", "size", "relevant"]
    columns += ["judged_nonrelevant", "gain", "straddles_cutoff", "var", "var_share"]
    return pd.DataFrame({column: [] for column in columns})
