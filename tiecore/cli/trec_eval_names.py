"""trec_eval's ``-m`` arguments, read as trec_eval 9.0.x reads them: :func:`trec_plan`.

trec_eval takes ``-m NAME`` or ``-m NAME.PARAMS``: ``NAME`` is one of its measures
(``P``, ``map``, ``ndcg_cut`` ...) or a nickname for several (``official``, ``set``,
``all_trec``); ``PARAMS`` is a comma-separated list (cutoffs ``P.5,10``, recall levels
``iprec_at_recall..10,.20``).  A bare family stands for its default parameters
(``P`` is ``P_5`` ... ``P_1000``), the flags add up (``-m map_cut -m map``), the first
parameter list given for a measure is the one it uses, and trec_eval prints the
measures in its own table order (per query, then ``all``), ``runid`` and ``num_q``
included only when asked for (``official`` asks for them).

:func:`trec_plan` turns the ``-m`` values into what ``tiecore eval`` computes and
prints: the tiecore measures, their trec_eval names, and whether the whole command
line is trec_eval's (then :func:`trec_eval_text` prints trec_eval's layout).  Names
tiecore spells its own way (``P@10``, ``AP``, ``nDCG@10``) keep tiecore's meaning
and layout.  The table below is written from trec_eval 9.0.x's ``measures.c`` and
``m_*.c`` (names, order, defaults); none of its code is used.
"""

from __future__ import annotations

import itertools
import math
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tiecore.cli.common import UsageError
from tiecore.measures import Measure, split_measures
from tiecore.measures import measure_name as _measure_name
from tiecore.measures.trec_eval_table import (  # noqa: F401  (trec_eval's table, re-exported)
    NICKNAMES,
    NICKNAMES_10,
    NICKNAMES_OF,
    TABLE,
    TABLE_10,
    TABLES,
    TrecMeasure,
    printed_lines,
)

#: trec_eval's printed names typed back (``P_10``, ``iprec_at_recall_0.10``): the same
#: measure as ``P.10``.
_PRINTED = ("P", "recall", "ndcg_cut", "map_cut", "success", "iprec_at_recall", "unj")
#: C's atol and atof read the longest number at the start of the text (``23.4`` is 23).
#: Patterns as text, compiled on first use (re caches them): tiecore's own names never
#: need them, and compiling costs more than a small file's whole evaluation start-up.
_LONG = r"\s*[+-]?\d+"
_FLOAT = r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_RBP = r"p=(?P<p>[^,=@]+)"


@dataclass
class TrecPlan:
    """What ``tiecore eval`` computes and prints for its ``-m`` values.

    ``names``: tiecore measure names to evaluate, in the order to print (trec_eval's
    table order for trec_eval's names); ``printed``: tiecore name -> the name to print;
    ``lines``: trec_eval's lines, ``(printed, tiecore name)``, where one measure may
    print twice (``Rprec`` and ``Rprec_mult_1.00``);
    ``counts``: tiecore names printed as trec_eval's counts (integers, summed in
    ``all``); ``summary_only``: printed for ``all`` only (gm_map); ``runid``/``num_q``:
    whether those lines were asked for; ``trec``: every value was trec_eval's, so the
    output is trec_eval's layout; ``nicknamed``: tiecore names that only a nickname
    asked for (left out, with a note, where they have no exact value); ``notes``: lines
    for stderr; ``version``: whose table (``"9"``: trec_eval 9.0.8, ``"10"``: 10.0).
    """

    names: list[str] = field(default_factory=list)
    printed: dict[str, str] = field(default_factory=dict)
    lines: list[tuple[str, str]] = field(default_factory=list)
    counts: set[str] = field(default_factory=set)
    summary_only: set[str] = field(default_factory=set)
    runid: bool = False
    num_q: bool = False
    trec: bool = False
    nicknamed: dict[str, str] = field(default_factory=dict)
    strings: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    version: str = "9"


