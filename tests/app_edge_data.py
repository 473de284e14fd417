"""Edge data sets for the explorer's tests (AppTest and the browser): small files as bytes.

Each set is ``(run_files, qrels_file)`` of ``(name, bytes)`` pairs for the TREC
uploader, except ``letor_136`` which is one LETOR file.  They cover what real
uploads throw at the pages: no ties at all, a single tied query, every row tied,
one query, one run, a run none of whose queries is judged, 100+ runs, and 136
LETOR features.
"""

from __future__ import annotations

import gzip
import io
import zipfile

import numpy as np

Files = list[tuple[str, bytes]]


def _run(name: str, rows: list[tuple[str, str, float]]) -> tuple[str, bytes]:
    lines = [f"{q} Q0 {d} {i} {s:g} {name}" for i, (q, d, s) in enumerate(rows, start=1)]
    return f"{name}.run", ("\n".join(lines) + "\n").encode()


def _qrels(rows: list[tuple[str, str, int]], name: str = "edge.qrels") -> tuple[str, bytes]:
    return name, ("\n".join(f"{q} 0 {d} {lv}" for q, d, lv in rows) + "\n").encode()


def _judged(queries: list[str], docs: int, rng: np.random.Generator) -> list[tuple[str, str, int]]:
    """Every doc judged; at least one relevant and one non-relevant doc per query."""
    rows = []
    for q in queries:
        levels = rng.integers(0, 3, docs)
        levels[0], levels[1] = 1, 0
        rows += [(q, f"{q}-d{i}", int(lv)) for i, lv in enumerate(levels)]
    return rows


def no_ties(seed: int = 1) -> tuple[Files, tuple[str, bytes]]:
    """Two runs on three queries, every score distinct."""
    rng = np.random.default_rng(seed)
    queries, docs = ["101", "102", "103"], 8
    runs = [
        _run(
            name,
            [
                (q, f"{q}-d{i}", float(s))
                for q in queries
                for i, s in enumerate(rng.permutation(docs) + 1)
            ],
        )
        for name in ("alpha", "beta")
    ]
    return runs, _qrels(_judged(queries, docs, rng))


def single_tied_query(seed: int = 2) -> tuple[Files, tuple[str, bytes]]:
    """Two runs; only query 102 has a tie, and it mixes relevant and non-relevant docs."""
    rng = np.random.default_rng(seed)
    queries, docs = ["101", "102", "103"], 8
    runs = []
    for name in ("alpha", "beta"):
        rows = []
        for q in queries:
            scores = (rng.permutation(docs) + 1).astype(float)
            if q == "102":
                scores[:4] = 20.0  # docs d0 (relevant) .. d3 share the top score
            rows += [(q, f"{q}-d{i}", s) for i, s in enumerate(scores)]
        runs.append(_run(name, rows))
    return runs, _qrels(_judged(queries, docs, rng))


def all_tied(seed: int = 3) -> tuple[Files, tuple[str, bytes]]:
    """Two runs whose every query has one score for every doc."""
    rng = np.random.default_rng(seed)
    queries, docs = ["101", "102", "103"], 8
    runs = [
        _run(name, [(q, f"{q}-d{i}", 1.0) for q in queries for i in range(docs)])
        for name in ("alpha", "beta")
    ]
    return runs, _qrels(_judged(queries, docs, rng))


def one_query(seed: int = 4) -> tuple[Files, tuple[str, bytes]]:
    """Two tie-heavy runs on a single query."""
    rng = np.random.default_rng(seed)
    runs = [
        _run(name, [("101", f"101-d{i}", float(rng.integers(3))) for i in range(12)])
        for name in ("alpha", "beta")
    ]
    return runs, _qrels(_judged(["101"], 12, rng))


def one_run(seed: int = 5) -> tuple[Files, tuple[str, bytes]]:
    """A single tie-heavy run."""
    rng = np.random.default_rng(seed)
    queries = ["101", "102", "103"]
    run = _run(
        "solo", [(q, f"{q}-d{i}", float(rng.integers(3))) for q in queries for i in range(10)]
    )
    return [run], _qrels(_judged(queries, 10, rng))


