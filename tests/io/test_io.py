"""Tests of tiecore.io: round trips against an obvious parser, real files, bad input."""

from __future__ import annotations

import gzip
import io
import random
import re
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from shared_data import DATA, GOOD
from strategies import docnos, qids, run_files

from tiecore.errors import InputError
from tiecore.io import read_letor, read_qrels, read_run, read_runs
from tiecore.io.fastpath import Text, fast_table
from tiecore.io.text import _check_text
from tiecore.io.trec import _QRELS_TYPES, _fast_run, _parse_qrels, _parse_run

ROBUST = sorted((DATA / "robust03" / "runs").glob("*.gz"))
TREC_EVAL = DATA / "trec_eval_tests"
MSLR = DATA / "mslr_web10k_sample"
MSLR_FILES = sorted(MSLR.glob("msn1.*.txt"))


# ------------------------------------------------------------------ slow, obvious parsers


def split_lines(data: bytes) -> list[bytes]:
    """Physical lines: a line ends at LF, CR LF or a lone CR (old Mac files)."""
    return re.split(rb"\r\n|\r|\n", data)


def naive_run(data: bytes) -> tuple[list[tuple[str, str, float]], list[str]]:
    """Records (qid, docno, score) and the tag of each record, one line at a time."""
    rows, tags = [], []
    for line in split_lines(data):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        rows.append((fields[0].decode(), fields[2].decode(), float(fields[4])))
        if len(fields) >= 6:
            tags.append(fields[5].decode())
    return rows, tags


def naive_qrels(data: bytes) -> list[tuple[str, str, int]]:
    rows = []
    for line in split_lines(data):
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            rows.append((fields[0].decode(), fields[2].decode(), int(fields[3])))
    return rows


def naive_letor(data: bytes) -> list[tuple[int, int, str, dict[int, float]]]:
    """(line number, label, qid, {feature: value}) of every data line."""
    rows = []
    for number, line in enumerate(split_lines(data), start=1):
        fields = line.decode().split("#", 1)[0].split()
        if not fields:
            continue
        values = {int(i): float(v) for i, v in (pair.split(":") for pair in fields[2:])}
        rows.append((number, int(float(fields[0])), fields[1][4:], values))
    return rows


def records(frame: pd.DataFrame, value: str = "score") -> list[tuple]:
    return list(zip(frame["qid"], frame["docno"], frame[value], strict=True))


def same_frames(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return a.columns.tolist() == b.columns.tolist() and all(
        a[c].tolist() == b[c].tolist() for c in a.columns
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_files(), st.booleans(), st.booleans())
def test_run_round_trip(tmp_path_factory, generated, zipped, as_path):
    data, _ = generated
    rows, tags_seen = naive_run(data)
    raw = gzip.compress(data) if zipped else data
    if as_path:
        path = tmp_path_factory.mktemp("runs") / "my.run.txt"
        path.write_bytes(raw)
        with mock.patch("tiecore.io.fastpath._STREAM", 0):  # parse big files straight from disk
            run = read_run(path)
    else:
        run = read_run(io.BytesIO(raw))
    assert records(run) == rows
    assert run.dtypes.tolist()[2] == np.float64
    assert run.index.equals(pd.RangeIndex(len(rows)))
    expected = tags_seen[0] if tags_seen else ("my.run" if as_path else "<upload>")
    assert run.attrs["name"] == expected
    assert run.attrs["tags"] == list(dict.fromkeys(tags_seen))


BATCHES = st.sampled_from([1, 2, 3, 1 << 20])  # lines per batch on the careful path


@settings(max_examples=150, deadline=None)
@given(run_files(), BATCHES, st.sampled_from([2, 3, 7, 1 << 20]))
def test_fast_and_careful_paths_agree(generated, batch, window):
    data, _ = generated
    with mock.patch("tiecore.io.fastpath._SCAN", window):  # window borders of the scan anywhere
        fast, fast_tags = _parse_run(Text(None, data, "x"), fast=True)
    with mock.patch("tiecore.io.trec._BATCH", batch):
        careful, careful_tags = _parse_run(Text(None, data, "x"), fast=False)
    assert same_frames(fast, careful)
    assert fast_tags == careful_tags


DEFECTS = [
    "few fields",
    "extra field",
    "space in docno",
    "bad score",
    "nan score",
    "inf score",
    "duplicate",
    "utf8",
    "untagged",
]


@settings(max_examples=200, deadline=None)
@given(run_files(), st.sampled_from(DEFECTS), BATCHES, st.data())
def test_defect_is_reported_on_its_line(generated, defect, batch, draw):
    data, numbers = generated
    parts = re.split(rb"(\r\n|\r|\n)", data)  # the line endings of the file are kept
    lines, ends = parts[0::2], [*parts[1::2], b""]
    k = draw.draw(st.sampled_from(numbers))  # a record line, 1-based
    fields = lines[k - 1].split()
    tagged = len(fields) >= 6
    if defect == "few fields":
        lines[k - 1] = b" ".join(fields[: draw.draw(st.integers(1, 4))])
    elif defect == "extra field":  # the first record line decides how many
        assume(k != numbers[0] and len(lines[numbers[0] - 1].split()) <= 6)
        lines[k - 1] = b" ".join([*fields, b"extra"])
    elif defect == "space in docno":  # trec_eval would read the line shifted
        assume(k != numbers[0] and len(lines[numbers[0] - 1].split()) <= 6)
        lines[k - 1] = b"\t".join([*fields[:2], b"doc 1", *fields[3:]])
    elif defect in ("bad score", "nan score", "inf score"):
        bad = {"bad score": b"1.5x", "nan score": b"nan", "inf score": b"-inf"}[defect]
        lines[k - 1] = b"\t".join([*fields[:4], bad, *fields[5:]])
    elif defect == "duplicate":
        lines.insert(k, lines[k - 1])
        ends.insert(k - 1, b"\n")
        k += 1
    elif defect == "utf8":
        lines[k - 1] = lines[k - 1] + b" \xff"
    elif defect == "untagged":
        assume(tagged and k != numbers[0])
        lines[k - 1] = b" ".join(fields[:5])
    bad_file = b"".join(line + end for line, end in zip(lines, ends, strict=True))
    for fast in (True, False):
        with pytest.raises(InputError) as info, mock.patch("tiecore.io.trec._BATCH", batch):
            _check_text(bad_file, "bad.run")  # as read_run does before parsing
            _parse_run(Text(None, bad_file, "bad.run"), fast=fast)
        assert info.value.line == k, str(info.value)
        assert info.value.source == "bad.run"


# ------------------------------------------------------------------ bad run files


def write(tmp_path: Path, text: bytes | str, name: str = "run.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def error_of(call, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        call(*args, **kwargs)
    return info.value


@pytest.fixture(params=["in memory", "from disk"])
def stream(request, monkeypatch):
    """Read path sources into memory, or scan them in chunks and parse from disk."""
    if request.param == "from disk":
        monkeypatch.setattr("tiecore.io.fastpath._STREAM", 0)
        monkeypatch.setattr("tiecore.io.fastpath._INFLATE", 0)  # gzip inflated while parsed
        monkeypatch.setattr("tiecore.io.text._CHUNK", 7)  # chunk borders everywhere
        monkeypatch.setattr("tiecore.io.fastpath._SCAN", 5)  # and window borders of the scan
    return request.param


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("1 Q0 c 3 1.0", "5 fields but line 2 has 6"),
        ("1 Q0 c 3", "4 fields"),
        ("1 Q0 c 3 abc t", "score 'abc' is not a number"),
        ("1 Q0 c 3 1,5 t", "score '1,5' is not a number"),
        ("1 Q0 c 3 NaN t", "score 'NaN' is not finite"),
        ("1 Q0 c 3 inf t", "score 'inf' is not finite"),
        ("1 Q0 c 3 1e999 t", "score '1e999' is not finite"),
        ("1 Q0 c 3 NA t", "score 'NA' is not a number"),
        ("1 Q0 b 3 1.0 t", "docno 'b' appears twice for query '1' (first on line 3)"),
    ],
)
def test_bad_run_line(stream, tmp_path, line, problem):
    text = "\n" + GOOD.replace("2 Q0 a", "\n2 Q0 a") + line + "\n3 Q0 a 1 1.0 t\n"
    err = error_of(read_run, write(tmp_path, text))
    assert err.line == 6
    assert problem in err.problem
    assert err.source == str(tmp_path / "run.txt")
    assert str(err).startswith(f"{tmp_path / 'run.txt'}, line 6: ")


