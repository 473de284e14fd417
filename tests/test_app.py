"""The Streamlit explorer, driven by ``streamlit.testing.v1.AppTest``.

Every page runs on the bundled sample data, after uploads (good and bad files,
through the real ``st.file_uploader``) and on a tie-heavy synthetic dataset
injected into session state, without an exception; the numbers the pages show
are recomputed here with :mod:`tiecore` and must agree.  The small helpers of
``app_support`` (uploads, feature ranges, orderings, per-rank expectations) are
checked directly, against brute force where there is one.
"""

from __future__ import annotations

import gzip
import io
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # app_support lives next to app.py

from streamlit.testing.v1 import AppTest  # noqa: E402

import app_support as sup  # noqa: E402
import tiecore  # noqa: E402
from tiecore import compare, spread  # noqa: E402
from tiecore.errors import InputError  # noqa: E402

SAMPLE = ROOT / "sample_data"
RUN_FILES = sorted((SAMPLE / "robust03" / "runs").glob("*.gz"))
QRELS_FILE = SAMPLE / "robust03" / "qrels.txt.gz"
PAGES = ("overview", "tie_anatomy", "variance", "rankings", "scoring_functions", "playground")
#: The first visit of a page computes everything (sampling, 136 LETOR features).
TIMEOUT = 600
MEASURES = list(sup.DEFAULT_MEASURES)


# ----------------------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def navigation_only(monkeypatch):
    """Run app.py as a server does after its first run: st.navigation, no legacy pages/ mode.

    A ``pages/`` folder next to the entry script switches Streamlit to its legacy
    multipage mode until ``st.navigation`` is called, which switches it off for
    good.  AppTest resets that switch before every run, so each rerun would take
    the legacy path and lose the sidebar's widgets; keep it off, as on a server.
    """
    from streamlit.runtime import pages_manager

    original = pages_manager.PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        pages_manager.PagesManager.uses_pages_directory = False

    monkeypatch.setattr(pages_manager.PagesManager, "__init__", init)


