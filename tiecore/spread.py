"""Spread of each query's value under uniformly random tie-breaking.

The tie-aware value is the mean over all orderings of the tie groups; this module
gives the rest of that picture: the exact variance, the bounds (min and max over
all orderings), the exact distribution of the count-like measures, and which tie
groups the variance comes from.

Every measure is ``scale * S / denominator`` with ``S`` a head sum of per-position
terms (:mod:`tiecore.kernels`).  The groups are shuffled independently and the
terms of a group depend on its own order alone (the relevant docs ``R`` and
judged non-relevant docs ``A`` ranked above it are counts, the same in every
order), so ``S = sum_g S_g`` with independent ``S_g`` and
``Var S = sum_g Var S_g``.  A group has ``n`` docs, ``r`` relevant, ``m`` judged
non-relevant, starts after ``t`` docs, and ``d = clip(cut - t, 0, n)`` of its
slots count (``cut`` is the measure's cutoff and the depth); ``x_i`` flags a
relevant doc at its 0-based position ``i``, a uniformly random ``r``-subset.

* P, R, F1, Rprec: ``S_g`` relevant docs in ``d`` slots, hypergeometric:
  ``d r/n (1 - r/n) (n - d)/(n - 1)``.
* Success: Bernoulli on the first group holding a relevant doc.
* RR: ``E[1/J^2] - E[1/J]^2`` for the first relevant rank ``J`` (0 past the cut).
* DCG: ``sum_i a_pi(i) w_i`` is a linear permutation statistic:
  ``sum (a - mean a)^2 sum (w - mean w)^2 / (n - 1)``.
* AP: ``S_g = sum_i w_i x_i (R + 1 + sum_{j<i} x_j)``, a quadratic form in the
  ``x``; its second moment needs ``E[x_i x_j ...] = r^(k) / n^(k)`` (falling
  factorials) for 1 to 4 distinct positions, and per-group sums of the weights.
* Bpref: ``S_g = sum_{relevant u above the cut} f(A + b_u)`` with
  ``f(y) = 1 - min(y, R*) / min(N, R*)``.  Given ``K`` relevant and ``L`` judged
  non-relevant docs above the cut, each ``b_u`` is uniform on ``0..L`` and a pair
  ``(b_u, b_v)`` is uniform on ``0 <= x <= y <= L``; ``L`` is hypergeometric and
  ``K | L`` too, which gives ``E[S_g^2]`` as one sum over ``L``.

The bounds are the values of the optimistic and pessimistic orders (relevant and
higher-gain docs first, or last, inside every group), which the tests check
against every ordering.  Every variance here is exact (``var_method`` "exact").
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special, stats

from tiecore import kernels, profiles
from tiecore._parallel import map_runs
from tiecore.errors import TieCoreWarning
from tiecore._evaluate import Runs, check_depth
from tiecore.frames import check_run
from tiecore.judgments import Judgments, gain_of
from tiecore.measures import Measure, parse_measures
from tiecore.profiles import Profile
from tiecore.ranking import Ranking, extra_float32_ties

#: Measure families whose exact distribution :func:`distribution` gives.
DISTRIBUTION_FAMILIES = ("P", "R", "F1", "Rprec", "Success", "RR")

Measures = str | Measure | Sequence[str | Measure]


# ------------------------------------------------------------------ public API


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
    check_depth(depth)
    measures = parse_measures(_as_list(measures))
    judgments = Judgments.from_qrels(qrels, rel_level)

    def one_run(name: str, run: pd.DataFrame) -> pd.DataFrame:
        run = check_run(run, name)  # the rules of the loaders (tiecore.frames)
        ranking = Ranking.build(run, judgments, tiebreak="file_order", name=name)
        found = _spread_arrays(ranking, judgments, measures, depth)
        chosen = np.ones(len(judgments.qids), bool) if complete else ranking.counts > 0
        return _tidy(name, judgments.qids[chosen], found, chosen, per_query)

    # One run at a time (paths read and dropped), or one task per run on a dask client.
    frames = map_runs(one_run, runs, client=client, progress=progress)
    if not frames:
        raise ValueError("no runs to evaluate")
    return pd.concat(frames, ignore_index=True)


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
    check_depth(depth)
    index = pd.Index(judgments.qids, name="qid")
    found = _spread_arrays(ranking, judgments, parse_measures(_as_list(measures)), depth)
    return {measure: pd.DataFrame(columns, index=index) for measure, columns in found.items()}


def _spread_arrays(
    ranking: Ranking, judgments: Judgments, measures: list[Measure], depth: int | None
) -> dict[Measure, dict[str, np.ndarray]]:
    """:func:`query_spread` as arrays: only the tied groups with a slot above the cut
    carry variance and move the bounds, so only they are visited.

    ``min = value + sum_g (worst_g - mean_g)`` (and ``max`` with ``best_g``) over
    those groups, ``mean_g`` a group's aware share of the head sum.
    """
    context = _Context(ranking, judgments, depth)
    nq = len(judgments.qids)
    out = {}
    for measure in measures:
        recipe = kernels.plan(measure, judgments, depth)
        component = context.profile.component(recipe.component)
        sums = kernels.weighted_head_sums(component, recipe.weight, ranking, recipe.cut)
        live = np.flatnonzero((context.slots(recipe) > 0) & (context.n > 1))
        tied = context.select(live)
        variance = np.bincount(
            tied.group_query, weights=_group_variance(measure, recipe, tied), minlength=nq
        )
        head = tied.head(tied.slots(recipe))
        weight = 1.0 if recipe.weight == "one" else context.divisor(recipe.weight)[head.rows]
        mean = head.sum(component[head.rows] / weight)
        worst, best = _group_bounds(measure, recipe, tied)
        shift = [
            np.bincount(tied.group_query, weights=extreme - mean, minlength=nq)
            for extreme in (worst, best)
        ]
        out[measure] = {
            "value": kernels.finish(recipe, sums),
            "var": variance.astype(np.float64),
            "min": kernels.finish(recipe, sums + shift[0]),
            "max": kernels.finish(recipe, sums + shift[1]),
        }
    return out


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
        (sum of the group's gains, the measure's gain for nDCG, linear
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
    check_depth(depth)
    measure = parse_measures(measure)[0]
    judgments = Judgments.from_qrels(qrels, rel_level)
    if qid is not None:
        qid = str(qid)
        if qid not in set(judgments.qids):
            raise ValueError(f"query {qid!r} has no judgments in the qrels")
        run = run[run["qid"].astype(str) == qid]
        if run.empty:
            return _empty_groups()
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    context = _Context(ranking, judgments, depth)
    recipe = kernels.plan(measure, judgments, depth)
    variance = _group_variance(measure, recipe, context)
    gq = context.group_query
    total = np.bincount(gq, weights=variance, minlength=len(judgments.qids))[gq]
    share = np.zeros_like(variance)
    np.divide(variance, total, out=share, where=total > 0)
    first_group = ranking.group[ranking.starts[gq]]
    cut = recipe.cut[gq]
    gain = measure.gain if measure.family == "nDCG" else "linear"
    with np.errstate(over="ignore"):  # not scaled (as the variance's gains): past 2**1023, inf
        gains = np.where(ranking.judged, gain_of(ranking.level, gain), 0.0)
        gain_total = _group_sum(gains, ranking)
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
        name = run.attrs.get("name") or "run"
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

    For P@k, R@k, F1@k and Rprec (a hypergeometric count in the group the cut
    falls inside), Success@k (Bernoulli) and RR(@k) (the first relevant
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
    check_depth(depth)
    measure = parse_measures(measure)[0]
    if measure.family not in DISTRIBUTION_FAMILIES:
        raise ValueError(
            f"no exact distribution for {measure}: only for {', '.join(DISTRIBUTION_FAMILIES)}"
        )
    qid = str(qid)
    qrels = qrels[qrels["qid"].astype(str) == qid]
    if qrels.empty:
        raise ValueError(f"query {qid!r} has no judgments in the qrels")
    judgments = Judgments.from_qrels(qrels, rel_level)
    run = run[run["qid"].astype(str) == qid]
    recipe = kernels.plan(measure, judgments, depth)
    if run.empty or recipe.denominator[0] <= 0:
        return _as_distribution(np.zeros(1), np.ones(1))
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    context = _Context(ranking, judgments, depth)
    d = context.slots(recipe)
    if measure.family == "RR":
        values, probability = _first_rank_distribution(context, d)
    elif measure.family == "Success":
        hit = np.where(_first_groups(context), 1.0 - _miss_probability(context, d), 0.0).sum()
        values, probability = np.array([0.0, 1.0]), np.array([1.0 - hit, hit])
    else:
        values, probability = _count_distribution(context, d)
    factor = recipe.scale / recipe.denominator[0]
    return _as_distribution(values * factor, probability)


# ------------------------------------------------------------ shared group facts


@dataclass
class _Context:
    """One ranking's tie groups with the facts every variance needs."""

    ranking: Ranking
    judgments: Judgments
    depth: int | None
    profile: Profile = field(init=False)
    _gain_sums: dict = field(default_factory=dict, init=False)
    _tables: dict = field(default_factory=dict, init=False)
    _levels: tuple | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        ranking = self.ranking
        self.profile = profiles.aware(ranking, self.judgments, self.depth)
        self.group_query = ranking.group_query
        self.t = ranking.offset
        self.n = ranking.size
        self.r = ranking.rel_count
        self.m = ranking.nonrel_count
        self.R = ranking.rel_before
        self.A = ranking.nonrel_before
        self.position = ranking.position
        self.group_start = ranking.group_start
        self.selected = None  # a selection's groups among all (None: all of them)
        self._root = self
        num_rel = self.judgments.num_rel
        # Bpref's f(y) = 1 - min(y, cap) / scale per query; trec_eval's 1 when y = 0
        self.cap = num_rel[self.group_query]
        self.bpref_scale = np.maximum(profiles.bpref_denominator(ranking, self.judgments), 1.0)[
            self.group_query
        ]

    def divisor(self, weight: str) -> np.ndarray:
        """Per row the rank weight ``w(rank)`` of :func:`kernels.weighted` (cached)."""
        if weight not in self._tables:
            rank = self.ranking.rank
            self._tables[weight] = rank * 1.0 if weight == "rank" else np.log2(rank + 1.0)
        return self._tables[weight]

    def slots(self, recipe: kernels.Plan) -> np.ndarray:
        """Per group, how many of its slots are above the cut: ``clip(cut - t, 0, n)``."""
        key = ("slots", recipe.cut.tobytes())
        if key not in self._tables:
            d = recipe.cut[self.group_query] - self.t
            self._tables[key] = np.minimum(np.maximum(d, 0, out=d), self.n, out=d)
        return self._tables[key]

    def select(self, groups: np.ndarray) -> _Context:
        """The same context restricted to some groups (indices into this one's groups).

        Per-row tables are shared; per-group arrays and caches are taken at ``groups``.
        """
        out = copy.copy(self)
        for name in _PER_GROUP:
            setattr(out, name, getattr(self, name)[groups])
        out.selected = groups if self.selected is None else self.selected[groups]
        out._tables = {k: v for k, v in self._tables.items() if not isinstance(k, tuple)}
        out._gain_sums = {k: (a[groups], b[groups]) for k, (a, b) in self._gain_sums.items()}
        if self._levels is not None:
            out._levels = (self._levels[0][groups], self._levels[1])
        return out

    def row_gains(self, gain: str) -> np.ndarray:
        """Gain of every row (0 for unjudged docs; exp gains scaled per query)."""
        return profiles.row_gains(self.ranking, self.judgments, gain)

    def gain_sums(self, gain: str) -> tuple[np.ndarray, np.ndarray]:
        """Per group ``sum a`` and ``sum a**2`` of its docs' gains."""
        if gain not in self._gain_sums:
            if self.selected is not None:
                total, square = self._root.gain_sums(gain)
                self._gain_sums[gain] = (total[self.selected], square[self.selected])
            else:
                a = self.row_gains(gain)
                self._gain_sums[gain] = (
                    _group_sum(a, self.ranking),
                    _group_sum(a * a, self.ranking),
                )
        return self._gain_sums[gain]

    def prefix(self, weight: str) -> np.ndarray:
        """``P(k) = sum_{j=1}^{k} 1 / w(j)`` for ``k = 0 .. longest ranking`` (cached)."""
        key = f"prefix:{weight}"
        if key not in self._tables:
            rank = np.arange(1.0, int(self.ranking.counts.max(initial=0)) + 1)
            divisor = rank if weight == "rank" else np.log2(rank + 1.0)
            self._tables[key] = np.concatenate(([0.0], np.cumsum(1.0 / divisor)))
        return self._tables[key]

    def level_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Docs per (group, gain level), levels ascending: ``(groups, levels)`` and the levels.

        A gain level is ``max(level, 0)`` of a judged doc, 0 of an unjudged one.
        """
        if self._levels is None and self.selected is not None:
            counts, values = self._root.level_counts()
            self._levels = (counts[self.selected], values)
        if self._levels is None:
            ranking = self.ranking
            level = np.where(ranking.judged, np.maximum(ranking.level, 0), 0)
            top = int(level.max(initial=0))
            if top < 64:
                code, values = level, np.arange(top + 1)
            else:
                code, values = pd.factorize(level, sort=True)
            width = len(values)
            counts = np.bincount(ranking.group * width + code, minlength=len(self.n) * width)
            self._levels = (counts.reshape(len(self.n), width), np.asarray(values))
        return self._levels

    def bpref_term(self, judged_above: np.ndarray) -> np.ndarray:
        """Per group ``f(y) = 1 - min(y, R*) / min(N, R*)`` (1 when ``N = 0``)."""
        return 1.0 - np.minimum(judged_above, self.cap) / self.bpref_scale

    def head(self, d: np.ndarray) -> _Head:
        """The rows of every group's first ``d`` slots."""
        if self.selected is None and np.array_equal(d, self.n):
            every = np.arange(len(d))
            return _Head(slice(None), self.ranking.group, every, self.group_start, len(d))
        return _Head.of(self.group_start, d)


