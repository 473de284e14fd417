"""iprec_at_recall (tiecore.measures.iprec) against trec_eval's loop, brute force, pytrec_eval."""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_data import DATA, TREC_EVAL, plain_copy, pytrec_values
from strategies import cases

import tiecore
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import InputError
from tiecore.measures import Measure
from tiecore.measures import iprec as interpolated
from tiecore.measures import iprec_count as counting
from tiecore.measures.iprec import (
    RECALL_LEVELS,
    iprec_aware,
    iprec_bounds,
    iprec_oblivious,
    iprec_sample,
    iprec_variance,
    level_names,
)
from tiecore.measures.iprec_count import _fraction, _support

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reference_iprec(
    labels,
    num_rel: int,
    depth: int | None,
    rel_level: int = 1,
    shift: float = 0.9,
    levels=RECALL_LEVELS,
) -> list[float]:
    """trec_eval's m_iprec_at_recall.c, transcribed: ranks walked backwards, the running
    maximum of precision recorded when the relevant count hits a level's cutoff."""
    labels = list(labels)[:depth] if depth is not None else list(labels)
    rel = [ref.is_relevant(label, rel_level) for label in labels]
    num_ret, num_rel_ret = len(labels), sum(rel)
    cutoffs = [int(c * num_rel + shift) for c in levels]
    values = [0.0] * len(cutoffs)
    current = len(cutoffs) - 1
    while current >= 0 and cutoffs[current] > num_rel_ret:
        current -= 1
    if num_ret == 0:
        return values
    int_precis = num_rel_ret / num_ret
    rel_so_far = num_rel_ret
    i = num_ret
    while i > 0 and rel_so_far > 0:
        int_precis = max(int_precis, rel_so_far / i)
        if rel[i - 1]:
            while current >= 0 and rel_so_far == cutoffs[current]:
                values[current] = int_precis
                current -= 1
            rel_so_far -= 1
        i -= 1
    while current >= 0:
        values[current] = int_precis
        current -= 1
    return values


def build(case, tiebreak="file_order", rel_level=1):
    judgments = Judgments.from_qrels(case.qrels_frame(), rel_level)
    return Ranking.build(case.run_frame(), judgments, tiebreak=tiebreak), judgments


options = st.fixed_dictionaries(
    {"depth": st.one_of(st.none(), st.integers(1, 6)), "rel_level": st.sampled_from([1, 2])}
)
SHIFTS = {"up": 0.9, "nearest": 0.5}


def mean_over_orderings(q, opts, shift: float = 0.9, levels=RECALL_LEVELS) -> list[float]:
    """The reference curve of one query averaged over every ordering of its ties."""
    num_rel = ref.num_relevant(q.levels, opts["rel_level"])
    sequences = ref.label_sequences(q.scores, q.labels)
    total = sum(sequences.values())
    curves = [
        (reference_iprec(s, num_rel, opts["depth"], opts["rel_level"], shift, levels), c)
        for s, c in sequences.items()
    ]
    return [math.fsum(c * v[i] for v, c in curves) / total for i in range(len(levels))]


@settings(PROPERTY)
@given(cases(), options, st.sampled_from(sorted(SHIFTS)))
def test_aware_is_the_mean_over_all_orderings(case, opts, rounding):
    ranking, judgments = build(case, rel_level=opts["rel_level"])
    found = iprec_aware(ranking, judgments, depth=opts["depth"], rounding=rounding)
    for qid in case.both_qids:
        expected = mean_over_orderings(case.queries[qid], opts, SHIFTS[rounding])
        at = list(judgments.qids).index(qid)
        np.testing.assert_allclose(found[at], expected, rtol=0, atol=1e-12)


#: Levels off trec_eval's 0.1 grid, as ``-m iprec_at_recall..25,.75`` asks for them.
OFF_GRID = (0.25, 1 / 3, 0.75)


