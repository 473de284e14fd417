"""Shared pieces of the Streamlit explorer (``app.py`` and the modules in ``pages/``).

- data sources: the bundled ``sample_data/`` sets and uploads, turned into a
  :class:`Dataset`; the upload handlers take bytes and a file name and return a
  dataset or the :class:`tiecore.errors.InputError` message, so they are
  testable without a browser;
- the sidebar (data and settings, shared by every page) -> :class:`Settings`;
- cached calls into :mod:`tiecore`: the heavy results live in ``st.cache_data``,
  keyed by a content hash of the data (the frames themselves are not hashed);
- two small computations the package does not offer: the orderings of a small
  ranked list (the playground) and the per-rank expectations of a tie group table;
- table and chart helpers (CSV download next to every table).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

import tiecore
from tiecore.errors import InputError, TieCoreWarning
from tiecore.measures import Measure

ROOT = Path(__file__).resolve().parent
SAMPLE = ROOT / "sample_data"

#: Sidebar data sources: key -> label.
SOURCES = {
    "robust03": "Robust03 sample (5 runs, 50 topics)",
    "mslr": "MSLR-WEB10K sample (features as systems)",
    "trec": "Upload TREC runs and qrels",
    "letor": "Upload a LETOR / svmlight file",
}
#: Measures offered in the sidebar; any other ir_measures name can be typed in.
MEASURE_CHOICES = (
    "P@5", "P@10", "P@20", "P@100", "R@10", "R@100", "F1@10", "AP", "AP@100", "RR", "RR@10",
    "nDCG", "nDCG@5", "nDCG@10", "nDCG@20", "Rprec", "Success@1", "Success@10", "Bpref",
)  # fmt: skip
DEFAULT_MEASURES = ("P@10", "AP", "nDCG@10", "RR")
#: Short explanations of the oblivious tie-break policies.
TIEBREAK_HELP = {
    "trec_eval": "score descending (as 32-bit floats), then docno descending (trec_eval 9's order)",
    "trec_eval_double": "score descending as given, then docno descending (trec_eval 10's order)",
    "docno_asc": "score descending, then docno ascending",
    "file_order": "score descending, then the order of the rows in the file",
    "optimistic": "relevant (higher-gain) documents first inside each tie",
    "pessimistic": "relevant (higher-gain) documents last inside each tie",
    "random": "a random order inside each tie (seeded)",
}
MODE_COLORS = {"oblivious": "#8c8c8c", "aware": "#1f77b4", "sampled": "#ff7f0e"}
#: Oblivious policies with one deterministic order (what compare() ranks by).
POLICIES = ("trec_eval", "docno_asc", "file_order", "optimistic", "pessimistic")
#: The arbitrary tie-breaks evaluation tools use (optimistic / pessimistic are bounds).
ARBITRARY = ("trec_eval", "docno_asc", "file_order")
#: At most this many orderings are enumerated in the playground.
MAX_ORDERINGS = 5040


# ----------------------------------------------------------------------------- data


@dataclass(frozen=True, eq=False)
class Dataset:
    """Runs and qrels the pages work on.

    ``key`` is a content hash: cached results are keyed by it, never by the frames.
    ``descriptions`` maps run names to a longer label (LETOR feature names).
    """

    key: str
    label: str
    kind: str  # "trec" or "letor"
    runs: Mapping[str, pd.DataFrame]
    qrels: pd.DataFrame
    descriptions: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @cached_property
    def summary(self) -> str:
        """``17 systems · 100 judged queries · 1,510,973 rows``."""
        queries = self.qrels["qid"].nunique()
        rows = sum(len(r) for r in self.runs.values())
        return f"{len(self.runs)} systems · {queries} judged queries · {rows:,} rows"

    @property
    def names(self) -> list[str]:
        """Run (system) names in load order."""
        return list(self.runs)

    def describe(self, name: str) -> str:
        """``f128 · in-link number`` for a feature, the name itself for a run."""
        text = self.descriptions.get(name)
        return f"{name} · {text}" if text else name


def content_key(files: Sequence[tuple[str, bytes]], *extra: object) -> str:
    """A hash of file names and contents (and any extra settings), order-independent."""
    digest = hashlib.sha1()
    for name, data in sorted(files, key=lambda f: f[0]):
        digest.update(name.encode() + b"\0" + hashlib.sha1(data).digest())
    digest.update(repr(extra).encode())
    return digest.hexdigest()[:16]


def _stream(name: str, data: bytes) -> io.BytesIO:
    """Uploaded bytes as a named stream (tiecore's readers name it in errors, and gunzip it)."""
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def _run_notes(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame) -> tuple[str, ...]:
    """Runs whose queries are missing from the qrels (they are skipped, as trec_eval does)."""
    judged = set(qrels["qid"].unique())
    notes = []
    for name, run in runs.items():
        missing = sorted(set(run["qid"].unique()) - judged)
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            notes.append(f"run {name}: {len(missing)} queries without judgments skipped ({shown})")
    return tuple(notes)


def dataset_from_trec(
    run_files: Sequence[tuple[str, bytes]], qrels_file: tuple[str, bytes], label: str | None = None
) -> Dataset:
    """Read TREC runs and qrels from bytes; raises :class:`InputError` on bad input.

    Run names are the run tags (file names when tags are missing or clash), as
    :func:`tiecore.read_runs` names them.
    """
    if not run_files:
        raise InputError("runs", None, "no run file given", "at least one TREC run file")
    qrels = tiecore.read_qrels(_stream(*qrels_file))
    runs = tiecore.read_runs([_stream(name, data) for name, data in run_files])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TieCoreWarning)
        notes = _run_notes(runs, qrels)
    for name, run in runs.items():
        if not set(run["qid"].unique()) & set(qrels["qid"].unique()):
            raise InputError(
                name, None, "none of its queries is in the qrels", "matching query ids"
            )
    return Dataset(
        key=content_key([*run_files, qrels_file]),
        label=label or f"{len(runs)} uploaded runs, qrels {qrels_file[0]}",
        kind="trec",
        runs=runs,
        qrels=qrels,
        notes=notes,
    )


