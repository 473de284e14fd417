"""tiecore.explain.anatomy against brute force: every ordering of small tie-heavy lists.

The reference (``tests/reference.py``) enumerates the orderings and scores each
with slow measures written from the definitions; the per-rank expectations are
checked rank by rank (the term of rank ``j`` of one ordering is the measure cut
at depth ``j`` minus the measure cut at ``j - 1``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from strategies import SCORES, queries

import tiecore
from tiecore.explain import anatomy, orderings, policies
from tiecore.spread import evaluate_spread

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FAMILIES = [
    ref.Spec("P", 3), ref.Spec("R", 2), ref.Spec("F1", 4), ref.Spec("Rprec"), ref.Spec("AP"),
    ref.Spec("AP", 3), ref.Spec("RR"), ref.Spec("RR", 2), ref.Spec("Success", 2),
    ref.Spec("nDCG"), ref.Spec("nDCG", 3, "exp"), ref.Spec("Bpref"),
    ref.Spec("AP", 2, params=(("denom", "min"),)),
    ref.Spec("nDCG", 2, "linear", (("ideal", "max"),)),
    ref.Spec("nDCG", 3, "exp", (("ideal", "max"),)),
]  # fmt: skip
pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")


def as_query_list(query) -> anatomy.QueryList:
    levels = [np.nan if label is None else float(label) for label in query.labels]
    return anatomy.QueryList(
        qid="q",
        docno=np.array(query.docnos, dtype=object),
        score=np.array(query.scores, dtype=np.float64),
        level=np.array(levels, dtype=np.float64),
        qrels_levels=np.array(query.levels, dtype=np.int64),
    )


def frames(query) -> tuple[pd.DataFrame, pd.DataFrame]:
    run = pd.DataFrame({"qid": "q", "docno": query.docnos, "score": query.scores})
    qrels = pd.DataFrame(
        {"qid": "q", "docno": list(query.qrels), "level": list(query.qrels.values())}
    ).astype({"level": "int64"})
    return run, qrels


def brute_orders(query) -> list[list[int]]:
    """Every ordering as row indices, from the reference's docno orderings."""
    index = {d: i for i, d in enumerate(query.docnos)}
    return [[index[d] for d in order] for order in ref.orderings(query.scores, query.docnos)]


one_query = queries("both", list(SCORES[:4]), max_docs=7)


@PROPERTY
@given(query=one_query, rel_level=st.sampled_from([1, 2]))
def test_expected_ranks_equal_the_mean_term_of_each_rank_over_all_orderings(query, rel_level):
    labels, levels = query.labels, query.levels
    listed = as_query_list(query)
    sequences = ref.label_sequences(query.scores, labels)  # each with its number of orderings
    total = sum(sequences.values())
    run, qrels = frames(query)
    for spec in FAMILIES:
        found = anatomy.expected_ranks(listed, spec.name, rel_level)
        mean_terms = np.zeros(len(labels))
        for ranked, count in sequences.items():
            cuts = [
                ref.measure(spec, ranked, levels, rel_level=rel_level, depth=j)
                for j in range(1, len(ranked) + 1)
            ]
            mean_terms += count * np.diff([0.0, *cuts]) / total
        note(f"{spec}: {found['term'].tolist()} vs {mean_terms.tolist()}")
        assert np.allclose(found["term"], mean_terms, atol=1e-12), spec
        aware = tiecore.evaluate(run, qrels, spec.name, rel_level=rel_level)["value"].iloc[0]
        assert math.isclose(found["term"].sum(), aware, abs_tol=1e-12), spec
    orders = brute_orders(query)
    relevant = [[ref.is_relevant(labels[i], rel_level) for i in o] for o in orders]
    gains = [[ref.gain(labels[i]) for i in o] for o in orders]
    found = anatomy.expected_ranks(listed, "P@1", rel_level)
    assert np.allclose(found["p_relevant"], np.mean(relevant, axis=0), atol=1e-12)
    assert np.allclose(found["expected_gain"], np.mean(gains, axis=0), atol=1e-12)
    assert found["rank"].tolist() == list(range(1, len(labels) + 1))


@PROPERTY
@given(query=one_query, rel_level=st.sampled_from([1, 2]), k=st.integers(1, 9))
def test_formula_from_the_paper_quantities_equals_brute_force(query, rel_level, k):
    listed = as_query_list(query)
    groups = anatomy.tie_groups(listed, rel_level)
    num_rel = ref.num_relevant(query.levels, rel_level)
    for spec in (ref.Spec("P", k), ref.Spec("R", k), ref.Spec("F1", k), ref.Spec("Rprec"),
                 ref.Spec("Success", k)):  # fmt: skip
        cut = anatomy.cutoff(spec.name, num_rel, len(listed))
        assert cut == (num_rel if spec.family == "Rprec" else k)
        quantities = anatomy.paper_quantities(groups, cut)
        brute = ref.reference_aware([spec], query.scores, query.labels, query.levels,
                                    rel_level=rel_level)[spec]  # fmt: skip
        found = anatomy.formula(spec.name, quantities, num_rel)
        assert math.isclose(found.value, brute, abs_tol=1e-12), (spec, quantities)
        assert found.latex.endswith(f"{found.value:.4f}") or "R_c =" in found.latex


