"""``-R qrels_jg``'s measures under ties (tiecore.evaluation.judgment_groups).

Sampled mode draws one ordering per query shared by its judgment groups: each draw is
the oblivious average over the groups of that ordering (the draws rebuilt here from
tiecore.evaluation.tie_draws), and the sampled mean agrees with the exact tie-aware
mean within its stderr.  The oblivious values are trec_eval 9.0.8's
(tests/cli/test_trec_eval_flags.py, goldens); the aware mean is checked against
every ordering there.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import orderings

from tiecore.evaluation.core import evaluate
from tiecore.evaluation.judgment_groups import evaluate_judgment_groups
from tiecore.evaluation.tie_draws import doc_words, drawn_order, run_key, sample_words
from tiecore.io.trec_eval_files import read_qrels_jg
from tiecore.measures import parse_measures

DOCS = ("a", "b", "c", "d", "e")
MEASURES = parse_measures(["AP", "P@1", "P@2", "P@3", "Rprec(mult=0.5)", "Rprec(mult=1.5)"])


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, dict[str, dict[str, float]]]:
    """qrels_jg lines (two queries, up to three groups each) and a tie-heavy run."""
    lines, queries = [], {}
    for qid in ("1", "2"):
        for group in range(draw(st.integers(1, 3))):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=4, unique=True))
            lines += [f"{qid} u{group} {doc} {draw(st.integers(0, 2))}\n" for doc in docs]
        run_docs = draw(
            st.lists(st.sampled_from((*DOCS, "x")), min_size=1, max_size=5, unique=True)
        )
        queries[qid] = {doc: draw(st.sampled_from((1.0, 2.0))) for doc in run_docs}
    return "".join(lines), queries


def _run(queries: dict[str, dict[str, float]]) -> pd.DataFrame:
    rows = [(qid, doc, score) for qid, docs in queries.items() for doc, score in docs.items()]
    return pd.DataFrame(rows, columns=["qid", "docno", "score"])


def _groups(text: str):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "jg"
        path.write_text(text)
        return read_qrels_jg(path)


def _by_cell(columns: dict[str, list], column: str = "value") -> dict:
    return {
        (q, m): v
        for q, m, v in zip(columns["qid"], columns["measure"], columns[column], strict=True)
    }


def _drawn_runs(queries, samples, seed, name="r"):
    """Sampled mode's orderings (the same words), each as a run of distinct scores."""
    key = run_key(seed, name)
    out = [dict() for _ in range(samples)]
    for qid, docs in queries.items():
        names = np.array(list(docs), dtype=object)  # the run's row order breaks no tie
        scores = np.array([docs[d] for d in names])
        order = np.argsort(-scores, kind="stable")
        names, scores = names[order], scores[order]
        groups = np.concatenate([[0], np.cumsum(scores[1:] != scores[:-1])])
        words = sample_words(doc_words(key, np.full(len(names), qid), names), 0, samples)
        places = drawn_order(words, groups)
        for s in range(samples):
            ordered = names[np.argsort(places[s])]
            out[s][qid] = {doc: float(len(ordered) - k) for k, doc in enumerate(ordered)}
    return out


@settings(max_examples=30, deadline=None)
@given(cases(), st.integers(0, 3), st.sampled_from((None, 2)), st.booleans())
def test_sampled_groups_are_the_oblivious_values_of_the_drawn_orderings(
    case, seed, depth, complete
):
    text, queries = case
    groups = _groups(text)
    samples = 6
    run = {"r": _run(queries)}
    options = {"depth": depth, "complete": complete}
    try:
        got, num_q = evaluate_judgment_groups(
            run, groups, MEASURES, evaluate, ties="sampled", samples=samples, seed=seed, **options
        )
    except Exception as error:  # no judged query: refused in every mode
        assert "none of its queries" in str(error)
        return
    per_sample = []
    for drawn in _drawn_runs(queries, samples, seed):
        columns, counted = evaluate_judgment_groups(
            {"r": _run(drawn)}, groups, MEASURES, evaluate, ties="oblivious", **options
        )
        assert counted == num_q
        per_sample.append(_by_cell(columns))
    std = _by_cell(got, "std")
    for key, value in _by_cell(got).items():
        draws = np.array([each[key] for each in per_sample])
        assert value == pytest.approx(draws.mean(), abs=1e-12), key
        assert std[key] == pytest.approx(draws.std(ddof=1), abs=1e-12), key


def test_sampled_groups_agree_with_the_exact_mean():
    """Fixed seeds: every sampled mean within 4 of its stderr of the aware mean."""
    text = "1 u a 1\n1 u b 0\n1 u c 1\n1 v a 0\n1 v b 1\n1 v d 1\n2 u a 1\n2 w e 2\n2 w b 1\n"
    queries = {
        "1": {"a": 2.0, "b": 2.0, "c": 2.0, "d": 2.0, "x": 2.0},
        "2": {"a": 1.0, "e": 1.0, "b": 1.0},
    }
    groups = _groups(text)
    run = {"r": _run(queries)}
    exact = _by_cell(evaluate_judgment_groups(run, groups, MEASURES, evaluate, ties="aware")[0])
    for seed in (0, 1, 2):
        got, _ = evaluate_judgment_groups(
            run, groups, MEASURES, evaluate, ties="sampled", samples=2000, seed=seed
        )
        stderr = _by_cell(got, "stderr")
        for key, value in _by_cell(got).items():
            assert abs(value - exact[key]) <= 4 * stderr[key] + 1e-12, (seed, key)