def test_bad_run_line_in_gzip_names_decompressed_line(stream, tmp_path):
    text = "".join(f"{q} Q0 d{i} {i} {i / 3} t\n" for q in "123" for i in range(3))
    text += "3 Q0 x 1 oops t\n"
    err = error_of(read_run, write(tmp_path, gzip.compress(text.encode()), "run.gz"))
    assert (err.line, err.problem) == (10, "score 'oops' is not a number")


def test_same_docno_in_two_queries_is_fine(tmp_path):
    run = read_run(write(tmp_path, "1 Q0 a 1 1 t\n2 Q0 a 1 1 t\n1 Q0 b 2 0 t\n"))
    assert run["docno"].tolist() == ["a", "a", "b"]


def test_first_line_with_too_few_fields(stream, tmp_path):
    err = error_of(read_run, write(tmp_path, "# c\n\n1 Q0 a 1\n1 Q0 b 2 2.0\n"))
    assert (err.line, err.problem) == (3, "4 fields")


@pytest.mark.parametrize("text", [b"", b"\n\n", b"  \n\t\n", b"# only a comment\n"])
def test_empty_run(stream, tmp_path, text):
    err = error_of(read_run, write(tmp_path, text))
    assert err.line is None
    assert "empty" in err.problem


def test_missing_file(stream, tmp_path):
    err = error_of(read_run, tmp_path / "nope.txt")
    assert err.line is None
    assert err.source == str(tmp_path / "nope.txt")
    assert "no such file" in err.problem


def test_directory(stream, tmp_path):
    assert error_of(read_run, tmp_path).line is None


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes(stream, tmp_path, seed):
    garbage = random.Random(seed).randbytes(5000)
    try:
        garbage.decode()
        bad = len(garbage)
    except UnicodeDecodeError as exc:
        bad = exc.start
    nul = garbage.find(b"\x00")
    first = min(bad, nul if nul >= 0 else bad)
    err = error_of(read_run, write(tmp_path, garbage))
    assert err.line == garbage.count(b"\n", 0, first) + 1
    assert "binary" in err.problem


def test_png(stream, tmp_path):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256))
    err = error_of(read_run, write(tmp_path, png, "image.png"))
    assert err.line == 1
    assert "0x89" in err.problem


def test_nul_byte_line(stream, tmp_path):
    err = error_of(read_run, write(tmp_path, GOOD + "1 Q0 c\x00 3 1.0 t\n"))
    assert (err.line, err.problem) == (4, "NUL byte (binary data)")


