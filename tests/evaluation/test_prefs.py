"""trec_eval's preference measures under ties: exact expectation, variance and range.

``evaluate_prefs(..., ties="aware", spread=True)`` against the brute force: every
ordering of each query's tied docs, each evaluated oblivious (distinct scores in that
order): their mean, (population) variance, min and max.
Holds for every measure but the two ``Rnonrel`` ones, which recount by rank (aware
mode leaves them out).  The oblivious values themselves are trec_eval 9.0.8's
(``tests/cli/test_trec_eval_flags.py``, goldens).
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

from tiecore.errors import InputError
from tiecore.evaluation.prefs import evaluate_prefs
from tiecore.io.trec_eval_files import read_prefs
from tiecore.measures.prefs import PREFS_MEASURES, RANK_RECOUNTED

DOCS = ("a", "B", "c2", "d", "e_", "f")


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, dict[str, dict[str, float]]]:
    """Preference lines (a few JGs, some of several consistent sub-groups) and a run of
    tie-heavy scores over some of the judged docs and some unjudged ones."""
    lines = []
    queries = {}
    cut = draw(st.integers(2, 5))  # docs worth this or less are non-relevant (level 0)
    for qid in ("1", "2"):
        for jg in range(draw(st.integers(1, 3))):
            order = draw(st.permutations(DOCS))  # one consistent order per JG
            worth = {doc: len(DOCS) - k for k, doc in enumerate(order)}
            for jsg in range(draw(st.integers(1, 3))):
                docs = draw(st.lists(st.sampled_from(DOCS), min_size=2, max_size=4, unique=True))
                for doc in docs:
                    level = 0 if worth[doc] <= cut else worth[doc]
                    lines.append(f"{qid} g{jg} s{jsg} {doc} {level}\n")
        run_docs = draw(
            st.lists(st.sampled_from((*DOCS, "x", "y")), min_size=1, max_size=5, unique=True)
        )
        queries[qid] = {doc: draw(st.sampled_from((1.0, 2.0, 3.0))) for doc in run_docs}
    return "".join(lines), queries


def _run(queries: dict[str, dict[str, float]]) -> pd.DataFrame:
    rows = [(qid, doc, score) for qid, docs in queries.items() for doc, score in docs.items()]
    return pd.DataFrame(rows, columns=["qid", "docno", "score"])


def _values(columns: dict[str, list]) -> dict[tuple[str | None, str], float]:
    return {
        (q, m): v
        for q, m, v in zip(columns["qid"], columns["measure"], columns["value"], strict=True)
    }


@settings(max_examples=60, deadline=None)
@given(cases())
def test_aware_prefs_equal_the_mean_over_every_ordering(case):
    text, queries = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "prefs"
        path.write_text(text)
        prefs = read_prefs(path)
    aware, _ = evaluate_prefs({"r": _run(queries)}, prefs, ties="aware", spread=True)
    got = _values(aware)
    spread = {
        (q, m): (var, low, high)
        for q, m, var, low, high in zip(
            aware["qid"], aware["measure"], aware["var"], aware["min"], aware["max"], strict=True
        )
    }
    for qid, docs in queries.items():
        per_order = []
        for order in orderings(list(docs.values()), list(docs)):
            distinct = {qid: {doc: float(len(order) - k) for k, doc in enumerate(order)}}
            try:
                columns, _ = evaluate_prefs({"r": _run(distinct)}, prefs, ties="oblivious")
            except InputError:
                return  # inconsistent preferences: refused in both modes
            per_order.append(_values(columns))
        for measure in PREFS_MEASURES:
            if (qid, measure) not in per_order[0]:
                continue
            values = np.array([each[qid, measure] for each in per_order])
            mean = values.mean()
            if measure in RANK_RECOUNTED:  # the exact mean (nan: none here), no spread
                if not np.isnan(got[qid, measure]):
                    assert got[qid, measure] == pytest.approx(mean, abs=1e-12), (qid, measure)
                continue
            assert got[qid, measure] == pytest.approx(mean, abs=1e-12), (qid, measure)
            var, low, high = spread[qid, measure]
            assert var == pytest.approx(values.var(), abs=1e-12), (qid, measure)
            assert low == pytest.approx(values.min(), abs=1e-12), (qid, measure)
            assert high == pytest.approx(values.max(), abs=1e-12), (qid, measure)
            assert low - 1e-12 <= got[qid, measure] <= high + 1e-12


def test_aware_prefs_hand_example():
    """One JG preferring a > b > c; a and b tied, c below: ful_ret = 1/2 + 1 + 1."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "prefs"
        path.write_text("1 g s a 3\n1 g s b 2\n1 g s c 1\n")
        prefs = read_prefs(path)
    run = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "score": [2.0, 2.0, 1.0]})
    got = _values(evaluate_prefs({"r": run}, prefs, ties="aware")[0])
    assert got["1", "prefs_num_prefs_ful_ret"] == 2.5
    assert got["1", "prefs_simp"] == pytest.approx(2.5 / 3)
    assert got["1", "prefs_pair"] == pytest.approx(2.5 / 3)


