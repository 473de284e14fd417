"""One strict reading of every format (issue 23): the cases an audit found accepted.

Each test reads the same bad value through every path that can carry it (the fast
pyarrow.csv path and the careful tokenizer for text, Parquet, JSON Lines from a file
and from stdin, DataFrames) and expects an InputError naming the file, the line or
row, what was wrong and what was expected.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

import tiecore
from tiecore.errors import InputError
from tiecore.io.frames import check_qrels, check_run
from tiecore.io.trec import read_qrels_columns

GOOD_QRELS = "".join(f"q{i % 3} 0 d{i} {i % 3}\n" for i in range(40))


def _text_paths(body: str, tmp_path: Path) -> dict[str, object]:
    """The same text through the fast path (a clean file) and the careful one (a line
    with mixed tabs and spaces sends the text there), as a path and in memory."""
    careful = body.replace(" ", "\t", 3)  # the first line gets tabs, the others spaces
    path = tmp_path / "file.txt"
    path.write_text(body)
    return {
        "fast path": path,
        "fast, in memory": io.BytesIO(body.encode()),
        "careful path": io.BytesIO(careful.encode()),
    }


# ------------------------------------------------------------------ qrels levels


@pytest.mark.parametrize("level", ["0x1", "0X1f", "0x10", "1_0", "1e2", "0b1", "++1", "1.0"])
@pytest.mark.parametrize("where", ["first line", "last line"])
def test_qrels_levels_in_decimal_only(tmp_path, level, where):
    """pyarrow's int64 cast reads ``0x10`` as 16 (and trec_eval's atol as 0): refused."""
    bad = f"q9 0 bad {level}\n"
    body = bad + GOOD_QRELS if where == "first line" else GOOD_QRELS + bad
    line = 1 if where == "first line" else 41
    for how, source in _text_paths(body, tmp_path).items():
        with pytest.raises(InputError) as caught:
            tiecore.read_qrels(source)
        error = caught.value
        assert (error.line, error.expected) == (line, "a decimal integer"), how
        assert error.problem == f"level {level!r} is not an integer", how


def test_qrels_level_with_a_plus_sign_reads_as_trec_eval_reads_it(tmp_path):
    """trec_eval reads levels with ``atol``: ``+1`` is 1, ``007`` is 7, ``-2`` is -2."""
    body = GOOD_QRELS + "q9 0 a +1\nq9 0 b 007\nq9 0 c -2\n"
    for how, source in _text_paths(body, tmp_path).items():
        levels = tiecore.read_qrels(source)["level"].tolist()
        assert levels[-3:] == [1, 7, -2] and levels[:3] == [0, 1, 2], how
    columns = read_qrels_columns(tmp_path / "file.txt")
    assert columns["level"].to_pylist()[-3:] == [1, 7, -2]


# ------------------------------------------------------------------ run fields


RUN6 = "".join(f"q Q0 d{i} {i} {1 - i / 100} tag\n" for i in range(1, 30))


@pytest.mark.parametrize("odd", ["q Q0 d0 0 1 000 tag\n", "q Q0 d 0 0 1.5 tag\n"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_seven_field_line_is_refused_wherever_it_is(tmp_path, odd, where):
    """A score written ``1 000`` or a docno with a space gives one line 7 fields: refused
    on the first line as on any other (it used to pass as trec_eval's trailing fields)."""
    lines = RUN6.splitlines(keepends=True)
    at = {"first": 0, "middle": 14, "last": len(lines)}[where]
    body = "".join([*lines[:at], odd, *lines[at:]])
    for how, source in _text_paths(body, tmp_path).items():
        with pytest.raises(InputError) as caught:
            tiecore.read_run(source)
        error = caught.value
        assert error.line == (at + 1 if where != "first" else 1), how
        assert error.problem.startswith("7 fields but ") and "space inside" in error.problem


def test_trailing_fields_on_several_lines_are_trec_eval_s_layout(tmp_path):
    """trec_eval's own results.trunc: the first line and others have fields after the tag,
    which are ignored; the run reads as without them."""
    lines = RUN6.splitlines()
    with_junk = [lines[0] + " more junk", *lines[1:5], lines[5] + " x", *lines[6:]]
    plain = tiecore.read_run(io.BytesIO(RUN6.encode()))
    for how, source in _text_paths("\n".join(with_junk) + "\n", tmp_path).items():
        run = tiecore.read_run(source)
        assert run.values.tolist() == plain.values.tolist(), how


# ------------------------------------------------------------------ booleans, keys


def _bool_run(tmp_path: Path, fmt: str) -> object:
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    if fmt == "parquet":
        path = tmp_path / "run.parquet"
        frame.assign(score=[True, False]).to_parquet(path)
        return path
    if fmt == "DataFrame":
        return frame.assign(score=[1.0, True])
    records = [{"qid": "1", "docno": "a", "score": 1}, {"qid": "1", "docno": "b", "score": True}]
    if fmt == "jsonl, all booleans":
        records[0]["score"] = False
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("fmt", ["parquet", "jsonl", "jsonl, all booleans", "DataFrame"])
def test_boolean_scores_are_refused(tmp_path, fmt):
    """``true`` is no score: refused, not evaluated as 1."""
    with pytest.raises(InputError, match=r"score (True|False) is a bool") as caught:
        tiecore.read_run(_bool_run(tmp_path, fmt))
    assert caught.value.expected == "a finite number"
    if fmt.startswith("jsonl"):
        assert caught.value.line == (1 if "all" in fmt else 2)


@pytest.mark.parametrize("column", ["score", "level"])
def test_boolean_values_in_frames_are_refused(column):
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], column: [True, False]})
    check = check_run if column == "score" else check_qrels
    with pytest.raises(InputError, match=rf"row 0: {column} True is a bool"):
        check(frame)
    with pytest.raises(InputError, match=rf"row 1: {column} True is a bool"):
        check(frame.assign(**{column: pd.Series([1, True], dtype=object)}))


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_a_json_key_given_twice_is_refused(tmp_path, kind):
    """``{"score": 1, "score": 5}`` would keep one of the two without a word."""
    value = "score" if kind == "run" else "level"
    path = tmp_path / f"{kind}.jsonl"
    path.write_text(
        f'{{"qid": "1", "docno": "a", "{value}": 1}}\n'
        f'{{"qid": "1", "docno": "b", "{value}": 1, "{value}": 5}}\n'
    )
    read = tiecore.read_run if kind == "run" else tiecore.read_qrels
    with pytest.raises(InputError) as caught:
        read(path)
    error = caught.value
    assert (error.source, error.line) == (str(path), 2)
    assert error.problem == f"key {value!r} appears twice in the object"


