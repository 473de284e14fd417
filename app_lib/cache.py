"""Cached calls into :mod:`tiecore`: every number the pages show comes from here.

Results live in ``st.cache_data`` keyed by the dataset's content hash and the
settings that change them (never by hashing frames), so a setting that does not
touch a result re-renders from the cache.  Every cache is bounded in bytes (its
share of :data:`app_lib.settings.CACHE_BYTES`), by entries and by age
(:data:`app_lib.settings.CACHE_TTL` seconds unused), and has two scopes: the
results of the bundled samples are kept per server, shared by every session; the
results of a session's uploads are kept in that session only (``st.cache_data``'s
``scope="session"``, :func:`app_lib.recent.store`), so they leave with it and no
session sees another's.  Slow first computations (sampling, comparisons) show a
progress bar.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

import tiecore
from app_lib import data, recent, warm
from app_lib.data import Dataset
from app_lib.settings import CACHE_TTL, MEASURE_CHOICES, Settings, cache_bytes, with_gain
from tiecore import compare, report, spread
from tiecore.errors import TieCoreWarning
from tiecore.explain import anatomy, builder, orderings, policies
from tiecore.explain import variance as tie_variance
from tiecore.measures import DEFAULT_MEASURES, Measure
from tiecore.measures import iprec as interpolated
from tiecore.report import escape_markdown


def quiet(function: Callable, *args, **kwargs):
    """Call a tiecore function with its 'queries skipped' warnings silenced (noted at load)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TieCoreWarning)
        return function(*args, **kwargs)


def _accepts_progress(function: Callable) -> bool:
    return "progress" in inspect.signature(function).parameters


def progress_bar(text: str) -> tuple[object, Callable[[int, int | None, str], None]]:
    """A progress bar and the ``progress(done, total, label)`` callback tiecore calls."""
    bar = st.progress(0.0, text=text)

    def report(done: int, total: int | None, label: str) -> None:
        share = min(max(done / total, 0.0), 1.0) if total else 0.5
        bar.progress(share, text=f"{text} {label} ({done}/{total or '?'})")

    return bar, report


def memo(name: str, key: tuple, compute: Callable[[], object], size: int, shared: bool):
    """A result cached across reruns (and sessions, for the ``shared`` samples), computed
    outside ``st.cache_data``.

    For computations that draw a progress bar while they run (a cached function
    may not update elements made outside it); the ``size`` most recent results
    of each ``name`` are kept, within the bytes of its share
    (:func:`app_lib.settings.cache_bytes`), none unused for
    :data:`~app_lib.settings.CACHE_TTL` seconds: per server for the samples, in the
    session for its uploads (:func:`app_lib.recent.store`).
    """
    store = recent.store(name, size, cache_bytes(name), shared=shared)
    value = store.get(key, _NOTHING)
    if value is _NOTHING:
        value = compute()
        store.put(key, value)
    return value


def _cached(name: str, **options) -> Callable[[Callable], Callable]:
    """``st.cache_data(**options)`` in two scopes, chosen by the call's data set (its first
    argument): per server for the bundled samples (``Dataset.shared``), per session for
    uploads (``scope="session"``: cleared when the session disconnects).  Each holds at
    most :func:`app_lib.settings.cache_bytes` of ``name`` (pickled bytes), the least
    recently used dropped first.  Outside a script run (a test calling it) the server's.
    """

    def wrap(function: Callable) -> Callable:
        limits = {"max_size": cache_bytes(name), "ttl": CACHE_TTL, **options}
        shared = st.cache_data(function, **limits)
        own = st.cache_data(function, scope="session", **limits)

        @functools.wraps(function)
        def call(_dataset: Dataset, *args, **kwargs):
            scoped = shared if _dataset.shared or recent.session_id() is None else own
            return scoped(_dataset, *args, **kwargs)

        return call

    return wrap


_NOTHING = object()


