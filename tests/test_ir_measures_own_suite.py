"""ir_measures' own tests of its pytrec_eval provider, case by case, against tiecore's provider.

ir_measures' ``tests/test_pytrec_eval.py`` (github.com/terrierteam/ir_measures) checks its
pytrec_eval provider measure by measure (``test_NumRet``, ``test_NumQ``, ``test_NumRel``,
``test_Success``, ``test_SetP``, ``test_SetR``, ``test_SetAP``, ``test_SetF``,
``test_IPrec``, ``test_infAP``, ``test_nDCG``, ``test_P``, ``test_judged_only``).  None of
its code is used here: each test below gives the same qrels, run and measures to that
provider (the real package) and to ``tiecore_oblivious``, and asserts that they answer
alike, per query (``iter_calc``) and aggregated (``calc_aggregate``), and that the values
are those the suite expects.  Each test's docstring names the test it mirrors.  In
``tiecore_aware`` the same measures are supported, and on these runs, which have no ties,
give the same values.
"""

from __future__ import annotations

import ir_measures
import pytest
from ir_measures import (
    AP,
    RR,
    IPrec,
    NumQ,
    NumRel,
    NumRet,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    SetR,
    SetRelP,
    Success,
    infAP,
    nDCG,
)

from tiecore.ir_measures_provider import tiecore_aware, tiecore_oblivious

PYTREC = ir_measures.providers.PytrecEvalProvider()


def _qrels(rows: str) -> list:
    return list(ir_measures.read_trec_qrels(rows))


def _run(rows: str) -> list:
    return list(ir_measures.read_trec_run(rows))


#: The run of the count tests: two queries (the ranks given disagree with the scores;
#: trec_eval sorts by score).
RUN = _run("""
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D3 2 0.7 run
1 0 D4 3 0.3 run
1 0 D2 4 0.4 run
""")
#: The run of the other tests: query 1's D4 scored above D3.
RUN_B = _run("""
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D4 2 0.7 run
1 0 D3 3 0.3 run
1 0 D2 4 0.4 run
""")
#: The qrels of the count tests.
COUNT_QRELS = _qrels("""
0 0 D0 0
0 0 D1 1
0 0 D2 1
0 0 D3 2
0 0 D4 0
1 0 D0 1
1 0 D3 2
1 0 D5 2
""")
#: The qrels of the set and Success tests.
SET_QRELS = _qrels("""
0 0 D0 0
0 0 D1 1
0 0 D2 2
0 0 D3 2
0 0 D4 0
1 0 D0 1
1 0 D3 2
1 0 D5 0
""")
#: The qrels of infAP and nDCG: negative levels (pooled, unjudged).
POOLED_QRELS = _qrels("""
0 0 D0 1
0 0 D1 -1
0 0 D2 0
0 0 D3 2
0 0 D4 0
1 0 D0 1
1 0 D3 2
1 0 D4 -1
1 0 D5 0
""")


def alike(measures: list, qrels: list, run: list) -> dict:
    """Assert that tiecore_oblivious answers as the pytrec_eval provider (per query and
    aggregated, every value ``==``), and tiecore_aware within
    1e-15 (no ties here, but its means over orderings are formulas of their own: infAP's
    last bit may differ); return the per-query values, ``{(measure, qid): value}``."""
    expected = {(m.measure, m.query_id): m.value for m in PYTREC.iter_calc(measures, qrels, run)}
    for provider in (tiecore_oblivious, tiecore_aware):
        found = {(m.measure, m.query_id): m.value for m in provider.iter_calc(measures, qrels, run)}
        assert found.keys() == expected.keys()
        aggregate = provider.calc_aggregate(measures, qrels, run)
        expected_aggregate = PYTREC.calc_aggregate(measures, qrels, run)
        for key, value in [*expected.items(), *expected_aggregate.items()]:
            mine = found[key] if isinstance(key, tuple) else aggregate[key]
            if provider is tiecore_aware:
                assert mine == pytest.approx(value, rel=0, abs=1e-15), key
            else:
                assert mine == value, key
    return expected


def check(values: dict, measure, first: float, second: float) -> None:
    """Query 0's and query 1's values of ``measure``, as the suite asserts them (to 4
    places)."""
    assert values[(measure, "0")] == pytest.approx(first, abs=5e-5)
    assert values[(measure, "1")] == pytest.approx(second, abs=5e-5)


