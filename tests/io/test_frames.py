"""tiecore.io.frames: DataFrames are checked as strictly as the file readers check files."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tiecore
from tiecore.compare import compare
from tiecore.engine.judgments import Judgments
from tiecore.errors import InputError
from tiecore.evaluation.core import as_run_dict
from tiecore.io.frames import check_qrels, check_run, check_runs
from tiecore.measures import parse_measures

RUN = pd.DataFrame(
    {"qid": ["301", "301", "302", "302"], "docno": ["a", "b", "a", "c"], "score": [2.0, 1, 1, 1]}
)
QRELS = pd.DataFrame({"qid": ["301", "302", "302"], "docno": ["a", "a", "b"], "level": [1, 2, 0]})
IDS = "a non-empty string or an integer"


def error_of(call, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        call(*args, **kwargs)
    return info.value


# ------------------------------------------------------------------------- runs


@pytest.mark.parametrize(
    ("column", "values", "problem", "expected"),
    [
        ("score", [2.0, np.nan, 1, 1], "row 1: score is missing (nan)", "a finite number"),
        ("score", [2.0, 1, None, 1], "row 2: score is missing (nan)", "a finite number"),
        ("score", [2.0, 1, 1, np.inf], "row 3: score inf is not finite", "a finite number"),
        ("score", [-np.inf, 1, 1, 1], "row 0: score -inf is not finite", "a finite number"),
        (
            "score",
            pd.array([1.0, None, 1, 1], dtype="Float64"),
            "row 1: score is missing (<NA>)",
            "a finite number",
        ),
        (
            "score",
            ["2", "1", "1", "1"],
            "row 0: score '2' is a string (a str column)",
            "a finite number",
        ),
        (
            "score",
            pd.Series([2.0, 1, "x", 1], dtype=object),
            "row 2: score 'x' is a string",
            "a finite number",
        ),
        ("qid", ["301", None, "302", "302"], "row 1: qid is missing (nan)", IDS),
        ("qid", [301, 301, np.nan, 302], "row 2: qid is missing (nan)", IDS),
        ("qid", [301.0, 301, 302, 302], "row 0: qid 301.0 is a float", IDS),
        (
            "qid",
            pd.array([301, None, 302, 302], dtype="Int64"),
            "row 1: qid is missing (<NA>)",
            IDS,
        ),
        ("qid", pd.Series(["301", 301, 3.5, "x"], dtype=object), "row 2: qid 3.5 is a float", IDS),
        ("docno", ["a", "b", "", "c"], "row 2: docno '' is empty", IDS),
        ("docno", ["a", "b", None, "c"], "row 2: docno is missing (nan)", IDS),
        ("docno", ["a", b"b", "a", "c"], "row 1: docno b'b' is a bytes", IDS),
        ("docno", [True, False, True, False], "row 0: docno True is a bool", IDS),
        (
            "docno",
            ["a", "b", "a", "a"],
            "row 3: docno 'a' appears twice for query '302' (first at row 2)",
            "each docno at most once per query",
        ),
    ],
)
def test_bad_run_frame(column, values, problem, expected):
    err = error_of(check_run, RUN.assign(**{column: values}), "bm25")
    assert (err.source, err.line, err.problem, err.expected) == (
        "run bm25",
        None,
        problem,
        expected,
    )


def test_rows_are_named_by_their_index_label():
    run = RUN.assign(score=[1.0, 2.0, np.nan, 3.0]).set_axis(["w", "x", "y", "z"])
    assert error_of(check_run, run).problem == "row 'y': score is missing (nan)"
    run = RUN.assign(docno=["a", "a", "b", "c"], qid=["1", 1, 2, 2]).set_axis([10, 5, 7, 7])
    assert error_of(check_run, run).problem == (
        "row 5: docno 'a' appears twice for query '1' (first at row 10)"
    )


@pytest.mark.parametrize(
    ("frame", "problem"),
    [
        (RUN.drop(columns="score"), "missing column 'score' (its columns: 'qid', 'docno')"),
        (
            RUN.rename(columns={"qid": "query", "score": "scores"}),
            "missing columns 'qid', 'score' (its columns: 'query', 'docno', 'scores')",
        ),
        (RUN.iloc[:0], "no rows (the DataFrame is empty)"),
    ],
)
def test_run_frame_shape(frame, problem):
    err = error_of(check_run, frame)
    assert (err.source, err.problem) == ("run run", problem)


def test_not_a_frame():
    with pytest.raises(TypeError, match="run x must be a pandas DataFrame, got dict"):
        check_run(RUN.to_dict(), "x")


@pytest.mark.parametrize(
    "qid",
    [
        [301, 301, 302, 302],
        np.array([301, 301, 302, 302], dtype=np.uint16),
        pd.array([301, 301, 302, 302], dtype="Int64"),
        pd.array([301, 301, 302, 302], dtype=pd.ArrowDtype(pa.int32())),
        pd.Series(["301", 301, "302", 302], dtype=object),
        pd.Categorical([301, 301, 302, 302]),
        pd.Categorical(["301", "301", "302", "302"]),
        pd.array(["301", "301", "302", "302"], dtype=pd.ArrowDtype(pa.string())),
        pd.array(["301", "301", "302", "302"], dtype="string"),
    ],
)
def test_integer_and_other_id_columns_read_as_strings(qid):
    checked = check_run(RUN.assign(qid=qid, docno=[1, 2, 1, 3]))
    assert checked["qid"].tolist() == ["301", "301", "302", "302"]
    assert checked["docno"].tolist() == ["1", "2", "1", "3"]
    assert checked["score"].dtype == np.float64


@pytest.mark.parametrize("score", [[2, 1, 1, 1], np.array([2, 1, 1, 1], np.float32)])
def test_numeric_scores_become_float64(score):
    checked = check_run(RUN.assign(score=score))
    assert checked["score"].dtype == np.float64
    assert checked["score"].tolist() == [float(s) for s in score]


def test_a_good_frame_is_returned_as_it_is():
    run = tiecore.read_run(pd.io.common.BytesIO(b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n"))
    assert check_run(run) is run
    qrels = check_qrels(QRELS)  # a plain frame: Qrels over the very same columns
    assert isinstance(qrels, tiecore.Qrels) and qrels.is_checked()
    assert all(
        qrels[c].array.__arrow_array__() is QRELS[c].array.__arrow_array__()
        for c in ("qid", "docno")
    )
    assert np.shares_memory(qrels["level"].to_numpy(), QRELS["level"].to_numpy())
    assert check_qrels(qrels) is qrels
    converted = check_run(RUN.assign(qid=[1, 1, 2, 2]).set_axis([4, 3, 2, 1]))
    assert converted.index.tolist() == [4, 3, 2, 1]
    assert converted["qid"].tolist() == ["1", "1", "2", "2"]


# ------------------------------------------------------------------------ qrels


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ([1.0, 2.9, 0.0], "row 1: level 2.9 is not an integer"),
        ([1.0, -0.5, 0.0], "row 1: level -0.5 is not an integer"),
        ([1, 2, np.nan], "row 2: level is missing (nan)"),
        ([1, None, 0], "row 1: level is missing (nan)"),
        (pd.array([1, None, 0], dtype="Int64"), "row 1: level is missing (<NA>)"),
        ([np.inf, 1, 0], "row 0: level inf is not finite"),
        ([1e19, 1, 0], "row 0: level 1e+19 is too large"),
        (["1", "2", "0"], "row 0: level '1' is a string (a str column)"),
        (pd.Series([1, "2", 0], dtype=object), "row 1: level '2' is a string"),
    ],
)
def test_bad_qrels_level(values, problem):
    err = error_of(check_qrels, QRELS.assign(level=values))
    assert (err.source, err.problem) == ("qrels", problem)


@pytest.mark.parametrize(
    "level",
    [
        [1.0, 2.0, -0.0],
        np.array([1, 2, 0], np.int8),
        np.array([1, 2, 0], np.uint64),
        pd.array([1, 2, 0], dtype="Int64"),
        pd.Series([1, 2.0, 0], dtype=object),
    ],
)
def test_integral_levels_become_int64(level):
    checked = check_qrels(QRELS.assign(level=level))
    assert checked["level"].dtype == np.int64
    assert checked["level"].tolist() == [1, 2, 0]


def test_qrels_judged_twice_and_missing_columns():
    err = error_of(check_qrels, QRELS.assign(docno=["a", "a", "a"]))
    assert err.problem == "row 2: docno 'a' appears twice for query '302' (first at row 1)"
    assert err.expected == "one judgment per query and docno"
    err = error_of(check_qrels, QRELS.rename(columns={"level": "rel"}))
    assert err.problem == "missing column 'level' (its columns: 'qid', 'docno', 'rel')"


# --------------------------------------------------------------- through the API


@pytest.mark.parametrize(
    "call",
    [
        lambda run, qrels: tiecore.evaluate(run, qrels, "AP"),
        lambda run, qrels: compare({"a": run, "b": run.assign(score=[1, 2, 3, 4])}, qrels, "AP"),
        lambda run, qrels: Judgments.from_qrels(qrels),
    ],
    ids=["evaluate", "compare", "Judgments"],
)
def test_the_api_checks_qrels(call):
    err = error_of(call, RUN, QRELS.assign(level=[1.0, 2.9, 0.0]))
    assert err.problem == "row 1: level 2.9 is not an integer"


@pytest.mark.parametrize(
    "call",
    [
        lambda run: tiecore.evaluate({"bm25": run}, QRELS, "AP"),
        lambda run: compare({"bm25": run, "b": RUN}, QRELS, "AP"),
        lambda run: as_run_dict({"bm25": run}),
    ],
    ids=["evaluate", "compare", "as_run_dict"],
)
def test_the_api_checks_runs(call):
    err = error_of(call, RUN.assign(qid=["301", None, "302", "302"]))
    assert (err.source, err.problem) == ("run bm25", "row 1: qid is missing (nan)")


def test_integer_ids_evaluate_as_strings():
    """qid 301 (an int) is query "301", in the run and in the qrels alike."""
    measures = ["AP", "P@1", "nDCG"]
    expected = tiecore.evaluate(RUN, QRELS, measures, per_query=True)
    as_ints = RUN.assign(qid=RUN["qid"].astype(int))
    qrels_ints = QRELS.assign(qid=QRELS["qid"].astype(int))
    for run, qrels in [(as_ints, QRELS), (RUN, qrels_ints), (as_ints, qrels_ints)]:
        pd.testing.assert_frame_equal(
            tiecore.evaluate(run, qrels, measures, per_query=True), expected
        )
    numbered = RUN.assign(docno=[1, 2, 1, 3])
    judged = QRELS.assign(docno=[1, 1, 2])
    pd.testing.assert_frame_equal(
        tiecore.evaluate(numbered, judged, measures), tiecore.evaluate(RUN, QRELS, measures)
    )


def test_fractional_level_is_never_truncated():
    """2.9 used to become 2 silently: an nDCG computed with the wrong gain."""
    err = error_of(tiecore.evaluate, RUN, QRELS.assign(level=[1, 2.9, 0]), "nDCG")
    assert err.problem == "row 1: level 2.9 is not an integer"
    same = tiecore.evaluate(RUN, QRELS.assign(level=[1.0, 2.0, 0.0]), "nDCG")
    pd.testing.assert_frame_equal(same, tiecore.evaluate(RUN, QRELS, "nDCG"))


@pytest.mark.parametrize("runs", [{}, []])
def test_no_runs(runs):
    err = error_of(check_runs, runs)
    assert (err.source, err.problem) == ("runs", "no runs given (the mapping is empty)")
    assert error_of(compare, runs, QRELS, "AP").problem == err.problem


def test_runs_of_the_wrong_kind():
    with pytest.raises(TypeError, match="runs must be a DataFrame or a mapping"):
        check_runs([RUN, RUN])
    assert list(check_runs({1: RUN, "x": RUN})) == ["1", "x"]
    assert error_of(check_runs, {1: RUN, "1": RUN}).problem == (
        "the keys 1 and '1' both name a run '1'"
    )


@pytest.mark.parametrize("measures", [[], ()])
def test_no_measures(measures):
    err = error_of(parse_measures, measures)
    assert (err.source, err.problem) == ("measure", "no measures given (an empty list)")
    assert error_of(tiecore.evaluate, RUN, QRELS, measures).problem == err.problem


# ------------------------------------------------------- random frames, one defect

qid_values = st.one_of(st.integers(0, 10**6), st.text("abc123", min_size=1, max_size=3))
doc_values = st.text("abcxyz0-", min_size=1, max_size=30)
DEFECTS = ["nan", "none", "inf", "empty", "missing qid", "missing docno", "duplicate"]


@st.composite
def frames(draw: st.DrawFn) -> tuple[pd.DataFrame, list[tuple[str, str, float]]]:
    """A valid run frame in one of several column layouts, and its rows as strings."""
    pairs = draw(st.lists(st.tuples(qid_values, doc_values), min_size=1, max_size=25))
    pairs = list(dict.fromkeys((str(q), d) for q, d in pairs))
    scores = draw(
        st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=len(pairs), max_size=25)
    )[: len(pairs)]
    layout = draw(st.sampled_from(["object", "str", "arrow", "int"]))
    qids = [q for q, _ in pairs]
    if layout == "int" and all(q.isdigit() and str(int(q)) == q for q in qids):
        qid_column = pd.Series([int(q) for q in qids], dtype=np.int64)
    else:
        dtype = {"str": "str", "arrow": pd.ArrowDtype(pa.large_string())}.get(layout, object)
        qid_column = pd.Series(qids, dtype=dtype)
    frame = pd.DataFrame(
        {"qid": qid_column, "docno": [d for _, d in pairs], "score": scores}
    ).set_axis(draw(st.permutations(range(100, 100 + len(pairs)))))
    rows = [(q, d, s) for (q, d), s in zip(pairs, scores, strict=True)]
    return frame, rows


@settings(max_examples=150, deadline=None)
@given(frames())
def test_valid_frames_pass_unchanged(generated):
    frame, rows = generated
    checked = check_run(frame, "r")
    assert list(zip(checked["qid"], checked["docno"], checked["score"], strict=True)) == rows
    assert checked.index.equals(frame.index)


@settings(max_examples=200, deadline=None)
@given(frames(), st.sampled_from(DEFECTS), st.data())
def test_a_defect_is_reported_on_its_row(generated, defect, data):
    frame, rows = generated
    k = data.draw(st.integers(0, len(rows) - 1))
    frame = frame.astype({"qid": object, "docno": object})
    column, value = {
        "nan": ("score", math.nan),
        "none": ("score", None),
        "inf": ("score", -math.inf),
        "empty": ("docno", ""),
        "missing qid": ("qid", None),
        "missing docno": ("docno", math.nan),
        "duplicate": ("docno", None),
    }[defect]
    if defect == "duplicate":  # row k repeats an earlier row's pair
        assume(k > 0)
        same_query = [j for j in range(k) if rows[j][0] == rows[k][0]]
        if not same_query:
            frame.iloc[k, 0], same_query = frame.iloc[0, 0], [0]
        frame.iloc[k, 1] = frame.iloc[same_query[0], 1]
    else:
        frame[column] = frame[column].astype(object)
        frame.iloc[k, frame.columns.get_loc(column)] = value
    err = error_of(check_run, frame, "r")
    assert err.problem.startswith(f"row {frame.index[k]}: "), err.problem


def test_evaluate_spread_checks_runs_like_evaluate() -> None:
    """evaluate_spread validates run frames and refuses an empty mapping, as evaluate does."""
    from tiecore.spread import evaluate_spread

    qrels = pd.DataFrame({"qid": ["1"], "docno": ["b"], "level": [1]})
    run = pd.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "score": [1.0, 1.0]})
    assert evaluate_spread(run, qrels, "P@1")["value"].tolist() == [0.5]  # integer qids read
    with pytest.raises(InputError, match="score"):
        evaluate_spread(run.assign(score=[1.0, float("nan")]), qrels, "P@1")
    with pytest.raises(ValueError, match="no runs"):
        evaluate_spread({}, qrels, "P@1")


# ------------------------------------------------------------- checked once


def _count_duplicate_tests(monkeypatch) -> list[int]:
    """Count the (qid, docno) duplicate tests of the reader, check_run and Ranking.build."""
    import tiecore.io.frames
    import tiecore.io.ids
    import tiecore.io.trec

    calls = []
    original = tiecore.io.ids.first_duplicate

    def counted(qid, docno, **options):
        calls.append(len(qid))
        return original(qid, docno, **options)

    for module in (tiecore.io.ids, tiecore.io.trec, tiecore.io.frames):
        # ranking imports it from tiecore.io.ids when it builds
        monkeypatch.setattr(module, "first_duplicate", counted)
    return calls


def test_a_run_file_is_checked_once(tmp_path, monkeypatch) -> None:
    path = tmp_path / "run.txt"
    path.write_text("301 Q0 a 1 2.0 t\n301 Q0 b 2 1.0 t\n302 Q0 a 1 1.0 t\n")
    qrels = tiecore.read_qrels(_write(tmp_path / "qrels.txt", "301 0 a 1\n302 0 a 1\n"))
    calls = _count_duplicate_tests(monkeypatch)
    expected = tiecore.evaluate(
        check_run(
            pd.read_csv(path, sep=" ", header=None).rename(
                columns={0: "qid", 2: "docno", 4: "score"}
            )[["qid", "docno", "score"]]
        ),
        qrels,
        "AP",
    )
    assert calls == [3]  # the frame given: check_run only, not Ranking.build again
    calls.clear()
    found = tiecore.evaluate([str(path)], qrels, "AP")
    assert calls == [3]  # the reader only
    assert found["value"].tolist() == expected["value"].tolist()
    run = tiecore.read_run(path)
    assert calls == [3, 3]
    found = tiecore.evaluate(run, qrels, "AP")
    assert calls == [3, 3]  # not again
    assert found["value"].tolist() == expected["value"].tolist()


def _write(path, text: str):
    path.write_text(text)
    return path


@pytest.mark.parametrize("change", ["loc", "column"])
def test_a_changed_checked_run_is_checked_again(change) -> None:
    run = check_run(RUN.copy())
    if change == "loc":
        run.loc[1, "docno"] = "a"
    else:
        run["docno"] = ["a", "a", "a", "c"]
    err = error_of(tiecore.evaluate, run, QRELS, "AP")
    assert err.problem == "row 1: docno 'a' appears twice for query '301' (first at row 0)"
    from tiecore.engine.ranking import Ranking

    err = error_of(Ranking.build, run, Judgments.from_qrels(QRELS))
    assert "docno a appears twice for query 301" in err.problem
