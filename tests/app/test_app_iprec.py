"""The Variance page's 11-point interpolated precision curve, driven by streamlit's AppTest.

The table the page shows (oblivious, aware, sd, min, max per recall level) is
recomputed here with :func:`tiecore.evaluate` and :func:`tiecore.spread.evaluate_spread`
and must agree; a run whose exact IPrec tiecore refuses (a tie group past
:data:`app_lib.cache.IPREC_BUDGET`, the steps the page waits for, lowered here) gets
tiecore's reason in words
and the sampled curve, and no exception.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from test_app import (  # noqa: F401  (no_warm_up: an autouse fixture)
    QRELS_FILE,
    RUN_FILES,
    assert_clean,
    close,
    goto,
    new_app,
    no_warm_up,
    table,
)

import tiecore
from app_lib import cache
from tiecore import spread
from tiecore.errors import InputError
from tiecore.measures import iprec as interpolated

#: trec_eval's 11 recall levels, as the measure names tiecore parses.
NAMES = [f"IPrec@{level / 10:.1f}" for level in range(11)]


@pytest.fixture(scope="module")
def sample():
    return tiecore.read_runs(RUN_FILES), tiecore.read_qrels(QRELS_FILE)


def values(frame, column: str = "value") -> np.ndarray:
    """A summary frame's column in the order of :data:`NAMES` (rows come in that order)."""
    assert len(frame) == len(NAMES)
    return frame[column].to_numpy(dtype=float)


def variance_page_for(run: str):
    """The Variance page for ``run``, interpolated precision among the sidebar's measures
    (the curve is drawn only then)."""
    at = new_app()
    at.sidebar.multiselect(key="measures").set_value(["P@10", "IPrec@0.5"]).run()
    goto(at, "variance")
    assert_clean(at)
    box = next(s for s in at.selectbox if s.label.startswith("System"))
    box.set_value(run)
    at.run()
    assert_clean(at)
    assert any(h.value == "Interpolated precision (11 points)" for h in at.subheader)
    return at


def curve(at) -> dict[str, np.ndarray]:
    """The IPrec chart's traces: name -> y values (the band's are max then min reversed)."""
    charts = [c for c in at.get("plotly_chart") if c.key == "variance_iprec"]
    assert len(charts) == 1
    traces = json.loads(charts[0].proto.spec)["data"]
    return {trace["name"]: np.asarray(decoded(trace["y"]), dtype=float) for trace in traces}


def decoded(y) -> list:
    """Plotly's JSON may hold arrays as ``{"dtype", "bdata"}`` (base64) or as lists."""
    if isinstance(y, dict):
        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]).tolist()
    return y


def test_iprec_table_equals_tiecore_oblivious_aware_and_spread(sample):
    runs, qrels = sample
    run = "pircRBa1"  # exact values, and a band: its min and max differ
    at = variance_page_for(run)
    shown = table(at, columns={"recall", "oblivious", "aware", "sd", "min", "max"})
    assert np.allclose(shown["recall"], np.arange(11) / 10)
    one = {run: runs[run]}
    oblivious = tiecore.evaluate(one, qrels, NAMES, ties="oblivious")
    aware = tiecore.evaluate(one, qrels, NAMES, ties="aware")
    exact = spread.evaluate_spread(one, qrels, NAMES)
    assert close(shown["oblivious"], values(oblivious))
    assert close(shown["aware"], values(aware))
    assert close(shown["aware"], values(exact))
    assert close(shown["sd"], np.sqrt(values(exact, "var")))
    assert close(shown["min"], values(exact, "min"))
    assert close(shown["max"], values(exact, "max"))
    assert (shown["max"] > shown["min"]).any()  # the band is not empty for this run
    drawn = curve(at)
    assert close(drawn["oblivious (trec_eval's order)"], values(oblivious))
    assert close(drawn["aware (exact mean)"], values(exact))
    band = values(exact, "max").tolist() + values(exact, "min")[::-1].tolist()
    assert close(drawn["min–max over orderings"], band)
    assert not at.warning


def test_a_refused_exact_curve_is_explained_and_the_sampled_one_shown(sample, monkeypatch):
    runs, qrels = sample
    run = "MU03rob01"  # a tie group of 176 docs, 19 relevant: past a budget of 1e6 steps
    monkeypatch.setattr(cache, "IPREC_BUDGET", 1e6)
    one = {run: runs[run]}
    with pytest.raises(InputError) as refused, interpolated.budget_scope(1e6):
        spread.evaluate_spread(one, qrels, NAMES)
    at = variance_page_for(run)
    said = [w.value for w in at.warning]
    assert any(
        "no exact tie-aware curve" in text and refused.value.problem in text for text in said
    )
    assert not any("ties=" in text or "expected" in text for text in said)  # no API arguments
    assert any("200 random tie-breaks" in text for text in said)  # the sidebar's samples
    shown = table(at, columns={"recall", "oblivious", "sampled", "sampled_sd"})
    assert "aware" not in shown.columns
    oblivious = tiecore.evaluate(one, qrels, NAMES, ties="oblivious")
    sampled = tiecore.evaluate(one, qrels, NAMES, ties="sampled", samples=200, seed=0)
    assert close(shown["oblivious"], values(oblivious))
    assert close(shown["sampled"], values(sampled))
    assert close(shown["sampled_sd"], values(sampled, "std"))
    drawn = curve(at)
    assert set(drawn) == {"oblivious (trec_eval's order)", "sampled (200 tie-breaks)"}
    assert close(drawn["sampled (200 tie-breaks)"], values(sampled))


def test_the_curve_is_drawn_only_when_interpolated_precision_is_asked_for():
    at = goto(new_app(), "variance")  # the default measures: no IPrec
    assert_clean(at)
    assert not [c for c in at.get("plotly_chart") if c.key == "variance_iprec"]
    assert not any(h.value == "Interpolated precision (11 points)" for h in at.subheader)
    assert any("IPrec@0.5" in c.value for c in at.caption)
