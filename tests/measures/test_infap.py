"""infAP (tiecore.measures.infap) against brute force over all orderings, trec_eval and pytrec_eval.

The reference is ``reference.inferred_ap``, a transcription of trec_eval 9.0.x's
``m_infAP.c`` loop; the tie-aware value, variance, minimum and maximum must equal
the mean, population variance and extremes over every ordering of the tie groups
(``reference.label_sequences``), and the oblivious value must equal pytrec_eval's
bit for bit on every Robust03 run and trec_eval's test files.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ir_measures
import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_data import (
    DATA,
    ROBUST_QRELS,
    ROBUST_RUNS,
    TREC_EVAL,
    plain_copy,
    pytrec_values,
    robust_run,
)
from strategies import cases

import tiecore
from tiecore.cli import main
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import InputError
from tiecore.interop import measure_name
from tiecore.measures.infap import (
    EPSILON,
    _Groups,
    infap_aware,
    infap_bounds,
    infap_oblivious,
    infap_sample,
    infap_variance,
)

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = 1e-12

options = st.fixed_dictionaries(
    {"depth": st.one_of(st.none(), st.integers(1, 6)), "rel_level": st.sampled_from([1, 2])}
)


def build(case, rel_level=1, tiebreak="file_order"):
    judgments = Judgments.from_qrels(case.qrels_frame(), rel_level)
    return Ranking.build(case.run_frame(), judgments, tiebreak=tiebreak), judgments


def every_ordering(q, rel_level, depth):
    """``(value, orderings giving it)`` for every distinct label sequence of query ``q``."""
    out = []
    for sequence, count in ref.label_sequences(q.scores, q.labels).items():
        labels = list(sequence)[:depth] if depth is not None else list(sequence)
        out.append((ref.inferred_ap(labels, q.levels, rel_level), count))
    return out


def one_query(labels, scores, extra=()):
    """Run and qrels frames of one query: docs ``d0, d1, ...`` with the given labels
    (None: not in the qrels) and scores, and qrels-only docs of levels ``extra``."""
    docs = [f"d{i}" for i in range(len(labels))]
    run = pd.DataFrame({"qid": "q", "docno": docs, "score": np.asarray(scores, float)})
    judged = [(d, lv) for d, lv in zip(docs, labels, strict=True) if lv is not None]
    judged += [(f"x{i}", lv) for i, lv in enumerate(extra)]
    qrels = pd.DataFrame(judged, columns=["docno", "level"]).assign(qid="q")
    return run, qrels


# ------------------------------------------------------------- brute force, exact


@PROPERTY
@given(cases(max_docs=8), options)
def test_value_variance_and_bounds_are_those_of_every_ordering(case, opts):
    ranking, judgments = build(case, opts["rel_level"])
    depth = opts["depth"]
    mean = infap_aware(ranking, judgments, depth=depth)
    var = infap_variance(ranking, judgments, depth=depth)
    low, high = infap_bounds(ranking, judgments, depth=depth)
    for qid in case.both_qids:
        at = list(judgments.qids).index(qid)
        pairs = every_ordering(case.queries[qid], opts["rel_level"], depth)
        total = sum(count for _, count in pairs)
        truth = math.fsum(v * c for v, c in pairs) / total
        spread = math.fsum((v - truth) ** 2 * c for v, c in pairs) / total
        values = [v for v, _ in pairs]
        assert mean[at] == pytest.approx(truth, abs=TOL), qid
        assert var[at] == pytest.approx(spread, abs=TOL), qid
        assert low[at] == pytest.approx(min(values), abs=TOL), qid
        assert high[at] == pytest.approx(max(values), abs=TOL), qid


@PROPERTY
@given(cases(), options, st.sampled_from(ref.DETERMINISTIC_POLICIES))
def test_oblivious_is_trec_evals_loop_on_the_policys_order(case, opts, policy):
    ranking, judgments = build(case, opts["rel_level"], policy)
    got = infap_oblivious(ranking, judgments, depth=opts["depth"])
    for qid in case.both_qids:
        q = case.queries[qid]
        order = ref.order_indices(q.scores, q.docnos, q.labels, policy)
        labels = [q.labels[i] for i in order]
        labels = labels[: opts["depth"]] if opts["depth"] is not None else labels
        expected = ref.inferred_ap(labels, q.levels, opts["rel_level"])
        assert got[list(judgments.qids).index(qid)] == expected  # same operations, same order


@settings(PROPERTY, max_examples=40, derandomize=True)
@given(cases(max_queries=3, max_docs=8), options)
def test_sampled_values_are_orderings_and_average_to_the_aware_value(case, opts):
    ranking, judgments = build(case, opts["rel_level"])
    depth = opts["depth"]
    draws = infap_sample(ranking, judgments, samples=400, rng=3, depth=depth)
    aware = infap_aware(ranking, judgments, depth=depth)
    for qid in case.both_qids:
        at = list(judgments.qids).index(qid)
        possible = [v for v, _ in every_ordering(case.queries[qid], opts["rel_level"], depth)]
        for value in set(draws[:, at].tolist()):
            assert min(abs(value - p) for p in possible) <= TOL, (qid, value)
        stderr = draws[:, at].std(ddof=1) / math.sqrt(draws.shape[0])
        assert abs(draws[:, at].mean() - aware[at]) <= 5 * stderr + TOL


def exact_term(r: int, m: int, u: int, k: int) -> Fraction:
    eps = Fraction(EPSILON)
    return (1 + (r + m + u) * (r + eps) / (r + m + 2 * eps)) / k


def test_a_large_group_equals_exact_fractions():
    """One group of 9 docs (3 relevant, 2 non-relevant, 2 pooled unjudged, 2 unpooled)
    after 4 untied docs, cut at rank 11: every distinct label sequence (7,560) scored in
    exact rationals."""
    top = [2, None, 0, -1]
    group = [1, 1, 2, 0, 0, -1, -1, None, None]
    labels = top + group
    run, qrels = one_query(labels, [9, 8, 7, 6] + [1] * len(group), extra=[1, 0])
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    depth = 11
    num_rel = 3 + 1 + 1
    kinds = {None: "o", -1: "u", 0: "m", 1: "r", 2: "r"}
    sequences = ref.label_sequences([1.0] * len(group), [kinds[lv] for lv in group])
    values, weights = [], []
    for sequence, count in sequences.items():
        r, m, u = 1, 1, 1  # the untied docs: relevant, unpooled, non-relevant, unjudged
        total = exact_term(0, 0, 0, 1)
        for k, kind in enumerate(sequence, start=len(top) + 1):
            if k > depth:
                break
            if kind == "r":
                total += exact_term(r, m, u, k)
            r, m, u = r + (kind == "r"), m + (kind == "m"), u + (kind == "u")
        values.append(total / num_rel)
        weights.append(count)
    mean = sum(v * w for v, w in zip(values, weights, strict=True)) / sum(weights)
    var = sum((v - mean) ** 2 * w for v, w in zip(values, weights, strict=True)) / sum(weights)
    assert infap_aware(ranking, judgments, depth=depth)[0] == pytest.approx(float(mean), abs=TOL)
    assert infap_variance(ranking, judgments, depth=depth)[0] == pytest.approx(float(var), abs=TOL)
    low, high = infap_bounds(ranking, judgments, depth=depth)
    assert (low[0], high[0]) == pytest.approx((float(min(values)), float(max(values))), abs=TOL)


def moments_by_counts(head: str, group: dict[str, int], depth: int | None):
    """``(fixed sum, E[S_g], E[S_g^2])`` of one query: untied docs of kinds ``head``
    (``r n u o``) then one tie group of ``group[kind]`` docs, every label sequence of
    the group weighted by its chance, by a forward pass over the counts of each kind
    placed so far (exact enumeration in ``O(prod (count + 1))`` states, not ``n!``)."""
    above = {kind: 0 for kind in "rnuo"}
    fixed, rank = 0.0, 0
    for kind in head:
        rank += 1
        if kind == "r" and (depth is None or rank <= depth):
            fixed += float(exact_term(above["r"], above["n"], above["u"], rank))
        above[kind] += 1
    n = sum(group.values())
    states = {(0, 0, 0, 0): (1.0, 0.0, 0.0)}  # counts placed -> chance, E[S 1], E[S^2 1]
    for slot in range(n):
        following: dict = {}
        for placed, (chance, m1, m2) in states.items():
            for index, kind in enumerate("rnuo"):
                left = group[kind] - placed[index]
                if not left:
                    continue
                f = left / (n - slot)
                term = 0.0
                k = rank + slot + 1
                if kind == "r" and (depth is None or k <= depth):
                    r, m, u = (above[key] + placed[at] for at, key in enumerate("rnu"))
                    term = (1 + (r + m + u) * (r + EPSILON) / (r + m + 2 * EPSILON)) / k
                nxt = tuple(c + (at == index) for at, c in enumerate(placed))
                a, b, c = following.get(nxt, (0.0, 0.0, 0.0))
                following[nxt] = (
                    a + f * chance,
                    b + f * (m1 + chance * term),
                    c + f * (m2 + 2 * m1 * term + chance * term * term),
                )
        states = following
    _, mean, square = states[tuple(group[kind] for kind in "rnuo")]
    return fixed, mean, square


def group_moments_by_counts(n, d, rel, non, pooled, unpooled, rA, nA, uA, t):
    """``(E[S_g], E[S_g^2])`` of one tie group, the pass of :func:`moments_by_counts` on
    arrays over the counts ``(a, b, c)`` of relevant, non-relevant and pooled docs
    placed (``o`` follows from the slot): for groups of hundreds of docs."""
    a, b, c = np.ogrid[: rel + 1, : non + 1, : pooled + 1]
    shape = (rel + 1, non + 1, pooled + 1)
    moments = np.zeros((3, *shape))
    moments[0, 0, 0, 0] = 1.0  # chance, E[S 1], E[S^2 1] of each state
    for slot in range(n):
        o = slot - a - b - c
        ok = (o >= 0) & (o <= unpooled)
        k = t + slot + 1
        term = (
            1 + (rA + nA + uA + a + b + c) * (rA + a + EPSILON) / (rA + nA + a + b + 2 * EPSILON)
        ) / k
        term = np.broadcast_to(term if slot < d else 0.0 * term, shape)
        m0, m1, m2 = moments
        following = np.zeros_like(moments)
        f = np.where(ok, (rel - a) / (n - slot), 0.0)
        placed = np.stack([m0, m1 + m0 * term, m2 + 2 * m1 * term + m0 * term * term])
        following[:, 1:] += (f * placed)[:, :-1]
        f = np.where(ok, (non - b) / (n - slot), 0.0)
        following[:, :, 1:] += (f * moments)[:, :, :-1]
        f = np.where(ok, (pooled - c) / (n - slot), 0.0)
        following[:, :, :, 1:] += (f * moments)[:, :, :, :-1]
        following += np.where(ok, (unpooled - o) / (n - slot), 0.0) * moments
        moments = following
    return moments[1, rel, non, pooled], moments[2, rel, non, pooled]


@settings(PROPERTY, max_examples=60)
@given(
    st.text("rnuo", max_size=5),
    st.fixed_dictionaries(
        {
            "r": st.integers(1, 7),
            "n": st.integers(0, 14),
            "u": st.integers(0, 6),
            "o": st.integers(0, 14),
        }
    ),
    st.integers(0, 40),
    st.integers(0, 2),
)
def test_a_tie_group_of_up_to_41_docs_equals_the_enumeration_by_counts(head, group, cut, extra):
    """The forward pass over (slot, judged count) against a pass over all four counts:
    groups far past brute force (up to 41 docs), with cuts inside them."""
    n = sum(group.values())
    depth = len(head) + cut if cut < n else None
    kinds = list(head) + [kind for kind in "rnuo" for _ in range(group[kind])]
    level = {"r": 1, "n": 0, "u": -1, "o": None}
    scores = list(range(len(head) + 1, 1, -1)) + [1.0] * n
    run, qrels = one_query([level[kind] for kind in kinds], scores, extra=[1] * extra)
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    fixed, mean, square = moments_by_counts(head, group, depth)
    counts = [group[kind] for kind in "rnuo"] + [head.count(kind) for kind in "rnu"]
    arrays = group_moments_by_counts(n, n if depth is None else cut, *counts, len(head))
    assert arrays == pytest.approx((mean, square), rel=1e-12)  # the two references agree
    num_rel = kinds.count("r") + extra
    assert infap_aware(ranking, judgments, depth=depth)[0] == pytest.approx(
        (fixed + mean) / num_rel, abs=TOL
    )
    variance = infap_variance(ranking, judgments, depth=depth)[0]
    assert variance == pytest.approx((square - mean * mean) / num_rel**2, abs=TOL)


@pytest.mark.parametrize("name, qid", [("MU03rob01", "633"), ("rutcor03100", "404")])
def test_the_robust03_groups_once_refused_equal_the_enumeration_by_counts(name, qid):
    """The variance refused these queries (8.4e7 and 3.9e10 pair terms, budget 2e7);
    now within the budget, and equal to the pass over the counts of every group
    (rutcor03100's 811-doc group: 63 relevant, 283 non-relevant, 465 unpooled)."""
    judgments = Judgments.from_qrels(tiecore.read_qrels(ROBUST_QRELS))
    run = tiecore.read_run(robust_run(f"input.{name}.gz"))
    ranking = Ranking.build(run, judgments, name=name)
    variance = infap_variance(ranking, judgments)
    groups = _Groups(ranking, judgments, None)
    at = list(judgments.qids).index(qid)
    total = 0.0
    for g in np.flatnonzero(groups.query == at):
        fields = (groups.n, groups.d, groups.R, groups.N, groups.U, groups.O)
        fields += (groups.rA, groups.nA, groups.uA, groups.t)
        mean, square = group_moments_by_counts(*(int(field[g]) for field in fields))
        total += square - mean * mean
    assert groups.n.max() > 250
    assert variance[at] == pytest.approx(total / groups.num_rel[at] ** 2, rel=1e-9, abs=1e-15)


def test_the_maximum_is_not_always_the_optimistic_order():
    """A relevant doc below many unpooled docs scores more with a pooled-unjudged doc
    above it (that doc counts as relevant at the judged rate): the maximum puts it
    first, which the optimistic order (relevant first) misses; the bounds do not."""
    labels = [1, None, None, None, 1, -1]
    run, qrels = one_query(labels, [5, 4, 3, 2, 1, 1])
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    eps = EPSILON
    below = (1 + 1 * (1 + eps) / (1 + 2 * eps)) / 5  # relevant doc at rank 5
    above = (1 + 2 * (1 + eps) / (1 + 2 * eps)) / 6  # at rank 6, the unjudged doc above
    low, high = infap_bounds(ranking, judgments)
    assert high[0] == pytest.approx((1 + above) / 2, abs=TOL)
    assert low[0] == pytest.approx((1 + below) / 2, abs=TOL)
    optimistic = infap_oblivious(ranking.retie("optimistic"), judgments)[0]
    assert optimistic == pytest.approx(low[0], abs=TOL) and optimistic < high[0]


# ------------------------------------------------------------ trec_eval, pytrec_eval


def pytrec_infap(run: pd.DataFrame, qrels: pd.DataFrame, rel_level: int) -> dict[str, float]:
    found = pytrec_values(run, qrels, {"infAP"}, rel_level)
    return {qid: v["infAP"] for qid, v in found.items()}


FILES = [
    ("trec_eval_tests/qrels.test", "trec_eval_tests/results.test", 1),
    ("trec_eval_tests/qrels.test", "trec_eval_tests/results.trunc", 1),
    ("trec_eval_tests/qrels.rel_level", "trec_eval_tests/results.test", 2),
    ("trec_eval_tests/qrels.rel_level", "trec_eval_tests/results.test", 1),
] + [("robust03/qrels.txt", str(path.relative_to(DATA)), 1) for path in ROBUST_RUNS]


@pytest.mark.parametrize("qrels_path, run_path, rel_level", FILES)
def test_oblivious_equals_pytrec_eval_bit_for_bit(tmp_path, qrels_path, run_path, rel_level):
    qrels = tiecore.read_qrels(DATA / qrels_path)
    run = tiecore.read_run(plain_copy(DATA / run_path, tmp_path))
    expected = pytrec_infap(run, qrels, rel_level)
    judgments = Judgments.from_qrels(qrels, rel_level)
    found = infap_oblivious(Ranking.build(run, judgments, tiebreak="trec_eval"), judgments)
    qids = list(judgments.qids)
    assert expected and {q: found[qids.index(q)] for q in expected} == expected


def test_all_robust03_runs_are_covered():
    assert len(ROBUST_RUNS) == 17


GOLDEN = [
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"complete": True}),
    ("out.test.aqcM", "qrels.test", "results.trunc", {"complete": True, "depth": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"rel_level": 2}),
]