@settings(PROPERTY, max_examples=40)
@given(cases(), options)
def test_levels_off_the_grid_are_exact_too(case, opts):
    """Any recall level from 0 to 1 (trec_eval takes any): tie-aware is the mean over
    all orderings, oblivious trec_eval's loop, and evaluate's IPrec(recall=r) both."""
    ranking, judgments = build(case, rel_level=opts["rel_level"])
    aware = iprec_aware(ranking, judgments, OFF_GRID, depth=opts["depth"])
    oblivious = iprec_oblivious(ranking, judgments, OFF_GRID, depth=opts["depth"])
    names = [f"IPrec(recall={level!r})" for level in OFF_GRID]
    frame = tiecore.evaluate(
        case.run_frame(), case.qrels_frame(), names, ties="aware", per_query=True,
        rel_level=opts["rel_level"], depth=opts["depth"], complete=True,
    )  # fmt: skip
    for qid in case.both_qids:
        q = case.queries[qid]
        num_rel = ref.num_relevant(q.levels, opts["rel_level"])
        expected = mean_over_orderings(q, opts, levels=OFF_GRID)
        at = list(judgments.qids).index(qid)
        np.testing.assert_allclose(aware[at], expected, rtol=0, atol=1e-12)
        rows = frame[frame["qid"] == qid].set_index("measure")["value"]
        np.testing.assert_allclose(rows[names].to_numpy(), expected, rtol=0, atol=1e-12)
        order = [q.labels[i] for i in ref.order_indices(q.scores, q.docnos, q.labels, "file_order")]
        assert oblivious[at].tolist() == reference_iprec(
            order, num_rel, opts["depth"], opts["rel_level"], levels=OFF_GRID
        )


@settings(PROPERTY, max_examples=60)
@given(cases(), options)
def test_variance_is_the_variance_over_all_orderings(case, opts):
    ranking, judgments = build(case, rel_level=opts["rel_level"])
    found = iprec_variance(ranking, judgments, depth=opts["depth"])
    for qid in case.both_qids:
        q = case.queries[qid]
        num_rel = ref.num_relevant(q.levels, opts["rel_level"])
        sequences = ref.label_sequences(q.scores, q.labels)
        total = sum(sequences.values())
        curves = np.array(
            [reference_iprec(s, num_rel, opts["depth"], opts["rel_level"]) for s in sequences]
        )
        weights = np.array(list(sequences.values())) / total
        mean = weights @ curves
        variance = weights @ (curves - mean) ** 2
        at = list(judgments.qids).index(qid)
        np.testing.assert_allclose(found[at], variance, rtol=0, atol=1e-12)


@settings(PROPERTY)
@given(
    cases(), options, st.sampled_from(ref.DETERMINISTIC_POLICIES), st.sampled_from(sorted(SHIFTS))
)
def test_oblivious_is_trec_evals_loop_on_the_policys_order(case, opts, policy, rounding):
    ranking, judgments = build(case, policy, opts["rel_level"])
    found = iprec_oblivious(ranking, judgments, depth=opts["depth"], rounding=rounding)
    for qid in case.both_qids:
        q = case.queries[qid]
        order = ref.order_indices(q.scores, q.docnos, q.labels, policy)
        num_rel = ref.num_relevant(q.levels, opts["rel_level"])
        expected = reference_iprec(
            [q.labels[i] for i in order],
            num_rel,
            opts["depth"],
            opts["rel_level"],
            SHIFTS[rounding],
        )
        assert found[list(judgments.qids).index(qid)].tolist() == expected  # bit for bit


@settings(PROPERTY, max_examples=60)
@given(cases(), options)
def test_bounds_are_the_min_and_max_over_all_orderings(case, opts):
    ranking, judgments = build(case, rel_level=opts["rel_level"])
    low, high = iprec_bounds(ranking, judgments, depth=opts["depth"])
    for qid in case.both_qids:
        q = case.queries[qid]
        num_rel = ref.num_relevant(q.levels, opts["rel_level"])
        curves = np.array(
            [
                reference_iprec(s, num_rel, opts["depth"], opts["rel_level"])
                for s in ref.label_sequences(q.scores, q.labels)
            ]
        )
        at = list(judgments.qids).index(qid)
        assert low[at].tolist() == curves.min(axis=0).tolist()
        assert high[at].tolist() == curves.max(axis=0).tolist()


def enumerated_group(size, rel, before, offset, slots, k1):
    """The slow reference of one group's maximum: every placement ``s_1 < ... < s_rel`` of
    its relevant docs, ``M = max_{k >= k1} (before + k) / (offset + s_k + 1)`` (0 past
    ``slots``) as a Fraction; returns the sorted support (floats) and ``P(M <= v)``."""
    maxima = Counter()
    for placement in itertools.combinations(range(size), rel):
        ratios = [
            Fraction(before + k, offset + s + 1)
            for k, s in enumerate(placement, start=1)
            if k >= k1 and s < slots
        ]
        maxima[max(ratios, default=Fraction(0))] += 1
    total = math.comb(size, rel)
    support = sorted(maxima)
    below = np.cumsum([maxima[v] for v in support])
    return [float(v) for v in support], [int(c) / total for c in below]


