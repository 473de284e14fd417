"""Warm-up: the MSLR sample's first view, computed by a background process at start-up.

The bundled MSLR-WEB10K sample has 136 features as systems; scoring them all
(oblivious values, the exact spread, the tie profiles) takes seconds.  When the
server first runs the app, :func:`start` launches ``python -m app_lib.warmup DIR``
in a process of its own (another core, where there is one): it reads the sample
and computes, with the very functions the app calls (:mod:`app_lib.cache`), what
its Overview shows under the default settings, and pickles each result into
``DIR``.  That process runs :mod:`app_lib.warmup`; this module, below
:mod:`app_lib.cache`, only starts it and reads its files.  :func:`fetch` hands
such a result to the app (waiting for it if the process is still on it), so a
first visit only loads and draws.  Any other data
or setting is computed as usual.  ``TIECORE_APP_WARM=0`` switches the warm-up
off (the AppTest suite does).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import streamlit as st

from app_lib import data

ROOT = Path(__file__).resolve().parents[1]
ENV = "TIECORE_APP_WARM"
#: Niceness added to the warm-up process (a page that waits for it lowers it to the server's).
NICE = 10
#: Longest wait for a planned result, in seconds (then the page computes it itself).
WAIT = 120.0


def name_of(kind: str, key: tuple) -> str:
    """The file name of one result: a hash of its kind and cache key."""
    return hashlib.sha1(repr((kind, key)).encode()).hexdigest()[:20] + ".pkl"


#: Seconds between the first visit and the warm-up's start: the first visitor's page is drawn
#: first (on two cores the warm-up made a fresh server's first Overview 0.6 s slower).
DELAY = 6.0


@st.cache_resource(show_spinner=False)
def _state() -> dict:
    return {"folder": None, "process": None, "planned": False}


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0"


def start() -> None:
    """Plan the warm-up once per server, :data:`DELAY` seconds on (no-op when switched off).

    Until it runs, :func:`fetch` finds nothing and a page computes for itself.
    """
    state = _state()
    if state["planned"] or not enabled():
        return
    state["planned"] = True
    timer = threading.Timer(DELAY, _launch, args=(state,))
    timer.daemon = True
    timer.start()


def _launch(state: dict) -> None:
    """Start ``python -m app_lib.warmup FOLDER`` and note it in ``state``; import what later
    pages need."""
    folder = tempfile.mkdtemp(prefix="tiecore-warm-")
    process = subprocess.Popen(
        [sys.executable, "-m", "app_lib.warmup", folder],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: os.nice(NICE),
    )
    atexit.register(_stop, process, folder)
    state["process"] = process  # before the folder: fetch() reads the folder first
    state["folder"] = folder
    # tiecore imports scipy.stats (about 0.5 s) on first use, by the rankings' tests: here,
    # seconds after the first page is drawn, rather than on a visitor's first rankings page
    import scipy.stats  # noqa: F401


@st.cache_resource(show_spinner=False)
def _mslr_key() -> str:
    return data.mslr_key()


def _stop(process: subprocess.Popen, folder: str) -> None:
    if process.poll() is None:
        process.terminate()
    shutil.rmtree(folder, ignore_errors=True)


def _load(path: Path) -> object:
    with open(path, "rb") as file:
        return pickle.load(file)


def fetch(kind: str, key: tuple) -> object | None:
    """The warm-up's result for ``(kind, key)``, or None when it has not planned it.

    While the process still works on a planned result, wait for it (its priority
    raised to normal when allowed) rather than compute it twice.
    """
    state = _state()
    if state["folder"] is None:
        return None
    folder, process = Path(state["folder"]), state["process"]
    path = folder / name_of(kind, key)
    plan = folder / "plan.pkl"
    deadline = time.monotonic() + WAIT
    raised = False
    while True:
        if path.exists():
            try:
                return _load(path)
            except (OSError, pickle.UnpicklingError, EOFError):
                return None
        if process.poll() is not None or time.monotonic() > deadline:
            return None
        if plan.exists() and path.name not in _load(plan):
            return None
        if not plan.exists() and kind != "dataset" and key[0] != _mslr_key():
            return None  # the warm-up only computes the MSLR sample
        if not raised:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, process.pid, os.getpriority(os.PRIO_PROCESS, 0))
            raised = True
        time.sleep(0.05)