def _refuse(text: str, problem: str, expected: str) -> UsageError:
    return UsageError(f"-m {text}: {problem} (expected {expected})")


def _trec_item(text: str, version: str = "9") -> tuple[str, str | None] | None:
    """``(trec_eval name or nickname, parameters or None)`` when ``text`` is trec_eval's
    (``P``, ``P.5,10``, ``official``, ``P_10``), else None (a tiecore name)."""
    table = TABLES[version]
    name, dot, params = text.partition(".")
    if (
        name == "rbp"
        and not (dot and re.fullmatch(_RBP, params))
        and not (version == "10" and not dot)
    ):
        return None  # tiecore's RBP (rbp, rbp.p=0.5@10); trec_eval 10's bare rbp
    if name in table or name in NICKNAMES_OF[version]:
        return name, params if dot else None
    name, _, param = text.rpartition("_")
    number = param.replace(".", "", 1) if name == "iprec_at_recall" else param
    if name in _PRINTED and name in table and number.isdigit():
        return name, param
    return None


def _numbers(text: str, name: str, params: str, kind: str) -> list:
    """The parameter list of a cutoff measure, as trec_eval reads it: C's atol / atof
    of each comma-separated item (``23.4`` is cutoff 23), sorted; no number at all,
    a cutoff below 1 or a repeated one is refused."""
    pattern, convert = (_LONG, int) if kind == "long" else (_FLOAT, float)
    values = []
    for item in params.split(","):
        found = re.match(pattern, item)
        if found is None:
            raise _refuse(
                text, f"{item!r} is no number", f"{name}.{'5,10' if kind == 'long' else '.1,.5'}"
            )
        values.append(convert(found[0]))
    values.sort()
    if kind == "long" and values[0] <= 0:
        raise _refuse(text, f"cutoff {values[0]}", "cutoffs of 1 or more")
    if kind == "float" and not all(math.isfinite(v) for v in values):
        raise _refuse(text, "a level that is no finite number", "levels from 0 to 1")
    for a, b in itertools.pairwise(values):
        if a == b:
            raise _refuse(text, f"{name} {a} given twice", "each value once")
    return values