# ------------------------------------------------------------------ lone surrogates


@pytest.mark.parametrize("kind", ["run", "qrels"])
@pytest.mark.parametrize("column", ["qid", "docno"])
@pytest.mark.parametrize("via", ["file", "stdin"])
def test_a_lone_surrogate_names_its_column_and_line(tmp_path, monkeypatch, kind, column, via):
    """JSON's ``"\\ud800"`` escape gives Python a lone surrogate that pyarrow cannot
    encode: an InputError naming the line and column, not a UnicodeEncodeError."""
    value = "score" if kind == "run" else "level"
    records = [{"qid": "1", "docno": "a", value: 1}, {"qid": "1", "docno": "b", value: 2}]
    records[1][column] = "\ud800"
    text = "".join(json.dumps(r) + "\n" for r in records)  # json writes the escape
    assert "\\ud800" in text
    path = tmp_path / f"{kind}.jsonl"
    path.write_text(text)
    if via == "stdin":
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    read = tiecore.read_run if kind == "run" else tiecore.read_qrels
    with pytest.raises(InputError) as caught:
        read(path if via == "file" else "-")
    error = caught.value
    assert (
        error.line == 2
        and error.problem == f"{column} '\\ud800' is not valid text (a lone surrogate)"
    )
    assert error.source == (str(path) if via == "file" else "<stdin>")


@pytest.mark.parametrize("column", ["qid", "docno"])
def test_a_lone_surrogate_in_a_frame_names_its_row(column):
    frame = pd.DataFrame(
        {
            "qid": pd.Series(["1", "1"], dtype=object),
            "docno": pd.Series(["a", "b"], dtype=object),
            "score": [1.0, 2.0],
        }
    )
    frame[column] = pd.Series(["1", "\ud800"], dtype=object)
    with pytest.raises(InputError, match=rf"row 1: {column} '\\ud800' is not valid UTF-8"):
        check_run(frame)


