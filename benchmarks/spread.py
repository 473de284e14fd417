"""Section ``spread``: ``tiecore eval --spread`` against ``tiecore eval --ties aware``."""

from __future__ import annotations

from benchmarks.common import Result, best_children, best_of, tiecore_cmd
from benchmarks.datasets import Dataset


def bench_spread(ds: Dataset, measures, runs, qrels, peer_repeat: int, repeat: int) -> list:
    """``eval --spread`` vs ``eval --ties aware`` end to end; in-process as a second view."""
    import tiecore
    from tiecore.spread import evaluate_spread

    spread_cmd = [*tiecore_cmd(ds, measures, "aware")]
    spread_cmd.insert(spread_cmd.index("--format"), "--spread")
    found = best_children({"spread": spread_cmd, "aware": tiecore_cmd(ds, measures, "aware")},
                          peer_repeat)  # fmt: skip
    with_spread, aware = found["spread"], found["aware"]
    t_spread, _ = best_of(lambda: evaluate_spread(runs, qrels, measures), repeat)
    t_aware, _ = best_of(lambda: tiecore.evaluate(runs, qrels, measures), repeat)
    return [
        Result(
            ds.name,
            "eval --spread / eval aware (e2e)",
            with_spread.wall,
            aware.wall,
            "<= 2",
            note=f"in-process evaluate_spread {t_spread:.3f}s / evaluate aware {t_aware:.3f}s "
            f"= {t_spread / t_aware:.2f}",
        )
    ]