def trec_plan(
    values: Sequence[str],
    measure_name: Callable[[str], str] | None = None,
    *,
    version: str = "9",
) -> TrecPlan:
    """Read the ``-m`` values as trec_eval reads its own, tiecore's names beside them.

    ``measure_name`` turns a tiecore (or ir_measures) name into tiecore's canonical
    name (default :func:`tiecore.measures.measure_name`; ``tiecore eval`` passes its
    relevance level); trec_eval's names map through
    :data:`TABLE` (``version="9"``, trec_eval 9.0.8's) or :data:`TABLE_10` (``"10"``,
    trec_eval 10.0's: its measures and nicknames, recall levels rounded to nearest).  A
    usage error names a value that trec_eval's syntax refuses or a trec_eval measure
    tiecore does not have.

    >>> plan = trec_plan(["map_cut.10,5", "map", "P_5"])
    >>> plan.names, plan.trec, plan.runid
    (['AP', 'P@5', 'AP@5', 'AP@10'], True, False)
    >>> [plan.printed[n] for n in plan.names]
    ['map', 'P_5', 'map_cut_5', 'map_cut_10']
    >>> trec_plan(["official"]).names[:3], trec_plan(["P@10", "num_ret"]).trec
    (['NumRet', 'NumRel', 'NumRelRet'], False)
    """
    if measure_name is None:
        measure_name = _measure_name
    table, nicknames = TABLES[version], NICKNAMES_OF[version]
    marked: dict[str, tuple[str, list] | None] = {}  # name -> (params, values) first given
    nickname_of: dict[str, str] = {}  # names only a nickname asked for -> that nickname
    items: list[tuple[str, str | None]] = []  # ("trec", None) once, ("ours", name)
    has_ours = False  # a tiecore name too: tiecore's layout
    missing: list[str] = []
    for value in values:
        parts = [value.strip()] if _whole(value.strip(), version) else _split(value, version)
        for part in parts:
            item = _trec_item(part, version)
            if item is None:
                has_ours = True
                items.append(("ours", measure_name(part)))
                continue
            name, params = item
            if ("trec", None) not in items:
                items.append(("trec", None))
            if name in nicknames:
                if params is not None:
                    raise _refuse(part, f"{name} is a nickname", f"{name} without parameters")
                if not any(
                    table[each].kind not in ("runid", "num_q") and table[each].ours
                    for each in nicknames[name]
                ):
                    missing.append(part)  # the preference and judgment-group measures
                    continue
                for each in nicknames[name]:
                    if each not in marked:
                        marked[each] = None
                        nickname_of[each] = name
                continue
            nickname_of.pop(name, None)
            try:
                numbers = _check_params(part, table[name], params)
            except _Missing:
                missing.append(part)
                continue
            if numbers is not None and marked.get(name) is not None and marked[name][0] != params:
                warnings.warn(
                    f"-m {part}: trec_eval takes the first parameters given for {name} "
                    f"({name}.{marked[name][0]}) and ignores these",
                    stacklevel=2,
                )
            elif numbers is not None or name not in marked:
                marked[name] = None if numbers is None else (params, numbers)
    if missing:
        raise _missing(missing, version)
    plan = TrecPlan(trec=not has_ours and bool(marked), version=version)
    trec_lines = _trec_lines(marked, nickname_of, plan, version)
    if plan.strings and has_ours:
        raise UsageError(
            "-m relstring: trec_eval's relevance string prints in trec_eval's layout only "
            "(expected trec_eval's names alone on the command line with it)"
        )
    string_lines = trec_lines
    trec_lines = [line for line in trec_lines if line[1] not in plan.strings]
    canonical = {ours: measure_name(ours) for _, ours in trec_lines}
    plan.counts = {canonical[m] for m in plan.counts}
    plan.summary_only = {canonical[m] for m in plan.summary_only}
    plan.nicknamed = {canonical.get(m, m): n for m, n in plan.nicknamed.items()}
    for kind, name in items:
        if kind == "ours":
            if name not in plan.printed:
                plan.names.append(name)
                plan.printed[name] = name
            continue
        for printed, ours in string_lines:
            if ours in plan.strings:  # relstring: printed from the ranking, no measure
                plan.lines.append((printed, ours))
                continue
            ours = measure_name(ours)
            plan.lines.append((printed, ours))
            if ours not in plan.printed:
                plan.names.append(ours)
                plan.printed[ours] = printed
    return plan


def _whole(value: str, version: str = "9") -> bool:
    """Whether one ``-m`` value is one trec_eval measure, as trec_eval reads it
    (``P.5,10``), rather than tiecore's comma list of names (``P.5,num_ret``: a list
    item that is no number starts the next name)."""
    item = _trec_item(value, version)
    if item is None:
        return False
    name, params = item
    kind = TABLES[version][name].kind if name in TABLES[version] else None
    if params and "," in params and kind in ("long", "float"):
        pattern = _LONG if kind == "long" else _FLOAT
        return all(re.match(pattern, each) for each in params.split(","))
    return True


def _split(value: str, version: str = "9") -> list[str]:
    """tiecore's comma list (commas outside parentheses), with trec_eval's parameter
    lists kept whole: ``P.5,7,map`` is ``P.5,7`` and ``map``."""
    parts: list[str] = []
    for piece in split_measures([value]):
        name, _, number = piece.partition(".")
        previous = _trec_item(parts[-1], version) if parts else None
        if (
            previous is not None
            and previous[1] is not None
            and previous[0] == name
            and parts[-1].startswith(name + ".")
            and re.fullmatch(_FLOAT, number)
        ):
            parts[-1] += "," + number  # split_measures made P.5,7 into P.5 and P.7
        else:
            parts.append(piece)
    return parts