@pytest.mark.parametrize("size", [10, 3 * 2**20])
def test_undecodable_utf8_line(tmp_path, size, monkeypatch):
    import tiecore.io.text as tio

    monkeypatch.setattr(tio, "_CHUNK", 2**20)  # make the bad byte straddle chunk borders
    good = (GOOD * (size // len(GOOD) + 1)).encode()
    text = good + "1 Q0 é 1 1.0 t\n".encode() + b"9 Q0 \xc3\x28 1 1.0 t\n"
    err = error_of(read_run, write(tmp_path, text))
    assert err.line == good.count(b"\n") + 2
    assert "0xc3" in err.problem


def test_truncated_utf8_at_end(stream, tmp_path):
    err = error_of(read_run, write(tmp_path, GOOD.encode() + b"1 Q0 x 1 1.0 \xe2\x82"))
    assert err.line == 4


def test_corrupt_gzip(tmp_path):
    err = error_of(read_run, write(tmp_path, gzip.compress(GOOD.encode() * 50)[:60], "r.gz"))
    assert err.line is None
    assert "gzip" in err.problem


# ------------------------------------------------------------------ file objects, names


def test_text_and_binary_file_objects():
    text = GOOD.replace(" ", "\t")
    from_text = read_run(io.StringIO(text))
    from_bytes = read_run(io.BytesIO(text.encode()))
    from_gzip = read_run(io.BytesIO(gzip.compress(text.encode())))
    assert records(from_text) == records(from_bytes) == records(from_gzip)
    assert records(from_text) == naive_run(text.encode())[0]


def test_upload_errors_name_the_upload():
    upload = io.BytesIO(b"1 Q0 a 1 x t\n")
    upload.name = "my_run.txt"
    err = error_of(read_run, upload)
    assert (err.source, err.line) == ("my_run.txt", 1)
    err = error_of(read_run, io.BytesIO(b"1 Q0 a 1 x t\n"))
    assert (err.source, err.line) == ("<upload>", 1)


def test_upload_already_read_is_read_again():
    upload = io.BytesIO(GOOD.encode())
    upload.read()
    assert len(read_run(upload)) == 3


def test_names(stream, tmp_path):
    untagged = write(tmp_path, "1 Q0 a 1 1.0\n", "plain.run.txt.gz")
    assert read_run(untagged).attrs["name"] == "plain.run"
    assert read_run(untagged, name="mine").attrs["name"] == "mine"
    mixed = write(tmp_path, "1 Q0 a 1 1.0 x\n1 Q0 b 1 1.0 y\n1 Q0 c 1 1.0 x\n", "mixed.txt")
    run = read_run(mixed)
    assert run.attrs["name"] == "mixed"
    assert run.attrs["tags"] == ["x", "y"]


def test_read_runs_names(tmp_path):
    (tmp_path / "d").mkdir()
    files = [
        write(tmp_path, "1 Q0 a 1 1.0 bm25\n", "a.txt"),
        write(tmp_path, "1 Q0 a 1 1.0 bm25\n", "b.txt"),
        write(tmp_path, "1 Q0 a 1 1.0 ql\n", "c.txt"),
        write(tmp_path, "1 Q0 a 1 1.0\n", "e.txt"),
        write(tmp_path / "d", "1 Q0 a 1 1.0\n", "e.txt"),
        write(tmp_path, "1 Q0 a 1 1.0 e\n", "f.txt"),
        write(tmp_path, "1 Q0 a 1 1.0\n", "g.txt"),
        write(tmp_path / "d", "1 Q0 a 1 1.0\n", "g.txt.gz"),
    ]
    runs = read_runs(files)
    assert list(runs) == ["a", "b", "ql", "e-2", "e-3", "e", "g", "g-2"]
    assert all(run.attrs["name"] == key for key, run in runs.items())
    assert list(read_runs(files[2])) == ["ql"]


# ------------------------------------------------------------------ qrels


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(qids, docnos, st.integers(-5, 2**40)), min_size=1, unique_by=lambda r: r[:2]
    ),
    st.sampled_from(["\t", " ", "  "]),
    st.booleans(),
    BATCHES,
)
def test_qrels_round_trip(judgments, sep, zipped, batch):
    text = "".join(sep.join([q, "0", d, str(level)]) + "\n" for q, d, level in judgments)
    data = gzip.compress(text.encode()) if zipped else text.encode()
    qrels = read_qrels(io.BytesIO(data))
    assert records(qrels, "level") == naive_qrels(text.encode())
    assert qrels["level"].dtype == np.int64
    with mock.patch("tiecore.io.trec._BATCH", batch):
        careful = _parse_qrels(Text(None, text.encode(), "x"), fast=False)
    assert same_frames(qrels, careful)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("1 0 c 1.5", "level '1.5' is not an integer"),
        ("1 0 c x", "level 'x' is not an integer"),
        ("1 0 c 1 extra", "5 fields"),
        ("1 0 c", "3 fields"),
        ("1 0 b 0", "docno 'b' appears twice for query '1' (first on line 3)"),
    ],
)
def test_bad_qrels_line(stream, tmp_path, line, problem):
    text = "# judged\n1 0 a 1\n1 0 b -1\n\n" + line + "\n"
    for fast in (True, False):
        err = error_of(_parse_qrels, Text(None, text.encode(), "q.txt"), fast=fast)
        assert (err.line, err.problem) == (5, problem)
    assert error_of(read_qrels, write(tmp_path, text)).line == 5


def test_empty_qrels(tmp_path):
    assert error_of(read_qrels, write(tmp_path, "\n")).line is None


# ------------------------------------------------------------------ real files


def count_lines(path: Path) -> int:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).count(b"\n")


def test_bom_is_skipped(stream, tmp_path):
    run = read_run(write(tmp_path, b"\xef\xbb\xbf" + GOOD.encode()))
    assert records(run) == naive_run(GOOD.encode())[0]


@pytest.mark.parametrize("sep", [" ", "\t", "mixed"])
def test_only_the_first_bom_is_skipped(stream, tmp_path, sep):
    """A second BOM is U+FEFF at the start of the first qid, on every layout (pyarrow's
    csv reader skipped it too: qid '1' on the fast path, '\\ufeff1' on the careful one)."""
    bom = "\ufeff"
    run_text = GOOD.replace(" ", "\t") if sep == "\t" else GOOD
    qrels_text = "1 0 a 1\n2 0 a 0\n".replace(" ", "\t" if sep == "\t" else " ")
    if sep == "mixed":  # the careful path
        run_text, qrels_text = (t.replace(" ", "\t", 1) for t in (run_text, qrels_text))
    run = read_run(write(tmp_path, (bom + bom + run_text).encode()))
    assert records(run) == naive_run((bom + run_text).encode())[0]
    assert run["qid"].iloc[0] == bom + "1"
    qrels = read_qrels(write(tmp_path, (bom + bom + qrels_text).encode(), "qrels.txt"))
    assert records(qrels, "level") == naive_qrels((bom + qrels_text).encode())


def test_plain_file_named_gz(stream, tmp_path):
    run = read_run(write(tmp_path, GOOD.replace(" ", "\t"), "run.gz"))
    assert records(run) == naive_run(GOOD.encode())[0]


@pytest.mark.parametrize("path", ROBUST, ids=lambda p: p.name)
def test_robust03_runs(path):
    run = read_run(path)
    data = gzip.decompress(path.read_bytes())
    assert len(run) == count_lines(path)
    rows, tags_seen = naive_run(data)
    assert run.attrs["name"] == tags_seen[0] == path.name.removeprefix("input.").removesuffix(".gz")
    assert records(run) == rows


def test_read_runs_robust03():
    runs = read_runs(ROBUST)
    assert sorted(runs) == sorted(p.name[len("input.") : -len(".gz")] for p in ROBUST)


@pytest.mark.parametrize("name", ["results.test", "results.trunc"])
def test_trec_eval_results(stream, name):
    path = TREC_EVAL / name
    run = read_run(path)
    assert len(run) == count_lines(path)
    assert records(run) == naive_run(path.read_bytes())[0]
    assert run.attrs["name"] == "STANDARD"


@pytest.mark.parametrize(
    "path", [TREC_EVAL / "qrels.test", TREC_EVAL / "qrels.rel_level", DATA / "robust03/qrels.txt"]
)
def test_real_qrels(stream, path):
    qrels = read_qrels(path)
    assert len(qrels) == count_lines(path)
    assert records(qrels, "level") == naive_qrels(path.read_bytes())


# ------------------------------------------------------------------ LETOR


