"""Measures as small declarative objects, parsed from names like ``nDCG@10``.

Names follow ir_measures: ``P@k``, ``R@k``, ``F1@k``, ``AP``/``AP@k``,
``RR``/``RR@k``, ``nDCG``/``nDCG@k``, ``Rprec``, ``Success@k``, ``Bpref``.
An exponential gain ``2**level - 1`` is chosen with ``nDCG(gain=exp)@10``.
trec_eval's names (``P_10``, ``map``, ``ndcg_cut_10``, ``recip_rank`` ...)
are accepted too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tiecore.errors import InputError

#: family -> (needs a cutoff, accepts a cutoff, accepts parameters)
FAMILIES: dict[str, tuple[bool, bool, bool]] = {
    "P": (True, True, False),
    "R": (True, True, False),
    "F1": (True, True, False),
    "AP": (False, True, False),
    "RR": (False, True, False),
    "nDCG": (False, True, True),
    "Rprec": (False, False, False),
    "Success": (True, True, False),
    "Bpref": (False, False, False),
}

_ALIASES = {name.lower(): name for name in FAMILIES} | {
    "precision": "P",
    "recall": "R",
    "f1": "F1",
    "map": "AP",
    "mrr": "RR",
    "recip_rank": "RR",
    "ndcg": "nDCG",
    "ndcg_cut": "nDCG",
    "map_cut": "AP",
    "success": "Success",
}

_GAINS = ("linear", "exp")

_PATTERN = re.compile(
    r"^(?P<family>[A-Za-z][A-Za-z0-9_]*?)"
    r"(?:\((?P<params>[^)]*)\))?"
    r"(?:(?:@|_cut_|_|\.)(?P<cutoff>\d+))?$"
)


@dataclass(frozen=True, order=True)
class Measure:
    """One evaluation measure: a family, an optional cutoff and a gain.

    Parameters
    ----------
    family : str
        One of ``P, R, F1, AP, RR, nDCG, Rprec, Success, Bpref``.
    cutoff : int or None
        Rank cutoff ``k``; ``None`` for the whole ranking.
    gain : {"linear", "exp"}
        nDCG's gain: the qrels level, or ``2**level - 1``.

    Examples
    --------
    >>> Measure.parse("nDCG(gain=exp)@10")
    Measure(family='nDCG', cutoff=10, gain='exp')
    >>> str(Measure.parse("ndcg_cut_5")), str(Measure.parse("map"))
    ('nDCG@5', 'AP')
    """

    family: str
    cutoff: int | None = None
    gain: str = "linear"

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown measure family {self.family!r}")
        needs, accepts, _ = FAMILIES[self.family]
        if needs and self.cutoff is None:
            raise ValueError(f"{self.family} needs a cutoff, as in {self.family}@10")
        if not accepts and self.cutoff is not None:
            raise ValueError(f"{self.family} takes no cutoff")
        if self.cutoff is not None and self.cutoff < 1:
            raise ValueError("a cutoff must be a positive integer")
        if self.gain not in _GAINS:
            raise ValueError(f"gain must be one of {_GAINS}")
        if self.gain != "linear" and self.family != "nDCG":
            raise ValueError("only nDCG takes a gain")

    @classmethod
    def parse(cls, text: str) -> Measure:
        """Parse ``P@10``, ``nDCG(gain=exp)@10``, ``AP``, ``P_10`` or ``ndcg_cut_10``."""
        match = _PATTERN.match(text.strip())
        family = _ALIASES.get(match.group("family").lower()) if match else None
        if family is None:
            raise InputError(
                "measure", None, f"unknown measure {text!r}", f"one of {', '.join(FAMILIES)}"
            )
        params: dict[str, str] = {}
        for part in filter(None, (match.group("params") or "").split(",")):
            key, _, value = part.partition("=")
            params[key.strip()] = value.strip()
        unknown = set(params) - {"gain"}
        if unknown or (params and not FAMILIES[family][2]):
            raise InputError("measure", None, f"unknown parameter in {text!r}", "nDCG(gain=exp)")
        cutoff = match.group("cutoff")
        try:
            return cls(family, int(cutoff) if cutoff else None, params.get("gain", "linear"))
        except ValueError as error:
            raise InputError("measure", None, f"{text!r}: {error}") from None

    def __str__(self) -> str:
        params = "(gain=exp)" if self.gain == "exp" else ""
        cutoff = f"@{self.cutoff}" if self.cutoff is not None else ""
        return f"{self.family}{params}{cutoff}"


def parse_measures(measures: str | Measure | list[str | Measure]) -> list[Measure]:
    """Turn names, measures or a list of both into a list of unique measures, in order.

    >>> [str(m) for m in parse_measures(["P@5", "AP", "P@5"])]
    ['P@5', 'AP']
    """
    if isinstance(measures, str | Measure):
        measures = [measures]
    parsed = [m if isinstance(m, Measure) else Measure.parse(m) for m in measures]
    if not parsed:
        raise InputError(
            "measure", None, "no measures given (an empty list)", "at least one, such as 'P@10'"
        )
    return list(dict.fromkeys(parsed))


#: The measures the command line and the app show when none are named.
DEFAULT_MEASURES = ("P@10", "R@100", "F1@10", "AP", "RR", "nDCG@10", "nDCG", "Rprec", "Bpref")
