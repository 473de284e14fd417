"""A run and its judgments as explicit types: :class:`Run` and :class:`Qrels`.

What the readers return, and what the evaluator, the CLI and the interop layer pass
along: a run that says its name, its source, its tags and whether it was checked,
as ranx's ``Run``/``Qrels`` and ir_measures' evaluator inputs do, instead of side
channels (a process-global registry keyed by ``id(frame)``, loose ``attrs`` keys).

Design
------
Both are :class:`pandas.DataFrame` subclasses, so that users keep a DataFrame (every
pandas operation, ``run.values``, ``run.attrs["name"]`` all work as before), with:

* **typed fields** :attr:`Run.name`, :attr:`Run.source`, :attr:`Run.tags` and
  :attr:`Run.part` (a query partition on a cluster; :attr:`Qrels.source` only).  They
  are stored in the frame's ``attrs``, pandas' documented place for a frame's
  metadata: pandas carries them through operations (a filtered run keeps its name, as
  a user expects) and users' code reading ``run.attrs["name"]`` keeps working; the
  package itself reads and writes the fields only, never the keys.
* **the checked state** held on the object itself, *not* propagated: an internal
  name (pandas' ``_internal_names``), so that a new frame made from a checked one
  (a filter, a copy, a concatenation) starts unchecked, and so that it keeps nothing
  of its parent alive.  A frame passes the id checks once (:meth:`mark_checked`, by a
  reader with line numbers, or :func:`tiecore.io.frames.check_run`), remembering the
  arrow arrays behind ``qid`` and ``docno`` (through the public ``__arrow_array__``
  protocol of pandas' arrow-backed arrays).  Arrow arrays are immutable: any change of
  the ids (``run.loc[1, "docno"] = ...``, an assignment of the column) replaces them,
  and the comparison by identity in :meth:`is_checked` then finds the frame unchecked
  again, so a changed run is tested anew, never trusted.  The cheap checks (columns,
  finite scores) always run.

A wrapper class holding a frame was the other option; it would have broken every
user who treats ``read_run``'s result as the DataFrame it was, for no gain: the
subclass gives the same explicit fields.  A plain DataFrame is still accepted
everywhere (:meth:`Run.of` views it as a run, reading a name a user set in its
``attrs``).

Examples
--------
>>> run = Run.of(pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]}), name="bm25")
>>> run.name, run.attrs["name"], run.is_checked()
('bm25', 'bm25', False)
>>> run[run.score > 0].name
'bm25'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

if TYPE_CHECKING:
    from tiecore.io.ids import RunIds

__all__ = ["Qrels", "Run"]


def _id_arrays(frame: pd.DataFrame) -> tuple[object, object] | None:
    """The arrow arrays behind ``qid`` and ``docno`` (``__arrow_array__`` of pandas'
    arrow-backed arrays returns the array it holds), or None when they are not arrow."""
    try:
        qid = frame["qid"].array
        docno = frame["docno"].array
    except KeyError:
        return None
    if not (hasattr(qid, "__arrow_array__") and hasattr(docno, "__arrow_array__")):
        return None
    try:
        return qid.__arrow_array__(), docno.__arrow_array__()
    except (TypeError, ValueError, AttributeError):  # e.g. pandas' numpy-backed strings
        return None


class _Checked(pd.DataFrame):
    """The checked state shared by :class:`Run` and :class:`Qrels` (see the module)."""

    # not in _metadata: pandas does not carry it to a frame made from this one
    _internal_names: ClassVar[list[str]] = [*pd.DataFrame._internal_names, "_checked"]
    _internal_names_set: ClassVar[set[str]] = set(_internal_names)
    _checked: tuple[object, object, Any] | None = None

    def is_checked(self) -> bool:
        """Whether the id checks passed and ``qid``/``docno`` are unchanged since."""
        return self._valid() is not None

    def _valid(self) -> tuple[object, object, Any] | None:
        state = self._checked
        if state is None:
            return None
        arrays = _id_arrays(self)
        if arrays is None or arrays[0] is not state[0] or arrays[1] is not state[1]:
            return None
        return state

    def mark_checked(self, ids: RunIds | None = None) -> None:
        """Record that the id checks passed, with ``ids`` (what the reader kept of the
        id columns, :class:`tiecore.io.ids.RunIds`; kept from an earlier mark of the
        same arrays when None)."""
        arrays = _id_arrays(self)
        if arrays is None:
            return
        if ids is None and (state := self._valid()) is not None:
            ids = state[2]
        object.__setattr__(self, "_checked", (*arrays, ids))

    @property
    def source(self) -> str | None:
        """Where the frame came from (a file's display name, ``<stdin>``,
        ``run records``), or None."""
        return self.attrs.get("source")

    @source.setter
    def source(self, value: str | None) -> None:
        self.attrs["source"] = value


class Run(_Checked):
    """A run: columns ``qid``, ``docno``, ``score``, with its :attr:`name`,
    :attr:`source`, :attr:`tags`, the query :attr:`part` it is (on a cluster) and its
    checked state (see the module for why a DataFrame subclass, and the rules)."""

    @property
    def _constructor(self) -> type[Run]:
        return Run

    @classmethod
    def of(cls, frame: pd.DataFrame, **fields: Any) -> Run:
        """``frame`` as a :class:`Run` (itself if it is one, else a shallow view with its
        ``attrs``), with the given fields set (``name=``, ``source=``, ...)."""
        run = frame if isinstance(frame, Run) else _view(cls, frame)
        for key, value in fields.items():
            setattr(run, key, value)
        return run

    @property
    def name(self) -> str | None:
        """The run's name (its tag, or its file's name), or None."""
        return self.attrs.get("name")

    @name.setter
    def name(self, value: str | None) -> None:
        self.attrs["name"] = value

    @property
    def tags(self) -> list[str]:
        """The distinct tags of the run's lines, in order of first appearance."""
        return list(self.attrs.get("tags") or [])

    @tags.setter
    def tags(self, value: list[str]) -> None:
        self.attrs["tags"] = list(value)

    @property
    def part(self) -> tuple[int, int] | None:
        """``(i, n)`` when the run is the i-th of n query partitions (on a cluster)."""
        return self.attrs.get("part")

    @part.setter
    def part(self, value: tuple[int, int] | None) -> None:
        self.attrs["part"] = value

    def renewed(self, frame: pd.DataFrame) -> Run:
        """``frame``, made from this run's rows, as a :class:`Run` with this run's fields
        (name, source, tags, part; not the checked state, which is the new ids' own)."""
        out = Run.of(frame)
        out.attrs = dict(self.attrs)
        return out

    def checked_ids(self) -> RunIds | None:
        """The :class:`~tiecore.io.ids.RunIds` the reader kept of the ids, while the
        run is checked and its id columns unchanged, else None."""
        state = self._valid()
        return None if state is None else state[2]


class Qrels(_Checked):
    """Judgments: columns ``qid``, ``docno``, ``level``, with their :attr:`source` and
    checked state (see the module)."""

    @property
    def _constructor(self) -> type[Qrels]:
        return Qrels

    @classmethod
    def of(cls, frame: pd.DataFrame, **fields: Any) -> Qrels:
        """``frame`` as :class:`Qrels` (itself if it is one, else a shallow view)."""
        qrels = frame if isinstance(frame, Qrels) else _view(cls, frame)
        for key, value in fields.items():
            setattr(qrels, key, value)
        return qrels


def _view(cls: type[_Checked], frame: pd.DataFrame) -> Any:
    """A shallow ``cls`` over ``frame``'s columns (the same arrays), with its ``attrs``."""
    out = cls(frame, copy=False)
    out.attrs = dict(frame.attrs)
    return out


def run_name(frame: pd.DataFrame, default: str = "run") -> str:
    """The name of a run given as a :class:`Run` or a plain DataFrame (whose user may
    have named it in ``attrs``), else ``default``."""
    return str(Run.of(frame).name or default) if isinstance(frame, pd.DataFrame) else default
