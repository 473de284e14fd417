"""pytrec_eval's ``RelevanceEvaluator`` on tiecore's engine: change one import line.

BEIR (``EvaluateRetrieval.evaluate``), MTEB and many training loops call
``pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)`` on
``{qid: {docno: score}}`` dicts.  ``from tiecore import pytrec as pytrec_eval`` gives
them the same class, the same measure names and nicknames (``map``, ``P.5,10``,
``ndcg_cut.10``, ``official``, ``all_trec``) and the same result keys (``P_5``,
``ndcg_cut_10``, ``recip_rank``), with one more keyword, ``ties``: by default the
value of every measure is its exact mean over all orderings of the tied documents
(``ties="aware"``); ``ties="oblivious"`` gives pytrec_eval's values, double for double.

The evaluation is :func:`tiecore.evaluate`'s (per query, ``tiebreak="trec_eval"``);
this module only translates the names in and the rows out.  The measures are those of
trec_eval's ``-m all_trec`` that tiecore has (:data:`tiecore.interop.ALL_TREC`), see
:data:`supported_measures`.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from tiecore.errors import InputError, TieCoreWarning
from tiecore.evaluation.core import evaluate
from tiecore.io import read_qrels, read_run
from tiecore.io.text import encodable
from tiecore.measures import Measure
from tiecore.measures.trec_eval_table import NICKNAMES, TABLE, printed_lines
from tiecore.options import SAMPLES, SEED, TIES, check

__all__ = [
    "RelevanceEvaluator",
    "compute_aggregated_measure",
    "parse_qrel",
    "parse_run",
    "supported_measures",
    "supported_nicknames",
]

_KEY_PARAM = re.compile(r"_[0-9][0-9.]*$")


def _base(trec: str) -> str:
    """``P_5`` -> ``P``, ``iprec_at_recall_0.10`` -> ``iprec_at_recall``, ``map`` -> ``map``."""
    return _KEY_PARAM.sub("", trec)


#: trec_eval 9.0.x's measures in its table order (measures.c), the order of pytrec_eval's
#: result keys: those of its ``all_trec`` nickname.
_ORDER = tuple(name for name in TABLE if name in NICKNAMES["all_trec"])

#: Keys whose per-query value is no measure of the ranking: pytrec_eval gives ``num_q`` 1
#: for each query (trec_eval's ``all`` line sums them), and ``runid`` and ``relstring``
#: (a name and a string in trec_eval's output, no number) 0, or for ``runid`` whatever
#: its unset double holds.
_CONSTANTS = {"runid": 0.0, "num_q": 1.0, "relstring": 0.0}


def _rprec_mult(mult: str | float) -> str:
    """``Rprec_mult_0.50``'s tiecore measure: Rprec at ``mult`` times num_rel."""
    return str(Measure.parse(f"Rprec(mult={float(mult)})"))


#: pytrec_eval's measure (trec_eval's name without parameter) -> its default result
#: keys with tiecore's measure (None: a key of :data:`_CONSTANTS`), in trec_eval's order,
#: from trec_eval's table (:mod:`tiecore.measures.trec_eval_table`): its lines at the
#: measure's default parameters.
_DEFAULTS: dict[str, dict[str, str | None]] = {
    base: {
        key: None if base in _CONSTANTS else str(Measure.parse(ours))
        for key, ours in printed_lines(TABLE[base], TABLE[base].defaults)
    }
    for base in _ORDER
}

#: The measures a ``RelevanceEvaluator`` takes, as pytrec_eval names them (its
#: ``supported_measures`` lists more: those tiecore does not have, :data:`_LACKING`).
supported_measures: frozenset[str] = frozenset(_DEFAULTS)

#: trec_eval 9.0.x's measures this evaluator does not offer (pytrec_eval computes them):
#: asked for by name they raise an error; a nickname leaves them out.
_LACKING = frozenset(_ORDER) - supported_measures

#: Measures whose parameters are cutoffs (trec_eval's ``%ld``), or real numbers
#: (``%3.2f``) each giving a key; ``set_F`` and ``utility`` take theirs as one measure's
#: (its beta; the weights a, b, c, d); the rest take none.
_CUTOFFS = frozenset({"P", "recall", "ndcg_cut", "map_cut", "success", "relative_P"})
_FLOATS = frozenset({"iprec_at_recall", "Rprec_mult"})
_WEIGHTED = frozenset({"set_F", "utility"})

