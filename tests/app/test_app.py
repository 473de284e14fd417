"""The Streamlit explorer, driven by ``streamlit.testing.v1.AppTest``.

Every page runs on the bundled sample data, after uploads (good and bad files,
through the real ``st.file_uploader``) and on the edge data sets of
``app_edge_data`` (no ties, one tied query, all tied, one query, one run, an
unjudged run, 120 runs, 136 LETOR features) without an exception or an error,
and shows a chart or says in words why there is nothing to show; the numbers
the pages show are recomputed here with :mod:`tiecore` and must agree.  The
app layer's small helpers (uploads, feature ranges, layouts) are checked
directly; the math lives in ``tiecore.explain.anatomy`` (``test_anatomy.py``).
"""

from __future__ import annotations

import gzip
import io
import itertools
import math
import pickle
import subprocess
import sys
from pathlib import Path

import app_edge_data as edge
import numpy as np
import pandas as pd
import pytest
import reference as ref

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # app_lib lives next to app.py

from streamlit.testing.v1 import AppTest  # noqa: E402

import tiecore  # noqa: E402
from app_lib import cache, charts, data, warm, warmup  # noqa: E402
from app_lib.settings import Settings, with_gain  # noqa: E402
from tiecore import compare, report, spread  # noqa: E402
from tiecore.errors import InputError  # noqa: E402
from tiecore.measures import DEFAULT_MEASURES  # noqa: E402

SAMPLE = ROOT / "sample_data"
RUN_FILES = sorted((SAMPLE / "robust03" / "runs").glob("*.gz"))
QRELS_FILE = SAMPLE / "robust03" / "qrels.txt.gz"
PAGES = (
    "start",
    "overview",
    "tie_anatomy",
    "variance",
    "rankings",
    "scoring_functions",
    "builder",
    "playground",
    "queries",
)
#: The first visit of a page computes everything (sampling, 136 LETOR features).
TIMEOUT = 600
MEASURES = list(DEFAULT_MEASURES)


# ----------------------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def no_warm_up(monkeypatch):
    """No background warm-up process under AppTest (``test_warm_up_...`` drives it directly)."""
    monkeypatch.setenv(warm.ENV, "0")


