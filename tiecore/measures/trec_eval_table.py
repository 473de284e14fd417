"""trec_eval's table of measures, written once: names, kinds, defaults, nicknames.

trec_eval 9.0.x's measures in the order it computes and prints them (its ``measures.c``
and ``m_*.c``: names, order, defaults; none of its code is used), each with tiecore's
measure under it, trec_eval 10.0's table beside it, and the lines each prints
(:func:`printed_lines`).  ``tiecore eval`` reads its ``-m`` values through it
(:mod:`tiecore.cli.trec_eval_names`), :class:`tiecore.pytrec.RelevanceEvaluator` its
measures and result keys, :mod:`tiecore.interop` its ``all_trec`` list: one table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_LEVELS = tuple(i / 10 for i in range(11))


@dataclass(frozen=True)
class TrecMeasure:
    """One measure of trec_eval's table.

    ``kind`` says how its parameters read and how it prints: ``runid`` and ``num_q``
    (lines of the ``all`` block), ``count`` (an integer per query, summed in ``all``),
    ``single`` (one value, no parameters), ``summary`` (one value for ``all`` only:
    gm_map), ``long`` (integer cutoffs, printed ``NAME_5``), ``float`` (real cutoffs,
    printed ``NAME_0.25``), ``weighted`` (numbers, printed as typed: ``set_F_0.5``,
    ``utility_2,-1,0,0``), ``pairs`` (``rbp.p=0.5``, printed ``rbp_p=0.5``), ``levels``
    (recall levels averaged into one value, printed as typed: ``11pt_avg_.25,.5,.75``),
    ``gains`` (``level=gain`` pairs, printed as typed: ``G_1=3,2=9``), ``string``
    (relstring: a string per query, not a measure; ``relstring.20`` printed
    ``relstring_20``).  ``ours``
    is tiecore's name (a template with ``{}`` for each number); None where tiecore does
    not have the measure.
    """

    name: str
    kind: str
    ours: str | None
    defaults: tuple = ()


_HAS: tuple[TrecMeasure, ...] = (
    TrecMeasure("runid", "runid", "runid"),
    TrecMeasure("num_q", "num_q", "num_q"),
    TrecMeasure("num_ret", "count", "NumRet"),
    TrecMeasure("num_rel", "count", "NumRel"),
    TrecMeasure("num_rel_ret", "count", "NumRelRet"),
    TrecMeasure("map", "single", "AP"),
    TrecMeasure("gm_map", "summary", "GMAP"),
    TrecMeasure("Rprec", "single", "Rprec"),
    TrecMeasure("bpref", "single", "Bpref"),
    TrecMeasure("recip_rank", "single", "RR"),
    TrecMeasure("iprec_at_recall", "float", "IPrec(recall={})", _LEVELS),
    TrecMeasure("P", "long", "P@{}", _CUTS),
    TrecMeasure("relstring", "string", "relstring@{}", (10,)),
    TrecMeasure("recall", "long", "R@{}", _CUTS),
    TrecMeasure("infAP", "single", "infAP"),
    TrecMeasure("gm_bpref", "summary", "GMBpref"),
    TrecMeasure("Rprec_mult", "float", "Rprec(mult={})", tuple(i / 10 for i in range(2, 21, 2))),
    TrecMeasure("utility", "weighted", "Utility(a={},b={},c={},d={})"),
    TrecMeasure("11pt_avg", "levels", "IPrecAvg(levels={})"),
    TrecMeasure("binG", "single", "BinG"),
    TrecMeasure("G", "gains", "G(gains={})"),
    TrecMeasure("ndcg", "gains", "nDCG(gains={})"),
    TrecMeasure("ndcg_rel", "gains", "NDCGRel(gains={})"),
    TrecMeasure("Rndcg", "gains", "Rndcg(gains={})"),
    TrecMeasure("ndcg_cut", "long", "nDCG@{}", _CUTS),
    TrecMeasure("map_cut", "long", "AP@{}", _CUTS),
    TrecMeasure("relative_P", "long", "RelP@{}", _CUTS),
    TrecMeasure("success", "long", "Success@{}", (1, 5, 10)),
    TrecMeasure("set_P", "single", "SetP"),
    TrecMeasure("set_relative_P", "single", "SetRelP"),
    TrecMeasure("set_recall", "single", "SetR"),
    TrecMeasure("set_map", "single", "SetAP"),
    TrecMeasure("set_F", "weighted", "SetF(x={})"),
    TrecMeasure("num_nonrel_judged_ret", "count", "NumNonRelJudgedRet"),
)
#: trec_eval 9.0.x's measures, in the order it computes and prints them (measures.c);
#: those past set_F's neighbours are the preference and judgment-group measures.
TABLE: dict[str, TrecMeasure] = {m.name: m for m in _HAS}
for _name in (
    "prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp prefs_pair "
    "prefs_avgjg prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret prefs_avgjg_ret "
    "prefs_avgjg_Rnonrel_ret prefs_simp_imp prefs_pair_imp prefs_avgjg_imp map_avgjg P_avgjg "
    "Rprec_mult_avgjg yaap"
).split():
    TABLE[_name] = TrecMeasure(_name, "single", None)
#: The preference measures (``-R prefs``, ``qrels_prefs``): tiecore.measures.prefs, under
#: trec_eval's names; the first three are counts.
for _name in TABLE:
    if _name.startswith("prefs_"):
        _kind = "count" if _name.startswith("prefs_num_") else "single"
        TABLE[_name] = TrecMeasure(_name, _kind, _name)
#: Their names, in trec_eval's order (tiecore.measures.prefs.PREFS_MEASURES, which a test
#: compares): the command checks -R against them without importing the measures.
PREFS_NAMES = tuple(name for name in TABLE if name.startswith("prefs_"))
#: The judgment-group measures (``-R qrels_jg``): tiecore's AP, P@k and Rprec(mult=m) on
#: each group's judgments, averaged over the groups (tiecore.evaluation.judgment_groups).
TABLE["map_avgjg"] = TrecMeasure("map_avgjg", "single", "AP")
TABLE["P_avgjg"] = TrecMeasure("P_avgjg", "long", "P@{}", _CUTS)
TABLE["Rprec_mult_avgjg"] = TrecMeasure(
    "Rprec_mult_avgjg", "float", "Rprec(mult={})", tuple(i / 10 for i in range(2, 21, 2))
)
#: trec_eval 10's rbp, last in its table, as ``rbp.p=0.5`` (printed ``rbp_p=0.5``): its
#: gain is the level over the query's largest qrels level when that is above 1, tiecore's
#: RBP(gain=query_scaled).  A bare ``rbp`` is tiecore's RBP (trec_eval 9.0.x has none),
#: unless ``--trec-eval 10`` (:data:`TABLE_10`).
_RBP_10 = "RBP(p={},gain=query_scaled)"
TABLE["rbp"] = TrecMeasure("rbp", "pairs", _RBP_10, ("0.9",))

#: trec_eval's nicknames: the measures each one asks for.
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": (
        "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
        "iprec_at_recall P"
    ).split(),
    "set": "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall "
    "set_relative_P set_map set_F".split(),
    "all_trec": (
        "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
        "iprec_at_recall P relstring recall infAP gm_bpref utility 11pt_avg ndcg relative_P "
        "Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall "
        "set_relative_P set_map set_F num_nonrel_judged_ret"
    ).split(),
    "all_prefs": (
        "runid num_q prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret "
        "prefs_simp prefs_pair prefs_avgjg prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret "
        "prefs_avgjg_ret prefs_avgjg_Rnonrel_ret prefs_simp_imp prefs_pair_imp prefs_avgjg_imp"
    ).split(),
    "prefs": (
        "runid num_q prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret "
        "prefs_simp prefs_pair prefs_avgjg"
    ).split(),
    "qrels_jg": "runid num_q map_avgjg P_avgjg Rprec_mult_avgjg".split(),
}

#: trec_eval 10.0's table (``tiecore eval --trec-eval 10``): 9.0.x's, with ``dcg`` and
#: ``ideal_dcg`` after ``G`` and ``rbp``, ``rbp_resid`` and ``unj`` last (its measures.c),
#: a bare ``rbp`` trec_eval's (p = 0.9, printed ``rbp``), and all_trec asking for unj,
#: rbp and rbp_resid too.  Its recall levels round to nearest (:func:`_nearest`).
TABLE_10: dict[str, TrecMeasure] = {}
for _name, _measure in TABLE.items():
    TABLE_10[_name] = _measure
    if _name == "G":
        TABLE_10["dcg"] = TrecMeasure("dcg", "single", "DCG")
        TABLE_10["ideal_dcg"] = TrecMeasure("ideal_dcg", "single", None)
TABLE_10["rbp_resid"] = TrecMeasure(
    "rbp_resid", "pairs", "RBP_residual(p={},convention=trec_eval)", ("0.9",)
)
TABLE_10["unj"] = TrecMeasure("unj", "long", "Unjudged@{}", (5, 10, 20))
NICKNAMES_10: dict[str, tuple[str, ...]] = {
    **NICKNAMES,
    "all_trec": tuple(
        m
        for name in NICKNAMES["all_trec"]
        for m in ((name, "unj", "rbp", "rbp_resid") if name == "recall" else (name,))
    ),
}
#: The tables and nicknames of each ``--trec-eval`` version.
TABLES = {"9": TABLE, "10": TABLE_10}
NICKNAMES_OF = {"9": NICKNAMES, "10": NICKNAMES_10}


def printed_lines(measure: TrecMeasure, values: Sequence) -> list[tuple[str, str]]:
    """``(printed name, tiecore name)`` of each line a measure prints with parameters
    ``values`` (its ``defaults`` for trec_eval's bare name).

    >>> printed_lines(TABLE["P"], (5, 10))
    [('P_5', 'P@5'), ('P_10', 'P@10')]
    >>> printed_lines(TABLE["iprec_at_recall"], (0.5,))
    [('iprec_at_recall_0.50', 'IPrec(recall=0.5)')]
    """
    if measure.kind == "long":
        return [(f"{measure.name}_{v}", measure.ours.format(v)) for v in values]
    if measure.kind == "float":
        return [(f"{measure.name}_{v:.2f}", measure.ours.format(repr(float(v)))) for v in values]
    if measure.kind == "pairs" and values is measure.defaults:  # trec_eval 10's bare rbp
        return [(measure.name, measure.ours.format(values[0]))]
    if measure.kind == "pairs":
        return [(f"{measure.name}_p={values[0]}", measure.ours.format(values[0]))]
    if measure.kind == "string":  # relstring, relstring_20
        if values and isinstance(values[0], str):
            return [(f"{measure.name}_{values[0]}", measure.ours.format(values[1]))]
        return [(measure.name, measure.ours.format(values[0] if values else 10))]
    if measure.kind in ("levels", "gains"):  # 11pt_avg, G: one line, named as typed
        if not values:
            return [(measure.name, measure.ours.partition("(")[0])]  # the defaults
        return [(f"{measure.name}_{values[0]}", measure.ours.format(values[1]))]
    if measure.kind == "weighted":  # set_F, or set_F_0.5 as given
        if not values:
            return [(measure.name, measure.name)]  # the family's defaults
        return [(f"{measure.name}_{values[0]}", measure.ours.format(*map(repr, values[1:])))]
    return [(measure.name, measure.ours)]
