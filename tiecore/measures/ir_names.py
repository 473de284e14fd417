"""ir_measures' measure objects and names as tiecore's: :func:`measure_name`.

:func:`measure_name` turns an ir_measures measure object (``ir_measures.nDCG@10``,
``ir_measures.P(rel=2)@5``, ``AP``, ``RR``) or its name (``"P(rel=2)@5"``) into
tiecore's name, mapping the parameters: ``cutoff`` is ``@k``; ``rel`` must be the
relevance level of the evaluation (tiecore has one for all measures, ``rel_level``);
nDCG's ``dcg='exp-log2'`` is ``gain=exp``; RBP's ``rel`` is its binary gain;
``SetP(relative=True)`` (``SetRelP``) is SetRelP; SetF's ``beta`` is trec_eval's
``set_F`` parameter ``x`` (what ir_measures' pytrec_eval provider passes it);
``judged_only`` and custom ``gains`` are no measure's parameters in tiecore and are
refused here (:mod:`tiecore.ir_measures_provider` applies them to its inputs).
It lives beside the parser (:func:`tiecore.measures.parse_measures` takes ir_measures'
objects through it); :mod:`tiecore.interop` offers it publicly.  ir_measures is
imported only when a name is none of tiecore's.
"""

from __future__ import annotations

from collections.abc import Mapping

from tiecore.errors import InputError
from tiecore.measures.measure import Measure, _Refused
from tiecore.options import INTEROP, pick, validate_params

_DCG = {"log2": None, "exp-log2": "exp"}


def _is_ir_measure(value: object) -> bool:
    return hasattr(value, "NAME") and isinstance(getattr(value, "params", None), Mapping)


@validate_params(pick(INTEROP, "rel_level"))
def measure_name(measure: object, *, rel_level: int = 1) -> str:
    """tiecore's name of an ir_measures measure (an object or its name).

    Parameters
    ----------
    measure : ir_measures measure or str
        ``ir_measures.nDCG@10``, ``ir_measures.P(rel=2)@5``, ``"RR(rel=2)"``, or a
        name tiecore parses already (``"ndcg_cut_10"``, returned in tiecore's form).
    rel_level : int
        The evaluation's relevance level; a measure's ``rel`` must equal it.

    Raises
    ------
    InputError
        A parameter or measure tiecore does not have, said in one line.

    Examples
    --------
    >>> import ir_measures
    >>> measure_name(ir_measures.nDCG @ 10), measure_name(ir_measures.AP), measure_name("RR")
    ('nDCG@10', 'AP', 'RR')
    >>> measure_name(ir_measures.P(rel=2) @ 5, rel_level=2)
    'P@5'
    >>> measure_name("nDCG(dcg='exp-log2')@10")
    'nDCG(gain=exp)@10'
    >>> measure_name(ir_measures.P(rel=2) @ 5)
    Traceback (most recent call last):
    ...
    tiecore.errors.InputError: measure: P(rel=2)@5: rel=2, but tiecore takes one relevance \
level for all measures (expected rel_level=2 (tiecore eval -l 2) for the evaluation, with P@5)
    """
    if isinstance(measure, Measure):
        return str(measure)
    if isinstance(measure, str):
        try:
            return str(Measure.parse(measure))
        except _Refused:  # tiecore's own family and parameter, a value it refuses
            raise
        except InputError as error:
            native = error
        try:
            import ir_measures
        except ImportError:
            raise native from None
        try:
            measure = ir_measures.parse_measure(measure)
        except (ValueError, NameError, SyntaxError, TypeError, AttributeError):
            raise native from None
        if _unsupported(measure):  # ir_measures parses any keyword: P(foo=1)@10
            raise native from None
    if not _is_ir_measure(measure):
        raise TypeError(f"expected a measure name or an ir_measures measure, got {measure!r}")
    return _convert(measure, rel_level)


def _unsupported(measure: object) -> list[str]:
    """The parameters of an ir_measures measure that its family does not declare."""
    declared = getattr(measure, "SUPPORTED_PARAMS", None)
    return [] if declared is None else sorted(set(measure.params) - set(declared))


def _convert(measure: object, rel_level: int) -> str:
    unknown = _unsupported(measure)
    if unknown:  # its repr would raise KeyError
        raise InputError(
            "measure",
            None,
            f"{measure.NAME}: {', '.join(unknown)} is no parameter of ir_measures' {measure.NAME}",
            f"one of {', '.join(sorted(measure.SUPPORTED_PARAMS)) or 'no parameters'}",
        )
    shown = repr(measure)
    family = measure.NAME
    params = dict(measure.params)
    cutoff = params.pop("cutoff", None)
    ours: dict[str, object] = {}

    def refuse(problem: str, expected: str) -> InputError:
        return InputError("measure", None, f"{shown}: {problem}", expected)

    if params.pop("judged_only", False):
        raise refuse("judged_only=True has no tiecore equivalent", "judged_only=False")
    if "rel" in params:
        rel = params.pop("rel")
        if family == "RBP":  # ir_measures: rel given -> binary gain at that level
            ours["gain"] = "binary"
        if family == "NumRet":  # ir_measures' NumRelRet is NumRet(rel=1)
            family = "NumRelRet"
        if rel != rel_level:
            plain = _join(family, ours, cutoff)
            raise refuse(
                f"rel={rel}, but tiecore takes one relevance level for all measures",
                f"rel_level={rel} (tiecore eval -l {rel}) for the evaluation, with {plain}",
            )
    if family == "nDCG":
        dcg = params.pop("dcg", "log2")
        if dcg not in _DCG:
            raise refuse(f"dcg={dcg!r} has no tiecore equivalent", "dcg='log2' or 'exp-log2'")
        if _DCG[dcg]:
            ours["gain"] = _DCG[dcg]
        gains = params.pop("gains", None)
        if gains is not None and any(int(k) != v for k, v in dict(gains).items()):
            raise refuse("custom gains have no tiecore equivalent", "the levels as gains")
    if family == "SetP" and params.pop("relative", False):  # ir_measures' SetRelP
        family = "SetRelP"
    params.pop("relative", None)
    if family == "SetF" and "beta" in params:  # pytrec_eval's set_F.beta: trec_eval's x
        ours["x"] = params.pop("beta")
    ours.update(params)  # anything else (RBP's p, ...) as tiecore's parser takes it
    name = _join(family, ours, cutoff)
    try:
        return str(Measure.parse(name))
    except InputError as error:
        raise refuse(error.problem, error.expected or "a measure tiecore has") from None


def _join(family: str, params: Mapping[str, object], cutoff: object) -> str:
    inside = ",".join(f"{k}={v}" for k, v in params.items())
    return family + (f"({inside})" if inside else "") + ("" if cutoff is None else f"@{cutoff}")
