"""Measures: :class:`Measure`, the parser, and one module per measure family.

``Measure.parse("nDCG@10")`` (:mod:`tiecore.measures.measure`) reads ir_measures' and
trec_eval's names; :func:`parse_measures` also takes ir_measures' measure objects
(:mod:`tiecore.measures.ir_names`).  Each family lives in one module here (``p.py``,
``ap.py``, ``ndcg.py`` ...), which registers it in :mod:`tiecore.measures.registry`
when imported: :data:`FAMILIES` imports it on the first look-up of one of its names
(``registry.HOMES``), and every family module when the table is listed, so that
``-m map`` imports ``ap.py`` alone; the registry's docstring says how to add one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tiecore.errors import InputError
from tiecore.measures.ir_names import measure_name
from tiecore.measures.measure import MAX_CUTOFF, Measure, _Refused
from tiecore.measures.registry import FAMILIES, Family, Param, lookup, register

__all__ = [
    "DEFAULT_MEASURES",
    "FAMILIES",
    "MAX_CUTOFF",
    "Family",
    "Measure",
    "Param",
    "lookup",
    "measure_name",
    "parse_measures",
    "register",
    "split_measures",
]


def split_measures(texts: Sequence[str]) -> list[str]:
    """Split each ``-m`` value on commas that sit outside parentheses.

    A bare number continues trec_eval's parameter list (``P.5,10`` is ``P.5`` and ``P.10``).

    >>> split_measures(["P@5,P@10", "nDCG(gain=exp)@10", "P.5,10"])
    ['P@5', 'P@10', 'nDCG(gain=exp)@10', 'P.5', 'P.10']
    """
    names: list[str] = []
    for text in texts:
        for part in (piece.strip() for piece in re.split(r",(?![^(]*\))", text)):
            if (
                names
                and re.fullmatch(r"[A-Za-z_]+\.[0-9.]+", names[-1])
                and re.fullmatch(r"[0-9.]+", part)
            ):
                part = names[-1].split(".", 1)[0] + "." + part  # trec_eval's P.5,10
            names.extend([part] if part else [])
    return names


def parse_measures(measures: str | Measure | list[str | Measure]) -> list[Measure]:
    """Turn names, measures or a list of both into a list of unique measures, in order.

    >>> [str(m) for m in parse_measures(["P@5", "AP", "P@5", "MAP@5"])]
    ['P@5', 'AP', 'AP@5']
    """
    one = isinstance(measures, str | Measure) or hasattr(measures, "NAME")
    items: Sequence[object] = [measures] if one else measures  # type: ignore[assignment]
    parsed = [m if isinstance(m, Measure) else _parse(m) for m in items]
    if not parsed:
        raise InputError(
            "measure", None, "no measures given (an empty list)", "at least one, such as 'P@10'"
        )
    return list(dict.fromkeys(parsed))


def _parse(measure: object) -> Measure:
    """A name by tiecore's parser first: a value it refuses is refused (ir_measures' parser
    would take ``ERR(max_rel=0)`` and fail later); other names and objects through
    ``measure_name`` (ir_measures' syntax and objects)."""
    if isinstance(measure, str):
        try:
            return Measure.parse(measure)
        except _Refused:
            raise
        except InputError:
            pass
    return Measure.parse(measure_name(measure))


#: The measures the command line and the app show when none are named.
DEFAULT_MEASURES = ("P@10", "R@100", "F1@10", "AP", "RR", "nDCG@10", "nDCG", "Rprec", "Bpref")
