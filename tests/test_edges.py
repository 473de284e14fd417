"""Regression tests of the edge-case audit: inputs nobody had tried, each test failing
before its fix (a wrong number, a traceback instead of an InputError, a p-value shown as a
plain number where it is only a bound)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

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
