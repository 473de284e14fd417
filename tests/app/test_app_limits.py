"""The explorer keeps the API's budgets: refusals in one line, never a traceback box.

- a feature range past the file (``1-99999999999``) is refused before it is built;
- an upload is refused before it is read when its gunzipped text grows past
  :data:`app_lib.settings.MAX_INFLATION` times the file, or past what the server
  reads at once (tiecore's memory budget over :data:`app_lib.settings.READ_FACTOR`);
- a computation tiecore refuses (its time budget for sampling) is one line on the page;
- the stores kept outside Streamlit's caches drop entries by count, by age and past their
  bytes; an upload's results stay in its session, the samples' are the server's;
- an upload past the session's budget (:data:`app_lib.settings.SESSION_BYTES`) is refused
  in one line, before it is read or by the size of the data read;
- a session whose visitor has left is closed after the grace
  (:data:`app_lib.settings.SESSION_GRACE`): its files removed, its state emptied.
"""

from __future__ import annotations

import gzip
import time

import numpy as np
import pandas as pd
import pytest
from test_app import (  # noqa: F401  (no_warm_up: an autouse fixture)
    LETOR,
    QRELS_FILE,
    RUN_FILES,
    new_app,
    no_warm_up,
)

from app_lib import data, recent
from app_lib.settings import MAX_INFLATION
from tiecore.errors import InputError


def test_a_feature_range_past_the_file_is_refused_at_once():
    """Refused from the file's features, never by building the range (10**11 numbers)."""
    message = data.read_letor_upload("tiny.svm", LETOR, "1-99999999999")
    assert message == "features: feature 4 is not in the file (expected features 1-3)"
    assert "not in the file" in data.read_letor_upload("tiny.svm", LETOR, "99999999999-99999999999")
    assert data.parse_features("2-3, 1", [1, 2, 3]) == [1, 2, 3]


def test_the_text_size_of_an_upload_is_counted_without_holding_it():
    text = b"303 Q0 doc 1 1.0 tag\n" * 10_000
    assert data.text_size(text, 10) == len(text)
    assert data.text_size(gzip.compress(text), 10**9) == len(text)
    assert data.text_size(gzip.compress(text), 1000) < 3 << 20  # stopped past the limit
    assert data.text_size(b"\x1f\x8bnot gzip", 10) == 10  # the reader says why


def test_an_upload_over_the_memory_budget_is_refused_before_reading(monkeypatch):
    run = RUN_FILES[0]
    monkeypatch.setenv("TIECORE_MEMORY_BUDGET", str(data.READ_FACTOR * 100_000))
    with pytest.raises(InputError, match=r"more than 0\.1 MiB of text"):
        data.dataset_from_trec([(run.name, run.read_bytes())], (QRELS_FILE.name, b"x"))


def test_a_gzip_bomb_upload_is_refused_in_one_line_and_the_data_kept():
    """A 10 KB file that gunzips to 4 MB: refused before it is read, the sample kept."""
    bomb = gzip.compress(b"303 Q0 doc1 1 1.0 tag\n" * 200_000, 9)
    at = new_app()
    at.sidebar.radio(key="source").set_value("trec").run()
    at.sidebar.file_uploader(key="upload_runs").set_value(("bomb.run.gz", bomb, "application/gzip"))
    at.sidebar.file_uploader(key="upload_qrels").set_value(
        (QRELS_FILE.name, QRELS_FILE.read_bytes(), "application/gzip")
    )
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (message,) = [e.value for e in at.error]
    assert message.startswith(f"bomb.run.gz: gunzips to more than {MAX_INFLATION} times its")
    assert "\n" not in message and "The previous data were kept: Robust03 sample" in message


def test_a_sampling_budget_refusal_is_one_line_on_the_page(monkeypatch):
    """tiecore refuses samples past its time budget; the page says so in one line."""
    at = new_app()
    monkeypatch.setenv("TIECORE_TIME_BUDGET", "1e-9")
    at.sidebar.number_input(key="samples").set_value(19_900)  # not in any cache
    at.toggle(key="overview_sampled").set_value(True)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (message,) = [e.value for e in at.error]
    assert message.startswith("Refused: ") and "\n" not in message


def test_the_app_stores_drop_entries_by_count_and_by_age(monkeypatch):
    store = recent.Recent(2, ttl=60.0)
    for key in "abc":
        store.put(key, key.upper())
    assert "a" not in store and store.get("b") == "B" and len(store) == 2
    now = time.monotonic()
    monkeypatch.setattr(recent.time, "monotonic", lambda: now + 61.0)
    assert len(store) == 0 and store.get("b") is None


def test_the_app_stores_drop_entries_past_their_bytes():
    """A store bounded in bytes drops the least recently used; a value alone past the bound
    is kept alone (as Streamlit's ``max_size`` does), until the next one."""
    store = recent.Recent(100, max_bytes=20_000)
    store.put("a", np.zeros(1000))  # 8000 bytes each
    store.put("b", np.zeros(1000))
    assert store.get("a") is not None  # a is now the most recently used
    store.put("c", np.zeros(1000))
    assert "b" not in store and "a" in store and "c" in store and store.bytes == 16_000
    store.put("big", np.zeros(10_000))
    assert len(store) == 1 and "big" in store and store.bytes == 80_000
    store.put("d", np.zeros(1000))
    assert "big" not in store and "d" in store and store.bytes == 8000
    frame = pd.DataFrame({"x": np.zeros(1000), "s": ["doc"] * 1000})
    assert recent.nbytes(frame) == frame.memory_usage(deep=True).sum()
    assert recent.nbytes({"k": frame, "again": frame}) < 2 * recent.nbytes(frame)


