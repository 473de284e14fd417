"""trec_eval's set measures and counts: SetP, SetR, SetF, SetRelP, SetAP, NumRet, NumRel,
NumRelRet.

Checked against pytrec_eval per query (its ``set_P``, ``set_recall``, ``set_F``,
``num_ret``, ``num_rel``, ``num_rel_ret``), against trec_eval's own outputs (per query
and the ``all`` row, where trec_eval sums the counts), and by hand where a depth cuts a
tie group (the only way ties move them).  Brute force over every ordering covers them in
every mode through ``reference.all_specs`` (tests/evaluation/test_against_bruteforce.py,
tests/test_spread.py).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_data import TREC_EVAL, pytrec_values
from strategies import cases, rel_levels

import tiecore
from tiecore.measures import Measure

#: tiecore's name -> trec_eval's (and pytrec_eval's)
TREC_NAMES = {
    "SetP": "set_P",
    "SetR": "set_recall",
    "SetF": "set_F",
    "SetRelP": "set_relative_P",
    "SetAP": "set_map",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
}
COUNTS = ("NumRet", "NumRel", "NumRelRet")

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")


def per_query(frame: pd.DataFrame) -> dict[tuple[str, str], float]:
    rows = frame[frame["qid"].notna()]
    return {
        (str(q), str(m)): float(v)
        for q, m, v in zip(rows["qid"], rows["measure"], rows["value"], strict=True)
    }


def test_names_parse_to_the_families():
    for ours, trec in TREC_NAMES.items():
        assert str(Measure.parse(trec)) == ours == str(Measure.parse(ours))
        assert Measure.parse(ours).spec.cutoff == "none"
    with pytest.raises(tiecore.InputError):
        Measure.parse("SetP@10")


# ------------------------------------------------------------------ pytrec_eval


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(max_label_kinds=4), rel_levels)
def test_equal_to_pytrec_eval_per_query(case, rel_level):
    """trec_eval's tie-break (pytrec_eval's) in oblivious mode; aware agrees without a depth."""
    for qid in case.qrels_qids:  # trec_eval misreads a query whose levels are all negative
        case.queries[qid].qrels["~pad"] = 0
    run, qrels = case.run_frame(), case.qrels_frame()
    expected = pytrec_values(run, qrels, set(TREC_NAMES.values()), rel_level)
    for ties in ("oblivious", "aware"):
        got = per_query(
            tiecore.evaluate(
                run,
                qrels,
                list(TREC_NAMES),
                ties=ties,
                tiebreak="trec_eval",
                per_query=True,
                rel_level=rel_level,
            )
        )
        for qid in case.both_qids:
            for ours, trec in TREC_NAMES.items():
                assert got[qid, ours] == pytest.approx(expected[qid][trec], abs=1e-12), (
                    ties, qid, ours,
                )  # fmt: skip


# ---------------------------------------------------------- trec_eval's outputs


def golden(path) -> dict[tuple[str, str], float]:
    out = {}
    for line in path.read_text().splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        if name in TREC_NAMES.values():
            out[name, qid] = float(value)
    return out


GOLDEN_CASES = [
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"complete": True}),
    ("out.test.aqcM", "qrels.test", "results.trunc", {"complete": True, "depth": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"rel_level": 2}),
]


@pytest.mark.parametrize("out, qrels, run, options", GOLDEN_CASES, ids=lambda c: str(c))
def test_trec_eval_outputs(out, qrels, run, options):
    """Per query to trec_eval's 4 decimals; ``all``: the mean of set_*, the sum of num_*."""
    expected = golden(TREC_EVAL / out)
    frame = tiecore.evaluate(
        tiecore.read_run(TREC_EVAL / run), tiecore.read_qrels(TREC_EVAL / qrels), list(TREC_NAMES),
        ties="oblivious", tiebreak="trec_eval", per_query=True, **options,
    )  # fmt: skip
    got = per_query(frame)
    summary = frame[frame["qid"].isna()].set_index("measure")["value"]
    checked = 0
    for (trec, qid), value in expected.items():
        ours = next(o for o, t in TREC_NAMES.items() if t == trec)
        if qid != "all":
            assert got[qid, ours] == pytest.approx(value, abs=5e-5), (qid, ours)
        elif ours in COUNTS:  # trec_eval sums the counts over the queries
            total = sum(v for (q, m), v in got.items() if m == ours)
            assert total == value, ours
        else:
            assert summary[ours] == pytest.approx(value, abs=5e-5), ours
        checked += 1
    assert checked >= 4 * len(TREC_NAMES)