@pytest.mark.parametrize("path", MSLR_FILES, ids=lambda p: p.name)
def test_mslr_sample(path):
    runs, qrels = read_letor(path)
    rows = naive_letor(path.read_bytes())
    features = sorted(set().union(*(values for *_, values in rows)))
    assert list(runs) == [f"f{f}" for f in features]
    assert len(runs) == len(set().union(*(v.keys() for *_, v in rows)))
    assert len(qrels) == len(rows) == count_lines(path)
    assert qrels["qid"].nunique() == len({qid for _, _, qid, _ in rows})
    assert qrels["level"].tolist() == [label for _, label, _, _ in rows]
    assert qrels["qid"].tolist() == [qid for _, _, qid, _ in rows]
    width = len(str(count_lines(path)))
    assert qrels["docno"].tolist() == [str(n).zfill(width) for n, *_ in rows]
    assert qrels["docno"].is_monotonic_increasing
    picker = random.Random(1)
    for _ in range(300):
        k = picker.randrange(len(rows))
        f = picker.choice(features)
        run = runs[f"f{f}"]
        assert run["score"].iloc[k] == rows[k][3].get(f, 0.0)
        assert run["docno"].iloc[k] == qrels["docno"].iloc[k]
    assert runs["f128"].attrs["name"] == "f128"


def test_mslr_chosen_features():
    runs, _ = read_letor(MSLR_FILES[0], features=[128, 1, 128])
    assert list(runs) == ["f128", "f1"]
    err = error_of(read_letor, MSLR_FILES[0], features=[137])
    assert err.line is None
    assert "137" in err.problem


LETOR_GOOD = "2 qid:1 1:0.5 3:1 # doc a\n0 qid:1 2:7\n\n1.0 qid:2 1:-1 2:3e2 3:.5\n"


def test_letor_small():
    runs, qrels = read_letor(io.BytesIO(LETOR_GOOD.encode()))
    assert qrels["docno"].tolist() == ["1", "2", "4"]
    assert qrels["level"].tolist() == [2, 0, 1]
    assert runs["f1"]["score"].tolist() == [0.5, 0.0, -1.0]
    assert runs["f2"]["score"].tolist() == [0.0, 7.0, 300.0]
    assert runs["f3"]["score"].tolist() == [1.0, 0.0, 0.5]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("1.5 qid:3 1:1", "label '1.5' is not an integer"),
        ("x qid:3 1:1", "label 'x' is not an integer"),
        ("inf qid:3 1:1", "label 'inf' is not an integer"),
        ("1e300 qid:3 1:1", "label '1e300' is not an integer"),
        ("1 qi:3 1:1", "second field 'qi:3' is not qid:<id>"),
        ("1 qid: 1:1", "second field 'qid:' is not qid:<id>"),
        ("1", "a label without qid:<id>"),
        ("1 qid:3 1=1", "feature '1=1' is not index:value"),
        ("1 qid:3 1:2:3", "feature '1:2:3' is not index:value"),
        ("1 qid:3 a:1", "feature index 'a' in 'a:1' is not a positive integer"),
        ("1 qid:3 0:1", "feature index '0' in '0:1' is not a positive integer"),
        ("1 qid:3 1:x", "feature value 'x' in '1:x' is not a number"),
        ("1 qid:3 1:nan", "feature '1:nan' is not finite"),
        ("1 qid:3 2:1 1:1", "feature index 1 after 2"),
        ("1 qid:3 2:1 2:1", "feature index 2 after 2"),
    ],
)
def test_bad_letor_line(line, problem):
    upload = io.BytesIO((LETOR_GOOD + line + "\n").encode())
    upload.name = "train.txt"
    err = error_of(read_letor, upload)
    assert (err.source, err.line, err.problem) == ("train.txt", 5, problem)


def test_letor_comments_and_crlf():
    text = b"# header line\r\n2 qid:a 1:1 7:2.5 # docid = x:y\r\n\r\n0 qid:b 7:-1#no space\r\n"
    runs, qrels = read_letor(io.BytesIO(text))
    assert list(runs) == ["f1", "f7"]
    assert runs["f7"]["score"].tolist() == [2.5, -1.0]
    assert qrels["docno"].tolist() == ["2", "4"]
    assert qrels["qid"].tolist() == ["a", "b"]


@pytest.mark.parametrize("features", [[0], ["1"], [1.5], [True]])
def test_letor_bad_feature_request(features):
    err = error_of(read_letor, io.BytesIO(LETOR_GOOD.encode()), features=features)
    assert err.line is None


def test_empty_letor():
    assert error_of(read_letor, io.BytesIO(b"# nothing\n")).line is None


def test_long_docnos_sharing_ends_are_not_duplicates():
    # equal length, first 16 and last 16 bytes: equal hashes, different strings
    docnos = ["x" * 20 + f"{i:03d}" + "y" * 20 for i in range(200)]
    text = "".join(f"q Q0 {d} 1 {i} t\n" for i, d in enumerate(docnos))
    run = read_run(io.BytesIO(text.encode()))
    assert run["docno"].tolist() == docnos
    err = error_of(read_run, io.BytesIO((text + f"q Q0 {docnos[7]} 1 0 t\n").encode()))
    assert (err.line, err.problem) == (
        201,
        f"docno '{docnos[7]}' appears twice for query 'q' (first on line 8)",
    )


@pytest.mark.parametrize(
    "text",
    [
        TREC_EVAL.joinpath("results.test").read_bytes(),  # tabs, spaces around scores
        gzip.decompress(ROBUST[0].read_bytes()),  # tabs
        b"1 Q0 a 1 2.0 r\r\n\r\n1 Q0 b 2 1.0 r\r\n",  # spaces, CRLF, a blank line
    ],
)
def test_common_layouts_take_the_fast_path(text):
    assert _fast_run(Text(None, text, "x")) is not None


def test_qrels_take_the_fast_path():
    text = TREC_EVAL.joinpath("qrels.test").read_bytes()
    assert fast_table(Text(None, text, "x"), _QRELS_TYPES, 4) is not None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(min_size=0, max_size=40), st.text(min_size=1, max_size=40)),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.integers(1, 5), min_size=1, max_size=12),
)
def test_first_duplicate_finds_a_repeat_whatever_the_chunks(pairs, chunk_sizes):
    """A string's hash must not depend on the other strings of its chunk."""
    import pyarrow as pa

    from tiecore.io.ids import first_duplicate

    cuts, start = [], 0
    for size in chunk_sizes:
        if start >= len(pairs):
            break
        cuts.append((start, min(start + size, len(pairs))))
        start += size
    cuts.append((start, len(pairs))) if start < len(pairs) else None
    qid = pa.chunked_array([[q for q, _ in pairs[a:b]] for a, b in cuts], pa.large_string())
    docno = pa.chunked_array([[d for _, d in pairs[a:b]] for a, b in cuts], pa.large_string())
    seen, expected = {}, None
    for row, pair in enumerate(pairs):
        if pair in seen:
            expected = (seen[pair], row)
            break
        seen[pair] = row
    assert first_duplicate(qid, docno) == expected