def read_trec_upload(
    run_files: Sequence[tuple[str, bytes]], qrels_file: tuple[str, bytes]
) -> Dataset | str:
    """Uploaded runs and qrels -> a dataset, or the error message (file, line, reason)."""
    try:
        return dataset_from_trec(run_files, qrels_file)
    except InputError as error:
        return str(error)


def dataset_from_letor(
    name: str, data: bytes, label: str | None = None, names: Mapping[int, str] | None = None
) -> Dataset:
    """Every feature of a LETOR / svmlight file as a system; raises :class:`InputError`."""
    runs, qrels = tiecore.read_letor(_stream(name, data))
    if not runs:
        raise InputError(name, None, "no feature columns found", "lines like 'label qid:Q 1:v 2:v'")
    names = names or {}
    descriptions = {run: names.get(_feature_number(run), "") for run in runs}
    return Dataset(
        key=content_key([(name, data)]),
        label=label or f"LETOR file {name}",
        kind="letor",
        runs=runs,
        qrels=qrels,
        descriptions={k: v for k, v in descriptions.items() if v},
    )


def read_letor_upload(name: str, data: bytes, features: str = "all") -> Dataset | str:
    """An uploaded LETOR file and features (``"all"``, ``"1-5,128"``) -> dataset or message."""
    try:
        return select_features(dataset_from_letor(name, data), features)
    except InputError as error:
        return str(error)


def _feature_number(run_name: str) -> int | None:
    match = re.fullmatch(r"f(\d+)", run_name)
    return int(match.group(1)) if match else None


def parse_features(text: str, available: Sequence[int]) -> list[int]:
    """``"all"``, ``"128"``, ``"1-5, 128, 130-131"`` -> sorted feature numbers of the file."""
    text = text.strip().lower()
    if text in ("", "all", "*"):
        return sorted(available)
    chosen: set[int] = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not match:
            raise InputError(
                "features", None, f"cannot read {part!r}", "numbers or ranges like 1-5,128"
            )
        low = int(match.group(1))
        high = int(match.group(2) or low)
        chosen.update(range(low, high + 1))
    missing = sorted(chosen - set(available))
    if missing:
        raise InputError(
            "features",
            None,
            f"feature {missing[0]} is not in the file",
            f"features {min(available)}-{max(available)}",
        )
    return sorted(chosen)


def select_features(dataset: Dataset, features: str) -> Dataset:
    """Keep the chosen features (``"all"`` or ranges) of a LETOR dataset as its systems."""
    numbers = {_feature_number(name): name for name in dataset.runs}
    chosen = parse_features(features, [n for n in numbers if n is not None])
    if not chosen:
        raise InputError("features", None, "no feature chosen", "at least one feature")
    runs = {numbers[n]: dataset.runs[numbers[n]] for n in chosen}
    if len(runs) == len(dataset.runs):
        return dataset
    label = f"{dataset.label}, {len(runs)} of {len(dataset.runs)} features"
    return replace(dataset, key=content_key([], dataset.key, tuple(chosen)), label=label, runs=runs)


def feature_names(path: Path = SAMPLE / "mslr" / "feature_names.txt") -> dict[int, str]:
    """``{128: "in-link number", ...}`` from lines ``128: in-link number``."""
    out = {}
    for line in path.read_text().splitlines():
        number, _, text = line.partition(":")
        if number.strip().isdigit():
            out[int(number)] = text.strip()
    return out