_OFFICIAL = ("map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P")
_COUNTS = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret")

#: pytrec_eval's nicknames -> the measures of :data:`supported_measures` they stand for
#: (trec_eval's ``official``, ``set`` and ``all_trec``, less what tiecore lacks).
supported_nicknames: dict[str, frozenset[str]] = {
    "official": frozenset((*_COUNTS, *_OFFICIAL)),
    "set": frozenset(
        (*_COUNTS, "utility", "set_P", "set_relative_P", "set_recall", "set_map", "set_F")
    ),
    "all_trec": supported_measures,
}

#: Measures with no exact tie-aware value (their per-query value is a log of AP or of
#: bpref): ``ties="oblivious"`` only; a nickname leaves them out under the other modes.
_OBLIVIOUS_ONLY = frozenset({"gm_map", "gm_bpref"})
_MIN_GEO_MEAN = 1e-5  # trec_eval's floor of AP in gm_map, of bpref in gm_bpref
_LOGGED = {"gm_map": "AP", "gm_bpref": "bpref"}

_PARAMS = r"[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)"


def _parse_measures(measures: Iterable[str], ties: str) -> dict[str, str | None]:
    """pytrec_eval's measure names -> {result key: tiecore measure}, in trec_eval's order.

    As pytrec_eval does: nicknames expand to their measures, ``meas.p1,p2`` and
    ``meas_p1`` give parameters, and a measure's parameters are the union of those
    named (its defaults, when it is named only bare).
    """
    if isinstance(measures, str):
        measures = [measures]
    params: dict[str, set[str]] = {}
    for name in measures:
        if not isinstance(name, str):
            raise InputError("measures", None, f"{name!r} is no measure name", "strings")
        if name in supported_nicknames:
            bases = supported_nicknames[name]
            for base in bases - set(_OBLIVIOUS_ONLY) if ties != "oblivious" else bases:
                params.setdefault(base, set())
            continue
        base, given = _split(name)
        if base in _OBLIVIOUS_ONLY and ties != "oblivious":
            raise InputError(
                "measures", None,
                f"{name}: no exact tie-aware value (a log of {_LOGGED[base]} per query)",
                "ties='oblivious' for it",
            )  # fmt: skip
        params.setdefault(base, set()).update(given)
    keys: dict[str, str | None] = {}
    for base, defaults in _DEFAULTS.items():  # trec_eval's order
        if base not in params:
            continue
        if not params[base]:
            keys.update(defaults)
            continue
        keys.update(_keyed(base, params[base]))
    return keys


def _keyed(base: str, given: set[str]) -> dict[str, str]:
    """One measure's keys and tiecore measures for the parameters named.

    ``set_F`` and ``utility`` take the parameters as pytrec_eval hands them to trec_eval:
    the set of those named, sorted as text, so set_F's beta is the first and utility's
    weights a, b, c, d are the four in that order (pytrec_eval's ``utility.2,1,0,0``
    passes ``0,1,2``, three weights, where trec_eval wants four: an error here, 0 with a
    message on stderr there).
    """
    ordered = sorted(given)
    if base == "set_F":
        return {"set_F": str(Measure.parse(f"SetF(x={float(ordered[0])})"))}
    if base == "utility":
        if len(ordered) != 4:
            raise InputError(
                "measures", None,
                f"utility.{','.join(ordered)}: {len(ordered)} weights (pytrec_eval passes "
                "trec_eval the distinct numbers named, sorted as text)",
                "four distinct numbers a,b,c,d in that order, such as utility.1,2,3,4",
            )  # fmt: skip
        weights = ",".join(f"{w}={float(v)}" for w, v in zip("abcd", ordered, strict=True))
        return {"utility": str(Measure.parse(f"Utility({weights})"))}
    # a real parameter is computed as given, printed with 2 decimals (0.333: _0.33)
    keys: dict[str, str] = {}
    for param in sorted(given, key=float):
        key = _key(base, param)
        if base == "Rprec_mult":
            keys.setdefault(key, _rprec_mult(param))
        elif base == "iprec_at_recall":
            keys.setdefault(key, str(Measure.parse(f"IPrec(recall={float(param)})")))
        else:
            keys.setdefault(key, str(Measure.parse(key)))
    return keys


