"""Run and Qrels: explicit fields that pandas carries, a checked state that it does not."""

from __future__ import annotations

import pickle

import pandas as pd
import pytest

import tiecore
from tiecore.io.frames import check_qrels, check_run
from tiecore.io.runs import Qrels, Run, run_name

TEXT = b"301 Q0 a 1 2.0 t\n301 Q0 b 2 1.0 t\n302 Q0 a 1 1.0 t\n"


def _read(tmp_path) -> Run:
    path = tmp_path / "run.txt"
    path.write_bytes(TEXT)
    return tiecore.read_run(path)


def test_the_readers_return_the_types_with_their_fields(tmp_path) -> None:
    run = _read(tmp_path)
    assert isinstance(run, Run) and isinstance(run, pd.DataFrame)
    assert (run.name, run.source, run.tags, run.part) == (
        "t",
        str(tmp_path / "run.txt"),
        ["t"],
        None,
    )
    assert run.attrs["name"] == "t"  # what users read before
    assert run.is_checked() and run.checked_ids() is not None
    path = tmp_path / "qrels.txt"
    path.write_text("301 0 a 1\n302 0 a 0\n")
    qrels = tiecore.read_qrels(path)
    assert isinstance(qrels, Qrels) and qrels.source == str(path) and qrels.is_checked()
    assert tiecore.Run is Run and tiecore.io.Qrels is Qrels


@pytest.mark.parametrize(
    "derive",
    [
        lambda run: run.copy(),
        lambda run: run.copy(deep=False),
        lambda run: run[run["score"] > 0],
        lambda run: run.sort_values("docno"),
        lambda run: run.reset_index(drop=True),
        lambda run: pickle.loads(pickle.dumps(run)),
    ],
)
def test_a_frame_made_from_a_run_keeps_its_fields_not_its_checked_state(tmp_path, derive) -> None:
    run = _read(tmp_path)
    derived = derive(run)
    assert isinstance(derived, Run)
    assert (derived.name, derived.source, derived.tags) == (run.name, run.source, run.tags)
    assert not derived.is_checked() and derived.checked_ids() is None
    assert run.is_checked()  # the original is untouched


@pytest.mark.parametrize("change", ["loc", "column", "qid"])
def test_a_change_of_the_ids_unchecks_the_run(tmp_path, change) -> None:
    run = _read(tmp_path)
    if change == "loc":
        run.loc[1, "docno"] = "a"
    elif change == "column":
        run["docno"] = ["a", "a", "a"]
    else:
        run["qid"] = ["301", "301", "301"]
    assert not run.is_checked() and run.checked_ids() is None
    with pytest.raises(tiecore.InputError, match="appears twice"):
        check_run(run)


def test_a_change_of_the_scores_keeps_the_ids_checked(tmp_path) -> None:
    run = _read(tmp_path)
    ids = run.checked_ids()
    run["score"] = [3.0, 2.0, 1.0]
    assert run.is_checked() and run.checked_ids() is ids


def test_a_plain_frame_is_viewed_as_a_run_over_the_same_arrays() -> None:
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    frame.attrs["name"] = "mine"
    run = check_run(frame)
    assert isinstance(run, Run) and run.name == "mine" and run.is_checked()
    assert run_name(frame) == "mine" and run_name(frame.drop(columns=[]).iloc[:0]) == "mine"
    assert frame["qid"].array.__arrow_array__() is run["qid"].array.__arrow_array__()
    run.name = "theirs"
    assert frame.attrs["name"] == "mine"  # the view's fields are its own
    assert check_run(run) is run
    assert not Run.of(frame).is_checked()  # the plain frame itself holds no state
    qrels = check_qrels(pd.DataFrame({"qid": ["1"], "docno": ["a"], "level": [1]}))
    assert isinstance(qrels, Qrels) and qrels.is_checked()


def test_numpy_backed_ids_are_never_counted_as_checked() -> None:
    run = Run({"qid": [301, 301], "docno": [1, 2], "score": [1.0, 2.0]})
    run.mark_checked()
    assert not run.is_checked()  # no arrow arrays to compare: tested every time