@st.cache_resource(show_spinner="Reading the Robust03 sample ...")
def robust03_sample() -> Dataset:
    """The bundled Robust03 runs and qrels (``sample_data/robust03``)."""
    folder = SAMPLE / "robust03"
    runs = [(p.name, p.read_bytes()) for p in sorted((folder / "runs").glob("*.gz"))]
    qrels = ("qrels.txt.gz", (folder / "qrels.txt.gz").read_bytes())
    return dataset_from_trec(runs, qrels, label=SOURCES["robust03"])


@st.cache_resource(show_spinner="Reading the MSLR-WEB10K sample ...")
def mslr_sample() -> Dataset:
    """The bundled MSLR-WEB10K sample, every feature a system (``sample_data/mslr``)."""
    path = SAMPLE / "mslr" / "msn1.fold1.test.5k.txt.gz"
    return dataset_from_letor(path.name, path.read_bytes(), SOURCES["mslr"], feature_names())


@st.cache_resource(show_spinner="Reading the uploaded files ...", max_entries=8)
def _cached_trec(key: str, _runs: Sequence, _qrels) -> Dataset:
    """Uploaded TREC files (Streamlit ``UploadedFile`` objects) -> dataset, once per content."""
    return dataset_from_trec(
        [(f.name, f.getvalue()) for f in _runs], (_qrels.name, _qrels.getvalue())
    )


@st.cache_resource(show_spinner="Reading the uploaded file ...", max_entries=8)
def _cached_letor(key: str, _file) -> Dataset:
    return dataset_from_letor(_file.name, _file.getvalue())


def _files(value) -> list:
    """A file uploader's value as a list of ``UploadedFile`` objects."""
    return value if isinstance(value, list) else [value] if value is not None else []


def _upload_key(files: Sequence) -> str:
    """Content hash of uploaded files, computed once per upload (not on every rerun)."""
    ids = tuple((f.file_id, f.name, f.size) for f in files)
    memo = st.session_state.setdefault("_upload_keys", {})
    if ids not in memo:
        memo[ids] = content_key([(f.name, f.getvalue()) for f in files])
    return memo[ids]


def _load_once(key: str, load: Callable[[], Dataset]) -> Dataset | str:
    """The dataset of an upload, or its error message, remembered so bad files are read once."""
    failed = st.session_state.setdefault("_upload_errors", {})
    if key not in failed:
        try:
            return load()
        except InputError as error:
            failed[key] = str(error)
    return failed[key]


# ----------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    """The sidebar's settings; every field is hashable (they key the caches)."""

    measures: tuple[str, ...] = DEFAULT_MEASURES
    rel_level: int = 1
    gain: str = "linear"
    tiebreak: str = "trec_eval"
    samples: int = 200
    seed: int = 0


def with_gain(names: Sequence[str], gain: str) -> tuple[tuple[str, ...], list[str]]:
    """Parse measure names and give nDCG the chosen gain -> (names, error messages)."""
    out, errors = [], []
    for name in names:
        try:
            measure = Measure.parse(name)
        except InputError as error:
            errors.append(str(error))
            continue
        if measure.family == "nDCG":
            measure = Measure(measure.family, measure.cutoff, gain)
        if str(measure) not in out:
            out.append(str(measure))
    return tuple(out), errors


def _data_sidebar() -> tuple[Dataset, list[str]]:
    """The source chooser and uploaders -> the dataset in use and messages for the page.

    A failed upload leaves the previous dataset (``st.session_state["dataset"]``) in use.
    """
    source = st.radio("Source", list(SOURCES), format_func=SOURCES.get, key="source")
    errors: list[str] = []
    candidate: Dataset | None = None
    try:
        if source == "robust03":
            candidate = robust03_sample()
        elif source == "mslr":
            candidate = _features_chooser(mslr_sample())
        elif source == "trec":
            candidate = _trec_uploads(errors)
        else:
            candidate = _letor_uploads(errors)
    except InputError as error:
        errors.append(str(error))
    previous = st.session_state.get("dataset")
    if candidate is not None:
        st.session_state["dataset"] = candidate
    elif previous is None:
        st.session_state["dataset"] = robust03_sample()
    dataset = st.session_state["dataset"]
    if candidate is None:
        st.caption(f"Still showing: {dataset.label}")
    return dataset, errors


def _trec_uploads(errors: list[str]) -> Dataset | None:
    runs = _files(
        st.file_uploader(
            "Run files (TREC format, .gz too)", accept_multiple_files=True, key="upload_runs"
        )
    )
    qrels = _files(st.file_uploader("Qrels file", key="upload_qrels"))
    if runs and qrels:
        key = _upload_key([*runs, *qrels])
        found = _load_once(key, lambda: _cached_trec(key, runs, qrels[0]))
        if isinstance(found, str):
            errors.append(found)
        else:
            st.session_state["uploaded_trec"] = found
    elif runs or qrels:
        st.info("Add " + ("the qrels file" if runs else "at least one run file") + ".")
    return st.session_state.get("uploaded_trec")


