"""Section ``arrays``: the array API (:mod:`tiecore.metrics`) against scikit-learn and trm."""

from __future__ import annotations

import os

from benchmarks.common import Result, best_of


def bench_arrays(repeat: int, peer_repeat: int, quick: bool) -> list[Result]:
    """The array API (:mod:`tiecore.metrics`) on one score matrix vs sklearn and trm.

    2,000 queries x 500 candidates (quick: 200 x 500), scores drawn normal and rounded to
    bfloat16 (ties), 5% of candidates relevant (binary: trm takes no levels).  nDCG@10
    against ``sklearn.metrics.ndcg_score(k=10)`` (tie-averaged, as tiecore's aware value)
    and against trm (tie-aware-retrieval-metrics, pure Python, whose ``evaluate`` gives
    the expected value with its min, max and oblivious value: tiecore's ``spread=True``
    is timed beside it); AP@10 and RR@10 against trm.  Best of ``repeat`` calls (trm:
    ``peer_repeat``); the load average is noted, the machine may be shared.
    """
    import ml_dtypes
    import numpy as np
    import trm
    from sklearn.metrics import ndcg_score

    from tiecore import metrics

    queries, candidates, k = (200 if quick else 2000), 500, 10
    rng = np.random.default_rng(0)
    y_score = rng.normal(size=(queries, candidates)).astype(ml_dtypes.bfloat16)
    y_true = (rng.random((queries, candidates)) < 0.05).astype(np.int64)
    scores = y_score.astype(np.float32)  # sklearn and trm take no bfloat16
    score_lists, relevant_lists = scores.tolist(), (y_true > 0).tolist()
    distinct = np.mean([len(np.unique(row)) for row in scores[:100]])

    def trm_time(name: str) -> float:
        call = lambda: trm.evaluate(score_lists, relevant_lists, [name], [k])  # noqa: E731
        return best_of(call, peer_repeat)[0]

    ours = {
        "ndcg": best_of(lambda: metrics.ndcg(y_true, y_score, k=k), repeat)[0],
        "ndcg spread": best_of(lambda: metrics.ndcg(y_true, y_score, k=k, spread=True), repeat)[0],
        "map": best_of(lambda: metrics.average_precision(y_true, y_score, k=k), repeat)[0],
        "mrr": best_of(lambda: metrics.reciprocal_rank(y_true, y_score, k=k), repeat)[0],
    }
    sklearn = best_of(lambda: ndcg_score(y_true, scores, k=k), repeat)[0]
    theirs = {name: trm_time(name) for name in ("ndcg", "map", "mrr")}
    load = f"load average {os.getloadavg()[0]:.1f} at the end"
    data = f"{queries}x{candidates}"
    note = f"bfloat16 scores, {distinct:.0f} distinct per row of {candidates}; {load}"
    return [
        Result(data, "metrics.ndcg(k=10) / sklearn ndcg_score(k=10)", ours["ndcg"], sklearn,
               "<= 0.5", note=note),
        Result(data, "metrics.ndcg(k=10) / trm ndcg@10", ours["ndcg"], theirs["ndcg"],
               "<= 0.05"),
        Result(data, "metrics.ndcg(k=10, spread=True) / trm ndcg@10", ours["ndcg spread"],
               theirs["ndcg"], "<= 0.05", note="both: expected, min, max, oblivious"),
        Result(data, "metrics.average_precision(k=10) / trm map@10", ours["map"],
               theirs["map"], "<= 0.05"),
        Result(data, "metrics.reciprocal_rank(k=10) / trm mrr@10", ours["mrr"],
               theirs["mrr"], "<= 0.05"),
    ]  # fmt: skip