def _check_params(text: str, measure: TrecMeasure, params: str | None) -> list | None:
    """The parameter values (None: the defaults); a usage error for a measure tiecore
    does not have and for parameters the measure does not take."""
    if measure.ours is None:
        raise _Missing(text)
    if params is None:
        return None
    if params == "":
        raise _refuse(text, "no parameters after the '.'", f"{measure.name} or {measure.name}.5")
    if measure.kind in ("long", "float"):
        return _numbers(text, measure.name, params, measure.kind)
    if measure.kind == "pairs":
        found = re.fullmatch(_RBP, params)
        if found is None:
            raise _refuse(text, f"{params!r} is no persistence", f"{measure.name}.p=0.9")
        return [found["p"]]
    if measure.kind == "weighted":  # set_F.0.5, utility.2,-1,0,0: numbers, printed as typed
        items = params.split(",")
        wanted = measure.ours.count("{}")
        if measure.name == "utility" and len(items) != wanted:
            raise _refuse(text, f"{len(items)} weights", "four: utility.a,b,c,d")
        found = [re.match(_FLOAT, item) for item in items[:wanted]]
        if not all(found):
            raise _refuse(text, f"{params!r} is no list of numbers", f"{measure.name}.0.5")
        return [params, *(float(each[0]) for each in found)]
    if measure.kind == "string":  # relstring.20: C's atof of the first, as a length
        found = re.match(_FLOAT, params.split(",")[0])
        return [params, int(float(found[0])) if found else 0]
    if measure.kind == "levels":  # 11pt_avg..25,.5,.75: C's atof of each, as given
        found = [re.match(_FLOAT, item) for item in params.split(",")]
        levels = [float(each[0]) if each else 0.0 for each in found]
        if not all(0.0 <= level <= 1.0 for level in levels):
            raise _refuse(text, "a recall level outside 0 to 1", f"{measure.name}..25,.5,.75")
        if any(a > b for a, b in itertools.pairwise(levels)):
            raise _refuse(
                text,
                "recall levels out of order (trec_eval's value then depends on the order)",
                "increasing levels",
            )
        return [params, ";".join(map(repr, levels))]
    if measure.kind == "gains":  # G.1=3,2=9: C's atol of each level, atof of each gain
        return [params, _gain_pairs(text, measure.name, params)]
    raise _refuse(text, f"{measure.name} takes no parameters", f"{measure.name} alone")


def _gain_pairs(text: str, name: str, params: str) -> str:
    """trec_eval's ``level=gain`` pairs (``1=3,2=9,4=4.5``) as tiecore's ``1:3.0;2:9.0;4:4.5``:
    each level read by C's atol, each gain by atof, as trec_eval reads them; a pair that is
    no ``level=gain`` is refused (trec_eval refuses it too)."""
    pairs = []
    for item in params.split(","):
        level, equals, gain = item.partition("=")
        found_level, found_gain = re.match(_LONG, level), re.match(_FLOAT, gain)
        if not equals or found_level is None:
            raise _refuse(text, f"{item!r} is no level=gain pair", f"{name}.1=3,2=9")
        value = float(found_gain[0]) if found_gain else 0.0
        pairs.append(f"{int(found_level[0])}:{value!r}")
    return ";".join(pairs)


class _Missing(Exception):
    """A trec_eval measure (or parameter, ndcg's gains) that tiecore does not have."""


def _missing(texts: list[str], version: str = "9") -> UsageError:
    """One line naming every trec_eval measure asked for that tiecore does not have."""
    has = ", ".join(m.name for m in TABLES[version].values() if m.ours)
    return UsageError(
        f"-m {', -m '.join(texts)}: trec_eval measures (or, for ndcg, gain values) that tiecore "
        f"does not have (expected trec_eval's {has}, or the nicknames official, set, all_trec, "
        "qrels_jg)"
    )