@pytest.mark.filterwarnings("ignore:relevance level 3 is above every level")
@pytest.mark.parametrize(
    ("measure", "first", "second", "total"),
    [
        (NumRet, 5, 4, 9),
        (NumRet(rel=1), 3, 1, 4),
        (NumRet(rel=2), 1, 1, 2),
        (NumRet(rel=3), 0, 0, 0),
    ],
)
def test_NumRet(measure, first, second, total):
    """Mirrors ``test_NumRet``: docs retrieved, and relevant ones at levels 1 to 3 (a
    sum over the queries)."""
    values = alike([measure], COUNT_QRELS, RUN)
    check(values, measure, first, second)
    assert tiecore_oblivious.calc_aggregate([measure], COUNT_QRELS, RUN)[measure] == total


def test_NumQ():
    """Mirrors ``test_NumQ``: 1 for each query, 2 in all."""
    values = alike([NumQ], COUNT_QRELS, RUN)
    check(values, NumQ, 1, 1)
    assert tiecore_oblivious.calc_aggregate([NumQ], COUNT_QRELS, RUN)[NumQ] == 2


def test_NumRel():
    """Mirrors ``test_NumRel``: the relevant qrels docs, retrieved or not."""
    qrels = _qrels("""
0 0 D0 0
0 0 D1 1
0 0 D2 1
0 0 D3 2
0 0 D4 0
1 0 D0 1
1 0 D3 2
1 0 D5 0
""")
    values = alike([NumRel], qrels, RUN)
    check(values, NumRel, 3, 2)
    assert tiecore_oblivious.calc_aggregate([NumRel], qrels, RUN)[NumRel] == 5


@pytest.mark.filterwarnings("ignore:relevance level 3 is above every level")
@pytest.mark.parametrize(
    ("measure", "first", "second", "mean"),
    [(Success @ 2, 1, 0, 0.5), (Success(rel=2) @ 2, 1, 0, 0.5), (Success(rel=3) @ 2, 0, 0, 0)],
)
def test_Success(measure, first, second, mean):
    """Mirrors ``test_Success``: at levels 1 to 3."""
    values = alike([measure], SET_QRELS, RUN_B)
    check(values, measure, first, second)
    assert tiecore_oblivious.calc_aggregate([measure], SET_QRELS, RUN_B)[measure] == mean


@pytest.mark.filterwarnings("ignore:relevance level 3 is above every level")
@pytest.mark.parametrize(
    ("measure", "first", "second", "mean"),
    [
        (SetP(rel=1), 0.6, 0.25, 0.425),
        (SetRelP(rel=1), 1.0, 0.5, 0.75),
        (SetP(rel=2), 0.4, 0.25, 0.325),
        (SetRelP(rel=2), 1.0, 1.0, 1.0),
        (SetP(rel=3), 0, 0, 0),
        (SetR(rel=1), 1.0, 0.5, 0.75),
        (SetR(rel=2), 1.0, 1.0, 1.0),
        (SetR(rel=3), 0, 0, 0),
        (SetAP(rel=1), 0.6, 0.125, 0.3625),
        (SetAP(rel=2), 0.4, 0.25, 0.325),
        (SetAP(rel=3), 0, 0, 0),
    ],
)
def test_set_measures(measure, first, second, mean):
    """Mirrors ``test_SetP`` (SetRelP too), ``test_SetR`` and ``test_SetAP``: at levels 1
    to 3."""
    values = alike([measure], SET_QRELS, RUN_B)
    check(values, measure, first, second)
    assert tiecore_oblivious.calc_aggregate([measure], SET_QRELS, RUN_B)[measure] == mean


@pytest.mark.filterwarnings("ignore:relevance level 3 is above every level")
def test_SetF():
    """Mirrors ``test_SetF``: beta 1, 0.5 and 2 (trec_eval's set_F parameter), level 3,
    and the four at once (ir_measures' provider runs one pass per beta)."""
    expected = {
        SetF(rel=1): (0.75, 0.33333, 0.5417),
        SetF(rel=1, beta=0.5): (0.6923, 0.3, 0.49615),
        SetF(rel=1, beta=2.0): (0.81818, 0.375, 0.59659),
        SetF(rel=3): (0, 0, 0),
    }
    for measure, (first, second, mean) in expected.items():
        values = alike([measure], SET_QRELS, RUN_B)
        check(values, measure, first, second)
        found = tiecore_oblivious.calc_aggregate([measure], SET_QRELS, RUN_B)[measure]
        assert found == pytest.approx(mean, abs=5e-5)
    together = list(expected)
    alike(together, SET_QRELS, RUN_B)
    found = tiecore_oblivious.calc_aggregate(together, SET_QRELS, RUN_B)
    assert found == pytest.approx({m: mean for m, (_, _, mean) in expected.items()}, abs=5e-5)