def provenance(
    dataset: Dataset,
    settings: Settings,
    *,
    measure: str | Sequence[str] | None = None,
    ties: str | None = None,
    **extra: object,
) -> dict[str, object]:
    """The settings behind a table, for its CSV download (:func:`tiecore.report.provenance`)."""
    measures = measure if measure is not None else settings.measures
    measures = measures if isinstance(measures, str) else ", ".join(measures)
    return report.provenance(
        data_set=f"{dataset.label} ({dataset.summary})",
        measure=measures,
        tie_mode=ties or "oblivious, aware, sampled",
        tie_break=settings.tiebreak,
        samples=settings.samples,
        seed=settings.seed,
        relevance_level=settings.rel_level,
        nDCG_gain=settings.gain,
        **extra,
    )


@st.cache_resource(show_spinner="Reading the MSLR-WEB10K sample ...", max_entries=1)
def mslr_sample() -> Dataset:
    """The bundled MSLR-WEB10K sample (:func:`app_lib.data.read_mslr`), the warm-up's copy
    when it has read it already."""
    found = warm.fetch("dataset", ("mslr",))
    return found if found is not None else data.read_mslr()


# ----------------------------------------------------------------------------- evaluate


def _mode_args(ties: str, settings: Settings) -> dict:
    """Only the settings that change a mode's result (so other changes hit the cache)."""
    sampled = ties == "sampled" or (ties == "oblivious" and settings.tiebreak == "random")
    return {
        "ties": ties,
        "tiebreak": settings.tiebreak if ties == "oblivious" else "trec_eval",
        "samples": settings.samples if ties == "sampled" else 2,
        "seed": settings.seed if sampled else 0,
        "rel_level": settings.rel_level,
    }


#: Sampled results kept, one per run, measure and setting (most recently used last).
SAMPLED_KEPT = 8192


def _sampled(
    dataset: Dataset,
    names: Sequence[str],
    measures: Sequence[str],
    per_query: bool,
    args: dict,
    report: Callable[[int, str], None] | None = None,
) -> pd.DataFrame:
    """Sampled :func:`tiecore.evaluate` of ``names``, kept per run and measure.

    A measure's sampled values do not depend on the other measures of the call
    (:mod:`tiecore.engine.sampling` draws the same orders), so each (run, measure) is
    kept on its own: choosing another measure samples that measure only, and
    going back samples nothing.  The runs that miss the same measures are one
    call (the judgments built once); ``report(i, name)`` is called before run
    ``i`` is sampled.
    """
    store = recent.store("sampled", SAMPLED_KEPT, cache_bytes("sampled"), shared=dataset.shared)
    setting = (dataset.key, per_query, tuple(sorted(args.items())))
    found = {(n, m): store.get((setting, n, m)) for n in names for m in measures}
    missing: dict[tuple[str, ...], list[str]] = {}  # runs by the measures they still need
    for name in names:
        todo = tuple(m for m in measures if found[(name, m)] is None)
        if todo:
            missing.setdefault(todo, []).append(name)
    done = 0
    for todo, group in missing.items():
        if report is not None:
            report(done, group[0])

        def progress(i: int, _total: int | None, _name: str, start: int = done, group=group):
            if report is not None and i < len(group):
                report(start + i, group[i])

        frame = quiet(
            tiecore.evaluate,
            {name: dataset.runs[name] for name in group},
            dataset.qrels,
            list(todo),
            per_query=per_query,
            progress=progress,
            **args,
        )
        parts = dict(list(frame.groupby(["run", "measure"], sort=False)))
        for name in group:  # a run that yields no rows (no judged query) keeps an empty part
            for measure in todo:
                found[(name, measure)] = parts.get((name, measure), frame.iloc[:0])
                store.put((setting, name, measure), found[(name, measure)])
        done += len(group)
    return pd.concat(found.values(), ignore_index=True)


#: Data sets with at most this many systems are scored on every offered measure at once.
WIDE_RUNS = 20


