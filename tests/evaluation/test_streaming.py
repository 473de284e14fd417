"""Runs read one at a time: the same results as loading them all, memory bounded by one run."""

from __future__ import annotations

import gc
import gzip
import os
import shutil
import subprocess
import sys
import warnings
import weakref
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from named_pipes import fed_pipe

import tiecore
from tiecore import cli
from tiecore import io as tio
from tiecore.cli import compare as cli_compare
from tiecore.cli import eval as cli_eval
from tiecore.cli.common import read_inputs
from tiecore.compare import compare
from tiecore.errors import InputError, TieCoreWarning
from tiecore.evaluation import parallel as _parallel
from tiecore.io import readers as tio_readers
from tiecore.spread import evaluate_spread

REPO = Path(__file__).resolve().parents[2]
MEASURES = ["P@5", "AP", "nDCG@10", "RR", "Bpref", "R@20"]


def _write_run(path: Path, rng: np.random.Generator, tags, queries=6, docs=40) -> None:
    """A tie-heavy run; ``tags`` is one tag or a list cycled over the lines (None: no tag)."""
    lines = []
    for q in range(1, queries + 1):
        for d in rng.permutation(docs)[: rng.integers(docs // 2, docs)]:
            tag = tags if isinstance(tags, str) or tags is None else tags[len(lines) % len(tags)]
            fields = [f"q{q}", "Q0", f"d{d}", "0", f"{rng.integers(0, 4)}"]
            lines.append(" ".join(fields + ([tag] if tag else [])) + "\n")
    data = "".join(lines).encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)


@pytest.fixture
def collection(tmp_path):
    """Runs whose names exercise read_runs' naming rules, and qrels with unjudged queries."""
    rng = np.random.default_rng(7)
    specs = {
        "a.txt": "alpha",
        "b.txt.gz": "shared",  # tag shared with c: both named by file
        "c.txt": "shared",
        "d.txt": ["one", "two"],  # two tags: named by file
        "alpha.txt": None,  # no tag; its file name is the tag of a.txt -> alpha-2
        "e.gz": "epsilon",
    }
    paths = []
    for file, tags in specs.items():
        _write_run(tmp_path / file, rng, tags)
        paths.append(tmp_path / file)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(
            f"q{q} 0 d{d} {rng.integers(0, 3)}\n"
            for q in range(1, 6)  # q6 unjudged: a warning per run
            for d in rng.permutation(40)[:15]
        )
    )
    return [str(p) for p in paths], str(qrels)


def _eager_and_streamed(paths, qrels_path, **options):
    qrels = tiecore.read_qrels(qrels_path)
    with warnings.catch_warnings(record=True) as eager_warnings:
        warnings.simplefilter("always")
        eager = tiecore.evaluate(tiecore.read_runs(paths), qrels, MEASURES, **options)
    with warnings.catch_warnings(record=True) as streamed_warnings:
        warnings.simplefilter("always")
        streamed = tiecore.evaluate(paths, qrels, MEASURES, **options)
    assert [str(w.message) for w in streamed_warnings] == [str(w.message) for w in eager_warnings]
    return eager, streamed


@pytest.mark.parametrize(
    "options",
    [
        {"ties": "aware"},
        {"ties": "oblivious"},
        {"ties": "oblivious", "tiebreak": "random", "seed": 3},
        {"ties": "sampled", "samples": 25, "seed": 5},
        {"ties": "aware", "complete": True, "depth": 12},
    ],
)
def test_paths_give_what_read_runs_gives(collection, options) -> None:
    """Names, row order and every value (seeded modes too) as if all runs were loaded."""
    paths, qrels = collection
    eager, streamed = _eager_and_streamed(paths, qrels, per_query=True, **options)
    pd.testing.assert_frame_equal(streamed, eager, check_exact=True)
    assert list(dict.fromkeys(streamed["run"])) == list(tiecore.read_runs(paths))


def test_names_follow_read_runs(collection) -> None:
    paths, _ = collection
    expected = list(tiecore.read_runs(paths))
    assert expected == ["alpha", "b", "c", "d", "alpha-2", "epsilon"]  # the rules, spelled out
    frames = [tiecore.read_run(p) for p in paths]
    tags = [f.attrs["tags"] or None for f in frames]
    assert _parallel.file_names(paths, tags) == expected
    # from first lines only, the multi-tag file d looks like tag "one" (settled once read)
    guessed = [item.name for item in _parallel.run_items(paths)]
    assert guessed == [*expected[:3], "one", *expected[4:]]