def _split(name: str) -> tuple[str, set[str]]:
    """A measure name -> (pytrec_eval's measure, its parameters); a clear error otherwise."""
    if name in supported_measures:
        return name, set()
    known = (*supported_measures, *_LACKING)
    base = next((b for b in known if re.fullmatch(re.escape(b) + _PARAMS, name)), None)
    if name in _LACKING or base in _LACKING:
        raise InputError(
            "measures", None, f"{name}: tiecore does not have this trec_eval measure",
            f"one of {', '.join(sorted(supported_measures))}",
        )  # fmt: skip
    if base is None:
        raise InputError(
            "measures", None, f"unsupported measure {name}",
            f"one of {', '.join(sorted(supported_measures))}, or a nickname "
            f"({', '.join(supported_nicknames)}); parameters as P.5,10 or P_5",
        )  # fmt: skip
    given = re.fullmatch(re.escape(base) + _PARAMS, name)[1].split(",")  # type: ignore[index] # base matched
    if base not in _CUTOFFS | _FLOATS | _WEIGHTED:
        raise InputError("measures", None, f"{name}: tiecore's {base} takes no parameter")
    if base in _CUTOFFS and any(not p.isdigit() or int(p) == 0 for p in given):
        raise InputError("measures", None, f"{name}: {base}'s cutoffs", "positive integers")
    return base, set(given)


def _key(base: str, param: str) -> str:
    """trec_eval's result key: ``P_5`` (cutoffs as integers), ``iprec_at_recall_0.25``."""
    if base in _FLOATS:
        return f"{base}_{float(param):.2f}"
    return f"{base}_{int(param)}"