def test_aware_prefs_refuse_a_depth_that_cuts_a_tie_group():
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "prefs"
        path.write_text("1 g s a 3\n1 g s b 2\n")
        prefs = read_prefs(path)
    run = pd.DataFrame({"qid": "1", "docno": ["a", "b"], "score": [2.0, 2.0]})
    with pytest.raises(InputError, match="cuts a group of tied scores"):
        evaluate_prefs({"r": run}, prefs, ties="aware", depth=1)


def _drawn_runs(queries, samples, seed, name="r"):
    """The orderings sampled mode draws (the same words, tiecore.evaluation.tie_draws),
    each as a run of distinct scores: per sample, per query, its docs in drawn order."""
    from tiecore.evaluation.tie_draws import doc_words, drawn_order, run_key, sample_words

    key = run_key(seed, name)
    out = [dict() for _ in range(samples)]
    for qid, docs in queries.items():
        names = np.array(sorted(docs, key=lambda d: (-docs[d], d)))  # aware's order
        scores = np.array([docs[d] for d in names])
        groups = np.concatenate([[0], np.cumsum(scores[1:] != scores[:-1])])
        words = sample_words(doc_words(key, np.full(len(names), qid), names), 0, samples)
        places = drawn_order(words, groups)
        for s in range(samples):
            ordered = names[np.argsort(places[s])]
            out[s][qid] = {doc: float(len(ordered) - k) for k, doc in enumerate(ordered)}
    return out


@settings(max_examples=40, deadline=None)
@given(cases(), st.integers(0, 3))
def test_sampled_prefs_are_the_oblivious_values_of_the_drawn_orderings(case, seed):
    """Every draw of sampled mode is one ordering of the tied docs, evaluated as
    trec_eval evaluates it (the Rnonrel recounts included): the sampled mean, std and
    stderr are those of the oblivious values of the drawn orderings."""
    text, queries = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "prefs"
        path.write_text(text)
        prefs = read_prefs(path)
    samples = 7
    try:
        sampled, _ = evaluate_prefs(
            {"r": _run(queries)}, prefs, ties="sampled", samples=samples, seed=seed
        )
    except InputError:
        return  # inconsistent preferences (or no judged query): refused in every mode
    per_sample = []
    for drawn in _drawn_runs(queries, samples, seed):
        columns, _ = evaluate_prefs({"r": _run(drawn)}, prefs, ties="oblivious")
        per_sample.append(_values(columns))
    rows = zip(sampled["qid"], sampled["measure"], sampled["value"], sampled["std"], strict=True)
    for qid, measure, value, std in rows:
        draws = np.array([each[qid, measure] for each in per_sample])
        assert value == pytest.approx(draws.mean(), abs=1e-12), (qid, measure)
        assert std == pytest.approx(draws.std(ddof=1), abs=1e-12), (qid, measure)


def test_sampled_prefs_agree_with_the_exact_mean():
    """Fixed seeds: on a query with a tie group of five judged docs and several JGs, the
    sampled mean of every measure lies within 4 of its reported stderr of the exact
    (aware) mean, the sampled std near the exact one; more samples, closer."""
    text = (
        "1 g0 s a 3\n1 g0 s b 2\n1 g0 s c 1\n1 g0 s d 0\n1 g0 s e 0\n"
        "1 g1 s b 2\n1 g1 s e 1\n1 g1 s a 0\n1 g1 t c 2\n1 g1 t e 1\n"
        "1 g2 s d 1\n1 g2 s c 0\n1 g2 s f 0\n"
    )
    queries = {"1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0, "f": 2.0, "x": 1.0}}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "prefs"
        path.write_text(text)
        prefs = read_prefs(path)
    run = {"r": _run(queries)}
    aware, _ = evaluate_prefs(run, prefs, ties="aware", spread=True)
    exact = {
        (q, m): (v, var)
        for q, m, v, var in zip(
            aware["qid"], aware["measure"], aware["value"], aware["var"], strict=True
        )
    }
    errors = {}
    for samples in (400, 6400):
        for seed in (0, 1, 2):
            got, _ = evaluate_prefs(
                run, prefs, ties="sampled", samples=samples, seed=seed, recount=False
            )
            rows = zip(
                got["qid"], got["measure"], got["value"], got["std"], got["stderr"], strict=True
            )
            for qid, measure, value, std, stderr in rows:
                if measure in RANK_RECOUNTED:
                    assert np.isnan(value)  # recount=False: not recounted
                    continue
                mean, var = exact[qid, measure]
                assert abs(value - mean) <= 4 * stderr + 1e-12, (samples, seed, qid, measure)
                assert std == pytest.approx(np.sqrt(var), rel=0.2, abs=1e-12)
                errors.setdefault(samples, []).append(abs(value - mean))
    assert max(errors[6400]) < max(errors[400])
    # the Rnonrel recounts, drawn ordering by ordering, near their exact expectation
    got, _ = evaluate_prefs(run, prefs, ties="sampled", samples=1500, seed=5)
    rows = zip(got["qid"], got["measure"], got["value"], got["stderr"], strict=True)
    checked = 0
    for qid, measure, value, stderr in rows:
        if measure in RANK_RECOUNTED:
            assert abs(value - exact[qid, measure][0]) <= 4 * stderr + 1e-12, (qid, measure)
            checked += stderr > 0
    assert checked  # some Rnonrel value varies with the order of the tied docs
