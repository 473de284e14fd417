"""Evaluation on a real dask LocalCluster (2 worker processes) equals the local one, bit for bit."""

from __future__ import annotations

import gzip
import subprocess
import sys
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tiecore
from tiecore.compare import compare
from tiecore.distributed import connect, read_parquet_runs, write_parquet_runs
from tiecore.errors import InputError
from tiecore.evaluation import parallel as _parallel
from tiecore.io.fastpath import file_rows
from tiecore.io.parquet_parts import ParquetRun
from tiecore.report.comparison import format_comparison
from tiecore.spread import evaluate_spread

REPO = Path(__file__).resolve().parents[2]
MEASURES = ["P@5", "AP", "nDCG@10", "RR", "Bpref", "R@20", "Success@3"]


@pytest.fixture(scope="module")
def client():
    with connect("local:2") as dask_client:
        dask_client.start()  # started: small collections too run on it
        yield dask_client


def _run(rng: np.random.Generator, name: str, queries: int = 30, docs: int = 60) -> pd.DataFrame:
    """A tie-heavy run over q1..q{queries}; rows of a query scattered over the file."""
    qid = np.repeat([f"q{q}" for q in range(1, queries + 1)], docs)
    docno = np.tile([f"d{d}" for d in range(docs)], queries)
    keep = rng.random(qid.size) < 0.8
    order = rng.permutation(int(keep.sum()))
    run = pd.DataFrame(
        {
            "qid": qid[keep][order],
            "docno": docno[keep][order],
            "score": rng.integers(0, 5, int(keep.sum())).astype(float),
        }
    )
    run.attrs["name"] = name
    return run


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    runs = {name: _run(rng, name) for name in ("bm25", "dense", "counts")}
    qrels = pd.DataFrame(
        [
            (f"q{q}", f"d{d}", int(rng.integers(0, 3)))
            for q in range(1, 26)  # q26..q30 have no judgments: a warning per run
            for d in rng.permutation(60)[:20]
        ],
        columns=["qid", "docno", "level"],
    )
    return runs, qrels


def _both(call, *, client, **options):
    """(local result, cluster result) and their warnings, which must be the same."""
    out, said = [], []
    for target in (None, client):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out.append(call(client=target, **options))
        said.append(sorted(str(w.message) for w in caught))
    assert said[1] == said[0]
    return out


@pytest.mark.parametrize(
    "options",
    [
        {"ties": "aware", "per_query": True},
        {"ties": "oblivious", "per_query": True, "complete": True},
        {"ties": "oblivious", "tiebreak": "random", "seed": 4},
        {"ties": "sampled", "samples": 30, "seed": 9, "per_query": True, "depth": 40},
    ],
)
def test_runs_as_tasks_equal_local(client, data, options) -> None:
    runs, qrels = data
    local, remote = _both(
        lambda **kw: tiecore.evaluate(runs, qrels, MEASURES, **kw), client=client, **options
    )
    pd.testing.assert_frame_equal(remote, local, check_exact=True)


def _by_query(run: pd.DataFrame) -> pd.DataFrame:
    """``run``'s rows by query number (q1, q2, ... q30), file order inside a query."""
    number = run["qid"].str[1:].astype(int).to_numpy()
    return run.iloc[np.argsort(number, kind="stable")].reset_index(drop=True)


