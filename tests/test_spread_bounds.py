"""``min <= value <= max`` holds exactly in every spread row, above all where the variance is 0.

Where no ordering moves a query's value (no ties, or every tie group holds docs of one
label only: all relevant at one level, or none relevant) the value, its minimum and its
maximum are one number in exact arithmetic, but three float sums taken in different
orders.  The spread (:func:`tiecore.spread.evaluate_spread`, which ``--spread`` and the
app print) must still keep the value within its own bounds, exactly; and the three must
agree with the brute-force value over every ordering (tests/reference.py).
"""

from __future__ import annotations

import pandas as pd
import pytest
import reference as ref
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tiecore import spread
from tiecore.cli import main

SPECS = ref.all_specs((1, 2, 3, 5, 9))
NAMES = [spec.name for spec in SPECS]

pytestmark = pytest.mark.filterwarnings("ignore::tiecore.TieCoreWarning")

PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def uniform_groups(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """A run whose tie groups each hold docs of one label (so no ordering moves any value).

    Scores are a few decimals (not exact binary fractions) and groups up to 40 docs, so
    the float sums behind value, min and max round differently.  Returns ``(run, qrels,
    labels)`` with ``labels[qid]`` the labels in rank order (None: unjudged).
    """
    run, qrels, labels = [], [], {}
    for q in range(draw(st.integers(1, 3))):
        qid = f"q{q}"
        sizes = draw(st.lists(st.integers(1, 40), min_size=1, max_size=6))
        kinds = st.sampled_from((None, 0, 1, 2, 3))
        group_labels = draw(st.lists(kinds, min_size=len(sizes), max_size=len(sizes)))
        labels[qid] = []
        for g, (size, label) in enumerate(zip(sizes, group_labels, strict=True)):
            score = 10.0 - 0.1 * g
            for d in range(size):
                docno = f"d{g}_{d}"
                run.append((qid, docno, score))
                labels[qid].append(label)
                if label is not None:
                    qrels.append((qid, docno, label))
        extra = draw(st.lists(st.sampled_from((0, 1, 2, 3)), max_size=3))  # not retrieved
        qrels += [(qid, f"x{i}", level) for i, level in enumerate(extra)]
        if not any(row[0] == qid for row in qrels):
            qrels.append((qid, "x", 0))
    run_frame = pd.DataFrame(run, columns=["qid", "docno", "score"])
    qrels_frame = pd.DataFrame(qrels, columns=["qid", "docno", "level"]).astype({"level": "int64"})
    return run_frame, qrels_frame, labels


def bounds_problems(frame: pd.DataFrame) -> list[str]:
    """Rows whose value is outside [min, max] (exactly, no tolerance)."""
    bad = frame[(frame["value"] < frame["min"]) | (frame["value"] > frame["max"])]
    return [
        f"{row.measure} q={row.qid}: {row.min!r} <= {row.value!r} <= {row.max!r}"
        for row in bad.itertuples(index=False)
    ]


@PROPERTY
@given(uniform_groups(), st.sampled_from([1, 2]), st.one_of(st.none(), st.integers(1, 30)))
def test_value_within_bounds_where_no_order_moves_it(data, rel_level, depth):
    run, qrels, labels = data
    note(f"run:\n{run.to_string()}\nqrels:\n{qrels.to_string()}")
    frame = spread.evaluate_spread(
        run, qrels, NAMES, rel_level=rel_level, depth=depth, per_query=True
    )
    assert not bounds_problems(frame), "\n".join(bounds_problems(frame)[:20])
    levels = qrels.groupby("qid")["level"].apply(list).to_dict()
    top = int(qrels["level"].max())
    rows = frame[frame["qid"].notna()].set_index(["qid", "measure"])
    for spec in SPECS:
        for qid, sequence in labels.items():
            expected = ref.measure(
                spec, sequence, levels[qid], rel_level=rel_level, depth=depth, top_level=top
            )
            row = rows.loc[(qid, spec.name)]
            assert row["var"] == pytest.approx(0.0, abs=1e-15), (spec.name, qid)
            for column in ("value", "min", "max"):
                assert row[column] == pytest.approx(expected, rel=1e-12, abs=1e-12), (
                    spec.name, qid, column,
                )  # fmt: skip


@settings(PROPERTY, max_examples=60)
@given(st.data())
def test_value_within_bounds_without_ties(data):
    """No ties at all: var 0 and the value within its bounds, exactly."""
    n = data.draw(st.integers(1, 60))
    scores = data.draw(st.lists(st.floats(-5, 5, width=32), min_size=n, max_size=n, unique=True))
    levels = data.draw(st.lists(st.sampled_from((None, 0, 1, 2)), min_size=n, max_size=n))
    run = pd.DataFrame({"qid": "1", "docno": [f"d{i}" for i in range(n)], "score": scores})
    judged = [(f"d{i}", lv) for i, lv in enumerate(levels) if lv is not None] or [("x", 1)]
    qrels = pd.DataFrame(
        {"qid": "1", "docno": [d for d, _ in judged], "level": [lv for _, lv in judged]}
    )
    frame = spread.evaluate_spread(run, qrels, NAMES, per_query=True)
    assert (frame["var"] == 0).all()
    assert not bounds_problems(frame), "\n".join(bounds_problems(frame)[:20])


@settings(PROPERTY, max_examples=40)
@given(uniform_groups())
def test_the_command_prints_the_value_within_its_bounds(tmp_path_factory, data):
    """``tiecore eval --spread --format csv`` keeps min <= value <= max as printed."""
    run, qrels, _ = data
    folder = tmp_path_factory.mktemp("spread")
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    run.assign(q0="Q0", rank=range(1, len(run) + 1), tag="r")[
        ["qid", "q0", "docno", "rank", "score", "tag"]
    ].to_csv(run_path, sep=" ", header=False, index=False)
    qrels.assign(it=0)[["qid", "it", "docno", "level"]].to_csv(
        qrels_path, sep=" ", header=False, index=False
    )
    out = folder / "out.csv"
    args = [str(qrels_path), str(run_path), "-m", "nDCG@10", "-m", "RBP(p=0.5)", "-m", "AP"]
    assert main(["eval", *args, "--spread", "-q", "--format", "csv", "-o", str(out)]) == 0
    printed = pd.read_csv(out)
    assert len(printed) and not bounds_problems(printed.astype({"qid": object}))


def test_summary_row_within_bounds():
    """The mean over queries keeps the order too (rounded sums are monotone)."""
    rows, judged = [], []
    for q in range(50):
        for d in range(30):
            rows.append((f"q{q}", f"d{d}", float(d // 3)))  # groups of 3 ...
            judged.append((f"q{q}", f"d{d}", int(d // 3 % 3)))  # ... of one level each
    run = pd.DataFrame(rows, columns=["qid", "docno", "score"]).sample(frac=1, random_state=1)
    qrels = pd.DataFrame(judged, columns=["qid", "docno", "level"])
    frame = spread.evaluate_spread(run, qrels, NAMES, per_query=True)
    assert not bounds_problems(frame), "\n".join(bounds_problems(frame)[:20])


@pytest.mark.parametrize("name", ["input.MU03rob01.gz", "input.pircRBa1.gz", "input.Sel50.gz"])
def test_variance_is_zero_exactly_where_the_bounds_meet(name):
    """On real runs (two of them almost wholly tied): ``var == 0`` exactly where
    ``min == max``, per query and measure.  Before, rounding left 2% of rows with var 0
    and min < max (by up to 2e-14) and others with var > 0 and min == max."""
    from shared_data import ROBUST_QRELS, robust_run

    import tiecore

    run, qrels = tiecore.read_run(robust_run(name)), tiecore.read_qrels(ROBUST_QRELS)
    measures = ["P@10", "P@100", "AP", "AP@100", "nDCG", "nDCG@20", "Bpref", "RR", "RBP(p=0.95)"]
    measures += ["IPrecAvg", "IPrecAvg(levels=0.25;0.5;0.75,round=nearest)"]
    frame = spread.evaluate_spread(run, qrels, measures, per_query=True)
    rows = frame[frame["qid"].notna()]
    mismatched = rows[(rows["var"] == 0) != (rows["min"] == rows["max"])]
    assert mismatched.empty, mismatched.head(10).to_string()
    assert not bounds_problems(frame)
