"""tiecore in oblivious mode reproduces trec_eval's own expected test outputs.

The files are trec_eval's ``test/`` directory (commit f4253652, see COMMANDS.md
next to them): ``out.test*`` were printed by trec_eval with the options below.
trec_eval prints 4 decimals, so a value matches when ``|ours - golden| <= 5e-5``
(plus a hair for float noise). Both the Python API and the ``tiecore eval``
command (``--format trec``) are checked, per query and for ``all``, and
``num_q`` is checked against the number of queries we average over.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import strategies
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_data import TREC_EVAL, pytrec_values
from strategies import FLOAT32_COLLIDING, cases

import tiecore
from tiecore.cli import main
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import TIEBREAKS, Ranking
from tiecore.measures import Measure

DATA = Path(os.environ.get("TIECORE_TREC_EVAL_TESTS", TREC_EVAL))
TOLERANCE = 5e-5 + 1e-12

#: trec_eval measure name -> ours; other trec_eval measures have no counterpart here
#: (and our F1@k has none in trec_eval).
_NAME_RULES = [
    (re.compile(r"^P_(\d+)$"), "P@{}"),
    (re.compile(r"^recall_(\d+)$"), "R@{}"),
    (re.compile(r"^map$"), "AP"),
    (re.compile(r"^map_cut_(\d+)$"), "AP@{}"),
    (re.compile(r"^recip_rank$"), "RR"),
    (re.compile(r"^ndcg$"), "nDCG"),
    (re.compile(r"^ndcg_cut_(\d+)$"), "nDCG@{}"),
    (re.compile(r"^Rprec$"), "Rprec"),
    (re.compile(r"^bpref$"), "Bpref"),
    (re.compile(r"^success_(\d+)$"), "Success@{}"),
    # the later trec_eval that wrote these outputs rounds recall * num_rel to nearest;
    # trec_eval 9.0.x's name iprec_at_recall_r (tiecore's too) rounds up (test_iprec.py)
    (re.compile(r"^iprec_at_recall_(\d\.\d+)$"), "IPrec(recall={},round=nearest)"),
]


def our_name(trec_name: str) -> str | None:
    """Our name for a trec_eval measure, or None when we have no counterpart.

    >>> our_name("ndcg_cut_10"), our_name("map"), our_name("gm_map")
    ('nDCG@10', 'AP', None)
    >>> our_name("iprec_at_recall_0.10"), our_name("iprec_at_recall_0.00")
    ('IPrec(recall=0.1,round=nearest)', 'IPrec(round=nearest)')
    """
    for pattern, template in _NAME_RULES:
        match = pattern.match(trec_name)
        if match and template.startswith("IPrec"):  # tiecore's spelling: recall=0.1
            return str(Measure.parse(template.format(f"{float(match[1]):.1f}")))
        if match:
            return template.format(*match.groups())
    return None


@dataclass
class Golden:
    """One expected output: values by (our measure, qid), trec_eval's num_q and runid."""

    values: dict[tuple[str, str], float] = field(default_factory=dict)
    num_q: int | None = None
    runid: str | None = None

    @property
    def measures(self) -> list[str]:
        return list(dict.fromkeys(m for m, _ in self.values))

    @property
    def qids(self) -> set[str]:
        return {q for _, q in self.values if q != "all"}


def read_golden(path: Path) -> Golden:
    """Parse trec_eval's ``name<TAB>qid<TAB>value`` lines, keeping the measures we have."""
    golden = Golden()
    for line in path.read_text().splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        if name == "runid":
            golden.runid = value
        elif name == "num_q":
            golden.num_q = int(value)
        elif (ours := our_name(name)) is not None:
            golden.values[(ours, qid)] = float(value)
    return golden


@dataclass(frozen=True)
class Case:
    """One trec_eval invocation from COMMANDS.md."""

    out: str
    qrels: str
    run: str
    per_query: bool = False
    complete: bool = False
    depth: int | None = None
    rel_level: int = 1

    def options(self) -> dict[str, object]:
        return {
            "per_query": self.per_query,
            "complete": self.complete,
            "depth": self.depth,
            "rel_level": self.rel_level,
        }

    def cli_args(self) -> list[str]:
        args = ["-q"] if self.per_query else []
        args += ["-c"] if self.complete else []
        args += ["-M", str(self.depth)] if self.depth is not None else []
        args += ["-l", str(self.rel_level)]
        return args


