"""Derive the embedded sample data from ../shared/data (run once; output is committed).

Robust03: five runs spanning the range of ties (rutcor03100 almost entirely
tied, MU03rob01 integer scores, pircRBa1 and aplrob03a partly tied, uwmtCR0
nearly tie-free) on the first 50 topics, with the qrels of those topics.
MSLR-WEB10K: the Fold 1 test sample (43 queries, 136 features), gzipped.
Every file is a subset of its origin's lines, unmodified.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
HERE = Path(__file__).resolve().parent
RUNS = ("rutcor03100", "MU03rob01", "pircRBa1", "aplrob03a", "uwmtCR0")
TOPICS = 50


def main() -> None:
    qrels_lines = (SHARED / "robust03" / "qrels.txt").read_text().splitlines(keepends=True)
    topics = sorted({line.split()[0] for line in qrels_lines})[:TOPICS]
    keep = set(topics)
    out = HERE / "robust03"
    (out / "runs").mkdir(parents=True, exist_ok=True)
    with gzip.open(out / "qrels.txt.gz", "wt") as handle:
        handle.writelines(line for line in qrels_lines if line.split()[0] in keep)
    for run in RUNS:
        with gzip.open(SHARED / "robust03" / "runs" / f"input.{run}.gz", "rt") as source:
            lines = [line for line in source if line.split()[0] in keep]
        with gzip.open(out / "runs" / f"input.{run}.gz", "wt") as handle:
            handle.writelines(lines)
    shutil.copy(SHARED / "robust03" / "LICENSE", out / "LICENSE")
    mslr = HERE / "mslr"
    mslr.mkdir(exist_ok=True)
    with (
        open(SHARED / "mslr_web10k_sample" / "msn1.fold1.test.5k.txt", "rb") as source,
        gzip.open(mslr / "msn1.fold1.test.5k.txt.gz", "wb") as handle,
    ):
        shutil.copyfileobj(source, handle)
    for name in ("LICENSE", "feature_names.txt"):
        shutil.copy(SHARED / "mslr_web10k_sample" / name, mslr / name)


if __name__ == "__main__":
    main()