@pytest.mark.parametrize("out, qrels_file, run_file, opts", GOLDEN)
def test_evaluate_reproduces_trec_evals_test_outputs(out, qrels_file, run_file, opts):
    expected = {}
    for line in (TREC_EVAL / out).read_text().splitlines():
        name, qid, value = line.split()
        if name == "infAP":
            expected[qid] = float(value)
    run, qrels = tiecore.read_run(TREC_EVAL / run_file), tiecore.read_qrels(TREC_EVAL / qrels_file)
    frame = tiecore.evaluate(run, qrels, "infAP", per_query=True, **opts)
    got = dict(zip(frame["qid"].fillna("all"), frame["value"], strict=True))
    assert set(got) == set(expected)
    for qid, value in expected.items():
        assert abs(got[qid] - value) <= 5e-5 + 1e-12, (out, qid, got[qid], value)


# ----------------------------------------------------------- through the front doors


def test_evaluate_spread_and_compare_use_the_module():
    qrels = tiecore.read_qrels(TREC_EVAL / "qrels.rel_level")
    run = tiecore.read_run(TREC_EVAL / "results.test")
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments, tiebreak="trec_eval")
    for name in ("infAP", "infap"):
        frame = tiecore.evaluate(run, qrels, name, ties="oblivious", per_query=True)
        assert frame["measure"].tolist() == ["infAP"] * 4
        np.testing.assert_array_equal(
            frame["value"].to_numpy()[:-1], infap_oblivious(ranking, judgments)
        )
    aware = tiecore.evaluate(run, qrels, "infAP", ties="aware", per_query=True)
    np.testing.assert_array_equal(aware["value"].to_numpy()[:-1], infap_aware(ranking, judgments))
    spread = tiecore.evaluate_spread(run, qrels, "infAP", per_query=True)
    low, high = infap_bounds(ranking, judgments)
    value = spread["value"].to_numpy()[:-1]
    variance = infap_variance(ranking, judgments)
    shown = list(map(ref.consistent_spread, value, variance, low, high))
    for column, wanted in zip(("var", "min", "max"), zip(*shown, strict=True), strict=True):
        assert spread[column].to_numpy()[:-1].tolist() == list(wanted), column
    sampled = tiecore.evaluate(run, qrels, "infAP", ties="sampled", samples=50, seed=1)
    assert sampled["value"].iloc[0] == pytest.approx(aware["value"].iloc[-1], abs=1e-3)
    other = run.assign(score=run["score"].round(2))  # more ties (groups of up to 24 docs)
    result = tiecore.compare.compare({"a": run, "b": other}, qrels, "infAP", samples=20)
    assert result.scores.loc["a", "aware"] == pytest.approx(aware["value"].iloc[-1], abs=1e-15)
    assert result.scores.loc["a", "trec_eval"] == pytest.approx(frame["value"].iloc[-1], abs=1e-15)
    judged = Ranking.build(other, judgments)
    expected = infap_aware(judged, judgments)[judged.counts > 0].mean()
    assert result.scores.loc["b", "aware"] == pytest.approx(expected, abs=1e-15)