def offered_measures() -> tuple[str, ...]:
    """Every measure the sidebar offers, nDCG in both gains (canonical names, fixed order)."""
    out: list[str] = []
    for name in MEASURE_CHOICES:
        measure = Measure.parse(name)
        out.append(str(measure))
        if measure.family == "nDCG":
            out.append(str(Measure(measure.family, measure.cutoff, "exp")))
    return tuple(dict.fromkeys(out))


def computed_measures(
    dataset: Dataset, measures: Sequence[str], *, tiebreak: str = "trec_eval"
) -> tuple[str, ...]:
    """The measures to compute so that changing the sidebar's measures needs no new call.

    A call's cost is mostly per run (reading the ranking), hardly per measure, so
    a data set of at most :data:`WIDE_RUNS` systems is scored on every offered
    measure (and nDCG in both gains) at once: choosing another measure or gain
    only slices cached results.  Larger data sets (136 LETOR features) compute
    the chosen measures only, where each extra measure costs per run; so does
    another oblivious ``tiebreak`` than trec_eval's, a look aside that should
    answer at once rather than prepare for measures nobody asked for.
    """
    if len(dataset.runs) > WIDE_RUNS or tiebreak != "trec_eval":
        return tuple(measures)
    offered = offered_measures()
    return tuple(m for m in measures if m not in offered) + offered


def pick(frame: pd.DataFrame, measures: Sequence[str], names: Sequence[str]) -> pd.DataFrame:
    """Rows of ``measures`` and runs ``names`` of a tidy frame, in the order asked for.

    Order: runs as ``names``, then measures as ``measures``, then the rows' own
    order (queries, the summary row last), as :func:`tiecore.evaluate` gives them.
    """
    measure_codes = pd.Index(list(measures)).get_indexer(frame["measure"])  # -1: not asked for
    run_codes = pd.Index(list(names)).get_indexer(frame["run"])
    keep = np.flatnonzero((measure_codes >= 0) & (run_codes >= 0))
    order = run_codes[keep].astype(np.int64) * len(measures) + measure_codes[keep]
    return frame.iloc[keep[np.argsort(order, kind="stable")]].reset_index(drop=True)


def _score(
    dataset: Dataset, names: Sequence[str], measures: Sequence[str], per_query: bool, args: dict
) -> pd.DataFrame:
    """One :func:`tiecore.evaluate` call over the chosen runs (oblivious or aware)."""
    runs = {n: dataset.runs[n] for n in names}
    return quiet(tiecore.evaluate, runs, dataset.qrels, list(measures), per_query=per_query, **args)


def _spread(dataset: Dataset, measures: Sequence[str], rel_level: int, **extra) -> pd.DataFrame:
    """One :func:`tiecore.spread.evaluate_spread` call over every run, with the per-query rows."""
    return quiet(
        spread.evaluate_spread,
        dict(dataset.runs),
        dataset.qrels,
        list(measures),
        rel_level=rel_level,
        per_query=True,
        **extra,
    )