CASES = [
    Case("out.test", "qrels.test", "results.test"),
    Case("out.test.a", "qrels.test", "results.test"),
    Case("out.test.aq", "qrels.test", "results.test", per_query=True),
    Case("out.test.aqc", "qrels.test", "results.trunc", per_query=True, complete=True),
    Case(
        "out.test.aqcM",
        "qrels.test",
        "results.trunc",
        per_query=True,
        complete=True,
        depth=100,
    ),
    Case("out.test.aql", "qrels.rel_level", "results.test", per_query=True, rel_level=2),
]
_IDS = [case.out for case in CASES]


def mismatches(
    case: Case, golden: Golden, ours: dict[tuple[str, str], float], where: str
) -> list[str]:
    """Every golden value we miss or get wrong, described precisely."""
    problems = []
    for (measure, qid), expected in golden.values.items():
        got = ours.get((measure, qid))
        if got is None:
            problems.append(f"{case.out} [{where}] {measure} qid={qid}: missing, golden {expected}")
        elif not abs(got - expected) <= TOLERANCE:
            problems.append(
                f"{case.out} [{where}] {measure} qid={qid}: ours {got!r}, golden {expected:.4f}"
            )
    return problems


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_api_reproduces_trec_eval(case: Case) -> None:
    golden = read_golden(DATA / case.out)
    run = tiecore.read_run(DATA / case.run)
    qrels = tiecore.read_qrels(DATA / case.qrels)
    frame = tiecore.evaluate(run, qrels, golden.measures, ties="oblivious", **case.options())
    ours = {
        (m, "all" if pd.isna(q) else q): v  # the summary row (qid NA) as trec_eval's "all"
        for m, q, v in zip(frame["measure"], frame["qid"], frame["value"], strict=True)
    }
    problems = mismatches(case, golden, ours, "API")
    assert not problems, "\n".join(problems)
    if case.per_query:
        assert set(frame["qid"].dropna()) == golden.qids


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_api_num_q_and_runid(case: Case) -> None:
    """num_q = the queries the mean runs over; the run tag is trec_eval's runid."""
    golden = read_golden(DATA / case.out)
    run = tiecore.read_run(DATA / case.run)
    qrels = tiecore.read_qrels(DATA / case.qrels)
    options = case.options() | {"per_query": True}
    frame = tiecore.evaluate(run, qrels, ["AP", "P@10"], ties="oblivious", **options)
    per_query = frame[frame["qid"].notna()]
    assert per_query["qid"].nunique() == golden.num_q
    means = per_query.groupby("measure")["value"].mean()
    reported = frame[frame["qid"].isna()].set_index("measure")["value"]
    pd.testing.assert_series_equal(
        means.sort_index(), reported.sort_index(), check_names=False, rtol=1e-12, atol=0
    )
    assert run.attrs["name"] == golden.runid


def run_cli(case: Case, measures: list[str], tmp_path: Path) -> tuple[Golden, str]:
    """Run ``tiecore eval`` like trec_eval was run; parse its trec-format output back."""
    output = tmp_path / "out.txt"
    argv = [
        "eval",
        str(DATA / case.qrels),
        str(DATA / case.run),
        "--ties",
        "oblivious",
        "--format",
        "trec",
        "-m",
        ",".join(measures),
        "-o",
        str(output),
        *case.cli_args(),
    ]
    assert main(argv) == 0
    text = output.read_text()
    parsed = Golden()
    for line in text.splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        if name == "runid":
            parsed.runid = value
        elif name == "num_q":
            parsed.num_q = int(value)
        else:
            assert re.fullmatch(r"-?\d+\.\d{4}", value), line
            parsed.values[(name, qid)] = float(value)
    return parsed, text


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_cli_reproduces_trec_eval(case: Case, tmp_path: Path) -> None:
    golden = read_golden(DATA / case.out)
    printed, text = run_cli(case, golden.measures, tmp_path)
    # Both sides are printed with 4 decimals: they must print the same number.
    problems = mismatches(case, golden, printed.values, "CLI")
    assert not problems, "\n".join(problems)
    assert printed.num_q == golden.num_q
    assert printed.runid == golden.runid
    assert set(printed.values) == set(golden.values)
    for line in text.splitlines():
        name, _ = line.split("\t", 1)
        assert len(name) >= 22 and name == f"{name.strip():<22}"