@st.composite
def group_shapes(draw):
    size = draw(st.integers(2, 9))
    rel = draw(st.integers(1, size - 1))
    units = draw(st.integers(1, 3))
    before = draw(st.lists(st.integers(0, 4), min_size=units, max_size=units))
    # small offsets and before == offset make equal ratios across k common
    offset = [b + draw(st.integers(0, 4)) for b in before]
    slots = draw(st.lists(st.integers(1, size), min_size=units, max_size=units))
    pairs = draw(
        st.lists(st.tuples(st.integers(0, units - 1), st.integers(1, rel)), min_size=1, max_size=5)
    )
    return size, rel, before, offset, slots, pairs


def check_group_distribution(size, rel, before, offset, slots, pairs, floors=None):
    """``_support`` against the enumeration: the same points and ``P(M <= v)``; with
    ``floors`` (one per pair), every point above the floor and one at or below it
    (where the support has one), each with the enumerated ``P(M <= v)``."""
    unit, k1 = (np.array(column) for column in zip(*pairs, strict=True))
    given = None if floors is None else np.array(floors, dtype=np.float64)
    pair, value, cdf = _support(size, rel, *map(np.array, (before, offset, slots)), unit, k1, given)
    assert np.all(np.diff(pair) >= 0)
    for at, (u, k) in enumerate(pairs):
        support, below = enumerated_group(size, rel, before[u], offset[u], slots[u], k)
        found = value[pair == at].tolist()
        if floors is None:
            assert found == support  # the same points, exactly
            np.testing.assert_allclose(cdf[pair == at], below, rtol=0, atol=1e-12)
            continue
        at_most = [below[bisect.bisect_right(support, v) - 1] for v in found]
        np.testing.assert_allclose(cdf[pair == at], at_most, rtol=0, atol=1e-12)
        assert {v for v in support if v > floors[at]} <= set(found)
        assert sum(v <= floors[at] for v in found) == (support[0] <= floors[at])


@settings(PROPERTY, max_examples=200)
@given(
    group_shapes(),
    st.sampled_from([1, counting.DIAGONAL_FROM]),
    st.sampled_from([1, 10, counting.SUPPORT_CHUNK]),
)
def test_group_distribution_is_the_enumerated_one(shape, diagonal_from, chunk):
    """The counting DP's ``P(M_g <= v)`` at every support point equals the count over all
    ``C(n, r)`` placements, for several groups and levels at once (the DP by diagonals
    from 1 relevant doc, or by default; the bounds a point or a few at a time, or all)."""
    defaults = counting.DIAGONAL_FROM, counting.SUPPORT_CHUNK
    counting.DIAGONAL_FROM, counting.SUPPORT_CHUNK = diagonal_from, chunk
    try:
        check_group_distribution(*shape)
    finally:
        counting.DIAGONAL_FROM, counting.SUPPORT_CHUNK = defaults


@settings(PROPERTY, max_examples=100)
@given(
    group_shapes(),
    st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5),
    st.sampled_from([1, counting.SUPPORT_CHUNK]),
)
def test_group_distribution_from_a_floor(shape, floors, chunk):
    """A pair's points below its floor (the cell's constant part), but the last, are
    left out: the points kept and their ``P(M_g <= v)`` are the enumerated ones."""
    default = counting.SUPPORT_CHUNK
    counting.SUPPORT_CHUNK = chunk
    try:
        check_group_distribution(*shape, floors[: len(shape[-1])])
    finally:
        counting.SUPPORT_CHUNK = default


def test_group_distribution_counts_equal_ratios_once():
    """before = offset = 1: (1 + 1) / (1 + 2 + 1) = (1 + 3) / (1 + 6 + 1) = 1/2, a value
    two ordinals reach; placements where either attains it count at 1/2."""
    size, rel = 8, 3
    assert Fraction(2, 4) == Fraction(4, 8)
    support, _ = enumerated_group(size, rel, 1, 1, size, 1)
    assert 0.5 in support
    check_group_distribution(size, rel, [1, 1, 0], [1, 1, 0], [size, 5, size], [(0, 1), (1, 2)])
    check_group_distribution(size, rel, [2], [2], [size], [(0, 1), (0, 3)])  # 3/6 = 4/8 ...


