"""Interoperability with ir_measures, ranx, trectools and trec_eval.

:func:`peer_frame` turns ranx's ``Run`` / ``Qrels`` and trectools' ``TrecRun`` /
``TrecQrel`` into tiecore's frames; :func:`tiecore.evaluate`, :func:`tiecore.read_run`
and :func:`tiecore.read_qrels` take them through it.  (ir_measures' own runs and
qrels are read by :mod:`tiecore.io.sources`; :mod:`tiecore.ir_measures_provider` makes
tiecore an ir_measures provider.)

:func:`measure_name` turns an ir_measures measure object (``ir_measures.nDCG@10``,
``ir_measures.P(rel=2)@5``, ``AP``, ``RR``) or its name (``"P(rel=2)@5"``) into
tiecore's name, mapping the parameters: ``cutoff`` is ``@k``; ``rel`` must be the
relevance level of the evaluation (tiecore has one for all measures, ``rel_level``);
nDCG's ``dcg='exp-log2'`` is ``gain=exp``; RBP's ``rel`` is its binary gain;
``judged_only`` and custom ``gains`` have no tiecore equivalent and are refused.

:data:`ALL_TREC` lists trec_eval's ``-m all_trec`` measures in trec_eval's order with
tiecore's equivalent; :func:`all_trec_measures` keeps those tiecore has, and
:func:`format_all_trec` prints them as trec_eval does, with the counts of
:func:`count_rows` (:func:`count_runs`: run by run, as :func:`tiecore.evaluate` reads them).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from tiecore.errors import InputError
from tiecore.io.peers import is_peer, peer_frame
from tiecore.options import INTEROP, pick, validate_params

if TYPE_CHECKING:  # pandas loads with count_rows (tiecore eval's start-up needs measure_name)
    import pandas as pd

__all__ = [
    "ALL_TREC",
    "all_trec_measures",
    "count_rows",
    "count_runs",
    "expand_all_trec",
    "format_all_trec",
    "is_peer",
    "measure_name",
    "peer_frame",
]

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
    from tiecore.measures import Measure, _Refused

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
    if not _is_ir_measure(measure):
        raise TypeError(f"expected a measure name or an ir_measures measure, got {measure!r}")
    return _convert(measure, rel_level)


def _convert(measure: object, rel_level: int) -> str:
    from tiecore.measures import Measure

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
    ours.update(params)  # anything else (RBP's p, ...) as tiecore's parser takes it
    name = _join(family, ours, cutoff)
    try:
        return str(Measure.parse(name))
    except InputError as error:
        raise refuse(error.problem, error.expected or "a measure tiecore has") from None


def _join(family: str, params: Mapping[str, object], cutoff: object) -> str:
    inside = ",".join(f"{k}={v}" for k, v in params.items())
    return family + (f"({inside})" if inside else "") + ("" if cutoff is None else f"@{cutoff}")


# ------------------------------------------------------------------ trec_eval's all_trec

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

#: trec_eval 9.0.x's ``-m all_trec`` measures, in its order: (trec_eval name, tiecore
#: name or None). None: a count printed from the data (num_q, num_ret, num_rel,
#: num_rel_ret). Measures tiecore does not have are listed with their tiecore name
#: when it has one under that name, and skipped otherwise.
ALL_TREC: tuple[tuple[str, str | None], ...] = (
    ("num_ret", None),
    ("num_rel", None),
    ("num_rel_ret", None),
    ("map", "AP"),
    ("gm_map", "gm_map"),
    ("Rprec", "Rprec"),
    ("bpref", "Bpref"),
    ("recip_rank", "RR"),
    *((f"iprec_at_recall_{r / 10:.2f}", f"iprec_at_recall_{r / 10:.2f}") for r in range(11)),
    *((f"P_{k}", f"P@{k}") for k in _CUTS),
    *((f"recall_{k}", f"R@{k}") for k in _CUTS),
    ("infAP", "infAP"),
    ("ndcg", "nDCG"),
    *((f"ndcg_cut_{k}", f"nDCG@{k}") for k in _CUTS),
    *((f"map_cut_{k}", f"AP@{k}") for k in _CUTS),
    ("success_1", "Success@1"),
    ("success_5", "Success@5"),
    ("success_10", "Success@10"),
)

_COUNTS = ("num_ret", "num_rel", "num_rel_ret")
_SUMMARY_ONLY = ("gm_map",)  # trec_eval prints these for "all" only


def all_trec_measures() -> list[tuple[str, object]]:
    """The measures of :data:`ALL_TREC` that tiecore has: ``(trec_eval name, Measure)``.

    >>> names = [name for name, _ in all_trec_measures()]
    >>> names[0], "ndcg_cut_10" in names
    ('map', True)
    """
    from tiecore.measures import Measure

    found = []
    for trec, ours in ALL_TREC:
        if ours is None:
            continue
        try:
            found.append((trec, Measure.parse(ours)))
        except (InputError, ValueError):
            continue
    return found


def expand_all_trec(names: list[str]) -> tuple[list[str], dict[str, str] | None]:
    """``-m all_trec``: the names with ``all_trec`` replaced by :func:`all_trec_measures`,
    and the trec_eval name to print for each measure (None without ``all_trec``).

    >>> names, printed = expand_all_trec(["all_trec", "nDCG(gain=exp)@10"])
    >>> names[:2], printed["AP"], printed["nDCG(gain=exp)@10"]
    (['AP', 'GMAP'], 'map', 'nDCG(gain=exp)@10')
    """
    from tiecore.measures import Measure

    if "all_trec" not in names:
        return names, None
    found = all_trec_measures()
    expanded: list[str] = []
    printed: dict[str, str] = {}
    for name in names:
        if name == "all_trec":
            expanded.extend(str(measure) for _, measure in found)
            printed.update({str(measure): trec for trec, measure in found})
        else:
            expanded.append(name)
            printed.setdefault(str(Measure.parse(name)), str(Measure.parse(name)))
    return expanded, printed


@validate_params(pick(INTEROP, "rel_level", "depth"))
def count_rows(
    run: pd.DataFrame, qrels: pd.DataFrame, *, rel_level: int = 1, depth: int | None = None
) -> pd.DataFrame:
    """trec_eval's counts per run query: ``num_ret``, ``num_rel``, ``num_rel_ret``.

    ``num_ret`` is ``min(rows, depth)``; with ``depth`` the kept docs are those of
    trec_eval's order (score descending as a C float, then docno descending).
    Indexed by qid (strings): every query of the qrels (``num_ret`` 0 when the run
    lacks it), none that only the run has.

    >>> import pandas as pd
    >>> run = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"], "score": [3.0, 2, 1]})
    >>> qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["c", "z"], "level": [1, 2]})
    >>> count_rows(run, qrels).to_dict("index")
    {'1': {'num_ret': 3, 'num_rel': 2, 'num_rel_ret': 1}}
    >>> count_rows(run, qrels, depth=2).loc["1", "num_rel_ret"].item()
    0
    """
    import pandas as pd

    run = run[["qid", "docno", "score"]].astype({"qid": str, "docno": str})
    qrels = qrels[["qid", "docno", "level"]].astype({"qid": str, "docno": str})
    if depth is not None:
        order = run.assign(key=run["score"].astype(np.float32)).sort_values(
            ["qid", "key", "docno"], ascending=[True, False, False], kind="stable"
        )
        run = order[order.groupby("qid", sort=False).cumcount() < depth]
    relevant = qrels[(qrels["level"] >= rel_level) & (qrels["level"] >= 0)]  # trec_eval's num_rel
    judged = pd.Index(qrels["qid"].unique())
    run = run[run["qid"].isin(judged)]
    hits = run.merge(relevant[["qid", "docno"]], on=["qid", "docno"], how="inner")
    counts = pd.DataFrame(
        {
            "num_ret": run.groupby("qid").size(),
            "num_rel": relevant.groupby("qid").size(),
            "num_rel_ret": hits.groupby("qid").size(),
        }
    )
    return counts.reindex(judged).fillna(0).astype(np.int64)


@validate_params(pick(INTEROP, "rel_level", "depth"))
def count_runs(
    runs: object,
    qrels: pd.DataFrame,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    client: object = None,
) -> dict[str, pd.DataFrame]:
    """:func:`count_rows` of every run, by name, reading one run at a time.

    ``runs`` is what :func:`tiecore.evaluate` takes (files are read one after the
    other and dropped once counted, or by the workers of a dask ``client``) and the
    runs are named as it names them, so the counts go with its rows.

    >>> import pandas as pd
    >>> run = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"], "score": [3.0, 2, 1]})
    >>> qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["c", "z"], "level": [1, 2]})
    >>> count_runs({"bm25": run}, qrels)["bm25"].to_dict("index")
    {'1': {'num_ret': 3, 'num_rel': 2, 'num_rel_ret': 1}}
    """
    from tiecore.evaluation.parallel import map_runs

    count = partial(_named_counts, qrels=qrels, rel_level=rel_level, depth=depth)
    return dict(map_runs(count, runs, client=client))


def _named_counts(
    name: str, run: pd.DataFrame, *, qrels: pd.DataFrame, rel_level: int, depth: int | None
) -> tuple[str, pd.DataFrame]:
    return name, count_rows(run, qrels, rel_level=rel_level, depth=depth)


@validate_params(pick(INTEROP, "per_query"))
def format_all_trec(
    result: pd.DataFrame,
    counts: Mapping[str, pd.DataFrame],
    names: Mapping[str, str],
    *,
    per_query: bool = False,
) -> str:
    """trec_eval's ``-m all_trec`` text: per run the per-query blocks, then ``all``.

    ``result`` is :func:`tiecore.evaluate`'s tidy frame (per-query rows and the
    summary rows, qid NA); ``counts`` each run's :func:`count_rows` (:func:`count_runs`);
    ``names`` maps tiecore measure names to trec_eval's, in the order to print.  Lines are
    ``"%-22s\\t%s\\t%.4f"`` (counts as integers); ``runid`` and ``num_q`` open the
    ``all`` block and the per-query blocks skip ``gm_map``, as trec_eval prints them.
    """
    lines: list[str] = []
    for run, block in result.groupby("run", sort=False):
        run = str(run)
        summary = block["qid"].isna()
        values = dict(
            zip(block.loc[summary, "measure"].astype(str), block.loc[summary, "value"], strict=True)
        )
        rows = block.loc[~summary]
        qids = list(dict.fromkeys(rows["qid"].astype(str)))
        count = counts[run].reindex(qids).fillna(0).astype(np.int64)
        if per_query:
            table = rows.pivot_table(index="qid", columns="measure", values="value", sort=False)
            for qid in qids:
                lines.extend(f"{c:<22}\t{qid}\t{int(count.loc[qid, c])}" for c in _COUNTS)
                lines.extend(
                    f"{trec:<22}\t{qid}\t{table.loc[qid, ours]:.4f}"
                    for ours, trec in names.items()
                    if trec not in _SUMMARY_ONLY
                )
        lines.append(f"{'runid':<22}\tall\t{run}")
        lines.append(f"{'num_q':<22}\tall\t{len(qids)}")
        totals = count.sum()
        lines.extend(f"{c:<22}\tall\t{int(totals[c])}" for c in _COUNTS)
        lines.extend(f"{trec:<22}\tall\t{values[ours]:.4f}" for ours, trec in names.items())
    return "".join(line + "\n" for line in lines)
