"""The per-query drill-down (``app_pages/queries.py``), links that reopen a view, and a whole
track read from an archive or a folder (``app_lib.data.dataset_from_track``).

The page's numbers are recomputed here with :func:`tiecore.evaluate` and
:func:`tiecore.evaluate_spread`; the math itself is checked against brute force in
``tests/explain/test_queries.py``.
"""

from __future__ import annotations

import gzip
import io
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # app_lib lives next to app.py

from streamlit.testing.v1 import AppTest  # noqa: E402

import tiecore  # noqa: E402
from app_lib import data, warm  # noqa: E402
from tiecore import report  # noqa: E402
from tiecore.errors import InputError  # noqa: E402

SAMPLE = ROOT / "sample_data" / "robust03"
RUN_FILES = sorted((SAMPLE / "runs").glob("*.gz"))
QRELS_FILE = SAMPLE / "qrels.txt.gz"
pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")


@pytest.fixture(autouse=True)
def no_warm_up(monkeypatch):
    monkeypatch.setenv(warm.ENV, "0")


def drilldown(**params: str) -> AppTest:
    """The app opened on an address with ``params``, then on the drill-down page."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page("app_pages/queries.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def chosen(at: AppTest) -> dict[str, str]:
    return {box.label: box.value for box in at.selectbox}


def test_the_page_shows_tiecore_values_of_the_query_and_runs():
    at = drilldown()
    picked = chosen(at)
    measure, qid = picked["Measure"], picked["Query (largest shift first)"]
    names = [picked["First system"], picked["Second system"]]
    runs = tiecore.read_runs(RUN_FILES)
    qrels = tiecore.read_qrels(QRELS_FILE)
    one = {n: runs[n] for n in names}
    aware = tiecore.evaluate(one, qrels, measure, ties="aware", per_query=True)
    oblivious = tiecore.evaluate(one, qrels, measure, ties="oblivious", per_query=True)
    other = tiecore.evaluate(
        one, qrels, measure, ties="oblivious", tiebreak="docno_asc", per_query=True
    )
    bounds = tiecore.evaluate_spread(one, qrels, measure, per_query=True)
    table = next(f.value for f in at.dataframe if "tie-aware" in f.value.columns)

    def value(frame, name, column="value"):
        rows = frame[(frame["run"] == name) & (frame["qid"] == qid)]
        return float(rows[column].iloc[0])

    assert table["system"].tolist() == names
    for row, name in zip(table.itertuples(index=False), names, strict=True):
        a, o = value(aware, name), value(oblivious, name)
        assert row[1] == report.format_value(o)
        assert row[2] == report.format_value(a)
        low, high = value(bounds, name, "min"), value(bounds, name, "max")
        assert row[3] == f"[{report.format_value(low)}, {report.format_value(high)}]"
        assert row[4] == report.format_shift(a - o)
        assert row[5] == report.format_value(value(other, name))
    # the largest shift leads: the query chosen first moves most for some system
    every_a = tiecore.evaluate(runs, qrels, measure, ties="aware", per_query=True)
    every_o = tiecore.evaluate(runs, qrels, measure, ties="oblivious", per_query=True)
    key = ["run", "qid"]
    both = every_a.dropna(subset=["qid"]).merge(every_o.dropna(subset=["qid"]), on=key)
    both["size"] = (both["value_x"] - both["value_y"]).abs()
    assert both.loc[both["size"].idxmax(), "qid"] == qid
    # the address now holds the view
    params = dict(at.query_params)
    assert params["query"] == qid and params["runs"] == ",".join(names)
    assert params["measure"] == measure and params["data"] == "robust03"


def test_a_link_opens_the_same_view():
    runs = tiecore.read_runs(RUN_FILES)
    names = list(runs)
    link = {
        "data": "robust03",
        "measure": "P@10",
        "tiebreak": "docno_asc",
        "seed": "7",
        "query": "350",
        "runs": f"{names[3]},{names[1]}",
        "other": "pessimistic",
    }
    at = drilldown(**link)
    picked = chosen(at)
    assert picked["Measure"] == "P@10"
    assert picked["Query (largest shift first)"] == "350"
    assert [picked["First system"], picked["Second system"]] == [names[3], names[1]]
    assert picked["Compare with the tie-break"] == "pessimistic"
    assert picked["Tie-break (oblivious mode)"] == "docno_asc"
    assert at.number_input(key="seed").value == 7
    assert {k: at.query_params[k] for k in link} == link  # written back as it came
    assert "Uploads cannot travel in a link" not in " ".join(i.value for i in at.info)


def test_a_link_with_unknown_values_keeps_the_defaults():
    at = drilldown(data="nowhere", query="no such query", runs="x,y", other="docno", seed="-3")
    picked = chosen(at)
    assert picked["Compare with the tie-break"] == "docno_asc"
    assert picked["Query (largest shift first)"] != "no such query"
    assert at.number_input(key="seed").value == 0


# ----------------------------------------------------------------------------- a whole track


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _qrels() -> tuple[str, bytes]:
    return QRELS_FILE.name, QRELS_FILE.read_bytes()


def test_track_from_archive_equals_the_runs_one_by_one(tmp_path):
    files = {f"track/{p.name}": p.read_bytes() for p in RUN_FILES}  # gzip members
    found = data.dataset_from_track(_qrels(), archive=("track.zip", _zip(files)))
    alone = data.dataset_from_trec([(p.name, p.read_bytes()) for p in RUN_FILES], _qrels())
    assert list(found.runs) == list(alone.runs)
    for name in alone.runs:
        pd.testing.assert_frame_equal(found.runs[name], alone.runs[name])
    assert found.label.startswith("5 runs from the archive track.zip")
    # a folder gives the same runs; a loose run file joins them, its clashing name suffixed
    for p in RUN_FILES:
        (tmp_path / p.name).write_bytes(p.read_bytes())
    seen = []
    again = data.dataset_from_track(
        _qrels(),
        folder=str(tmp_path),
        run_files=[(RUN_FILES[0].name, RUN_FILES[0].read_bytes())],
        progress=lambda done, total, name: seen.append((done, total)),
    )
    assert set(list(again.runs)[:5]) == set(alone.runs)
    assert len(again.runs) == 6 and list(again.runs)[-1].endswith("-2")
    assert seen == [(i, 5) for i in range(1, 6)]


def test_bad_member_is_named_with_its_line():
    bad = gzip.compress(b"301 Q0 d1 1 2.0 x\n301 Q0 d2 2 high x\n")
    files = {"track/good.txt.gz": RUN_FILES[0].read_bytes(), "track/bad.txt.gz": bad}
    with pytest.raises(InputError) as caught:
        data.dataset_from_track(_qrels(), archive=("track.zip", _zip(files)))
    assert str(caught.value).startswith("track.zip/track/bad.txt.gz, line 2: ")


def test_a_track_past_the_session_budget_is_refused_before_it_is_held():
    files = {f"r{i}.txt.gz": p.read_bytes() for i, p in enumerate(RUN_FILES)}
    limit = data.track_text_limit(held=data.SESSION_BYTES - 2 * 1_000_000)
    assert limit == 1_000_000
    with pytest.raises(InputError, match="more text than this reader takes"):
        data.dataset_from_track(_qrels(), archive=("t.zip", _zip(files)), max_text=limit)


def test_folder_signature_and_missing_folder(tmp_path):
    (tmp_path / "a.txt").write_text("1 Q0 d 1 1 a\n")
    first = data.folder_signature(str(tmp_path))
    (tmp_path / "a.txt").write_text("1 Q0 d 1 2.5 a\n")
    assert data.folder_signature(str(tmp_path)) != first
    with pytest.raises(InputError, match="no such folder on this machine"):
        data.folder_signature(str(tmp_path / "none"))


def test_the_sidebar_reads_an_archive_and_names_a_bad_member():
    at = drilldown()
    at.sidebar.radio(key="source").set_value("trec").run()
    files = {f"track/{p.name}": p.read_bytes() for p in RUN_FILES[:3]}
    at.sidebar.file_uploader(key="upload_qrels").set_value(
        (QRELS_FILE.name, QRELS_FILE.read_bytes(), "application/gzip")
    )
    at.sidebar.file_uploader(key="upload_archive").set_value(
        ("track.zip", _zip(files), "application/zip")
    )
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = " ".join(c.value for c in at.caption)
    assert "3 runs from the archive track.zip" in said
    assert "Uploads cannot travel in a link" in " ".join(i.value for i in at.info)
    assert "data" not in at.query_params  # an upload is not named in the address
    bad = {**files, "track/zz.txt": b"301 Q0 d1 1 2.0 x\n301 Q0 d2 2 high x\n"}
    at.sidebar.file_uploader(key="upload_archive").set_value(
        ("track2.zip", _zip(bad), "application/zip")
    )
    at.run()
    assert not at.exception
    messages = [e.value for e in at.error]
    assert messages and messages[0].startswith("track2.zip/track/zz.txt, line 2:")
    assert "The previous data were kept: 3 runs from the archive track.zip" in messages[0]


def test_a_link_to_a_measure_not_in_the_sidebar_adds_it():
    at = drilldown(measure="RR@10", data="mslr")
    assert chosen(at)["Measure"] == "RR@10"
    assert "RR@10" in at.sidebar.multiselect(key="measures").value
    assert at.sidebar.radio(key="source").value == "mslr"
    assert "MSLR-WEB10K sample" in " ".join(c.value for c in at.caption)


def test_the_sidebar_reads_a_folder_on_this_machine(tmp_path):
    for p in RUN_FILES[:2]:
        (tmp_path / "runs").mkdir(exist_ok=True)
        (tmp_path / "runs" / p.name).write_bytes(p.read_bytes())
    at = drilldown()
    at.sidebar.radio(key="source").set_value("trec").run()
    at.sidebar.file_uploader(key="upload_qrels").set_value(
        (QRELS_FILE.name, QRELS_FILE.read_bytes(), "application/gzip")
    )
    at.sidebar.text_input(key="run_folder").set_value(str(tmp_path / "runs")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "2 runs from the folder runs" in " ".join(c.value for c in at.caption)
    at.sidebar.text_input(key="run_folder").set_value(str(tmp_path / "none")).run()
    messages = [e.value for e in at.error]
    assert messages and "no such folder on this machine" in messages[0]
    assert "The previous data were kept: 2 runs from the folder runs" in messages[0]
