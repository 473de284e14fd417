"""IPrecAvg's (trec_eval's 11pt_avg) exact spread against every ordering of the ties.

The mean, population variance, min and max of the mean interpolated precision over the
recall levels, over all orderings of small tie-heavy runs (tests/reference.py), must equal
:func:`tiecore.measures.elevenpt.iprec_avg_spread` (to 1e-12) and what
``evaluate_spread`` prints of it; variance 0 exactly where min == max.  Both roundings
of the levels (``up``: trec_eval 9.0.x; ``nearest``: 10.0), trec_eval's eleven levels
and custom ones, with and without a depth.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from strategies import cases

import tiecore
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import Refusal
from tiecore.measures import Measure, elevenpt
from tiecore.measures.elevenpt import iprec_avg_spread, levels_of

NAMES = [
    "IPrecAvg",
    "IPrecAvg(round=nearest)",
    "IPrecAvg(levels=0.25;0.5;0.75)",
    "IPrecAvg(levels=0.25;0.5;0.75,round=nearest)",
    "IPrecAvg(levels=0.0;0.2;0.35;0.5;0.6;0.8;1.0)",
]
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
options = st.fixed_dictionaries(
    {"rel_level": st.sampled_from([1, 2]), "depth": st.one_of(st.none(), st.integers(1, 10))}
)


def brute(q, name: str, *, rel_level: int, depth: int | None) -> dict[str, float]:
    """Mean, population variance, min and max over every ordering of the query's ties."""
    spec = ref.Spec.parse(name)
    pairs = [
        (ref.measure(spec, sequence, q.levels, rel_level=rel_level, depth=depth), count)
        for sequence, count in ref.label_sequences(q.scores, q.labels).items()
    ]
    total = sum(count for _, count in pairs)
    mean = math.fsum(value * count for value, count in pairs) / total
    var = math.fsum((value - mean) ** 2 * count for value, count in pairs) / total
    values = [value for value, _ in pairs]
    return {"value": mean, "var": var, "min": min(values), "max": max(values)}


#: Tie-heavy runs with many relevant docs per group (several levels inside one group).
big_groups = cases(max_docs=12, max_label_kinds=2, max_score_values=2, max_queries=3)