@st.composite
def fraction_cases(draw):
    """Bounds for :func:`_fraction`: rows sorted by value as :func:`_support` gives them
    (each bound at most the previous row's), or in any order; some entries not wanted."""
    rel = draw(st.integers(1, 9))
    width = draw(st.integers(0, 6))
    rows = draw(st.integers(1, 5))
    flat = draw(st.lists(st.integers(0, width), min_size=rows * rel, max_size=rows * rel))
    bound = np.array(flat).reshape(rows, rel)
    if draw(st.booleans()):
        bound = np.minimum.accumulate(np.sort(bound, axis=1), axis=0)
    wanted = np.array(draw(st.lists(st.booleans(), min_size=rows * rel, max_size=rows * rel)))
    return bound, width, wanted.reshape(rows, rel)


@settings(PROPERTY, max_examples=150)
@given(fraction_cases(), st.sampled_from(["steps", "diagonals"]))
def test_fraction_is_the_enumerated_share(case, method):
    """Both ways of running the counting DP give, at every wanted ``(row, k)``, the share
    of all nondecreasing ``j_1 <= ... <= j_r`` in ``[0, width]`` meeting the bounds from
    ``k`` on, counted one by one."""
    bound, width, wanted = case
    rel = bound.shape[1]
    found = _fraction(bound, width, wanted, method)
    paths = list(itertools.combinations_with_replacement(range(width + 1), rel))
    for row, k in zip(*np.nonzero(wanted), strict=True):
        meet = sum(all(j[m] >= bound[row, m] for m in range(k, rel)) for j in paths)
        assert found[row, k] == pytest.approx(meet / len(paths), rel=1e-13, abs=0)


