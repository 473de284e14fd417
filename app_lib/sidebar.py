"""The sidebar every page shares: the data (samples or uploads) and the settings.

``app.py`` draws it once per run (:func:`sidebar`); pages read the choice with
:func:`context`.  A failed upload leaves the previous data in use and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from app_lib import cache, data, glossary, recent, track
from app_lib.charts import GLOSSARY, TIEBREAK_HELP, tiebreak_name
from app_lib.data import Dataset
from app_lib.settings import MAX_LEVEL, MEASURE_CHOICES, Settings, with_gain
from tiecore import (
    DEFAULT_MEASURES,
    GAINS,
    SAMPLES,
    SEED,
    TIEBREAKS,
    Measure,
    report,
    split_measures,
)
from tiecore.errors import InputError
from tiecore.report import ranks


def _files(value) -> list:
    """A file uploader's value as a list of ``UploadedFile`` objects."""
    return value if isinstance(value, list) else [value] if value is not None else []


def _upload_key(files: Sequence) -> str:
    """Content hash of uploaded files, computed once per upload (not on every rerun)."""
    ids = tuple((f.file_id, f.name, f.size) for f in files)
    memo = st.session_state.setdefault("_upload_keys", {})
    if ids not in memo:
        memo[ids] = data.content_key(_contents(files))
    return memo[ids]


def _held_besides(kind: str, contents: Sequence[tuple[str, bytes]]) -> int:
    """Bytes this session holds besides its data of ``kind`` (trec or letor), which an upload
    of that kind replaces: its uploaded files as Streamlit keeps them (at least
    ``contents``, the upload's), and its data of the other kind."""
    files = recent.session_upload_bytes() or sum(len(data) for _, data in contents)
    other = st.session_state.get("uploaded_letor" if kind == "trec" else "uploaded_trec")
    return files + (other.nbytes if other is not None else 0)


def _load_once(
    kind: str,
    key: str,
    files: Sequence,
    load: Callable[[list[tuple[str, bytes]]], Dataset],
    skip: int | None = None,
) -> Dataset | str:
    """The dataset of an upload (``kind``: trec or letor), or its error message, read once.

    The data set lives in this session only (``uploaded_<kind>``, the last upload of
    each kind), never in a cache shared across sessions: its memory returns when the
    session ends.  A bad file's message is kept, so it is not read again.  An upload that
    would take the session past its budget (:data:`~app_lib.settings.SESSION_BYTES`) is
    refused before it is read (its files but the archive at ``skip``, whose runs are
    bounded as they are read) (:func:`app_lib.data.check_session`), or after, by the size
    of the data read (:func:`app_lib.data.check_held`); that refusal is not kept, since
    it depends on what else the session holds.  A new upload read drops the session's
    results of its uploads (:func:`app_lib.recent.drop_own`).
    """
    held = st.session_state.get(f"uploaded_{kind}")
    if held is not None and held.key == key:  # the key of the upload is its content's
        return held
    failed = st.session_state.setdefault("_upload_errors", {})
    if key in failed:
        return failed[key]
    contents = _contents(files)
    besides = _held_besides(kind, contents)
    try:  # an archive (``skip``: its place) is bounded as it is read (data.track_text_limit)
        data.check_session([f for i, f in enumerate(contents) if i != skip], besides)
    except InputError as error:
        return str(error)
    try:
        with st.spinner("Reading the uploaded files ..."):
            found = load(contents)
    except InputError as error:
        failed[key] = str(error)
        return failed[key]
    del contents
    recent.drop_own()  # the results of the upload it replaces
    recent.trim_soon(after_run=True)  # the reader's peak, the data replaced: handed back
    try:
        return data.check_held(found, besides)
    except InputError as error:
        return str(error)


def _contents(files: Sequence) -> list[tuple[str, bytes]]:
    return [(f.name, f.getvalue()) for f in files]


def _data_sidebar() -> tuple[Dataset, list[str]]:
    """The source chooser and uploaders -> the dataset in use and messages for the page.

    A failed upload leaves the previous dataset (``st.session_state["dataset"]``) in use.
    """
    source = st.radio("Source", list(data.SOURCES), format_func=data.SOURCES.get, key="source")
    errors: list[str] = []
    candidate: Dataset | None = None
    try:
        if source == "robust03":
            candidate = data.robust03_sample()
        elif source == "mslr":
            candidate = _features_chooser(cache.mslr_sample())
        elif source == "trec":
            candidate = _trec_uploads(errors)
        else:
            candidate = _letor_uploads(errors)
    except InputError as error:
        errors.append(str(error))
    drawn = ("upload_runs", "upload_qrels", "upload_archive", "upload_letor")
    recent.release_files([f for key in drawn for f in _files(st.session_state.get(key))])
    previous = st.session_state.get("dataset")
    if candidate is not None:
        st.session_state["dataset"] = candidate
    elif previous is None:
        st.session_state["dataset"] = data.robust03_sample()
    dataset = st.session_state["dataset"]
    if candidate is None:
        st.caption(f"Still showing: {report.escape_markdown(dataset.label)}")
    kept = f" The previous data were kept: {dataset.label}."
    return dataset, [message + kept for message in errors]