def summary_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The summary rows (``qid`` NA) of a per-query frame, as tiecore gives them without it."""
    rows = frame[frame["qid"].isna()].reset_index(drop=True)
    return rows.assign(qid=pd.Series([None] * len(rows), dtype=object))


@_cached("evaluate", show_spinner="Scoring the systems ...", max_entries=256)
def _evaluate_all(
    _dataset: Dataset,
    key: str,
    names: tuple[str, ...],
    measures: tuple[str, ...],
    per_query: bool,
    **args,
) -> pd.DataFrame:
    if args["ties"] != "sampled":  # fast: one call, the judgments summarised once
        found = warm.fetch(
            "evaluate", (key, names, measures, per_query, tuple(sorted(args.items())))
        )
        if found is not None:
            return found
        return _score(_dataset, names, measures, per_query, args)
    return _sampled(_dataset, names, measures, per_query, args)


def evaluate(
    dataset: Dataset,
    settings: Settings,
    ties: str,
    *,
    measures: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
    per_query: bool = False,
) -> pd.DataFrame:
    """:func:`tiecore.evaluate` of the dataset's runs in one mode, cached.

    Oblivious and aware values are computed once per data set and setting for
    every run, with the per-query rows (their summary rows are the per-run
    means) and every offered measure (:func:`computed_measures`); a page's call
    slices them.  Sampled results are computed per run (a progress bar over
    the runs) and kept per run and measure (:func:`_sampled`); every run draws
    from its own seed, so the values equal one call over all runs.
    """
    names = tuple(names or dataset.names)
    measures = tuple(measures or settings.measures)
    args = _mode_args(ties, settings)
    if ties != "sampled":
        every = tuple(dataset.names)
        wide = computed_measures(dataset, measures, tiebreak=args["tiebreak"])
        frame = _evaluate_all(dataset, dataset.key, every, wide, True, **args)
        if (wide, every) != (measures, names):
            frame = pick(frame, measures, names)
        return frame if per_query else summary_rows(frame)
    bar = None

    def report(i: int, name: str) -> None:
        nonlocal bar
        text = f"Sampling {args['samples']} tie-breaks of {escape_markdown(name)} ..."
        if bar is None:
            bar = st.progress(i / len(names), text=text)
        else:
            bar.progress(i / len(names), text=text)

    frame = _sampled(dataset, names, measures, per_query, args, report)
    if bar is not None:
        bar.empty()
    return frame


def spread_table(
    dataset: Dataset,
    settings: Settings,
    *,
    measures: Sequence[str] | None = None,
    per_query: bool = False,
) -> pd.DataFrame:
    """:func:`tiecore.spread.evaluate_spread`: the exact variance, min and max over tie-breaks,
    of the measures that have them (:attr:`tiecore.measures.Measure.exact_spread`).

    The per-query table holds the ``all`` rows too, so one computation serves both;
    its first computation shows a progress bar (one step per system).
    """
    measures = tuple(measures or settings.measures)
    measures = tuple(m for m in measures if Measure.parse(m).exact_spread)  # not GMAP
    wide = computed_measures(dataset, measures)
    key = (dataset.key, wide, settings.rel_level)

    def compute():
        found = warm.fetch("spread", key)
        if found is not None:
            return found
        bar, report = progress_bar("Exact spread over all tie-breaks:")
        extra = {"progress": report} if _accepts_progress(spread.evaluate_spread) else {}
        frame = _spread(dataset, wide, settings.rel_level, **extra)
        bar.empty()
        return frame

    frame = memo("spread", key, compute, size=64, shared=dataset.shared)
    frame = frame if wide == measures else pick(frame, measures, dataset.names)
    return frame if per_query else summary_rows(frame)


def modes_key(
    dataset: Dataset, settings: Settings, *, sampled: bool = False, digits: int = 4
) -> tuple:
    """What :func:`modes` depends on: a key for it and for the charts drawn from it."""
    return (
        dataset.key,
        settings.measures,
        settings.rel_level,
        tuple(sorted(_mode_args("oblivious", settings).items())),
        tuple(sorted(_mode_args("sampled", settings).items())) if sampled else None,
        digits,
    )


def modes(
    dataset: Dataset, settings: Settings, *, sampled: bool = False, digits: int = 4
) -> pd.DataFrame:
    """:func:`tiecore.report.combine_modes`: oblivious, aware, tie sd, min, max, z (and sampled);
    ``digits``: the decimals a paper prints (a shift that does not show at them is not flagged).

    Kept per data set and the settings that change it, so a re-render (a seed
    change with the sampled mode off, another page and back) combines nothing.
    Callers must not change the frame in place.
    """
    key = modes_key(dataset, settings, sampled=sampled, digits=digits)

    def compute() -> pd.DataFrame:
        oblivious = evaluate(dataset, settings, "oblivious")
        drawn = evaluate(dataset, settings, "sampled") if sampled else None
        exact = spread_table(dataset, settings)
        return report.combine_modes(oblivious, exact, drawn, digits=digits)

    return memo("modes", key, compute, size=64, shared=dataset.shared)


def significance(dataset: Dataset, settings: Settings, alpha: float = 0.05) -> pd.DataFrame:
    """:func:`tiecore.report.significance_vs_best` on the tie-aware per-query values."""
    per_query = evaluate(dataset, settings, "aware", per_query=True)
    return report.significance_vs_best(per_query, alpha)


# ----------------------------------------------------------------------------- IPrec curve

#: trec_eval's 11 recall levels of iprec_at_recall.
IPREC_LEVELS = tuple(level / 10 for level in range(11))
#: DP cells the page waits for before it samples the curve instead (under 0.5 s of work;
#: rutcor03100's 811-doc tie group counts 5.9e8, about a second).
IPREC_BUDGET = 2e8


def iprec_measures() -> tuple[str, ...]:
    """Canonical names of ``IPrec@r`` for r in :data:`IPREC_LEVELS` (``IPrec(recall=0.1)`` ...)."""
    return tuple(str(Measure.parse(f"IPrec@{level:.1f}")) for level in IPREC_LEVELS)


@_cached("iprec", show_spinner="Interpolated precision at 11 recall levels ...", max_entries=256)
def iprec_curve(
    _dataset: Dataset,
    key: str,
    run: str,
    rel_level: int,
    samples: int,
    seed: int,
    tiebreak: str = "trec_eval",
) -> dict:
    """One system's 11-point interpolated precision curve, from :mod:`tiecore`.

    Returns ``table``: columns ``recall, oblivious`` (:func:`tiecore.evaluate`
    under ``tiebreak``) and ``aware, sd, min, max`` (the summary rows of
    :func:`tiecore.spread.evaluate_spread`, sd = sqrt(var) of the mean over
    random tie-breaks), or, when tiecore refuses the exact values
    (:class:`tiecore.InputError`: a tie group past :data:`IPREC_BUDGET` counting steps),
    ``sampled, sampled_sd`` from ``ties="sampled"`` with ``samples`` draws.
    ``refused`` holds tiecore's message (None when exact), ``samples`` the draws.
    """
    measures = list(iprec_measures())
    runs = {run: _dataset.runs[run]}
    args = {"rel_level": rel_level}
    oblivious = quiet(
        tiecore.evaluate,
        runs,
        _dataset.qrels,
        measures,
        ties="oblivious",
        tiebreak=tiebreak,
        **args,
    )
    table = pd.DataFrame({"recall": IPREC_LEVELS})
    table["oblivious"] = oblivious.set_index("measure")["value"].reindex(measures).to_numpy()
    try:
        with interpolated.budget_scope(IPREC_BUDGET):
            exact = quiet(spread.evaluate_spread, runs, _dataset.qrels, measures, **args)
    except tiecore.InputError as error:
        drawn = quiet(
            tiecore.evaluate,
            runs,
            _dataset.qrels,
            measures,
            ties="sampled",
            samples=samples,
            seed=seed,
            **args,
        ).set_index("measure")
        table["sampled"] = drawn["value"].reindex(measures).to_numpy()
        table["sampled_sd"] = drawn["std"].reindex(measures).to_numpy()
        return {"table": table, "refused": str(error), "samples": samples}
    exact = exact.set_index("measure").reindex(measures)
    table["aware"] = exact["value"].to_numpy()
    table["sd"] = tie_variance.tie_sd(exact["var"].to_numpy(dtype=float))
    table["min"] = exact["min"].to_numpy()
    table["max"] = exact["max"].to_numpy()
    return {"table": table, "refused": None, "samples": 0}


# ----------------------------------------------------------------------------- ties


@_cached("profiles", show_spinner="Profiling ties ...", max_entries=64)
def tie_profiles(_dataset: Dataset, key: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`tiecore.explain.policies.tie_profiles`: per run the share of tied rows and the
    group sizes."""
    found = warm.fetch("profiles", (key,))
    return found if found is not None else policies.tie_profiles(_dataset.runs)


