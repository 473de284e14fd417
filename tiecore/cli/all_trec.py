"""trec_eval's side of ``tiecore eval``: its measure names out, and ``-m all_trec``.

A measure typed as trec_eval names it (``map``, ``P.5``) is printed under trec_eval's
name (:func:`trec_names`); ``-m all_trec`` prints trec_eval's listing for the measures
tiecore has (its counts ``num_ret``, ``num_rel``, ``num_rel_ret`` are the measures
NumRet, NumRel and NumRelRet, :func:`tiecore.interop.format_all_trec`).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from tiecore.cli.common import eval_inputs, read_inputs

if TYPE_CHECKING:  # pandas loads only when a command needs it (start-up)
    import pandas as pd


#: trec_eval's measure names (``-m`` takes ``P.5``; trec_eval prints ``P_5``).  A pattern,
#: compiled (and cached by :mod:`re`) on first use: its compilation costs 0.25 ms, more
#: than the rest of ``tiecore eval``'s own work on a small file, and a name that is
#: tiecore's already never needs it.
_TREC_NAME = (
    r"(map|gm_map|Rprec|bpref|recip_rank|ndcg|infAP|P|recall|ndcg_cut|map_cut|success|"
    r"iprec_at_recall|Rprec_mult|set_P|set_recall|set_F)([._][0-9.]+)?"
)


def trec_names(typed: Sequence[str], names: Sequence[str]) -> dict[str, str]:
    """tiecore's name -> the name to print, for the measures typed with trec_eval's names.

    A measure asked for as trec_eval names it (``map``, ``P.5``, ``ndcg_cut.10``) is
    printed as trec_eval prints it (``map``, ``P_5``, ``ndcg_cut_10``), so scripts that
    parse trec_eval's output keep working; tiecore's names (``P@5``) stay as they are.

    >>> trec_names(["map", "P.5", "nDCG@10", "ndcg_cut_20"], ["AP", "P@5", "nDCG@10", "nDCG@20"])
    {'AP': 'map', 'P@5': 'P_5', 'nDCG@20': 'ndcg_cut_20'}
    >>> trec_names(["iprec_at_recall_0.10"], ["IPrec(recall=0.1)"])
    {'IPrec(recall=0.1)': 'iprec_at_recall_0.10'}
    """
    printed: dict[str, str] = {}
    for text, name in zip(typed, names, strict=True):
        if name != "all_trec" and name not in printed:  # the first spelling of a measure
            trec = text != name and re.fullmatch(_TREC_NAME, text)
            # trec_eval prints P.5 as P_5 but iprec_at_recall_0.10 as it is
            kept = text.startswith("iprec_at_recall_")
            spelled = text if kept else text.replace(".", "_", 1)
            printed[name] = spelled if trec else name
    return {k: v for k, v in printed.items() if k != v}


def all_trec_inputs(args: argparse.Namespace) -> tuple[object, pd.DataFrame, dict | None]:
    """``-m all_trec``'s inputs: run files stay paths, read one at a time, unless one is
    no plain file (stdin, a pipe): then every run is read once, up front."""
    if all(os.path.isfile(path) for path in args.files[1:]):
        return eval_inputs(args)
    return read_inputs(args)


def without_inexact(measures: list, printed: dict[str, str], stderr: TextIO) -> list:
    """``-m all_trec`` under aware or ``--spread``: leave out, with a note, the listing's
    measures that have no exact tie-aware value (gm_map, see tiecore.measures.gmap); ``printed``
    loses them too."""
    dropped = [m for m in measures if m.spec.aggregate == "geometric" and printed[str(m)] != str(m)]
    if dropped:
        names = ", ".join(printed.pop(str(m)) for m in dropped)
        print(
            f"tiecore: all_trec leaves out {names}: no exact tie-aware value "
            "(use --ties sampled or oblivious for it)",
            file=stderr,
        )
    return [m for m in measures if m not in dropped]
