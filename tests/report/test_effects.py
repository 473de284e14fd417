"""Effects in the units a paper prints (tiecore.report): which shifts show at 4 decimals,
the base rate of flags under random tie-breaking, and tables for a paper.

References: Python's own number formatting (what trec_eval's printf prints), scipy's
normal distribution, numpy's normal draws, real random tie-breaks of tiecore's
oblivious mode (``tiebreak="random"``) with a binomial tolerance, and a LaTeX
tabular read back cell by cell.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from test_report import _balanced, _tabular  # the LaTeX readers, defined once

import tiecore
from tiecore import report
from tiecore.spread import evaluate_spread

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")
MEASURES = ["AP", "nDCG@10", "P@10"]


@pytest.fixture(scope="module")
def many_queries():
    """Four tie-heavy runs (integer scores in 3..6 levels) on 250 queries of 20 documents."""
    rng = np.random.default_rng(0)
    n_queries, n_docs = 250, 20
    qids = np.repeat([f"q{i}" for i in range(n_queries)], n_docs)
    docs = np.tile([f"d{j}" for j in range(n_docs)], n_queries)
    qrels = pd.DataFrame(
        {"qid": qids, "docno": docs, "level": rng.choice([0, 0, 0, 1, 2], qids.size)}
    )
    runs = {
        f"r{k}": pd.DataFrame(
            {"qid": qids, "docno": docs, "score": rng.integers(0, k + 3, qids.size).astype(float)}
        )
        for k in range(4)
    }
    return runs, qrels


def _row(oblivious: float, aware: float, sd: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    keys = {"run": ["x"], "qid": [None], "measure": ["AP"]}
    spread = pd.DataFrame({**keys, "value": [aware], "var": [sd**2], "min": [0.0], "max": [1.0]})
    return pd.DataFrame({**keys, "value": [oblivious]}), spread


# ----------------------------------------------------------------------------- visible


@pytest.mark.parametrize(
    ("oblivious", "aware", "sd", "digits", "visible", "flagged"),
    [
        (0.38918, 0.3892, 1e-5, 4, False, False),  # 2 tie sd beyond, but both print 0.3892
        (0.38918, 0.3892, 1e-5, 5, True, False),  # 0.38918 vs 0.38920: shows, |z| = 2 exactly
        (0.38916, 0.3892, 1e-5, 5, True, True),  # shows and 4 tie sd
        (0.2680, 0.2630, 0.0017, 4, True, True),  # +0.0050, +2.9 tie sd
        (0.2680, 0.2630, 0.0017, 1, False, False),  # both print 0.3 at one decimal
        (0.5, 1.0, 0.0, 4, True, True),  # float32 shift (z = -inf) that shows
        (1 / 3 + 1e-13, 1 / 3, 0.0, 4, False, False),  # summation noise: no shift
    ],
)
def test_visible_is_the_printed_values_differing(oblivious, aware, sd, digits, visible, flagged):
    row = report.combine_modes(*_row(oblivious, aware, sd), digits=digits).iloc[0]
    assert row["visible"] == visible and row["flagged"] == flagged
    expected = f"{oblivious:.{digits}f}" != f"{aware:.{digits}f}" and row["delta"] != 0
    assert row["visible"] == expected


def test_noise_across_a_rounding_boundary_is_not_a_visible_shift():
    """0.12345 summed in two orders prints 0.1234 and 0.1235 (the double's exact binary
    value decides), but the two are one number: no shift, not visible."""
    low, high = np.nextafter(0.12345, 0), np.nextafter(0.12345, 1)
    assert f"{low:.4f}" != f"{high:.4f}"
    row = report.combine_modes(*_row(high, low, 1e-3)).iloc[0]
    assert row["delta"] == 0 and not row["visible"] and not row["flagged"]
    assert report.printed([-1e-17, 0.0], 4).tolist() == ["0.0000", "0.0000"]


def test_modes_table_passes_the_decimals_on(many_queries):
    runs, qrels = many_queries
    four = report.modes_table(runs, qrels, MEASURES)
    one = report.modes_table(runs, qrels, MEASURES, digits=1)
    assert four[list(report.COLUMNS[:-2])].equals(one[list(report.COLUMNS[:-2])])
    shows = [f"{o:.1f}" != f"{a:.1f}" for o, a in zip(one["oblivious"], one["aware"], strict=True)]
    assert one["visible"].tolist() == shows
    assert one["flagged"].sum() <= four["flagged"].sum()
    with pytest.raises(tiecore.InputError, match="digits"):
        report.modes_table(runs, qrels, "AP", digits=-1)


# ----------------------------------------------------------------------------- base rate


def test_without_rounding_the_base_rate_is_the_normal_tails(many_queries):
    runs, qrels = many_queries
    table = report.modes_table(runs, qrels, MEASURES)
    noisy = int((table["tie_sd"] > 0).sum())
    assert noisy == len(table)
    expected = noisy * 2 * norm.sf(2)
    assert report.expected_flags(table, digits=15) == pytest.approx(expected, rel=1e-9)
    assert report.expected_flags(table, digits=4) <= expected + 1e-12


def test_rows_without_tie_noise_add_nothing():
    table = pd.DataFrame({"aware": [0.5, 0.25, np.nan, 0.3], "tie_sd": [0.0, 0.0, 0.01, 0.01]})
    assert report.expected_flags(table.iloc[:2]) == 0.0
    assert report.expected_flags(table.iloc[:0]) == 0.0
    one = report.expected_flags(table.iloc[3:])
    assert report.expected_flags(table) == pytest.approx(one, rel=1e-15)
    assert one == pytest.approx(2 * norm.sf(2), rel=1e-9)  # 2 sd = 0.02 >> the cell's 5e-5


@pytest.mark.parametrize("digits", [2, 3, 4])
def test_the_base_rate_agrees_with_normal_draws_printed(digits):
    """Rows whose 2 tie sd are about the rounding cell's half width: draws from
    Normal(aware, sd^2), printed with Python's format, counted under the rule."""
    rng = np.random.default_rng(digits)
    aware = rng.uniform(0.1, 0.9, 40)
    sd = rng.uniform(0.05, 0.5, 40) * 10.0**-digits
    table = pd.DataFrame({"aware": aware, "tie_sd": sd})
    draws = 4000
    x = rng.normal(aware, sd, (draws, aware.size))
    shown = np.vectorize(lambda v: f"{v:.{digits}f}")
    flags = (shown(x) != shown(aware)) & (np.abs(x - aware) > 2 * sd)
    expected = report.expected_flags(table, digits) * draws
    tolerance = 4 * math.sqrt(expected) + 1
    assert abs(flags.sum() - expected) < tolerance, (flags.sum(), expected)
    assert expected < 0.9 * draws * aware.size * 2 * norm.sf(2)  # rounding matters here