def _trec_uploads(errors: list[str]) -> Dataset | None:
    runs = _files(
        st.file_uploader(
            "Run files (TREC format, .gz too)", accept_multiple_files=True, key="upload_runs"
        )
    )
    qrels = _files(st.file_uploader("Qrels file", key="upload_qrels"))
    archive = _files(
        st.file_uploader(
            "Or a whole track: one archive of runs",
            type=list(data.ARCHIVE_TYPES),
            key="upload_archive",
            help="a .zip, .tar or .tar.gz file of TREC run files (each plain or .gz); read "
            "one run at a time, with a progress bar",
        )
    )
    folder = ""
    if data.server_is_local():
        folder = st.text_input(
            "Or a folder of runs on this computer",
            key="run_folder",
            placeholder="/path/to/track/runs",
            help="the explorer runs on this computer, so it can read a folder of run files "
            "(sub-folders too) without uploading them",
        ).strip()
    if (runs or archive or folder) and qrels:
        files = [*runs, *archive, *qrels]
        key = _upload_key(files)
        try:
            if folder:
                key = data.content_key([], key, folder, data.folder_signature(folder))
        except InputError as error:
            errors.append(str(error))
            return st.session_state.get("uploaded_trec")
        loader = _track_loader(len(runs), bool(archive), folder)
        found = _load_once("trec", key, files, loader, skip=len(runs) if archive else None)
        if isinstance(found, str):
            errors.append(found)
        else:
            st.session_state["uploaded_trec"] = found
    elif runs or qrels or archive or folder:
        st.info("Add " + ("the qrels file" if not qrels else "at least one run file") + ".")
    return st.session_state.get("uploaded_trec")


def _track_loader(loose: int, archived: bool, folder: str):
    """The reader of an upload's contents ``[*runs, archive?, qrels]``: loose run files
    alone, or with an archive or a folder (read run by run under a progress bar, their
    text bounded by what the session may still hold)."""

    def load(contents: list[tuple[str, bytes]]) -> Dataset:
        run_files, qrels_file = contents[:loose], contents[-1]
        if not archived and not folder:
            return data.dataset_from_trec(run_files, qrels_file)
        bar, report = cache.progress_bar("Reading the runs ...")
        try:
            return data.dataset_from_track(
                qrels_file,
                archive=contents[loose] if archived else None,
                folder=None if archived else folder,
                run_files=run_files,
                progress=report,
                max_text=data.track_text_limit(_held_besides("trec", contents)),
            )
        finally:
            bar.empty()

    return load


def _letor_uploads(errors: list[str]) -> Dataset | None:
    upload = _files(st.file_uploader("LETOR / svmlight file (.gz too)", key="upload_letor"))
    if upload:
        key = _upload_key(upload)
        found = _load_once(
            "letor", key, upload, lambda contents: data.dataset_from_letor(*contents[0])
        )
        if isinstance(found, str):
            errors.append(found)
        else:
            st.session_state["uploaded_letor"] = found
    full = st.session_state.get("uploaded_letor")
    return _features_chooser(full) if full is not None else None


def _features_chooser(full: Dataset) -> Dataset:
    """The features used as systems: a searchable list by name; none chosen keeps them all."""
    chosen = st.multiselect(
        "Features as systems",
        full.names,
        key=f"features_{full.key}",
        format_func=full.describe,
        placeholder=f"All {len(full.names)} features (type to pick)",
        help="leave empty to use every feature of the file; type e.g. 'BM25', 'click' or "
        "'f128' to find one",
    )
    return data.select_features(full, chosen or "all")


