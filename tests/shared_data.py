"""The shared test data and pytrec_eval's view of it, defined once for every test file.

The data live at /work/shared/data (see its README), not next to the clone: a clone
elsewhere must find them all the same.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd

DATA = Path("/work/shared/data")
TREC_EVAL = DATA / "trec_eval_tests"
ROBUST = DATA / "robust03"
ROBUST_QRELS = ROBUST / "qrels.txt"
#: A small valid run: two queries, three lines, tag ``t``.
GOOD = "1 Q0 a 1 3.0 t\n1 Q0 b 2 2.0 t\n2 Q0 a 1 1.0 t\n"
#: The 17 TREC 2003 Robust runs (gzip), in name order.
ROBUST_RUNS = sorted((ROBUST / "runs").glob("input.*.gz"))


def robust_run(name: str) -> Path:
    """One Robust03 run file by name (``input.MU03rob01.gz``)."""
    return ROBUST / "runs" / name


def plain_copy(source: Path, folder: Path) -> Path:
    """``source`` as plain text: a gzip file decompressed into ``folder``, else itself."""
    if source.suffix != ".gz":
        return source
    plain = folder / source.name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(source.read_bytes()))
    return plain


def pytrec_dicts(run: pd.DataFrame, qrels: pd.DataFrame) -> tuple[dict, dict]:
    """pytrec_eval's ``{qid: {docno: level}}`` of the qrels and ``{qid: {docno: score}}``
    of the run (as ``pytrec_eval.RelevanceEvaluator(qrels).evaluate(run)`` takes them)."""
    qrel_dict: dict = {}
    for q, d, lv in zip(qrels["qid"], qrels["docno"], qrels["level"], strict=True):
        qrel_dict.setdefault(q, {})[d] = int(lv)
    run_dict: dict = {}
    for q, d, s in zip(run["qid"], run["docno"], run["score"], strict=True):
        run_dict.setdefault(q, {})[d] = float(s)
    return qrel_dict, run_dict


def pytrec_values(
    run: pd.DataFrame, qrels: pd.DataFrame, measures: set[str], rel_level: int = 1
) -> dict[str, dict[str, float]]:
    """trec_eval 9.0.x's own C code (through pytrec_eval) per query: ``{qid: {name: value}}``
    under trec_eval's names (``measures``: families such as ``{"map", "P"}``)."""
    import pytrec_eval

    qrel_dict, run_dict = pytrec_dicts(run, qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(qrel_dict, set(measures), relevance_level=rel_level)
    return evaluator.evaluate(run_dict)