def _surrogate_files(tmp_path, kind: str, column: str, gz: bool) -> list[str]:
    """qrels and two runs (JSON Lines), ``kind``'s second line holding ``"\\ud800"`` in
    ``column``; ``gz``: that file gzipped."""
    import gzip

    paths = []
    for which, value in (("qrels", "level"), ("run", "score"), ("run2", "score")):
        records = [{"qid": "1", "docno": "a", value: 1}, {"qid": "1", "docno": "b", value: 0}]
        if which == kind:
            records[1][column] = "\ud800"
        text = "".join(json.dumps(r) + "\n" for r in records).encode()
        path = tmp_path / f"{which}.jsonl{'.gz' if gz and which == kind else ''}"
        path.write_bytes(gzip.compress(text) if gz and which == kind else text)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("kind", ["run", "qrels"])
@pytest.mark.parametrize("column", ["qid", "docno"])
@pytest.mark.parametrize("gz", [False, True])
def test_a_lone_surrogate_is_one_line_in_eval_and_compare(tmp_path, capsys, kind, column, gz):
    """The command lines (eval, compare) and the explorer's upload reader give the
    one-line InputError, gzipped or not; never a UnicodeEncodeError."""
    from tiecore.cli import main

    qrels, run, run2 = _surrogate_files(tmp_path, kind, column, gz)
    problem = f"line 2: {column} '\\ud800' is not valid text (a lone surrogate)"
    for argv in (["eval", qrels, run], ["compare", qrels, run, run2]):
        assert main([*argv, "-m", "AP"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("tiecore: error: ") and problem in err
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # app_lib next to app.py
    from app_lib import data

    upload = [(Path(p).name, Path(p).read_bytes()) for p in (qrels, run)]
    with pytest.raises(InputError, match=re.escape(problem)):
        data.dataset_from_trec([upload[1]], upload[0])


@pytest.mark.parametrize("kind", ["run", "qrels"])
@pytest.mark.parametrize("column", ["qid", "docno"])
def test_a_lone_surrogate_in_a_frame_is_refused_by_every_entry(kind, column):
    """evaluate (each mode), evaluate_spread and compare on DataFrames: an InputError."""
    from tiecore import compare, spread

    def frame(value: str) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "qid": pd.Series(["1", "1"], dtype=object),
                "docno": pd.Series(["a", "b"], dtype=object),
                value: [1, 0],
            }
        )

    run, qrels = frame("score"), frame("level")
    modes = ("oblivious", "aware", "sampled")
    bad = run if kind == "run" else qrels
    bad[column] = pd.Series([bad[column][0], "\ud800"], dtype=object)
    calls = [
        *(lambda t=t: tiecore.evaluate(run, qrels, "AP", ties=t) for t in modes),
        lambda: spread.evaluate_spread(run, qrels, "AP"),
        lambda: compare.compare({"a": run, "b": run}, qrels, "AP"),
    ]
    for call in calls:
        with pytest.raises(InputError, match=rf"{column} '\\ud800' is not valid UTF-8"):
            call()


# ------------------------------------------------------------------ LETOR

LETOR = "2 qid:1 1:0.5 3:1\n0 qid:1 2:7\n1 qid:2 1:1 2:2\n"


def _letor(extra: str, **options) -> tuple[dict, pd.DataFrame]:
    upload = io.BytesIO((LETOR + extra + "\n").encode())
    upload.name = "train.txt"
    return tiecore.read_letor(upload, **options)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("1 qid:3 0x2:1", "feature index '0x2' in '0x2:1' is not a positive integer"),
        ("1 qid:3 1:1 0X10:1", "feature index '0X10' in '0X10:1' is not a positive integer"),
        ("-1 qid:3 1:1", "label '-1' is negative"),
        ("-2.0 qid:3 1:1", "label '-2.0' is negative"),
        (
            "1 qid:3 1000000000000000:1",
            "feature index 1,000,000,000,000,000 is above 100,000, the largest evaluated "
            "without a choice of features",
        ),
    ],
)
def test_bad_letor_values_are_refused(line, problem):
    with pytest.raises(InputError) as caught:
        _letor(line)
    assert (caught.value.source, caught.value.line, caught.value.problem) == (
        "train.txt",
        4,
        problem,
    )


def test_a_large_feature_index_is_read_when_chosen():
    runs, _ = _letor("1 qid:3 1000000000000000:4", features=[1, 10**15])
    assert list(runs) == ["f1", "f1000000000000000"]
    assert runs["f1000000000000000"]["score"].tolist() == [0.0, 0.0, 0.0, 4.0]