# ------------------------------------------------------------- ties and depth


def one_query(rows, qrels):
    run = pd.DataFrame([("q", d, float(s)) for d, s in rows], columns=["qid", "docno", "score"])
    judged = pd.DataFrame(
        [("q", d, lv) for d, lv in qrels.items()], columns=["qid", "docno", "level"]
    )
    return run, judged


def test_a_depth_cutting_a_tie_group_by_hand():
    """a (rel) alone, then b, c, d tied with one relevant (c), e (rel) below; depth 3
    keeps a and two of the three tied docs: E[num_rel_ret] = 1 + 2/3."""
    run, qrels = one_query(
        [("a", 3), ("b", 2), ("c", 2), ("d", 2), ("e", 1)], {"a": 1, "c": 1, "e": 1, "z": 1}
    )
    names = list(TREC_NAMES)
    aware = per_query(tiecore.evaluate(run, qrels, names, ties="aware", depth=3, per_query=True))
    rel_ret = 1 + 2 / 3
    expected = {
        "NumRet": 3,
        "NumRel": 4,
        "NumRelRet": rel_ret,
        "SetP": rel_ret / 3,
        "SetR": rel_ret / 4,
        "SetF": 2 * rel_ret / (3 + 4),
    }
    for name, value in expected.items():
        assert aware["q", name] == pytest.approx(value, abs=1e-15), name
    # without the depth nothing moves: every ordering retrieves the same set
    spread = tiecore.evaluate_spread(run, qrels, names)
    assert np.allclose(spread["var"], 0) and (spread["min"] == spread["max"]).all()
    cut = tiecore.evaluate_spread(run, qrels, ["NumRelRet", "SetP"], depth=3)
    cut = cut[cut["qid"].isna()].set_index("measure")
    # one relevant doc among three tied, two slots: hypergeometric, 2 * 1/3 * 2/3 * 1/2
    assert cut.loc["NumRelRet", "var"] == pytest.approx(2 / 9, abs=1e-15)
    assert cut.loc["SetP", "var"] == pytest.approx(2 / 9 / 9, abs=1e-15)
    assert (cut.loc["NumRelRet", "min"], cut.loc["NumRelRet", "max"]) == (1.0, 2.0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([None, 1, 2, 3, 5]))
def test_every_mode_equals_brute_force(case, depth):
    """Aware: the mean over all orderings; pessimistic / optimistic: their min and max."""
    specs = [ref.Spec(family) for family in TREC_NAMES]
    run, qrels = case.run_frame(), case.qrels_frame()
    names = [spec.name for spec in specs]
    aware = per_query(
        tiecore.evaluate(run, qrels, names, ties="aware", depth=depth, per_query=True)
    )
    ranges = {}
    for qid in case.both_qids:
        q = case.queries[qid]
        mean = ref.reference_aware(specs, q.scores, q.labels, q.levels, depth=depth)
        ranges[qid] = ref.reference_range(specs, q.scores, q.labels, q.levels, depth=depth)
        for spec in specs:
            assert math.isclose(aware[qid, spec.name], mean[spec], abs_tol=1e-12), (qid, spec)
    for policy, pick in (("optimistic", -1), ("pessimistic", 0)):
        got = per_query(
            tiecore.evaluate(
                run, qrels, names, ties="oblivious", tiebreak=policy, depth=depth, per_query=True
            )
        )
        for qid in case.both_qids:
            for spec in specs:
                assert got[qid, spec.name] == pytest.approx(ranges[qid][spec][pick], abs=1e-12)
