"""Cached calls into :mod:`tiecore`: every number the pages show comes from a tiecore call
made here, and nothing here computes one.

One caching idiom, :func:`memo`: a result is kept in a store of :mod:`app_lib.recent`
under an explicit key (the data set's content hash and the settings that change the
result, never a hash of frames), so a setting that does not touch a result re-renders
from the store.  Each store is bounded in bytes (its share of
:data:`app_lib.settings.CACHE_BYTES`, :func:`app_lib.settings.cache_bytes`), by entries
and by age (:data:`app_lib.settings.CACHE_TTL` seconds unused), and has two scopes: the
results of the bundled samples are kept per server, shared by every session; the
results of a session's uploads are kept in that session only, so they leave with it and
no session sees another's (:func:`app_lib.recent.store`).  A result is computed outside
any Streamlit cache, so a slow first computation shows a spinner or a progress bar,
and a caller gets its own shallow copy (:func:`fresh`: pandas' copy-on-write makes it
free), which it may change.  The bundled data sets themselves are resources
(``st.cache_resource``), read once per server.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace

import pandas as pd
import streamlit as st

import tiecore
from app_lib import data, recent, warm
from app_lib.data import Dataset
from app_lib.settings import MEASURE_CHOICES, Settings, cache_bytes, with_gain
from tiecore import DEFAULT_MEASURES, Measure, TieCoreWarning, compare, report, spread
from tiecore.explain import builder, policies, views
from tiecore.report import escape_markdown, rows


def quiet(function: Callable, *args, **kwargs):
    """Call a tiecore function with its 'queries skipped' warnings silenced (noted at load)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TieCoreWarning)
        return function(*args, **kwargs)


def progress_bar(text: str) -> tuple[object, Callable[[int, int | None, str], None]]:
    """A progress bar and the ``progress(done, total, label)`` callback tiecore calls."""
    bar = st.progress(0.0, text=text)

    def report(done: int, total: int | None, label: str) -> None:
        share = min(max(done / total, 0.0), 1.0) if total else 0.5
        bar.progress(share, text=f"{text} {label} ({done}/{total or '?'})")

    return bar, report