def _letor_uploads(errors: list[str]) -> Dataset | None:
    upload = _files(st.file_uploader("LETOR / svmlight file (.gz too)", key="upload_letor"))
    if upload:
        key = _upload_key(upload)
        found = _load_once(key, lambda: _cached_letor(key, upload[0]))
        if isinstance(found, str):
            errors.append(found)
        else:
            st.session_state["uploaded_letor"] = found
    full = st.session_state.get("uploaded_letor")
    return _features_chooser(full) if full is not None else None


def _features_chooser(full: Dataset) -> Dataset:
    numbers = sorted(n for n in map(_feature_number, full.runs) if n is not None)
    text = st.text_input(
        "Features as systems",
        value="all",
        key=f"features_{full.key}",
        help=f"'all' or numbers and ranges, e.g. 1-5,128 (the file has {len(numbers)} features, "
        f"{numbers[0]}-{numbers[-1]})",
    )
    return select_features(full, text)


def _settings_sidebar(dataset: Dataset) -> tuple[Settings, list[str]]:
    typed = st.multiselect(
        "Measures and cutoffs",
        MEASURE_CHOICES,
        default=list(DEFAULT_MEASURES),
        accept_new_options=True,
        key="measures",
        help="ir_measures names; type another cutoff such as P@7 or nDCG@3 and press Enter.",
    )
    gain = st.radio(
        "nDCG gain",
        ("linear", "exp"),
        horizontal=True,
        key="gain",
        help="linear: the qrels level; exp: 2**level - 1",
    )
    measures, errors = with_gain(typed, gain)
    top = int(dataset.qrels["level"].max()) if len(dataset.qrels) else 1
    rel_level = st.number_input(
        "Relevance level", 1, max(top, 1), 1, key="rel_level",
        help="lowest qrels level that counts as relevant (trec_eval -l); nDCG uses the levels",
    )  # fmt: skip
    tiebreak = st.selectbox(
        "Tie-break (oblivious mode)", tiecore.TIEBREAKS, key="tiebreak", format_func=str,
        help="; ".join(f"{k}: {v}" for k, v in TIEBREAK_HELP.items()),
    )  # fmt: skip
    left, right = st.columns(2)
    samples = left.number_input("Samples", 2, 20_000, 200, step=100, key="samples")
    seed = right.number_input("Seed", 0, 2**31 - 1, 0, key="seed")
    settings = Settings(measures, int(rel_level), gain, tiebreak, int(samples), int(seed))
    return settings, [f"Measures: {e}" for e in errors]


def sidebar() -> tuple[Dataset, Settings]:
    """Draw the shared sidebar (data, then settings); remember and return the choice.

    Messages about bad uploads or bad measure names are shown at the top of the page.
    """
    with st.sidebar:
        st.header("Data")
        dataset, errors = _data_sidebar()
        st.header("Settings")
        settings, measure_errors = _settings_sidebar(dataset)
    st.session_state["context"] = (dataset, settings)
    for message in [*errors, *measure_errors]:
        st.error(message, icon=":material/error:")
    return dataset, settings


def context() -> tuple[Dataset, Settings]:
    """The dataset and settings chosen in the sidebar (``app.py`` draws it before each page)."""
    if "context" not in st.session_state:
        return sidebar()
    return st.session_state["context"]


def need_measures(settings: Settings) -> None:
    """Stop the page with a hint when no measure is chosen."""
    if not settings.measures:
        st.info("Choose at least one measure in the sidebar.")
        st.stop()


def pick_measure(settings: Settings, key: str, label: str = "Measure") -> str:
    """One of the sidebar's measures for a page that looks at one measure."""
    need_measures(settings)
    return st.selectbox(label, settings.measures, key=key)


def pick_run(dataset: Dataset, key: str, label: str = "System", default: str | None = None) -> str:
    names = dataset.names
    index = names.index(default) if default in names else 0
    return st.selectbox(label, names, index=index, key=key, format_func=dataset.describe)


# ----------------------------------------------------------------------------- cached tiecore calls


def _quiet(function: Callable, *args, **kwargs):
    """Call a tiecore function with its 'queries skipped' warnings silenced (shown once at load)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TieCoreWarning)
        return function(*args, **kwargs)


def _mode_args(ties: str, settings: Settings) -> dict:
    """Only the settings that change a mode's result (so other changes hit the cache)."""
    sampled = ties == "sampled" or settings.tiebreak == "random"
    return {
        "ties": ties,
        "tiebreak": settings.tiebreak if ties == "oblivious" else "trec_eval",
        "samples": settings.samples if ties == "sampled" else 2,
        "seed": settings.seed if sampled else 0,
        "rel_level": settings.rel_level,
    }


@st.cache_data(show_spinner=False, max_entries=4096)
def _evaluate_run(
    _run: pd.DataFrame,
    _qrels: pd.DataFrame,
    key: str,
    name: str,
    measures: tuple[str, ...],
    per_query: bool,
    **args,
) -> pd.DataFrame:
    return _quiet(
        tiecore.evaluate, {name: _run}, _qrels, list(measures), per_query=per_query, **args
    )


