"""nDCG(ideal=local): the ideal is the DCG of the ranking's own top k sorted by gain.

Checked against the enumeration of every ordering (value, variance, min, max, to
1e-12; exact fractions for huge exp levels), against scikit-learn's ``ndcg_score``
given only the top k docs (whose ideal is then the local one) on Robust03 and
trec_eval's test files, sampled mode against the exact mean, and the refusal of a
tie group with too many compositions.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from shared_data import ROBUST_QRELS, ROBUST_RUNS, TREC_EVAL, robust_run
from sklearn.metrics import ndcg_score
from strategies import HUGE_LEVELS, cases, depths

import tiecore
from tiecore import spread
from tiecore.cli import main
from tiecore.compare import compare
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking
from tiecore.errors import InputError
from tiecore.measures import Measure
from tiecore.measures.local_ideal import local_sample, local_spread

RUN = "run"
TOL = 1e-12
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.errors.TieCoreWarning")

cutoffs = st.one_of(st.none(), st.integers(1, 9))
gains = st.sampled_from(["linear", "exp"])


def name(cutoff: int | None, gain: str) -> str:
    return ref.Spec("nDCG", cutoff, gain, (("ideal", "local"),)).name


def brute(q, cutoff, gain, depth) -> dict[str, float]:
    """Value, variance, min and max over every ordering of one query (the reference)."""
    sequences = ref.label_sequences(q.scores, q.labels)
    total = sum(sequences.values())
    values = {
        s: ref.ndcg_local_ideal(list(s)[:depth] if depth else list(s), cutoff, gain)
        for s in sequences
    }
    mean = math.fsum(c * values[s] for s, c in sequences.items()) / total
    var = math.fsum(c * (values[s] - mean) ** 2 for s, c in sequences.items()) / total
    return {"value": mean, "var": var, "min": min(values.values()), "max": max(values.values())}


def spread_rows(case, names, depth) -> dict:
    run, qrels = case.run_frame(), case.qrels_frame()
    note(f"run:\n{run.to_string()}\nqrels:\n{qrels.to_string()}\ndepth {depth}")
    frame = spread.evaluate_spread({RUN: run}, qrels, names, per_query=True, depth=depth)
    frame = frame[frame["qid"].notna()]
    return {(row.qid, row.measure): row._asdict() for row in frame.itertuples(index=False)}


def assert_brute(case, cutoff, gain, depth) -> None:
    measure = name(cutoff, gain)
    got = spread_rows(case, [measure], depth)
    problems = []
    for qid in case.both_qids:
        for column, value in brute(case.queries[qid], cutoff, gain, depth).items():
            found = got[qid, measure][column]
            if not abs(found - value) <= TOL:
                problems.append(f"{qid} {measure} {column}: tiecore {found!r} brute {value!r}")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ brute force


@PROPERTY
@given(cases(max_docs=9, max_label_kinds=4, level_pool=(-1, 0, 1, 2, 3, 4)), cutoffs, gains, depths)
def test_value_variance_and_bounds_equal_every_ordering(case, cutoff, gain, depth):
    assert_brute(case, cutoff, gain, depth)


@settings(PROPERTY, max_examples=80)
@given(cases(max_docs=8, max_label_kinds=4, level_pool=HUGE_LEVELS), cutoffs, depths)
def test_exp_gains_of_huge_levels_are_exact(case, cutoff, depth):
    """Levels to 2000 (gains past float64): a top k of small levels keeps them even when
    the query's qrels hold a huge one (each composition is scaled by its own top level)."""
    assert_brute(case, cutoff, "exp", depth)


def test_a_small_top_k_beside_a_huge_level():
    run = pd.DataFrame({"qid": "q", "docno": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"qid": "q", "docno": ["a", "b", "c"], "level": [1, 2, 2000]})
    for ties in ("oblivious", "aware"):
        frame = tiecore.evaluate({RUN: run}, qrels, "nDCG(gain=exp,ideal=local)@2", ties=ties)
        expected = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
        assert frame["value"].iloc[0] == pytest.approx(expected, rel=1e-15)


def test_hand_example_of_the_ratio_of_random_quantities():
    # a (level 1) above a tie of b (level 2) and c (0), k = 2: the top two are {a, b} or
    # {a, c} with probability 1/2 each; the second has DCG = its ideal
    run = pd.DataFrame({"qid": "q", "docno": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"qid": "q", "docno": ["a", "b", "c"], "level": [1, 2, 0]})
    with_b = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    frame = spread.evaluate_spread({RUN: run}, qrels, "nDCG(ideal=local)@2")
    row = frame.iloc[0]
    assert row["value"] == pytest.approx((with_b + 1) / 2, abs=1e-15)
    assert row["var"] == pytest.approx(((1 - with_b) / 2) ** 2, abs=1e-15)
    # the optimistic order (b first) is the minimum here: b raises the ideal too
    assert (row["min"], row["max"]) == pytest.approx((with_b, 1.0), abs=1e-15)
    best = tiecore.evaluate({RUN: run}, qrels, "nDCG(ideal=local)@2", ties="oblivious",
                            tiebreak="optimistic")  # fmt: skip
    assert best["value"].iloc[0] == pytest.approx(with_b, abs=1e-15)