def test_fraction_rescales_past_the_float_range_exactly():
    """C(1200, 600) > 1e308, past the floats: the DP rescales, and its shares equal exact
    integer counts."""
    width, rel = 600, 600
    k = np.arange(rel)
    bound = np.clip(k * width // rel + np.array([[-20], [0]]), 0, width)  # near the mean path
    bound[:, : rel // 3] = 0  # the first third free
    assert math.comb(width + rel, rel) > 10**308
    found = _fraction(bound, width)  # by diagonals: 600 relevant docs
    np.testing.assert_allclose(_fraction(bound, width, method="steps"), found, rtol=1e-13)
    for row in range(bound.shape[0]):
        ways = [1 if j >= bound[row, rel - 1] else 0 for j in range(width + 1)]
        shares = {}
        for k in range(rel - 1, -1, -1):
            if k < rel - 1:
                suffix = list(itertools.accumulate(reversed(ways)))[::-1]
                ways = [s if j >= bound[row, k] else 0 for j, s in enumerate(suffix)]
            if k in (0, rel // 2, rel - 1):
                free = sum(w * math.comb(j + k, k) for j, w in enumerate(ways))
                shares[k] = Fraction(free, math.comb(width + rel, rel))
        for k in (0, rel // 2, rel - 1):
            assert found[row, k] == pytest.approx(float(shares[k]), rel=1e-12, abs=1e-300)
        assert 0 < float(shares[0]) < 1


def test_a_group_past_the_budget_is_refused():
    """40 docs, 20 relevant: the DP's counted cells (3.9e4, below the 1.8e5 of the bound
    points x relevant x positions) are the price; past the budget, the refusal names
    the query, group, measure at its level, and the levels that fit."""
    docnos = [f"d{i}" for i in range(40)]
    run = pd.DataFrame({"qid": "1", "docno": docnos, "score": 1.0})
    qrels = pd.DataFrame({"qid": "1", "docno": docnos[:20], "level": 1})
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    with pytest.raises(InputError, match="query 1 has a tie group of 40 docs with 20 relevant"):
        iprec_aware(ranking, judgments, budget=2e4)
    with pytest.raises(InputError) as refused:
        iprec_aware(ranking, judgments, (0.3, 0.5, 1.0), budget=2e4)
    text = str(refused.value)
    assert "the exact IPrec@0.3 (iprec_at_recall_0.30) count would need" in text
    assert "more than the 2e+04 allowed" in text
    assert "'sampled' for IPrec@0.3 (iprec_at_recall_0.30) on this run" in text
    fits = float(re.search(r"recall levels from ([0-9.]+) up, which fit", text).group(1))
    assert fits in (0.5, 1.0)
    assert 0.0 <= iprec_aware(ranking, judgments, (fits,), budget=2e4)[0, 0] <= 1.0
    with pytest.raises(InputError, match=r"IPrec\(recall=0.3,round=nearest\) count"):
        iprec_aware(ranking, judgments, (0.3,), budget=2e4, rounding="nearest")
    # within the default budget: C(40, 20) = 1.4e11 placements, no longer refused
    assert 0.5 < iprec_aware(ranking, judgments, (0.0,))[0, 0] < 1.0
    assert 0.5 < iprec_aware(ranking, judgments, (0.0,), budget=1e5)[0, 0] < 1.0  # 3.9e4 fit
    with interpolated.budget_scope(2e4):  # a scope lowers the default of every call in it
        with pytest.raises(InputError, match="more than the 2e\\+04 allowed"):
            iprec_aware(ranking, judgments, (0.0,))
        assert 0.5 < iprec_aware(ranking, judgments, (0.0,), budget=4e9)[0, 0] < 1.0  # own wins
    assert 0.5 < iprec_aware(ranking, judgments, (0.0,))[0, 0] < 1.0  # the scope is over


def counted_moments(top, size, rel, levels, num_rel):
    """The slow reference where enumeration is out of reach (``C(size, rel)`` orderings):
    per level, ``E[V]`` and ``E[V^2]`` as Fractions, ``V = max(c, M)`` with ``c`` the
    precision of the untied docs above (relevance ``top``) at ordinals from the level's
    ``k1`` on and ``M = max_{k >= k1} (R + k) / (t + s_k + 1)`` over the placements of
    the tied group's relevant docs.  ``P(M <= v)`` at every candidate ratio ``v`` is a
    plain integer count of placements with ``s_k >= ceil((R + k) / v) - t - 1``."""
    t, before = len(top), sum(top)
    ranks = [i + 1 for i, label in enumerate(top) if label]
    total = math.comb(size, rel)
    out = []
    for level in levels:
        first = max(int(level * num_rel + 0.9), 1)
        c = max((Fraction(m, ranks[m - 1]) for m in range(first, before + 1)), default=0)
        k1 = max(first - before, 1)
        if first > before + rel:  # past the relevant docs of the group: M is 0
            out.append((Fraction(c), Fraction(c) ** 2))
            continue
        width = size - rel
        values = sorted(
            {Fraction(before + k, t + p + 1) for k in range(k1, rel + 1)
             for p in range(k - 1, k + width)}
        )  # fmt: skip
        below = []
        for v in values:
            ways = [1] * size  # placements of the relevant docs so far with s_k = p
            for k in range(1, rel + 1):
                least = math.ceil((before + k) / v) - t - 1 if k >= k1 else 0
                sums = [0, *itertools.accumulate(ways)]  # sums[p]: those with s_{k-1} < p
                ways = [(1 if k == 1 else sums[p]) if p >= least else 0 for p in range(size)]
            below.append(sum(ways))
        mean = square = Fraction(0)
        previous = 0
        for v, count in zip(values, below, strict=True):
            value = max(Fraction(c), v)
            mean += value * (count - previous) / total
            square += value**2 * (count - previous) / total
            previous = count
        out.append((mean, square))
    return out


@pytest.mark.parametrize("top", [[0, 1, 0, 0, 1, 0, 0, 0, 1, 0], []])
def test_a_group_the_bound_refused_is_exact_within_the_budget(top):
    """One tie group of 48 docs with 12 relevant (C(48, 12) = 6.9e10 orderings), below 10
    untied docs with 3 relevant or alone: the bound ``support points x relevant x
    positions`` (2.0e5) passes the budget given, the DP's counted cells (4.4e4, 5.5e4)
    do not, and the curve and its variance are the exact ones (integer counts over
    every candidate value) to 1e-12."""
    size, rel = 48, 12
    levels = (0.0, 0.2, 0.5, 1.0)
    docnos = [f"top{i}" for i in range(len(top))] + [f"d{i}" for i in range(size)]
    scores = [100.0 - i for i in range(len(top))] + [1.0] * size
    labels = top + [1] * rel + [0] * (size - rel)
    run = pd.DataFrame({"qid": "q", "docno": docnos, "score": scores})
    qrels = pd.DataFrame({"qid": "q", "docno": docnos, "level": labels})
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    width = size - rel + 1
    bound = (rel * width + 1) * rel * width  # what priced the DP before: 2.0e5
    budget = bound / 2
    mean = iprec_aware(ranking, judgments, levels, budget=budget)
    expected = counted_moments(top, size, rel, levels, sum(labels))
    np.testing.assert_allclose(mean[0], [float(m) for m, _ in expected], rtol=0, atol=1e-12)
    variance = iprec_variance(ranking, judgments, levels, budget=budget)[0]
    exact = [float(q - m**2) for m, q in expected]
    np.testing.assert_allclose(variance, exact, rtol=0, atol=1e-12)
    assert min(exact) >= 0 and max(exact) > 1e-4
    with pytest.raises(InputError, match=r"IPrec@0.0 .* count would need .*, more than the 1e\+04"):
        iprec_aware(ranking, judgments, levels, budget=1e4)


def test_a_group_too_large_to_count_is_refused_by_the_bound():
    """20000 tied docs, 5000 relevant: at level 0.5 the support alone would hold 3.8e7
    points, so the bound refuses it at once, as an upper bound ("up to")."""
    docnos = [f"d{i}" for i in range(20000)]
    run = pd.DataFrame({"qid": "q", "docno": docnos, "score": 1.0})
    qrels = pd.DataFrame({"qid": "q", "docno": docnos[:5000], "level": 1})
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    refusal = r"5000 relevant: the exact IPrec@0.5 \(iprec_at_recall_0.50\) count"
    with pytest.raises(InputError, match=refusal + r" would need up to 2.81e\+15 steps"):
        iprec_aware(ranking, judgments, (0.5,))


def test_eval_prints_the_levels_that_fit_and_names_the_refused_ones(tmp_path, capsys):
    """tiecore eval: under a lowered budget, the low levels of a 40-doc group with 20
    relevant are refused, each in one line naming its level; the others print."""
    from tiecore.cli import main

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"q1 0 d{i} {int(i < 20)}\n" for i in range(40)))
    run.write_text("".join(f"q1 Q0 d{i} {i + 1} 1.0 r\n" for i in range(40)))
    with interpolated.budget_scope(2e4):
        status = main(["eval", str(qrels), str(run), "-m", "iprec_at_recall", "--ties", "aware"])
    out, err = capsys.readouterr()
    assert status == 3
    refused = [line for line in err.splitlines() if line.startswith("tiecore: refused: ")]
    names = re.findall(r"count would need .* for IPrec@([0-9.]+) \(iprec_at_recall_", err)
    assert refused and len(names) == len(refused)
    assert "0.0" in names and "1.0" not in names
    printed = {line.split()[0] for line in out.splitlines()}
    assert "iprec_at_recall_1.00" in printed and "iprec_at_recall_0.00" not in printed
    assert {f"iprec_at_recall_{float(level):.2f}" for level in names}.isdisjoint(printed)
    with interpolated.budget_scope(2e4):  # 11pt_avg: the average is refused, at its level
        status = main(["eval", str(qrels), str(run), "-m", "11pt_avg", "--ties", "aware"])
    err = capsys.readouterr().err
    assert status == 3
    assert "exact IPrecAvg count (at its level IPrec@0.0 (iprec_at_recall_0.00))" in err
    assert "'sampled' for IPrecAvg on this run)" in err


def test_mu03rob01_query_374_is_the_mean_of_sampled_curves():
    """MU03rob01's query 374 ties 176 docs, 19 of them relevant (1.39e25 placements): its
    exact curve lies within the optimistic and pessimistic ones and equals the mean of
    4000 random tie-breaks within 4 standard errors at every level; the exact variance
    equals theirs within sampling error."""
    qrels = tiecore.read_qrels(DATA / "robust03/qrels.txt")
    run = tiecore.read_run(DATA / "robust03/runs/input.MU03rob01.gz")
    run, qrels = run[run["qid"] == "374"], qrels[qrels["qid"] == "374"]
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    tied = np.flatnonzero((ranking.size == 176) & (ranking.rel_count == 19))
    assert tied.size == 1 and math.comb(176, 19) > 1e25
    aware = iprec_aware(ranking, judgments)[0]
    variance = iprec_variance(ranking, judgments)[0]
    low, high = (bound[0] for bound in iprec_bounds(ranking, judgments))
    assert np.all(low <= aware + 1e-12) and np.all(aware <= high + 1e-12)
    assert np.any(high > low)
    draws = iprec_sample(ranking, judgments, samples=4000, rng=11)[:, 0]
    stderr = draws.std(axis=0, ddof=1) / np.sqrt(draws.shape[0])
    assert np.all(np.abs(draws.mean(axis=0) - aware) <= 4 * stderr + 1e-12)
    varies = variance > 1e-8
    assert varies.sum() >= 3
    np.testing.assert_allclose(draws.var(axis=0, ddof=1)[varies], variance[varies], rtol=0.15)


@pytest.mark.parametrize(
    "qrels_path, run_path",
    [
        ("robust03/qrels.txt", "robust03/runs/input.MU03rob01.gz"),
        ("robust03/qrels.txt", "robust03/runs/input.rutcor03100.gz"),
        ("trec_eval_tests/qrels.test", "trec_eval_tests/results.test"),
    ],
)
def test_oblivious_equals_pytrec_eval(tmp_path, qrels_path, run_path):
    qrels = tiecore.read_qrels(DATA / qrels_path)
    run = tiecore.read_run(plain_copy(DATA / run_path, tmp_path))
    expected = pytrec_values(run, qrels, {"iprec_at_recall"})
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments, tiebreak="trec_eval")
    found = iprec_oblivious(ranking, judgments)
    names = level_names()
    for qid, values in expected.items():
        at = list(judgments.qids).index(qid)
        assert found[at].tolist() == [values[name] for name in names]  # bit for bit


@settings(PROPERTY, max_examples=40, derandomize=True)
@given(cases(max_queries=3), options)
def test_sampled_curves_are_orderings_and_average_to_the_aware_curve(case, opts):
    ranking, judgments = build(case, rel_level=opts["rel_level"])
    draws = iprec_sample(ranking, judgments, samples=300, rng=5, depth=opts["depth"])
    aware = iprec_aware(ranking, judgments, depth=opts["depth"])
    for qid in case.both_qids:
        q = case.queries[qid]
        num_rel = ref.num_relevant(q.levels, opts["rel_level"])
        possible = {
            tuple(reference_iprec(s, num_rel, opts["depth"], opts["rel_level"]))
            for s in ref.label_sequences(q.scores, q.labels)
        }
        at = list(judgments.qids).index(qid)
        assert {tuple(curve) for curve in draws[:, at].tolist()} <= possible
        column = draws[:, at]
        stderr = column.std(axis=0, ddof=1) / np.sqrt(column.shape[0])
        assert np.all(np.abs(column.mean(axis=0) - aware[at]) <= 5 * stderr + 1e-12)


def test_evaluate_takes_trec_eval_and_ir_measures_names():
    """iprec_at_recall_0.50 and IPrec@0.5 through tiecore.evaluate: pytrec_eval's mean
    (oblivious), the module's curve (aware), and evaluate_spread's variance."""
    qrels = tiecore.read_qrels(TREC_EVAL / "qrels.test")
    run = tiecore.read_run(TREC_EVAL / "results.test")
    expected = pytrec_values(run, qrels, {"iprec_at_recall"})
    mean = np.mean([v["iprec_at_recall_0.50"] for v in expected.values()])
    for name in ("IPrec@0.5", "IPrec(recall=0.5)"):
        frame = tiecore.evaluate(run, qrels, name, ties="oblivious")
        assert frame["measure"].tolist() == ["IPrec(recall=0.5)"]
        assert frame["value"].iloc[0] == pytest.approx(mean, rel=1e-14)
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    present = ranking.counts > 0
    aware = tiecore.evaluate(run, qrels, "IPrec@0.5", ties="aware", per_query=True)
    np.testing.assert_array_equal(
        aware["value"].to_numpy()[:-1], iprec_aware(ranking, judgments, (0.5,))[present, 0]
    )
    spread = tiecore.evaluate_spread(run, qrels, "IPrec@0.5", per_query=True)
    np.testing.assert_array_equal(
        spread["var"].to_numpy()[:-1], iprec_variance(ranking, judgments, (0.5,))[present, 0]
    )


def test_round_nearest_is_the_trec_eval_of_the_test_outputs():
    """IPrec(recall=r,round=nearest) rounds r * num_rel to nearest, as the later trec_eval
    that wrote out.test.aq does (trec_eval 9.0.x, pytrec_eval, adds 0.9): every level of
    every query, to its 4 printed decimals."""
    expected = {}
    for line in (TREC_EVAL / "out.test.aq").read_text().splitlines():
        name, qid, value = line.split()
        if name.startswith("iprec_at_recall_") and qid != "all":
            expected[qid, name] = value
    qrels = tiecore.read_qrels(TREC_EVAL / "qrels.test")
    run = tiecore.read_run(TREC_EVAL / "results.test")
    trec_name = {
        str(Measure.parse(f"IPrec(recall={level},round=nearest)")): name
        for level, name in zip(RECALL_LEVELS, level_names(), strict=True)
    }
    frame = tiecore.evaluate(run, qrels, list(trec_name), ties="oblivious", per_query=True)
    frame = frame[frame["qid"].notna()]
    found = {
        (q, trec_name[m]): f"{v:.4f}"
        for q, m, v in zip(frame["qid"], frame["measure"], frame["value"], strict=True)
    }
    assert found == expected
    pytrec = pytrec_values(run, qrels, {"iprec_at_recall"})
    assert pytrec["301"]["iprec_at_recall_0.10"] != float(
        expected["301", "iprec_at_recall_0.10"]
    )  # the two trec_evals differ here (0.2096 against 0.2098)


def test_trec_eval_names_give_trec_eval_9s_numbers(tmp_path, capsys):
    """``-m iprec_at_recall_0.80`` (trec_eval 9.0.x's name) gives pytrec_eval's value per
    query, where the two roundings differ: 3 relevant docs, 2 retrieved at ranks 1 and 4,
    so 0.8 * 3 = 2.4 needs 3 relevant docs rounded up (0.0) but 2 to nearest (0.5); q2
    is a query where the two agree."""
    from tiecore.cli import main

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q1 0 d{i} 1\n" for i in (1, 4, 9)) + "q2 0 d1 1\n")
    run = tmp_path / "run"
    rows = [("q1", f"d{i}") for i in range(1, 5)] + [("q2", "d1"), ("q2", "d3")]
    run.write_text("".join(f"{q} Q0 {d} {i} {10 - i} r\n" for i, (q, d) in enumerate(rows)))
    assert main(["eval", str(qrels), str(run), "-m", "iprec_at_recall_0.80", "-q",
                 "--ties", "oblivious", "--format", "trec"]) == 0  # fmt: skip
    printed = {
        qid: float(value)
        for name, qid, value in (line.split("\t") for line in capsys.readouterr().out.splitlines())
        if name.strip() == "iprec_at_recall_0.80"
    }
    pytrec = pytrec_values(tiecore.read_run(run), tiecore.read_qrels(qrels), {"iprec_at_recall"})
    assert printed == {"q1": 0.0, "q2": 1.0, "all": 0.5}
    assert {q: printed[q] for q in pytrec} == {
        q: round(v["iprec_at_recall_0.80"], 4) for q, v in pytrec.items()
    }
    nearest = tiecore.evaluate(
        tiecore.read_run(run), tiecore.read_qrels(qrels), "IPrec(recall=0.8,round=nearest)",
        ties="oblivious", per_query=True,
    )  # fmt: skip
    assert nearest["value"].tolist() == [0.5, 1.0, 0.75]  # the later trec_eval's: q1 differs


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("IPrec(round=nearest)@0.5", "IPrec(recall=0.5,round=nearest)"),
        ("IPrec(round=up)@0.50", "IPrec(recall=0.5,round=up)"),
        ("iprec_at_recall_0.80", "IPrec(recall=0.8)"),
    ],
)
def test_a_recall_level_after_the_parameters_is_the_recall(written, meant):
    """``IPrec(round=nearest)@0.5`` is ``IPrec(recall=0.5,round=nearest)``, as ``IPrec@0.5``
    is ``IPrec(recall=0.5)``: the level after ``@`` is no cutoff, with parameters too."""
    assert Measure.parse(written) == Measure.parse(meant)