def new_app(page: str | None = "overview", **state) -> AppTest:
    """The app, run once, with ``state`` put into session state before the first run, then
    switched to ``page`` (the Overview unless told; None stays on the "Start here" page it
    opens on)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    if page is not None:
        at.switch_page(f"app_pages/{page}.py")
        at.run()
    assert_clean(at)
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app_pages/{page}.py")
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


def explains_or_draws(at: AppTest) -> bool:
    """A chart, a table or a metric, or a message saying why there is nothing to show."""
    shown = len(at.get("plotly_chart")) + len(at.dataframe) + len(at.metric)
    said = [m.value for m in (*at.info, *at.warning, *at.success)]
    return shown > 0 or any(len(text) > 30 for text in said)


def visit_all(at: AppTest, label: str) -> None:
    for page in PAGES:
        goto(at, page)
        assert not at.exception, (label, page, [e.value for e in at.exception])
        assert not at.error, (label, page, [e.value for e in at.error])
        assert at.title and at.title[0].value, (label, page)
        assert explains_or_draws(at), (label, page)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_on_the_sample_data(page):
    at = goto(new_app(), page)
    assert_clean(at)
    assert at.title and at.title[0].value
    captions = "".join(c.value for c in at.caption)
    if page != "playground":  # the sidebar's data on every page, TREC runs as scoring functions
        assert "Robust03 sample" in captions


def test_user_names_are_shown_as_text_not_markdown():
    """Run tags written as Markdown reach every page's words escaped: never a live link or
    emphasis (st.markdown, captions, alerts; widget options and tables show text anyway)."""
    files, qrels = edge.markdown_names()
    at = new_app(uploaded_trec=data.dataset_from_trec(files, qrels))
    at.sidebar.radio(key="source").set_value("trec").run()
    raw = {}
    for page in PAGES:
        goto(at, page)
        assert_clean(at)
        kinds = (at.markdown, at.caption, at.info, at.warning, at.success, at.subheader, at.title)
        said = [element.value for kind in kinds for element in kind]
        found = [text for text in said if "[click](http" in text or "**bold**" in text]
        if found:
            raw[page] = found
    assert raw == {}


@pytest.mark.parametrize("name", list(edge.TREC_SETS))
def test_every_page_on_an_edge_data_set(name):
    """Each edge set, put into session state as the uploader does; every page renders."""
    files, qrels = edge.TREC_SETS[name]()
    dataset = data.dataset_from_trec(files, qrels)
    at = new_app(uploaded_trec=dataset)
    at.sidebar.radio(key="source").set_value("trec").run()
    assert_clean(at)
    visit_all(at, name)
    messages = " ".join(m.value for m in (*at.info, *at.warning, *at.success))
    goto(at, "overview")
    said = " ".join(m.value for m in (*at.info, *at.warning, *at.success))
    if name == "no_ties":
        assert "No system has ties that matter" in said
    if name in ("one_run",):
        goto(at, "rankings")
        assert "at least two systems" in " ".join(m.value for m in at.info)
    if name == "unjudged_run":
        captions = " ".join(c.value for c in at.caption)
        assert "run ghost left out: none of its 2 queries is in the qrels" in captions
        assert dataset.names == ["alpha", "beta"]
    if name == "many_runs":  # readable: the charts show the top 30, the table all 120
        assert at.slider(key="overview_top").value == 30
        assert len(table(at, columns={"z"})) == 120 * len(MEASURES)
        _, drawn = modes_chart(at)  # one labelled row per system, the full name on hover
        assert len(drawn) == 30 and drawn["label"].is_unique
        assert set(drawn["run"]) <= set(dataset.names)
        heat = chart_specs(at)["overview_z"]["data"][0]
        assert len(heat["y"]) == 30 and len(set(heat["y"])) == 30
    del messages


def test_the_anatomy_and_variance_pages_find_the_one_tied_query():
    files, qrels = edge.single_tied_query()
    at = new_app(uploaded_trec=data.dataset_from_trec(files, qrels))
    at.sidebar.radio(key="source").set_value("trec").run()
    at.sidebar.multiselect(key="measures").set_value(["P@2"]).run()
    goto(at, "tie_anatomy")
    assert_clean(at)
    query = next(s for s in at.selectbox if s.label.startswith("Query"))
    assert query.value == "102" and float(metric(at, "sd over")) > 0
    goto(at, "variance")
    assert_clean(at)
    assert not at.slider  # one tied query: no "Queries shown" slider with min = max
    assert any("Only one query" in c.value and "102" in c.value for c in at.caption)


def test_an_upload_none_of_whose_queries_is_judged_is_refused_and_the_data_kept():
    files, qrels = edge.nothing_judged()
    at = new_app()
    at.sidebar.radio(key="source").set_value("trec").run()
    at.sidebar.file_uploader(key="upload_runs").set_value([(n, b, "text/plain") for n, b in files])
    at.sidebar.file_uploader(key="upload_qrels").set_value((qrels[0], qrels[1], "text/plain"))
    at.run()
    assert not at.exception
    message = " ".join(e.value for e in at.error)
    assert "none of the 1 runs has a query in these qrels" in message
    assert "The previous data were kept: Robust03 sample" in message


def test_136_letor_features_upload_and_every_page():
    name, content = edge.letor_136()
    at = new_app()
    at.sidebar.radio(key="source").set_value("letor").run()
    at.sidebar.file_uploader(key="upload_letor").set_value((name, content, "text/plain"))
    at.run()
    assert_clean(at)
    assert len(set(table(at, columns={"z"})["run"])) == 136
    visit_all(at, "letor_136")
    goto(at, "scoring_functions")
    assert len(table(at, columns={"rank_depends_on_tiebreak"})) == 136
    assert at.slider(key="features_top").value == 40  # the chart shows the top 40


def test_the_app_opens_on_the_sample_without_any_upload():
    at = new_app(page=None)
    assert at.sidebar.radio(key="source").value == "robust03"
    assert at.title[0].value.startswith("Start here")  # the on-ramp (tests/app/test_app_start.py)
    goto(at, "overview")
    assert at.title[0].value == "Overview"
    assert len(at.get("plotly_chart")) >= 2


# ----------------------------------------------------------------------------- values agree


def test_overview_shows_the_tie_effect_in_tie_sd(sample):
    runs, qrels = sample
    at = goto(new_app(), "overview")
    shown = table(at, columns={"oblivious", "aware", "z"}).set_index(["run", "measure"])
    keys = ["run", "measure"]
    for ties in ("aware", "oblivious"):
        expected = tiecore.evaluate(runs, qrels, MEASURES, ties=ties).set_index(keys)["value"]
        assert close(shown.loc[expected.index, ties], expected), ties
    exact = spread.evaluate_spread(runs, qrels, MEASURES).set_index(keys)
    sd = np.sqrt(exact["var"])
    assert close(shown.loc[exact.index, "tie_sd"], sd)
    assert close(shown.loc[exact.index, "min"], exact["min"])
    z = (shown.loc[exact.index, "oblivious"] - exact["value"]) / sd.where(sd > 0)
    # z as printed, 2 decimals (no value here lies beyond every ordering: no ∞)
    assert (shown.loc[exact.index, "z"] == z.fillna(0).map("{:+.2f}".format)).all()
    flagged = z.abs() > 2
    assert (shown.loc[exact.index, "flagged"] == flagged).all()
    said = " ".join(w.value for w in at.warning)
    for run, measure in flagged[flagged].index:  # every flagged value is named in words
        assert f"{run} {measure}: trec_eval" in said
    profile = table(at, columns={"share_tied_rows"}).set_index("run")
    for name, run in runs.items():
        assert profile.loc[name, "share_tied_rows"] == spread.tie_profile(run)["share_tied_rows"]
    assert "sampled" not in shown  # the sampled mode is drawn on request


def test_changed_settings_reach_tiecore(sample):
    """Tie-break, gain, samples and seed as chosen in the sidebar (relevance level: LETOR test)."""
    runs, qrels = sample
    at = goto(new_app(), "overview")
    at.toggle(key="overview_sampled").set_value(True)
    at.sidebar.selectbox(key="tiebreak").set_value("docno_asc")
    at.sidebar.radio(key="gain").set_value("exp")
    at.sidebar.number_input(key="samples").set_value(50)
    at.sidebar.number_input(key="seed").set_value(3)
    at.run()
    assert_clean(at)
    shown = table(at, columns={"oblivious", "aware", "sampled"}).set_index(["run", "measure"])
    measures = list(with_gain(DEFAULT_MEASURES, "exp")[0])
    assert any("gain=exp" in m for m in measures)
    assert set(shown.index.get_level_values("measure")) == set(measures)
    args = dict(samples=50, seed=3)
    for ties in ("oblivious", "aware", "sampled"):
        expected = tiecore.evaluate(runs, qrels, measures, ties=ties, tiebreak="docno_asc", **args)
        expected = expected.set_index(["run", "measure"])["value"]
        assert close(shown.loc[expected.index, ties], expected), ties


def test_cached_results_sliced_from_every_offered_measure_equal_tiecore(sample):
    """A small data set is scored on every offered measure once; slices equal direct calls."""
    runs, qrels = sample
    dataset = data.robust03_sample()
    assert len(dataset.runs) <= cache.WIDE_RUNS
    offered = cache.offered_measures()
    assert "nDCG(gain=exp)@10" in offered and "Bpref" in offered
    chosen = ("nDCG(gain=exp)@10", "P@7", "AP")  # P@7 is typed in, not offered
    assert cache.computed_measures(dataset, chosen) == ("P@7", *offered)
    # another tie-break is a look aside: the chosen measures only
    assert cache.computed_measures(dataset, chosen, tiebreak="docno_asc") == chosen
    names = dataset.names[::-1][:3]
    settings = Settings(measures=chosen, tiebreak="docno_asc")
    for ties in ("oblivious", "aware"):
        for per_query in (False, True):
            shown = cache.evaluate(dataset, settings, ties, names=names, per_query=per_query)
            expected = tiecore.evaluate(
                {n: runs[n] for n in names},
                qrels,
                list(chosen),
                ties=ties,
                tiebreak="docno_asc",
                per_query=per_query,
            )
            pd.testing.assert_frame_equal(shown, expected)
    exact = spread.evaluate_spread(runs, qrels, list(chosen))
    pd.testing.assert_frame_equal(cache.spread_table(dataset, settings), exact)


def test_warm_up_results_are_what_the_mslr_overview_looks_up(tmp_path, monkeypatch):
    """The warm-up's files are found by the MSLR Overview, which then computes nothing itself.

    ``warmup.main`` runs here in-process; the app's caches are emptied first and the
    scoring functions are replaced by ones that fail, so the page must take every
    result from the warm-up, and the values it shows must equal tiecore's.
    """
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    warmup.main(tmp_path)
    planned = set(pickle.loads((tmp_path / "plan.pkl").read_bytes()))
    assert planned == {p.name for p in tmp_path.glob("*.pkl")} - {"plan.pkl"}
    st.cache_data.clear()
    st.cache_resource.clear()
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    warm._state().update(folder=str(tmp_path), process=finished)

    def fail(*args, **kwargs):
        raise AssertionError("computed although the warm-up had it")

    for name in ("_score", "_spread"):
        monkeypatch.setattr(cache, name, fail)
    monkeypatch.setattr(cache.policies, "tie_profiles", fail)
    monkeypatch.setattr(data, "dataset_from_letor", fail)
    at = new_app(source="mslr")
    assert "MSLR" in " ".join(c.value for c in at.caption)
    shown = table(at, columns={"oblivious", "aware", "tie_sd"})
    monkeypatch.undo()
    dataset = data.dataset_from_letor(
        data.MSLR_FILE.name, data.MSLR_FILE.read_bytes(), names=data.feature_names()
    )
    described = {n: dataset.describe(n) for n in dataset.names}
    measures = list(with_gain(DEFAULT_MEASURES, "linear")[0])
    expected = tiecore.evaluate(dict(dataset.runs), dataset.qrels, measures, ties="oblivious")
    expected = expected.assign(run=expected["run"].map(described))
    expected = expected.set_index(["run", "measure"])["value"]
    shown = shown.set_index(["run", "measure"])
    assert close(shown.loc[expected.index, "oblivious"], expected)
    st.cache_resource.clear()


def test_a_typed_measure_is_used_and_a_bad_one_is_reported():
    at = goto(new_app(), "overview")
    at.sidebar.multiselect(key="measures").set_value(["P@7", "nonsense@3"]).run()
    assert not at.exception
    assert any("nonsense@3" in e.value for e in at.error)
    shown = table(at, columns={"aware"})
    assert set(shown["measure"]) == {"P@7"}


def test_qrels_without_a_relevant_document_are_said_to_give_zeros():
    """Every qrels level 0: the sidebar says every measure is 0 under every tie-break,
    on every page, and the pages still run."""
    files, (name, text) = synthetic_trec()
    flat = "\n".join(line.rsplit(" ", 1)[0] + " 0" for line in text.decode().splitlines())
    dataset = data.dataset_from_trec(files, (name, (flat + "\n").encode()))
    at = new_app(uploaded_trec=dataset)
    at.sidebar.radio(key="source").set_value("trec").run()
    visit_all(at, "no relevant document")
    assert any("judge no document relevant" in w.value for w in at.warning)
    sample = goto(new_app(), "overview")
    assert not any("judge no document relevant" in w.value for w in sample.warning)


def test_measures_typed_in_the_text_box_are_taken_as_written():
    """The multiselect turns a typed DCG@5 into the highlighted nDCG@5 on Enter; the text
    box takes DCG@5, CG and RBP(p=0.5,gain=exp) as written (commas inside parentheses
    kept), the same list as the CLI's -m, and reports a bad name."""
    at = goto(new_app(), "overview")
    at.sidebar.multiselect(key="measures").set_value(["AP"]).run()
    at.sidebar.text_input(key="more_measures").set_value("DCG@5, CG,RBP(p=0.5,gain=exp)").run()
    assert_clean(at)
    shown = table(at, columns={"aware"})
    assert list(dict.fromkeys(shown["measure"])) == ["AP", "DCG@5", "CG", "RBP(p=0.5,gain=exp)"]
    at.sidebar.text_input(key="more_measures").set_value("DCG@5, nonsense@3").run()
    assert any("nonsense@3" in e.value for e in at.error)


