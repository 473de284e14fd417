"""Runs stored as Parquet, found without reading their rows, and cut into query-aligned parts.

A Parquet run (columns ``qid, docno, score``) is read by parts so that a dask worker
reads its own partition (:mod:`tiecore.distributed` writes such runs): a part is a set
of row groups that holds whole queries, found from the row groups' qid statistics.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tiecore.errors import InputError
from tiecore.io.files import dataset_stem
from tiecore.io.runs import Run

#: Columns of a Parquet run.
COLUMNS = ("qid", "docno", "score")


@dataclass(frozen=True)
class ParquetPart:
    """Row groups of one run that hold whole queries: ``((file, (group, ...)), ...)``.

    ``first`` is the run's row number of the part's first row (the rows' index
    starts there, so that an error names the row of the whole run).
    """

    pieces: tuple[tuple[str, tuple[int, ...]], ...]
    rows: int
    first: int = 0

    def read(self) -> pd.DataFrame:
        """The rows, columns ``qid, docno, score``, in stored order."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        tables = []
        for path, groups in self.pieces:
            try:
                table = pq.ParquetFile(path).read_row_groups(list(groups), columns=list(COLUMNS))
            except (OSError, pa.ArrowException) as error:
                raise InputError(path, None, f"cannot read Parquet ({error})") from None
            tables.append(table)
        table = pa.concat_tables(tables) if len(tables) != 1 else tables[0]
        frame = table.to_pandas()
        if self.first:
            frame.index = pd.RangeIndex(self.first, self.first + len(frame))
        return frame


@dataclass(frozen=True)
class ParquetRun:
    """One run stored as Parquet: its name and its smallest query-aligned parts.

    Consecutive row groups are one part unless the qid statistics prove that no
    query spans the cut between them (all qids before it sort below all after).
    ``path`` is the file or directory it was found at (for error messages).
    """

    name: str
    parts: tuple[ParquetPart, ...]
    path: str = ""

    @property
    def rows(self) -> int:
        return sum(part.rows for part in self.parts)

    def read(self) -> Run:
        """The whole run as a :class:`~tiecore.io.runs.Run` (its name and source set)."""
        frames = [part.read() for part in self.parts]
        frame = pd.concat(frames, ignore_index=True) if len(frames) != 1 else frames[0]
        return Run.of(frame, name=self.name, source=self.parts[0].pieces[0][0])

    def partitions(self, rows: int) -> list[ParquetPart]:
        """Consecutive parts grouped into partitions of about ``rows`` rows each."""
        sizes = np.array([part.rows for part in self.parts])
        count = max(1, min(len(sizes), round(sizes.sum() / max(rows, 1))))
        before = np.cumsum(sizes) - sizes
        label = np.minimum(before * count // max(sizes.sum(), 1), count - 1)
        out = []
        for value in np.unique(label):
            chosen = [self.parts[i] for i in np.flatnonzero(label == value)]
            pieces = _join([piece for part in chosen for piece in part.pieces])
            rows = sum(part.rows for part in chosen)
            out.append(ParquetPart(pieces, rows, chosen[0].first))
        return out

    @classmethod
    def of(cls, path: str | os.PathLike, name: str | None = None) -> ParquetRun:
        """A run from one Parquet file or a directory of them (read in name order)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(path)
        files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
        if not files:
            raise InputError(str(path), None, "no Parquet files", "*.parquet files")
        groups = []  # (file, group, rows, min qid, max qid)
        for file in files:
            try:
                meta = pq.ParquetFile(file).metadata
            except (OSError, pa.ArrowException) as error:
                raise InputError(str(file), None, f"cannot read Parquet ({error})") from None
            names = meta.schema.names
            missing = [c for c in COLUMNS if c not in names]
            if missing:
                raise InputError(str(file), None, f"missing columns {missing}", "qid, docno, score")
            column = names.index("qid")
            for g in range(meta.num_row_groups):
                group = meta.row_group(g)
                stats = group.column(column).statistics
                bounds = (stats.min, stats.max) if stats is not None and stats.has_min_max else None
                groups.append((str(file), g, group.num_rows, bounds))
        if name is None:
            name = dataset_stem(str(path))
        return cls(name, _units(groups), str(path))


def _join(pieces: list[tuple[str, tuple[int, ...]]]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Adjacent pieces of one file as one piece."""
    out: list[tuple[str, tuple[int, ...]]] = []
    for path, groups in pieces:
        if out and out[-1][0] == path:
            out[-1] = (path, out[-1][1] + groups)
        else:
            out.append((path, groups))
    return tuple(out)


def _units(groups: list[tuple]) -> tuple[ParquetPart, ...]:
    """Row groups joined into parts, cut only where no query can span the cut.

    A cut after group ``k`` is safe when the largest qid up to ``k`` sorts below
    the smallest qid after it; without statistics for every group, no cut.
    """
    bounds = [entry[3] for entry in groups]
    cut_after = []
    if all(b is not None for b in bounds):
        highest = np.maximum.accumulate(np.array([b[1] for b in bounds], dtype=object))
        lowest = np.minimum.accumulate(np.array([b[0] for b in bounds], dtype=object)[::-1])[::-1]
        cut_after = [k for k in range(len(groups) - 1) if highest[k] < lowest[k + 1]]
    edges = [0, *(k + 1 for k in cut_after), len(groups)]
    before = np.cumsum([0, *(entry[2] for entry in groups)])
    return tuple(
        ParquetPart(
            _join([(e[0], (e[1],)) for e in groups[a:b]]),
            int(before[b] - before[a]),
            int(before[a]),
        )
        for a, b in itertools.pairwise(edges)
    )


def read_parquet_runs(path: str | os.PathLike) -> dict[str, ParquetRun]:
    """Parquet runs found at ``path``, by name, without reading their rows.

    Parameters
    ----------
    path : str or path
        A Parquet file (one run); or a directory holding one ``NAME.parquet`` file
        per run and/or one sub-directory of Parquet files per run (``NAME/`` or
        hive style ``run=NAME/``).  Columns ``qid, docno, score``; other columns
        are ignored.

    Returns
    -------
    dict of str to ParquetRun
        In file-name order; pass it (or its values) to :func:`tiecore.evaluate`.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(str(path), None, "no such file or directory", "Parquet runs")
    if path.is_file():
        run = ParquetRun.of(path)
        return {run.name: run}
    entries = sorted(
        p
        for p in path.iterdir()
        if (p.is_file() and p.suffix == ".parquet") or (p.is_dir() and any(p.glob("*.parquet")))
    )
    if not entries:
        raise InputError(str(path), None, "no Parquet runs", "NAME.parquet files or NAME/ folders")
    runs: dict[str, ParquetRun] = {}
    for entry in entries:
        run = ParquetRun.of(entry)
        if run.name in runs:
            raise InputError(str(entry), None, f"a second run named {run.name!r}", "unique names")
        runs[run.name] = run
    return runs
