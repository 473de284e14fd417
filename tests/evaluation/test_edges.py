"""Regression tests of the edge-case audit: inputs nobody had tried, each test failing
before its fix (a wrong number, a traceback instead of an InputError, a p-value shown as a
plain number where it is only a bound)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from reference import Spec, reference_aware
from scipy import stats

from tiecore import metrics
from tiecore.report import significance_vs_best


def _rows(a: list[float], b: list[float]) -> pd.DataFrame:
    qids = [str(i) for i in range(len(a))]
    return pd.DataFrame(
        {"run": ["a"] * len(a) + ["b"] * len(b), "qid": qids * 2, "measure": "AP", "value": a + b}
    )


def test_report_constant_difference_with_rounding_noise_is_not_significant():
    # 0.3 - 0.2, 0.4 - 0.3 and 0.7 - 0.6 are 0.1 up to rounding: no test, not "p = 3.5e-32"
    a, b = [0.3, 0.4, 0.7], [0.2, 0.3, 0.6]
    assert np.ptp(np.subtract(a, b)) > 0  # the rounding noise is there
    marks = significance_vs_best(_rows(a, b)).set_index("run")
    assert np.isnan(marks.loc["b", "p_value"]) and not marks.loc["b", "significant"]


def test_report_varying_difference_matches_scipy():
    a, b = [0.9, 0.8, 0.7, 0.4], [0.1, 0.2, 0.2, 0.35]
    marks = significance_vs_best(_rows(a, b)).set_index("run")
    assert marks.loc["b", "p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)


def _two_runs(n_queries: int) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """One relevant doc ``d1`` per query: run ``A`` scores it 3 or 2 (tied with ``d2``), run
    ``B`` 1, 2 or 3 against ``d2``'s 3, so ``A`` is ahead on almost every query."""
    rng = np.random.default_rng(1)
    qids = np.repeat([f"q{i}" for i in range(n_queries)], 3)
    docs = np.tile(["d1", "d2", "d3"], n_queries)
    qrels = pd.DataFrame({"qid": qids, "docno": docs, "level": np.tile([1, 0, 0], n_queries)})
    ones = np.ones(n_queries)
    score_a = np.column_stack([rng.integers(2, 4, n_queries), 2 * ones, ones])
    score_b = np.column_stack([rng.integers(1, 4, n_queries), 3 * ones, 0 * ones])
    runs = {
        name: pd.DataFrame({"qid": qids, "docno": docs, "score": s.ravel().astype(float)})
        for name, s in (("A", score_a), ("B", score_b))
    }
    return runs, qrels


def test_compare_underflowed_p_values_print_as_a_bound():
    from tiecore.compare import compare
    from tiecore.report.comparison import format_comparison
    from tiecore.stats import SMALLEST_P

    runs, qrels = _two_runs(3000)
    result = compare(runs, qrels, "AP", samples=20, n_bootstrap=100, n_resamples=100)
    pair = result.pairs.loc[("A", "B")]
    # scipy's own tails underflow too: the true p-values are below any float
    x = result.per_query["A"] - result.per_query["B"]
    assert stats.ttest_1samp(x, 0.0).pvalue == 0.0
    assert pair["t_pvalue"] == SMALLEST_P and pair["wilcoxon_pvalue"] == SMALLEST_P
    text = format_comparison(result)
    assert "<1e-300" in text and "2.23e-308" not in text and "4.45e-308" not in text


def _tiny() -> tuple[pd.DataFrame, pd.DataFrame]:
    run = pd.DataFrame({"qid": ["1"] * 3, "docno": ["d1", "d2", "d3"], "score": [3.0, 2.0, 2.0]})
    qrels = pd.DataFrame({"qid": ["1"] * 3, "docno": ["d1", "d3", "d5"], "level": [1, 2, 0]})
    return run, qrels