def test_measures_without_an_exact_spread_or_tie_groups_leave_no_page_broken():
    """GMAP (no exact spread), ERR@10 and infAP (no split by tie group) typed in the
    sidebar: every page runs; the pages that need the exact spread leave GMAP out and
    say so, the tie anatomy offers only the measures whose variance splits by group,
    and the variance page shows infAP without its split, saying why."""
    at = new_app()
    at.sidebar.multiselect(key="measures").set_value(["GMAP", "ERR@10", "infAP", "AP"]).run()
    visit_all(at, "hooked measures")
    goto(at, "overview")
    shown = table(at, columns={"aware"})
    assert set(shown["measure"]) == {"ERR@10", "infAP", "AP"}
    assert any("Not on this page: GMAP" in c.value for c in at.caption)
    goto(at, "tie_anatomy")
    assert at.selectbox(key="anatomy_measure").options == ["AP"]
    assert any("Not on this page: GMAP, ERR@10, infAP" in c.value for c in at.caption)
    goto(at, "rankings")
    assert "GMAP" not in at.selectbox(key="rankings_measure").options
    goto(at, "variance")
    at.selectbox(key="variance_measure").set_value("infAP").run()
    assert_clean(at)
    assert any("does not split by tie group" in m.value for m in at.info)
    at.sidebar.multiselect(key="measures").set_value(["GMAP"]).run()
    for page in ("overview", "tie_anatomy", "variance", "rankings"):
        goto(at, page)
        assert_clean(at)
        assert any("nothing to show for GMAP" in m.value for m in at.info), page


