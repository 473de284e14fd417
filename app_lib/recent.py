"""Stores of results bounded in bytes, by count and by age; sessions closed once their
visitor has left; freed memory handed back to the system.

The app keeps every result here, outside Streamlit's caches (so a computation may draw
a progress bar; :func:`app_lib.cache.memo`, laid-out figures).  :class:`Recent` keeps
them at most ``size`` entries and ``max_bytes`` bytes (:func:`nbytes`: the memory of
their frames and arrays), none unused for longer than :data:`app_lib.settings.CACHE_TTL` seconds,
the least recently used dropped first.  :func:`store` gives each kind of result
two scopes: one store per server for the bundled samples (shared by every
session), and one per session, in its session state, for the results of its own
uploads, so they leave with the session.

A visitor who closes the tab leaves a disconnected session, which Streamlit keeps
for ``server.disconnectedSessionTTL`` seconds (120) and then drops without shutting
it down: its uploaded files stay in Streamlit's upload store for the life of the
server.  :func:`sweep` closes every session of this app whose visitor has been
gone :data:`~app_lib.settings.SESSION_GRACE` seconds, through Streamlit's runtime
(its session state, uploaded files and session-scoped caches go with it).

Freed memory returns to the system only if the allocators let go of it: glibc
keeps freed pages of its heap (and each thread's arena) for reuse, pyarrow's
mimalloc keeps its own, so :func:`trim` collects the garbage (a session's objects
refer to each other in cycles), calls glibc's ``malloc_trim`` and asks pyarrow's
pool to release what it does not use, after a session is closed and every
:data:`TRIM_EVERY` seconds (measured: five closed sessions of 16 MiB LETOR
uploads left the process at 534 MiB, with 13 MiB of frames alive; trimmed, 297
MiB, where it began).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import math
import sys
import threading
import time
from collections.abc import Hashable

import numpy as np
import pandas as pd
import pyarrow
import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from app_lib.settings import CACHE_TTL, SESSION_GRACE

#: Seconds between two hand-backs of freed memory (:func:`trim`) when no session ended.
TRIM_EVERY = 60.0
#: Seconds between two sweeps for sessions whose visitor has left (:func:`sweep`).
SWEEP_EVERY = 2.0

_MISSING = object()


def nbytes(value: object, seen: set[int] | None = None) -> int:
    """The bytes ``value`` holds: frames by their columns' memory, arrays by their buffers,
    containers and objects with what they hold (each object counted once).

    >>> nbytes(np.zeros(1000)) >= 8000, nbytes([b"x" * 100, b"x" * 100]) > 200
    (True, True)
    """
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(deep=True).sum())
    if isinstance(value, pd.Series | pd.Index):
        return int(value.memory_usage(deep=True))
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    size = sys.getsizeof(value)
    if isinstance(value, str | bytes | bytearray | int | float | bool | None):
        return size
    if isinstance(value, dict):
        return size + sum(nbytes(k, seen) + nbytes(v, seen) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return size + sum(nbytes(item, seen) for item in value)
    if hasattr(value, "__dict__"):
        return size + nbytes(vars(value), seen)
    return size


class Recent:
    """Entries by recency of use (most recent last), dropped past ``size`` or ``ttl`` seconds.

    >>> store = Recent(2)
    >>> store.put("a", 1); store.put("b", 2); store.put("c", 3)
    >>> "a" in store, store.get("b"), len(store)
    (False, 2, 2)
    >>> store = Recent(10, max_bytes=20_000)
    >>> for key in "abc":
    ...     store.put(key, np.zeros(1000))
    >>> "a" in store, len(store), store.bytes
    (False, 2, 16000)
    """

    def __init__(self, size: int, ttl: float = CACHE_TTL, max_bytes: float = math.inf) -> None:
        self.size, self.ttl, self.max_bytes = size, ttl, max_bytes
        self._items: dict[Hashable, tuple[float, object, int]] = {}
        self._bytes = 0
        self._lock = threading.Lock()  # sessions run in threads of one process

    def _expire(self, now: float) -> None:
        while self._items:
            key, (used, _, size) = next(iter(self._items.items()))
            if (
                used >= now - self.ttl
                and len(self._items) <= self.size
                and (self._bytes <= self.max_bytes or len(self._items) == 1)  # one kept alone
            ):
                break
            del self._items[key]
            self._bytes -= size

    def _drop(self, key: Hashable) -> None:
        _, _, size = self._items.pop(key, (0.0, None, 0))
        self._bytes -= size

    def get(self, key: Hashable, default: object = None) -> object:
        """The value of ``key`` (now the most recently used), or ``default``."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            _, value, size = self._items.pop(key, (now, _MISSING, 0))
            if value is _MISSING:
                return default
            self._items[key] = (now, value, size)
            return value

    def put(self, key: Hashable, value: object, size: int | None = None) -> None:
        """Keep ``value`` under ``key`` as the most recently used entry; one that alone holds
        more than ``max_bytes`` is kept alone, every other entry dropped (as Streamlit's
        ``max_size`` does: a rerun does not compute it again, and the next value replaces it).

        ``size``: the bytes it holds of its own, where :func:`nbytes` would count memory
        it shares (a copy whose columns are the original's); :func:`nbytes` when None.
        """
        now = time.monotonic()
        if size is None:
            size = nbytes(value) if math.isfinite(self.max_bytes) else 0
        with self._lock:
            self._drop(key)
            if size > self.max_bytes:
                self._items.clear()
                self._bytes = 0
            self._items[key] = (now, value, size)
            self._bytes += size
            self._expire(now)

    @property
    def bytes(self) -> int:
        """Bytes of the values kept (:func:`nbytes` of each, when they were put)."""
        with self._lock:
            return self._bytes

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            self._expire(time.monotonic())
            return key in self._items

    def __len__(self) -> int:
        with self._lock:
            self._expire(time.monotonic())
            return len(self._items)


