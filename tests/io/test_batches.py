"""A run file in batches of whole queries (:mod:`tiecore.io.batches`): together the
batches are the whole read, each query lies in one batch, and what only the whole
read can settle raises :class:`NotBatched`."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiecore.io import batches, trec


def _columns(runs: list[trec.RunColumns]) -> dict[str, list]:
    return {
        key: [value for run in runs for value in getattr(run, key).to_pylist()]
        for key in ("qid", "docno", "score")
    }


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "run"
    path.write_text("".join(lines), newline="")
    return path


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=25),
    st.integers(20, 400),
    st.sampled_from([" ", "  ", "\t", " \t "]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_batches_are_the_whole_read_in_whole_queries(tmp_path_factory, sizes, size, gap, end):
    lines = [
        gap.join([f"q{q}", "Q0", f"d{d}", str(d), f"{(q * d) % 3}.5", f"t{q % 2}"]) + end
        for q, n in enumerate(sizes)
        for d in range(n)
    ]
    path = _write(tmp_path_factory.mktemp("b"), lines)
    reader = batches.run_batches(path, size)
    parts = list(reader)
    whole = trec.read_run_columns(path)
    assert _columns(parts) == _columns([whole])
    assert reader.tags == whole.tags
    qids = [set(part.qid.to_pylist()) for part in parts]
    assert sum(map(len, qids)) == len(set().union(*qids))  # each query in one batch


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        (["q1 Q0 a 1 1.0 t\n", "q2 Q0 b 1 1.0 t\n"] * 3, "a query in two stretches"),
        (["q1 Q0 a 1 1.0 t\n"] * 2, "a duplicate"),
        (["q1 Q0 a 1 1.0 t\n", "q2 Q0 b 1 x t\n"], "a bad score"),
        (["q1 Q0 a 1 1.0 t\n", "# note\n", "q2 Q0 b 1 1.0 t\n"], "a comment"),
        (["q1 Q0 a 1 1.0 t\n", "q3 Q0 c 1 1.0\n"], "fewer fields"),
        (["q1 Q0 a 1 1.0 t\n", "q2 Q0 b\x00 1 1.0 t\n"], "a NUL byte"),
        (["q1 Q0 a 1 1.0 t\n", "q2 Q0 b\xff 1 1.0 t\n"], "not UTF-8"),
    ],
)
def test_what_the_whole_read_settles_is_not_batched(tmp_path, lines, why) -> None:
    path = tmp_path / "run"
    path.write_bytes("".join(lines).encode("latin-1"))
    with pytest.raises(batches.NotBatched):
        list(batches.run_batches(path, 17))


def test_batchable_files(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(batches.BATCH_ENV, "10")
    plain, small, gz = tmp_path / "plain", tmp_path / "small", tmp_path / "gz"
    plain.write_text("q1 Q0 a 1 1.0 t\n" * 3)
    small.write_text("q1 Q0 a 1 1.0 t\n")
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    found = [batches.batchable(p) for p in (plain, small, gz, tmp_path)]
    assert found == [True, False, True, False]


@pytest.mark.parametrize("size", [17, 100, 1 << 20])
def test_gzip_batches_are_the_whole_read(tmp_path, size) -> None:
    lines = [f"q{q} Q0 d{d} {d} {d % 3}.5 t\n" for q in range(30) for d in range(q % 7 + 1)]
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress("".join(lines).encode()))
    assert _columns(list(batches.run_batches(path, size))) == _columns(
        [trec.read_run_columns(path)]
    )


@pytest.mark.parametrize("how", ["two members", "cut short", "bad data", "bytes after"])
def test_gzip_the_whole_read_settles_is_not_batched(tmp_path, how) -> None:
    one = gzip.compress(b"".join(b"q%d Q0 d 1 1.0 t\n" % q for q in range(50)))
    data = {
        "two members": one + gzip.compress(b"q99 Q0 d 1 1.0 t\n"),
        "cut short": one[: len(one) // 2],
        "bad data": one[:20] + b"\xff" * 30 + one[50:],
        "bytes after": one + b"x",
    }[how]
    path = tmp_path / "run.gz"
    path.write_bytes(data)
    with pytest.raises(batches.NotBatched):
        list(batches.run_batches(path, 64))


def test_closing_stops_the_reader(tmp_path) -> None:
    path = _write(tmp_path, [f"q{q} Q0 d 1 1.0 t\n" for q in range(200)])
    reader = batches.run_batches(path, 20)
    next(reader)
    reader.close()
    assert not reader._thread.is_alive()