@PROPERTY
@given(query=one_query, k=st.integers(1, 9))
def test_paper_quantities_describe_the_group_holding_rank_k(query, k):
    listed = as_query_list(query)
    groups = anatomy.tie_groups(listed)
    q = anatomy.paper_quantities(groups, k)
    members = ref.tie_groups(query.scores)  # best first, as row indices
    ends = np.cumsum([len(g) for g in members])
    c = min(int(np.searchsorted(ends, k)), len(members) - 1)
    above = [i for g in members[:c] for i in g]
    assert q["t_c"] == len(above) and q["n_c"] == len(members[c])
    assert q["R_c"] == sum(ref.is_relevant(query.labels[i], 1) for i in above)
    assert q["r_c"] == sum(ref.is_relevant(query.labels[i], 1) for i in members[c])
    assert q["inside"] == min(max(k - q["t_c"], 0), q["n_c"])


@PROPERTY
@given(query=queries("both", list(SCORES[:3]), max_docs=6))
def test_orderings_and_their_values_match_the_reference_enumeration(query):
    orders = orderings.orderings(query.scores)
    expected = brute_orders(query)
    assert len(orders) == ref.count_orderings(query.scores) == len(expected)
    assert sorted(map(tuple, orders.tolist())) == sorted(map(tuple, expected))
    assert orderings.count_orderings(query.scores) == len(expected)
    listed = as_query_list(query)
    for spec in (ref.Spec("AP"), ref.Spec("nDCG", 3), ref.Spec("Bpref"), ref.Spec("RR", 2)):
        values = orderings.ordering_values(listed, orders, spec.name)
        brute = [ref.measure(spec, [query.labels[i] for i in o], query.levels) for o in orders]
        assert np.allclose(values, brute, atol=1e-12), spec


def test_orderings_refuse_too_many_and_keep_one_row_lists():
    assert orderings.orderings([1.0] * 8) is None  # 8! > 5040
    assert len(orderings.orderings([1.0] * 7)) == 5040
    assert orderings.orderings([5.0]).tolist() == [[0]]
    assert orderings.orderings([1.0] * 3, limit=5) is None


@PROPERTY
@given(query=one_query, policy=st.sampled_from(ref.DETERMINISTIC_POLICIES))
def test_ranked_list_is_the_order_of_the_tiebreak(query, policy):
    run, qrels = frames(query)
    found = orderings.ranked_list(run, qrels, "q", policy)
    rows = ref.order_indices(query.scores, query.docnos, query.labels, policy)
    if policy in ("optimistic", "pessimistic"):  # only the levels' order is defined
        assert found["level"].fillna(-1).tolist() == [
            -1 if query.labels[i] is None else query.labels[i] for i in rows
        ]
    else:
        assert found["docno"].tolist() == [query.docnos[i] for i in rows]
    assert found["rank"].tolist() == list(range(1, len(rows) + 1))