@PROPERTY
@given(
    st.one_of(cases(max_docs=9), big_groups),
    options,
    st.sampled_from(NAMES),
    st.sampled_from([elevenpt.BLOCK, 8]),
    st.sampled_from([elevenpt.RESCALE, 1.5]),
)
def test_spread_is_every_orderings(case, opts, name, block, rescale):
    """Also with blocks of 8 floats (one pair and one run at a time, the sums carried) and
    with the sweeps rescaled at every step (as past 1e100 paths)."""
    judgments = Judgments.from_qrels(case.qrels_frame(), opts["rel_level"])
    ranking = Ranking.build(case.run_frame(), judgments)
    measure = Measure.parse(name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(elevenpt, "BLOCK", block)
        patch.setattr(elevenpt, "RESCALE", rescale)
        found = iprec_avg_spread(
            ranking,
            judgments,
            levels_of(measure),
            depth=opts["depth"],
            rounding=measure.param("round"),
        )
    qids = judgments.qids.tolist()
    for qid in case.both_qids:
        truth = brute(case.queries[qid], name, **opts)
        at = qids.index(qid)
        note(f"{qid}: {truth}")
        for column, value in truth.items():
            assert found[column][at] == pytest.approx(value, rel=0, abs=1e-12), (qid, column)


@settings(PROPERTY, max_examples=60)
@given(st.one_of(cases(max_docs=9), big_groups), options)
def test_evaluate_spread_prints_it(case, opts):
    """``evaluate_spread`` (``--spread``) gives each query's exact spread, variance 0
    exactly where min == max, and the summary row's variance the mean's."""
    run, qrels = case.run_frame(), case.qrels_frame()
    frame = tiecore.evaluate_spread({"r": run}, qrels, NAMES, per_query=True, **opts)
    assert (frame["var_method"] == "exact").all()
    rows = frame[frame["qid"].notna()]
    assert ((rows["var"] == 0) == (rows["min"] == rows["max"])).all()
    assert ((rows["min"] <= rows["value"]) & (rows["value"] <= rows["max"])).all()
    got = {(r.qid, r.measure): r for r in rows.itertuples(index=False)}
    for name in NAMES:
        label = str(Measure.parse(name))
        variances = []
        for qid in case.both_qids:
            truth = brute(case.queries[qid], name, **opts)
            var, low, high = ref.consistent_spread(
                truth["value"], truth["var"], truth["min"], truth["max"]
            )
            row = got[qid, label]
            assert row.value == pytest.approx(truth["value"], abs=1e-12)
            assert row.var == pytest.approx(var, abs=1e-12), (qid, label)
            assert row.min == pytest.approx(low, abs=1e-12) and row.max == pytest.approx(high)
            variances.append(row.var)
        summary = frame[frame["qid"].isna() & (frame["measure"] == label)]
        expected = math.fsum(variances) / len(variances) ** 2
        assert summary["var"].iloc[0] == pytest.approx(expected, abs=1e-12)


def test_one_group_by_hand():
    """Relevant a and c among three tied docs, levels 0 and 1: the placements {1,2},
    {1,3}, {2,3} give 11pt_avg 1, 5/6 and 2/3."""
    qrels = pd.DataFrame({"qid": "1", "docno": ["a", "c"], "level": 1})
    run = pd.DataFrame({"qid": "1", "docno": list("abc"), "score": 1.0})
    frame = tiecore.evaluate_spread(run, qrels, "IPrecAvg(levels=0.0;1.0)", per_query=True)
    row = frame.iloc[0]
    values = np.array([1.0, 5 / 6, 2 / 3])
    assert row["value"] == pytest.approx(values.mean(), abs=1e-15)
    assert row["var"] == pytest.approx(values.var(), abs=1e-15)
    assert (row["min"], row["max"]) == (pytest.approx(2 / 3), 1.0)


def test_large_group_agrees_with_sampling():
    """One group of 40 docs with 12 relevant, two groups around it: the exact variance
    within five standard errors of 4,000 sampled orderings' (beyond brute force)."""
    rng = np.random.default_rng(5)
    docs = [f"d{i}" for i in range(60)]
    scores = np.r_[np.full(10, 3.0), np.full(40, 2.0), np.full(10, 1.0)]
    rel = np.zeros(60, int)
    rel[rng.choice(10, 4, replace=False)] = 1
    rel[10 + rng.choice(40, 12, replace=False)] = 1
    rel[50 + rng.choice(10, 3, replace=False)] = 1
    run = pd.DataFrame({"qid": "1", "docno": docs, "score": scores})
    qrels = pd.DataFrame({"qid": "1", "docno": [*docs, "x1", "x2"], "level": [*rel, 1, 1]})
    exact = tiecore.evaluate_spread(run, qrels, "IPrecAvg", per_query=True).iloc[0]
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    measure = Measure.parse("IPrecAvg")
    draws = measure.spec.sample([measure], ranking, judgments, samples=4000, rngs=[3])[0][:, 0]
    assert abs(draws.mean() - exact["value"]) <= 5 * draws.std() / math.sqrt(draws.size)
    # the variance of a sample variance: (m4 - var^2) / samples
    centred = draws - draws.mean()
    error = math.sqrt(((centred**4).mean() - draws.var() ** 2) / draws.size)
    assert abs(draws.var() - exact["var"]) <= 5 * error
    assert exact["min"] <= draws.min() and draws.max() <= exact["max"]


def test_budget_refuses_with_what_to_ask():
    """A group whose covariance sweeps pass the budget is refused in one line that names
    the query, the group and what to ask instead."""
    docs = [f"d{i}" for i in range(30)]
    run = pd.DataFrame({"qid": "7", "docno": docs, "score": 1.0})
    qrels = pd.DataFrame({"qid": "7", "docno": docs[::3], "level": 1})
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    with pytest.raises(Refusal, match="query 7 has a tie group of 30 docs") as error:
        iprec_avg_spread(ranking, judgments, levels_of(Measure.parse("IPrecAvg")), budget=1e5)
    assert "\n" not in str(error.value) and "ties='aware'" in str(error.value)