def unjudged_run(seed: int = 6) -> tuple[Files, tuple[str, bytes]]:
    """Two judged runs and one (``ghost``) none of whose queries is in the qrels."""
    rng = np.random.default_rng(seed)
    queries = ["101", "102"]
    runs = [
        _run(name, [(q, f"{q}-d{i}", float(rng.integers(4))) for q in queries for i in range(10)])
        for name in ("alpha", "beta")
    ]
    runs.append(
        _run("ghost", [(q, f"{q}-d{i}", float(i % 3)) for q in ("901", "902") for i in range(10)])
    )
    return runs, _qrels(_judged(queries, 10, rng))


def nothing_judged(seed: int = 7) -> tuple[Files, tuple[str, bytes]]:
    """One run whose queries are all missing from the qrels: the upload is refused."""
    rng = np.random.default_rng(seed)
    run = _run("ghost", [("901", f"d{i}", float(i % 2)) for i in range(6)])
    return [run], _qrels(_judged(["101"], 4, rng))


def many_runs(count: int = 120, seed: int = 8) -> tuple[Files, tuple[str, bytes]]:
    """``count`` runs with long names on three queries, ties in most of them."""
    rng = np.random.default_rng(seed)
    queries, docs = ["101", "102", "103"], 8
    runs = []
    for k in range(count):
        name = f"team{k:03d}_a_rather_long_run_name_v{k % 7}"
        runs.append(
            _run(
                name,
                [
                    (q, f"{q}-d{i}", float(rng.integers(2 + k % 6)))
                    for q in queries
                    for i in range(docs)
                ],
            )
        )
    return runs, _qrels(_judged(queries, docs, rng))


def letor_136(seed: int = 9) -> tuple[str, bytes]:
    """A LETOR file with 136 features (most of them coarse), 3 queries of 6 docs."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in (1, 2, 3):
        for d in range(6):
            label = 1 if d == 0 else int(rng.integers(0, 3)) if d < 3 else 0
            values = " ".join(f"{f}:{rng.integers(0, 1 + f % 5)}" for f in range(1, 137))
            lines.append(f"{label} qid:{q} {values}")
    return "edge136.svm", ("\n".join(lines) + "\n").encode()


#: The TREC edge sets by name.
def markdown_names(seed: int = 10) -> tuple[Files, tuple[str, bytes]]:
    """Two tie-heavy runs whose tags are Markdown (a link, emphasis): to be shown as text."""
    rng = np.random.default_rng(seed)
    queries, docs = ["101", "102", "103"], 8
    runs = []
    for file, tag in (("link.run", "[click](http://x.test)"), ("bold.run", "**bold**_x_")):
        rows = [(q, f"{q}-d{i}", float(rng.integers(1, 3))) for q in queries for i in range(docs)]
        _, content = _run(tag, rows)
        runs.append((file, content))
    return runs, _qrels(_judged(queries, docs, rng))


TREC_SETS = {
    "no_ties": no_ties,
    "single_tied_query": single_tied_query,
    "all_tied": all_tied,
    "one_query": one_query,
    "one_run": one_run,
    "unjudged_run": unjudged_run,
    "many_runs": many_runs,
}


def track_archive(folder, runs: int, queries: int = 20, docs: int = 30, seed: int = 34):
    """A whole track on disk: ``track.zip`` of ``runs`` gzip run files (``sys000`` ...,
    coarse scores in halves: many ties), ``track.qrels`` and ``topics.txt`` (TREC topics
    format, "generated topic <qid>") in ``folder``; returns the three paths."""
    rng = np.random.default_rng(seed)
    qids = [str(401 + q) for q in range(queries)]
    qrels = [f"{q} 0 d{q}-{d} {int(rng.integers(0, 3))}" for q in qids for d in range(docs)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for r in range(runs):
            levels = rng.integers(1, 4 + r % 5, size=(queries, docs))
            lines = [
                f"{q} Q0 d{q}-{d} {d + 1} {levels[i, d] / 2:.1f} sys{r:03d}"
                for i, q in enumerate(qids)
                for d in range(docs)
            ]
            archive.writestr(f"track/sys{r:03d}.txt.gz", gzip.compress("\n".join(lines).encode()))
    (folder / "track.zip").write_bytes(buffer.getvalue())
    (folder / "track.qrels").write_text("\n".join(qrels) + "\n")
    topics = "".join(
        f"<top>\n<num> Number: {q}\n<title> generated topic {q}\n<desc> ...\n</top>\n\n"
        for q in qids
    )
    (folder / "topics.txt").write_text(topics)
    return folder / "track.zip", folder / "track.qrels", folder / "topics.txt"
