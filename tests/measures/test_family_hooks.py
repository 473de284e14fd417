"""A family that is no head sum gets all of its measures in one call of each hook.

The evaluator, the spread and the sampler group the measures asked by family
(:func:`tiecore.engine.kernels.families`): each hook is called once per ranking with
every measure of its family, in the order asked, and answers one result per measure.
IPrec shares one counting DP between its recall levels, which used to need a memo kept
across calls; now the eleven levels of trec_eval cost one DP.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import tiecore
from tiecore.engine import kernels
from tiecore.measures import FAMILIES, Measure, iprec
from tiecore.measures.registry import each

#: Two or more measures of every family that is no head sum (one where it has no variant).
HOOKED = {
    "nDCG": ["nDCG(ideal=local)@10", "nDCG(ideal=local)@3"],
    "RBP_residual": [
        "RBP_residual(convention=trec_eval)",
        "RBP_residual(p=0.5,convention=trec_eval)",
    ],
    "ERR": ["ERR@10", "ERR@3"],
    "IPrec": ["IPrec(recall=0.5)", "IPrec(recall=0.0)", "IPrec(recall=0.3,round=nearest)"],
    "infAP": ["infAP"],
    "NumRet": ["NumRet"],
    "NumRel": ["NumRel"],
    "SetAP": ["SetAP"],
    "IPrecAvg": ["IPrecAvg", "IPrecAvg(round=nearest)"],
    "BinG": ["BinG"],
    "G": ["G", "G(gains=1:3;2:9)"],
    "NDCGRel": ["NDCGRel", "NDCGRel(gains=1:2)"],
    "Rndcg": ["Rndcg"],
}

RUN = pd.DataFrame(
    {
        "qid": ["1"] * 6 + ["2"] * 5,
        "docno": ["a", "b", "c", "d", "e", "f", "a", "b", "c", "d", "e"],
        "score": [3, 2, 2, 2, 1, 1, 5, 5, 4, 4, 4],
    }
)
QRELS = pd.DataFrame(
    {
        "qid": ["1", "1", "1", "1", "2", "2", "2"],
        "docno": ["b", "d", "f", "z", "a", "c", "e"],
        "level": [1, 2, 0, 1, 2, 1, 0],
    }
)


def test_every_family_that_is_no_head_sum_is_covered():
    hooked = set()
    for name in FAMILIES:
        family = FAMILIES[name]
        if family.component is None or callable(family.component):
            if family.values is not None:
                hooked.add(name)
    assert hooked == set(HOOKED)
    for name, measures in HOOKED.items():
        assert all(Measure.parse(m).spec.hooked(Measure.parse(m)) for m in measures), name


@pytest.fixture
def calls(monkeypatch):
    """Every hook call as ``(family, hook, measure names)``: the families' hooks wrapped."""
    seen: list[tuple[str, str, tuple[str, ...]]] = []
    for name in HOOKED:
        family = FAMILIES[name]
        wrapped = {}
        for hook in ("values", "spread", "sample"):
            inner = getattr(family, hook)
            if inner is None:
                continue

            def counted(measures, *args, _inner=inner, _hook=hook, _name=name, **kwargs):
                seen.append((_name, _hook, tuple(str(m) for m in measures)))
                return _inner(measures, *args, **kwargs)

            wrapped[hook] = counted
        monkeypatch.setitem(FAMILIES, name, dataclasses.replace(family, **wrapped))
    return seen


# the measures of every family, interleaved: family after family would hide a regrouping
ASKED = [m for i in range(3) for names in HOOKED.values() for m in names[i : i + 1]] + ["P@5"]
EXACT = [m for m in ASKED if Measure.parse(m).exact_spread]


@pytest.mark.parametrize("ties", ["oblivious", "aware", "sampled"])
def test_each_hook_is_called_once_with_all_of_its_familys_measures(calls, ties):
    kwargs = {"samples": 20} if ties == "sampled" else {}
    found = tiecore.evaluate(RUN, QRELS, ASKED, ties=ties, per_query=True, **kwargs)
    hook = "sample" if ties == "sampled" else "values"
    assert sorted(c[0] for c in calls) == sorted(HOOKED)  # one call per family
    for family, called, measures in calls:
        assert called == hook
        assert measures == tuple(str(Measure.parse(m)) for m in ASKED if m in HOOKED[family])
    assert set(found["measure"]) == {str(Measure.parse(m)) for m in ASKED}


def test_the_spread_calls_each_hook_once_with_all_of_its_familys_measures(calls):
    tiecore.evaluate_spread(RUN, QRELS, EXACT, per_query=True)
    spread = [c for c in calls if c[1] == "spread"]
    assert len(spread) == len({c[0] for c in spread}) == len(calls)
    for family, _, measures in spread:
        assert measures == tuple(str(Measure.parse(m)) for m in EXACT if m in HOOKED[family])


@pytest.mark.parametrize("ties", ["oblivious", "aware", "sampled"])
def test_values_asked_together_are_those_asked_one_at_a_time(ties):
    """Grouping changes no value: each measure alone gives what it gives among all."""
    kwargs = {"samples": 20} if ties == "sampled" else {}
    together = tiecore.evaluate(RUN, QRELS, ASKED, ties=ties, per_query=True, **kwargs)
    for name in ASKED:
        alone = tiecore.evaluate(RUN, QRELS, [name], ties=ties, per_query=True, **kwargs)
        mine = together[together["measure"] == str(Measure.parse(name))]
        if ties == "sampled" and Measure.parse(name).spec.hooked(Measure.parse(name)):
            continue  # each hooked measure draws its own stream, taken in the order asked
        np.testing.assert_allclose(
            mine["value"].to_numpy(), alone["value"].to_numpy(), rtol=0, atol=1e-15
        )


def test_trec_evals_eleven_recall_levels_cost_one_counting_dp(monkeypatch):
    dps = []
    inner = iprec._moments

    def counted(ranking, judgments, levels, **kwargs):
        dps.append(tuple(levels))
        return inner(ranking, judgments, levels, **kwargs)

    monkeypatch.setattr(iprec, "_moments", counted)
    levels = [f"IPrec(recall={c})" for c in iprec.RECALL_LEVELS]
    tiecore.evaluate(RUN, QRELS, levels, ties="aware", per_query=True)
    assert dps == [iprec.RECALL_LEVELS]
    dps.clear()
    tiecore.evaluate(RUN, QRELS, ["IPrec(recall=0.7)", "IPrec(recall=0.25)"], ties="aware")
    assert dps == [(0.7, 0.8, 0.9, 1.0), (0.25,)]  # from the least level up; others alone


def test_families_groups_in_the_order_asked_each_measure_once():
    asked = [Measure.parse(m) for m in ["ERR@3", "P@5", "IPrec(recall=0.5)", "ERR@10", "ERR@3"]]
    groups = kernels.families(asked)
    assert [(f.name, [str(m) for m in ms]) for f, ms in groups] == [
        ("ERR", ["ERR@3", "ERR@10"]),
        ("IPrec", ["IPrec(recall=0.5)"]),
    ]


def test_each_calls_a_one_measure_hook_per_measure_with_its_own_stream():
    def hook(measure, ranking, *, samples, rng):
        return (measure, ranking, samples, rng)

    assert each(hook)(["a", "b"], "r", samples=3, rngs=[7, 8]) == [
        ("a", "r", 3, 7),
        ("b", "r", 3, 8),
    ]
    assert each(lambda m, x: m * x)([2, 3], 10) == [20, 30]
    assert each(None) is None
    with pytest.raises(ValueError):
        each(hook)(["a", "b"], "r", samples=3, rngs=[7])
