"""tiecore.pytrec's RelevanceEvaluator beside pytrec_eval's on BEIR-sized dicts.

``{qid: {docno: score}}`` for 5000 queries of 100 docs (scores float32 values, so few
ties), 5 judged docs a query (levels 0-2, some not retrieved), BEIR's measures
(``map_cut``, ``ndcg_cut``, ``recall``, ``P`` at 1, 3, 5, 10, 100).  Each figure is the
best CPU time (``time.process_time``, which other work on the machine sways less than
wall time) of 5 calls of ``RelevanceEvaluator(qrels, measures).evaluate(run)``, the
evaluator made in each call as BEIR makes it; ``read`` also times ``tiecore.read_run`` /
``read_qrels`` of the dicts, the part of tiecore's time that turns the nested dicts into
columns::

    python benchmarks/pytrec_dicts.py [pytrec] [oblivious] [aware] [read]
    python -m benchmarks dicts [pytrec] [oblivious] [aware] [read]    # the same
"""

from __future__ import annotations

import sys
import time

import numpy as np

QUERIES, DOCS, JUDGED = 5000, 100, 5
K = "1,3,5,10,100"
MEASURES = {f"map_cut.{K}", f"ndcg_cut.{K}", f"recall.{K}", f"P.{K}"}


def inputs(seed: int = 0) -> tuple[dict, dict]:
    """The run and qrels dicts (the same for every seed-0 call)."""
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(QUERIES):
        scores = rng.random(DOCS).astype(np.float32).astype(float)
        run[f"q{q}"] = {f"d{q}_{d}": float(s) for d, s in enumerate(scores)}
        judged = rng.choice(DOCS + 20, size=JUDGED, replace=False)  # some not retrieved
        qrels[f"q{q}"] = {f"d{q}_{d}": int(rng.integers(0, 3)) for d in judged}
    return run, qrels


def best(function, repeats: int = 5) -> float:
    """The least CPU time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return min(times)


def main(which: list[str]) -> None:
    unknown = set(which) - {"pytrec", "oblivious", "aware", "read"}
    if unknown:  # -h, --help, a typo: the usage, nothing timed
        print(__doc__)
        return
    import pytrec_eval

    import tiecore
    from tiecore import pytrec

    run, qrels = inputs()
    which = which or ["pytrec", "oblivious", "aware"]
    if "pytrec" in which:
        seconds = best(lambda: pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run))
        print(f"pytrec_eval:       {seconds:.3f} s")
    for ties in ("oblivious", "aware"):
        if ties in which:
            seconds = best(
                lambda t=ties: pytrec.RelevanceEvaluator(qrels, MEASURES, ties=t).evaluate(run)
            )
            print(f"tiecore {ties + ':':10s} {seconds:.3f} s")
    if "read" in which:
        print(f"read_run(dict):    {best(lambda: tiecore.read_run(run)):.3f} s")
        print(f"read_qrels(dict):  {best(lambda: tiecore.read_qrels(qrels)):.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
