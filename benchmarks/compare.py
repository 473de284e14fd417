"""Section ``compare``: ``tiecore compare`` against ``tiecore eval --spread``."""

from __future__ import annotations

from benchmarks.common import Result, best_children, child_cmd
from benchmarks.datasets import Dataset


def bench_compare(ds: Dataset, peer_repeat: int, samples: int = 200) -> list[Result]:
    """``tiecore compare -m AP`` vs ``tiecore eval --ties aware --spread -m AP``."""
    files = [str(ds.qrels), *map(str, ds.runs)]
    cmp = child_cmd("cli", "compare", "-m", "AP", "--samples", str(samples), "--format", "json")
    ev = child_cmd("cli", "eval", "--ties", "aware", "--spread", "-m", "AP", "--format", "json")
    best = best_children({"compare": [*cmp, *files], "spread": [*ev, *files]}, peer_repeat)
    compared, spread = best["compare"], best["spread"]
    return [
        Result(
            ds.name,
            "compare / eval --spread (e2e)",
            compared.wall,
            spread.wall,
            "<= 3",
            note=f"{len(ds.runs)} runs, AP, {samples} samples per run, 2000 resamples",
        )
    ]