def test_many_feature_indexes_need_a_choice():
    """3,001 distinct indexes would be 3,001 runs to evaluate: refused with the limit,
    unless some are chosen."""
    line = "1 qid:3 " + " ".join(f"{i}:{i}" for i in range(1, 3002))
    with pytest.raises(InputError) as caught:
        _letor(line)
    assert caught.value.problem == "3,001 distinct feature indexes, each one a run to evaluate"
    assert "at most 1,000" in caught.value.expected
    runs, _ = _letor(line, features=[3001, 2])
    assert list(runs) == ["f3001", "f2"] and runs["f3001"]["score"].tolist()[-1] == 3001.0


def test_a_huge_choice_of_features_stops_early():
    with pytest.raises(InputError, match="more than 100,000 features chosen"):
        _letor("", features=range(1, 99_999_999_999))


@pytest.mark.parametrize("comment", ["#x", "# x", "#x y:1 2:3"])
def test_a_hash_starts_a_comment_anywhere_as_in_svmlight(comment):
    """svmlight cuts every line at its first ``#``: ``qid:1#x`` is query 1 and a comment."""
    runs, qrels = _letor(f"1 qid:3{comment}\n1 qid:3 1:2#c")
    plain_runs, plain_qrels = _letor("1 qid:3\n1 qid:3 1:2")
    assert qrels.values.tolist() == plain_qrels.values.tolist()
    assert qrels["qid"].tolist()[-2:] == ["3", "3"]
    assert {k: r.values.tolist() for k, r in runs.items()} == {
        k: r.values.tolist() for k, r in plain_runs.items()
    }


# ------------------------------------------------------------------ options at their edges


def _cli(capsys, *args: object) -> tuple[int, str, str]:
    from tiecore.cli import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small_files(tmp_path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 a 2\nq 0 b 0\nq 0 c 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q Q0 a 1 1 t\nq Q0 b 2 0.5 t\nq Q0 c 3 0.2 t\n")
    return qrels, run


def test_a_relevance_level_past_int64_is_refused(capsys, small_files):
    code, out, err = _cli(capsys, "eval", *small_files, "-l", "99999999999999999999")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "99999999999999999999 is out of range (at most 9223372036854775807)" in err


@pytest.mark.parametrize("level", [3, 9223372036854775807])
def test_a_relevance_level_above_every_judgment_is_said(capsys, small_files, level):
    """Every document non-relevant: the values are right (0) and a warning says why."""
    code, out, err = _cli(capsys, "eval", *small_files, "-l", level, "-m", "AP,P@2")
    assert code == 0 and "0.0000" in out
    assert err == (
        f"tiecore: warning: relevance level {level} is above every level in the qrels "
        "(the largest is 2): no document counts as relevant\n"
    )
    code, _, err = _cli(capsys, "eval", *small_files, "-l", 2, "-m", "AP")
    assert code == 0 and err == ""


@pytest.mark.parametrize("alpha", ["1", "0", "1.5"])
def test_a_significance_level_is_strictly_between_0_and_1(capsys, small_files, alpha):
    """At alpha = 1 every p-value is below it and every difference would be starred."""
    qrels, run = small_files
    code, out, err = _cli(capsys, "report", qrels, run, run, "--alpha", alpha)
    assert code == 2 and out == ""
    assert f"{float(alpha)} is not a significance level (expected a number in (0, 1))" in err


# ------------------------------------------------------------------ run names


@pytest.mark.parametrize("call", ["evaluate", "evaluate_spread", "compare", "check_runs"])
def test_run_keys_that_print_alike_are_refused(call):
    """``{1: run, "1": run}`` gave two runs both named ``1``."""
    from tiecore.compare import compare
    from tiecore.io.frames import check_runs

    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "level": [1, 0]})
    calls = {
        "evaluate": lambda runs: tiecore.evaluate(runs, qrels, ["AP"]),
        "evaluate_spread": lambda runs: tiecore.evaluate_spread(runs, qrels, ["AP"]),
        "compare": lambda runs: compare(runs, qrels, "AP"),
        "check_runs": check_runs,
    }
    with pytest.raises(InputError) as caught:
        calls[call]({1: run, "1": run})
    assert str(caught.value) == (
        "runs: the keys 1 and '1' both name a run '1' (expected a distinct name for each run)"
    )
    assert calls[call]({1: run, "2": run.assign(score=[2.0, 1.0])}) is not None
