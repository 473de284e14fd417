"""Runs and qrels of ranx (``Run``, ``Qrels``) and trectools (``TrecRun``, ``TrecQrel``).

:func:`peer_frame` turns them into tiecore's frames, which :func:`tiecore.read_run`,
:func:`tiecore.read_qrels` and :func:`tiecore.evaluate` then check as any DataFrame;
:func:`is_peer` tells them apart. The packages are never imported: their objects are
recognised by their class's module and name.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from tiecore.errors import InputError

if TYPE_CHECKING:  # pandas loads with the first peer converted
    import pandas as pd

__all__ = ["is_peer", "peer_frame"]


#: (package, class) -> (kind, the attribute or method giving its DataFrame, its columns
#: for qid, docno and score/level).
_PEERS = {
    ("ranx", "Run"): ("run", "to_dataframe", ("q_id", "doc_id", "score")),
    ("ranx", "Qrels"): ("qrels", "to_dataframe", ("q_id", "doc_id", "score")),
    ("trectools", "TrecRun"): ("run", "run_data", ("query", "docid", "score")),
    ("trectools", "TrecQrel"): ("qrels", "qrels_data", ("query", "docid", "rel")),
}


def _peer(source: object) -> tuple[str, str, tuple[str, str, str]] | None:
    kind = type(source)
    return _PEERS.get((kind.__module__.partition(".")[0], kind.__name__))


def is_peer(source: object) -> bool:
    """Whether ``source`` is a ranx ``Run``/``Qrels`` or a trectools ``TrecRun``/``TrecQrel``."""
    return _peer(source) is not None


def peer_frame(source: object, kind: str) -> Any:
    """A ranx or trectools run (``kind="run"``) or qrels as tiecore's DataFrame.

    Runs get columns ``qid, docno, score`` and their name (ranx's ``name``;
    trectools' system tag when the run has one, else its file name) as ``tag`` and
    ``attrs["name"]``; qrels get ``qid, docno, level``.  Anything else is returned as
    it is.  The packages are not imported: the objects are recognised by their class.

    Raises
    ------
    InputError
        A run where qrels are expected, or the other way round.

    Examples
    --------
    >>> import ranx
    >>> run = peer_frame(ranx.Run({"1": {"a": 2.0, "b": 1.0}}, name="bm25"), "run")
    >>> run.name, run.columns.tolist()
    ('bm25', ['qid', 'docno', 'score', 'tag'])
    >>> peer_frame(ranx.Qrels({"1": {"a": 2}}), "qrels").to_dict("records")
    [{'qid': '1', 'docno': 'a', 'level': 2}]
    """
    import pandas as pd

    from tiecore.io.runs import Qrels, Run  # lazy: pandas on first use only

    found = _peer(source)
    if found is None:
        return source
    theirs, attribute, columns = found
    shown = f"{type(source).__module__.partition('.')[0]} {type(source).__name__}"
    if theirs != kind:
        expected = "a run (ranx Run, trectools TrecRun)" if kind == "run" else (
            "qrels (ranx Qrels, trectools TrecQrel)"
        )  # fmt: skip
        raise InputError(kind, None, f"a {shown} was given where {kind} are expected", expected)
    data = getattr(source, attribute)
    data = data() if callable(data) else data
    if data is None:
        raise InputError(kind, None, f"the {shown} holds no data (nothing was read)", "a read one")
    ours = ("qid", "docno", "score" if kind == "run" else "level")
    frame = (Run if kind == "run" else Qrels)(
        {o: data[t].to_numpy() for o, t in zip(ours, columns, strict=True)}
    )
    frame.source = str(getattr(source, "filename", None) or shown)
    if kind == "run":
        name = _peer_name(source, data)
        frame.name = name or "run"
        if name:  # the run's tag, as a text run has it (read_run and read_runs name by it)
            frame["tag"] = pd.Categorical.from_codes(np.zeros(len(frame), np.int8), [name])
    return frame


def _peer_name(source: object, data: pd.DataFrame) -> str | None:
    """ranx's run name; trectools': the one system tag, else the file's stem; else None."""

    name = getattr(source, "name", None)
    if name:
        return str(name)
    systems = data["system"].unique() if "system" in data.columns else []
    if len(systems) == 1:
        return str(systems[0])
    filename = getattr(source, "filename", None)
    if filename:
        return os.path.basename(str(filename)).removesuffix(".gz").removesuffix(".txt")
    return None