def test_tie_anatomy_opens_on_tie_variance_and_shows_the_paper_formula(sample):
    runs, qrels = sample
    at = goto(new_app(), "tie_anatomy")
    run = next(s for s in at.selectbox if s.label.startswith("System")).value
    qid = next(s for s in at.selectbox if s.label.startswith("Query")).value
    exact = spread.evaluate_spread(runs, qrels, "P@10", per_query=True)
    overall = exact[exact["qid"].isna()].set_index("run")["var"]
    assert run == overall.idxmax()  # the system with the most tie variance
    per_query = exact[(exact["run"] == run) & (exact["qid"].notna())].set_index("qid")
    assert per_query.loc[qid, "var"] == per_query["var"].max() > 0
    expected = float(per_query.loc[qid, "value"])
    assert float(metric(at, "aware")) == pytest.approx(expected, abs=5e-5)
    formula = next(x.value.strip("$\n ") for x in at.latex if "P@10" in x.value)
    assert formula.startswith(r"\mathrm{P@10}") and formula.endswith(f"= {expected:.4f}")
    groups = spread.tie_groups(runs[run], qrels, "P@10", qid=qid)
    straddling = groups[groups["straddles_cutoff"]]
    if len(straddling):
        assert int(metric(at, "n_c")) == int(straddling["size"].iloc[0])
        assert int(metric(at, "t_c")) == int(straddling["start_rank"].iloc[0]) - 1
    assert float(metric(at, "sd over")) == pytest.approx(
        math.sqrt(per_query.loc[qid, "var"]), abs=5e-5
    )
    oblivious = tiecore.evaluate(runs[run], qrels, "P@10", ties="oblivious", per_query=True)
    value = oblivious.set_index("qid").loc[qid, "value"]
    assert float(metric(at, "oblivious")) == pytest.approx(value, abs=5e-5)
    listing = table(at, columns={"rank", "docno", "level"})
    order = runs[run][runs[run]["qid"] == qid].sort_values(["score", "docno"], ascending=False)
    assert listing["docno"].tolist() == order["docno"].tolist()  # trec_eval's order


def test_variance_page_agrees_with_exact_and_sampled_values(sample):
    runs, qrels = sample
    at = goto(new_app(), "variance")
    run = next(s for s in at.selectbox if s.label.startswith("System")).value
    aware = tiecore.evaluate(runs[run], qrels, "P@10")["value"].iloc[0]
    sampled = tiecore.evaluate({run: runs[run]}, qrels, "P@10", ties="sampled", samples=200, seed=0)
    exact = spread.evaluate_spread(runs, qrels, "P@10")
    assert run == exact.sort_values("var", ascending=False)["run"].iloc[0]
    half = 5e-5 + 1e-12  # shown to 4 decimals; a value such as 0.09655 may round either way
    assert float(metric(at, "aware")) == pytest.approx(aware, abs=half)
    assert float(metric(at, "sampled mean")) == pytest.approx(sampled["value"].iloc[0], abs=half)
    sd = math.sqrt(exact.set_index("run").loc[run, "var"])
    assert float(metric(at, "exact sd")) == pytest.approx(sd, abs=5e-6)
    assert float(metric(at, "sampled sd")) == pytest.approx(sampled["std"].iloc[0], abs=5e-6)


def test_rankings_page_shows_tiecore_compare_and_is_never_silent(sample):
    runs, qrels = sample
    at = goto(new_app(), "rankings")
    assert_clean(at)
    result = compare.compare(runs, qrels, "P@10", samples=200, seed=0, n_resamples=1000)
    pairs = table(at, columns={"a", "b", "t_pvalue", "within_tie_noise"})
    expected = result.pairs.loc[list(zip(pairs["a"], pairs["b"], strict=True))]
    for column in ("mean_diff", "p_beats_sampled", "tie_noise"):
        assert close(pairs[column], expected[column]), column
    for column in ("t_pvalue", "randomization_pvalue"):  # as papers print them: "< 0.001"
        assert list(pairs[column]) == [report.format_pvalue(p) for p in expected[column]]
    assert len(pairs) == len(runs) * (len(runs) - 1) // 2
    said = " ".join(m.value for m in (*at.success, *at.warning, *at.info, *at.markdown))
    if result.swaps.empty:
        assert "No system changes rank" in said
    else:  # whole ranks (1, 2, 2, 4): a system sharing a rank it held alone moves too
        aware, trec = (result.scores[c].round(10) for c in ("aware", "trec_eval"))
        moved = (
            aware.rank(ascending=False, method="min") != trec.rank(ascending=False, method="min")
        ).sum()
        assert f"{moved} system{' changes' if moved == 1 else 's change'} rank" in said
    assert "whose order ties could decide" in said or "No pair is close" in said
    if "No pair is close" in said:  # the nearest pair named all the same, with its gap
        nearest = report.nearest_pairs(result.pairs, count=1, order=None).iloc[0]
        assert f"gap {abs(nearest['mean_diff']):.4f}" in said and nearest["a"] in said