@_cached("groups", show_spinner="Finding tie groups ...", max_entries=256)
def tie_groups(
    _dataset: Dataset, key: str, run: str, measure: str, rel_level: int, qid: str | None
) -> pd.DataFrame:
    """:func:`tiecore.spread.tie_groups` of one run (one query or all)."""
    return quiet(
        spread.tie_groups, _dataset.runs[run], _dataset.qrels, measure, rel_level=rel_level, qid=qid
    )


@_cached("distribution", show_spinner="Enumerating the exact distribution ...", max_entries=256)
def distribution(
    _dataset: Dataset, key: str, run: str, measure: str, rel_level: int, qid: str
) -> pd.DataFrame | None:
    """:func:`tiecore.spread.distribution` of one query, or None when it has none to list."""
    try:
        return quiet(
            spread.distribution,
            _dataset.runs[run],
            _dataset.qrels,
            measure,
            qid,
            rel_level=rel_level,
        )
    except (ValueError, MemoryError):
        return None


@_cached("anatomy", show_spinner=False, max_entries=256)
def query_anatomy(
    _dataset: Dataset, key: str, run: str, qid: str, measure: str, rel_level: int, tiebreak: str
) -> dict:
    """One query of one run taken apart (:mod:`tiecore.explain.anatomy`).

    Returns ``query`` (:class:`~tiecore.explain.anatomy.QueryList`), ``groups``,
    ``quantities`` (the paper's, at the measure's cutoff), ``formula`` (or None),
    ``ranks`` (per-rank expectations, or None for a family without them) and
    ``listing`` (the docs in the tie-break's order).
    """
    query = anatomy.QueryList.of(_dataset.runs[run], _dataset.qrels, qid)
    parsed = Measure.parse(measure)
    gain = parsed.gain if parsed.family == "nDCG" else "linear"
    groups = anatomy.tie_groups(query, rel_level, gain)
    num_rel = query.num_rel(rel_level)
    k = anatomy.cutoff(parsed, num_rel, len(query))
    quantities = anatomy.paper_quantities(groups, k)
    try:
        ranks = anatomy.expected_ranks(query, parsed, rel_level)
    except ValueError:
        ranks = None
    listing = quiet(
        orderings.ranked_list, _dataset.runs[run], _dataset.qrels, qid, tiebreak, rel_level
    )
    return {
        "query": query,
        "groups": groups,
        "quantities": quantities,
        "formula": anatomy.formula(parsed, quantities, num_rel),
        "ranks": ranks,
        "listing": listing,
        "num_rel": num_rel,
    }