def _trec_lines(
    marked: dict[str, tuple[str, list] | None],
    nickname_of: dict[str, str],
    plan: TrecPlan,
    version: str = "9",
) -> list[tuple[str, str]]:
    """The marked measures' lines in trec_eval's table order; fills the plan's flags."""
    lines: list[tuple[str, str]] = []
    left_out: dict[str, list[str]] = {}
    for measure in TABLES[version].values():
        if measure.name not in marked:
            continue
        if measure.ours is None:  # only a nickname asks for one tiecore lacks
            left_out.setdefault(nickname_of[measure.name], []).append(measure.name)
            continue
        if measure.kind == "runid":
            plan.runid = True
            continue
        if measure.kind == "num_q":
            plan.num_q = True
            continue
        given = marked[measure.name]
        values = measure.defaults if given is None else given[1]
        for printed, ours in printed_lines(measure, values):
            if version == "10" and measure.kind != "string":
                ours = _nearest(ours)
            lines.append((printed, ours))
            if measure.kind == "count":
                plan.counts.add(ours)
            if measure.kind == "string":
                plan.strings[ours] = values[0] if given is None else values[1]
            if measure.kind == "summary":
                plan.summary_only.add(ours)
            if measure.name in nickname_of:
                plan.nicknamed[ours] = nickname_of[measure.name]
    for nickname, names in left_out.items():
        plan.notes.append(
            f"tiecore: {nickname} leaves out {', '.join(names)}: trec_eval measures tiecore "
            "does not have"
        )
    return lines


def _nearest(ours: str) -> str:
    """trec_eval 10's recall levels: a measure whose family rounds a recall level to a
    count of relevant docs (a ``round`` parameter: IPrec) rounds it to nearest, as
    trec_eval 10's ``lround(level * num_rel)`` (9.0.8: ``(long)(level * num_rel + 0.9)``).

    >>> _nearest("IPrec(recall=0.1)"), _nearest("P@5")
    ('IPrec(recall=0.1,round=nearest)', 'P@5')
    """
    if "round" not in Measure.parse(ours).spec.params:
        return ours
    head, at, cut = ours.partition("@")
    head = head[:-1] + ",round=nearest)" if head.endswith(")") else head + "(round=nearest)"
    return head + at + cut


def trec_eval_text(
    columns: dict[str, list],
    num_q: dict[str, int],
    plan: TrecPlan,
    *,
    per_query: bool,
    strings: dict[tuple[str, str, str], str] | None = None,
) -> str:
    """trec_eval's output for a plan whose values were all trec_eval's.

    Per run: with ``per_query`` each query's lines (the plan's order; gm_map, runid
    and num_q print for ``all`` only), then ``runid`` and ``num_q`` where asked for,
    then the ``all`` lines; lines are ``"%-22s\\t%s\\t%.4f"``, counts ``%d`` and summed
    over the queries.  A query the run retrieved nothing for (``num_ret`` 0, there under
    ``-c``) prints no lines of its own, as in trec_eval 9.0.8 (10.0 prints them).
    ``columns`` are the evaluation's rows (``qid`` None: the mean); ``strings`` the
    relevance strings of the plan's ``strings`` by ``(run, qid, name)``, printed
    ``'...'`` per query only.

    >>> columns = {"run": ["r"] * 4, "qid": ["1", "2", None, None],
    ...     "measure": ["NumRet", "NumRet", "NumRet", "AP"], "value": [3.0, 5.0, 4.0, 0.5]}
    >>> plan = trec_plan(["num_ret", "map"])
    >>> [line.split("\\t") for line in trec_eval_text(columns, {"r": 2}, plan, per_query=False)
    ...     .splitlines()]
    [['num_ret               ', 'all', '8'], ['map                   ', 'all', '0.5000']]
    """
    value = columns["value"]
    cells: dict[str, dict[tuple[str | None, str], float]] = {}
    qids: dict[str, dict[str, None]] = {}
    for i, (run, qid, measure) in enumerate(
        zip(columns["run"], columns["qid"], columns["measure"], strict=True)
    ):
        cells.setdefault(run, {})[qid, measure] = value[i]
        if qid is not None:
            qids.setdefault(run, {})[qid] = None
    lines: list[str] = []
    for run, block in cells.items():
        if per_query:
            for qid in qids.get(run, {}):
                if plan.version == "9" and block.get((qid, "NumRet"), 1) == 0:
                    continue  # a query of the qrels only (-c): trec_eval 9 prints none of its lines
                for printed, m in plan.lines:
                    if m in plan.strings and strings is not None and (run, qid, m) in strings:
                        lines.append(f"{printed:<22}\t{qid}\t'{strings[run, qid, m]}'")
                    elif m not in plan.summary_only and (qid, m) in block:
                        lines.append(_line(printed, qid, block[qid, m], m in plan.counts))
        if plan.runid:
            lines.append(f"{'runid':<22}\tall\t{run}")
        if plan.num_q:
            lines.append(f"{'num_q':<22}\tall\t{num_q[run]}")
        for printed, m in plan.lines:
            if m in plan.strings:
                continue  # relstring prints per query only
            if (None, m) not in block:
                continue  # refused for this run (tiecore eval's "refused:" line names it)
            mean = block[None, m]
            shown = mean * num_q[run] if m in plan.counts else mean
            lines.append(_line(printed, "all", shown, m in plan.counts))
    return "".join(line + "\n" for line in lines)