def _judged_only(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """The run's judged docs only (trec_eval ``-J``: the others are removed first).

    Judged means a level of 0 or more: trec_eval's ``-J`` removes the docs judged with
    a negative level (pooled but unjudged) too."""
    judged = qrels.loc[qrels["level"] >= 0, ["qid", "docno"]]
    return run.merge(judged, on=["qid", "docno"], how="inner")


class RelevanceEvaluator:
    """pytrec_eval's ``RelevanceEvaluator``, tie-aware by default.

    Parameters
    ----------
    query_relevance : mapping
        ``{qid: {docno: level}}`` (levels integers); queries without judgments are
        dropped, as pytrec_eval drops them.
    measures : iterable of str
        pytrec_eval's names: ``map``, ``P`` (every default cutoff), ``P.5,10`` or
        ``P_5``, ``ndcg_cut.10``, ``recall``, ``recip_rank``, ``bpref``, ``Rprec``,
        ``infAP``, ``success``, ``iprec_at_recall``, ``map_cut``, ``set_P``, ... (see
        :data:`supported_measures`) and the nicknames ``official``, ``set`` and
        ``all_trec``.  As in pytrec_eval, a measure named bare and with parameters
        (``{"P", "P.7"}``) gives only the parameters' keys (``P_7``).
    relevance_level : int
        The lowest relevant level (trec_eval ``-l``).
    judged_docs_only_flag : bool
        Remove the run's documents that have no judgment of level 0 or more before
        anything is computed (trec_eval ``-J``, so a negative level counts as
        unjudged), as pytrec_eval does.
    ties : {"aware", "oblivious", "sampled"}
        ``"aware"`` (the default): each value is the exact mean over all orderings
        of the documents tied on score (McSherry & Najork, ECIR 2008), so it does not
        depend on how ties happen to be broken; scores tie when they are equal as
        given (float64).  ``"oblivious"``: pytrec_eval's one ordering (scores compared
        as 32-bit floats, then docno descending), every double equal to pytrec_eval's.
        ``"sampled"``: the mean over ``samples`` random tie-breaks.  The default is
        tiecore's reason to exist: dense retrievers scoring in bf16 or fp16 tie often
        (see ``docs/python.md``), and the oblivious value of such a run rewards
        docnos that sort late.
    samples, seed : int
        ``ties="sampled"``: how many draws, which seed.

    Raises
    ------
    InputError
        A measure tiecore does not have (pytrec_eval raises ``ValueError`` for names
        it does not know; InputError is one), ``gm_map`` asked for with ties other
        than oblivious (its per-query value is a log of AP, whose mean over orderings
        tiecore does not compute), bad judgments or an unknown ``ties``.

    Notes
    -----
    What differs from pytrec_eval: parameters on a measure that takes none (``map.5``,
    which pytrec_eval ignores), text after the parameters (``P_5x``, ``P.5.5``: pytrec_eval
    matches the start of a name only) and fewer than four weights of ``utility``
    (pytrec_eval passes trec_eval the distinct numbers named, sorted as text, and gets 0)
    raise an error; measures with no exact tie-aware value (``gm_map``, ``gm_bpref``) are
    left out of the nicknames unless ``ties="oblivious"``; ``ndcg`` takes no gain map;
    ``runid`` is 0 (pytrec_eval leaves that double unset).  A score must be a finite
    number.  A judged query given as an empty dict (or left without documents by
    ``judged_docs_only_flag``) scores 0 in every measure, its ``num_rel`` counted
    (trec_eval ``-c``'s value for a query without documents), where pytrec_eval gives NaN
    for its ``iprec_at_recall`` and ``11pt_avg``.  With ``ties="oblivious"`` every value
    is pytrec_eval's with ``==`` (a query's terms added rank by rank, the queries one
    after the other, as trec_eval's loops add them).

    Examples
    --------
    >>> qrels = {"q1": {"d1": 1, "d2": 0}}
    >>> run = {"q1": {"d1": 1.0, "d2": 1.0, "d3": 0.5}}
    >>> RelevanceEvaluator(qrels, {"P.1", "recip_rank"}).evaluate(run)
    {'q1': {'recip_rank': 0.75, 'P_1': 0.5}}
    >>> RelevanceEvaluator(qrels, {"P.1"}, ties="oblivious").evaluate(run)
    {'q1': {'P_1': 0.0}}
    """

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
        *,
        ties: str = "aware",
        samples: int = 1000,
        seed: int = 0,
    ) -> None:
        check("ties", ties, TIES)
        check("samples", samples, SAMPLES)
        check("seed", seed, SEED)
        if not isinstance(query_relevance, Mapping):
            raise InputError(
                "query_relevance", None, f"a {type(query_relevance).__name__}",
                "{qid: {docno: level}}, as pytrec_eval takes",
            )  # fmt: skip
        self.ties = ties
        self.samples = samples
        self.seed = seed
        self.relevance_level = relevance_level
        self.judged_docs_only_flag = bool(judged_docs_only_flag)
        self._keys = _parse_measures(measures, ties)
        judged = {
            q: docs
            for q, docs in query_relevance.items()
            if not isinstance(docs, Mapping) or len(docs) > 0  # a bad one: read_qrels says so
        }
        self._qrels = read_qrels(judged) if judged else None
        qids = [] if self._qrels is None else self._qrels["qid"].unique()
        self._qids = pd.Index(np.asarray(qids, dtype=object))  # hashed once

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """Every measure of every query of ``scores`` that has judgments.

        Parameters
        ----------
        scores : mapping
            The run, ``{qid: {docno: score}}``.

        Returns
        -------
        dict
            ``{qid: {key: value}}`` keyed as pytrec_eval keys it (``P_5``, ``map``);
            queries without judgments are left out, a query without documents scores
            0 (its ``num_rel`` counted), and an empty run gives ``{}``, as in
            pytrec_eval.
        """
        if not isinstance(scores, Mapping):
            raise InputError(
                "run", None, f"a {type(scores).__name__}",
                "{qid: {docno: score}}, as pytrec_eval takes",
            )  # fmt: skip
        if self._qrels is None or not scores:
            return {}
        # as str objects: pandas' arrow strings test isin item by item in Python
        try:
            asked = pd.Index(np.asarray(list(scores), dtype=object).astype(str).astype(object))
            present = pd.Index(asked[asked.isin(self._qids)].unique(), dtype="str")
        except UnicodeEncodeError:  # a lone surrogate, which pandas' and arrow's str refuse
            bad = next(q for q in map(str, scores) if not encodable(q))
            raise InputError(
                "run", None, f"query {bad!r} is not valid text (a lone surrogate)",
                "text that UTF-8 can encode",
            ) from None  # fmt: skip
        if not self._keys:  # no measures: the judged queries, without values
            return {qid: {} for qid in present}
        if present.empty:
            return {}
        names = list(dict.fromkeys(n for n in self._keys.values() if n is not None))
        table = pd.DataFrame(index=present)
        if names:
            run, qrels = self._inputs(scores)
            with warnings.catch_warnings():  # pytrec_eval skips them silently
                warnings.filterwarnings("ignore", "run .*without judgments", TieCoreWarning)
                found = evaluate(
                    run, qrels, names, ties=self.ties, tiebreak="trec_eval",
                    samples=self.samples, seed=self.seed, rel_level=self.relevance_level,
                    complete=True, per_query=True,
                )  # fmt: skip
            rows = found[found["qid"].notna()]  # the summary rows' qid is NA
            table = rows.pivot(index="qid", columns="measure", values="value")
            table = table.reindex(index=present, columns=names)
        table = pd.DataFrame(
            {
                key: _CONSTANTS[key] if name is None else table[name]
                for key, name in self._keys.items()
            },
            index=present,
        )
        for key in _OBLIVIOUS_ONLY & set(table):  # trec_eval's log(max(AP or bpref, 1e-5))
            floored = np.maximum(table[key].to_numpy(), _MIN_GEO_MEAN)
            table[key] = list(map(math.log, floored))  # C's log, as trec_eval's
        return table.to_dict("index")

    def _inputs(self, scores: Mapping) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The run as a frame (judged docs only with ``judged_docs_only_flag``) and the
        qrels.  tiecore's engine takes no run without rows; when the run has none (its
        queries are empty), one judged query of its own stands in, so that
        ``complete=True`` scores the run's queries as empty."""
        qrels = self._qrels
        assert qrels is not None  # evaluate returns {} without judgments, before this
        rows = any(not isinstance(d, Mapping) or len(d) > 0 for d in scores.values())
        run = read_run(scores) if rows else None
        if run is not None and self.judged_docs_only_flag:
            run = _judged_only(run, qrels)
        if run is not None and pd.Index(run["qid"].unique().astype(object)).isin(self._qids).any():
            return run, qrels
        stand_in = "\x00tiecore-empty-run"
        while stand_in in set(qrels["qid"]):
            stand_in += "\x00"
        run = pd.DataFrame({"qid": [stand_in], "docno": ["d"], "score": [0.0]})
        level = pd.DataFrame({"qid": [stand_in], "docno": ["d"], "level": [0]})
        return run, pd.concat([qrels, level], ignore_index=True)