def fresh(value: object) -> object:
    """``value`` with each frame (or series) in it, in dicts, tuples and lists, a shallow
    copy: the caller may add or change columns without touching the kept result (pandas'
    copy-on-write copies data only when one of them is written)."""
    if isinstance(value, pd.DataFrame | pd.Series):
        return value.copy(deep=False)
    if isinstance(value, dict):
        return {key: fresh(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(fresh(item) for item in value)
    return value


def memo(
    name: str,
    key: tuple,
    compute: Callable[[], object],
    size: int,
    shared: bool,
    spinner: str | None = None,
):
    """The result of ``compute()`` kept under ``key`` in the store ``name`` -> a fresh copy.

    The ``size`` most recent results of each ``name`` are kept, within the bytes of its
    share (:func:`app_lib.settings.cache_bytes`), none unused for
    :data:`~app_lib.settings.CACHE_TTL` seconds: per server for the samples (``shared``),
    in the session for its uploads (:func:`app_lib.recent.store`).  ``spinner``: the text
    shown while a result is first computed (a computation may draw its own progress
    bar instead).
    """
    store = recent.store(name, size, cache_bytes(name), shared=shared)
    value = store.get(key, _NOTHING)
    if value is _NOTHING:
        with st.spinner(spinner) if spinner else contextlib.nullcontext():
            value = compute()
        store.put(key, value)
    return fresh(value)


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
    (tiecore draws the same orders), so each (run, measure) is kept on its own (in
    :func:`memo`'s store ``sampled``): choosing another measure samples that measure
    only, and going back samples nothing.  The runs that miss the same measures are
    one call (the judgments built once); ``report(i, name)`` is called before run
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
    takes its rows (:func:`tiecore.report.rows.select_rows`,
    :func:`~tiecore.report.rows.summary_rows`).  Sampled results are computed per
    run (a progress bar over the runs) and kept per run and measure
    (:func:`_sampled`); every run draws from its own seed, so the values equal one
    call over all runs.
    """
    names = tuple(names or dataset.names)
    measures = tuple(measures or settings.measures)
    args = _mode_args(ties, settings)
    if ties != "sampled":
        every = tuple(dataset.names)
        wide = computed_measures(dataset, measures, tiebreak=args["tiebreak"])
        key = (dataset.key, every, wide, True, tuple(sorted(args.items())))

        def compute() -> pd.DataFrame:  # fast: one call, the judgments summarised once
            found = warm.fetch("evaluate", key)
            return found if found is not None else _score(dataset, every, wide, True, args)

        frame = memo("evaluate", key, compute, 256, dataset.shared, "Scoring the systems ...")
        if (wide, every) != (measures, names):
            frame = rows.select_rows(frame, measures, names)
        return frame if per_query else rows.summary_rows(frame)
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
    of the measures that have them (:attr:`tiecore.Measure.exact_spread`).

    The per-query table holds the summary rows too, so one computation serves both;
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
        frame = _spread(dataset, wide, settings.rel_level, progress=report)
        bar.empty()
        return frame

    frame = memo("spread", key, compute, size=64, shared=dataset.shared)
    frame = frame if wide == measures else rows.select_rows(frame, measures, dataset.names)
    return frame if per_query else rows.summary_rows(frame)


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
    """
    key = modes_key(dataset, settings, sampled=sampled, digits=digits)

    def compute() -> pd.DataFrame:
        oblivious = evaluate(dataset, settings, "oblivious")
        drawn = evaluate(dataset, settings, "sampled") if sampled else None
        exact = spread_table(dataset, settings)
        return report.combine_modes(oblivious, exact, drawn, digits=digits)

    return memo("modes", key, compute, size=64, shared=dataset.shared)


# ----------------------------------------------------------------------------- IPrec curve

#: DP steps the page waits for before it samples the curve instead (under 0.5 s of work;
#: rutcor03100's 811-doc tie group counts 5.9e8, about a second).
IPREC_BUDGET = 2e8


def iprec_measures() -> tuple[str, ...]:
    """:func:`tiecore.explain.views.iprec_measures`: the 11 ``IPrec@r`` of the curve."""
    return views.iprec_measures()


def iprec_curve(
    dataset: Dataset,
    key: str,
    run: str,
    rel_level: int,
    samples: int,
    seed: int,
    tiebreak: str = "trec_eval",
) -> dict:
    """:func:`tiecore.explain.views.iprec_curve` of one system, exact within
    :data:`IPREC_BUDGET` steps, else sampled (``table``, ``refused``, ``samples``)."""

    def compute() -> dict:
        return views.iprec_curve(
            dataset.runs[run],
            dataset.qrels,
            rel_level=rel_level,
            samples=samples,
            seed=seed,
            tiebreak=tiebreak,
            budget=IPREC_BUDGET,
            name=run,
        )

    args = (key, run, rel_level, samples, seed, tiebreak, IPREC_BUDGET)
    spinner = "Interpolated precision at 11 recall levels ..."
    return memo("iprec", args, compute, 256, dataset.shared, spinner)


# ----------------------------------------------------------------------------- ties


def tie_profiles(dataset: Dataset, key: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`tiecore.explain.policies.tie_profiles`: per run the share of tied rows and the
    group sizes."""

    def compute():
        found = warm.fetch("profiles", (key,))
        return found if found is not None else policies.tie_profiles(dataset.runs)

    return memo("profiles", (key,), compute, 64, dataset.shared, "Profiling ties ...")


def tie_groups(
    dataset: Dataset, key: str, run: str, measure: str, rel_level: int, qid: str | None
) -> pd.DataFrame:
    """:func:`tiecore.spread.tie_groups` of one run (one query or all)."""

    def compute():
        runs, qrels = dataset.runs[run], dataset.qrels
        return quiet(spread.tie_groups, runs, qrels, measure, rel_level=rel_level, qid=qid)

    args = (key, run, measure, rel_level, qid)
    return memo("groups", args, compute, 256, dataset.shared, "Finding tie groups ...")


def distribution(
    dataset: Dataset, key: str, run: str, measure: str, rel_level: int, qid: str
) -> pd.DataFrame | None:
    """:func:`tiecore.spread.distribution` of one query, or None when it has none to list."""

    def compute():
        try:
            return quiet(
                spread.distribution,
                dataset.runs[run],
                dataset.qrels,
                measure,
                qid,
                rel_level=rel_level,
            )
        except (ValueError, MemoryError):
            return None

    args = (key, run, measure, rel_level, qid)
    spinner = "Enumerating the exact distribution ..."
    return memo("distribution", args, compute, 256, dataset.shared, spinner)


def query_anatomy(
    dataset: Dataset, key: str, run: str, qid: str, measure: str, rel_level: int, tiebreak: str
) -> dict:
    """:func:`tiecore.explain.views.query_parts`: one query of one run taken apart."""

    def compute() -> dict:
        runs, qrels = dataset.runs[run], dataset.qrels
        return views.query_parts(runs, qrels, qid, measure, rel_level, tiebreak)

    args = (key, run, qid, measure, rel_level, tiebreak)
    return memo("anatomy", args, compute, 256, dataset.shared)


# ----------------------------------------------------------------------------- sampling


def sampled_matrix(dataset: Dataset, settings: Settings, run: str, measure: str) -> pd.DataFrame:
    """:func:`tiecore.explain.policies.sampled_values`: a (samples x queries) frame, with a
    progress bar while it is first drawn."""
    args = (dataset.key, run, measure, settings.samples, settings.seed, settings.rel_level)

    def compute() -> pd.DataFrame:
        said = escape_markdown(run)  # a run tag may look like Markdown
        bar = st.progress(0.5, text=f"Sampling {settings.samples} tie-breaks of {said} ...")
        found = policies.sampled_values(
            dataset.runs[run],
            dataset.qrels,
            measure,
            samples=settings.samples,
            seed=settings.seed,
            rel_level=settings.rel_level,
            name=run,
        )
        bar.empty()
        return found

    return memo("matrix", args, compute, 128, dataset.shared)


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
        result = quiet(
            compare.compare,
            {n: dataset.runs[n] for n in names},
            dataset.qrels,
            measure,
            samples=settings.samples,
            seed=settings.seed,
            rel_level=settings.rel_level,
            n_resamples=n_resamples,
            progress=report,
        )
        bar.empty()
        return result

    return memo("compare", key, compute, size=16, shared=dataset.shared)


# ----------------------------------------------------------------------------- features


def policy_table(dataset: Dataset, settings: Settings, measure: str) -> pd.DataFrame:
    """:func:`tiecore.explain.policies.assemble_policies` from cached results.

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
    key = (
        dataset.key,
        tuple(weights.items()),
        tuple(levels),
        measure,
        settings.rel_level,
        tiebreak,
        tuple(exclude),
    )

    def compute() -> pd.DataFrame:
        features = policy_table(dataset, settings, measure).drop(index=list(exclude))
        return quiet(
            builder.sweep,
            dataset.runs,
            dataset.qrels,
            dict(weights),
            list(levels),
            measure,
            rel_level=settings.rel_level,
            tiebreak=tiebreak,
            features=features,
        )

    spinner = "Scoring the built function at each number of levels ..."
    return memo("sweep", key, compute, 64, dataset.shared, spinner)


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
