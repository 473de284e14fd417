"""A measure as a small declarative object, parsed from names like ``nDCG@10``.

Names follow ir_measures (``P@k``, ``AP``, ``nDCG(gain=exp)@10``, ``RBP(p=0.5)``
...); trec_eval's names (``P_10``, ``map``, ``ndcg_cut_10``, ``recip_rank`` ...)
are accepted too.  What each family accepts is its :class:`~tiecore.measures.registry.Family`,
declared in its own module of :mod:`tiecore.measures`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from tiecore.errors import InputError
from tiecore.measures.registry import FAMILIES, Family, lookup
from tiecore.options import LARGEST_CUT

_PATTERN = re.compile(
    r"^(?P<family>[A-Za-z][A-Za-z0-9_]*?)"
    r"(?:\((?P<params>[^)]*)\))?"
    r"(?:(?:@|_cut_|_|\.)(?P<cutoff>\d+))?$"
)


#: trec-style RBP names (rbp_eval's, as TREC-COVID printed them): ``rbp.p=0.5`` is
#: ``RBP(p=0.5,gain=scaled)``, the level / the qrels' largest level as gain.
_TREC_RBP = re.compile(r"^rbp\.p=(?P<p>[^@,()]+)(?:@(?P<cutoff>\d+))?$", re.IGNORECASE)

#: A known family with something after ``@`` that is no cutoff (``P@1e3``, ``P@-1``).
_LOOSE = re.compile(r"^(?P<family>[A-Za-z][A-Za-z0-9_]*?)(?:\([^)]*\))?@(?P<cutoff>[^,]+)$")
#: A comma outside parentheses: several names in one string (``"P@10,AP"``).
_SEVERAL = re.compile(r",(?![^(]*\))")

#: ir_measures' ``IPrec@0.1`` and trec_eval's ``iprec_at_recall_0.10`` (the level is no cutoff).
_RECALL = re.compile(
    r"^(?:iprec(?:\((?P<params>[^()]*)\))?@|iprec_at_recall_)(?P<level>\d*\.\d+|\d+)$",
    re.IGNORECASE,
)


#: The largest cutoff (trec_eval's are C ints): past int64 numpy cannot hold one at all.
MAX_CUTOFF = LARGEST_CUT


@dataclass(frozen=True, order=True)
class Measure:
    """One evaluation measure: a family, an optional cutoff, a gain and parameters.

    Parameters
    ----------
    family : str
        A family of :data:`tiecore.measures.registry.FAMILIES` (``P, R, F1, AP, RR, nDCG,
        DCG, CG, Rprec, Success, Bpref, Judged, RBP, RBP_residual`` ...).
    cutoff : int or None
        Rank cutoff ``k``; ``None`` for the whole ranking.
    gain : str or None
        The gain of families that take one (``linear`` or ``exp``); None: the
        family's default.
    params : tuple of (str, str)
        Other parameters, as ``(name, value)`` pairs (``(("ideal", "max"),)``).

    Examples
    --------
    >>> Measure.parse("nDCG(gain=exp)@10")
    Measure(family='nDCG', cutoff=10, gain='exp', params=())
    >>> str(Measure.parse("ndcg_cut_5")), str(Measure.parse("map")), str(Measure.parse("MRR"))
    ('nDCG@5', 'AP', 'RR')
    >>> str(Measure.parse("RBP(p=0.5)")), Measure.parse("nDCG(ideal=max)@5").param("ideal")
    ('RBP(p=0.5)', 'max')
    """

    family: str
    cutoff: int | None = None
    gain: str | None = None
    params: tuple = ()

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown measure family {self.family!r}")
        spec = FAMILIES[self.family]
        if spec.cutoff == "required" and self.cutoff is None:
            raise ValueError(f"{self.family} needs a cutoff, as in {self.family}@10")
        if spec.cutoff == "none" and self.cutoff is not None:
            raise ValueError(f"{self.family} takes no cutoff")
        if self.cutoff is not None and not 1 <= self.cutoff <= MAX_CUTOFF:
            raise ValueError(f"a cutoff must be an integer from 1 to {MAX_CUTOFF}")
        if self.gain is None:
            object.__setattr__(
                self, "gain", spec.params["gain"].default if "gain" in spec.params else "linear"
            )
        elif "gain" in spec.params:
            object.__setattr__(self, "gain", _checked(spec, "gain", self.gain))
        elif self.gain != "linear":
            raise ValueError(f"{self.family} takes no gain")
        given = dict(self.params)
        unknown = set(given) - set(spec.params) | ({"gain"} & set(given))
        if unknown or len(given) != len(self.params):
            raise ValueError(f"{self.family} takes no parameter {', '.join(sorted(unknown))}")
        for name, param in spec.params.items():
            if param.required and name not in given:  # ir_measures' SDCG(max_rel=3)@10
                raise ValueError(f"{self.family} needs {name}= ({param.description})")
        kept = []
        for name, param in spec.params.items():
            if name in given:
                value = _checked(spec, name, str(given[name]))
                if value != param.default:
                    kept.append((name, value))
        object.__setattr__(self, "params", tuple(kept))
        if spec.check is not None:
            spec.check(self)

    @property
    def spec(self) -> Family:
        """The family's declaration (:class:`tiecore.measures.registry.Family`)."""
        return FAMILIES[self.family]

    @property
    def exact_spread(self) -> bool:
        """Whether the tie-aware value, its variance, min and max are exact: all but a
        geometric mean over queries (GMAP), whose mean over orderings needs every
        query's whole distribution.

        >>> Measure.parse("AP").exact_spread, Measure.parse("GMAP").exact_spread
        (True, False)
        """
        return self.exact_value and not self.spec.inexact_spread

    @property
    def exact_value(self) -> bool:
        """Whether the tie-aware value (the mean over orderings) is exact, its spread
        perhaps not (a family's ``inexact_spread`` says why).

        >>> Measure.parse("IPrecAvg").exact_value, Measure.parse("GMAP").exact_value
        (True, False)
        """
        return self.spec.aggregate != "geometric" and not self.spec.inexact

    @property
    def has_tie_groups(self) -> bool:
        """Whether the variance splits by tie group (:func:`tiecore.spread.tie_groups`):
        a sum over ranks of per-doc terms with an exact spread, not ERR, infAP or
        ``nDCG(ideal=local)``, whose terms depend on the docs above.

        >>> Measure.parse("nDCG@10").has_tie_groups, Measure.parse("ERR@10").has_tie_groups
        (True, False)
        """
        return self.exact_spread and not self.spec.hooked(self)

    def param(self, name: str) -> str:
        """The value of parameter ``name`` (its default when not given)."""
        if name == "gain":
            return cast(str, self.gain)
        return cast(str, dict(self.params).get(name, self.spec.params[name].default))

    @classmethod
    def parse(cls, text: str) -> Measure:
        """Parse ``P@10``, ``nDCG(gain=exp)@10``, ``AP``, ``P_10``, ``ndcg_cut_10`` or
        ``rbp.p=0.5`` (``RBP(p=0.5,gain=scaled)``, rbp_eval's graded gain), and trec_eval's
        ``11pt_avg`` (``IPrecAvg``)."""
        if text.strip() == "11pt_avg":  # trec_eval's name starts with a digit
            text = "IPrecAvg"
        recall = _RECALL.match(text.strip())  # IPrec@0.1, iprec_at_recall_0.10
        if recall:  # trec_eval 9.0.x's name, and its rounding (round=up, tiecore.measures.iprec)
            shown = recall["level"]  # any level from 0 to 1 (trec_eval's iprec_at_recall..25)
            extra = f",{recall['params']}" if recall["params"] else ""  # IPrec(round=...)@0.5
            text = f"IPrec(recall={shown}{extra})"
        trec_rbp = _TREC_RBP.match(text.strip())
        if trec_rbp:  # rbp.p=0.5: rbp_eval's graded gain (tiecore.measures.registry's RBP)
            cut = f"@{trec_rbp['cutoff']}" if trec_rbp["cutoff"] else ""
            text = f"RBP(p={trec_rbp['p'].strip()},gain=scaled){cut}"
        match = _PATTERN.match(text.strip())
        spec = lookup(match.group("family")) if match else None
        if spec is None and _SEVERAL.search(text):
            names = [part.strip() for part in _SEVERAL.split(text)]
            raise _Refused(
                "measure", None, f"{text!r} names several measures in one string",
                f"a list of names, such as {names!r}",
            )  # fmt: skip
        loose = None if match else _LOOSE.match(text.strip())
        if loose and loose["cutoff"].strip().isdigit():  # P@ 10: ir_measures' parser takes it
            loose = None
        family = lookup(loose["family"]) if loose else None
        if loose and family is not None:  # P@1e3, P@-1, P@1.5: the cutoff
            what = "recall level" if family.name == "IPrec" else "cutoff"
            wanted = (
                "a number from 0 to 1" if what == "recall level"
                else f"an integer from 1 to {MAX_CUTOFF}"
            )  # fmt: skip
            raise _Refused(
                "measure", None, f"{text.strip()!r}: {what} {loose['cutoff']!r} is not {wanted}"
            )
        if spec is None:
            raise InputError(
                "measure", None, f"unknown measure {text!r}", f"one of {', '.join(FAMILIES)}"
            )
        assert match is not None  # the family was found in it
        params: dict[str, str] = {}
        for part in filter(None, (match.group("params") or "").split(",")):
            key, _, value = part.partition("=")
            if key.strip() in params:  # RBP(p=0.8,p=0.5): which one was meant?
                raise _Refused(
                    "measure", None, f"parameter {key.strip()!r} given twice in {text!r}",
                    "each parameter at most once",
                )  # fmt: skip
            params[key.strip()] = value.strip()
        unknown = set(params) - set(spec.params)
        if unknown:
            accepted = ", ".join(f"{k}={v.default}" for k, v in spec.params.items())
            raise InputError(
                "measure", None, f"unknown parameter in {text!r}",
                f"{spec.name}({accepted})" if accepted else f"{spec.name} without parameters",
            )  # fmt: skip
        cutoff = match.group("cutoff")
        gain = params.pop("gain", None)
        try:
            return cls(spec.name, int(cutoff) if cutoff else None, gain, tuple(params.items()))
        except ValueError as error:
            raise _Refused("measure", None, f"{text!r}: {error}") from None

    def __str__(self) -> str:
        spec = self.spec
        shown = [
            f"{name}={self.param(name)}"
            for name, param in spec.params.items()
            if self.param(name) != param.default
        ]
        params = f"({','.join(shown)})" if shown else ""
        cutoff = f"@{self.cutoff}" if self.cutoff is not None else ""
        return f"{self.family}{params}{cutoff}"


class _Refused(InputError):
    """A name of tiecore's own family and parameters with a value it refuses (``P@0``,
    ``ERR(max_rel=0)``, ``IPrec@0.15``): no other parser (ir_measures') may take it."""


def _checked(spec: Family, name: str, value: str) -> str:
    try:
        return spec.params[name].canonical(value)
    except ValueError as error:
        raise ValueError(f"{spec.name}'s {name} {error}") from None