@settings(PROPERTY, max_examples=60)
@given(cases(max_docs=8, only_both=True), gains)
def test_without_a_cutoff_it_is_the_global_ideal_when_every_judged_doc_is_retrieved(case, gain):
    # every qrels doc of the query retrieved: the top "all" is the qrels' best order
    qrels = case.qrels_frame()
    run = case.run_frame()
    kept = qrels.merge(run[["qid", "docno"]], on=["qid", "docno"])
    assume(not kept.empty)
    local, global_ = name(None, gain), f"nDCG(gain={gain})" if gain == "exp" else "nDCG"
    frame = tiecore.evaluate({RUN: run}, kept, [local, global_], per_query=True)
    values = frame.pivot_table(index="qid", columns="measure", values="value", dropna=False)
    np.testing.assert_allclose(values[local], values[global_], rtol=0, atol=1e-12)


# -------------------------------------------------------- scikit-learn's ndcg_score


def sklearn_local(ordered: dict, levels: dict, k: int | None, gain: str) -> dict:
    """Per query: sklearn's ndcg_score of the top k docs alone (``ordered``: each
    query's docnos in trec_eval 10's order), their ideal the best order of that row."""
    out = {}
    for qid, docnos in ordered.items():
        level = np.array([max(levels.get((qid, d), 0), 0) for d in docnos[:k]], dtype=float)
        y_true = level if gain == "linear" else 2.0**level - 1
        pad = 2  # sklearn needs two columns; zero gains at the bottom change nothing
        y_true = np.r_[y_true, np.zeros(pad)][None, :]
        y_score = -np.arange(y_true.shape[1], dtype=float)[None, :]
        out[qid] = ndcg_score(y_true, y_score, ignore_ties=True)
    return out


def check_against_sklearn(run: pd.DataFrame, qrels: pd.DataFrame) -> None:
    run = run.assign(qid=run["qid"].astype(str), docno=run["docno"].astype(str))
    qrels = qrels.assign(qid=qrels["qid"].astype(str), docno=qrels["docno"].astype(str))
    specs = [(k, gain) for k in (1, 5, 10, None) for gain in ("linear", "exp")]
    frame = tiecore.evaluate(
        {RUN: run}, qrels, [name(k, g) for k, g in specs], ties="oblivious",
        tiebreak="trec_eval_double", per_query=True,
    )  # fmt: skip
    frame = frame[frame["qid"].notna()]
    judged = qrels[qrels["qid"].isin(set(run["qid"]))]
    pairs = zip(judged["qid"], judged["docno"], strict=True)
    levels = dict(zip(pairs, judged["level"], strict=True))
    # trec_eval 10's order: score descending, then docno descending
    ordered = run[run["qid"].isin(set(qrels["qid"]))].sort_values(
        ["qid", "score", "docno"], ascending=[True, False, False]
    )
    ordered = {qid: rows.tolist() for qid, rows in ordered.groupby("qid")["docno"]}
    for k, gain in specs:
        got = frame[frame["measure"] == name(k, gain)].set_index("qid")["value"]
        expected = sklearn_local(ordered, levels, k, gain)
        assert sorted(got.index) == sorted(expected)
        for qid, value in expected.items():
            assert got[qid] == pytest.approx(value, abs=1e-12), (qid, k, gain)


@pytest.mark.parametrize("path", ROBUST_RUNS[::4])
def test_oblivious_equals_sklearn_on_robust03(path):
    qrels = tiecore.read_qrels(ROBUST_QRELS)
    check_against_sklearn(tiecore.read_run(path), qrels)


@pytest.mark.parametrize("run_file", ["results.test", "results.trunc"])
def test_oblivious_equals_sklearn_on_trec_eval_test_files(run_file):
    qrels = tiecore.read_qrels(TREC_EVAL / "qrels.test")
    check_against_sklearn(tiecore.read_run(TREC_EVAL / run_file), qrels)


# ------------------------------------------------------------------ sampled mode