@pytest.mark.parametrize("family", ["ERR", "AP(denom=min)", "nDCG(ideal=local)", "P"])
def test_cutoff_past_int64_is_an_input_error(family):
    from tiecore import InputError, evaluate

    run, qrels = _tiny()
    with pytest.raises(InputError, match="a cutoff must be an integer from 1 to 2147483647"):
        evaluate(run, qrels, [f"{family}@99999999999999999999"])


def test_ndcg_max_ideal_at_a_huge_cutoff_needs_no_huge_array():
    from tiecore import evaluate
    from tiecore.measures import MAX_CUTOFF

    run, qrels = _tiny()
    k = 2**20 + 7  # past the direct sum: against the direct sum of k terms
    discounts = math.fsum(1.0 / np.log2(np.arange(2.0, k + 2)))
    dcg = 1.0 / np.log2(2) + 2.0 / np.log2(3)  # d1 (1) at rank 1, d3 (2) first in docno desc
    out = evaluate(run, qrels, [f"nDCG(ideal=max)@{k}"], ties="oblivious")
    assert out["value"].iloc[-1] == pytest.approx(dcg / (2.0 * discounts), rel=1e-13)
    # the largest cutoff: finite, positive, in the memory of a small run
    out = evaluate(run, qrels, [f"nDCG(ideal=max)@{MAX_CUTOFF}"], ties="aware")
    assert 0 < out["value"].iloc[-1] < 1e-7


def test_a_parameter_given_twice_is_refused():
    from tiecore import InputError
    from tiecore.measures import Measure

    with pytest.raises(InputError, match="parameter 'p' given twice"):
        Measure.parse("RBP(p=0.8,p=0.5)")


_METRICS = {  # function -> tiecore family
    metrics.average_precision: "AP",
    metrics.reciprocal_rank: "RR",
    metrics.hits_at_k: "Success",
    metrics.precision_at_k: "P",
    metrics.recall_at_k: "R",
    metrics.ndcg: "nDCG",
}


@settings(max_examples=60, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 3), st.integers(1, 6)),
    data=st.data(),
    k=st.integers(1, 6),
    rel_level=st.integers(-1, 0),
    function=st.sampled_from(list(_METRICS)),
)
def test_metrics_with_level_zero_relevant_equal_brute_force(shape, data, k, rel_level, function):
    # rel_level <= 0: a level-0 candidate is relevant (levels >= 0 only, as trec_eval);
    # every candidate counts, not only those with a nonzero level
    y_true = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-2, 2)))
    y_score = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1.0, 2.0])))
    options = {} if function is metrics.ndcg else {"rel_level": rel_level}
    got = function(y_true, y_score, k=k, average=False, **options)
    spec = Spec(_METRICS[function], k)
    for row, value in enumerate(got):
        labels = y_true[row].tolist()
        expected = reference_aware([spec], y_score[row].tolist(), labels, labels, **options)
        assert value == pytest.approx(expected[spec], abs=1e-12)


def test_metrics_level_zero_relevant_small_case():
    # three candidates, every level >= 0: all relevant at rel_level=0, AP 1 and P@2 1
    y_true, y_score = np.array([[0, 0, 1]]), np.array([[3.0, 2.0, 1.0]])
    assert metrics.average_precision(y_true, y_score, rel_level=0) == 1.0
    assert metrics.precision_at_k(y_true, y_score, k=2, rel_level=0) == 1.0


@pytest.mark.parametrize(
    "level", [1e20, 2.0**63, -(2.0**64), np.uint64(2**63 + 5)], ids=["1e20", "2^63", "-2^64", "u64"]
)
def test_metrics_level_past_int64_is_an_input_error(level):
    from tiecore import InputError

    y_true = np.array([[level, 0, 1]], dtype=np.asarray(level).dtype)
    with pytest.raises(InputError, match=r"y_true\[0, 0\] = .* is out of range"):
        metrics.ndcg(y_true, np.array([[0.5, 0.2, 0.1]]))