# ----------------------------------------------------------------------------- sampling


@_cached("matrix", show_spinner=False, max_entries=128)
def _sampled_matrix(
    _dataset: Dataset, key: str, run: str, measure: str, samples: int, seed: int, rel_level: int
) -> pd.DataFrame:
    return policies.sampled_values(
        _dataset.runs[run],
        _dataset.qrels,
        measure,
        samples=samples,
        seed=seed,
        rel_level=rel_level,
        name=run,
    )


def sampled_matrix(dataset: Dataset, settings: Settings, run: str, measure: str) -> pd.DataFrame:
    """:func:`tiecore.explain.policies.sampled_values`: a (samples x queries) frame, progress
    bar once."""
    args = (dataset.key, run, measure, settings.samples, settings.seed, settings.rel_level)
    done = st.session_state.setdefault("_computed", set())
    if args not in done:
        said = escape_markdown(run)  # a run tag may look like Markdown
        bar = st.progress(0.5, text=f"Sampling {settings.samples} tie-breaks of {said} ...")
        _sampled_matrix(dataset, *args)
        bar.empty()
        done.add(args)
    return _sampled_matrix(dataset, *args)


def comparison(
    dataset: Dataset,
    settings: Settings,
    measure: str,
    names: Sequence[str],
    n_resamples: int = 1000,
):
    """:func:`tiecore.compare.compare` of the chosen systems, cached, with a progress bar."""
    key = (
        dataset.key,
        tuple(names),
        measure,
        settings.samples,
        settings.seed,
        settings.rel_level,
        n_resamples,
    )

    def compute():
        bar, report = progress_bar(
            f"Comparing {len(names)} systems under {settings.samples} random tie-breaks:"
        )
        extra = {"progress": report} if _accepts_progress(compare.compare) else {}
        result = quiet(
            compare.compare,
            {n: dataset.runs[n] for n in names},
            dataset.qrels,
            measure,
            samples=settings.samples,
            seed=settings.seed,
            rel_level=settings.rel_level,
            n_resamples=n_resamples,
            **extra,
        )
        bar.empty()
        return result

    return memo("compare", key, compute, size=16, shared=dataset.shared)