@st.cache_data(show_spinner=False, max_entries=256)
def _evaluate_all(
    _dataset: Dataset,
    key: str,
    names: tuple[str, ...],
    measures: tuple[str, ...],
    per_query: bool,
    **args,
) -> pd.DataFrame:
    if args["ties"] != "sampled":  # fast: one call, the judgments summarised once
        runs = {n: _dataset.runs[n] for n in names}
        return _quiet(
            tiecore.evaluate, runs, _dataset.qrels, list(measures), per_query=per_query, **args
        )
    parts = [
        _evaluate_run(_dataset.runs[n], _dataset.qrels, key, n, measures, per_query, **args)
        for n in names
    ]
    return pd.concat(parts, ignore_index=True)


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

    The first time a sampled result is computed, each run is sampled (and
    cached) on its own under a progress bar; every run draws from its own seed
    (:func:`tiecore.evaluate.run_seed`), so the values equal one call over all runs.
    """
    names = tuple(names or dataset.names)
    measures = tuple(measures or settings.measures)
    args = _mode_args(ties, settings)
    key = (dataset.key, names, measures, per_query, tuple(sorted(args.items())))
    done = st.session_state.setdefault("_computed", set())
    if ties == "sampled" and key not in done:
        bar = st.progress(0.0, text="Sampling ...")
        for i, name in enumerate(names):
            bar.progress(
                i / len(names), text=f"Sampling {args['samples']} tie-breaks of {name} ..."
            )
            _evaluate_run(
                dataset.runs[name], dataset.qrels, dataset.key, name, measures, per_query, **args
            )
        bar.empty()
    done.add(key)
    return _evaluate_all(dataset, dataset.key, names, measures, per_query, **args)


def stacked_layout(
    rows: int, *, titles: Sequence[str] = (), gap: float = 0.06, heights: Sequence[float] = ()
) -> tuple[dict, list[tuple[str, str]]]:
    """Layout of ``rows`` charts stacked vertically on one shared x axis.

    A light replacement for ``plotly.subplots.make_subplots`` (which costs a
    tenth of a second per figure, too slow for instant re-renders).  Returns
    the layout dict and the ``(xaxis, yaxis)`` names of each row, top first.
    """
    heights = np.asarray(heights or [1.0] * rows, dtype=float)
    spans = heights / heights.sum() * (1 - gap * (rows - 1))
    tops = 1 - np.concatenate(([0.0], np.cumsum(spans[:-1] + gap)))
    layout: dict = {"annotations": []}
    axes = []
    for row in range(rows):
        suffix = "" if row == 0 else str(row + 1)
        x, y = f"x{suffix}", f"y{suffix}"
        layout[f"xaxis{suffix}"] = {"anchor": y, "showticklabels": row == rows - 1}
        low, high = max(tops[row] - spans[row], 0.0), min(tops[row], 1.0)
        layout[f"yaxis{suffix}"] = {"anchor": x, "domain": [round(low, 9), round(high, 9)]}
        if row < len(titles):
            layout["annotations"].append(
                {
                    "text": titles[row], "x": 0.5, "xref": "paper", "xanchor": "center",
                    "y": tops[row], "yref": "paper", "yanchor": "bottom", "showarrow": False,
                    "font": {"size": 14},
                }
            )  # fmt: skip
        axes.append((x, y))
    for row in range(rows - 1):
        suffix = "" if row == 0 else str(row + 1)
        layout[f"xaxis{suffix}"]["matches"] = f"x{rows}"
    return layout, axes


def modes_table(dataset: Dataset, settings: Settings) -> pd.DataFrame:
    """Per run and measure: oblivious, aware, sampled (mean, std) and the exact spread.

    ``exact_std`` is the standard deviation of the run's mean over random
    tie-breaks, computed exactly by :func:`tiecore.spread.evaluate_spread`.
    """
    keys = ["run", "measure"]
    aware = evaluate(dataset, settings, "aware")[[*keys, "value"]].rename(
        columns={"value": "aware"}
    )
    oblivious = evaluate(dataset, settings, "oblivious")[[*keys, "value"]]
    sampled = evaluate(dataset, settings, "sampled")[[*keys, "value", "std"]]
    table = aware.merge(oblivious.rename(columns={"value": "oblivious"}), on=keys)
    table = table.merge(sampled.rename(columns={"value": "sampled", "std": "sampled_std"}), on=keys)
    spread = spread_table(dataset, settings)
    spread = spread.assign(exact_std=np.sqrt(spread["var"]))[[*keys, "exact_std", "min", "max"]]
    table = table.merge(spread, on=keys, how="left")
    return table[
        [
            "run",
            "measure",
            "oblivious",
            "aware",
            "sampled",
            "sampled_std",
            "exact_std",
            "min",
            "max",
        ]
    ]


@st.cache_data(show_spinner="Computing the exact spread ...", max_entries=256)
def _spread(
    _dataset: Dataset, key: str, measures: tuple[str, ...], rel_level: int, per_query: bool
) -> pd.DataFrame:
    from tiecore import spread

    return _quiet(
        spread.evaluate_spread,
        dict(_dataset.runs),
        _dataset.qrels,
        list(measures),
        rel_level=rel_level,
        per_query=per_query,
    )


def spread_table(
    dataset: Dataset,
    settings: Settings,
    *,
    measures: Sequence[str] | None = None,
    per_query: bool = False,
) -> pd.DataFrame:
    """:func:`tiecore.spread.evaluate_spread`: the exact variance, min and max over tie-breaks."""
    measures = tuple(measures or settings.measures)
    frame = _spread(dataset, dataset.key, measures, settings.rel_level, per_query)
    return frame if per_query else frame[frame["qid"] == "all"]


@st.cache_data(show_spinner="Profiling ties ...", max_entries=64)
def tie_profiles(_dataset: Dataset, key: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per run: share of tied rows and largest group; and the group-size histogram (long)."""
    from tiecore import spread

    rows, sizes = [], []
    for name, run in _dataset.runs.items():
        profile = spread.tie_profile(run)
        groups = profile["group_sizes"]
        rows.append(
            {
                "run": name,
                "rows": len(run),
                "share_tied_rows": profile["share_tied_rows"],
                "largest_group": profile["largest_group"],
                "tie_groups": int(groups[groups.index > 1].sum()),
            }
        )
        sizes.append(pd.DataFrame({"run": name, "size": groups.index, "groups": groups.to_numpy()}))
    return pd.DataFrame(rows), pd.concat(sizes, ignore_index=True)


