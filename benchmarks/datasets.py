"""The data sets: generated tie-heavy runs and track-like collections, and Robust03.

Robust03 is read from the shared data (:data:`benchmarks.common.ROBUST`, under
``$TIECORE_BENCH_DATA``); the others are written by the functions below.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import ROBUST

#: Quick-mode subset of robust03: a tie-heavy run (integer scores) and a short one.
QUICK_ROBUST = ("input.MU03rob01.gz", "input.humR03dc.gz")


@dataclass
class Dataset:
    """A qrels file and run files on disk, with the field separator of the runs."""

    name: str
    qrels: Path
    runs: list[Path]
    sep: str
    rows: int = 0
    note: str = ""


def separator(path: Path) -> str:
    """The run file's separator (tab or space), from its first line."""
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        return "\t" if "\t" in handle.readline() else " "


def generate(directory: Path, queries: int, docs: int, seed: int = 0) -> Dataset:
    """A tie-heavy TREC run (``queries x docs`` rows) and qrels, written to ``directory``.

    Scores are Poisson(3) integer counts sorted per query (about 12 distinct values for
    1,000 docs, so nearly every doc ties); docnos look like TREC ids (``FBIS3-012345``),
    distinct per query; each query has 100 judged docs, 70 retrieved (drawn towards the
    top) and 30 not, graded 0/1/2 with probabilities 0.6/0.25/0.15.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    prime = 1_000_003  # doc ids base + i * step (mod prime) are distinct for i < prime
    base = rng.integers(0, prime, queries)
    step = rng.integers(1, prime, queries)

    def docnos(index: np.ndarray) -> pa.Array:
        doc = ((base[:, None] + index * step[:, None]) % prime).ravel()
        prefixes = pa.array(["FBIS3-", "FBIS4-", "FT921-", "FT944-", "LA0412", "FR9401"])
        prefix = pa.DictionaryArray.from_arrays(pa.array(doc % 6), prefixes)
        number = pc.utf8_lpad(pc.cast(pa.array(doc // 6), pa.string()), 6, "0")
        return pc.binary_join_element_wise(pc.cast(prefix, pa.string()), number, "")

    qids = np.arange(301, 301 + queries).astype(str)
    counts = -np.sort(-rng.poisson(3.0, (queries, docs)), axis=1).ravel()
    scores = pa.DictionaryArray.from_arrays(
        pa.array(counts), pa.array([f"{v:.6f}" for v in range(int(counts.max()) + 1)])
    )
    run = pa.table(
        {
            "qid": pa.array(np.repeat(qids, docs)),
            "q0": pa.array(np.full(queries * docs, "Q0")),
            "docno": docnos(np.arange(docs)[None, :]),
            "rank": pa.array(np.tile(np.arange(1, docs + 1), queries)),
            "score": pc.cast(scores, pa.string()),
            "tag": pa.array(np.full(queries * docs, "tiebench")),
        }
    )
    retrieved = min(70, docs)
    bias = rng.random((queries, docs)) * (1 + np.arange(docs) / 100)
    picked = np.sort(np.argsort(bias, axis=1)[:, :retrieved], axis=1)
    judged = np.concatenate([picked, np.arange(docs, docs + 30)[None, :].repeat(queries, 0)], 1)
    levels = rng.choice(3, size=judged.size, p=[0.6, 0.25, 0.15])
    qrels = pa.table(
        {
            "qid": pa.array(np.repeat(qids, judged.shape[1])),
            "iter": pa.array(np.zeros(judged.size, np.int64)),
            "docno": pc.take(
                docnos(np.arange(docs + 30)[None, :]),
                pa.array((judged + np.arange(queries)[:, None] * (docs + 30)).ravel()),
            ),
            "level": pa.array(levels),
        }
    )
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    name = f"tie{queries * docs // 1000}k"
    run_path, qrels_path = directory / f"{name}.run.trec", directory / f"{name}.qrels.txt"
    pacsv.write_csv(run, run_path, options)
    pacsv.write_csv(qrels, qrels_path, options)
    return Dataset(name, qrels_path, [run_path], " ", queries * docs, f"{queries}q x {docs}d")


def robust(subset: tuple[str, ...] | None) -> Dataset | None:
    """TREC 2003 Robust: 17 runs (gzip, tab-separated) and qrels, or a subset of them."""
    runs_dir = ROBUST / "runs"
    if not runs_dir.is_dir():
        return None
    runs = sorted(runs_dir.glob("*.gz"))
    if subset:
        runs = [p for p in runs if p.name in subset]
    name = "robust03" if not subset else f"robust03[{len(runs)}]"
    return Dataset(name, ROBUST / "qrels.txt", runs, separator(runs[0]), note=f"{len(runs)} runs")


def generate_collection(
    directory: Path, runs: int, queries: int, docs: int, seed: int = 1
) -> Dataset:
    """``runs`` runs of one track (a shared qrels), written as TREC files to ``directory``.

    Per query a pool of ``4 * docs`` docs, 100 of them (at most half) judged (0/1/2 with
    probabilities 0.6/0.25/0.15). Each run has a quality ``a ~ U(0.3, 2)`` and retrieves
    the ``docs`` pool docs of highest ``a * level + N(0, 1)`` (unjudged docs count as level
    0), ranked by that score; a third of the runs print it as an integer count
    (``floor(2 * score)``, so they tie a lot), the others with 4 decimals.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    pool = 4 * docs
    qids = np.arange(401, 401 + queries).astype(str)
    numbers = pc.utf8_lpad(pc.cast(pa.array(np.arange(queries * pool)), pa.string()), 8, "0")
    docnos = pc.binary_join_element_wise(pa.scalar("WSJ9-"), numbers, "")
    per_query = min(100, pool // 2)
    judged = np.argsort(rng.random((queries, pool)), axis=1)[:, :per_query]
    levels = rng.choice(3, size=judged.shape, p=[0.6, 0.25, 0.15])
    level = np.zeros((queries, pool))
    np.put_along_axis(level, judged, levels, axis=1)
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    flat = (judged + np.arange(queries)[:, None] * pool).ravel()
    qrels = pa.table(
        {
            "qid": pa.array(np.repeat(qids, per_query)),
            "iter": pa.array(np.zeros(flat.size, np.int64)),
            "docno": pc.take(docnos, pa.array(flat)),
            "level": pa.array(levels.ravel()),
        }
    )
    name = f"coll{runs}"
    folder = directory / name
    folder.mkdir(parents=True, exist_ok=True)
    qrels_path = folder / "qrels.txt"
    pacsv.write_csv(qrels, qrels_path, options)
    paths = []
    offsets = np.arange(queries)[:, None] * pool
    for r in range(runs):
        score = rng.uniform(0.3, 2.0) * level + rng.normal(size=level.shape)
        top = np.argsort(-score, axis=1)[:, :docs]
        chosen = np.take_along_axis(score, top, axis=1).ravel()
        text = (
            np.floor(2 * chosen).astype(np.int64).astype(str)
            if r % 3 == 0
            else np.char.mod("%.4f", chosen)
        )
        table = pa.table(
            {
                "qid": pa.array(np.repeat(qids, docs)),
                "q0": pa.array(np.full(chosen.size, "Q0")),
                "docno": pc.take(docnos, pa.array((top + offsets).ravel())),
                "rank": pa.array(np.tile(np.arange(1, docs + 1), queries)),
                "score": pa.array(text),
                "tag": pa.array(np.full(chosen.size, f"sys{r:03d}")),
            }
        )
        paths.append(folder / f"run{r:03d}.txt")
        pacsv.write_csv(table, paths[-1], options)
    note = f"{runs} runs x {queries}q x {docs}d, a third with integer scores"
    return Dataset(name, qrels_path, paths, " ", runs * queries * docs, note)