#: The per-group arrays of a :class:`_Context`, taken at a selection's groups.
_PER_GROUP = ("group_query", "t", "n", "r", "m", "R", "A", "group_start", "cap", "bpref_scale")


@dataclass
class _Head:
    """Rows in the first ``d`` slots of each group, grouped for per-group sums."""

    rows: np.ndarray | slice
    owner: np.ndarray  # group of each row
    run_owner: np.ndarray  # the groups with rows
    run_start: np.ndarray  # their first row (in ``rows``)
    groups: int

    @classmethod
    def of(cls, group_start: np.ndarray, d: np.ndarray) -> _Head:
        owner, rows = _expand(group_start, d)
        some = np.flatnonzero(d > 0)
        return cls(rows, owner, some, (np.cumsum(d) - d)[some], len(d))

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Per group sum of ``values`` (one per head row)."""
        out = np.zeros(self.groups)
        if values.size:
            out[self.run_owner] = np.add.reduceat(values, self.run_start)
        return out


def _expand(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``owner`` and ``starts[owner] + 0..lengths[owner]-1``, concatenated."""
    owner = np.repeat(np.arange(len(starts)), lengths)
    within = np.arange(owner.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return owner, starts[owner] + within


def _group_sum(values: np.ndarray, ranking: Ranking) -> np.ndarray:
    return np.add.reduceat(values, ranking.group_start) if len(values) else values[:0]


# ------------------------------------------------------------------- variances


def _group_variance(measure: Measure, recipe: kernels.Plan, context: _Context) -> np.ndarray:
    """Variance each tie group adds to each query's value (value units)."""
    d = context.slots(recipe)
    component = recipe.component
    if component == "rel":
        var = _var_count(context, d)
    elif component == "first":
        var = _var_rr(context, d) if recipe.weight == "rank" else _var_success(context, d)
    elif component == "ap":
        var = _var_ap(context, d)
    elif component == "bpref":
        var = _var_bpref(context, d)
    else:
        var = _var_dcg(context, d, measure.gain)
    denominator = recipe.denominator[context.group_query].astype(np.float64)
    factor = np.zeros_like(denominator)
    np.divide(recipe.scale, denominator, out=factor, where=denominator > 0)
    return np.maximum(var, 0.0) * factor * factor


def _var_count(context: _Context, d: np.ndarray) -> np.ndarray:
    """Relevant docs in ``d`` of ``n`` slots: ``d r (n - r) (n - d) / (n^2 (n - 1))``."""
    n, r = context.n.astype(np.float64), context.r.astype(np.float64)
    out = np.zeros_like(n)
    np.divide(d * r * (n - r) * (n - d), n * n * (n - 1), out=out, where=n > 1)
    return out


def _first_groups(context: _Context) -> np.ndarray:
    """Per query, the group holding its first relevant doc (boolean per group)."""
    return (context.R == 0) & (context.r > 0)


def _miss_probability(context: _Context, d: np.ndarray) -> np.ndarray:
    """P(no relevant doc in the first ``d`` slots) of first groups, 0 elsewhere.

    ``C(n - r, d) / C(n, d)``; 1 when ``d = 0``, 0 when ``d > n - r``.
    """
    n, r = context.n, context.r
    live = _first_groups(context) & (d > 0) & (d <= n - r)
    out = np.where(_first_groups(context) & (d == 0), 1.0, 0.0)
    n, r, dl = n[live], r[live], d[live]
    out[live] = np.exp(
        special.gammaln(n - r + 1)
        - special.gammaln(n - r - dl + 1)
        - special.gammaln(n + 1)
        + special.gammaln(n - dl + 1)
    )
    return out


def _var_success(context: _Context, d: np.ndarray) -> np.ndarray:
    """Bernoulli: ``q (1 - q)`` with ``q`` the chance of no relevant doc above the cut."""
    q = _miss_probability(context, d)
    return np.where(_first_groups(context), q * (1.0 - q), 0.0)


def _var_rr(context: _Context, d: np.ndarray) -> np.ndarray:
    """``E[W^2] - E[W]^2``, ``W = 1/rank`` of the first relevant doc (0 past the cut).

    The first relevant doc sits at position ``p`` with the aware profile's
    probability ``C(n-1-p, r-1) / C(n, r)``; only the first group can move it.
    """
    first = _first_groups(context) & (context.r < context.n)
    reach = np.where(first, np.minimum(d, context.n - context.r + 1), 0)
    owner, rows = _expand(context.group_start, reach)
    w = 1.0 / context.ranking.rank[rows]
    chance = context.profile.first[rows]
    size = len(context.n)
    mean = np.bincount(owner, weights=chance * w, minlength=size)
    square = np.bincount(owner, weights=chance * w * w, minlength=size)
    return np.where(first, square - mean * mean, 0.0)


def _var_dcg(context: _Context, d: np.ndarray, gain: str) -> np.ndarray:
    """Linear permutation statistic ``sum_i a_pi(i) w_i`` of each group.

    ``Var = sum (a - mean a)^2 * sum (w - mean w)^2 / (n - 1)`` with ``w`` the
    discounts ``1/log2(rank + 1)`` of the group's slots, 0 below the cut.
    """
    n = context.n.astype(np.float64)
    total, square = context.gain_sums(gain)
    spread_a = np.zeros_like(n)
    np.subtract(square, total * total / n, out=spread_a, where=n > 1)
    d = np.where(spread_a > 0, d, 0)  # groups of equal gains add nothing
    head = context.head(d)
    w = 1.0 / context.divisor("log2")[head.rows]
    mean_w = head.sum(w) / n
    deviation = w - mean_w[head.owner]
    spread_w = head.sum(deviation * deviation) + (n - d) * mean_w * mean_w
    out = np.zeros_like(n)
    np.divide(spread_a * spread_w, n - 1, out=out, where=(n > 1) & (d > 0))
    return out


def _falling_ratio(r: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """``r (r-1) ... (r-k+1) / (n (n-1) ... (n-k+1))``: P(k given slots all relevant)."""
    top = np.ones(len(r))
    bottom = np.ones(len(r))
    for j in range(k):
        top *= np.maximum(r - j, 0)
        bottom *= np.maximum(n - j, 1)
    return np.where(n >= k, top / bottom, 0.0)


def _var_ap(context: _Context, d: np.ndarray) -> np.ndarray:
    """Variance of the AP head sum ``S = (R+1) sum_i w_i x_i + sum_{j<i} w_i x_i x_j``.

    With ``w_i = 1/rank`` above the cut (0 below), ``T = sum_i i w_i``,
    ``V_m = m w_m + sum_{i>m} w_i`` (the weight of the pairs holding ``m``) and
    ``mu_k`` the falling-factorial ratios, the first two moments of ``S`` are
    ``E S = (R+1) mu_1 sum w + mu_2 T`` and ``E S^2 = E A^2 + 2 E AB + E B^2``:
    ``E A^2 = (R+1)^2 (mu_1 sum w^2 + mu_2 ((sum w)^2 - sum w^2))``,
    ``E AB = (R+1) (mu_3 T sum w + (mu_2 - mu_3) (sum i w^2 + ((sum w)^2 - sum w^2)/2))``,
    ``E B^2 = mu_4 T^2 + (mu_3 - mu_4) (sum V^2 - sum i w^2) + (mu_2 - mu_3) sum i w^2``
    (pairs of pairs sharing 0, 1 or 2 positions).
    """
    n, r = context.n.astype(np.float64), context.r.astype(np.float64)
    head = context.head(np.where((context.r > 0) & (context.r < context.n), d, 0))
    i = context.position[head.rows].astype(np.float64)
    rank = context.ranking.rank[head.rows]
    w = 1.0 / rank
    iw = i * w
    sum_w, sum_w2 = head.sum(w), head.sum(w * w)
    big_t, sum_iw2 = head.sum(iw), head.sum(iw * w)
    harmonic = context.prefix("rank")
    v = iw + harmonic[(context.t + d)[head.owner]] - harmonic[rank]  # + sum_{i>m} w_i
    sum_v2 = head.sum(v * v)
    mu1, mu2, mu3, mu4 = (_falling_ratio(r, n, k) for k in (1, 2, 3, 4))
    c = context.R + 1.0
    pairs = sum_w * sum_w - sum_w2
    e_a2 = c * c * (mu1 * sum_w2 + mu2 * pairs)
    e_ab = c * (mu3 * big_t * sum_w + (mu2 - mu3) * (sum_iw2 + pairs / 2))
    e_b2 = mu4 * big_t * big_t + (mu3 - mu4) * (sum_v2 - sum_iw2) + (mu2 - mu3) * sum_iw2
    mean = c * mu1 * sum_w + mu2 * big_t
    return e_a2 + 2 * e_ab + e_b2 - mean * mean


def _sum_min_sq(y: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``sum_{z=0}^{y} min(z, cap)**2`` (0 for ``y < 0``)."""
    low = np.clip(y, 0, cap).astype(np.float64)
    tail = np.maximum(y - cap, 0) * cap.astype(np.float64) ** 2
    return np.where(y < 0, 0.0, low * (low + 1) * (2 * low + 1) / 6 + tail)


def _bpref_moments(k1, k2, ell, a, cap, scale) -> tuple[np.ndarray, np.ndarray]:
    """``E[S | L]`` and ``E[S^2 | L]`` of a group's Bpref terms.

    ``k1 = E[K | L]``, ``k2 = E[K (K-1) | L]`` for ``K`` relevant and ``L = ell``
    judged non-relevant docs above the cut, after ``a`` judged non-relevant
    docs above the group.  With ``F1 = sum_{x=0}^{L} f(a + x)`` and ``F2`` the
    same of ``f^2``: ``E[S | K, L] = K F1 / (L + 1)`` and
    ``E[S^2 | K, L] = K F2 / (L + 1) + K (K - 1) (F1^2 + F2) / ((L + 1)(L + 2))``.
    """
    mins = profiles.sum_min(a + ell, cap) - profiles.sum_min(a - 1, cap)
    squares = _sum_min_sq(a + ell, cap) - _sum_min_sq(a - 1, cap)
    count = ell + 1.0
    f1 = count - mins / scale
    f2 = count - 2 * mins / scale + squares / (scale * scale)
    mean = k1 * f1 / count
    second = k1 * f2 / count + k2 * (f1 * f1 + f2) / (count * (count + 1))
    return mean, second


def _var_bpref(context: _Context, d: np.ndarray) -> np.ndarray:
    """Variance of a group's Bpref terms; see :func:`_bpref_moments`.

    Whole groups above the cut have ``K = r`` and ``L = m``.  In the group the
    depth cuts, ``L ~ Hypergeom(n, m, d)`` and ``K | L ~ Hypergeom(n - m, r, d - L)``:
    one term per possible ``L``.
    """
    n, r, m = context.n, context.r, context.m
    whole = (d == n) & (r > 0) & (r < n) & (m > 0)
    out = np.zeros(len(n))
    mean, second = _bpref_moments(
        r[whole], r[whole] * (r[whole] - 1.0), m[whole],
        context.A[whole], context.cap[whole], context.bpref_scale[whole],
    )  # fmt: skip
    out[whole] = second - mean * mean
    cut = np.flatnonzero((d > 0) & (d < n) & (r > 0))
    if cut.size == 0:
        return out
    low = np.maximum(0, d[cut] - (n[cut] - m[cut]))
    high = np.minimum(d[cut], m[cut])
    owner, ell = _expand(low, high - low + 1)
    g = cut[owner]
    chance = stats.hypergeom.pmf(ell, n[g], m[g], d[g])
    rest, draws = (n[g] - m[g]).astype(np.float64), (d[g] - ell).astype(np.float64)
    rg = r[g].astype(np.float64)
    k1 = draws * rg / rest
    k2 = np.zeros_like(k1)
    np.divide(draws * (draws - 1) * rg * (rg - 1), rest * (rest - 1), out=k2, where=rest > 1)
    mean, second = _bpref_moments(k1, k2, ell, context.A[g], context.cap[g], context.bpref_scale[g])
    mean = np.bincount(owner, weights=chance * mean, minlength=cut.size)
    second = np.bincount(owner, weights=chance * second, minlength=cut.size)
    out[cut] = second - mean * mean
    return out


# ---------------------------------------------------------------------- bounds


def _group_bounds(measure: Measure, recipe: kernels.Plan, context: _Context) -> tuple:
    """Per group the lowest and highest head sum of its terms: pessimistic and optimistic.

    Optimistic puts each group's relevant docs (and higher gains) first,
    pessimistic last, as ``Ranking.build(..., tiebreak=...)`` does.  Each
    group's terms then sum in closed form over blocks of slots with the
    prefix sums ``P(k) = sum_{j<=k} 1/w(j)`` of the rank weight: the ``r``
    relevant docs of a group take slots ``0..r-1`` (best) or ``n-r..n-1``
    (worst), ``top = min(d, r)`` or ``bottom = max(0, d - (n - r))`` of them
    above the cut.  AP: ``sum_{i<k} (R + 1 + i) / (t + 1 + i) = k + (R - t)
    (P(t + k) - P(t))``; DCG: each level's block of equal gains.  Returns
    ``(worst, best)``, the sums of ``c_j / w(j)`` over the group's slots above the
    cut (0 for a group with none).
    """
    d = context.slots(recipe)
    t, n, r, big_r = context.t, context.n, context.r, context.R
    gap = n - r
    top, bottom = np.minimum(d, r), np.maximum(d - gap, 0)
    component = recipe.component
    if component == "rel":
        best, worst = top, bottom
    elif component == "ap":
        harmonic = context.prefix("rank")
        best = top + (big_r - t) * (harmonic[t + top] - harmonic[t])
        worst = bottom + (big_r - gap - t) * (harmonic[t + d] - harmonic[t + d - bottom])
    elif component == "first":
        lead = (r > 0) & (big_r == 0)
        best, worst = (lead & (top > 0)) * 1.0, (lead & (bottom > 0)) * 1.0
        if recipe.weight == "rank":
            best, worst = best / (t + 1.0), worst / (t + gap + 1.0)
    elif component == "bpref":
        best = top * context.bpref_term(context.A)
        worst = bottom * context.bpref_term(context.A + context.m)
    else:
        counts, levels = context.level_counts()
        shift = context.judgments.gain_shift(measure.gain)[context.group_query, None]
        grid = levels[None, :]
        if measure.gain == "exp":  # levels above a query's largest have no docs in its groups
            grid = np.minimum(grid, shift)
        gains = gain_of(grid, measure.gain, shift)  # (groups, levels)
        below = np.cumsum(counts, axis=1) - counts  # first slot of each level, ascending
        worst = _block_sums(context, t, d, gains, below, below + counts)
        best = _block_sums(context, t, d, gains, n[:, None] - below - counts, n[:, None] - below)
    return worst * 1.0, best * 1.0


def _block_sums(context: _Context, t, d, gains, low, high) -> np.ndarray:
    """Per group ``sum_level gain * (D(t + min(high, d)) - D(t + min(low, d)))``.

    ``low, high``: each level's slots ``[low, high)`` in the group (one column
    per level); ``gains`` the group's gain of each level; ``D`` the prefix sums
    of the DCG discount.
    """
    discount = context.prefix("log2")
    t, cut = t[:, None], d[:, None]
    block = discount[t + np.minimum(high, cut)] - discount[t + np.minimum(low, cut)]
    if gains.shape[0] == 1:  # the same gains for every group (linear)
        return block @ gains[0]
    return np.einsum("gl,gl->g", block, gains)


# ---------------------------------------------------------------- distributions


def _count_distribution(context: _Context, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relevant docs above the cut: whole groups fixed, the cut group hypergeometric."""
    n, r = context.n, context.r
    fixed = r[d == n].sum()
    cut = np.flatnonzero((d > 0) & (d < n))
    if cut.size == 0:
        return np.array([float(fixed)]), np.ones(1)
    (g,) = cut  # one query: the cut falls inside at most one group
    support = np.arange(max(0, d[g] - (n[g] - r[g])), min(d[g], r[g]) + 1)
    return (fixed + support).astype(np.float64), stats.hypergeom.pmf(support, n[g], r[g], d[g])


def _first_rank_distribution(context: _Context, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``1/rank`` of the first relevant doc (0 when past the cut or never)."""
    first = np.flatnonzero(_first_groups(context))
    if first.size == 0:
        return np.zeros(1), np.ones(1)
    (g,) = first
    rows = context.group_start[g] + np.arange(context.n[g] - context.r[g] + 1)
    rank = context.ranking.rank[rows]
    values = np.where(rank <= context.t[g] + d[g], 1.0 / rank, 0.0)
    return values, context.profile.first[rows]


def _as_distribution(values: np.ndarray, probability: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame({"value": values, "probability": probability})
    frame = frame.groupby("value", as_index=False, sort=True)["probability"].sum()
    return frame[frame["probability"] > 0].reset_index(drop=True)


# ---------------------------------------------------------------------- helpers


def _as_list(measures: Measures) -> str | Measure | list:
    return measures if isinstance(measures, str | Measure) else list(measures)


def _tidy(name, qids, found, chosen, per_query) -> pd.DataFrame:
    """Rows ``run, qid, measure, value, var, min, max, var_method``: queries, then the
    summary (``qid`` NA)."""
    count = int(chosen.sum())
    columns: dict[str, list] = {key: [] for key in ("value", "var", "min", "max")}
    for frame in found.values():
        for key, parts in columns.items():
            column = np.asarray(frame[key])[chosen]
            if key == "var":
                summary = column.sum() / count**2 if count else 0.0
            else:
                summary = column.mean() if count else 0.0
            parts.append(np.append(column, summary) if per_query else np.array([summary]))
    rows = count + 1 if per_query else 1
    labels = np.append(qids.astype(object), None) if per_query else np.array([None])
    out = {
        "run": np.full(rows * len(found), name, dtype=object),
        "qid": np.tile(labels.astype(object), len(found)),
        "measure": np.repeat(np.array([str(m) for m in found], dtype=object), rows),
    }
    out |= {key: np.concatenate(parts) for key, parts in columns.items()}
    out["var_method"] = "exact"
    return pd.DataFrame(out)


def _empty_groups() -> pd.DataFrame:
    columns = ["qid", "group", "start_rank", "end_rank", "size", "relevant"]
    columns += ["judged_nonrelevant", "gain", "straddles_cutoff", "var", "var_share"]
    return pd.DataFrame({column: [] for column in columns})