@st.cache_data(show_spinner="Finding tie groups ...", max_entries=256)
def tie_groups(
    _dataset: Dataset, key: str, run: str, measure: str, rel_level: int, qid: str | None
) -> pd.DataFrame:
    """:func:`tiecore.spread.tie_groups` of one run (one query or all)."""
    from tiecore import spread

    return _quiet(
        spread.tie_groups, _dataset.runs[run], _dataset.qrels, measure, rel_level=rel_level, qid=qid
    )


@st.cache_data(show_spinner="Enumerating the exact distribution ...", max_entries=256)
def distribution(
    _dataset: Dataset, key: str, run: str, measure: str, rel_level: int, qid: str
) -> pd.DataFrame | None:
    """:func:`tiecore.spread.distribution` of one query, or None when it is too large to list."""
    from tiecore import spread

    try:
        return _quiet(
            spread.distribution,
            _dataset.runs[run],
            _dataset.qrels,
            measure,
            qid,
            rel_level=rel_level,
        )
    except (ValueError, MemoryError):
        return None


@st.cache_data(show_spinner=False, max_entries=128)
def _samples_of_run(
    _dataset: Dataset, key: str, run: str, measure: str, samples: int, seed: int, rel_level: int
) -> pd.DataFrame:
    from tiecore.evaluate import query_values, run_seed
    from tiecore.judgments import Judgments
    from tiecore.ranking import Ranking

    judgments = Judgments.from_qrels(_dataset.qrels, rel_level)
    rng = run_seed(seed, run)
    ranking = _quiet(
        Ranking.build, _dataset.runs[run], judgments, tiebreak="file_order", seed=rng, name=run
    )
    parsed = Measure.parse(measure)
    drawn = query_values(ranking, judgments, [parsed], ties="sampled", samples=samples, rng=rng)[
        parsed
    ]
    chosen = ranking.counts > 0
    frame = pd.DataFrame(drawn[:, chosen], columns=judgments.qids[chosen])
    frame.index.name = "sample"
    frame.columns.name = "qid"
    return frame


def sampled_values(dataset: Dataset, settings: Settings, run: str, measure: str) -> pd.DataFrame:
    """Per-query values of one run under each random tie-break: a (samples x queries) frame.

    Drawn exactly as ``tiecore.evaluate(..., ties="sampled")`` draws them, so the
    mean of each column is that function's per-query value.
    """
    args = (dataset.key, run, measure, settings.samples, settings.seed, settings.rel_level)
    done = st.session_state.setdefault("_computed", set())
    if args not in done:
        bar = st.progress(0.5, text=f"Sampling {settings.samples} tie-breaks of {run} ...")
        _samples_of_run(dataset, *args)
        bar.empty()
        done.add(args)
    return _samples_of_run(dataset, *args)


@st.cache_data(show_spinner=False, max_entries=64)
def _compare(
    _dataset: Dataset,
    key: str,
    names: tuple[str, ...],
    measure: str,
    samples: int,
    seed: int,
    rel_level: int,
    n_resamples: int,
):
    from tiecore import compare

    runs = {n: _dataset.runs[n] for n in names}
    return _quiet(
        compare.compare,
        runs,
        _dataset.qrels,
        measure,
        samples=samples,
        seed=seed,
        rel_level=rel_level,
        n_resamples=n_resamples,
    )


