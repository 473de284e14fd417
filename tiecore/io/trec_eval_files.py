"""trec_eval's other input files: ``-Z`` z-score files, ``-R qrels_jg``, ``-R prefs`` and
``-R qrels_prefs`` judgments.

trec_eval 9.0.x reads them as whitespace-separated text lines (C's ``isspace``:
space, tab, ``\\r``, ``\\v``, ``\\f``), one record a line, every field without spaces:

z-scores (``-Z FILE``)
    ``qid measure mean stddev``: the mean and standard deviation of a measure's value
    on a query over some reference runs; ``measure`` is trec_eval's printed name
    (``P_10``, ``map``).  Numbers as C's ``atof`` reads them, ``nan`` and ``inf``
    included (trec_eval's own test file holds ``nan``).
qrels_jg (``-R qrels_jg``)
    ``qid jg docno rel``: qrels whose second field names a judgment group (a user);
    each group judges the query on its own.
prefs (``-R prefs``)
    ``qid jg jsg docno rel_level``: preference judgments; within a judgment sub-group
    ``jsg`` of a judgment group ``jg``, a doc of a higher ``rel_level`` (a number) is
    preferred to one of a lower level.
qrels_prefs (``-R qrels_prefs``)
    ``qid jg docno rel_level``: as prefs with one sub-group per group.

trec_eval stops at a malformed line ("Malformed line N"); here every problem is an
:class:`~tiecore.errors.InputError` naming the file and the line: a line with too
few or too many fields (a blank line included, as trec_eval), a number that is no
number (trec_eval's ``atof`` would read ``abc`` as 0, a silent wrong value), and, for
z-scores, a (query, measure) given twice (trec_eval would take either).  Lines end at
``\\n``; the files are small and read whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tiecore.errors import InputError

#: A whole number as C's ``atof`` reads one: decimal (exponent optional), inf, infinity,
#: nan.  Compiled on first use.
_NUMBER = r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)"


def _lines(path: str | Path) -> list[list[str]]:
    """The file's lines as fields, split as trec_eval splits them; the last line may
    lack its newline; an empty file is an error, as trec_eval's "Cannot read"."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise InputError(str(path), None, error.strerror or str(error), "a readable file") from None
    if not data:
        raise InputError(str(path), None, "is empty", "at least one line")
    if data.endswith(b"\n"):
        data = data[:-1]
    try:
        return [[field.decode() for field in line.split()] for line in data.split(b"\n")]
    except UnicodeDecodeError as error:
        raise InputError(str(path), None, f"is not UTF-8 text ({error.reason})", "text") from None


def _fields(path: str | Path, fields: list[str], line: int, names: str) -> list[str]:
    """``fields`` when there are as many as ``names`` names, else the error."""
    wanted = names.split()
    if len(fields) != len(wanted):
        got = "a blank line" if not fields else f"{len(fields)} fields"
        raise InputError(str(path), line, got, f"{len(wanted)} fields: {names}")
    return fields


def c_number(path: str | Path, text: str, line: int, what: str) -> float:
    """``text`` read as C's ``atof`` reads a whole number, or the error naming ``what``.

    >>> c_number("f", "nan", 1, "mean") != c_number("f", "nan", 1, "mean")
    True
    >>> c_number("f", "-.5e1", 1, "mean")
    -5.0
    """
    if re.fullmatch(_NUMBER, text, re.IGNORECASE) is None:
        raise InputError(str(path), line, f"{what} {text!r} is no number", "a decimal number")
    return float(text)


def read_zscores(path: str | Path) -> dict[tuple[str, str], tuple[float, float]]:
    """Read trec_eval's ``-Z`` file: ``{(qid, measure): (mean, stddev)}``.

    Lines ``qid measure mean stddev`` (module docstring); a pair given twice is an
    error naming both lines.
    """
    table: dict[tuple[str, str], tuple[float, float]] = {}
    first: dict[tuple[str, str], int] = {}
    for number, fields in enumerate(_lines(path), 1):
        qid, measure, mean, sd = _fields(path, fields, number, "qid measure mean stddev")
        key = (qid, measure)
        if key in first:
            raise InputError(
                str(path),
                number,
                f"query {qid}, measure {measure} given again (first on line {first[key]})",
                "one mean and stddev per query and measure",
            )
        first[key] = number
        table[key] = (c_number(path, mean, number, "mean"), c_number(path, sd, number, "stddev"))
    return table