def test_trec_eval_test_run_ties_do_not_show_at_four_decimals() -> None:
    """results.test has ties, but the golden files cannot tell tie-breaks apart.

    9 tie groups (8 pairs and one triple, 19 rows); only one of them (query 301,
    score 2.243509) holds a relevant and a judged non-relevant doc, at ranks 67-68,
    so breaking ties docno-ascending instead of trec_eval's docno-descending moves
    AP, nDCG and bpref of query 301 by less than 1e-5: invisible at 4 decimals.
    The full-precision comparison with pytrec_eval below is what pins the tie-break.
    """
    run = tiecore.read_run(DATA / "results.test")
    sizes = run.groupby(["qid", "score"]).size()
    assert (sizes > 1).sum() == 9 and sizes[sizes > 1].sum() == 19 and sizes.max() == 3
    qrels = tiecore.read_qrels(DATA / "qrels.test")
    tied = run[run.duplicated(["qid", "score"], keep=False)].merge(qrels, how="left")
    mixed = tied.groupby(["qid", "score"])["level"].agg(lambda s: set(s.dropna()) == {0, 1})
    assert mixed.sum() == 1 and mixed[mixed].index.tolist() == [("301", 2.243509)]
    golden = read_golden(DATA / "out.test.aq")
    values = {}
    for tiebreak in ("trec_eval", "docno_asc"):
        frame = tiecore.evaluate(
            run, qrels, golden.measures, ties="oblivious", tiebreak=tiebreak, per_query=True
        )
        frame["qid"] = frame["qid"].fillna("all")  # the summary row, as trec_eval labels it
        values[tiebreak] = frame.set_index(["measure", "qid"])["value"]
    gap = (values["trec_eval"] - values["docno_asc"]).abs()
    assert 0 < gap.max() < TOLERANCE
    assert gap[gap > 0].index.get_level_values("qid").unique().tolist() == ["301", "all"]


def trec_eval_full_precision(
    run: pd.DataFrame, qrels: pd.DataFrame, rel_level: int = 1
) -> dict[tuple[str, str], float]:
    """trec_eval's own code (through pytrec_eval) at full precision, per query, our names."""
    families = {"P", "recall", "map", "map_cut", "recip_rank", "ndcg", "ndcg_cut"}
    families |= {"Rprec", "bpref", "success"}
    return {
        (ours, qid): value
        for qid, by_name in pytrec_values(run, qrels, families, rel_level).items()
        for name, value in by_name.items()
        if (ours := our_name(name)) is not None
    }


FULL_PRECISION_CASES = [
    ("trec_eval_tests/results.test", "trec_eval_tests/qrels.test", 1),
    ("trec_eval_tests/results.test", "trec_eval_tests/qrels.rel_level", 2),
    ("robust03/runs/input.rutcor03100.gz", "robust03/qrels.txt", 1),  # 99.97% tied rows
    ("robust03/runs/input.MU03rob01.gz", "robust03/qrels.txt", 2),  # integer scores
    ("robust03/runs/input.pircRBa1.gz", "robust03/qrels.txt", 1),
]