@pytest.mark.parametrize(
    "kind, columns, twice",
    [
        ("run", ["qid", "docno", "score", "score"], "score"),
        ("run", ["query_id", "docno", "score", "query_id"], "qid"),
        ("qrels", ["qid", "docno", "level", "level"], "level"),
    ],
)
def test_read_a_frame_with_a_column_twice_is_an_input_error(kind, columns, twice):
    import tiecore
    from tiecore import InputError

    frame = pd.DataFrame([["1", "d1", 1, 2]], columns=columns)
    read = tiecore.read_run if kind == "run" else tiecore.read_qrels
    with pytest.raises(InputError, match=f"column '{twice}' appears more than once"):
        read(frame)


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_evaluate_a_frame_with_a_column_twice_is_an_input_error(kind):
    import tiecore
    from tiecore import InputError

    run = pd.DataFrame({"qid": ["1"], "docno": ["d1"], "score": [1.0]})
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["d1"], "level": [1]})
    column = "score" if kind == "run" else "level"
    frame = run if kind == "run" else qrels
    doubled = pd.concat([frame, frame[[column]]], axis=1)
    args = (doubled, qrels) if kind == "run" else (run, doubled)
    with pytest.raises(InputError, match=f"column '{column}' appears more than once"):
        tiecore.evaluate(*args, "AP")


@pytest.mark.parametrize("measure", ["ERR@5", "nDCG(ideal=local)", "AP"])
def test_depth_past_int64_is_an_input_error(measure):
    from tiecore import InputError, evaluate

    run, qrels = _tiny()
    with pytest.raises(
        InputError, match=r"depth: 100000000000000000000 is out of range \(at most 2147483647\)"
    ):
        evaluate(run, qrels, [measure], depth=10**20)
    assert len(evaluate(run, qrels, [measure], depth=2**31 - 1)) == 1  # the largest is taken


def _modes(runs: dict[str, tuple[float, float]]) -> pd.DataFrame:
    """A modes table (tiecore.report.combine_modes) of one measure: run -> (oblivious, aware)."""
    from tiecore.report import combine_modes

    keys = {"run": list(runs), "qid": [None] * len(runs), "measure": ["P@1"] * len(runs)}
    oblivious = pd.DataFrame({**keys, "value": [v[0] for v in runs.values()]})
    aware = [v[1] for v in runs.values()]
    spread = pd.DataFrame(
        {**keys, "value": aware, "var": [0.01] * len(runs), "min": [0.0] * len(runs)}
    ).assign(max=1.0)
    return combine_modes(oblivious, spread)


def test_latex_escapes_every_special_character_once():
    from tiecore.report import to_latex

    latex = to_latex(_modes({"r~1^2\\x{}": (1.0, 0.5)}))
    # \ is \textbackslash{} (its braces not escaped again); ~ and ^ are text, not a space
    # and a superscript outside math
    assert "\nr\\textasciitilde{}1\\textasciicircum{}2\\textbackslash{}x\\{\\} & " in latex


def test_tables_bold_every_run_tied_for_the_best_aware_value():
    from tiecore.report import to_latex, to_markdown

    table = _modes({"a": (1.0, 0.75), "b": (0.5, 0.25 + 0.5), "c": (1.0, 0.5)})
    assert to_latex(table).count("\\textbf{") == 2
    assert to_markdown(table).count("**0.7500") == 2


def test_markdown_system_names_are_not_markup():
    from tiecore.report import to_markdown

    markdown = to_markdown(_modes({"*a_b|c*": (1.0, 0.5)}))
    assert "\n| \\*a\\_b\\|c\\* | " in markdown


def test_compare_labels_a_confidence_level_with_its_digits():
    from tiecore.compare import compare
    from tiecore.report.comparison import format_comparison

    runs, qrels = _two_runs(12)
    text = format_comparison(compare(runs, qrels, "AP", samples=5, confidence=0.9999999))
    assert "ci99.99999%" in text and "ci: 99.99999% bootstrap" in text and "100%" not in text


