"""Scoring functions side by side (tiecore.explain.policies.scoring_table) against scipy's
ranks and a hand-made case."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import rankdata

from tiecore import report
from tiecore.explain import policies

levels = st.sampled_from([0.1, 0.2, 0.3, 0.4])


@given(
    st.lists(st.tuples(levels, levels, levels, levels), min_size=2, max_size=8), st.integers(1, 4)
)
def test_ranks_range_bias_and_order(rows, top):
    names = [f"s{i}" for i in range(len(rows))]
    values = pd.DataFrame(
        rows, columns=["aware", "trec_eval", "docno_asc", "file_order"], index=names
    )
    share = pd.Series(np.linspace(0, 1, len(rows)), index=names)
    table = policies.scoring_table(values, share, top)
    assert sorted(table.index) == sorted(names)
    keys = list(zip(-table["aware"], -table["trec_eval"], strict=True))
    assert keys == sorted(keys)  # best tie-aware first, then trec_eval
    for policy in ("aware", *policies.ARBITRARY):
        expected = rankdata(-values[policy].to_numpy(), method="min")
        assert (table.loc[names, f"rank_{policy}"].to_numpy() == expected).all()
    arbitrary = np.column_stack(
        [rankdata(-values[p].to_numpy(), method="min") for p in policies.ARBITRARY]
    )
    assert (table.loc[names, "rank_range"].to_numpy() == arbitrary.max(1) - arbitrary.min(1)).all()
    best, worst = arbitrary.min(1), arbitrary.max(1)
    assert (
        table.loc[names, "top_k_depends_on_tiebreak"].to_numpy() == ((best <= top) & (worst > top))
    ).all()
    bias = values["trec_eval"] - values["aware"]
    bias = bias.where(bias.abs() >= report.NOISE, 0.0)
    assert np.allclose(table.loc[names, "trec_eval_minus_aware"], bias, rtol=0, atol=1e-15)
    assert (table.loc[names, "share_tied_rows"] == share).all()