# ----------------------------------------------------------------------------- scopes


#: Session-state key: whether the data in use are shared by every session (the bundled
#: samples; the sidebar sets it), for :func:`store` calls that name no data.
SHARED = "_shared_data"
#: Session-state key of the session's own stores (:func:`store`).
OWN = "_own_stores"


def session_id() -> str | None:
    """The id of the session whose script runs in this thread (None outside a script run)."""
    context = get_script_run_ctx(suppress_warning=True)
    return context.session_id if context is not None else None


@st.cache_resource(show_spinner=False)
def _shared_stores() -> dict[str, Recent]:
    return {}


def store(name: str, size: int, max_bytes: float, shared: bool | None = None) -> Recent:
    """The store of results ``name``: the server's, for results of the bundled samples
    (``shared``), else this session's, in its session state (freed with the session).

    ``shared`` None: as the sidebar's data in use (:data:`SHARED`).  Outside a script run
    (a test calling the cache directly) the server's.
    """
    if shared is None:
        shared = bool(st.session_state.get(SHARED, True)) if session_id() else True
    if shared or session_id() is None:
        stores = _shared_stores()
    else:
        stores = st.session_state.setdefault(OWN, {})
    found = stores.get(name)
    if found is None:
        found = stores.setdefault(name, Recent(size, max_bytes=max_bytes))
    return found


def drop_own() -> None:
    """Drop this session's results of its uploads, its stores (a new upload makes the
    results of the one it replaces useless)."""
    st.session_state.pop(OWN, None)


# ----------------------------------------------------------------------------- sessions


@st.cache_resource(show_spinner=False)
def _sessions() -> dict[str, list]:
    """Every session this app has run in, by id -> [since when (time.monotonic()) it has been
    seen disconnected (None: connected), its session state]."""
    return {}


def register() -> None:
    """Note the session of this script run (``app.py`` calls it on every run)."""
    context = get_script_run_ctx(suppress_warning=True)
    if context is not None:
        _sessions()[context.session_id] = [None, context.session_state]


def _forget(state: object) -> None:
    """Empty a closed session's state, its data, results and widgets' files.  Streamlit may
    keep the closed session's object a while (its runtime's loop holds the last session it
    served in a local variable), and with it everything its state holds."""
    inner = getattr(state, "_state", state)  # SafeSessionState wraps the SessionState
    with contextlib.suppress(Exception):  # a Streamlit whose state has no clear()
        inner.clear()


def sweep(now: float, grace: float = SESSION_GRACE) -> tuple[int, int]:
    """Close the sessions whose visitor has been gone ``grace`` seconds -> (sessions newly
    seen gone, sessions closed).

    A closed session is marked not resumable and shut down by Streamlit's runtime on
    its event loop (``Runtime.clear_user_info_for_session``); its state is emptied
    here (:func:`_forget`), and its uploaded files are removed here too, for a session
    Streamlit dropped from its storage without shutting it down.
    """
    if not Runtime.exists():
        return 0, 0
    runtime = Runtime.instance()
    sessions = _sessions()
    gone = closed = 0
    for sid, seen in list(sessions.items()):
        if runtime.is_active_session(sid):
            seen[0] = None
        elif seen[0] is None:
            seen[0] = now
            gone += 1
        elif now - seen[0] >= grace:
            runtime.clear_user_info_for_session(sid)
            runtime.uploaded_file_mgr.remove_session_files(sid)
            _forget(seen[1])
            del sessions[sid]
            closed += 1
    return gone, closed


