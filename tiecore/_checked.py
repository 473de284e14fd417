"""Frames already validated, so that each run is checked once, not at every stage.

A run read from a file is checked by the reader (with line numbers), a frame given
to the API by :func:`tiecore.frames.check_run`; :meth:`tiecore.ranking.Ranking.build`
then needs no third duplicate test.  A frame is remembered with the arrow arrays of
its id columns: arrow arrays are immutable, so any change of ``qid`` or ``docno``
(an assignment, ``.loc[...] = ...``) replaces them and the frame counts as
unchecked again.  The cheap checks (columns, finite scores) always run.
"""

from __future__ import annotations

import threading
import weakref

#: id(frame) -> (weak reference to the frame, its qid array, its docno array, kind).
_CHECKED: dict[int, tuple[weakref.ref, object, object, str]] = {}
_LOCK = threading.Lock()


def _ids(frame: object) -> tuple[object, object] | None:
    """The arrow arrays behind ``qid`` and ``docno``, or None if they are not arrow."""
    try:
        qid = frame["qid"].array._pa_array  # type: ignore[index]
        docno = frame["docno"].array._pa_array  # type: ignore[index]
    except (AttributeError, KeyError, TypeError):
        return None
    return qid, docno


def mark(frame: object, kind: str) -> None:
    """Remember that ``frame`` passed the checks of ``kind`` (``run`` or ``qrels``)."""
    ids = _ids(frame)
    if ids is None:
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
        _CHECKED[key] = (ref, *ids, kind)


def is_checked(frame: object, kind: str) -> bool:
    """Whether ``frame`` passed the checks of ``kind`` and its id columns are unchanged."""
    entry = _CHECKED.get(id(frame))
    if entry is None or entry[0]() is not frame or entry[3] != kind:
        return False
    ids = _ids(frame)
    return ids is not None and ids[0] is entry[1] and ids[1] is entry[2]
