"""The public readers: a run or qrels from any source, sent to the module that reads it.

A ranx or trectools object becomes a frame first (:mod:`tiecore.io.peers`); Parquet,
JSON Lines, stdin, DataFrames and ir_measures records go to :mod:`tiecore.io.sources`;
anything else is TREC text (:mod:`tiecore.io.trec`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from tiecore.io import sources as _sources
from tiecore.io import trec
from tiecore.io.files import file_names
from tiecore.io.peers import is_peer, peer_frame
from tiecore.io.text import Source

if TYPE_CHECKING:
    import pandas as pd

    from tiecore.io.runs import Qrels, Run

#: What the readers take: a path or file object (TREC text, Parquet, JSON Lines, ``"-"``
#: for stdin), a DataFrame, pytrec_eval's ``{qid: {docno: score or level}}``, ir_measures
#: records (any iterable of them), or a ranx or trectools object (untyped: ``Any``).
AnySource: TypeAlias = "Source | pd.DataFrame | Mapping[str, Mapping[str, float]] | Iterable[Any]"

__all__ = ["read_qrels", "read_run", "read_runs"]


def read_run(source: AnySource, *, name: str | None = None) -> Run:
    """Read a TREC run file.

    Parameters
    ----------
    source : str, path or file object
        ``qid Q0 docno rank score tag`` lines, separated by any spaces and tabs, plain
        or gzip. A file object may be binary or text (e.g. a Streamlit upload).
    name : str, optional
        Name of the run; by default the run tag, or the file name (without ``.gz`` and
        ``.txt``) when the tag is missing or the file holds several different tags.

    Returns
    -------
    tiecore.io.runs.Run
        A pandas DataFrame with columns ``qid`` (str), ``docno`` (str), ``score``
        (float64) in file order, and the fields ``name``, ``source`` (the file name)
        and ``tags`` (the distinct tags, in order of appearance), also readable as
        ``attrs["name"]`` etc.; it counts as checked while its ids are unchanged.

    Raises
    ------
    InputError
        A missing or binary file, a line with the wrong number of fields, a score that
        is not a finite number or a docno repeated within a query, with its line.

    Notes
    -----
    The rank column is ignored, as in trec_eval; so are ``Q0`` and fields after the
    tag. Blank lines and lines starting with ``#`` are skipped.

    Examples
    --------
    >>> import io
    >>> text = b"301 Q0 doc1 1 2.5 bm25\\n301\\tQ0\\tdoc2\\t2\\t  1.5\\tbm25\\n"
    >>> run = read_run(io.BytesIO(text))
    >>> run
       qid docno  score
    0  301  doc1    2.5
    1  301  doc2    1.5
    >>> run.name, run.tags
    ('bm25', ['bm25'])
    """
    source = peer_frame(source, "run")  # ranx and trectools runs
    if _sources.claims(source):  # Parquet, JSON Lines, stdin, frames, records
        return _sources.read_run(source, name=name)
    return trec.read_run(source, name=name)


def read_runs(sources: Iterable[AnySource] | AnySource) -> dict[str, Run]:
    """Read several run files, keyed by run name.

    Parameters
    ----------
    sources : iterable of paths or file objects
        The run files (a single path is accepted too).

    Returns
    -------
    dict of str to pandas.DataFrame
        Each value as :func:`read_run` returns it, in the order given. The key is the
        run tag; a run without a single tag, or whose tag another run shares, is keyed
        by its file name instead, with a suffix ``-2``, ``-3``... when that name is a
        tag or an earlier file name. The run's ``name`` equals the key.
    """
    if isinstance(sources, (str, os.PathLike)) or hasattr(sources, "read") or is_peer(sources):
        sources = [sources]
    sources = _sources.run_sources(sources)  # a DataFrame or records: one run
    frames = [read_run(s) for s in sources]
    names = file_names([f.source or "" for f in frames], [f.tags for f in frames])
    for frame, name in zip(frames, names, strict=True):
        frame.name = name
    return dict(zip(names, frames, strict=True))


def read_qrels(source: AnySource) -> Qrels:
    """Read TREC relevance judgments.

    Parameters
    ----------
    source : str, path or file object
        ``qid iter docno level`` lines (``iter`` is ignored), plain or gzip.

    Returns
    -------
    tiecore.io.runs.Qrels
        A pandas DataFrame with columns ``qid`` (str), ``docno`` (str), ``level``
        (int64) in file order; its ``source`` names the file.

    Raises
    ------
    InputError
        Wrong number of fields, a level that is not an integer, a (qid, docno) pair
        judged twice (trec_eval refuses it too), an empty or binary file.
    """
    source = peer_frame(source, "qrels")  # ranx and trectools qrels
    if _sources.claims(source):  # Parquet, JSON Lines, stdin, frames, records
        return _sources.read_qrels(source)
    return trec.read_qrels(source)