def _settings_sidebar(dataset: Dataset) -> tuple[Settings, list[str], list[str]]:
    typed = st.multiselect(
        "Measures and cutoffs",
        MEASURE_CHOICES,
        default=list(DEFAULT_MEASURES),
        accept_new_options=True,
        key="measures",
        help="ir_measures names; type another cutoff such as P@7 or nDCG@3 and press Enter.",
    )
    more = st.text_input(
        "More measures",
        key="more_measures",
        placeholder="e.g. DCG@5, CG, ERR@10",
        help="any ir_measures names, comma separated, exactly as written (the box above "
        "picks the highlighted offer on Enter, so DCG@5 there becomes nDCG@5)",
    )
    typed = list(dict.fromkeys([*typed, *split_measures([more])]))
    gain = st.radio(
        "nDCG gain",
        GAINS,
        horizontal=True,
        key="gain",
        help="linear: the qrels level; exp: 2**level - 1",
    )
    measures, errors = with_gain(typed, gain)
    if measures:
        with st.expander("What do these measures mean?"):
            for name in measures:
                st.caption(glossary.define(name))
    top = dataset.top_level
    asked = st.number_input(
        "Relevance level",
        1,
        MAX_LEVEL,
        1,
        key="rel_level",
        help=f"lowest qrels level that counts as relevant (trec_eval -l); these qrels hold "
        f"levels up to {top}. nDCG uses the levels themselves.",
    )
    warnings = []
    rel_level = int(asked)
    if rel_level > top:
        warnings.append(
            f"Relevance level {rel_level} refused: the qrels hold levels up to {top}, so no "
            f"document would count as relevant and every measure would be 0. Using level {top}."
        )
        rel_level = top
    if not len(dataset.qrels) or int(dataset.qrels["level"].max()) < 1:
        warnings.append(
            "These qrels judge no document relevant (no level of 1 or more): every measure "
            "is 0 under every tie-break, so no page has a tie effect to show."
        )
    tiebreak = st.selectbox(
        "Tie-break (oblivious mode)",
        TIEBREAKS,
        key="tiebreak",
        format_func=tiebreak_name,
        help="; ".join(f"{tiebreak_name(k)}: {v}" for k, v in TIEBREAK_HELP.items()),
    )
    left, right = st.columns(2)
    samples = left.number_input(
        "Samples", SAMPLES.low, 20_000, 200, step=100, key="samples", help=GLOSSARY["samples"]
    )
    seed = right.number_input("Seed", SEED.low, 2**31 - 1, 0, key="seed", help=GLOSSARY["seed"])
    settings = Settings(measures, rel_level, gain, tiebreak, int(samples), int(seed))
    return settings, [f"{e} (left out of the measures)." for e in errors], warnings


def sidebar() -> tuple[Dataset, Settings]:
    """Draw the shared sidebar (data, then settings); remember and return the choice.

    Messages about bad uploads or bad measure names are shown at the top of the page.
    """
    _open_link()
    with st.sidebar:
        st.header("Data")
        dataset, errors = _data_sidebar()
        st.session_state[recent.SHARED] = dataset.shared  # where the charts keep figures
        st.header("Settings")
        settings, measure_errors, warnings = _settings_sidebar(dataset)
    st.session_state["context"] = (dataset, settings)
    source = st.session_state.get("source")
    track.remember(
        {
            "data": source if source in BUNDLED else None,  # an upload cannot travel in a link
            "tiebreak": settings.tiebreak,
            "seed": settings.seed,
        }
    )
    for message in [*errors, *measure_errors]:  # they quote file names, ids and names as typed
        st.error(report.escape_markdown(message), icon=":material/error:")
    for message in warnings:
        st.warning(message, icon=":material/warning:")
    return dataset, settings


#: The data sources a link may name (the bundled samples; uploads stay on the reader's side).
BUNDLED = ("robust03", "mslr")


def _open_link() -> None:
    """On a session's first run, take the sidebar's first choices from the address that
    opened it (``?data=mslr&tiebreak=docno_asc&seed=7&measure=AP``): the bundled data set,
    the tie-break, the seed, and the measure a page shows (added to the measures when it
    is not among them).  A value that does not fit is ignored (its default stays)."""
    first = track.LINK not in st.session_state
    track.read_link()
    if not first:
        return
    source = track.from_link("data")
    if source in BUNDLED:
        st.session_state["source"] = source
    tiebreak = track.from_link("tiebreak")
    if tiebreak in TIEBREAKS:
        st.session_state["tiebreak"] = tiebreak
    seed = track.from_link("seed")
    if seed is not None and seed.isdigit() and SEED.low <= int(seed) <= 2**31 - 1:
        st.session_state["seed"] = int(seed)
    measure = (st.session_state.get(track.LINK) or {}).get("measure")
    if measure:
        try:
            name = str(Measure.parse(measure))
        except InputError:
            return
        if name not in DEFAULT_MEASURES:
            st.session_state["measures"] = [*DEFAULT_MEASURES, name]


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