def test_iterator_of_paths_corrects_a_wrong_guess(tmp_path) -> None:
    """From an iterator the first file is named by its tag until a later file shares it;
    the seeded run is then evaluated again under its file name, as read_runs names it."""
    rng = np.random.default_rng(1)
    paths = []
    for file, tags in (("x.txt", "same"), ("y.txt", "other"), ("z.txt", "same")):
        _write_run(tmp_path / file, rng, tags)
        paths.append(str(tmp_path / file))
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"q{q} 0 d{d} 1\n" for q in range(1, 7) for d in range(0, 40, 3)))
    qrels = tiecore.read_qrels(qrels_path)
    options = {"ties": "sampled", "samples": 10, "per_query": True}
    eager = tiecore.evaluate(tiecore.read_runs(paths), qrels, MEASURES, **options)
    calls = []
    streamed = tiecore.evaluate(
        iter(paths), qrels, MEASURES, progress=lambda *a: calls.append(a), **options
    )
    pd.testing.assert_frame_equal(streamed, eager, check_exact=True)
    assert list(dict.fromkeys(streamed["run"])) == ["x", "other", "z"]
    assert calls == [(1, None, "same"), (2, None, "other"), (3, None, "z")]  # x re-run quietly


def test_generators_mappings_and_pairs(collection) -> None:
    paths, qrels_path = collection
    qrels = tiecore.read_qrels(qrels_path)
    runs = tiecore.read_runs(paths)
    options = {"ties": "sampled", "samples": 8, "per_query": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = tiecore.evaluate(runs, qrels, MEASURES, **options)
        by_path = dict(zip(runs, paths, strict=True))
        for other in (
            (frame for frame in runs.values()),  # a generator of frames
            by_path,  # a mapping of names to files
            list(by_path.items()),  # (name, file) pairs
            ((name, runs[name]) for name in runs),  # (name, frame) pairs
        ):
            pd.testing.assert_frame_equal(
                tiecore.evaluate(other, qrels, MEASURES, **options), eager, check_exact=True
            )


def test_frames_with_one_name_get_suffixes() -> None:
    run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [1.0, 1.0]})
    run.attrs["name"] = "bm25"
    qrels = pd.DataFrame({"qid": "1", "docno": ["b"], "level": [1]})
    result = tiecore.evaluate([run, run.copy()], qrels, "P@1")
    assert result["run"].tolist() == ["bm25", "bm25-2"]
    assert result["value"].tolist() == [0.5, 0.5]


def test_spread_streams_too(collection) -> None:
    paths, qrels_path = collection
    qrels = tiecore.read_qrels(qrels_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = evaluate_spread(tiecore.read_runs(paths), qrels, MEASURES, per_query=True)
        streamed = evaluate_spread(paths, qrels, MEASURES, per_query=True)
    pd.testing.assert_frame_equal(streamed, eager, check_exact=True)


def test_error_in_a_file_names_the_file(tmp_path) -> None:
    rng = np.random.default_rng(0)
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    _write_run(good, rng, "g")
    bad.write_text("zz Q0 d1 1 1.0 b\n")  # no query of it has judgments
    qrels = pd.DataFrame({"qid": "q1", "docno": ["d1"], "level": [1]})
    with pytest.raises(InputError) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # good.txt's queries q2..q6 have no judgments
        tiecore.evaluate([str(good), str(bad)], qrels, "P@5")
    assert str(caught.value).startswith(f"{bad} (run b): none of its queries has judgments")


def test_a_pipe_is_read_once(tmp_path) -> None:
    """A named pipe (as ``<(zcat run.gz)`` gives) is read when reached, never peeked."""
    rng = np.random.default_rng(2)
    source = tmp_path / "source.txt"
    _write_run(source, rng, "piped")
    qrels = pd.DataFrame({"qid": "q1", "docno": [f"d{i}" for i in range(10)], "level": 1})
    with fed_pipe(tmp_path / "fifo", source.read_bytes()) as fifo, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        piped = tiecore.evaluate([str(fifo)], qrels, MEASURES, ties="sampled", samples=5)
        direct = tiecore.evaluate([str(source)], qrels, MEASURES, ties="sampled", samples=5)
    pd.testing.assert_frame_equal(piped, direct, check_exact=True)


# -------------------------------------------------------------- -m all_trec streams


def _all_trec(capsys, qrels: str, paths: list[str], *options: str) -> str:
    code = cli.main(["eval", qrels, *paths, "-m", "all_trec", *options])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["-q"],
        ["--ties", "oblivious", "-q", "-M", "12", "-l", "2", "-c"],
        ["--ties", "sampled", "--samples", "5", "--seed", "2", "-q"],
        ["--ties", "oblivious", "--format", "csv"],
    ],
)
def test_all_trec_streams_and_prints_what_loading_every_run_prints(
    collection, capsys, monkeypatch, options
) -> None:
    """``-m all_trec`` with run files reads each twice, one at a time (its values, then
    trec_eval's counts): the same bytes as reading every run up front (the former way),
    with read_runs' names (shared tags, two tags, a tag taken as a file name)."""
    paths, qrels = collection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        streamed = _all_trec(capsys, qrels, paths, *options)
        monkeypatch.setattr(cli_eval, "all_trec_inputs", read_inputs)
        eager = _all_trec(capsys, qrels, paths, *options)
    assert streamed == eager
    if "--format" not in options:
        runids = [line.split("\t")[2] for line in streamed.splitlines() if line[:6] == "runid "]
        assert runids == ["alpha", "b", "c", "d", "alpha-2", "epsilon"]