def test_ranked_list_of_a_query_without_judgments_is_empty():
    run = pd.DataFrame({"qid": ["1", "2"], "docno": ["a", "b"], "score": [1.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["a"], "level": [1]})
    assert orderings.ranked_list(run, qrels, "2").empty
    assert orderings.ranked_list(run, qrels, "1")["level"].tolist() == [1]


def test_sampled_values_are_the_draws_of_sampled_mode():
    rng = np.random.default_rng(3)
    run = pd.DataFrame(
        {
            "qid": np.repeat(["1", "2", "3"], 12),
            "docno": [f"d{i}" for i in range(36)],
            "score": rng.integers(0, 3, 36).astype(float),
        }
    )
    qrels = pd.DataFrame(
        {"qid": np.repeat(["1", "2"], 12), "docno": [f"d{i}" for i in range(24)],
         "level": rng.integers(0, 2, 24)}
    )  # fmt: skip
    matrix = policies.sampled_values(run, qrels, "AP", samples=40, seed=5, name="sys")
    assert matrix.shape == (40, 2) and list(matrix.columns) == ["1", "2"]
    expected = tiecore.evaluate({"sys": run}, qrels, "AP", ties="sampled", samples=40, seed=5,
                                per_query=True)  # fmt: skip
    expected = expected[expected["qid"].notna()].set_index("qid")
    assert np.allclose(matrix.mean(), expected.loc[matrix.columns, "value"], atol=1e-12)
    assert np.allclose(matrix.std(ddof=1), expected.loc[matrix.columns, "std"], atol=1e-12)
    spread = evaluate_spread(run, qrels, "AP", per_query=True).set_index("qid")
    assert (matrix.min() >= spread.loc[matrix.columns, "min"] - 1e-12).all()
    assert (matrix.max() <= spread.loc[matrix.columns, "max"] + 1e-12).all()


def test_policy_values_and_rank_ranges():
    from scipy.stats import rankdata

    rng = np.random.default_rng(8)
    runs = {
        f"s{i}": pd.DataFrame(
            {
                "qid": np.repeat(["1", "2"], 10),
                "docno": [f"d{j % 10}" for j in range(20)],
                "score": rng.integers(0, 2 + i, 20).astype(float),
            }
        )
        for i in range(5)
    }
    qrels = pd.DataFrame(
        {"qid": np.repeat(["1", "2"], 10), "docno": [f"d{j % 10}" for j in range(20)],
         "level": rng.integers(0, 2, 20)}
    )  # fmt: skip
    values = policies.policy_values(runs, qrels, "P@5")
    for policy in policies.POLICIES:
        expected = tiecore.evaluate(runs, qrels, "P@5", ties="oblivious", tiebreak=policy)
        assert np.allclose(values[policy], expected.set_index("run")["value"], atol=0)
    assert np.allclose(values["aware"], tiecore.evaluate(runs, qrels, "P@5")["value"], atol=0)
    assert (values["pessimistic"] <= values["aware"] + 1e-12).all()
    ranges = policies.rank_ranges(values, top=2)
    for column in values:
        expected = rankdata(-values[column].to_numpy(), method="min")
        assert ranges[f"rank_{column}"].tolist() == expected.tolist()
    arbitrary = np.stack(
        [rankdata(-values[p].to_numpy(), method="min") for p in policies.ARBITRARY]
    )
    assert ranges["best_rank"].tolist() == arbitrary.min(axis=0).tolist()
    assert ranges["rank_range"].tolist() == np.ptp(arbitrary, axis=0).tolist()
    top = (arbitrary.min(axis=0) <= 2) & (arbitrary.max(axis=0) > 2)
    assert ranges["top_k_depends_on_tiebreak"].tolist() == top.tolist()


def test_expected_ranks_refuse_a_family_without_a_decomposition(monkeypatch):
    docs = pd.DataFrame({"docno": ["a"], "score": [1.0], "level": [1]})
    query = anatomy.QueryList.from_docs(docs)
    monkeypatch.setattr(anatomy, "RANK_FAMILIES", ("P",))
    with pytest.raises(ValueError, match="per-rank"):
        anatomy.expected_ranks(query, "AP")
    assert anatomy.formula("AP", {}, 1) is None


def test_an_empty_list_has_empty_groups_and_zero_quantities():
    query = anatomy.QueryList.from_docs(pd.DataFrame({"docno": [], "score": [], "level": []}))
    groups = anatomy.tie_groups(query)
    assert groups.empty
    assert anatomy.paper_quantities(groups, 10)["n_c"] == 0
    assert anatomy.expected_ranks(query, "AP").empty


@settings(max_examples=20, deadline=None)
@given(query=one_query, rel_level=st.sampled_from([1, 2]))
def test_group_contributions_sum_to_the_aware_value_over_the_right_normaliser(query, rel_level):
    listed = as_query_list(query)
    run, qrels = frames(query)
    num_rel = ref.num_relevant(query.levels, rel_level)
    ideal = ref.dcg(sorted((ref.gain(lv) for lv in query.levels), reverse=True)[:3])
    expected_normaliser = {
        "P@3": 3, "R@3": num_rel, "F1@3": (3 + num_rel) / 2, "AP": num_rel, "RR": 1,
        "nDCG@3": ideal, "Bpref": num_rel, "Rprec": num_rel,
    }  # fmt: skip
    for name, normaliser in expected_normaliser.items():
        groups, summary = anatomy.group_contributions(listed, name, rel_level)
        aware = tiecore.evaluate(run, qrels, name, rel_level=rel_level)["value"].iloc[0]
        assert math.isclose(groups["contribution"].sum(), aware, abs_tol=1e-12), name
        assert math.isclose(summary["value"], aware, abs_tol=1e-12), name
        if name == "nDCG@3" or num_rel > 0:
            assert math.isclose(summary["normaliser_value"], normaliser, rel_tol=1e-12), name
        assert summary["formula"] == anatomy.EXPECTED_FORMULAS[name.partition("@")[0]]
        assert groups["size"].sum() <= len(listed)


def test_tie_profiles_of_all_runs_equal_spread_tie_profile_of_each():
    from tiecore.spread import tie_profile

    rng = np.random.default_rng(4)
    runs = {
        f"r{i}": pd.DataFrame(
            {
                "qid": rng.choice(["1", "2", "3"], 40),
                "docno": [f"d{j}" for j in range(40)],
                "score": rng.integers(0, 2 + 3 * i, 40).astype(float) * (-1) ** i,
            }
        )
        for i in range(4)
    }
    runs["r0"].loc[0, "score"] = -0.0  # equal to 0.0
    profile, sizes = policies.tie_profiles(runs)
    for name, run in runs.items():
        expected = tie_profile(run)
        row = profile.set_index("run").loc[name]
        assert row["share_tied_rows"] == expected["share_tied_rows"]
        assert row["largest_group"] == expected["largest_group"]
        histogram = sizes[sizes["run"] == name].set_index("size")["groups"]
        assert histogram.to_dict() == expected["group_sizes"].to_dict()
        assert row["tie_groups"] == expected["group_sizes"][expected["group_sizes"].index > 1].sum()