@pytest.mark.parametrize(
    ("run_file", "qrels_file", "rel_level"),
    FULL_PRECISION_CASES,
    ids=[f"{r.split('/')[-1]}-l{level}" for r, _, level in FULL_PRECISION_CASES],
)
def test_oblivious_matches_trec_eval_at_full_precision(run_file, qrels_file, rel_level) -> None:
    """Per query to 1e-9 against trec_eval's C code: this pins its tie-break exactly."""
    run = tiecore.read_run(DATA.parent / run_file)
    qrels = tiecore.read_qrels(DATA.parent / qrels_file)
    expected = trec_eval_full_precision(run, qrels, rel_level)
    measures = list(dict.fromkeys(m for m, _ in expected))
    frame = tiecore.evaluate(
        run, qrels, measures, ties="oblivious", rel_level=rel_level, per_query=True
    )
    ours = frame[frame["qid"].notna()].set_index(["measure", "qid"])["value"].to_dict()
    assert set(ours) == set(expected)
    problems = [
        f"{run_file} -l{rel_level} {m} qid={q}: ours {ours[m, q]!r}, trec_eval {v!r}"
        for (m, q), v in expected.items()
        if not abs(ours[m, q] - v) <= 1e-9
    ]
    assert not problems, "\n".join(problems[:20])


def test_trec_eval_tiebreak_ignores_file_order() -> None:
    """Like trec_eval (which ignores the rank column), the default order ignores row order."""
    run = tiecore.read_run(DATA / "results.test")
    qrels = tiecore.read_qrels(DATA / "qrels.test")
    golden = read_golden(DATA / "out.test.a")
    shuffled = run.sample(frac=1.0, random_state=7).reset_index(drop=True)
    shuffled.attrs = dict(run.attrs)
    first = tiecore.evaluate(run, qrels, golden.measures, ties="oblivious")
    second = tiecore.evaluate(shuffled, qrels, golden.measures, ties="oblivious")
    pd.testing.assert_frame_equal(first, second)


# ------------------------------------------------ float32 scores (trec_eval 9's C float)

#: trec_eval families at cutoffs 1..10 (pytrec_eval's "name.k,k,..." syntax)
_CUTS = ",".join(map(str, range(1, 11)))
SMALL_FAMILIES = {"map", "recip_rank", "ndcg", "Rprec", "bpref"} | {
    f"{name}.{_CUTS}" for name in ("P", "recall", "map_cut", "ndcg_cut", "success")
}


def pytrec_eval_values(
    scored: dict[str, dict[str, float]], judged: dict[str, dict[str, int]], rel_level: int
) -> dict[tuple[str, str], float]:
    """pytrec_eval (trec_eval 9.0.x's C code) per query, our measure names."""
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(judged, SMALL_FAMILIES, relevance_level=rel_level)
    return {
        (ours, qid): value
        for qid, by_name in evaluator.evaluate(scored).items()
        for name, value in by_name.items()
        if (ours := our_name(name)) is not None
    }


def case_dicts(case: strategies.Case) -> tuple[dict, dict]:
    """(run, qrels) of a generated case as pytrec_eval's nested dicts.

    trec_eval reads uninitialized memory when all of a query's levels are
    negative, so every qrels query gets one more judged non-relevant doc that
    no run retrieves.
    """
    judged = {qid: dict(q.qrels) | {"~pad": 0} for qid, q in case.queries.items() if q.qrels}
    scored = {
        qid: dict(zip(q.docnos, q.scores, strict=True))
        for qid, q in case.queries.items()
        if q.docnos
    }
    return scored, judged


def tiecore_values(case: strategies.Case, measures, rel_level: int, tiebreak: str) -> dict:
    run, (_, judged) = case.run_frame(), case_dicts(case)
    qrels = pd.DataFrame(
        [(qid, docno, level) for qid, docs in judged.items() for docno, level in docs.items()],
        columns=["qid", "docno", "level"],
    )
    frame = tiecore.evaluate(
        run, qrels, measures, ties="oblivious", tiebreak=tiebreak, rel_level=rel_level,
        per_query=True,
    )  # fmt: skip
    frame = frame[frame["qid"].notna()]
    return dict(zip(zip(frame["measure"], frame["qid"], strict=True), frame["value"], strict=True))


def assert_same(ours: dict, theirs: dict, label: str) -> None:
    assert set(ours) == set(theirs), label
    problems = [
        f"{label} {m} qid={q}: tiecore {ours[m, q]!r}, pytrec_eval {v!r}"
        for (m, q), v in theirs.items()
        if not abs(ours[m, q] - v) <= 1e-12
    ]
    assert not problems, "\n".join(problems[:20])