def _count_live_runs(monkeypatch) -> tuple[list[int], list[weakref.ref]]:
    """Spy on tiecore.io.read_run: before each read, how many frames it read are alive."""
    read = tio.read_run
    live: list[int] = []
    frames: list[weakref.ref] = []

    def spy(*args, **kwargs):
        gc.collect()  # a frame kept only by a reference cycle is not held
        live.append(sum(ref() is not None for ref in frames))
        frame = read(*args, **kwargs)
        frames.append(weakref.ref(frame))
        return frame

    monkeypatch.setattr(tio, "read_run", spy)
    monkeypatch.setattr(tio_readers, "read_run", spy)  # what read_runs calls
    return live, frames


def _read_ahead(count: int) -> list[int]:
    """The live runs the spy sees when ``count`` runs are read ahead: none before the first
    read, then the one being evaluated while the next is read."""
    return [0] + [1] * (count - 1)


@pytest.mark.parametrize("api", ["evaluate_spread", "compare", "sampled"])
def test_read_ahead_keeps_errors_in_file_order(tmp_path, api) -> None:
    """With the next run read while this one is evaluated, the first bad file in the
    given order is the one named, whichever of the later ones is read first."""
    good = "1 Q0 a 1 2.0 g\n1 Q0 b 2 1.0 g\n"
    texts = {
        "good.txt": good,
        "twice.txt": "1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n",
        "word.txt": "1 Q0 a 1 2.0 w\n1 Q0 b 2 x w\n",
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["a"], "level": [1]})
    call = {
        "evaluate_spread": lambda runs: evaluate_spread(runs, qrels, "AP"),
        "compare": lambda runs: compare(runs, qrels, "AP", samples=5),
        "sampled": lambda runs: tiecore.evaluate(runs, qrels, "AP", ties="sampled", samples=5),
    }[api]
    for order in (["good.txt", "twice.txt", "word.txt"], ["good.txt", "word.txt", "twice.txt"]):
        with pytest.raises(InputError) as caught:
            call([str(tmp_path / name) for name in order])
        assert Path(caught.value.source).name == order[1]
        assert caught.value.line == 2


def _slow_and_warning(name: str, run: pd.DataFrame) -> tuple[str, int, list]:
    """A map_runs function whose first runs take longest (later ones finish first on
    threads), warning twice per run, and failing on a run named ``bad``."""
    import time

    time.sleep(0.02 * (name < "c"))
    warnings.warn(f"{name}: one", TieCoreWarning, stacklevel=1)
    warnings.warn(f"{name}: two", UserWarning, stacklevel=1)
    if name == "bad":
        raise InputError(f"run {name}", 1, "bad on purpose", "a good run")
    return name, len(run), sorted(run["docno"])[:2]


def test_threads_give_the_loop_s_results_warnings_and_progress(collection) -> None:
    """map_runs on threads: the same results, names (files renamed by a shared tag), held
    warnings in input order and progress in order, as the plain loop."""
    paths, _ = collection
    frames = {"f1": pd.DataFrame({"qid": ["1"], "docno": ["x"], "score": [1.0]})}
    seen = {}
    for threads in (1, 3):
        calls = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            found = _parallel.map_runs(
                _slow_and_warning,
                [*paths, *frames.items()],
                progress=lambda *a, calls=calls: calls.append(a),
                threads=threads,
            )
        said = [(str(w.message), w.category) for w in caught]
        seen[threads] = found, said, calls
    assert seen[3] == seen[1]
    names = [name for name, *_ in seen[1][0]]
    assert names == [*tiecore.read_runs(paths), "f1"]
    assert [message for message, _ in seen[1][1]][:2] == ["alpha: one", "alpha: two"]
    assert [count for count, *_ in seen[1][2]] == list(range(1, len(paths) + 2))