@pytest.mark.parametrize("command", ["report", "eval"])
@pytest.mark.parametrize("empty", ["", ","])
def test_an_empty_measure_list_is_refused(tmp_path, capsys, empty, command):
    from tiecore import cli

    run, qrels = _tiny()
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 1 {s} r\n" for q, d, s in run.values))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {v}\n" for q, d, v in qrels.values))
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert cli.main([command, *files, "-m", empty]) == 2  # not the default measures
    assert "no measures given" in capsys.readouterr().err
    assert cli.main([command, *files]) == 0
    assert ("| system | P@10 |" if command == "report" else "P@10") in capsys.readouterr().out


@pytest.mark.parametrize(
    "name, problem",
    [
        ("ERR(max_rel=0)@5", "ERR's max_rel must be one of"),  # was a KeyError in ir_measures
        ("ERR(max_rel=4.5)@5", "ERR's max_rel must be one of"),
        ("IPrec@1.5", "IPrec's recall must be from 0 to 1"),  # any level in [0, 1] is one
        ("iprec_at_recall_2.00", "IPrec's recall must be from 0 to 1"),
        ("RBP(p=0.8,p=0.5)", "parameter 'p' given twice"),  # was RBP(p=0.5)
    ],
)
def test_measure_values_tiecore_refuses_are_refused_everywhere(name, problem):
    from tiecore import InputError
    from tiecore.measures import parse_measures

    with pytest.raises(InputError, match=re.escape(problem)):
        parse_measures(name)


def test_recall_levels_on_the_tenth_steps_still_parse():
    from tiecore.measures import parse_measures

    names = ["IPrec@0.1", "IPrec@1", "iprec_at_recall_0.10", "iprec_at_recall_1.00"]
    # trec_eval's names are the same measures (trec_eval 9.0.x's rounding): one each
    assert [str(m) for m in parse_measures(names)] == ["IPrec(recall=0.1)", "IPrec(recall=1.0)"]


def test_metrics_take_nan_padding_in_both_arrays():
    # rows of different lengths padded with NaN in y_true and y_score: the cells are left out
    y_true = np.array([[1, 0, np.nan], [0, 1, 1]])
    y_score = np.array([[0.5, 0.2, np.nan], [3.0, 2.0, 1.0]])
    got = metrics.average_precision(y_true, y_score, average=False)
    assert got.tolist() == [1.0, pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-15)]
    from tiecore import InputError

    with pytest.raises(InputError, match=r"y_true\[0, 2\] = nan is not an integer"):
        metrics.average_precision(y_true, np.nan_to_num(y_score, nan=0.1))  # a kept cell


def test_wilcoxon_pvalues_of_a_nan_column_is_undefined_not_zero():
    from tiecore.stats.wilcoxon import wilcoxon_pvalues

    d = np.array([[0.5, 0.5], [np.nan, 0.3], [0.2, 0.2]])
    got = wilcoxon_pvalues(d)  # the NaN column was p = 0
    assert np.isnan(got[0])
    assert got[1] == pytest.approx(stats.wilcoxon(d[:, 1]).pvalue, rel=1e-12)


def test_wilcoxon_pvalues_of_a_1d_sample_is_one_test():
    from tiecore.stats.wilcoxon import wilcoxon_pvalues

    d = np.array([0.5, 0.2, -0.1, 0.7])  # was three one-row columns, each p = 1
    assert wilcoxon_pvalues(d).tolist() == [pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-12)]


def test_p_beats_without_a_finite_sample_is_undefined():
    from tiecore.stats.beats import p_beats

    assert np.isnan(p_beats(np.array([np.nan]), np.array([1.0])))  # was 1.0
    assert np.isnan(p_beats(np.array([]), np.array([1.0])))  # was a numpy ValueError


@pytest.mark.parametrize("name", ["P@1e3", "P@-1", "P@1.5", "nDCG(gain=exp)@x"])
def test_a_cutoff_that_is_no_integer_is_named(name):
    from tiecore import InputError
    from tiecore.measures import parse_measures

    cutoff = name.split("@")[1]
    # was "unknown measure 'P@1000.0'" (ir_measures' parser) or "unknown measure 'P@-1'"
    with pytest.raises(InputError, match=f"cutoff '{re.escape(cutoff)}' is not an integer"):
        parse_measures(name)


