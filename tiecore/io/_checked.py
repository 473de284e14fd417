"""Frames already validated, so that each run is checked once, not at every stage.

A run read from a file is checked by the reader (with line numbers), a frame given
to the API by :func:`tiecore.io.frames.check_run`; :meth:`tiecore.engine.ranking.Ranking.build`
then needs no third duplicate test.  A frame is remembered with the arrow arrays of
its id columns: arrow arrays are immutable, so any change of ``qid`` or ``docno``
(an assignment, ``.loc[...] = ...``) replaces them and the frame counts as
unchecked again.  The cheap checks (columns, finite scores) always run.
"""

from __future__ import annotations

import threading
import weakref

#: id(frame) -> (weak reference to the frame, its qid array, its docno array, kind, and
#: what the reader kept of the ids for the evaluation (tiecore.io.ids.RunIds) or None).
_CHECKED: dict[int, tuple[weakref.ref, object, object, str, object]] = {}
_LOCK = threading.Lock()


def _ids(frame: object) -> tuple[object, object] | None:
    """The arrow arrays behind ``qid`` and ``docno``, or None if they are not arrow."""
    try:
        qid = frame["qid"].array._pa_array  # type: ignore[index]
        docno = frame["docno"].array._pa_array  # type: ignore[index]
    except (AttributeError, KeyError, TypeError):
        return None
    return qid, docno


def mark(frame: object, kind: str, ids: object = None) -> None:
    """Remember that ``frame`` passed the checks of ``kind`` (``run`` or ``qrels``), with
    ``ids``, what its reader computed of the id columns (kept when the frame is marked
    again with the same id arrays and no ``ids``)."""
    arrays = _ids(frame)
    if arrays is None:
        return
    key = id(frame)

    def forget(ref: weakref.ref, key: int = key) -> None:
        with _LOCK:
            if key in _CHECKED and _CHECKED[key][0] is ref:
                del _CHECKED[key]

    try:
        ref = weakref.ref(frame, forget)
    except TypeError:
        return
    with _LOCK:
        if ids is None and _entry(frame, arrays) is not None:
            ids = _CHECKED[key][4]
        _CHECKED[key] = (ref, *arrays, kind, ids)


def _entry(frame: object, arrays: tuple[object, object] | None) -> tuple | None:
    """The registry's entry of ``frame`` if its id arrays are still ``arrays``."""
    entry = _CHECKED.get(id(frame))
    if entry is None or entry[0]() is not frame or arrays is None:
        return None
    return entry if arrays[0] is entry[1] and arrays[1] is entry[2] else None


def is_checked(frame: object, kind: str) -> bool:
    """Whether ``frame`` passed the checks of ``kind`` and its id columns are unchanged."""
    entry = _entry(frame, _ids(frame))
    return entry is not None and entry[3] == kind


def ids_of(frame: object) -> object:
    """What the reader kept of ``frame``'s ids (:func:`mark`'s ``ids``), or None when it
    kept nothing or the id columns changed since (arrow arrays are immutable: a changed
    column is a new array)."""
    entry = _entry(frame, _ids(frame))
    return None if entry is None else entry[4]