def compute_aggregated_measure(measure: str, values: Iterable[float]) -> float:
    """The summary over queries of a measure's per-query values, as pytrec_eval's.

    ``num_*`` counts are summed, ``gm_*`` (per-query logs) give exp of their mean, the
    rest their mean: trec_eval's ``all`` row.

    >>> compute_aggregated_measure("num_ret", [3.0, 2.0])
    5.0
    >>> compute_aggregated_measure("map", [0.5, 0.25])
    0.375
    """
    values = list(values)
    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))


def parse_run(f_run: Iterable[str]) -> dict[str, dict[str, float]]:
    """pytrec_eval's ``parse_run``: TREC run lines -> ``{qid: {docno: score}}``.

    >>> parse_run(["q1 Q0 d1 1 2.5 bm25", "q1 Q0 d2 2 1.5 bm25"])
    {'q1': {'d1': 2.5, 'd2': 1.5}}
    """
    return _nested(f_run, 6, float, "run")


def parse_qrel(f_qrel: Iterable[str]) -> dict[str, dict[str, int]]:
    """pytrec_eval's ``parse_qrel``: TREC qrels lines -> ``{qid: {docno: level}}``.

    >>> parse_qrel(["q1 0 d1 1", "q1 0 d2 0"])
    {'q1': {'d1': 1, 'd2': 0}}
    """
    return _nested(f_qrel, 4, int, "qrels")


def _nested(lines: Iterable[str], fields: int, cast: type, kind: str) -> dict[str, dict]:
    """Lines of ``fields`` fields -> ``{qid: {docno: cast(value)}}`` (field 3 and the
    last but one for a run, the last for qrels); a clear error on a bad line."""
    nested: dict[str, dict] = defaultdict(dict)
    value_at = 4 if kind == "run" else 3
    expected = f"{fields} fields, " + ("a numeric score" if kind == "run" else "an integer level")
    for number, line in enumerate(lines, 1):
        parts = line.split()
        try:
            if len(parts) != fields:
                raise ValueError
            qid, docno, value = parts[0], parts[2], cast(parts[value_at])
        except ValueError:
            raise InputError(kind, number, f"{line.strip()!r}", expected) from None
        if docno in nested[qid]:
            raise InputError(kind, number, f"docno {docno!r} appears twice for query {qid!r}")
        nested[qid][docno] = value
    return dict(nested)