def comparison(
    dataset: Dataset,
    settings: Settings,
    measure: str,
    names: Sequence[str],
    n_resamples: int = 1000,
):
    """:func:`tiecore.compare.compare` of the chosen systems, cached (progress bar once)."""
    args = (
        dataset.key,
        tuple(names),
        measure,
        settings.samples,
        settings.seed,
        settings.rel_level,
        n_resamples,
    )
    done = st.session_state.setdefault("_computed", set())
    if args not in done:
        bar = st.progress(
            0.3,
            text=f"Sampling {settings.samples} tie-breaks of {len(names)} systems ...",
        )
        _compare(dataset, *args)
        bar.empty()
        done.add(args)
    return _compare(dataset, *args)


@st.cache_data(show_spinner="Scoring every system under every tie-break ...", max_entries=64)
def _policy_table(_dataset: Dataset, key: str, measure: str, rel_level: int) -> pd.DataFrame:
    frames = {}
    for ties, tiebreak in [("aware", "trec_eval")] + [("oblivious", p) for p in POLICIES]:
        found = _quiet(
            tiecore.evaluate,
            dict(_dataset.runs),
            _dataset.qrels,
            measure,
            ties=ties,
            tiebreak=tiebreak,
            rel_level=rel_level,
        )
        frames["aware" if ties == "aware" else tiebreak] = found.set_index("run")["value"]
    return pd.DataFrame(frames).rename_axis("run")


def policy_table(dataset: Dataset, settings: Settings, measure: str) -> pd.DataFrame:
    """Per system: the tie-aware value and the value under every deterministic tie-break."""
    return _policy_table(dataset, dataset.key, measure, settings.rel_level)


# ----------------------------------------------------------------------------- small computations