def test_scoring_functions_rank_letor_features_like_tiecore():
    at = new_app()
    at.sidebar.radio(key="source").set_value("mslr").run()
    dataset = cache.mslr_sample()
    chosen = ["f1", "f2", "f3", *map("f{}".format, range(126, 131))]
    at.sidebar.multiselect(key=f"features_{dataset.key}").set_value(chosen).run()
    at = goto(at, "scoring_functions")
    assert_clean(at)
    shown = table(at, columns={"aware", "trec_eval", "rank_depends_on_tiebreak"}).set_index("run")
    assert list(shown.index.sort_values()) == sorted(
        ["f1", "f2", "f3", *map("f{}".format, range(126, 131))]
    )
    path = SAMPLE / "mslr" / "msn1.fold1.test.5k.txt.gz"
    runs, qrels = tiecore.read_letor(path, features=[1, 2, 3, 126, 127, 128, 129, 130])
    ranks = {}
    for policy in ("trec_eval", "docno_asc", "file_order", "optimistic", "pessimistic"):
        expected = tiecore.evaluate(runs, qrels, "P@10", ties="oblivious", tiebreak=policy)
        expected = expected.set_index("run")["value"]
        assert close(shown.loc[expected.index, policy], expected), policy
        ranks[policy] = expected.rank(ascending=False, method="min")
    aware = tiecore.evaluate(runs, qrels, "P@10").set_index("run")["value"]
    assert close(shown.loc[aware.index, "aware"], aware)
    spread_of_ranks = pd.DataFrame({p: ranks[p] for p in ("trec_eval", "docno_asc", "file_order")})
    depends = spread_of_ranks.max(axis=1) > spread_of_ranks.min(axis=1)
    assert (shown.loc[depends.index, "rank_depends_on_tiebreak"] == depends).all()
    goto(at, "builder")  # the builder on the same features
    assert_clean(at)
    built = table(at, columns={"levels", "share_tied_rows", "tie_sd"})
    assert len(built) == 9 and built["share_tied_rows"].iloc[-1] >= built["share_tied_rows"].iloc[0]


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
    assert "2 uploaded runs, qrels" in " ".join(c.value for c in at.caption)


def test_one_uploaded_run_is_named_in_the_singular():
    files = [(RUN_FILES[0].name, RUN_FILES[0].read_bytes())]
    dataset = data.dataset_from_trec(files, (QRELS_FILE.name, QRELS_FILE.read_bytes()))
    assert dataset.label.startswith("1 uploaded run, qrels")


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
    assert messages[0].startswith(str(expected.value))
    assert "bad.run" in messages[0] and "line 2" in messages[0] and "oops" in messages[0]
    assert "The previous data were kept: Robust03 sample" in messages[0]
    shown = table(at, columns={"aware"})  # still the sample
    assert set(shown["run"]) == {
        p.name.removeprefix("input.").removesuffix(".gz") for p in RUN_FILES
    }


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
    assert any(
        "broken.qrels, line 2" in e.value and "previous data were kept" in e.value for e in at.error
    )
    assert set(table(at, columns={"aware"})["run"]) == {"alpha", "beta", "gamma"}


def test_letor_upload_with_chosen_features_and_relevance_levels():
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
    key = next(t.key for t in at.sidebar.multiselect if t.key.startswith("features_"))
    at.sidebar.multiselect(key=key).set_value(["f1", "f3"]).run()
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
    at.sidebar.number_input(key="rel_level").set_value(3).run()  # above what the qrels hold
    assert not at.exception
    said = " ".join(w.value for w in at.warning)
    assert "Relevance level 3 refused: the qrels hold levels up to 2" in said
    shown = table(at, columns={"aware"})
    assert close(
        shown.merge(expected, on=["run", "measure"])[["aware"]].to_numpy().ravel(), merged["value"]
    )
    goto(at, "scoring_functions")
    assert not at.exception
    assert len(at.sidebar.multiselect(key=key).options) == 3  # the file's features, no more
    with pytest.raises(InputError, match="feature f7 is not in the file"):
        data.select_features(data.dataset_from_letor("tiny.svm", LETOR), ["f1", "f7"])


def test_a_bad_letor_upload_is_reported():
    at = new_app()
    at.sidebar.radio(key="source").set_value("letor").run()
    bad = LETOR + b"1 qid:4 1:2 2:abc\n"
    at.sidebar.file_uploader(key="upload_letor").set_value(("bad.svm", bad, "text/plain"))
    at.run()
    assert not at.exception
    with pytest.raises(InputError) as expected:
        tiecore.read_letor(_named(bad, "bad.svm"))
    assert any(e.value.startswith(str(expected.value)) for e in at.error)
    assert "line 10" in str(expected.value)


# ----------------------------------------------------------------------------- playground


def test_playground_orderings_average_to_the_aware_value():
    at = goto(new_app(), "playground")
    assert_clean(at)
    docs = playground_default()
    assert int(metric(at, "orderings")) == ref.count_orderings(docs["score"].tolist())
    labels = dict(zip(docs["docno"], docs["level"], strict=True))
    brute = [
        ref.reciprocal_rank([labels[d] for d in order], list(labels.values()), 1)
        for order in ref.orderings(docs["score"].tolist(), docs["docno"].tolist())
    ]
    assert float(metric(at, "mean over orderings")) == pytest.approx(np.mean(brute), abs=5e-7)
    assert float(metric(at, "tie-aware value")) == pytest.approx(np.mean(brute), abs=5e-7)
    three = [float(metric(at, p)) for p in ("trec_eval", "docno ascending", "file order")]
    assert three == pytest.approx([1 / 2, 1 / 4, 1 / 3], abs=5e-5)  # the three-numbers example
    assert any("RR = " in x.value and "\\binom" in x.value for x in at.latex)  # RR's own formula