@pytest.mark.parametrize("ties", ["aware", "sampled", "random"])
def test_a_run_split_by_query_equals_it_whole(client, data, monkeypatch, ties) -> None:
    """One run cut into query partitions (one without any judged query) on the cluster."""
    runs, qrels = data
    run = _by_query(runs["bm25"])
    run.attrs["name"] = "bm25"
    monkeypatch.setattr(_parallel, "SPLIT_ROWS", -(-len(run) // 6))  # 6 partitions
    pieces = _parallel.split_by_query(run, 6)
    assert len(pieces) == 6 and sum(map(len, pieces)) == len(run)
    assert not set(pieces[0]["qid"]) & set(pieces[1]["qid"])
    assert set(pieces[-1]["qid"]) == {f"q{q}" for q in range(26, 31)}  # nothing judged
    options = {"ties": ties, "samples": 20, "per_query": True, "complete": ties == "aware"}
    if ties == "random":  # the oblivious random tie-break: such a run stays whole
        options.update(ties="oblivious", tiebreak="random", seed=5)
    local, remote = _both(
        lambda **kw: tiecore.evaluate({"bm25": run, "dense": runs["dense"]}, qrels, MEASURES, **kw),
        client=client,
        **options,
    )
    pd.testing.assert_frame_equal(remote, local, check_exact=True)


def test_spread_and_compare_of_a_run_split_by_query_equal_it_whole(client, data, monkeypatch):
    """evaluate_spread and compare cut a big run into query partitions as evaluate does
    (one of them without any judged query): the same values and warnings, bit for bit."""
    runs, qrels = data
    run = _by_query(runs["bm25"])
    both = {"bm25": run, "dense": runs["dense"]}
    monkeypatch.setattr(_parallel, "SPLIT_ROWS", -(-len(run) // 6))  # 6 partitions each

    def spread(**options):
        return evaluate_spread(both, qrels, ["AP", "P@5", "nDCG@10"], per_query=True, **options)

    def compared(**options):
        return format_comparison(compare(both, qrels, "AP", samples=20, seed=3, **options), "json")

    def counted(call, client, **options):
        """(result, tasks on the cluster): 0 tasks locally."""
        if client is None:
            return call(**options), 0
        return _cluster_tasks(client, lambda: call(client=client, **options))

    for call in (spread, compared):
        for complete in (False, True):
            local, remote = _both(partial(counted, call), client=client, complete=complete)
            assert remote[1] >= 12  # the partitions of both runs went as tasks of their own
            if call is spread:
                pd.testing.assert_frame_equal(remote[0], local[0], check_exact=True)
            else:
                assert remote[0] == local[0]


@pytest.fixture(scope="module")
def many(data):
    """20 small runs (several to a task on the cluster); the 8th big enough to be split."""
    _, qrels = data
    rng = np.random.default_rng(5)
    runs = {f"r{i:02d}": _run(rng, f"r{i:02d}", docs=30 if i != 7 else 120) for i in range(20)}
    return runs, qrels


def _cluster_tasks(client, call) -> tuple[object, int]:
    """``call()``'s result and how many tasks it ran on the cluster."""
    from distributed import get_task_stream

    with get_task_stream(client) as stream:
        out = call()
    return out, sum(1 for task in stream.data if task["key"].startswith("_remote"))


@pytest.mark.parametrize(
    "options",
    [
        {"ties": "aware", "per_query": True},
        {"ties": "sampled", "samples": 25, "seed": 3, "per_query": True},
        {"ties": "oblivious", "tiebreak": "random", "seed": 2},
    ],
)
def test_runs_batched_in_tasks_equal_local(client, many, monkeypatch, options) -> None:
    """Several runs to a task (fewer tasks than runs), one run in query partitions."""
    runs, qrels = many
    monkeypatch.setattr(_parallel, "SPLIT_ROWS", -(-len(runs["r07"]) // 3))
    local = tiecore.evaluate(runs, qrels, MEASURES, **options)
    remote, tasks = _cluster_tasks(
        client, lambda: tiecore.evaluate(runs, qrels, MEASURES, client=client, **options)
    )
    pd.testing.assert_frame_equal(remote, local, check_exact=True)
    split = options.get("tiebreak") != "random"  # the random tie-break never splits a run
    assert 4 <= tasks < len(runs) + (2 if split else 0)
    spread_local = evaluate_spread(runs, qrels, ["AP", "P@5"], per_query=True)
    spread_remote = evaluate_spread(runs, qrels, ["AP", "P@5"], per_query=True, client=client)
    pd.testing.assert_frame_equal(spread_remote, spread_local, check_exact=True)


def test_compare_batched_equals_local(client, many) -> None:
    runs, qrels = many
    chosen = {name: runs[name] for name in list(runs)[:9]}
    local = compare(chosen, qrels, "AP", samples=15, seed=4)
    remote, tasks = _cluster_tasks(
        client, lambda: compare(chosen, qrels, "AP", samples=15, seed=4, client=client)
    )
    assert format_comparison(remote, "json") == format_comparison(local, "json")
    assert tasks < len(chosen)


def test_chunks_shrink_to_single_runs() -> None:
    """Guided chunks: in order, each run once, sizes not growing, the last ones single
    runs, none above CHUNK_ROWS rows, a query partition alone."""
    item = _parallel.Item("x", None)
    weights = [1000] * 50 + [_parallel.CHUNK_ROWS] + [40_000] * 30
    sent = [(_parallel._Task(i, item), None, w) for i, w in enumerate(weights)]
    sent[50] = (_parallel._Task(50, item, 0, 2), None, _parallel.CHUNK_ROWS)  # a partition
    chunks = _parallel._chunks(sent, 2)
    flat = [task.index for chunk in chunks for task, _, _ in chunk]
    assert flat == list(range(len(weights)))
    assert [len(c) for c in chunks if c[0][0].index == 50] == [1]
    assert all(sum(w for _, _, w in c) <= _parallel.CHUNK_ROWS for c in chunks)
    after = [len(c) for c in chunks if c[0][0].index > 50]
    assert after == sorted(after, reverse=True) and after[-3:] == [1, 1, 1]
    assert len(chunks[0]) > 5 and len(chunks) < len(weights) / 2


def test_largest_runs_go_first_and_gzip_files_weigh_their_rows(tmp_path) -> None:
    """Tasks start heaviest first (equal weights in input order), the small ones after
    them in input order, each run once; a gzip file weighs its uncompressed bytes (the
    trailer's size), not its compressed ones."""
    item = _parallel.Item("x", None)
    weights = [5, 40_000, 7, 40_000, 300_000, 1, 7]
    sent = [(_parallel._Task(i, item), None, w) for i, w in enumerate(weights)]
    order = [task.index for task, _, _ in _parallel.largest_first(sent)]
    assert order == [4, 1, 3, 0, 2, 5, 6]
    chunks = _parallel._chunks(_parallel.largest_first(sent), 2)
    assert sorted(task.index for chunk in chunks for task, _, _ in chunk) == list(range(7))
    text = "".join(f"1 Q0 d{i} {i} 1.0 tag\n" for i in range(5000)).encode()
    plain, packed = tmp_path / "run.txt", tmp_path / "run.txt.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    assert packed.stat().st_size < len(text) / 3  # repetitive: compresses well
    assert file_rows(packed) == file_rows(plain) == len(text) // 40
    assert file_rows(tmp_path / "missing.gz", _parallel.CHUNK_ROWS) == _parallel.CHUNK_ROWS


def test_parquet_partitions_read_by_the_workers(client, data, tmp_path, monkeypatch) -> None:
    runs, qrels = data
    written = write_parquet_runs(runs, tmp_path, row_group_rows=250)
    assert sorted(written) == sorted(runs)
    found = read_parquet_runs(tmp_path)
    assert list(found) == sorted(runs)
    for name, run in found.items():  # query-aligned parts; each query's rows in file order
        assert len(run.parts) > 3 and run.rows == len(runs[name])
        back = run.read()
        original = runs[name]
        for qid in ("q1", "q17"):
            assert back.loc[back["qid"] == qid, "docno"].tolist() == (
                original.loc[original["qid"] == qid, "docno"].tolist()
            )
        seen: set[str] = set()
        for part in run.parts:
            qids = set(part.read()["qid"])
            assert not qids & seen
            seen |= qids
    monkeypatch.setattr(_parallel, "SPLIT_ROWS", 400)
    options = {"ties": "sampled", "samples": 15, "per_query": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = tiecore.evaluate(runs, qrels, MEASURES, **options)
        remote = tiecore.evaluate(found, qrels, MEASURES, client=client, **options)
        by_path = tiecore.evaluate([str(p) for p in written.values()], qrels, MEASURES, **options)
    expected = local.set_index("run").loc[sorted(runs)].reset_index()
    pd.testing.assert_frame_equal(remote, expected, check_exact=True)
    pd.testing.assert_frame_equal(by_path, local, check_exact=True)  # in the order written


def test_parquet_without_sorted_queries_is_one_part(tmp_path) -> None:
    """Row groups whose qid ranges overlap cannot be cut: the run is one partition."""
    table = pa.table({"qid": ["b", "a", "b", "a"], "docno": list("wxyz"), "score": [1.0] * 4})
    pq.write_table(table, tmp_path / "mixed.parquet", row_group_size=2)
    run = ParquetRun.of(tmp_path / "mixed.parquet")
    assert run.name == "mixed" and len(run.parts) == 1 and run.rows == 4
    (tmp_path / "run=hive").mkdir()
    pq.write_table(table.slice(0, 1), tmp_path / "run=hive" / "part-0.parquet")
    pq.write_table(table.slice(1, 1), tmp_path / "run=hive" / "part-1.parquet")
    found = read_parquet_runs(tmp_path)
    assert list(found) == ["mixed", "hive"]
    assert [len(p.pieces) for p in found["hive"].parts] == [2]  # b then a: no cut
    pq.write_table(pa.table({"qid": ["1"]}), tmp_path / "bad.parquet")
    with pytest.raises(InputError, match="missing columns"):
        read_parquet_runs(tmp_path / "bad.parquet")


def test_parquet_errors_name_the_file_and_the_row_of_the_whole_run(
    client, tmp_path, monkeypatch
) -> None:
    """A broken Parquet file, and a bad row in any partition, locally and on the cluster."""
    qrels = pd.DataFrame({"qid": ["q9"], "docno": ["a"], "level": [1]})
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    for runs in ([str(tmp_path / "broken.parquet")], {"b": str(tmp_path / "broken.parquet")}):
        with pytest.raises(InputError, match=r"broken.parquet: cannot read Parquet \("):
            tiecore.evaluate(runs, qrels, "AP")
    qid = np.repeat([f"q{q}" for q in range(10)], 4)
    docno = np.tile(list("abcd"), 10)
    docno[38] = "b"  # q9's second "b": row 38 of the run, in its last row group
    table = pa.table({"qid": qid, "docno": docno, "score": np.arange(40.0)})
    path = tmp_path / "dup.parquet"
    pq.write_table(table, path, row_group_size=8)
    run = ParquetRun.of(path)
    assert [p.read().index[0] for p in run.parts] == [0, 8, 16, 24, 32]
    assert [p.read().index[0] for p in run.partitions(14)] == [0, 16, 32]
    expected = (
        rf"^{path} \(run dup\): row 38: docno 'b' appears twice for query 'q9' \(first at row 37\)"
    )
    with pytest.raises(InputError, match=expected):
        tiecore.evaluate([str(path)], qrels, "AP")
    monkeypatch.setattr(_parallel, "SPLIT_ROWS", 8)  # runs above 8 rows in query partitions
    with pytest.raises(InputError, match=expected):
        tiecore.evaluate([run], qrels, "AP", client=client)


def test_spread_and_compare_on_the_cluster(client, data) -> None:
    runs, qrels = data
    local, remote = _both(
        lambda **kw: evaluate_spread(runs, qrels, MEASURES, per_query=True, **kw), client=client
    )
    pd.testing.assert_frame_equal(remote, local, check_exact=True)
    pair = {name: runs[name] for name in ("bm25", "dense")}
    local, remote = _both(
        lambda **kw: compare(pair, qrels, "AP", samples=20, seed=1, **kw), client=client
    )
    assert format_comparison(remote, "json") == format_comparison(local, "json")


def test_map_runs_keeps_the_order_and_reports_progress(client, data) -> None:
    runs, _ = data
    calls = []
    got = _parallel.map_runs(
        lambda name, run: (name, len(run)), runs, client=client, progress=lambda *a: calls.append(a)
    )
    assert got == [(name, len(run)) for name, run in runs.items()]
    assert sorted(c[0] for c in calls) == [1, 2, 3] and {c[1] for c in calls} == {3}
    many = [(f"r{i}", runs["bm25"].iloc[: 10 + i]) for i in range(9)]  # an iterator: in flight
    got = _parallel.map_runs(lambda name, run: (name, len(run)), iter(many), client=client)
    assert got == [(name, len(run)) for name, run in many]


def test_a_worker_error_names_the_file(client, data, tmp_path) -> None:
    _, qrels = data
    bad = tmp_path / "bad.txt"
    bad.write_text("zz Q0 d1 1 1.0 nothing\n")
    with pytest.raises(InputError) as caught:
        tiecore.evaluate([str(bad)], qrels, "AP", client=client)
    assert str(caught.value).startswith(f"{bad} (run nothing): none of its queries")


def test_a_named_pipe_keeps_its_tag_on_the_cluster(client, data, tmp_path) -> None:
    """A pipe (``<(zcat run.gz)``) is read by the client and its frame sent to a worker:
    named by its tag there too, as locally, not by the pipe's file name."""
    from named_pipes import fed_pipe

    runs, qrels = data
    text = "".join(f"{q} Q0 {d} 0 {s} bm25\n" for q, d, s in runs["bm25"].itertuples(False))
    found = []
    for target in (None, client):
        with fed_pipe(tmp_path / f"pipe{len(found)}", text.encode()) as pipe:
            found.append(tiecore.evaluate([str(pipe)], qrels, "AP", client=target))
    assert found[0]["run"].tolist() == ["bm25"]
    pd.testing.assert_frame_equal(found[1], found[0], check_exact=True)


def test_cli_dask_address_gives_the_same_output(client, data, tmp_path) -> None:
    runs, qrels = data
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {lv}\n" for q, d, lv in qrels.itertuples(False)))
    files = []
    for name, run in runs.items():
        files.append(tmp_path / f"{name}.txt")
        files[-1].write_text(
            "".join(f"{q} Q0 {d} 0 {s} {name}\n" for q, d, s in run.itertuples(False))
        )
    argv = [sys.executable, "-m", "tiecore", "eval", str(qrels_path), *map(str, files)]
    argv += ["-q", "--format", "csv", "--ties", "sampled", "--samples", "12", "-m", "AP,P@5"]
    local = subprocess.run(argv, capture_output=True, cwd=REPO, check=True)
    address = client.scheduler.address
    remote = subprocess.run([*argv, "--dask", address], capture_output=True, cwd=REPO, check=True)
    assert remote.stdout == local.stdout and local.stdout.count(b"\n") > 100
    assert remote.stderr == local.stderr


def _worker_settings() -> dict:
    import os

    import dask
    import pyarrow

    return {
        "trim": os.environ.get("MALLOC_TRIM_THRESHOLD_"),
        "omp": os.environ.get("OMP_NUM_THREADS"),
        "arrow": pyarrow.cpu_count(),
        "profile": dask.config.get("distributed.worker.profile.enabled"),
        "pool": pyarrow.default_memory_pool().backend_name,
    }


def test_local_workers_are_single_threaded_without_malloc_trim(client) -> None:
    """local:N: one thread per worker, numpy and pyarrow single-threaded, dask's
    MALLOC_TRIM_THRESHOLD_ unset (tiecore.io.allocators sets glibc's thresholds), no
    statistical profiler, and the command line's arrow pool (jemalloc where built)."""
    assert set(client.nthreads().values()) == {1} and len(client.nthreads()) == 2
    settings = list(client.run(_worker_settings).values())
    try:
        pool = pa.jemalloc_memory_pool().backend_name
    except NotImplementedError:
        pool = pa.default_memory_pool().backend_name
    expected = {"trim": None, "omp": "1", "arrow": 1, "profile": False, "pool": pool}
    assert settings == [expected, expected]


def _imported() -> bool:
    return "tiecore.evaluation.core" in sys.modules and "tiecore.io.trec" in sys.modules


def test_local_workers_import_tiecore_before_any_task() -> None:
    """local:N preloads tiecore in every worker as it starts (none without the preload)."""
    from distributed import Client

    from tiecore.distributed import local_cluster

    with connect("local:1") as fresh:
        assert list(fresh.run(_imported).values()) == [True]  # no task has run
    with local_cluster(1, preload=[]) as cluster, Client(cluster) as bare:
        assert list(bare.run(_imported).values()) == [False]


def test_a_running_cluster_gets_the_plugin_once_and_new_workers_too() -> None:
    """connect(ADDRESS) registers the warm-up plugin (again: a no-op); workers that join
    later import tiecore too."""
    from distributed import Client

    from tiecore.distributed import PLUGIN, local_cluster

    def plugins(dask_scheduler) -> list[str]:
        return list(dask_scheduler.worker_plugins)

    with local_cluster(1, preload=[]) as cluster, Client(cluster) as watch:
        for _ in range(2):
            with connect(cluster.scheduler_address) as remote:
                assert list(remote.run(_imported).values()) == [True]
        assert watch.run_on_scheduler(plugins).count(PLUGIN) == 1
        cluster.scale(2)
        watch.wait_for_workers(2)
        assert list(watch.run(_imported).values()) == [True, True]


def test_a_small_collection_on_local_n_is_evaluated_locally(data, capsys) -> None:
    """Too few rows for local:2 to pay off: a one-line note, the cluster never starts,
    the values are the local ones."""
    runs, qrels = data
    local = tiecore.evaluate(runs, qrels, MEASURES)
    assert capsys.readouterr().err == ""
    with connect("local:2") as lazy:
        found = tiecore.evaluate(runs, qrels, MEASURES, client=lazy)
        assert not lazy.started
    pd.testing.assert_frame_equal(found, local, check_exact=True)
    note = capsys.readouterr().err
    assert note.startswith("tiecore: note: local:2 on ") and note.count("\n") == 1
    assert f"{sum(map(len, runs.values())):,} rows evaluated locally" in note


def test_when_local_n_pays_off() -> None:
    """The break-even of a one-off local:N: never when its workers share one core,
    later the costlier the start."""
    from tiecore.distributed import least_rows, pays_off

    assert least_rows(2, 1) is None and least_rows(1, 16) is None
    assert 1e6 < least_rows(4, 16) == least_rows(4, 4) < least_rows(2, 2) < least_rows(4, 2)
    assert not pays_off(10_000, 16, cores=16) and pays_off(10**9, 4, cores=4)


def test_a_command_line_may_decline_local_n_without_dask_or_pandas(tmp_path) -> None:
    """local_declines: from the files' sizes, before dask or pandas is imported; only
    for local:N."""
    from tiecore.distributed import local_declines

    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 1.0 r\n" * 100)
    code = (
        "import sys; from tiecore.distributed import local_declines; "
        f"print(local_declines('local:2', [{str(run)!r}]), "
        "'pandas' in sys.modules, 'distributed' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout == "True False False\n"
    assert done.stderr.startswith("tiecore: note: local:2 on ") and done.stderr.count("\n") == 1
    assert "; 40 rows evaluated locally" in done.stderr  # 1,600 bytes / 40
    assert not local_declines(None, [run]) and not local_declines("tcp://host:8786", [run])


def test_connect_refuses_a_bad_local_spec() -> None:
    with pytest.raises(ValueError, match="local:N"), connect("local:zero"):
        pass


def test_cli_dask_errors_are_one_line(tmp_path) -> None:
    """A bad --dask value, or dask missing, ends with one line and status 2."""
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("1 Q0 d1 1 1.0 r\n")
    qrels.write_text("1 0 d1 1\n")
    start = "import sys; from tiecore.cli import main; "
    argv = f"['eval', {str(qrels)!r}, {str(run)!r}, '--dask', SPEC]"
    cases = {
        "local:0": (start, "argument --dask: 'local:0' is not valid (expected local:N with N >= 1"),
        "local:1": (
            "import sys; sys.modules['distributed'] = None; from tiecore.cli import main; ",
            'dask is not installed: pip install "dask[distributed]"',
        ),
    }
    for spec, (prefix, message) in cases.items():
        code = prefix + f"sys.exit(main({argv.replace('SPEC', repr(spec))}))"
        command = [sys.executable, "-c", code]
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith("tiecore: error: ") and message in done.stderr
        assert done.stderr.count("\n") == 1


def test_cli_bad_run_on_local_workers_is_one_line(data, tmp_path) -> None:
    """A bad line in one of many runs on ``--dask local:2``: the error of that file and
    line, and nothing else (no worker log of a failed task, none of the tasks that the
    shutdown cancels)."""
    runs, qrels = data
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {lv}\n" for q, d, lv in qrels.itertuples(False)))
    rows = list(runs["bm25"].itertuples(False))
    lines = [f"{q} Q0 {d}-{c} 0 {s} r\n" for c in range(40) for q, d, s in rows]
    files = []
    for k in range(12):
        files.append(tmp_path / f"run{k}.txt")
        files[-1].write_text("".join(lines))
    bad = tmp_path / "bad.txt"
    bad.write_text("".join([*lines[:5], "q1 Q0 dx 0 high r\n", *lines[5:]]))
    argv = ["eval", str(qrels_path), str(bad), *map(str, files), "--dask", "local:2"]
    slow = "import tiecore.distributed as d; d.ROW_SECONDS = 1.0; "  # the cluster pays off
    code = f"import sys; {slow}from tiecore.cli import main; sys.exit(main({argv!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    expected = f"tiecore: error: {bad}, line 6: score 'high' is not a number"
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(expected) and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("samples", [7, 3000])  # one batch of draws, and several
def test_sampled_values_do_not_depend_on_the_split(data, samples) -> None:
    """Without a cluster: a query's sampled values are the same whichever queries share
    its run (the draws depend on seed, run, query and rank only)."""
    runs, qrels = data
    run = runs["counts"]
    options = {"ties": "sampled", "samples": samples, "seed": 2, "per_query": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = tiecore.evaluate({"r": run}, qrels, ["AP", "P@5"], **options)
        parts = [
            tiecore.evaluate({"r": piece}, qrels, ["AP", "P@5"], **options)
            for piece in _parallel.split_by_query(run, 4)
            if set(piece["qid"]) & set(qrels["qid"])
        ]
    rows = pd.concat([p[p["qid"].notna()] for p in parts]).set_index(["qid", "measure"])
    expected = whole[whole["qid"].notna()].set_index(["qid", "measure"]).loc[rows.index]
    pd.testing.assert_frame_equal(rows, expected, check_exact=True)


def test_cli_declined_local_cluster_runs_the_local_path(data, tmp_path) -> None:
    """``--dask local:2`` on files too small to pay off: the note, then the very output
    of the plain command (the pandas-free path: no cluster is started, no pandas loaded)."""
    runs, qrels = data
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {lv}\n" for q, d, lv in qrels.itertuples(False)))
    run_path = tmp_path / "run.txt"
    rows = runs["bm25"].itertuples(False)
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, d, s in rows))
    argv = ["eval", str(qrels_path), str(run_path), "-m", "AP,P@5"]
    code = (
        "import sys; from tiecore.cli import main; code = main(sys.argv[1:]); "
        "assert 'pandas' not in sys.modules and 'distributed' not in sys.modules; sys.exit(code)"
    )
    plain = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    argv += ["--dask", "local:2"]
    dask = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    assert (plain.returncode, dask.returncode) == (0, 0), dask.stderr
    assert dask.stdout == plain.stdout
    note, _, rest = dask.stderr.partition("\n")
    assert note.startswith("tiecore: note: local:2 on ") and rest == plain.stderr