def test_several_names_in_one_python_string_are_refused_as_such():
    from tiecore import InputError
    from tiecore.measures import parse_measures

    with pytest.raises(InputError, match=re.escape("'P@1,AP' names several measures")):
        parse_measures("P@1,AP")
    assert [str(m) for m in parse_measures("RBP(p=0.5,gain=exp)@5")] == ["RBP(p=0.5,gain=exp)@5"]


@pytest.mark.parametrize("bad", [-0.1, 1.5, np.inf])
def test_adjust_pvalues_refuses_what_is_no_p_value(bad):
    from tiecore import InputError
    from tiecore.stats.corrections import adjust_pvalues

    # was a "corrected" -0.2, or 1 for 1.5 and inf
    with pytest.raises(InputError, match="is not a p-value"):
        adjust_pvalues(np.array([bad, 0.2]), "holm")
    got = adjust_pvalues(np.array([0.01, np.nan, 0.04]), "bh")
    assert np.isnan(got[1]) and np.allclose(
        got[[0, 2]], stats.false_discovery_control([0.01, 0.04])
    )


@pytest.mark.parametrize(("n", "r"), [(20_000, 37), (3_000, 2), (4_000, 2_000)])
def test_first_relevant_measures_in_a_huge_tie_group_equal_exact_fractions(n, r):
    """RR, RR@10 and Success@10 of one query whose n docs all tie, r relevant, against
    ``sum_p C(n-1-p, r-1) / C(n, r) * w(p)`` in exact rationals (the log k! differences
    lost 2e-11 at n = 20,000)."""
    import tiecore

    run = pd.DataFrame({"qid": "1", "docno": [f"d{i}" for i in range(n)], "score": 1.0})
    relevant = [f"d{i}" for i in range(0, n, n // r)][:r]
    qrels = pd.DataFrame({"qid": "1", "docno": relevant, "level": 1})
    got = tiecore.evaluate(run, qrels, ["RR", "RR@10", "Success@10"], ties="aware")
    got = got.set_index("measure")["value"]
    total = math.comb(n, r)
    first = [Fraction(math.comb(n - 1 - p, r - 1), total) for p in range(n - r + 1)]
    exact = {
        "RR": sum(f / (p + 1) for p, f in enumerate(first)),
        "RR@10": sum(f / (p + 1) for p, f in enumerate(first[:10])),
        "Success@10": sum(first[:10]),
    }
    for measure, value in exact.items():
        assert got[measure] == pytest.approx(float(value), rel=1e-14, abs=0), measure


@pytest.mark.parametrize(("n", "r"), [(2_000, 5), (20_000, 37)])
def test_first_relevant_variances_in_a_huge_tie_group_equal_exact_fractions(n, r):
    """The exact spread's variance of RR and Success@10 on one fully tied query, against
    exact rationals (Success@10's miss probability from log k! lost 2e-11 at n = 2000)."""
    from tiecore import spread

    run = pd.DataFrame({"qid": "1", "docno": [f"d{i}" for i in range(n)], "score": 1.0})
    relevant = [f"d{i}" for i in range(0, n, n // r)][:r]
    qrels = pd.DataFrame({"qid": "1", "docno": relevant, "level": 1})
    got = spread.evaluate_spread(run, qrels, ["RR", "Success@10"]).set_index("measure")["var"]
    total = math.comb(n, r)
    first = [Fraction(math.comb(n - 1 - p, r - 1), total) for p in range(n - r + 1)]
    mean = sum(f / (p + 1) for p, f in enumerate(first))
    hit = sum(first[:10])
    exact = {
        "RR": sum(f / (p + 1) ** 2 for p, f in enumerate(first)) - mean**2,
        "Success@10": hit * (1 - hit),
    }
    for measure, value in exact.items():
        assert got[measure] == pytest.approx(float(value), rel=1e-13, abs=0), measure