# ------------------------------------------------------------ one rule on every path


def parse_errors(parser, data: bytes, tmp_path: Path, reader) -> list[InputError]:
    """The error of the fast and the careful path, and of ``reader`` from disk both ways."""
    errors = [error_of(parser, Text(None, data, "f.txt"), fast=fast) for fast in (True, False)]
    path = write(tmp_path, data, "f.txt")
    errors.append(error_of(reader, path))
    with mock.patch("tiecore.io.fastpath._STREAM", 0), mock.patch("tiecore.io.fastpath._SCAN", 5):
        errors.append(error_of(reader, path))  # scanned in small windows, parsed from disk
    for err in errors:
        err.source = "f.txt"
    return errors


def same_error(errors: list[InputError]) -> tuple[int | None, str]:
    assert len({(e.line, e.problem, e.expected) for e in errors}) == 1, [str(e) for e in errors]
    return errors[0].line, errors[0].problem


QRELS_HINT = ": this looks like a TREC run, not qrels"
RUN_HINT = ": this looks like TREC qrels, not a run"


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        # 5 or more fields on every line: the fast path used to keep 4 of them
        ("1 0 a 1 x\n1 0 b 0 y\n", 1, "5 fields"),
        ("1\t0\ta\t1\tx\ty\n1\t0\tb\t0\tx\ty\n", 1, "6 fields"),
        # a run given as qrels
        ("# run\n\n301 Q0 d1 1 2.5 bm25\n301 Q0 d2 2 1.5 bm25\n", 3, "6 fields" + QRELS_HINT),
        ("301\tQ0\td1\t1\t2.5\n301\tQ0\td2\t2\t1.5\n", 1, "5 fields" + QRELS_HINT),
        ("301 0 d1 1 -2e3 bm25\r\n", 1, "6 fields" + QRELS_HINT),
        # not all lines like a run, or not run-like fields: no hint
        ("301 Q0 d1 1 2.5 bm25\n301 0 d2 1\n", 1, "6 fields"),
        ("301 Q0 d1 x 2.5 bm25\n", 1, "6 fields"),
        ("301 X d1 1 2.5 bm25\n", 1, "6 fields"),
        ("1 0 a 1\n1 0 b 1 x\n", 2, "5 fields"),
        ("1 0 a 1\r1 0 b\r", 2, "3 fields"),
    ],
)
def test_qrels_need_exactly_four_fields(tmp_path, text, line, problem):
    errors = parse_errors(_parse_qrels, text.encode(), tmp_path, read_qrels)
    assert same_error(errors) == (line, problem)
    assert errors[0].expected == "4 fields 'qid iter docno level'"


@pytest.mark.parametrize("path", [ROBUST[0], TREC_EVAL / "results.test"], ids=lambda p: p.name)
def test_real_run_given_as_qrels(path):
    err = error_of(read_qrels, path)
    assert (err.line, err.problem) == (1, "6 fields" + QRELS_HINT)


@pytest.mark.parametrize(
    "path", [TREC_EVAL / "qrels.test", DATA / "robust03/qrels.txt"], ids=lambda p: p.name
)
def test_real_qrels_given_as_run(path):
    err = error_of(read_run, path)
    assert (err.line, err.problem) == (1, "4 fields" + RUN_HINT)


def test_five_field_qrels_never_take_the_fast_path():
    text = Text(None, b"1 0 a 1 x\n1 0 b 0 y\n", "x")
    assert fast_table(text, _QRELS_TYPES, 4, 4) is None


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("# qrels\n1 0 a 1\n1 0 b 0\n", 2, "4 fields" + RUN_HINT),
        ("1\t0\ta\t1\n", 1, "4 fields" + RUN_HINT),
        ("1 0 a 1\n1 Q0 b 2 2.0 t\n", 1, "4 fields"),  # not every line: no hint
        ("1 0 a x\n", 1, "4 fields"),
        # the first line fixes the count: 5 and 6 do not mix
        ("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0\n", 2, "5 fields but line 1 has 6"),
        ("\n1 Q0 a 1 2.0\n1 Q0 b 2 1.0 t\n", 3, "6 fields but line 2 has 5"),
        # a docno with a space: trec_eval would read the line shifted
        (
            "1\tQ0\ta\t1\t2.0\tt\n1\tQ0\tdoc 1\t2\t1.0\tt\n",
            2,
            "7 fields but line 1 has 6 (a space inside a docno or a tag?)",
        ),
        (
            "1 Q0 a 1 2.0 t\r1 Q0 b 2 1.0 my tag\r",
            2,
            "7 fields but line 1 has 6 (a space inside a docno or a tag?)",
        ),
        # fields after the tag may vary once the first line has some, as in trec_eval
        ("1 Q0 a 1 2.0 t x y\n1 Q0 b 2 1.0 t\n1 Q0 c 3 0.5\n", 3, "5 fields but line 1 has 8"),
    ],
)
def test_run_field_counts(tmp_path, text, line, problem):
    errors = parse_errors(_parse_run, text.encode(), tmp_path, read_run)
    assert same_error(errors) == (line, problem)
    expected = "6 fields 'qid Q0 docno rank score tag' (or 5 without the tag)"
    assert errors[0].expected == expected + (", as many on every line" if "but" in problem else "")


def test_trailing_fields_vary_when_the_first_line_has_some(tmp_path):
    text = b"1 Q0 a 1 2.0 t x\n1 Q0 b 2 1.0 t\n1 Q0 c 3 0.5 t x y z\n"
    run = read_run(write(tmp_path, text))
    assert records(run) == naive_run(text)[0]
    assert run.attrs["tags"] == ["t"]


# ------------------------------------------------------------------ line endings