def test_the_base_rate_agrees_with_real_random_tie_breaks(many_queries):
    """200 seeds of tiecore's random tie-break as the oblivious value, 12 values each:
    the flags counted under the rule (at 2, 3 and 4 decimals) are within a binomial
    tolerance of expected_flags x 200 (a normal approximation over 250 queries)."""
    runs, qrels = many_queries
    spread = evaluate_spread(runs, qrels, MEASURES)
    seeds = range(200)
    drawn = []
    for seed in seeds:  # one random tie-break per seed, each query broken independently
        one = tiecore.evaluate(
            runs, qrels, MEASURES, ties="oblivious", tiebreak="random", seed=seed
        )
        drawn.append(one.assign(run=one["run"] + f"#{seed}"))
    every = pd.concat(
        [spread.assign(run=spread["run"] + f"#{seed}") for seed in seeds], ignore_index=True
    )
    drawn = pd.concat(drawn, ignore_index=True)
    base = report.combine_modes(
        drawn[drawn["run"].str.endswith("#0")], spread.assign(run=spread["run"] + "#0")
    )
    assert (base["tie_sd"] > 0.002).all()
    for digits in (2, 3, 4):
        table = report.combine_modes(drawn, every, digits=digits)
        count = int(table["flagged"].sum())
        expected = report.expected_flags(base, digits) * len(seeds)
        p = expected / len(table)
        tolerance = 4 * math.sqrt(len(table) * p * (1 - p))
        assert abs(count - expected) < tolerance, (digits, count, expected)


