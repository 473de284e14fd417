"""Interoperability with ir_measures, ranx, trectools and trec_eval.

:func:`peer_frame` turns ranx's ``Run`` / ``Qrels`` and trectools' ``TrecRun`` /
``TrecQrel`` into tiecore's frames; :func:`tiecore.evaluate`, :func:`tiecore.read_run`
and :func:`tiecore.read_qrels` take them through it.  (ir_measures' own runs and
qrels are read by :mod:`tiecore.io.sources`; :mod:`tiecore.ir_measures_provider` makes
tiecore an ir_measures provider.)

:func:`measure_name` (from :mod:`tiecore.measures.ir_names`, beside the parser) turns an
ir_measures measure object or name into tiecore's name.

:data:`ALL_TREC` lists trec_eval's ``-m all_trec`` measures in trec_eval's order with
tiecore's equivalent (from the one table, :mod:`tiecore.measures.trec_eval_table`);
:func:`all_trec_measures` gives each measure once, and
:func:`format_all_trec` prints them as trec_eval does, with the counts of
:func:`count_rows` (:func:`count_runs`: run by run, as :func:`tiecore.evaluate` reads them).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from tiecore.errors import TieCoreWarning
from tiecore.io.peers import is_peer, peer_frame
from tiecore.measures import Measure
from tiecore.measures.ir_names import measure_name
from tiecore.measures.trec_eval_table import NICKNAMES, TABLE, printed_lines
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

# ------------------------------------------------------------------ trec_eval's all_trec

#: trec_eval 9.0.x's ``-m all_trec`` lines, in its order: (trec_eval name, tiecore name),
#: from trec_eval's table (:mod:`tiecore.measures.trec_eval_table`), less the lines that
#: are no measure (``runid``, ``num_q``, ``relstring``).
ALL_TREC: tuple[tuple[str, str], ...] = tuple(
    line
    for name in TABLE
    if name in NICKNAMES["all_trec"] and TABLE[name].kind not in ("runid", "num_q", "string")
    for line in printed_lines(TABLE[name], TABLE[name].defaults)
)

#: trec_eval's counts: printed as integers, and summed (not averaged) in the ``all`` row.
_COUNTS = tuple(name for name in NICKNAMES["all_trec"] if TABLE[name].kind == "count")
#: Printed for ``all`` only (gm_map, gm_bpref).
_SUMMARY_ONLY = tuple(name for name in NICKNAMES["all_trec"] if TABLE[name].kind == "summary")


def all_trec_measures() -> list[tuple[str, object]]:
    """The measures of :data:`ALL_TREC`: ``(trec_eval name, Measure)``, each measure once
    (``Rprec_mult_1.00`` is ``Rprec``, listed once under its first name).

    >>> names = [name for name, _ in all_trec_measures()]
    >>> names[0], "ndcg_cut_10" in names
    ('num_ret', True)
    """
    found: dict[str, tuple[str, object]] = {}
    for trec, ours in ALL_TREC:
        measure = Measure.parse(ours)
        found.setdefault(str(measure), (trec, measure))
    return list(found.values())


def expand_all_trec(names: list[str]) -> tuple[list[str], dict[str, str] | None]:
    """``-m all_trec``: the names with ``all_trec`` replaced by :func:`all_trec_measures`,
    and the trec_eval name to print for each measure (None without ``all_trec``).

    >>> names, printed = expand_all_trec(["all_trec", "nDCG(gain=exp)@10"])
    >>> names[:2], printed["AP"], printed["nDCG(gain=exp)@10"]
    (['NumRet', 'NumRel'], 'map', 'nDCG(gain=exp)@10')
    """
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
    from tiecore.evaluation.core import evaluate  # lazy: pandas and pyarrow (~240 ms)

    measures = {"NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret"}
    with warnings.catch_warnings():  # counts: a query the run lacks is a 0, not news
        warnings.simplefilter("ignore", TieCoreWarning)
        found = evaluate(
            run, qrels, list(measures), ties="oblivious", tiebreak="trec_eval",
            rel_level=rel_level, depth=depth, per_query=True, complete=True,
        )  # fmt: skip
    rows = found[found["qid"].notna()]
    counts = rows.pivot(index="qid", columns="measure", values="value")
    judged = qrels["qid"].astype(str).unique()
    counts = counts.rename(columns=measures)[list(measures.values())].reindex(judged)
    return counts.fillna(0).astype(np.int64).rename_axis("qid").rename_axis(None, axis=1)


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
    from tiecore.evaluation.parallel import map_runs  # lazy: pandas and pyarrow (~230 ms)

    count = partial(_named_counts, qrels=qrels, rel_level=rel_level, depth=depth)
    return dict(map_runs(count, runs, client=client))


def _named_counts(
    name: str, run: pd.DataFrame, *, qrels: pd.DataFrame, rel_level: int, depth: int | None
) -> tuple[str, pd.DataFrame]:
    return name, count_rows(run, qrels, rel_level=rel_level, depth=depth)


@validate_params(pick(INTEROP, "per_query"))
def format_all_trec(
    result: pd.DataFrame, names: Mapping[str, str], *, per_query: bool = False
) -> str:
    """trec_eval's ``-m all_trec`` text: per run the per-query blocks, then ``all``.

    ``result`` is :func:`tiecore.evaluate`'s tidy frame (per-query rows and the
    summary rows, qid NA); ``names`` maps tiecore measure names to trec_eval's, in the
    order to print.  Lines are ``"%-22s\\t%s\\t%.4f"``; ``runid`` and ``num_q`` open the
    ``all`` block, then trec_eval's counts (``num_ret``, ``num_rel``, ``num_rel_ret``:
    the NumRet, NumRel and NumRelRet measures, printed as integers when they are, and
    summed over the queries in the ``all`` row, as trec_eval does); the per-query blocks
    skip ``gm_map``, as trec_eval prints them.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"run": "r", "qid": ["1", "2", None] * 2,
    ...     "measure": ["NumRet"] * 3 + ["AP"] * 3, "value": [3.0, 5, 4, 0.5, 0.25, 0.375]})
    >>> text = format_all_trec(rows, {"NumRet": "num_ret", "AP": "map"})
    >>> [line.split("\\t") for line in text.splitlines()][2:]
    [['num_ret               ', 'all', '8'], ['map                   ', 'all', '0.3750']]
    """
    counts = [ours for ours, trec in names.items() if trec in _COUNTS]
    order = [*counts, *(ours for ours in names if ours not in counts)]  # counts after num_q
    lines: list[str] = []
    for run, block in result.groupby("run", sort=False):
        summary = block["qid"].isna()
        values = dict(
            zip(block.loc[summary, "measure"].astype(str), block.loc[summary, "value"], strict=True)
        )
        rows = block.loc[~summary]
        qids = list(dict.fromkeys(rows["qid"].astype(str)))
        table = rows.pivot_table(index="qid", columns="measure", values="value", sort=False)
        for ours in counts:  # trec_eval sums its counts over the queries
            values[ours] = float(table[ours].sum()) if len(qids) else 0.0
        if per_query:
            for qid in qids:
                lines.extend(
                    f"{names[ours]:<22}\t{qid}\t{_shown(table.loc[qid, ours], ours in counts)}"
                    for ours in order
                    if names[ours] not in _SUMMARY_ONLY
                )
        lines.append(f"{'runid':<22}\tall\t{run}")
        lines.append(f"{'num_q':<22}\tall\t{len(qids)}")
        lines.extend(
            f"{names[ours]:<22}\tall\t{_shown(values[ours], ours in counts)}" for ours in order
        )
    return "".join(line + "\n" for line in lines)


def _shown(value: float, count: bool) -> str:
    """``%.4f``, or a count as an integer (a tie-aware count between two is a fraction)."""
    return str(int(value)) if count and float(value).is_integer() else f"{value:.4f}"