# ----------------------------------------------------------------------------- features


def policy_table(dataset: Dataset, settings: Settings, measure: str) -> pd.DataFrame:
    """:func:`tiecore.explain.policies.policy_values` from cached results.

    Tie-aware, optimistic (max) and pessimistic (min) come from the exact spread
    of the sidebar's measures; each arbitrary tie-break is one cached evaluation
    of them, so the Overview's results are reused.
    """
    measures = tuple(settings.measures) if measure in settings.measures else (measure,)
    exact = spread_table(dataset, settings, measures=measures)
    oblivious = {
        policy: evaluate(
            dataset, replace(settings, tiebreak=policy), "oblivious", measures=measures
        )
        for policy in policies.POLICIES
        if policy not in policies.BOUNDS
    }
    return policies.assemble_policies(exact, oblivious, measure)


@_cached(
    "sweep",
    show_spinner="Scoring the built function at each number of levels ...",
    max_entries=64,
)
def _sweep(
    _dataset: Dataset,
    key: str,
    weights: tuple[tuple[str, float], ...],
    levels: tuple[int | None, ...],
    measure: str,
    rel_level: int,
    tiebreak: str,
    _features: pd.DataFrame,
    others: tuple[str, ...] = (),
) -> pd.DataFrame:
    return quiet(
        builder.sweep,
        _dataset.runs,
        _dataset.qrels,
        dict(weights),
        list(levels),
        measure,
        rel_level=rel_level,
        tiebreak=tiebreak,
        features=_features,
    )


def sweep(
    dataset: Dataset,
    settings: Settings,
    weights: dict[str, float],
    levels: Sequence[int | None],
    measure: str,
    *,
    exclude: Sequence[str] = (),
) -> pd.DataFrame:
    """:func:`tiecore.explain.builder.sweep` of the chosen features, ranked against all of them
    (but ``exclude``: a run coarsened is ranked against the other runs)."""
    tiebreak = settings.tiebreak if settings.tiebreak in policies.POLICIES else "trec_eval"
    features = policy_table(dataset, settings, measure).drop(index=list(exclude))
    return _sweep(
        dataset,
        dataset.key,
        tuple(weights.items()),
        tuple(levels),
        measure,
        settings.rel_level,
        tiebreak,
        features,
        tuple(exclude),
    )


# ----------------------------------------------------------------------------- warm-up


def warm_plan() -> list[tuple[str, tuple, Callable[[], object]]]:
    """What :mod:`app_lib.warm` computes ahead: the MSLR sample's Overview, default settings.

    ``(kind, key, compute)`` with the keys :func:`evaluate`, :func:`spread_table`
    and :func:`tie_profiles` look up, and the very computations they would run.
    """
    dataset = mslr_sample()
    settings = Settings(measures=with_gain(DEFAULT_MEASURES, "linear")[0])
    every = tuple(dataset.names)
    wide = computed_measures(dataset, settings.measures)
    args = _mode_args("oblivious", settings)
    return [
        (
            "evaluate",
            (dataset.key, every, wide, True, tuple(sorted(args.items()))),
            lambda: _score(dataset, every, wide, True, args),
        ),
        (
            "spread",
            (dataset.key, wide, settings.rel_level),
            lambda: _spread(dataset, wide, settings.rel_level),
        ),
        ("profiles", (dataset.key,), lambda: policies.tie_profiles(dataset.runs)),
    ]