colliding = cases(score_pool=FLOAT32_COLLIDING, max_score_values=6, max_label_kinds=4)


@pytest.mark.filterwarnings("ignore::tiecore.TieCoreWarning")
@settings(max_examples=150, deadline=None)
@given(colliding, st.sampled_from([1, 2]))
def test_trec_eval_tiebreak_compares_scores_as_c_floats(case, rel_level) -> None:
    """Scores equal in float32 tie for trec_eval 9 and fall to its docno order."""
    scored, judged = case_dicts(case)
    theirs = pytrec_eval_values(scored, judged, rel_level)
    ours = tiecore_values(case, list(dict.fromkeys(m for m, _ in theirs)), rel_level, "trec_eval")
    assert_same(ours, theirs, "trec_eval")


@pytest.mark.filterwarnings("ignore::tiecore.TieCoreWarning")
@settings(max_examples=100, deadline=None)
@given(colliding, st.sampled_from([1, 2]))
def test_trec_eval_double_is_the_float64_order(case, rel_level) -> None:
    """trec_eval 10's order: the rows sorted by (float64 score, docno) descending here,
    then handed to trec_eval's code as distinct small integers, which no rounding changes."""
    scored, judged = case_dicts(case)
    ranked = {
        qid: sorted(docs, key=lambda d, docs=docs: (docs[d], d), reverse=True)
        for qid, docs in scored.items()
    }
    plain = {
        qid: {d: float(len(order) - i) for i, d in enumerate(order)}
        for qid, order in ranked.items()
    }
    theirs = pytrec_eval_values(plain, judged, rel_level)
    measures = list(dict.fromkeys(m for m, _ in theirs))
    assert_same(tiecore_values(case, measures, rel_level, "trec_eval_double"), theirs, "double")


def test_float32_collision_worked_example() -> None:
    """1.000000001 and 1.0 are one float32: trec_eval 9 ranks docno "b" (non-relevant) first."""
    run = pd.DataFrame({"qid": "q", "docno": ["a", "b"], "score": [1.0 + 1e-9, 1.0]})
    qrels = pd.DataFrame({"qid": "q", "docno": ["a", "b"], "level": [1, 0]})
    theirs = pytrec_eval_values({"q": {"a": 1.0 + 1e-9, "b": 1.0}}, {"q": {"a": 1, "b": 0}}, 1)
    assert theirs["RR", "q"] == 0.5
    values = {
        tiebreak: tiecore.evaluate(run, qrels, "RR", ties="oblivious", tiebreak=tiebreak)
        for tiebreak in ("trec_eval", "trec_eval_double")
    }
    assert values["trec_eval"]["value"].iloc[0] == 0.5
    assert values["trec_eval_double"]["value"].iloc[0] == 1.0
    # aware takes the scores as given: no tie, so the float64 order
    assert tiecore.evaluate(run, qrels, "RR")["value"].iloc[0] == 1.0


ORDERED = [policy for policy in TIEBREAKS if policy != "random"]


@pytest.mark.filterwarnings("ignore::tiecore.TieCoreWarning")
@settings(max_examples=100, deadline=None)
@given(colliding, st.sampled_from(ORDERED), st.permutations(ORDERED))
def test_retie_equals_a_fresh_build(case, first, policies) -> None:
    """Re-tying merges (or splits) the groups float32 rounding ties, like a fresh sort;
    one ranking re-tied in turn to every policy (the docno ones share a sort) gives each."""
    run, qrels = case.run_frame(), case.qrels_frame()
    judgments = Judgments.from_qrels(qrels)
    base = Ranking.build(run, judgments, tiebreak=first)
    for then in policies:
        fresh = Ranking.build(run, judgments, tiebreak=then)
        again = base.retie(then)
        for name in ("query", "rank", "level", "row", "score", "group", "group_start", "offset"):
            np.testing.assert_array_equal(getattr(again, name), getattr(fresh, name), name)
        for name in ("size", "rel_count", "nonrel_count", "rel_before", "nonrel_before"):
            np.testing.assert_array_equal(getattr(again, name), getattr(fresh, name), name)
        assert again.docno.equals(fresh.docno) and again.float32_ties == fresh.float32_ties