def test_sampled_mean_converges_on_a_tie_heavy_robust03_run():
    qrels = tiecore.read_qrels(ROBUST_QRELS)
    run = tiecore.read_run(robust_run("input.rutcor03100.gz"))
    measures = ["nDCG(ideal=local)@10", "nDCG(gain=exp,ideal=local)@5"]
    aware = spread.evaluate_spread({RUN: run}, qrels, measures, per_query=True)
    sampled = tiecore.evaluate(
        {RUN: run}, qrels, measures, ties="sampled", samples=4000, seed=11, per_query=True
    )
    both = aware.merge(sampled, on=["run", "qid", "measure"], suffixes=("", "_s"))
    assert len(both) == len(aware)
    assert (both["var"] > 0).sum() > 20  # ties at the cutoff in many queries
    z = (both["value_s"] - both["value"]).abs() <= 5 * both["stderr"] + 1e-12
    assert z.all(), both.loc[~z].to_string()
    # the sampled spread estimates the exact variance (4000 draws: within 20 %)
    varied = both[both["var"] > 1e-6]
    ratio = varied["std"] ** 2 / varied["var"]
    assert ratio.median() == pytest.approx(1.0, abs=0.1)
    assert (both["value_s"] >= both["min"] - 1e-12).all()
    assert (both["value_s"] <= both["max"] + 1e-12).all()


@settings(PROPERTY, max_examples=30, derandomize=True)
@given(cases(max_docs=8, max_label_kinds=4), cutoffs, gains, depths)
def test_every_sample_is_the_value_of_one_ordering(case, cutoff, gain, depth):
    judgments = Judgments.from_qrels(case.qrels_frame())
    ranking = Ranking.build(case.run_frame(), judgments, tiebreak="file_order")
    draws = local_sample(ranking, judgments, cutoff, gain=gain, samples=50, rng=3, depth=depth)
    found = local_spread(ranking, judgments, cutoff, gain=gain, depth=depth)
    for qid in case.both_qids:
        q = case.queries[qid]
        possible = {
            ref.ndcg_local_ideal(list(s)[:depth] if depth else list(s), cutoff, gain)
            for s in ref.label_sequences(q.scores, q.labels)
        }
        at = list(judgments.qids).index(qid)
        for value in draws[:, at]:
            assert min(abs(value - p) for p in possible) <= TOL, (qid, value, possible)
        assert found["min"][at] - TOL <= draws[:, at].min()
        assert draws[:, at].max() <= found["max"][at] + TOL


# ------------------------------------------------------------------ refusal, names


def big_tie():
    docnos = [f"d{i:03d}" for i in range(400)]
    run = pd.DataFrame({"qid": "7", "docno": docnos, "score": 1.0})
    qrels = pd.DataFrame({"qid": "7", "docno": docnos, "level": np.arange(400) % 5})
    return run, qrels


def test_a_group_with_too_many_compositions_is_refused():
    run, qrels = big_tie()
    with pytest.raises(InputError) as error:
        tiecore.evaluate({"big": run}, qrels, "nDCG(ideal=local)@200", ties="aware")
    message = str(error.value)
    assert message.startswith("run big: query 7 has a tie group of 400 docs in 5 gain levels")
    assert "200 of its slots in the top 200" in message
    assert "ties='sampled'" in message
    # the same query is fine oblivious, sampled, and aware at a small cutoff
    for ties in ("oblivious", "sampled"):
        tiecore.evaluate({"big": run}, qrels, "nDCG(ideal=local)@200", ties=ties, samples=20)
    small = spread.evaluate_spread({"big": run}, qrels, "nDCG(ideal=local)@3")
    assert small["max"].iloc[0] == 1.0


def test_the_command_line_prints_the_refusal_in_one_line(tmp_path, capsys):
    run, qrels = big_tie()
    run.assign(q0="Q0", rank=np.arange(1, 401), tag="big")[
        ["qid", "q0", "docno", "rank", "score", "tag"]
    ].to_csv(tmp_path / "run.txt", sep=" ", header=False, index=False)
    qrels.assign(zero=0)[["qid", "zero", "docno", "level"]].to_csv(
        tmp_path / "qrels.txt", sep=" ", header=False, index=False
    )
    code = main(["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"),
                 "-m", "nDCG(ideal=local)@200"])  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0
    assert "query 7 has a tie group of 400 docs" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_names_and_the_commands_accept_it(tmp_path):
    measure = Measure.parse("nDCG(ideal=local,gain=exp)@10")
    assert str(measure) == "nDCG(gain=exp,ideal=local)@10"
    assert measure.spec.hooked(measure) and not Measure.parse("nDCG@10").spec.hooked(
        Measure.parse("nDCG@10")
    )
    assert str(Measure.parse("ndcg_cut_10")) == "nDCG@10"
    run, qrels = big_tie()
    other = run.assign(score=np.arange(400.0))
    comparison = compare({"a": run, "b": other}, qrels, "nDCG(ideal=local)@5", samples=50)
    assert comparison is not None
    with pytest.raises(tiecore.InputError, match="does not split by tie group"):
        spread.tie_groups(run, qrels, "nDCG(ideal=local)@5")