def _spread_by_cell(columns):
    return {
        (q, m): (v, var, lo, hi)
        for q, m, v, var, lo, hi in zip(
            columns["qid"],
            columns["measure"],
            columns["value"],
            columns["var"],
            columns["min"],
            columns["max"],
            strict=True,
        )
    }


@settings(max_examples=60, deadline=None)
@given(cases(), st.sampled_from((None, 1, 2, 3)), st.sampled_from((1, 2)))
def test_aware_spread_of_the_group_average_over_every_ordering(case, depth, rel_level):
    """--spread: the exact variance, min and max over every ordering of the tied docs
    of the average over the judgment groups, which share the ordering (so the groups'
    measures covary), against the brute force; the value within its range."""
    text, queries = case
    groups = _groups(text)
    options = {"depth": depth, "rel_level": rel_level}
    try:
        aware, _ = evaluate_judgment_groups(
            {"r": _run(queries)}, groups, MEASURES, evaluate, ties="aware", spread=True, **options
        )
    except Exception as error:
        assert "none of its queries" in str(error)
        return
    got = _spread_by_cell(aware)
    for qid, docs in queries.items():
        per_order = []
        for order in orderings(list(docs.values()), list(docs)):
            distinct = {qid: {doc: float(len(order) - k) for k, doc in enumerate(order)}}
            try:
                columns, _ = evaluate_judgment_groups(
                    {"r": _run(distinct)}, groups, MEASURES, evaluate, ties="oblivious", **options
                )
            except Exception:
                break  # the query has no judgments
            per_order.append(_by_cell(columns))
        if not per_order:
            continue
        for measure in map(str, MEASURES):
            values = np.array([each[qid, measure] for each in per_order])
            value, var, low, high = got[qid, measure]
            assert value == pytest.approx(values.mean(), abs=1e-12), (qid, measure)
            assert var == pytest.approx(values.var(), abs=1e-12), (qid, measure)
            assert low == pytest.approx(values.min(), abs=1e-12), (qid, measure)
            assert high == pytest.approx(values.max(), abs=1e-12), (qid, measure)


def test_spread_of_a_big_tie_group_against_its_closed_forms():
    """A tie group of 40 docs, two groups: AP's variance by the moments equals the
    mean of 20,000 orderings' squared deviations within sampling error, and P@10's
    the multivariate hypergeometric covariance formula exactly."""
    from tiecore.engine.assignment import linear_spread, pairwise_spread

    n = 40
    rel = np.zeros((n, 2))
    rel[:6, 0] = 1
    rel[4:12, 1] = 1
    d = 1 / (2 * rel.sum(axis=0))
    w = 1 / np.arange(1, n + 1)
    a, b = rel @ d, (rel * d) @ rel.T
    mean, var = pairwise_spread(w, a, b)
    rng = np.random.default_rng(0)
    draws = []
    for _ in range(20_000):
        p = rng.permutation(n)
        r = rel[p]
        draws.append(float(((r * (np.cumsum(r, axis=0))) @ d * w).sum()))
    draws = np.array(draws)
    assert mean == pytest.approx(draws.mean(), abs=4 * draws.std() / np.sqrt(len(draws)))
    assert var == pytest.approx(draws.var(), rel=0.05)
    # P@10 averaged: X_g relevant of g in the top 10, Cov by the hypergeometric formula
    u = rel / (2 * 10)
    v = (np.arange(n) < 10).astype(float)[:, None] * np.ones((1, 2))
    _, var_p = linear_spread(u, v)
    k, big_n = 10, n
    counts = rel.sum(axis=0)
    both = float((rel[:, 0] * rel[:, 1]).sum())
    factor = k * (big_n - k) / (big_n - 1)
    cov = factor * (both / big_n - counts[0] * counts[1] / big_n**2)
    var_g = [factor * c / big_n * (1 - c / big_n) for c in counts]
    assert var_p == pytest.approx((var_g[0] + var_g[1] + 2 * cov) / 400, abs=1e-15)


def test_spread_of_every_row_holds_its_value_within_zero_and_one():
    """trec_eval's results.test with every score tied, under trec_eval's judgment groups:
    each row (queries and means) has 0 <= min <= value <= max <= 1 and a variance of 0
    exactly where min = max (the value plus a group's lowest contribution less its mean
    rounded to -3e-17, P@500's value fell 7e-16 below its min, and P@20's max was
    1.0000000000000002, before)."""
    from shared_data import TREC_EVAL

    results = (TREC_EVAL / "results.test").read_text().splitlines()
    tied = "".join(" ".join([*line.split()[:4], "1", *line.split()[5:]]) + "\n" for line in results)
    run = pd.DataFrame(
        [line.split()[:5] for line in tied.splitlines()],
        columns=["qid", "q0", "docno", "rank", "score"],
    )[["qid", "docno", "score"]].astype({"score": float})
    run.attrs["name"] = "tied"
    groups = read_qrels_jg(str(TREC_EVAL / "qrels.rel_level"))
    measures = parse_measures(["AP", "P@10", "P@20", "P@500", "Rprec(mult=0.2)", "Rprec"])
    columns, _ = evaluate_judgment_groups(
        {"tied": run}, groups, measures, evaluate, ties="aware", spread=True
    )
    value, var, low, high = (
        np.asarray(columns[c], dtype=float) for c in ("value", "var", "min", "max")
    )
    assert len(value) == 4 * len(measures) and (high > low).any()
    assert ((0 <= low) & (low <= value) & (value <= high) & (high <= 1)).all()
    np.testing.assert_array_equal(var == 0, low == high)
