"""The explorer keeps the API's budgets: refusals in one line, never a traceback box.

- a feature range past the file (``1-99999999999``) is refused before it is built;
- an upload is refused before it is read when its gunzipped text grows past
  :data:`app_lib.settings.MAX_INFLATION` times the file, or past what the server
  reads at once (tiecore's memory budget over :data:`app_lib.settings.READ_FACTOR`);
- a computation tiecore refuses (its time budget for sampling) is one line on the page;
- the stores kept outside Streamlit's caches drop entries by count and by age.
"""

from __future__ import annotations

import gzip
import time

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
