"""Data sets the explorer works on: the bundled samples and uploaded files.

The upload handlers take bytes and a file name and return a :class:`Dataset` or
the :class:`tiecore.errors.InputError` message (file, line, reason), so they
are testable without a browser.  Heavy results are cached by a content hash of
the files (:attr:`Dataset.key`), never by hashing the frames.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import pandas as pd
import streamlit as st

import tiecore
from app_lib import recent
from app_lib.settings import (
    HELD_FACTOR,
    MAX_INFLATION,
    MAX_UPLOAD_TEXT,
    READ_FACTOR,
    SESSION_BYTES,
    TRACK_HELD_FACTOR,
    cache_bytes,
)
from tiecore.errors import InputError
from tiecore.explain.precision import coarsen_run, precision_label
from tiecore.explain.views import judged_runs
from tiecore.io import read_archive, read_folder

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"

#: Sidebar data sources: key -> label.
SOURCES = {
    "robust03": "Robust03 sample (5 runs, 50 topics)",
    "mslr": "MSLR-WEB10K sample (features as systems)",
    "trec": "Upload TREC runs and qrels",
    "letor": "Upload a LETOR / svmlight file",
}


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
    #: True for the bundled samples, whose results every session shares (kept per server);
    #: an upload's results are kept in its session only (:func:`app_lib.recent.store`).
    shared: bool = False

    @cached_property
    def nbytes(self) -> int:
        """Bytes of memory its frames hold (runs and qrels, columns shared between runs
        counted in each)."""
        return sum(recent.nbytes(run) for run in self.runs.values()) + recent.nbytes(self.qrels)

    @cached_property
    def summary(self) -> str:
        """``17 systems · 100 judged queries · 1,510,973 rows``."""
        queries = self.qrels["qid"].nunique()
        rows = sum(len(r) for r in self.runs.values())
        return f"{len(self.runs)} systems · {queries} judged queries · {rows:,} rows"

    @cached_property
    def top_level(self) -> int:
        """The highest qrels level (at least 1)."""
        return max(int(self.qrels["level"].max()), 1) if len(self.qrels) else 1

    @property
    def names(self) -> list[str]:
        """Run (system) names in load order."""
        return list(self.runs)

    def describe(self, name: str) -> str:
        """``f16 · IDF (Inverse document frequency), body`` for a feature, the name for a run."""
        text = self.descriptions.get(name)
        return f"{name} · {text}" if text else name

    @property
    def noun(self) -> tuple[str, str]:
        """What a system is here, singular and plural: features of a LETOR file, else runs."""
        return ("feature", "features") if self.kind == "letor" else ("run", "runs")


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


def text_size(data: bytes, limit: int) -> int:
    """Bytes of text in ``data``: its length, or gunzipped when it is gzip, counted in
    chunks and stopped once past ``limit`` (a compressed bomb is never held whole)."""
    if data[:2] != b"\x1f\x8b":
        return len(data)
    total = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as file:
            while total <= limit and (chunk := file.read(1 << 20)):
                total += len(chunk)
    except (OSError, EOFError, zlib.error):
        return len(data)  # not readable as gzip: the reader says why
    return total


def _mib(size: float) -> str:
    return f"{size / (1 << 20):,.1f} MiB"


def check_upload(files: Sequence[tuple[str, bytes]]) -> None:
    """Refuse (:class:`InputError`) files whose reading would take too much memory.

    A gzip file may grow :data:`~app_lib.settings.MAX_INFLATION` times its size; the
    text of all ``files`` together may hold :data:`~app_lib.settings.MAX_UPLOAD_TEXT`
    bytes, and less where tiecore's memory budget
    (:func:`tiecore.memory_budget`) over the readers' peak of
    :data:`~app_lib.settings.READ_FACTOR` bytes per text byte is less.  So an upload
    takes at most ``READ_FACTOR`` times its text in memory, checked before it is read.
    """
    allowed = min(MAX_UPLOAD_TEXT, tiecore.memory_budget() / READ_FACTOR)
    total = 0
    for name, data in files:
        size = text_size(data, MAX_INFLATION * len(data))
        if size > MAX_INFLATION * len(data):
            raise InputError(
                name,
                None,
                f"gunzips to more than {MAX_INFLATION} times its {_mib(len(data))}",
                f"text that compresses at most {MAX_INFLATION} times",
            )
        total += size
        if total > allowed:
            raise InputError(
                name,
                None,
                f"the upload holds more than {_mib(allowed)} of text, more than this server "
                f"reads at once (about {READ_FACTOR} bytes of memory per byte of text)",
                f"files of at most {_mib(allowed)} of text in all",
            )


def check_session(files: Sequence[tuple[str, bytes]], held: int, budget: int | None = None) -> None:
    """Refuse (:class:`InputError`) an upload that would take this session past its budget.

    ``held``: bytes the session holds besides the data these ``files`` would replace (its
    uploaded files as Streamlit keeps them, these included, and its other data read).  The
    data read from the files are reckoned at :data:`~app_lib.settings.HELD_FACTOR` bytes per
    byte of text; with them the session may hold ``budget`` bytes
    (:data:`~app_lib.settings.SESSION_BYTES` when None).
    """
    budget = SESSION_BYTES if budget is None else budget
    text = sum(text_size(data, MAX_INFLATION * len(data)) for _, data in files)
    if held + HELD_FACTOR * text > budget:
        raise InputError(
            files[0][0],
            None,
            f"this session would hold about {_mib(held + HELD_FACTOR * text)} of uploads "
            f"({_mib(held)} already, these files read about {_mib(HELD_FACTOR * text)}), more "
            f"than the {_mib(budget)} one session may hold",
            "smaller files, or fewer: remove the files you no longer need from the uploaders "
            "(x), or reload the page to start afresh",
        )


def check_held(dataset: Dataset, held: int, budget: int | None = None) -> Dataset:
    """``dataset`` when the session holds at most ``budget`` bytes with it (``held``: as in
    :func:`check_session`), else :class:`InputError` (its data then go)."""
    budget = SESSION_BYTES if budget is None else budget
    if held + dataset.nbytes > budget:
        raise InputError(
            dataset.label,
            None,
            f"the data read take {_mib(dataset.nbytes)}; with the {_mib(held)} this session "
            f"holds already, more than the {_mib(budget)} one session may hold",
            "smaller files, or fewer: remove the files you no longer need from the uploaders "
            "(x), or reload the page to start afresh",
        )
    return dataset


def _shown(values: Sequence[str], limit: int = 5) -> str:
    return ", ".join(values[:limit]) + (" ..." if len(values) > limit else "")


def dataset_from_trec(
    run_files: Sequence[tuple[str, bytes]], qrels_file: tuple[str, bytes], label: str | None = None
) -> Dataset:
    """Read TREC runs and qrels from bytes; raises :class:`InputError` on bad input.

    Run names are the run tags (file names when tags are missing or clash), as
    :func:`tiecore.read_runs` names them.  Runs without any judged query are
    left out with a note; if that leaves none, the upload is refused.
    """
    if not run_files:
        raise InputError("runs", None, "no run file given", "at least one TREC run file")
    check_upload([*run_files, qrels_file])
    qrels = tiecore.read_qrels(_stream(*qrels_file))
    runs = tiecore.read_runs([_stream(name, data) for name, data in run_files])
    kept, notes = judged_runs(runs, qrels)
    if not kept:
        raise InputError(
            qrels_file[0],
            None,
            f"none of the {len(runs)} runs has a query in these qrels "
            f"(run queries {_shown(sorted(set().union(*(set(r['qid']) for r in runs.values()))))})",
            "qrels whose query ids match the runs'",
        )
    return Dataset(
        key=content_key([*run_files, qrels_file]),
        label=label
        or f"{len(kept)} uploaded run{'' if len(kept) == 1 else 's'}, qrels {qrels_file[0]}",
        kind="trec",
        runs=kept,
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


#: What an archive of runs may be called (the sidebar's uploader takes these endings).
ARCHIVE_TYPES = ("zip", "tar", "tgz", "gz")


def track_text_limit(held: int) -> int:
    """Bytes of run text an archive or folder may hold for a session that holds ``held``
    bytes besides: what the session's budget leaves at
    :data:`~app_lib.settings.TRACK_HELD_FACTOR` bytes of runs per byte of text, and at most
    tiecore's memory budget over it.  The reader refuses the member that passes it
    (:func:`tiecore.io.read_archive`) before holding it whole: members are read
    one at a time, so memory holds the runs read and one member's text; the runs read are
    checked again by their own size (:func:`check_held`)."""
    left = max(SESSION_BYTES - held, 0) // TRACK_HELD_FACTOR
    return int(min(left, tiecore.memory_budget() / TRACK_HELD_FACTOR))


def _merged(parts: Sequence[Mapping[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    """Runs of several sources in one mapping; a name met again gets ``-2``, ``-3``..."""
    out: dict[str, pd.DataFrame] = {}
    for part in parts:
        for name, run in part.items():
            key, k = name, 1
            while key in out:
                k += 1
                key = f"{name}-{k}"
            out[key] = run
    return out


def folder_signature(folder: str) -> tuple:
    """What identifies a folder's contents cheaply: each file's path, size and time of change
    (a changed file changes the key, so its results are computed again)."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise InputError(folder, None, "no such folder on this machine", "a folder of run files")
    return tuple(
        (p.relative_to(root).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    )


def dataset_from_track(
    qrels_file: tuple[str, bytes],
    *,
    archive: tuple[str, bytes] | None = None,
    folder: str | None = None,
    run_files: Sequence[tuple[str, bytes]] = (),
    progress=None,
    max_text: int | None = None,
) -> Dataset:
    """A whole track: the runs of an archive (zip, tar, tar.gz; gzip members too) or of a
    folder on this machine, with any loose run files, and the qrels; raises
    :class:`InputError` naming the member and line of a bad run.

    ``progress(done, total, label)`` is called after each run read; ``max_text`` bounds
    the runs' text (:func:`track_text_limit`; tiecore's default when None).  Runs are
    named by tag, else file name; a name met twice gets ``-2``.
    """
    if archive is None and folder is None:
        return dataset_from_trec(run_files, qrels_file)
    check_upload([*run_files, qrels_file])
    qrels = tiecore.read_qrels(_stream(*qrels_file))
    limit = {} if max_text is None else {"max_text": max_text}
    parts = []
    if archive is not None:
        parts.append(read_archive(_stream(*archive), progress=progress, **limit))
        key = content_key([archive, qrels_file, *run_files])
        where = f"archive {archive[0]}"
    else:
        signature = folder_signature(folder)
        parts.append(read_folder(Path(folder).expanduser(), progress=progress, **limit))
        key = content_key([qrels_file, *run_files], "folder", folder, signature)
        where = f"folder {Path(folder).name}"
    if run_files:
        parts.append(tiecore.read_runs([_stream(name, data) for name, data in run_files]))
    runs = _merged(parts)
    kept, notes = judged_runs(runs, qrels)
    if not kept:
        raise InputError(
            qrels_file[0],
            None,
            f"none of the {len(runs)} runs has a query in these qrels",
            "qrels whose query ids match the runs'",
        )
    return Dataset(
        key=key,
        label=f"{len(kept)} runs from the {where}, qrels {qrels_file[0]}",
        kind="trec",
        runs=kept,
        qrels=qrels,
        notes=notes,
    )


def server_is_local() -> bool:
    """True when the server listens on this machine only (``server.address`` 127.0.0.1,
    localhost or ::1, as ``.streamlit/config.toml`` sets it): only then may a visitor
    name a folder of the server's disk."""
    address = st.get_option("server.address")
    return str(address or "") in ("127.0.0.1", "localhost", "::1")


def feature_number(run_name: str) -> int | None:
    """``f128`` -> 128."""
    match = re.fullmatch(r"f(\d+)", run_name)
    return int(match.group(1)) if match else None


def dataset_from_letor(
    name: str, data: bytes, label: str | None = None, names: Mapping[int, str] | None = None
) -> Dataset:
    """Every feature of a LETOR / svmlight file as a system; raises :class:`InputError`."""
    check_upload([(name, data)])
    runs, qrels = tiecore.read_letor(_stream(name, data))
    if not runs:
        raise InputError(name, None, "no feature columns found", "lines like 'label qid:Q 1:v 2:v'")
    names = names or {}
    descriptions = {run: names.get(feature_number(run), "") for run in runs}
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
        if high > max(available):  # a range past the file is never built: 1-99999999999
            chosen.add(max(low, max(available) + 1))  # its first number not in the file
            high = max(available)
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


def select_features(dataset: Dataset, features: str | Sequence[str]) -> Dataset:
    """Keep the chosen features of a LETOR dataset as its systems.

    ``features`` is text (``"all"`` or ranges such as ``"1-5,128"``) or the chosen
    feature names (``["f16", "f128"]``, as the sidebar's list gives them).
    """
    numbers = {feature_number(name): name for name in dataset.runs}
    if isinstance(features, str):
        chosen = parse_features(features, [n for n in numbers if n is not None])
    else:
        unknown = [name for name in features if name not in dataset.runs]
        if unknown:
            raise InputError(
                "features", None, f"feature {unknown[0]} is not in the file", "its features"
            )
        chosen = sorted(feature_number(name) for name in dict.fromkeys(features))
    if not chosen:
        raise InputError("features", None, "no feature chosen", "at least one feature")
    runs = {numbers[n]: dataset.runs[numbers[n]] for n in chosen}
    if len(runs) == len(dataset.runs):
        return dataset
    label = f"{dataset.label}, {len(runs)} of {len(dataset.runs)} features"
    return replace(dataset, key=content_key([], dataset.key, tuple(chosen)), label=label, runs=runs)


def tidy_feature_name(text: str) -> str:
    """``IDF(Inverse document frequency): body`` -> ``IDF (Inverse document frequency), body``.

    The file's ``kind: stream`` reads as one phrase once the colon is a comma
    (a colon after ``f16 ·`` reads as a second label).
    """
    text = re.sub(r"(\w)\(", r"\1 (", text.strip())
    return re.sub(r"\s*:\s*", ", ", text)


def feature_names(path: Path = SAMPLE / "mslr" / "feature_names.txt") -> dict[int, str]:
    """``{16: "IDF (Inverse document frequency), body", ...}`` from lines ``16: IDF(...): body``."""
    out = {}
    for line in path.read_text().splitlines():
        number, _, text = line.partition(":")
        if number.strip().isdigit():
            out[int(number)] = tidy_feature_name(text)
    return out


@st.cache_resource(show_spinner="Reading the Robust03 sample ...", max_entries=1)
def robust03_sample() -> Dataset:
    """The bundled Robust03 runs and qrels (``sample_data/robust03``)."""
    folder = SAMPLE / "robust03"
    runs = [(p.name, p.read_bytes()) for p in sorted((folder / "runs").glob("*.gz"))]
    qrels = ("qrels.txt.gz", (folder / "qrels.txt.gz").read_bytes())
    return replace(dataset_from_trec(runs, qrels, label=SOURCES["robust03"]), shared=True)


MSLR_FILE = SAMPLE / "mslr" / "msn1.fold1.test.5k.txt.gz"


def mslr_key() -> str:
    """The content key of the bundled MSLR sample (:attr:`Dataset.key` of :func:`mslr_sample`)."""
    return content_key([(MSLR_FILE.name, MSLR_FILE.read_bytes())])


def read_mslr() -> Dataset:
    """The bundled MSLR-WEB10K sample, every feature a system (``sample_data/mslr``); the app
    reads it through :func:`app_lib.cache.mslr_sample` (the warm-up's copy when there is one)."""
    data = MSLR_FILE.read_bytes()
    found = dataset_from_letor(MSLR_FILE.name, data, SOURCES["mslr"], feature_names())
    return replace(found, shared=True)


def _coarsen(dataset: Dataset, key: str, precision: str | int, names: tuple[str, ...]):
    runs = {name: coarsen_run(dataset.runs[name], precision) for name in names}
    return replace(
        dataset,
        key=content_key([], key, "precision", precision, names),
        label=f"{dataset.label}, {len(names)} of {len(dataset.runs)} systems at "
        f"{precision_label(precision)}",
        runs=runs,
        notes=(),
    )


#: Coarsened copies kept (per server for the samples, per session for uploads).
COARSENED_KEPT = 16


def coarsened(dataset: Dataset, precision: str | int, names: Sequence[str]) -> Dataset:
    """The systems ``names`` of ``dataset`` with their scores at ``precision``
    (:func:`tiecore.explain.precision.coarsen_run`), once per content, precision and choice.

    Its key is the original's key with the precision and the names, so every cached
    result of the coarsened runs is keyed by content (never by a label).  The copies are
    kept as the data's results are (:func:`app_lib.recent.store`), counted by the score
    columns they add (the others are the original's).
    """
    names = tuple(names)
    kept = recent.store(
        "coarsened", COARSENED_KEPT, cache_bytes("coarsened"), shared=dataset.shared
    )
    key = (dataset.key, precision, names)
    found = kept.get(key)
    if found is None:
        with st.spinner("Rounding the scores ..."):
            found = _coarsen(dataset, dataset.key, precision, names)
        kept.put(key, found, size=sum(run["score"].nbytes for run in found.runs.values()))
    return found