def release_files(kept: list) -> int:
    """Remove from Streamlit's upload store this session's files that have left its
    uploaders -> how many.

    ``kept``: the files in the uploaders drawn on this run (``UploadedFile`` objects).  The
    uploader's x (or a new file in a one-file uploader) takes a file off the page, but
    Streamlit keeps its bytes until the session ends.  Only a file seen in an uploader on an
    earlier run is removed, never one that has arrived but is not in an uploader's value
    yet.
    """
    sid = session_id()
    if sid is None or not Runtime.exists():
        return 0
    ids = {file.file_id for file in kept}
    seen = st.session_state.get(_SEEN, set())
    gone = seen - ids
    for file_id in gone:
        Runtime.instance().uploaded_file_mgr.remove_file(sid, file_id)
    st.session_state[_SEEN] = ids
    if gone:
        trim_soon()
    return len(gone)


#: Session-state key: the ids of the files in the uploaders on the last run.
_SEEN = "_upload_files_seen"
#: Set when a script run has freed much memory: the sweep trims at its next turn.
_TRIM_SOON = threading.Event()


def trim_soon(after_run: bool = False) -> None:
    """Ask for a :func:`trim` at the next sweep (after a run freed much memory: an upload
    read, replaced or removed), without waiting for it in the script run; ``after_run``:
    once this script run has ended (:func:`run_ended`: the page's computations on a new
    upload free memory too)."""
    if after_run and session_id() is not None:
        st.session_state[_TRIM_AFTER] = True
    else:
        _TRIM_SOON.set()


#: Session-state key: this run asked for a trim once it has ended.
_TRIM_AFTER = "_trim_after_run"


def run_ended() -> None:
    """The end of a script run (``app.py`` calls it): a trim asked for by the run is due."""
    if st.session_state.pop(_TRIM_AFTER, False):
        _TRIM_SOON.set()


def session_upload_bytes() -> int:
    """Bytes of the files this session has uploaded that Streamlit holds (0 where its upload
    store does not say)."""
    sid = session_id()
    if sid is None or not Runtime.exists():
        return 0
    files = getattr(Runtime.instance().uploaded_file_mgr, "file_storage", {}).get(sid, {})
    return sum(len(getattr(record, "data", b"")) for record in list(files.values()))


def trim() -> bool:
    """Collect garbage and hand the free pages back to the system (pyarrow's pool, glibc's
    ``malloc_trim``, every arena); False where the C library has no such call."""
    gc.collect()
    with contextlib.suppress(AttributeError):  # a pyarrow without the call
        pyarrow.default_memory_pool().release_unused()
    try:
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    except (OSError, AttributeError):
        return False


def arrow_pool() -> str:
    """Make pyarrow's pool one that hands freed memory back at once -> its backend's name.

    pyarrow's default pool in its Linux wheels (mimalloc) keeps a heap per thread, and
    Streamlit runs each script run in a thread of its own: the memory a finished run's
    thread freed stays with mimalloc (measured: 215 MB resident in its region, with 14 MB
    allocated, after two visitors' 40 MB uploads were freed).  Its jemalloc pool with no
    decay returns freed pages as they are freed (reading a 40 MB run as fast); a build
    without jemalloc gets the system's ``malloc``, which :func:`trim` trims.
    """
    try:
        pyarrow.set_memory_pool(pyarrow.jemalloc_memory_pool())
        pyarrow.jemalloc_set_decay_ms(0)
    except NotImplementedError:  # a build without jemalloc
        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    return pyarrow.default_memory_pool().backend_name


@st.cache_resource(show_spinner=False)
def trimmer() -> threading.Thread:
    """Once per server: pyarrow's pool set to hand memory back (:func:`arrow_pool`), and a
    background thread that closes the sessions whose visitor has left
    (:func:`sweep`, every :data:`SWEEP_EVERY` seconds) and calls :func:`trim` on the sweep
    after a session left or was closed (Streamlit has cleared its caches, or shut it down)
    or a run asked for it (:func:`trim_soon`), and every :data:`TRIM_EVERY` seconds, so the
    memory of closed sessions, of replaced uploads and of results dropped from the caches
    leaves the process."""

    def loop() -> None:
        changed, trimmed = False, time.monotonic()
        while True:
            time.sleep(SWEEP_EVERY)
            now = time.monotonic()
            if changed or _TRIM_SOON.is_set() or now - trimmed >= TRIM_EVERY:
                _TRIM_SOON.clear()
                trim()
                trimmed = now
            try:
                changed = any(sweep(now))
            except Exception:  # the next sweep tries again
                changed = False

    arrow_pool()
    thread = threading.Thread(target=loop, name="tiecore-app-trim", daemon=True)
    thread.start()
    return thread