def upload_runs(at, runs=RUN_FILES[:2]) -> None:
    at.sidebar.radio(key="source").set_value("trec").run()
    at.sidebar.file_uploader(key="upload_runs").set_value(
        [(path.name, path.read_bytes(), "application/gzip") for path in runs]
    )
    at.sidebar.file_uploader(key="upload_qrels").set_value(
        (QRELS_FILE.name, QRELS_FILE.read_bytes(), "application/gzip")
    )
    at.run()


def test_an_upload_past_the_session_budget_is_refused_in_one_line(monkeypatch):
    """The session may hold so many bytes of uploads: past them, a plain refusal, the data
    in use kept, nothing read."""
    monkeypatch.setattr(data, "SESSION_BYTES", 200_000)
    at = new_app()
    upload_runs(at)
    assert not at.exception, [e.value for e in at.exception]
    (message,) = [e.value for e in at.error]
    assert "one session may hold" in message and "\n" not in message, message
    assert "The previous data were kept: Robust03 sample" in message
    assert "uploaded_trec" not in at.session_state


def test_the_data_read_count_against_the_session_budget():
    """After reading, the data's own size is checked too (a file whose data grow more than
    the factor reckoned)."""
    run = RUN_FILES[0]
    found = data.dataset_from_trec(
        [(run.name, run.read_bytes())], (QRELS_FILE.name, QRELS_FILE.read_bytes())
    )
    assert data.check_held(found, 0, budget=found.nbytes) is found
    with pytest.raises(InputError, match="one session may hold"):
        data.check_held(found, 1, budget=found.nbytes)
    with pytest.raises(InputError, match="one session may hold"):
        data.check_session([(run.name, run.read_bytes())], 0, budget=1000)


def test_an_uploads_results_are_kept_in_its_session_only():
    """The sample's results are the server's (shared by every session); an upload's stay in
    the session that uploaded it, so they go with it."""
    at = new_app()
    upload_runs(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    uploaded = at.session_state["uploaded_trec"]
    assert not uploaded.shared and data.robust03_sample().shared
    own = at.session_state[recent.OWN]
    assert own and any(len(store) for store in own.values()), own
    for store in recent._shared_stores().values():
        assert not [key for key in store._items if uploaded.key in repr(key)]
    upload_runs(at, RUN_FILES[2:4])  # another upload: the results of the first one go
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["uploaded_trec"].key != uploaded.key
    kept = [key for store in at.session_state[recent.OWN].values() for key in store._items]
    assert kept and not [key for key in kept if uploaded.key in repr(key)], kept


class FakeRuntime:
    """What :func:`app_lib.recent.sweep` asks of Streamlit's runtime, recorded."""

    def __init__(self) -> None:
        self.active: set[str] = set()
        self.closed: list[str] = []
        self.removed: list[str] = []
        self.uploaded_file_mgr = self

    def is_active_session(self, sid: str) -> bool:
        return sid in self.active

    def clear_user_info_for_session(self, sid: str) -> None:
        self.closed.append(sid)

    def remove_session_files(self, sid: str) -> None:
        self.removed.append(sid)


class FakeState(dict):
    pass


def test_a_session_whose_visitor_left_is_closed_after_the_grace(monkeypatch):
    """Gone for the grace: closed through the runtime, its uploaded files removed, its state
    emptied; back within it: kept."""
    runtime = FakeRuntime()
    monkeypatch.setattr(recent.Runtime, "exists", staticmethod(lambda: True))
    monkeypatch.setattr(recent.Runtime, "instance", staticmethod(lambda: runtime))
    sessions = recent._sessions()
    sessions.clear()
    left, back = FakeState(dataset="data"), FakeState(dataset="data")
    sessions["left"], sessions["back"] = [None, left], [None, back]
    assert recent.sweep(0.0, grace=10.0) == (2, 0)  # both seen gone
    runtime.active.add("back")
    assert recent.sweep(5.0, grace=10.0) == (0, 0)
    runtime.active.discard("back")
    assert recent.sweep(12.0, grace=10.0) == (1, 1)  # "left" closed; "back" gone again
    assert runtime.closed == runtime.removed == ["left"]
    assert left == {} and back == {"dataset": "data"} and set(sessions) == {"back"}
    sessions.clear()


class FakeFile:
    def __init__(self, file_id: str) -> None:
        self.file_id = file_id


def test_files_taken_off_the_uploaders_leave_streamlits_upload_store(monkeypatch):
    """A file seen in an uploader and then taken off (x, or replaced) is removed from
    Streamlit's store; one not yet seen in an uploader is left alone."""
    runtime = FakeRuntime()
    removed: list[tuple[str, str]] = []
    runtime.remove_file = lambda sid, file_id: removed.append((sid, file_id))
    monkeypatch.setattr(recent.Runtime, "exists", staticmethod(lambda: True))
    monkeypatch.setattr(recent.Runtime, "instance", staticmethod(lambda: runtime))
    monkeypatch.setattr(recent, "session_id", lambda: "me")
    monkeypatch.setattr(recent.st, "session_state", {})
    assert recent.release_files([FakeFile("run1"), FakeFile("qrels")]) == 0
    assert recent.release_files([FakeFile("run2"), FakeFile("qrels")]) == 1
    assert removed == [("me", "run1")]
    assert recent.release_files([]) == 2 and sorted(removed[1:]) == [
        ("me", "qrels"),
        ("me", "run2"),
    ]