@pytest.mark.parametrize(
    ("measure", "marker"),
    [
        ("AP", "AP = "),
        ("nDCG@3", "IDCG"),
        ("Bpref", "Hypergeometric"),
        ("P@3", "R_c + (k - t_c)"),
        ("F1@3", "(k + R)/2"),
    ],
)
def test_playground_shows_each_measure_its_own_formula(measure, marker):
    at = goto(new_app(), "playground")
    at.selectbox(key="playground_measure").set_value(measure).run()
    assert_clean(at)
    assert any(marker in x.value for x in at.latex), [x.value for x in at.latex]
    pieces = table(at, columns={"contribution"})
    docs = playground_default()
    levels = docs["level"].tolist()
    labels = dict(zip(docs["docno"], levels, strict=True))
    spec = ref.Spec(*_spec(measure))
    brute = [
        ref.measure(spec, [labels[d] for d in o], levels)
        for o in ref.orderings(docs["score"].tolist(), docs["docno"].tolist())
    ]
    assert pieces["contribution"].sum() == pytest.approx(np.mean(brute), abs=1e-12)


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
    docs = playground_default()
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


def test_playground_names_duplicate_and_incomplete_rows_and_shows_nothing_stale():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    goto(at, "playground")
    at.session_state["playground_editor"] = {
        "edited_rows": {1: {"docno": "d4"}},
        "added_rows": [{"docno": "d9", "level": 1}],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("docno d4 appears twice (rows 1 and 2)" in e for e in errors), errors
    assert any("row 7 (d9) has no score" in e for e in errors), errors
    assert not at.metric and not at.get("plotly_chart")  # no stale results


def playground_default() -> pd.DataFrame:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_pg", ROOT / "app_pages" / "playground.py")
    source = spec.loader.get_source("_pg")
    start = source.index("DEFAULT = pd.DataFrame(")
    end = source.index("\n)\n", start) + 2
    scope = {"pd": pd}
    exec(source[start:end], scope)
    return scope["DEFAULT"].copy()


def _spec(name: str) -> tuple:
    family, _, cutoff = name.partition("@")
    return family, int(cutoff) if cutoff else None


# ----------------------------------------------------------------------------- helpers, directly


def _named(content: bytes, name: str) -> io.BytesIO:
    stream = io.BytesIO(content)
    stream.name = name
    return stream


def test_read_trec_upload_returns_a_dataset_or_the_input_error_message():
    files, qrels = synthetic_trec()
    dataset = data.read_trec_upload(files, qrels)
    assert isinstance(dataset, data.Dataset)
    assert dataset.names == ["alpha", "beta", "gamma"]
    assert any("Q9" in note for note in dataset.notes)
    assert data.read_trec_upload(files, qrels).key == dataset.key
    assert data.read_trec_upload(files[:1], qrels).key != dataset.key
    bad = ("r.txt", b"1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n")
    message = data.read_trec_upload([bad], qrels)
    with pytest.raises(InputError) as expected:
        tiecore.read_run(_named(bad[1], "r.txt"))
    assert message == str(expected.value) and "r.txt" in message
    assert isinstance(data.read_trec_upload([], qrels), str)
    assert "gzip" in data.read_trec_upload([("cut.gz", gz("1 Q0 a 1 1 t\n")[:12])], qrels)


def test_read_letor_upload_and_feature_ranges():
    dataset = data.read_letor_upload("tiny.svm", LETOR, "2-3")
    assert dataset.names == ["f2", "f3"] and dataset.kind == "letor"
    assert data.read_letor_upload("tiny.svm", LETOR).names == ["f1", "f2", "f3"]
    assert "feature 4" in data.read_letor_upload("tiny.svm", LETOR, "4")
    assert "cannot read" in data.read_letor_upload("tiny.svm", LETOR, "x-y")
    assert data.parse_features(" 1-3, 7,5 ", range(1, 10)) == [1, 2, 3, 5, 7]
    assert data.parse_features("all", [3, 1]) == [1, 3]


def test_with_gain_gives_ndcg_the_chosen_gain_and_reports_bad_names():
    names, errors = with_gain(["nDCG@10", "P@5", "ndcg_cut_10", "bogus"], "exp")
    assert names == ("nDCG(gain=exp)@10", "P@5")
    assert len(errors) == 1 and "bogus" in errors[0]
    kept, _ = with_gain(["nDCG(ideal=max)@5"], "exp")  # other parameters survive
    assert kept == ("nDCG(gain=exp,ideal=max)@5",)


def test_provenance_names_every_setting_and_the_version():
    files, qrels = synthetic_trec()
    dataset = data.dataset_from_trec(files, qrels)
    settings_ = Settings(("P@10",), 2, "exp", "docno_asc", 300, 9)
    prov = cache.provenance(dataset, settings_, measure="P@10", ties="aware")
    for key, value in (
        ("measure", "P@10"),
        ("tie mode", "aware"),
        ("tie break", "docno_asc"),
        ("samples", 300),
        ("seed", 9),
        ("relevance level", 2),
        ("tiecore version", tiecore.__version__),
    ):
        assert prov[key] == value
    assert dataset.label in prov["data set"]


def test_size_bins_keep_every_group_and_row():
    sizes = pd.DataFrame({"size": [1, 2, 3, 4, 5, 9, 1000], "groups": [10, 4, 2, 1, 1, 1, 1]})
    bins = charts.size_bins(sizes)
    assert list(bins["sizes"]) == ["1", "2", "3–4", "5–8", "9–16", "513–1024"]
    assert bins["groups"].sum() == sizes["groups"].sum()
    assert bins["rows"].sum() == (sizes["size"] * sizes["groups"]).sum()
    assert math.isclose(bins["share_rows"].sum(), 1.0)


def test_short_labels_stay_unique():
    names = ["a_rather_long_run_name_1", "a_rather_long_run_name_2", "x"]
    labels = charts.short_labels(names, 10)
    assert len(set(labels)) == 3 and all(len(label) <= 14 for label in labels)
    assert labels[2] == "x"


@pytest.mark.parametrize("rows", range(1, 9))
def test_stacked_layout_is_a_valid_plotly_layout(rows):
    import plotly.graph_objects as go

    layout, axes = charts.stacked_layout(
        rows, titles=[f"t{i}" for i in range(rows)], heights=range(1, rows + 1)
    )
    figure = go.Figure([go.Scatter(x=[1], y=[1], xaxis=x, yaxis=y) for x, y in axes], layout)
    domains = [figure.layout[y.replace("y", "yaxis")].domain for _, y in axes]
    assert domains[0][1] == 1 and domains[-1][0] == 0
    assert all(a[0] > b[1] for a, b in itertools.pairwise(domains))
    assert len(figure.layout.annotations) == rows


def test_no_page_computes_a_measure_itself():
    """Pages call tiecore through app_lib.cache, tiecore.explain or tiecore.report, never the
    engine, the evaluation core or a measure family's module."""
    import re

    forbidden = (
        r"tiecore\.(engine|evaluation|measures\.\w)|import (kernels|profiles|sampling)"
        r"|\bquery_values\b|Ranking\.build|math\.comb"
    )
    for path in (ROOT / "app_pages").glob("*.py"):
        found = re.findall(forbidden, path.read_text())
        assert not found, (path.name, found)


# ----------------------------------------------------------------------------- speed helpers


def test_sampled_results_are_kept_per_run_and_measure(sample, monkeypatch):
    """A measure change samples the new measure only; the frames equal one tiecore call."""
    runs, qrels = sample
    dataset = data.robust03_sample()
    names = dataset.names[:2]
    calls = []
    original = tiecore.evaluate

    def counting(runs_, qrels_, measures, **kwargs):
        calls.append((tuple(runs_), tuple(measures)))
        return original(runs_, qrels_, measures, **kwargs)

    monkeypatch.setattr(tiecore, "evaluate", counting)
    sampled_anew = {  # measures -> what each of the two runs samples
        ("P@10", "AP"): ("P@10", "AP"),
        ("AP", "Bpref"): ("Bpref",),
        ("Bpref", "P@10"): None,  # both kept
    }
    for measures, anew in sampled_anew.items():
        calls.clear()
        settings = Settings(measures=measures, samples=20, seed=11)
        shown = cache.evaluate(dataset, settings, "sampled", names=names, per_query=True)
        expected = original(
            {n: runs[n] for n in names}, qrels, list(measures), ties="sampled", samples=20,
            seed=11, per_query=True,
        )  # fmt: skip
        pd.testing.assert_frame_equal(shown, expected)
        assert calls == ([] if anew is None else [(tuple(names), anew)]), measures
    # runs that miss different measures: one call per set of missing measures
    calls.clear()
    settings = Settings(measures=("RR",), samples=20, seed=11)
    cache.evaluate(dataset, settings, "sampled", names=names[:1], per_query=True)
    settings = Settings(measures=("RR", "P@5"), samples=20, seed=11)
    shown = cache.evaluate(dataset, settings, "sampled", names=names, per_query=True)
    expected = original(
        {n: runs[n] for n in names}, qrels, ["RR", "P@5"], ties="sampled", samples=20, seed=11,
        per_query=True,
    )  # fmt: skip
    pd.testing.assert_frame_equal(shown, expected)
    assert calls == [((names[0],), ("RR",)), ((names[0],), ("P@5",)), ((names[1],), ("RR", "P@5"))]


def test_a_kept_figure_is_built_once_and_drawn_from_its_dict(monkeypatch):
    """charts.show(cache=...) calls the builder once per key; dict figures get the layout."""
    built = []

    def figure() -> dict:
        built.append(1)
        return {"data": [{"type": "bar", "x": [1, 2], "y": [3, 4]}], "layout": {}}

    drawn = []
    monkeypatch.setattr(charts.st, "plotly_chart", lambda fig, **kw: drawn.append(fig.to_dict()))
    key = ("test", np.random.default_rng().integers(1 << 62))
    for _ in range(2):
        charts.show(figure, "k", cache=key, height=300, title="t", yaxis={"title": "y"})
    assert len(built) == 1 and len(drawn) == 2
    layout = drawn[0]["layout"]
    assert layout["height"] == 300 and layout["title"]["text"] == "t"
    assert layout["yaxis"]["title"] == {"text": "y"}  # plotly.js's form of an axis title
    charts.show(figure, "k", cache=key, height=400)  # another layout: built again
    assert len(built) == 2


def test_a_chart_downloads_as_png_of_its_size():
    """The PNG button's bytes: a PNG (its signature) whose header gives the figure's size at
    twice the resolution (read with struct, not with the code that wrote it)."""
    import struct

    assert charts._browser() is not None  # Debian's chromium (scripts/test.sh installs it)
    spec = {"data": [{"type": "bar", "x": [1, 2], "y": [3, 4]}], "layout": {"height": 300}}
    image = charts.png(spec, width=500, scale=2)
    assert image[:8] == b"\x89PNG\r\n\x1a\n" and image[12:16] == b"IHDR"
    assert struct.unpack(">II", image[16:24]) == (1000, 600)


def chart_specs(at: AppTest) -> dict[str, dict]:
    """The page's plotly charts as plotly JSON, by key."""
    import json

    return {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def test_overview_charts_are_valid_plotly_figures():
    """The Overview's charts, built as plain dicts, pass plotly's own validation."""
    import plotly.graph_objects as go

    at = new_app()
    specs = chart_specs(at)
    assert {"overview_z", "overview_modes"} <= set(specs)
    for key in ("overview_z", "overview_modes"):
        figure = go.Figure(specs[key])  # raises on an unknown or ill-typed property
        assert len(figure.data) >= 1, key
    modes = go.Figure(specs["overview_modes"])
    assert len(modes.data) == 3  # one measure: range, aware, oblivious (light to draw)
    assert [t.type for t in modes.data] == ["bar", "scatter", "scatter"]
    heat = go.Figure(specs["overview_z"])
    assert heat.layout.yaxis.dtick == 1 and modes.layout.yaxis.dtick == 1  # no dropped labels


def modes_chart(at: AppTest) -> tuple[str, pd.DataFrame]:
    """The modes chart's title and, per system as drawn (top first), its values."""
    spec = chart_specs(at)["overview_modes"]
    bar, aware, oblivious, *more = spec["data"]
    frame = pd.DataFrame(
        {
            "run": bar["hovertext"],
            "label": bar["y"],
            "min": bar["base"],
            "max": np.add(bar["base"], bar["x"]),
            "aware": aware["x"],
            "tie_sd": aware["error_x"]["array"],
            "oblivious": oblivious["x"],
            "z": [row[0] for row in oblivious["customdata"]],
            "red": [c == charts.FLAG_COLOR for c in oblivious["marker"]["color"]],
        }
    )
    if more:
        frame["sampled"] = more[0]["x"]
    return spec["layout"]["title"]["text"], frame


def test_overview_modes_chart_draws_the_chosen_measure_from_tiecore(sample):
    """One measure at a time: the largest shift first, then the one chosen; values = tiecore."""
    runs, qrels = sample
    at = goto(new_app(), "overview")
    exact = spread.evaluate_spread(runs, qrels, MEASURES).set_index(["measure", "run"])
    oblivious = tiecore.evaluate(runs, qrels, MEASURES, ties="oblivious")
    oblivious = oblivious.set_index(["measure", "run"])["value"]
    sd = np.sqrt(exact["var"])
    z = ((oblivious - exact["value"]) / sd.where(sd > 0)).fillna(0)
    shift = (oblivious - exact["value"]).abs()  # what a paper prints, not z
    most = shift.groupby(level="measure").max().idxmax()
    control = at.segmented_control(key="overview_measure")
    assert control.value == most and list(control.options) == MEASURES
    for measure in (most, "AP", "P@10"):
        if control.value != measure:
            control.set_value(measure).run()
            assert_clean(at)
        title, drawn = modes_chart(at)
        assert title.startswith(f"{measure}:")
        expected = exact.loc[measure].loc[drawn["run"]]
        assert close(drawn["aware"], expected["value"]) and close(drawn["min"], expected["min"])
        assert close(drawn["max"], expected["max"])
        assert close(drawn["tie_sd"], sd.loc[measure].loc[drawn["run"]])
        assert close(drawn["oblivious"], oblivious.loc[measure].loc[drawn["run"]])
        assert close(drawn["z"], z.loc[measure].loc[drawn["run"]])
        assert list(drawn["red"]) == list(z.loc[measure].loc[drawn["run"]].abs() > 2)
        assert list(drawn["aware"]) == sorted(drawn["aware"], reverse=True)  # best first
        assert sorted(drawn["run"]) == sorted(runs)
        control = at.segmented_control(key="overview_measure")
    at.selectbox(key="overview_sort").set_value("z").run()
    _, drawn = modes_chart(at)
    assert list(drawn["z"].abs()) == sorted(drawn["z"].abs(), reverse=True)
    at.selectbox(key="overview_sort").set_value("name").run()
    _, drawn = modes_chart(at)
    assert list(drawn["run"]) == sorted(runs, key=str.lower)


def test_overview_modes_chart_follows_the_gain_and_draws_sampled_values(sample):
    """nDCG@10 chosen, then exp gain: the chart shows nDCG(gain=exp)@10; sampled mode adds it."""
    runs, qrels = sample
    at = goto(new_app(), "overview")
    at.segmented_control(key="overview_measure").set_value("nDCG@10").run()
    at.sidebar.radio(key="gain").set_value("exp").run()
    assert_clean(at)
    exp10 = "nDCG(gain=exp)@10"
    assert at.segmented_control(key="overview_measure").value == exp10
    at.toggle(key="overview_sampled").set_value(True)
    at.sidebar.number_input(key="samples").set_value(20)
    at.run()
    assert_clean(at)
    title, drawn = modes_chart(at)
    assert title.startswith(f"{exp10}:")
    aware = tiecore.evaluate(runs, qrels, [exp10], ties="aware").set_index("run")["value"]
    assert close(drawn["aware"], aware.loc[drawn["run"]])
    drawn_sampled = tiecore.evaluate(runs, qrels, [exp10], ties="sampled", samples=20, seed=0)
    assert close(drawn["sampled"], drawn_sampled.set_index("run")["value"].loc[drawn["run"]])
    at.sidebar.multiselect(key="measures").set_value(["AP", "P@10"]).run()  # measure gone
    assert_clean(at)
    assert at.segmented_control(key="overview_measure").value in ("AP", "P@10")


def test_bundled_mslr_names_are_the_shared_list():
    """The bundled MSLR sample's feature names are the shared list's, as
    sample_data/make_sample_data.py copies it (the list once called features 107-110
    BM26-BM29: a search for BM25 found 1 of 5)."""
    from shared_data import DATA

    shared = DATA / "mslr_web10k_sample" / "feature_names.txt"
    bundled = data.MSLR_FILE.parent / "feature_names.txt"
    assert bundled.read_text() == shared.read_text()
    assert sum("BM25" in name for name in data.feature_names().values()) == 5