def test_command_line_and_ir_measures_names(tmp_path, capsys):
    args = ["eval", str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.test"), "-m", "infAP"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "infAP" in printed and "0.1785" in printed  # trec_eval's out.test.a
    assert measure_name(ir_measures.infAP) == "infAP"
    assert measure_name("infAP") == "infAP"


def test_a_variance_beyond_the_budget_is_refused_pointing_to_sampled_mode():
    labels = [1] * 10 + [0] * 30 + [None] * 40
    run, qrels = one_query(labels, [1.0] * len(labels))
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments, name="big")
    with pytest.raises(InputError) as error:
        infap_variance(ranking, judgments, budget=1e3)  # 80 slots x 41 judged counts
    message = str(error.value)
    assert "run big" in message and "query q has a tie group of 80 docs" in message
    assert "ties='sampled'" in message
    assert infap_variance(ranking, judgments)[0] >= 0  # within the default budget
    with pytest.raises(InputError, match="minimum and maximum"):
        infap_bounds(ranking, judgments, budget=100)


def test_a_long_group_with_few_judged_docs_counts_its_slots():
    """30,000 tied docs, 3 judged: 4 cells a slot, but 30,000 slots of numpy calls
    (several seconds): refused at once by the default budget, not run."""
    labels = [1, 1, 0] + [None] * 29_997
    run, qrels = one_query(labels, [1.0] * len(labels))
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments, name="long")
    with pytest.raises(InputError, match="30000 docs"):
        infap_variance(ranking, judgments)