#: What a page needs of a measure: its test (a property of Measure) and why one fails it.
NEEDS = {
    "spread": (
        "exact_spread",
        "no exact tie-aware value, variance, min and max (the mean over orderings of a "
        "geometric mean needs every query's whole distribution); the Playground samples it",
    ),
    "groups": (
        "has_tie_groups",
        "a variance that does not split by tie group (its per-doc terms depend on the docs "
        "above, or it has no exact spread)",
    ),
}


def measures_for(settings: Settings, need: str) -> tuple[str, ...]:
    """The sidebar's measures that a page needing ``need`` (:data:`NEEDS`) can show; a
    caption names the others and why, and the page stops with a hint when none is left."""
    need_measures(settings)
    test, why = NEEDS[need]
    kept = tuple(m for m in settings.measures if getattr(Measure.parse(m), test))
    left_out = [m for m in settings.measures if m not in kept]
    if left_out and kept:
        st.caption(f"Not on this page: {', '.join(left_out)}, with {why}.")
    elif left_out:
        st.info(
            f"This page has nothing to show for {', '.join(left_out)}: {why}. Choose another "
            "measure in the sidebar.",
            icon=":material/info:",
        )
        st.stop()
    return kept


def pick_measure(
    settings: Settings, key: str, label: str = "Measure", *, need: str | None = None
) -> str:
    """One of the sidebar's measures for a page that looks at one measure (only those
    that meet ``need``, see :func:`measures_for`)."""
    need_measures(settings)
    choices = settings.measures if need is None else measures_for(settings, need)
    return st.selectbox(label, choices, key=key)


def pick_run(
    dataset: Dataset,
    key: str,
    label: str = "System",
    default: str | None = None,
    names: Sequence[str] | None = None,
) -> str:
    """One system (``names`` in the order given, ``default`` first chosen)."""
    names = list(names or dataset.names)
    index = names.index(default) if default in names else 0
    return st.selectbox(label, names, index=index, key=key, format_func=dataset.describe)


#: The colour of a highlighted system in a chart (black: apart from every mover's colour).
MARK_COLOR = "#111111"


def take_linked_measure(settings: Settings, key: str) -> None:
    """Choose the measure of the address that opened the session (``measure=``) in the
    page's selectbox ``key``, once, when it is among the sidebar's measures (the sidebar
    adds it there, :func:`_open_link`)."""
    linked = track.from_link("measure")
    if not linked:
        return
    try:
        linked = str(Measure.parse(linked))
    except InputError:
        return
    if linked in settings.measures:
        st.session_state[key] = linked


def pick_systems(
    dataset: Dataset, best: Sequence[str], prefix: str, *, top: int = 20
) -> tuple[list[str], list[str]]:
    """The systems a page compares when a track has many (79-150 runs): the ``top`` best of
    ``best`` (a number box), any found and highlighted by name besides (first from the
    address's ``runs=``), or the highlighted ones alone -> (compared, highlighted), both in
    ``best``'s order (:func:`tiecore.report.ranks.compared_systems`)."""
    best = list(best)
    n = len(best)
    key = f"{prefix}_marked_{dataset.key}"
    linked = track.from_link("runs")
    if linked:
        st.session_state[key] = [r for r in linked.split(",") if r in best]
    left, middle, right = st.columns([1, 2, 1])
    chosen = left.number_input(
        "Systems compared (best first)",
        min_value=2,
        max_value=n,
        value=min(top, n),
        step=1,
        key=f"{prefix}_top_{dataset.key}_{n}",
        help=f"the best systems by the tie-aware mean, of {n}; the highlighted ones are "
        "compared besides. Pairwise tests grow with the square of the number of systems",
    )
    marked = middle.multiselect(
        "Find and highlight systems",
        best,
        key=key,
        format_func=dataset.describe,
        placeholder="type part of a name",
        help="highlighted systems are compared even outside the top, drawn in black in the "
        "slope chart and starred (★) in the rank table; the address keeps them (runs=)",
    )
    only = right.checkbox(
        "Only the highlighted",
        key=f"{prefix}_only_{dataset.key}",
        disabled=len(marked) < 2,
        help="compare the highlighted systems alone (at least two)",
    )
    names = ranks.compared_systems(best, int(chosen), marked, only_marked=only and len(marked) > 1)
    st.caption(
        f"Comparing {len(names)} of {n} systems"
        + (f", {len(marked)} highlighted" if marked else "")
        + "; the best tie-aware system first."
    )
    return names, marked