def line_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every line with its line break, breaks found by a regex."""
    spans, start = [], 0
    for match in re.finditer(rb"\r\n|\r|\n", data):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(data):
        spans.append((start, len(data)))
    return spans


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60).map(lambda b: bytes(b"a\r\n"[x % 3] for x in b)), st.data())
def test_lines_and_line_numbers_agree_with_a_regex(data, draw):
    from tiecore.io.text import _line_at, text_lines

    spans = line_spans(data)
    assert text_lines(data).to_pylist() == [data[a:b].decode() for a, b in spans]
    if data:
        offset = draw.draw(st.integers(0, len(data) - 1))
        number = next(k for k, (a, b) in enumerate(spans, start=1) if a <= offset < b)
        assert _line_at(data, offset) == number


@pytest.mark.parametrize("ending", ["\r", "\r\n", "\n", "mixed"])
def test_old_mac_and_mixed_line_endings(stream, tmp_path, ending):
    lines = ["# run", "1 Q0 a 1 3.0 t", "", "1 Q0 b 2 2.0 t", "2 Q0 a 1 1.0 t"]
    ends = ["\r", "\r\n", "\n", "\r\n", "\r"] if ending == "mixed" else [ending] * 5
    text = "".join(line + end for line, end in zip(lines, ends, strict=True)).encode()
    run = read_run(write(tmp_path, text))
    assert records(run) == [("1", "a", 3.0), ("1", "b", 2.0), ("2", "a", 1.0)]
    bad = text.replace(b"2 Q0 a 1 1.0", b"2 Q0 a 1 x")
    err = error_of(read_run, write(tmp_path, bad))
    assert (err.line, err.problem) == (5, "score 'x' is not a number")
    qrels = text.replace(b" Q0", b" 0").replace(b" 3.0 t", b"").replace(b" 2.0 t", b"")
    qrels = qrels.replace(b" 1.0 t", b"")
    assert records(read_qrels(write(tmp_path, qrels)), "level") == [
        ("1", "a", 1),
        ("1", "b", 2),
        ("2", "a", 1),
    ]
    err = error_of(read_qrels, write(tmp_path, qrels.replace(b"2 0 a 1", b"2 0 a 1.5")))
    assert (err.line, err.problem) == (5, "level '1.5' is not an integer")


def test_binary_byte_line_with_cr_endings(stream, tmp_path):
    text = b"1 Q0 a 1 3.0 t\r1 Q0 b 2 2.0 t\r\n\r2 Q0 \xff 1 1.0 t\r"
    err = error_of(read_run, write(tmp_path, text))
    assert (err.line, err.problem[:9]) == (4, "byte 0xff")


def test_cr_only_file_takes_the_fast_path_or_reads_the_same():
    text = b"1 Q0 a 1 2.0 r\r1 Q0 b 2 1.0 r\r2 Q0 a 1 1.0 r\r"
    fast, _ = _parse_run(Text(None, text, "x"), fast=True)
    careful, _ = _parse_run(Text(None, text, "x"), fast=False)
    assert same_frames(fast, careful)
    assert _fast_run(Text(None, text, "x")) is not None


def test_letor_old_mac_line_endings():
    text = b"2 qid:1 1:0.5\r0 qid:1 1:1 # c\r\r1 qid:2 1:3\r"
    runs, qrels = read_letor(io.BytesIO(text))
    assert qrels["docno"].tolist() == ["1", "2", "4"]
    assert runs["f1"]["score"].tolist() == [0.5, 1.0, 3.0]
    err = error_of(read_letor, io.BytesIO(text + b"x qid:3 1:1\r"))
    assert (err.line, err.problem) == (5, "label 'x' is not an integer")


@pytest.mark.parametrize("text", [b"1 qid:1\n0 qid:1 # 1:2\n", b"1 qid:1\r\n\r\n2 qid:2"])
def test_letor_without_any_feature(text):
    err = error_of(read_letor, io.BytesIO(text))
    assert (err.line, err.problem) == (None, "no line has a feature")


@pytest.mark.parametrize("window", [1, 2, 5, 64])
@pytest.mark.parametrize(
    ("text", "tags"),
    [
        (b"1 Q0 a 1 2.0 tag\n1 Q0 b 2 1.0 tag\r\n1 Q0 c 3 0.5 tag\r1 Q0 d 4 0 tag", ["tag"]),
        (b"1 Q0 a 1 2.0 tag\n1 Q0 b 2 1.0 tag2\n1 Q0 c 3 0.5 tag\n", ["tag", "tag2"]),
        (b"1 Q0 a 1 2.0 tag\n1 Q0 b 2 1.0 xtag\n", ["tag", "xtag"]),
        (b"1\tQ0\ta\t1\t2.0\ttag\n1\tQ0\tb\t2\t1.0\ttag\n", ["tag"]),
        (b"1 Q0 a 1 7 7\n1 Q0 b 2 1.5 7\n", ["7"]),  # a score equal to the tag
        (b"7 Q0 a 1 2.0 7\n7 Q0 7 2 1.5 7\n", ["7"]),
    ],
)
def test_tags_checked_while_parsing(window, text, tags):
    """pyarrow reads the tag column as nulls, the first line's tag being the only null
    value; any other tag makes the fast path read the column as text after all."""
    with mock.patch("tiecore.io.fastpath._SCAN", window):
        parsed = _fast_run(Text(None, text, "x"))
        assert parsed is not None
        frame, found = _parse_run(Text(None, text, "x"))
    assert found == tags
    assert records(frame) == naive_run(text)[0]
    assert ("tag" in parsed[0]) == (len(tags) > 1 or b" 7 7" in text)


@pytest.mark.parametrize(
    "docnos",
    [
        [
            f"clueweb09-en{a:04d}-{b:02d}-{c:05d}"
            for a in range(8)
            for b in range(10)
            for c in range(700)
        ],
        [
            f"clueweb12-{a:04d}tw-{b:02d}-{c:05d}"
            for a in range(8)
            for b in range(10)
            for c in range(700)
        ],
        [f"FBIS{a}-{b}" for a in range(3, 5) for b in range(28000)],
        ["".join(p) for p in __import__("itertools").product("ab", repeat=15)][:40000],
        [str(i) for i in range(56000)],
    ],
    ids=["clueweb09", "clueweb12", "fbis", "two letters", "numbers"],
)
def test_duplicate_keys_of_distinct_ids_are_distinct(docnos):
    """Collisions only cost time (each is checked exactly), but structured ids that
    differ in a few bytes must not collide: ClueWeb ids did with a weaker mix."""
    import pyarrow as pa

    from tiecore.io.hashing import string_hashes
    from tiecore.io.ids import _pair_keys

    keys = string_hashes(pa.array(docnos))
    assert len(np.unique(keys)) == len(docnos)
    swapped = _pair_keys(
        pa.array(docnos[:3000] + docnos[1:3001]), pa.array(docnos[1:3001] + docnos[:3000])
    )
    assert len(np.unique(swapped)) == 6000  # (a, b) and (b, a) differ


@pytest.mark.parametrize(
    ("text", "fast"),
    [
        (b"1\tQ0\ta\t1\t2.0\tt\n1\tQ0\tb\t2\t 1.0 \tt\n", True),  # spaces after line 1: again
        (b"1\tQ0\ta\t1\t2.0\tt\n1\tQ0\tb c\t2\t1.0\tt\n", False),  # a docno with a space
        (b"1 Q0 a 1 2.0 t\n1\tQ0\tb\t2\t1.0\tt\n", True),  # a tab after line 1: rewritten
        (b"1 Q0 a 1 2.0 t\n1 Q0  b 2 1.0 t\n", True),  # a doubled delimiter: rewritten
        (b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\x0b\n", True),  # \v is whitespace to trec_eval
        (b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0\n", False),  # ragged: the careful path names it
    ],
)
def test_what_the_first_line_tells_is_checked(stream, tmp_path, text, fast):
    """pyarrow parses on the first line's layout while the scan runs; the scan decides
    whether the text is read as it is or rewritten to single spaces first (both fast)."""
    assert (_fast_run(Text(None, text, "x")) is not None) == fast
    rows = naive_run(text)[0]
    if len({len(line.split()) for line in split_lines(text) if line.strip()}) == 1:
        assert records(read_run(write(tmp_path, text))) == rows
    else:
        assert error_of(read_run, write(tmp_path, text)).line == 2


# ------------------------------------------------------------ ids kept for the lookup


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["1", "2", "10", "x", ""]), st.text(max_size=30))),
    st.lists(st.integers(1, 5), min_size=1, max_size=8),
)
def test_run_ids_code_the_qids_and_hash_the_docnos(rows, chunk_sizes):
    """RunIds: each row's qid as an index into the distinct qids (first appearance order,
    whatever stretches they come in), each docno's hash whatever the chunks."""
    import pyarrow as pa

    from tiecore.io.hashing import docno_hashes
    from tiecore.io.ids import RunIds

    cuts, start = [], 0
    for size in chunk_sizes * (len(rows) + 1):
        if start >= len(rows):
            break
        cuts.append((start, min(start + size, len(rows))))
        start += size
    qid = pa.chunked_array([[q for q, _ in rows[a:b]] for a, b in cuts], pa.large_string())
    docno = pa.chunked_array([[d for _, d in rows[a:b]] for a, b in cuts], pa.large_string())
    ids = RunIds.of(qid, docno)
    distinct = list(dict.fromkeys(q for q, _ in rows))
    assert ids.qids.to_pylist() == distinct
    assert ids.query.tolist() == [distinct.index(q) for q, _ in rows]
    alone = [docno_hashes(pa.array([d], pa.large_string()))[0] for _, d in rows]
    assert ids.docno_hash.tolist() == alone