def per_rank(groups: pd.DataFrame) -> pd.DataFrame:
    """Expected relevance and gain at each rank of one query, from its tie groups.

    Over all orderings, each rank of a group of ``n`` docs with ``r`` relevant
    ones and total gain ``G`` holds a relevant doc with probability ``r/n`` and
    has expected gain ``G/n``.
    """
    sizes = groups["size"].to_numpy()
    rows = np.repeat(np.arange(len(groups)), sizes)
    first = np.repeat(groups["start_rank"].to_numpy(), sizes)
    rank = first + np.arange(len(rows)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return pd.DataFrame(
        {
            "rank": rank,
            "group": groups["group"].to_numpy()[rows],
            "expected_relevance": (groups["relevant"].to_numpy() / sizes)[rows],
            "expected_gain": (groups["gain"].to_numpy() / sizes)[rows],
        }
    )


def size_bins(sizes: pd.DataFrame) -> pd.DataFrame:
    """Group-size histogram (columns size, groups) binned by powers of two: 1, 2, 3-4, 5-8, ...

    Returns columns ``sizes`` (bin label), ``groups``, ``rows`` and ``share_rows``.
    """
    size = sizes["size"].to_numpy()
    upper = 2 ** np.ceil(np.log2(np.maximum(size, 1))).astype(np.int64)
    frame = pd.DataFrame(
        {"upper": upper, "groups": sizes["groups"].to_numpy(), "rows": size * sizes["groups"]}
    )
    out = frame.groupby("upper", as_index=False).sum()
    lower = np.maximum(out["upper"] // 2 + 1, 1)
    out["sizes"] = [
        f"{lo}" if lo == hi else f"{lo}–{hi}" for lo, hi in zip(lower, out["upper"], strict=True)
    ]
    out["share_rows"] = out["rows"] / max(int(out["rows"].sum()), 1)
    return out[["sizes", "groups", "rows", "share_rows"]]


def expected_contributions(
    run: pd.DataFrame, qrels: pd.DataFrame, measure: str, rel_level: int = 1
) -> pd.DataFrame:
    """Per rank, the expected (tie-aware) term the rank adds to the measure; they sum to its value.

    Every measure is ``scale * sum_{j <= cut} c_j / w(j) / denominator``
    (:mod:`tiecore.kernels`) with ``c_j`` the expected per-position component of
    :func:`tiecore.profiles.aware`; one row per run row: ``qid, rank, component, term``.
    """
    from tiecore import kernels, profiles
    from tiecore.judgments import Judgments
    from tiecore.ranking import Ranking

    judgments = Judgments.from_qrels(qrels, rel_level)
    ranking = _quiet(Ranking.build, run, judgments, tiebreak="file_order")
    parsed = Measure.parse(measure)
    recipe = kernels.plan(parsed, judgments)
    component = profiles.aware(ranking, judgments).component(recipe.component)
    column = kernels.weighted(component, recipe.weight, ranking.rank)[:-1]
    denominator = recipe.denominator[ranking.query]
    inside = (ranking.rank <= recipe.cut[ranking.query]) & (denominator > 0)
    term = np.zeros(len(column))
    np.divide(recipe.scale * column, denominator, out=term, where=inside)
    return pd.DataFrame(
        {
            "qid": judgments.qids[ranking.query],
            "rank": ranking.rank,
            "component": component[:-1],
            "term": term,
        }
    )


def paper_quantities(groups: pd.DataFrame, cutoff: int) -> dict[str, float]:
    """McSherry & Najork's ``R_c, t_c, n_c, r_c`` at cutoff ``k`` (``V_c`` holds rank ``k``).

    ``t_c`` ranks lie above ``V_c``, ``R_c`` of them relevant; ``V_c`` has ``n_c``
    docs, ``r_c`` relevant.  With ``k`` past the list, ``V_c`` is the last group.
    """
    start = groups["start_rank"].to_numpy()
    end = groups["end_rank"].to_numpy()
    if len(groups) == 0:
        return {"k": cutoff, "R_c": 0, "t_c": 0, "n_c": 0, "r_c": 0, "group": None}
    c = int(np.searchsorted(end, min(cutoff, int(end[-1]))))
    relevant = groups["relevant"].to_numpy()
    return {
        "k": cutoff,
        "group": int(groups["group"].iloc[c]),
        "R_c": int(relevant[:c].sum()),
        "t_c": int(start[c] - 1),
        "n_c": int(groups["size"].iloc[c]),
        "r_c": int(relevant[c]),
    }


def orderings(scores: Sequence[float], limit: int = MAX_ORDERINGS) -> np.ndarray | None:
    """Every order of the rows consistent with ``scores`` (descending), or None past ``limit``.

    There are ``prod(n_i!)`` of them over the tie groups ``i``.  Returns an
    ``(orderings, rows)`` array of row indices.
    """
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    _, sizes = np.unique(-scores[order], return_counts=True)
    if math.prod(math.factorial(int(n)) for n in sizes) > limit:
        return None
    groups = np.split(order, np.cumsum(sizes)[:-1])
    blocks = [list(itertools.permutations(g)) for g in groups]
    return np.array(
        [np.concatenate(choice) for choice in itertools.product(*blocks)], dtype=np.int64
    )


def ordering_values(
    docs: pd.DataFrame, orders: np.ndarray, measure: str, rel_level: int = 1
) -> np.ndarray:
    """The measure of each ordering of a one-query list (columns docno, score, level).

    Every ordering becomes a query of one run whose file order is that ordering,
    scored by :func:`tiecore.evaluate` with ``tiebreak="file_order"``.
    """
    count, width = orders.shape
    qids = np.repeat([f"o{i:06d}" for i in range(count)], width)
    docnos = docs["docno"].to_numpy()[orders.ravel()]
    run = pd.DataFrame(
        {"qid": qids, "docno": docnos, "score": docs["score"].to_numpy(float)[orders.ravel()]}
    )
    qrels = pd.DataFrame(
        {
            "qid": np.repeat([f"o{i:06d}" for i in range(count)], len(docs)),
            "docno": np.tile(docs["docno"].to_numpy(), count),
            "level": np.tile(docs["level"].to_numpy(np.int64), count),
        }
    )
    found = tiecore.evaluate(
        run,
        qrels,
        measure,
        ties="oblivious",
        tiebreak="file_order",
        rel_level=rel_level,
        per_query=True,
        complete=True,
    )
    found = found[found["qid"] != "all"]
    return found.set_index("qid")["value"].reindex([f"o{i:06d}" for i in range(count)]).to_numpy()


def one_query(docs: pd.DataFrame, qid: str = "q") -> tuple[pd.DataFrame, pd.DataFrame]:
    """A small edited list (docno, score, level) as a one-query run and its qrels."""
    run = pd.DataFrame(
        {"qid": qid, "docno": docs["docno"].astype(str), "score": docs["score"].astype(float)}
    )
    qrels = pd.DataFrame(
        {"qid": qid, "docno": docs["docno"].astype(str), "level": docs["level"].astype("int64")}
    )
    return run, qrels


# ----------------------------------------------------------------------------- display helpers


def show_table(frame: pd.DataFrame, name: str, *, key: str, **kwargs) -> None:
    """A table and, next to it, a button to download it as CSV."""
    st.dataframe(frame, **kwargs)
    st.download_button(
        f"Download {name} (CSV)",
        lambda: frame.to_csv(index=not isinstance(frame.index, pd.RangeIndex)),  # on click only
        file_name=f"{name.replace(' ', '_')}.csv",
        mime="text/csv",
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )


def dataset_caption(dataset: Dataset) -> None:
    """One line about the data in use (and notes such as skipped queries)."""
    st.caption(f"**{dataset.label}** · {dataset.summary}")
    for note in dataset.notes:
        st.caption(f":material/info: {note}")