def test_threads_give_the_first_error_in_input_order(tmp_path) -> None:
    """A run's error comes before those of later runs, though a later one (read or
    scored on another thread) failed first, and the run is named by its file."""
    good = "1 Q0 a 1 2.0 {}\n1 Q0 b 2 1.0 {}\n"
    for name in ("a", "bad", "c", "d"):
        (tmp_path / f"{name}.txt").write_text(good.format(name, name))
    (tmp_path / "word.txt").write_text("1 Q0 a 1 x w\n")
    paths = [str(tmp_path / f"{name}.txt") for name in ("a", "bad", "word", "c")]
    for threads in (1, 2, 4):
        with pytest.raises(InputError) as caught, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _parallel.map_runs(_slow_and_warning, paths, threads=threads)
        assert caught.value.source == f"{paths[1]} (run bad)"
    paths = [str(tmp_path / f"{name}.txt") for name in ("a", "c", "word", "bad")]
    with pytest.raises(InputError) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _parallel.map_runs(_slow_and_warning, paths, threads=2)
    assert caught.value.source == paths[2] and caught.value.line == 1


def test_all_trec_holds_one_run_at_a_time(collection, capsys, monkeypatch) -> None:
    """When a run is read, at most the one being evaluated meanwhile is alive (the next
    run is read ahead); reading every run up front (the former way) is caught by the
    same spy."""
    paths, qrels = collection
    live, _ = _count_live_runs(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _all_trec(capsys, qrels, paths, "--ties", "oblivious")
        # each run read once; when it is read, at most the one evaluated meanwhile is
        # alive (none when that one was done before the read started: timing decides)
        assert len(live) == len(paths) and live[0] == 0 and max(live) <= 1, live
        live.clear()
        monkeypatch.setattr(cli_eval, "all_trec_inputs", read_inputs)
        _all_trec(capsys, qrels, paths, "--ties", "oblivious")
    assert live == list(range(len(paths)))


def test_all_trec_reads_a_pipe_once(collection, capsys, tmp_path) -> None:
    """A run that cannot be read twice (a named pipe) makes -m all_trec read every run
    once, up front: the same listing as from the file."""
    paths, qrels = collection
    data = Path(paths[0]).read_bytes()
    with fed_pipe(tmp_path / "fifo", data) as fifo, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        piped = _all_trec(capsys, qrels, [str(fifo), *paths[1:]], "--ties", "oblivious")
        direct = _all_trec(capsys, qrels, paths, "--ties", "oblivious")
    assert piped == direct  # the pipe's run is named by its tag, as its file is


# ------------------------------------------------------------------------- memory

_PEAK = """
import sys
from tiecore.cli import main
import tiecore
mode, qrels, files = sys.argv[1], sys.argv[2], sys.argv[3:]
if mode == "cli":
    code = main(["eval", qrels, *files, "-m", "P@10,AP,nDCG@10", "--format", "csv", "-q"])
    assert code == 0
else:  # the whole collection in memory first: what streaming avoids
    runs = tiecore.read_runs(files)
    tiecore.evaluate(runs, tiecore.read_qrels(qrels), ["P@10", "AP", "nDCG@10"], per_query=True)
# VmHWM, not ru_maxrss: a child's ru_maxrss starts at the parent's peak (Linux keeps the
# pre-exec high-water mark), so under a large pytest process it would measure pytest.
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(int(hwm[0].split()[1]), file=sys.stderr)
"""


def _peak_kb(mode: str, qrels: Path, files: list[Path]) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, mode, str(qrels), *map(str, files)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "ignore"},
        cwd=REPO,
        check=True,
    )
    return int(done.stderr.decode().strip().splitlines()[-1])


def test_peak_memory_of_many_runs_is_that_of_one(tmp_path) -> None:
    """``tiecore eval`` on 40 runs of 200k rows peaks within 1.5x of one run; loading the
    collection first (read_runs) does not, so the measurement can tell them apart."""
    rng = np.random.default_rng(0)
    queries, docs = 200, 1000
    qid = np.repeat(np.arange(1, queries + 1), docs)
    doc = np.tile(np.arange(docs), queries)
    score = rng.integers(0, 20, queries * docs)
    first = tmp_path / "run0.txt"
    first.write_text(
        "".join(f"{q} Q0 d{d} 0 {s} gen\n" for q, d, s in zip(qid, doc, score, strict=True))
    )
    files = [first]
    for i in range(1, 40):
        files.append(tmp_path / f"run{i}.txt")
        shutil.copy(first, files[-1])
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 d{d} {d % 3}\n" for q in range(1, queries + 1) for d in range(0, 400, 8))
    )
    one = _peak_kb("cli", qrels, files[:1])
    many = _peak_kb("cli", qrels, files)
    eager = _peak_kb("eager", qrels, files)
    assert many <= 1.5 * one, (one, many)
    assert eager > 1.5 * one, (one, eager)