def test_a_changed_run_loses_its_read_ids(tmp_path):
    """The reader's RunIds serve only the frame it read, while its ids are unchanged."""
    from tiecore.io.frames import check_run

    path = tmp_path / "run.txt"
    path.write_text("301 Q0 a 1 2.0 t\n301 Q0 b 2 1.0 t\n302 Q0 a 1 1.0 t\n")
    run = read_run(path)
    assert run.checked_ids() is not None and run.is_checked()
    copy = run.copy()  # a new frame: its own checked state (none), the run's fields
    assert copy.checked_ids() is None and not copy.is_checked() and copy.name == run.name
    run.loc[1, "docno"] = "c"  # the frame counts as unchecked again
    assert not run.is_checked() and run.checked_ids() is None
    checked = check_run(run)  # checked anew (the same frame): not with the reader's ids
    assert checked.is_checked() and checked.checked_ids() is None
    again = read_run(path)  # checked again unchanged (evaluate does): the ids stay
    assert check_run(again) is again and again.checked_ids() is not None


def test_run_ids_of_a_big_run_overlap_alike(tmp_path):
    """Codes and hashes computed side by side (big runs) equal those computed in turn."""
    import pyarrow as pa

    from tiecore.io import ids as tio

    rng = np.random.default_rng(3)
    qid = pa.chunked_array([pa.array(rng.choice(["301", "302", "4"], 5000).tolist())] * 2)
    docno = pa.chunked_array([pa.array([f"D{k}" for k in rng.integers(0, 10**6, 5000)])] * 2)
    alone = tio.RunIds.of(qid, docno)
    with mock.patch.object(tio, "_OVERLAP", 0):
        side = tio.RunIds.of(qid, docno)
    assert side.qids.equals(alone.qids)
    assert side.query.tolist() == alone.query.tolist()
    assert side.docno_hash.tolist() == alone.docno_hash.tolist()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 2**64 - 1), unique=True, max_size=300),
    st.lists(st.integers(0, 2**64 - 1), max_size=300),
    st.integers(0, 12),
    st.sampled_from([1 << 19, 0]),
)
def test_hash_index_finds_what_a_dict_finds(keys, others, crowd, sparse_keys):
    """HashIndex.get_indexer is a dict lookup (-1 when absent), with 0, the largest key,
    and keys crowding one home slot (equal top bits after the multiply) among them, in
    the sparse table and in the dense one (load up to 2/3) that large key sets get."""
    from tiecore.io import hashing as tio
    from tiecore.io.hashing import HashIndex

    crowded = [(k << 40) for k in range(1, crowd + 1)]  # small multiples: close homes
    keys = list(dict.fromkeys([*keys, *crowded]))
    with mock.patch.object(tio, "_SPARSE_KEYS", sparse_keys):
        index = HashIndex(np.array(keys, dtype=np.uint64))
    slots = len(index._keys)
    assert slots >= (4 if sparse_keys else 1.5) * len(keys) - 1
    probe = [*others, *keys, *crowded, 0, 2**64 - 1]
    where = {k: i for i, k in enumerate(keys)}
    got = index.get_indexer(np.array(probe, dtype=np.uint64))
    assert got.tolist() == [where.get(k, -1) for k in probe]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)), max_size=40),
    st.integers(0, 5),
    st.sampled_from(["int32", "int64", "float64", "bool"]),
)
def test_arrow_numpy_converters_agree_with_pyarrow(values, start, kind):
    """io.to_arrow / io.to_numpy (which never import pandas) give pyarrow's own arrays,
    slices and null fills included."""
    import pyarrow as pa

    from tiecore.io.arrays import to_arrow, to_numpy

    typ = {"int32": pa.int32(), "int64": pa.int64(), "float64": pa.float64()}.get(kind)
    if kind == "bool":
        values = [None if v is None else v % 2 == 1 for v in values]
        typ = pa.bool_()
    array = pa.array(values, typ).slice(min(start, len(values)))
    fill = False if kind == "bool" else -1
    want = [fill if v is None else v for v in array.to_pylist()]
    got = to_numpy(array, fill)
    assert got.tolist() == want and got.dtype == np.dtype(typ.to_pandas_dtype())
    assert to_numpy(pa.chunked_array([array, array], typ), fill).tolist() == want * 2
    dense = np.array(want, dtype=got.dtype)
    assert to_arrow(dense).equals(pa.array(dense))
    if array.null_count:
        with pytest.raises(ValueError):
            to_numpy(array)


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=40).map(lambda b: b.replace(b"x", b" ").replace(b"y", b"\t")),
    st.integers(0, 40),
    st.sampled_from([-1, 9, 32, 97]),
    st.sampled_from([9, 32]),
)
def test_doubled_is_a_substring_search(data, end, previous, byte):
    """The scan's numpy test for a doubled delimiter is the substring search it replaced."""
    from tiecore.io.fastpath import _doubled

    end = min(end, len(data))
    pair = bytes((byte, byte))
    want = (end > 0 and data[0] == byte == previous) or data.find(pair, 0, end) >= 0
    assert _doubled(bytearray(data), end, previous, byte) == want
    assert _doubled(data, end, previous, byte) == want