def rows_by_run(columns: dict[str, list]) -> dict[str, list[int]]:
    """The row positions of each run of ``columns``, runs in their first row's order.

    >>> rows_by_run({"run": ["a", "b", "a"]})
    {'a': [0, 2], 'b': [1]}
    """
    runs: dict[str, list[int]] = {}
    for i, run in enumerate(columns["run"]):
        runs.setdefault(run, []).append(i)
    return runs


def tiecore_layout_text(columns: dict[str, list], num_q: dict[str, int], counts: set[str]) -> str:
    """tiecore's trec format (per run ``runid``, ``num_q``, then the rows as they come)
    with the measures named in ``counts`` printed as trec_eval prints its counts: whole
    numbers as integers."""
    lines: list[str] = []
    measure, qid, value = columns["measure"], columns["qid"], columns["value"]
    for run, rows in rows_by_run(columns).items():
        lines.append(f"{'runid':<22}\tall\t{run}")
        lines.append(f"{'num_q':<22}\tall\t{num_q[run]}")
        lines.extend(
            _line(measure[i], "all" if qid[i] is None else qid[i], value[i], measure[i] in counts)
            for i in rows
        )
    return "".join(line + "\n" for line in lines)


def _line(name: str, qid: str, value: float, count: bool) -> str:
    """One line; a count as an integer (a tie-aware count between two is a fraction)."""
    if count and abs(value - round(value)) <= 1e-9 * max(1.0, abs(value)):
        return f"{name:<22}\t{qid}\t{round(value)}"
    return f"{name:<22}\t{qid}\t{value:.4f}"


def summed_counts(
    columns: dict[str, list], num_q: dict[str, int], counts: set[str]
) -> dict[str, list]:
    """``columns`` with the summary rows of trec_eval's counts (measures in ``counts``)
    made sums over the queries, as trec_eval reports them: the mean times ``num_q``
    (and its spread columns scaled alike; ``var`` by the square)."""
    if not counts:
        return columns
    out = {name: list(column) for name, column in columns.items()}
    for i, (run, qid, measure) in enumerate(
        zip(columns["run"], columns["qid"], columns["measure"], strict=True)
    ):
        if qid is None and measure in counts:
            n = num_q[run]
            for name in ("value", "std", "stderr", "min", "max", "var"):
                if name in out:
                    out[name][i] = out[name][i] * (n * n if name == "var" else n)
    return out