def test_query_partitions_name_rows_of_the_whole_run() -> None:
    """A run split by query (as on a cluster) keeps its row labels, so that an error in a
    partition names the row of the whole run, as evaluating it whole does."""
    run = pd.DataFrame(
        {
            "qid": ["1", "1", "2", "2", "3", "3", "3"],
            "docno": ["a", "b", "a", "b", "a", "b", "a"],
            "score": [3.0, 2, 1, 1, 5, 4, 3],
        }
    )
    qrels = pd.DataFrame({"qid": ["1", "2", "3"], "docno": ["a", "a", "b"], "level": [1, 1, 1]})
    pieces = _parallel.split_by_query(run, 3)
    assert [piece.index.tolist() for piece in pieces] == [[0, 1, 2, 3], [4, 5, 6]]
    with pytest.raises(InputError) as whole:
        tiecore.evaluate(run, qrels, "AP")
    with pytest.raises(InputError) as part:
        tiecore.evaluate({"run": pieces[-1]}, qrels, "AP")
    assert part.value.problem == whole.value.problem
    assert "row 6: docno 'a' appears twice for query '3' (first at row 4)" in part.value.problem


# ------------------------------------------------------------------------- compare


def test_compare_of_paths_is_compare_of_read_runs(collection) -> None:
    """compare reads run files one at a time, names them as read_runs does (d, guessed
    "one" from its first line, is scored as "d") and gives every number as if all runs
    were loaded first, from a list or an iterator."""
    paths, qrels_path = collection
    qrels = tiecore.read_qrels(qrels_path)
    options = {"samples": 30, "seed": 4, "n_resamples": 200, "n_bootstrap": 200}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = compare(tiecore.read_runs(paths), qrels, "AP", **options)
        calls = []
        streamed = compare(paths, qrels, "AP", progress=lambda *a: calls.append(a), **options)
        from_iterator = compare(iter(paths), qrels, "AP", baseline="alpha-2", **options)
    for name in ("scores", "sample_scores", "per_query", "pairs", "agreement", "systems"):
        pd.testing.assert_frame_equal(getattr(streamed, name), getattr(eager, name), obj=name)
        pd.testing.assert_frame_equal(getattr(from_iterator, name), getattr(eager, name))
    assert list(streamed.scores.index) == list(tiecore.read_runs(paths))
    total = len(paths) + 2
    assert calls[-2:] == [(total - 1, total, "pairs"), (total, total, "agreement")]
    assert from_iterator.help_hurt is not None and "alpha-2" not in from_iterator.help_hurt.index


def test_compare_refuses_a_baseline_that_no_run_is_named(collection) -> None:
    paths, qrels_path = collection
    qrels = tiecore.read_qrels(qrels_path)
    with pytest.raises(InputError, match="'beta' is not one of the runs"):
        compare(paths, qrels, "AP", baseline="beta")
    with (
        pytest.raises(InputError, match="'beta' is not one of the runs"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        compare(iter(paths), qrels, "AP", baseline="beta", samples=10)
    with pytest.raises(ValueError, match="at least two runs"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(iter(paths[:1]), qrels, "AP", samples=10)


def test_compare_cli_holds_a_few_runs_at_a_time(collection, capsys, monkeypatch) -> None:
    """``tiecore compare`` keeps no run it has scored: while a run is read, only those
    being scored on the other threads are alive, however many runs there are; reading
    every run up front (the former way) is caught by the same spy."""
    paths, qrels = collection
    live, _ = _count_live_runs(monkeypatch)
    line = ["compare", qrels, *paths, "-m", "AP", "--samples", "20", "--format", "json"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli.main(line) == 0
        streamed = capsys.readouterr().out
        assert live[0] == 0 and max(live) <= max(_parallel.THREADS - 1, 1)
        live.clear()
        monkeypatch.setattr(cli_compare, "eval_inputs", read_inputs)
        assert cli.main(line) == 0
    assert live == list(range(len(paths)))
    assert capsys.readouterr().out == streamed