# ------------------------------------------------------------- gzip inflated while parsed

#: A plain run of 50 queries x 100 docs (127 KB), one tag.
RUN_5000 = "".join(f"{q} Q0 d{i} {i} {i / 7} tag\n" for q in range(50) for i in range(100))


def read_both_ways(path: Path, block: int):
    """read_run of a gzip file inflated in a thread while parsed (blocks of ``block``
    bytes), and of the same bytes loaded whole: the frame, or the InputError."""

    def read(source):
        try:
            return read_run(source)
        except InputError as err:
            return err

    inflate = mock.patch("tiecore.io.fastpath._INFLATE", 0)
    with inflate, mock.patch("tiecore.io.fastpath._INFLATE_BLOCK", block):
        inflated = read(path)
    loaded = read(io.BytesIO(path.read_bytes()))
    if isinstance(loaded, InputError):
        assert isinstance(inflated, InputError)
        assert (inflated.line, inflated.problem, inflated.expected) == (
            loaded.line,
            loaded.problem,
            loaded.expected,
        )
    else:
        assert same_frames(inflated, loaded)
        assert inflated.attrs["tags"] == loaded.attrs["tags"]
    return inflated


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_files(), st.sampled_from([64, 4096, 1 << 20]), st.sampled_from([None, 0, 1, 2]))
def test_inflated_gzip_reads_as_loaded(tmp_path_factory, generated, block, defect):
    """A gzip run parsed while inflated reads as the loaded text; so do a bad byte, a
    duplicate, a second gzip member (trailing garbage) and a truncated member."""
    data, _ = generated
    if defect == 0:
        data += b"\n1 Q0 d 1 1.0 t\n1 Q0 d 2 1.0 t\xff\n"
    raw = gzip.compress(data)
    if defect == 1:
        raw += gzip.compress(b"\n") if data.endswith((b"\n", b"\r")) else b"junk"
    elif defect == 2:
        raw = raw[: len(raw) // 2 + 5]
    path = tmp_path_factory.mktemp("runs") / "my.run.gz"
    path.write_bytes(raw)
    read_both_ways(path, block)


@pytest.mark.parametrize("block", [64, 1 << 20])
def test_inflated_gzip_is_the_fast_path(tmp_path, block):
    """A plain gzip run never loads its text whole; a bad one names its line as loaded."""
    text = RUN_5000
    path = write(tmp_path, gzip.compress(text.encode()), "run.gz")
    not_loaded = mock.patch("tiecore.io.fastpath.load_text", side_effect=AssertionError("loaded"))
    inflate = mock.patch("tiecore.io.fastpath._INFLATE", 0)
    with not_loaded, inflate, mock.patch("tiecore.io.fastpath._INFLATE_BLOCK", block):
        run = read_run(path)
    assert records(run) == naive_run(text.encode())[0]
    assert run.attrs["tags"] == ["tag"]
    for bad in (text.replace("d7 7", "d6 7", 1), text.replace("Q0 d9 ", "Q0 d\x009 ", 1)):
        path.write_bytes(gzip.compress(bad.encode()))
        assert isinstance(read_both_ways(path, block), InputError)
    path.write_bytes(gzip.compress(text[:3000].encode()) + gzip.compress(text[3000:].encode()))
    assert records(read_both_ways(path, block)) == naive_run(text.encode())[0]
    crc = bytearray(gzip.compress(text.encode()))
    crc[-5] ^= 1
    path.write_bytes(bytes(crc))
    assert "gzip" in read_both_ways(path, block).problem


@pytest.mark.parametrize("block", [64, 1 << 20])
def test_inflated_gzip_read_twice(tmp_path, block):
    """A second pass over an inflated gzip run (a second tag after the first lines, or
    tabs among the spaces after them) loads the text: the same run as loaded whole."""
    lines = [f"{q} Q0 d{i} {i} {i / 7} {'one' if q < 25 else 'two'}\n" for q in range(50)
             for i in range(100)]  # fmt: skip
    mixed = [line.replace(" ", "\t", 1) if i > 2000 else line for i, line in enumerate(lines)]
    for text in ("".join(lines), "".join(mixed)):
        path = write(tmp_path, gzip.compress(text.encode()), "run.gz")
        run = read_both_ways(path, block)
        assert records(run) == naive_run(text.encode())[0]
        assert run.attrs["tags"] == ["one", "two"]


@pytest.mark.parametrize("compressed", [False, True])
def test_a_named_pipe_is_read_once(stream, tmp_path, compressed):
    """A named pipe (``<(zcat run.gz)``) yields its text once: it is read as loaded,
    never opened again to sniff, stream or inflate it."""
    from named_pipes import fed_pipe

    text = RUN_5000
    data = gzip.compress(text.encode()) if compressed else text.encode()
    with fed_pipe(tmp_path / "pipe", data) as pipe:
        run = read_run(pipe)
    assert records(run) == naive_run(text.encode())[0]
    with fed_pipe(tmp_path / "qrels", b"1 0 d1 1\n2 0 d3 0\n") as pipe:
        assert read_qrels(pipe).shape[0] == 2