@pytest.mark.parametrize(
    ("measure", "first", "second", "mean"),
    [
        (IPrec @ 0.25, 1.0, 0.25, 0.625),
        (IPrec @ 0.5, 1.0, 0.25, 0.625),
        (IPrec @ 0.75, 1.0, 0, 0.5),
        (IPrec(rel=2) @ 0.1, 0.6666666, 0.25, 0.4583),
        (IPrec(rel=2) @ 0.25, 0.6666666, 0.25, 0.4583),
        (IPrec(rel=2) @ 0.5, 0.6666666, 0.25, 0.4583),
        (IPrec(rel=2) @ 0.75, 0.6666666, 0.25, 0.4583),
    ],
)
def test_IPrec(measure, first, second, mean):
    """Mirrors ``test_IPrec``: recall levels 0.1 to 0.75, at levels 1 and 2."""
    qrels = _qrels("""
0 0 D0 1
0 0 D1 1
0 0 D2 2
0 0 D3 2
0 0 D4 0
1 0 D0 1
1 0 D3 2
1 0 D5 0
""")
    values = alike([measure], qrels, RUN_B)
    check(values, measure, first, second)
    found = tiecore_oblivious.calc_aggregate([measure], qrels, RUN_B)[measure]
    assert found == pytest.approx(mean, abs=5e-5)


@pytest.mark.parametrize(
    ("measure", "first", "second", "mean"),
    [
        (AP, 0.8333, 0.125, 0.47916666666666663),
        (infAP, 0.8333, 0.1875, 0.510416),
        (AP(rel=2), 0.33333, 0.25, 0.2917),
        (infAP(rel=2), 0.33333, 0.375, 0.3542),
    ],
)
def test_infAP(measure, first, second, mean):
    """Mirrors ``test_infAP``: AP and infAP with pooled unjudged docs, levels 1 and 2."""
    values = alike([measure], POOLED_QRELS, RUN_B)
    check(values, measure, first, second)
    found = tiecore_oblivious.calc_aggregate([measure], POOLED_QRELS, RUN_B)[measure]
    assert found == pytest.approx(mean, abs=5e-5)


@pytest.mark.parametrize(
    ("measure", "first", "second"),
    [
        (nDCG, 0.76018, 0.32739),
        (nDCG @ 3, 0.76018, 0.0),
        (nDCG(gains={0: 1, 1: 4}), 0.97177, 0.14949),
    ],
)
def test_nDCG(measure, first, second):
    """Mirrors ``test_nDCG``: without and with a cutoff, and custom gains (each level
    mapped to its gain in the qrels, levels not named kept)."""
    check(alike([measure], POOLED_QRELS, RUN_B), measure, first, second)


def test_P():
    """Mirrors ``test_P``: P@4, and with ``judged_only`` (docs not judged, or judged at a
    negative level, removed first)."""
    qrels = _qrels("""
0 0 D0 -1
0 0 D1 1
0 0 D3 2
0 0 D4 1
1 0 D0 1
1 0 D3 0
1 0 D4 -1
""")
    run = _run("""
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D0 2 0.7 run
1 0 D3 3 0.3 run
1 0 D2 4 0.4 run
""")
    check(alike([P @ 4], qrels, run), P @ 4, 0.5, 0.25)
    judged = P(judged_only=True) @ 4
    check(alike([judged], qrels, run), judged, 0.75, 0.25)


JUDGED_QRELS = _qrels("""
0 0 D0 -1
0 0 D1 1
0 0 D3 2
0 0 D4 1
""")
JUDGED_RUN = _run("""
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
""")
#: JUDGED_RUN without the docs trec_eval's -J removes (D0 judged -1, D2 not judged).
JUDGED_ONLY_RUN = _run("""
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
""")


@pytest.mark.parametrize(
    "measure",
    [
        P @ 4,
        RR,
        Rprec,
        AP,
        AP @ 4,
        nDCG,
        nDCG @ 4,
        R @ 2,
        SetP,
        SetAP,
        SetF,
        Success @ 2,
        IPrec @ 0.5,
    ],
)
def test_judged_only(measure):
    """Mirrors ``test_judged_only``: ``judged_only=True`` on the run equals the measure on
    the run without its unjudged docs, and differs from the measure on the whole run."""
    judged = measure(judged_only=True)
    values = alike([judged], JUDGED_QRELS, JUDGED_RUN)
    alike([measure], JUDGED_QRELS, JUDGED_ONLY_RUN)
    removed = {
        m.query_id: m.value
        for m in tiecore_oblivious.iter_calc([measure], JUDGED_QRELS, JUDGED_ONLY_RUN)
    }
    whole = {
        m.query_id: m.value
        for m in tiecore_oblivious.iter_calc([measure], JUDGED_QRELS, JUDGED_RUN)
    }
    assert values[(judged, "0")] == pytest.approx(removed["0"], abs=5e-5)
    assert values[(judged, "0")] != pytest.approx(whole["0"], abs=5e-5)
