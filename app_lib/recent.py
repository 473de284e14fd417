"""A store of results bounded by count and by age, shared by the sessions of one server.

The app keeps some results outside Streamlit's caches (a computation that draws a
progress bar, a laid-out figure).  :class:`Recent` keeps them as
``st.cache_data(max_entries=..., ttl=...)`` does: at most ``size`` entries, none
unused for longer than :data:`app_lib.settings.CACHE_TTL` seconds, so the memory
of a closed session's results returns to the server.

Freed memory returns to the system only if the C library lets go of it: glibc
keeps freed pages of its heap for reuse, so :func:`trimmer` hands them back every
:data:`TRIM_EVERY` seconds (measured: five closed sessions of 16 MiB LETOR uploads
left the process at 534 MiB, with 13 MiB of frames alive; trimmed, 297 MiB, where
it began).
"""

from __future__ import annotations

import ctypes
import gc
import threading
import time
from collections.abc import Hashable

import streamlit as st

from app_lib.settings import CACHE_TTL

#: Seconds between two hand-backs of freed memory (:func:`trim`).
TRIM_EVERY = 60.0

_MISSING = object()


class Recent:
    """Entries by recency of use (most recent last), dropped past ``size`` or ``ttl`` seconds.

    >>> store = Recent(2)
    >>> store.put("a", 1); store.put("b", 2); store.put("c", 3)
    >>> "a" in store, store.get("b"), len(store)
    (False, 2, 2)
    """

    def __init__(self, size: int, ttl: float = CACHE_TTL) -> None:
        self.size, self.ttl = size, ttl
        self._items: dict[Hashable, tuple[float, object]] = {}
        self._lock = threading.Lock()  # sessions run in threads of one process

    def _expire(self, now: float) -> None:
        while self._items:
            key, (used, _) = next(iter(self._items.items()))
            if used >= now - self.ttl and len(self._items) <= self.size:
                break
            del self._items[key]

    def get(self, key: Hashable, default: object = None) -> object:
        """The value of ``key`` (now the most recently used), or ``default``."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            _, value = self._items.pop(key, (now, _MISSING))
            if value is _MISSING:
                return default
            self._items[key] = (now, value)
            return value

    def put(self, key: Hashable, value: object) -> None:
        """Keep ``value`` under ``key`` as the most recently used entry."""
        now = time.monotonic()
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = (now, value)
            self._expire(now)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            self._expire(time.monotonic())
            return key in self._items

    def __len__(self) -> int:
        with self._lock:
            self._expire(time.monotonic())
            return len(self._items)


def trim() -> bool:
    """Collect garbage and hand the heap's free pages back to the system (glibc's
    ``malloc_trim``); False where the C library has no such call."""
    gc.collect()
    try:
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    except (OSError, AttributeError):
        return False


@st.cache_resource(show_spinner=False)
def trimmer() -> threading.Thread:
    """Once per server: a background thread that calls :func:`trim` every :data:`TRIM_EVERY`
    seconds, so the memory of results dropped from the caches leaves the process."""

    def loop() -> None:
        while True:
            time.sleep(TRIM_EVERY)
            trim()

    thread = threading.Thread(target=loop, name="tiecore-app-trim", daemon=True)
    thread.start()
    return thread