def new_app(**state) -> AppTest:
    """The app, run once, with ``state`` put into session state before the first run."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert_clean(at)
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py")
    at.run()
    return at


def metric(at: AppTest, label: str) -> str:
    """The value of the metric whose label starts with ``label``."""
    found = [m.value for m in at.metric if m.label.startswith(label)]
    assert found, f"no metric {label!r} in {[m.label for m in at.metric]}"
    return found[0]


def table(at: AppTest, *, columns: set[str]) -> pd.DataFrame:
    """The first table on the page holding all of ``columns``."""
    for frame in at.dataframe:
        value = frame.value
        if columns <= set(value.columns):
            return value
    raise AssertionError(f"no table with {columns}")


def close(a, b) -> bool:
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-9, atol=1e-12)


@pytest.fixture(scope="module")
def sample():
    """The Robust03 sample read straight with tiecore (the reference for what the app shows)."""
    return tiecore.read_runs(RUN_FILES), tiecore.read_qrels(QRELS_FILE)


def gz(text: str) -> bytes:
    return gzip.compress(text.encode())


def synthetic_trec(seed: int = 7) -> tuple[list[tuple[str, bytes]], tuple[str, bytes]]:
    """Three tie-heavy runs on five queries: one without relevant docs, one only in a run."""
    rng = np.random.default_rng(seed)
    qrels_lines, runs = [], {name: [] for name in ("alpha", "beta", "gamma")}
    for q in range(1, 6):
        docs = [f"D{q}-{i:02d}" for i in range(25)]
        for d in docs[:18]:
            level = 0 if q == 4 else int(rng.choice([0, 0, 1, 2]))
            qrels_lines.append(f"Q{q} 0 {d} {level}")
        for name, values in zip(runs, (3, 2, 6), strict=True):
            if name == "gamma" and q == 2:
                continue
            for d in docs:
                runs[name].append(f"Q{q} Q0 {d} 0 {rng.integers(values)} {name}")
    for name in runs:
        runs[name] += [f"Q9 Q0 X{i} 0 {i % 2} {name}" for i in range(4)]  # no judgments
    files = [(f"{name}.run.gz", gz("\n".join(lines) + "\n")) for name, lines in runs.items()]
    return files, ("synthetic.qrels", ("\n".join(qrels_lines) + "\n").encode())


LETOR = b"""2 qid:1 1:3 2:0.5 3:1
0 qid:1 1:3 2:0.1 3:1
1 qid:1 1:1 2:0.5 3:0
0 qid:1 1:1 2:0.7
1 qid:2 1:0 2:0.2 3:1
0 qid:2 1:0 2:0.9 3:1
2 qid:2 1:5 2:0.3 3:1
0 qid:3 1:2 2:0.3 3:0
1 qid:3 1:2 2:0.3 3:1
"""


# ----------------------------------------------------------------------------- every page runs


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_on_the_sample_data(page):
    at = goto(new_app(), page)
    assert_clean(at)
    assert at.title and at.title[0].value
    captions = "".join(c.value for c in at.caption)
    if page == "scoring_functions":  # TREC runs are no LETOR file: the bundled MSLR sample
        assert "MSLR-WEB10K sample" in captions and at.info
    elif page != "playground":
        assert "Robust03 sample" in captions


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_on_an_injected_tie_heavy_upload(page):
    """After an upload: the dataset put into session state as the uploader does."""
    files, qrels = synthetic_trec()
    dataset = sup.dataset_from_trec(files, qrels)
    at = new_app(uploaded_trec=dataset)
    at.sidebar.radio(key="source").set_value("trec").run()
    assert_clean(at)
    at = goto(at, page)
    assert_clean(at)
    if page not in ("playground", "scoring_functions"):
        assert "3 uploaded runs" in "".join(c.value for c in at.caption)


def test_the_app_opens_on_the_sample_without_any_upload():
    at = new_app()
    assert at.sidebar.radio(key="source").value == "robust03"
    assert at.title[0].value == "Overview"
    assert len(at.get("plotly_chart")) >= 2


# ----------------------------------------------------------------------------- values agree


def test_overview_shows_tiecore_values_in_three_modes(sample):
    runs, qrels = sample
    at = goto(new_app(), "overview")
    shown = table(at, columns={"oblivious", "aware", "sampled"}).set_index(["run", "measure"])
    keys = ["run", "measure"]
    for ties, column in (("aware", "aware"), ("oblivious", "oblivious"), ("sampled", "sampled")):
        expected = tiecore.evaluate(runs, qrels, MEASURES, ties=ties, samples=200, seed=0)
        expected = expected.set_index(keys)["value"]
        assert close(shown.loc[expected.index, column], expected), column
    exact = spread.evaluate_spread(runs, qrels, MEASURES).set_index(keys)
    assert close(shown.loc[exact.index, "exact_std"], np.sqrt(exact["var"]))
    assert close(shown.loc[exact.index, "min"], exact["min"])
    profile = table(at, columns={"share_tied_rows"}).set_index("run")
    for name, run in runs.items():
        assert profile.loc[name, "share_tied_rows"] == spread.tie_profile(run)["share_tied_rows"]


def test_changed_settings_reach_tiecore(sample):
    """Tie-break, gain, samples and seed as chosen in the sidebar (relevance level: LETOR test)."""
    runs, qrels = sample
    at = goto(new_app(), "overview")
    at.sidebar.selectbox(key="tiebreak").set_value("docno_asc")
    at.sidebar.radio(key="gain").set_value("exp")
    at.sidebar.number_input(key="samples").set_value(50)
    at.sidebar.number_input(key="seed").set_value(3)
    at.run()
    assert_clean(at)
    shown = table(at, columns={"oblivious", "aware"}).set_index(["run", "measure"])
    measures = ["P@10", "AP", "nDCG(gain=exp)@10", "RR"]
    assert set(shown.index.get_level_values("measure")) == set(measures)
    args = dict(samples=50, seed=3)
    for ties, column in (("oblivious", "oblivious"), ("aware", "aware"), ("sampled", "sampled")):
        expected = tiecore.evaluate(runs, qrels, measures, ties=ties, tiebreak="docno_asc", **args)
        expected = expected.set_index(["run", "measure"])["value"]
        assert close(shown.loc[expected.index, column], expected), column


def test_a_typed_measure_is_used_and_a_bad_one_is_reported():
    at = goto(new_app(), "overview")
    at.sidebar.multiselect(key="measures").set_value(["P@7", "nonsense@3"]).run()
    assert not at.exception
    assert any("nonsense@3" in e.value for e in at.error)
    shown = table(at, columns={"aware"})
    assert set(shown["measure"]) == {"P@7"}


def test_tie_anatomy_shows_the_query_values_and_the_paper_formula(sample):
    runs, qrels = sample
    at = goto(new_app(), "tie_anatomy")
    at.selectbox(key="anatomy_run").set_value("rutcor03100").run()
    qid = next(s for s in at.selectbox if s.label.startswith("Query")).value
    per_query = tiecore.evaluate(runs["rutcor03100"], qrels, "P@10", per_query=True)
    expected = float(per_query.set_index("qid").loc[qid, "value"])
    assert float(metric(at, "aware")) == pytest.approx(expected, abs=5e-5)
    formula = next(x.value.strip("$\n ") for x in at.latex if "P@10" in x.value)
    assert formula.startswith("P@10") and formula.endswith(f"= {expected:.4f}")
    groups = spread.tie_groups(runs["rutcor03100"], qrels, "P@10", qid=qid)
    straddling = groups[groups["straddles_cutoff"]]
    if len(straddling):
        assert int(metric(at, "n_c")) == int(straddling["size"].iloc[0])
        assert int(metric(at, "t_c")) == int(straddling["start_rank"].iloc[0]) - 1
    spread_row = spread.evaluate_spread(runs["rutcor03100"], qrels, "P@10", per_query=True)
    spread_row = spread_row.set_index("qid").loc[qid]
    assert float(metric(at, "sd over")) == pytest.approx(math.sqrt(spread_row["var"]), abs=5e-5)


def test_variance_page_agrees_with_exact_and_sampled_values(sample):
    runs, qrels = sample
    at = goto(new_app(), "variance")
    run = at.selectbox(key="variance_run").value
    aware = tiecore.evaluate(runs[run], qrels, "P@10")["value"].iloc[0]
    sampled = tiecore.evaluate(runs[run], qrels, "P@10", ties="sampled", samples=200, seed=0)
    exact = spread.evaluate_spread(runs, qrels, "P@10")
    assert run == exact.sort_values("var", ascending=False)["run"].iloc[0]
    assert float(metric(at, "aware")) == pytest.approx(aware, abs=5e-5)
    assert float(metric(at, "sampled mean")) == pytest.approx(sampled["value"].iloc[0], abs=5e-5)
    sd = math.sqrt(exact.set_index("run").loc[run, "var"])
    assert float(metric(at, "exact sd")) == pytest.approx(sd, abs=5e-6)
    assert float(metric(at, "sampled sd")) == pytest.approx(sampled["std"].iloc[0], abs=5e-6)


def test_rankings_page_shows_tiecore_compare(sample):
    runs, qrels = sample
    at = goto(new_app(), "rankings")
    assert_clean(at)
    result = compare.compare(runs, qrels, "P@10", samples=200, seed=0, n_resamples=1000)
    pairs = table(at, columns={"a", "b", "t_pvalue", "within_tie_noise"})
    expected = result.pairs.loc[list(zip(pairs["a"], pairs["b"], strict=True))]
    for column in ("mean_diff", "p_beats_sampled", "tie_noise", "t_pvalue", "randomization_pvalue"):
        assert close(pairs[column], expected[column]), column
    assert len(pairs) == len(runs) * (len(runs) - 1) // 2


def test_scoring_functions_rank_letor_features_like_tiecore():
    at = new_app()
    at.sidebar.radio(key="source").set_value("mslr").run()
    dataset = sup.mslr_sample()
    at.sidebar.text_input(key=f"features_{dataset.key}").input("1-3,126-130").run()
    at = goto(at, "scoring_functions")
    assert_clean(at)
    shown = table(at, columns={"aware", "trec_eval", "rank_depends_on_tiebreak"}).set_index("run")
    assert list(shown.index.sort_values()) == sorted(
        ["f1", "f2", "f3", *map("f{}".format, range(126, 131))]
    )
    path = SAMPLE / "mslr" / "msn1.fold1.test.5k.txt.gz"
    runs, qrels = tiecore.read_letor(path, features=[1, 2, 3, 126, 127, 128, 129, 130])
    ranks = {}
    for policy in sup.POLICIES:
        expected = tiecore.evaluate(runs, qrels, "P@10", ties="oblivious", tiebreak=policy)
        expected = expected.set_index("run")["value"]
        assert close(shown.loc[expected.index, policy], expected), policy
        ranks[policy] = expected.rank(ascending=False, method="min")
    aware = tiecore.evaluate(runs, qrels, "P@10").set_index("run")["value"]
    assert close(shown.loc[aware.index, "aware"], aware)
    spread_of_ranks = pd.DataFrame({p: ranks[p] for p in sup.ARBITRARY})
    depends = spread_of_ranks.max(axis=1) > spread_of_ranks.min(axis=1)
    assert (shown.loc[depends.index, "rank_depends_on_tiebreak"] == depends).all()


# ----------------------------------------------------------------------------- uploads


def test_uploaded_trec_runs_replace_the_sample(sample):
    runs, qrels = sample
    at = new_app()
    at.sidebar.radio(key="source").set_value("trec").run()
    chosen = RUN_FILES[:2]
    at.sidebar.file_uploader(key="upload_runs").set_value(
        [(p.name, p.read_bytes(), "application/gzip") for p in chosen]
    )
    at.sidebar.file_uploader(key="upload_qrels").set_value(
        (QRELS_FILE.name, QRELS_FILE.read_bytes(), "application/gzip")
    )
    at.run()
    assert_clean(at)
    names = [tiecore.read_run(p).attrs["name"] for p in chosen]
    shown = table(at, columns={"aware"})
    assert sorted(shown["run"].unique()) == sorted(names)
    expected = tiecore.evaluate({n: runs[n] for n in names}, qrels, MEASURES)
    merged = shown.merge(expected, on=["run", "measure"])
    assert len(merged) == len(expected) and close(merged["aware"], merged["value"])
    for page in PAGES[1:]:
        assert_clean(goto(at, page))


def test_a_bad_run_upload_names_file_line_and_reason_and_keeps_the_data():
    at = new_app()
    at.sidebar.radio(key="source").set_value("trec").run()
    bad = b"303 Q0 doc1 1 1.5 tag\n303 Q0 doc2 2 oops tag\n"
    at.sidebar.file_uploader(key="upload_runs").set_value(("bad.run", bad, "text/plain"))
    at.sidebar.file_uploader(key="upload_qrels").set_value(
        (QRELS_FILE.name, QRELS_FILE.read_bytes(), "application/gzip")
    )
    at.run()
    assert not at.exception
    with pytest.raises(InputError) as expected:
        tiecore.read_run(_named(bad, "bad.run"))
    messages = [e.value for e in at.error]
    assert str(expected.value) in messages
    assert "bad.run" in messages[0] and "line 2" in messages[0] and "oops" in messages[0]
    shown = table(at, columns={"aware"})  # still the sample
    assert set(shown["run"]) == {
        p.name.removeprefix("input.").removesuffix(".gz") for p in RUN_FILES
    }
    for page in PAGES[1:]:
        goto(at, page)
        assert not at.exception


def test_a_bad_upload_after_a_good_one_keeps_the_good_one():
    files, qrels = synthetic_trec()
    at = new_app()
    at.sidebar.radio(key="source").set_value("trec").run()
    at.sidebar.file_uploader(key="upload_runs").set_value(
        [(n, b, "application/gzip") for n, b in files]
    )
    at.sidebar.file_uploader(key="upload_qrels").set_value((qrels[0], qrels[1], "text/plain"))
    at.run()
    assert_clean(at)
    broken = ("broken.qrels", b"Q1 0 D1-00 1\nQ1 0 D1-01 x\n", "text/plain")
    at.sidebar.file_uploader(key="upload_qrels").set_value(broken)
    at.run()
    assert not at.exception
    assert any("broken.qrels, line 2" in e.value for e in at.error)
    assert set(table(at, columns={"aware"})["run"]) == {"alpha", "beta", "gamma"}


def test_letor_upload_with_chosen_features():
    at = new_app()
    at.sidebar.radio(key="source").set_value("letor").run()
    at.sidebar.file_uploader(key="upload_letor").set_value(
        ("tiny.svm.gz", gzip.compress(LETOR), "application/gzip")
    )
    at.run()
    assert_clean(at)
    runs, qrels = tiecore.read_letor(io.BytesIO(LETOR))
    shown = table(at, columns={"aware"})
    assert set(shown["run"]) == set(runs)
    key = next(t.key for t in at.sidebar.text_input if t.key.startswith("features_"))
    at.sidebar.text_input(key=key).input("1,3").run()
    assert_clean(at)
    shown = table(at, columns={"aware", "oblivious"})
    assert set(shown["run"]) == {"f1", "f3"}
    expected = tiecore.evaluate(
        {k: runs[k] for k in ("f1", "f3")}, qrels, MEASURES, ties="oblivious"
    )
    merged = shown.merge(expected, on=["run", "measure"])
    assert close(merged["oblivious"], merged["value"])
    at.sidebar.number_input(key="rel_level").set_value(2).run()  # labels 0-2: only 2 relevant
    assert_clean(at)
    shown = table(at, columns={"aware", "oblivious"})
    expected = tiecore.evaluate({k: runs[k] for k in ("f1", "f3")}, qrels, MEASURES, rel_level=2)
    merged = shown.merge(expected, on=["run", "measure"])
    assert close(merged["aware"], merged["value"])
    level_one = tiecore.evaluate({k: runs[k] for k in ("f1", "f3")}, qrels, MEASURES)
    level_one = level_one.set_index(["run", "measure"])["value"]
    assert not close(merged.set_index(["run", "measure"]).loc[level_one.index, "aware"], level_one)
    goto(at, "scoring_functions")
    assert_clean(at)
    at.sidebar.text_input(key=key).input("1,7").run()  # feature 7 is not in the file
    assert any("feature 7" in e.value for e in at.error)
    assert not at.exception


def test_a_bad_letor_upload_is_reported():
    at = new_app()
    at.sidebar.radio(key="source").set_value("letor").run()
    bad = LETOR + b"1 qid:4 1:2 2:abc\n"
    at.sidebar.file_uploader(key="upload_letor").set_value(("bad.svm", bad, "text/plain"))
    at.run()
    assert not at.exception
    with pytest.raises(InputError) as expected:
        tiecore.read_letor(_named(bad, "bad.svm"))
    assert str(expected.value) in [e.value for e in at.error]
    assert "line 10" in str(expected.value)


# ----------------------------------------------------------------------------- playground


def test_playground_orderings_average_to_the_aware_value():
    at = goto(new_app(), "playground")
    assert_clean(at)
    docs = sup_default()
    assert int(metric(at, "orderings")) == ref.count_orderings(docs["score"].tolist())
    run, qrels = sup.one_query(docs)
    aware = tiecore.evaluate(run, qrels, "RR")["value"].iloc[0]
    labels = dict(zip(docs["docno"], docs["level"], strict=True))
    brute = [
        ref.reciprocal_rank([labels[d] for d in order], list(labels.values()), 1)
        for order in ref.orderings(docs["score"].tolist(), docs["docno"].tolist())
    ]
    assert float(metric(at, "mean over orderings")) == pytest.approx(np.mean(brute), abs=5e-7)
    assert float(metric(at, "tie-aware value")) == pytest.approx(aware, abs=5e-7)
    three = [float(metric(at, p)) for p in ("trec_eval", "docno_asc", "file_order")]
    assert len(set(three)) == 3  # the default list is the three-numbers example
    assert three == pytest.approx([1 / 2, 1 / 4, 1 / 3], abs=5e-5)


def test_playground_follows_edits_and_measure():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    goto(at, "playground")
    at.session_state["playground_editor"] = {
        "edited_rows": {2: {"level": 0}, 3: {"level": 1}},
        "added_rows": [{"docno": "d7", "score": 0.7, "level": 1}],
        "deleted_rows": [],
    }
    at.selectbox(key="playground_measure").set_value("AP")
    at.run()
    assert_clean(at)
    docs = sup_default()
    docs.loc[2, "level"], docs.loc[3, "level"] = 0, 1
    docs = pd.concat([docs, pd.DataFrame({"docno": ["d7"], "score": [0.7], "level": [1]})])
    levels = docs["level"].tolist()
    labels = dict(zip(docs["docno"], levels, strict=True))
    brute = [
        ref.average_precision([labels[d] for d in order], levels, 1)
        for order in ref.orderings(docs["score"].tolist(), docs["docno"].tolist())
    ]
    assert int(metric(at, "orderings")) == len(brute) == 48
    assert float(metric(at, "mean over orderings")) == pytest.approx(np.mean(brute), abs=5e-7)
    listing = table(at, columns={"ranked list", "AP"})
    assert sorted(listing["AP"]) == pytest.approx(sorted(brute))


def test_playground_reports_a_duplicate_docno():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    goto(at, "playground")
    at.session_state["playground_editor"] = {
        "edited_rows": {1: {"docno": "d4"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    assert any("once" in e.value for e in at.error)


def sup_default() -> pd.DataFrame:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_pg", ROOT / "pages" / "playground.py")
    source = spec.loader.get_source("_pg")
    start = source.index("DEFAULT = pd.DataFrame(")
    end = source.index("\n)\n", start) + 2
    scope = {"pd": pd}
    exec(source[start:end], scope)
    return scope["DEFAULT"].copy()


# ----------------------------------------------------------------------------- helpers, directly


def _named(data: bytes, name: str) -> io.BytesIO:
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def test_read_trec_upload_returns_a_dataset_or_the_input_error_message():
    files, qrels = synthetic_trec()
    dataset = sup.read_trec_upload(files, qrels)
    assert isinstance(dataset, sup.Dataset)
    assert dataset.names == ["alpha", "beta", "gamma"]
    assert any("Q9" in note for note in dataset.notes)
    assert sup.read_trec_upload(files, qrels).key == dataset.key
    assert sup.read_trec_upload(files[:1], qrels).key != dataset.key
    bad = ("r.txt", b"1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n")
    message = sup.read_trec_upload([bad], qrels)
    with pytest.raises(InputError) as expected:
        tiecore.read_run(_named(bad[1], "r.txt"))
    assert message == str(expected.value) and "r.txt" in message
    assert isinstance(sup.read_trec_upload([], qrels), str)
    assert "gzip" in sup.read_trec_upload([("cut.gz", gz("1 Q0 a 1 1 t\n")[:12])], qrels)


def test_read_letor_upload_and_feature_ranges():
    dataset = sup.read_letor_upload("tiny.svm", LETOR, "2-3")
    assert dataset.names == ["f2", "f3"] and dataset.kind == "letor"
    assert sup.read_letor_upload("tiny.svm", LETOR).names == ["f1", "f2", "f3"]
    assert "feature 4" in sup.read_letor_upload("tiny.svm", LETOR, "4")
    assert "cannot read" in sup.read_letor_upload("tiny.svm", LETOR, "x-y")
    assert sup.parse_features(" 1-3, 7,5 ", range(1, 10)) == [1, 2, 3, 5, 7]
    assert sup.parse_features("all", [3, 1]) == [1, 3]


def test_with_gain_gives_ndcg_the_chosen_gain_and_reports_bad_names():
    names, errors = sup.with_gain(["nDCG@10", "P@5", "ndcg_cut_10", "bogus"], "exp")
    assert names == ("nDCG(gain=exp)@10", "P@5")
    assert len(errors) == 1 and "bogus" in errors[0]


@settings(max_examples=40, deadline=None)
@given(
    scores=st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=1, max_size=7),
    data=st.data(),
)
def test_orderings_and_per_rank_terms_match_brute_force(scores, data):
    n = len(scores)
    levels = data.draw(st.lists(st.sampled_from([0, 1, 2]), min_size=n, max_size=n))
    docs = pd.DataFrame({"docno": [f"d{i}" for i in range(n)], "score": scores, "level": levels})
    orders = sup.orderings(scores)
    assert len(orders) == ref.count_orderings(scores)
    assert len({tuple(o) for o in orders}) == len(orders)
    assert all(np.all(np.diff(np.asarray(scores)[o]) <= 0) for o in orders)
    run, qrels = sup.one_query(docs)
    for name in ("P@3", "AP", "RR", "nDCG@3", "Bpref", "R@2"):
        values = sup.ordering_values(docs, orders, name)
        spec = ref.Spec(*_spec(name))
        brute = [ref.measure(spec, [levels[i] for i in o], levels) for o in orders]
        assert close(values, brute), name
        aware = tiecore.evaluate(run, qrels, name)["value"].iloc[0]
        terms = sup.expected_contributions(run, qrels, name)
        assert math.isclose(terms["term"].sum(), aware, abs_tol=1e-12), name
        assert math.isclose(np.mean(brute), aware, abs_tol=1e-12), name


def _spec(name: str) -> tuple:
    family, _, cutoff = name.partition("@")
    return family, int(cutoff) if cutoff else None


@settings(max_examples=40, deadline=None)
@given(
    scores=st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=1, max_size=9),
    data=st.data(),
)
def test_paper_quantities_give_the_aware_precision(scores, data):
    n = len(scores)
    levels = data.draw(st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n))
    k = data.draw(st.integers(1, n))
    docs = pd.DataFrame({"docno": [f"d{i}" for i in range(n)], "score": scores, "level": levels})
    run, qrels = sup.one_query(docs)
    groups = spread.tie_groups(run, qrels, f"P@{k}", qid="q")
    q = sup.paper_quantities(groups, k)
    formula = (q["R_c"] + (k - q["t_c"]) * q["r_c"] / q["n_c"]) / k
    assert math.isclose(formula, tiecore.evaluate(run, qrels, f"P@{k}")["value"].iloc[0])
    ranks = sup.per_rank(groups)
    assert list(ranks["rank"]) == list(range(1, n + 1))
    every = sup.orderings(scores, limit=math.factorial(n))
    brute = np.mean([[levels[i] for i in o] for o in every], axis=0)
    assert close(ranks["expected_relevance"], brute)


def test_size_bins_keep_every_group_and_row():
    sizes = pd.DataFrame({"size": [1, 2, 3, 4, 5, 9, 1000], "groups": [10, 4, 2, 1, 1, 1, 1]})
    bins = sup.size_bins(sizes)
    assert list(bins["sizes"]) == ["1", "2", "3–4", "5–8", "9–16", "513–1024"]
    assert bins["groups"].sum() == sizes["groups"].sum()
    assert bins["rows"].sum() == (sizes["size"] * sizes["groups"]).sum()
    assert math.isclose(bins["share_rows"].sum(), 1.0)


@pytest.mark.parametrize("rows", range(1, 9))
def test_stacked_layout_is_a_valid_plotly_layout(rows):
    import plotly.graph_objects as go

    layout, axes = sup.stacked_layout(
        rows, titles=[f"t{i}" for i in range(rows)], heights=range(1, rows + 1)
    )
    figure = go.Figure([go.Scatter(x=[1], y=[1], xaxis=x, yaxis=y) for x, y in axes], layout)
    domains = [figure.layout[y.replace("y", "yaxis")].domain for _, y in axes]
    assert domains[0][1] == 1 and domains[-1][0] == 0
    assert all(a[0] > b[1] for a, b in itertools.pairwise(domains))
    assert len(figure.layout.annotations) == rows


def test_orderings_refuses_too_many():
    assert sup.orderings([1.0] * 8) is None  # 8! > 5040
    assert len(sup.orderings([1.0] * 7)) == 5040
    assert [list(o) for o in sup.orderings([1.0, 2.0, 1.0])] == [[1, 0, 2], [1, 2, 0]]
    assert list(itertools.chain(*sup.orderings([5.0]))) == [0]