def test_the_verdict_compares_the_count_with_the_base_rate():
    p, words = report.flag_verdict(12, 9.0)
    assert words.startswith("about what random tie-breaking alone gives")
    from scipy.stats import poisson

    assert p == pytest.approx(1 - poisson.cdf(11, 9.0), rel=1e-9)
    assert report.flag_verdict(27, 9.0)[1].startswith("more than random tie-breaking explains")
    assert report.flag_verdict(0, 9.0)[1].startswith("fewer than random tie-breaking")
    assert report.flag_verdict(0, 0.0)[0] == 1.0


# ----------------------------------------------------------------------------- formats


def test_shifts_and_p_values_print_as_a_paper_prints_them():
    assert report.format_shift(0.005) == "+0.0050"
    assert report.format_shift(-0.0017) == "-0.0017"
    assert report.format_shift(2.2e-5) == "+0.00002"
    assert report.format_shift(float("nan")) == "—"
    assert report.format_pvalue(0.0004) == "< 0.001"
    assert report.format_pvalue(0.001) == "0.001"
    assert report.format_pvalue(0.04567) == "0.0457"
    assert report.format_pvalue(float("nan")) == "—"
    assert report.format_value(None) == "—"


def test_frame_to_latex_escapes_text_and_formats_numbers():
    frame = pd.DataFrame(
        {
            "system": ["bm25_{x}&y", "50%~^\\$#<|>", "plain"],
            "rank": [1, 2, 3],
            "mean_diff": [0.25, -1 / 3, np.nan],
            "t_pvalue_adj": [0.0004, 0.0123, np.nan],
            "swapped": [True, False, True],
            "note": ["a", None, "c"],
        }
    ).set_index("system")
    latex = report.frame_to_latex(
        frame, caption="Pairs & swaps_1", label="tab:pairs", provenance={"data set": "R_03"}
    )
    assert latex.startswith("% data set: R_03\n% needs \\usepackage{booktabs}")
    assert _balanced(latex)
    assert "\\resizebox{\\columnwidth}{!}{%" in latex and "graphicx" in latex
    assert "\\caption{Pairs \\& swaps\\_1}" in latex and "\\label{tab:pairs}" in latex
    spec, rows = _tabular(latex)
    assert spec == "lrrrll"  # the index first, numbers right-aligned
    assert all(len(row) == len(spec) for row in rows)
    assert rows[0] == ["system", "rank", "mean\\_diff", "t\\_pvalue\\_adj", "swapped", "note"]
    assert rows[1] == ["bm25\\_\\{x\\}\\&y", "1", "0.2500", "$<$ 0.001", "yes", "a"]
    assert rows[2][0] == (
        "50\\%\\textasciitilde{}\\textasciicircum{}\\textbackslash{}\\$\\#"
        "\\textless{}\\textbar{}\\textgreater{}"
    )
    assert rows[2][1:] == ["2", "-0.3333", "0.0123", "no", "---"]
    assert rows[3][1:] == ["3", "---", "---", "yes", "c"]
    assert "nan" not in latex.lower() and "None" not in latex
    plain = report.frame_to_latex(frame.reset_index(), caption="x", resize=False)
    assert "resizebox" not in plain and _tabular(plain)[0] == spec