@dataclass(frozen=True)
class GroupJudgments:
    """Judgments in groups, one row a line, sorted by query, group, (sub-group), docno.

    ``qid``, ``group`` (the judgment group), ``subgroup`` (prefs' ``jsg``; the group
    itself for qrels_jg and qrels_prefs), ``docno``: string arrays; ``level``: float
    (an integer level for qrels_jg); ``line``: the 1-based line each row came from.
    """

    qid: np.ndarray
    group: np.ndarray
    subgroup: np.ndarray
    docno: np.ndarray
    level: np.ndarray
    line: np.ndarray
    source: str


def _grouped(path, rows: list[tuple], integer: bool) -> GroupJudgments:
    if not rows:
        raise InputError(str(path), None, "holds no judgments", "at least one line")
    qid, group, subgroup, docno, level, line = (list(column) for column in zip(*rows, strict=True))
    order = sorted(range(len(rows)), key=lambda i: (qid[i], group[i], subgroup[i], docno[i]))
    pick = np.asarray(order, dtype=np.int64)
    return GroupJudgments(
        qid=np.asarray(qid, dtype=object)[pick],
        group=np.asarray(group, dtype=object)[pick],
        subgroup=np.asarray(subgroup, dtype=object)[pick],
        docno=np.asarray(docno, dtype=object)[pick],
        level=np.asarray(level, dtype=np.int64 if integer else np.float64)[pick],
        line=np.asarray(line, dtype=np.int64)[pick],
        source=str(path),
    )


def read_qrels_jg(path: str | Path) -> GroupJudgments:
    """Read ``-R qrels_jg`` judgments: ``qid jg docno rel``, an integer ``rel`` (as
    trec_eval's qrels); a docno judged twice in one group is an error, as in trec_eval."""
    rows = []
    seen: dict[tuple[str, str, str], int] = {}
    for number, fields in enumerate(_lines(path), 1):
        qid, jg, docno, rel = _fields(path, fields, number, "qid jg docno rel")
        if re.fullmatch(r"[+-]?\d+", rel) is None:
            raise InputError(str(path), number, f"rel {rel!r} is no integer", "an integer level")
        key = (qid, jg, docno)
        if key in seen:
            raise InputError(
                str(path),
                number,
                f"docno {docno} judged again for query {qid}, group {jg} (first on line "
                f"{seen[key]})",
                "one judgment per query, group and docno",
            )
        seen[key] = number
        rows.append((qid, jg, jg, docno, int(rel), number))
    return _grouped(path, rows, integer=True)


def read_prefs(path: str | Path) -> GroupJudgments:
    """Read ``-R prefs`` judgments: ``qid jg jsg docno rel_level`` (module docstring)."""
    rows = []
    for number, fields in enumerate(_lines(path), 1):
        qid, jg, jsg, docno, level = _fields(path, fields, number, "qid jg jsg docno rel_level")
        rows.append((qid, jg, jsg, docno, c_number(path, level, number, "rel_level"), number))
    return _grouped(path, rows, integer=False)


def read_qrels_prefs(path: str | Path) -> GroupJudgments:
    """Read ``-R qrels_prefs`` judgments: ``qid jg docno rel_level``, one sub-group per
    judgment group (module docstring)."""
    rows = []
    for number, fields in enumerate(_lines(path), 1):
        qid, jg, docno, level = _fields(path, fields, number, "qid jg docno rel_level")
        rows.append((qid, jg, jg, docno, c_number(path, level, number, "rel_level"), number))
    return _grouped(path, rows, integer=False)
