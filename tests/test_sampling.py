"""Sampled mode: uniform draws, and the same seed draws the same tie-breaks whatever
else is asked."""

from collections import Counter

import numpy as np
import pandas as pd
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import tiecore
from tiecore import sampling
from tiecore.judgments import Judgments
from tiecore.ranking import Ranking


def tie_heavy(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    rows = 200
    run = pd.DataFrame(
        {
            "qid": rng.choice(["q1", "q2", "q3"], rows),
            "docno": [f"d{i}" for i in range(rows)],
            "score": rng.integers(0, 4, rows).astype(float),
        }
    )
    judged = rng.random(rows) < 0.5
    qrels = pd.DataFrame(
        {
            "qid": run["qid"][judged].to_numpy(),
            "docno": run["docno"][judged].to_numpy(),
            "level": rng.integers(0, 3, judged.sum()),
        }
    )
    return run, qrels


@settings(max_examples=20, deadline=None)
@given(
    st.integers(0, 2**16),
    st.sampled_from(["P@5", "RR@3", "nDCG@10", "Success@2", "Judged@10", "RBP_residual", "CG@5"]),
)
def test_a_measure_draws_the_same_orders_alone_or_with_others(seed, measure):
    run, qrels = tie_heavy(seed)
    alone = tiecore.evaluate(run, qrels, [measure], ties="sampled", samples=30, seed=seed)
    together = tiecore.evaluate(
        run, qrels, ["AP", measure, "Bpref"], ties="sampled", samples=30, seed=seed
    )
    together = together[together["measure"] == measure].reset_index(drop=True)
    pd.testing.assert_frame_equal(alone, together)


def test_samples_are_reproducible_and_seed_dependent():
    run, qrels = tie_heavy(7)
    first = tiecore.evaluate(run, qrels, ["AP"], ties="sampled", samples=40, seed=1)
    again = tiecore.evaluate(run, qrels, ["AP"], ties="sampled", samples=40, seed=1)
    other = tiecore.evaluate(run, qrels, ["AP"], ties="sampled", samples=40, seed=2)
    pd.testing.assert_frame_equal(first, again)
    assert first["value"].iloc[0] != other["value"].iloc[0]


def test_a_query_without_ties_keeps_its_value_and_zero_spread():
    run, qrels = tie_heavy(3)
    run["score"] = np.arange(len(run), dtype=float)  # no ties at all
    measures = ["P@5", "AP", "nDCG@10", "Bpref"]
    sampled = tiecore.evaluate(run, qrels, measures, ties="sampled", samples=25, per_query=True)
    oblivious = tiecore.evaluate(run, qrels, measures, ties="oblivious", per_query=True)
    assert (sampled["std"] == 0).all() and (sampled["stderr"] == 0).all()
    np.testing.assert_array_equal(sampled["value"], oblivious["value"])


def three_groups() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One query: a sparse group (3 active docs of 7), a dense one (3 of 3), a sparse
    one with graded levels and a judged doc at a negative level (3 of 6, placed too:
    Judged@k counts it); the other docs unjudged."""
    groups = [
        (3.0, [1, 1, 0, None, None, None, None]),
        (2.0, [1, 0, 1]),
        (1.0, [2, 1, -1] + [None] * 3),
    ]
    rows, qrels = [], []
    for score, labels in groups:
        for label in labels:
            docno = f"d{len(rows)}"
            rows.append(("q", docno, score))
            if label is not None:
                qrels.append(("q", docno, label))
    run = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    return run, pd.DataFrame(qrels, columns=["qid", "docno", "level"])


def drawn_label_sequences(samples: int) -> tuple[list, dict]:
    """Per sample and group the labels in slot order, from sampling.draw; and the labels."""
    run, qrels = three_groups()
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    layout = sampling._Layout.of(ranking, 100)
    words = sampling._Words(12345, judgments, ranking, layout.docs)
    doc, slot = sampling.draw(layout, words, 0, samples)
    label = np.where(ranking.judged, ranking.level, -9)
    sequences = []
    for s in range(samples):
        placed = dict(zip(slot[s].tolist(), label[doc[s]].tolist(), strict=True))
        sequences.append(
            tuple(
                tuple(placed.get(row, None) for row in range(start, start + size))
                for start, size in zip(ranking.group_start, ranking.size, strict=True)
            )
        )
    labels = [
        [None if v == -9 else v for v in label[start : start + size].tolist()]
        for start, size in zip(ranking.group_start, ranking.size, strict=True)
    ]
    return sequences, labels


def test_draws_are_uniform_over_orderings():
    """Chi-square of the drawn arrangements against every ordering (brute force):
    the sparse group alone, and the first two groups jointly (independence)."""
    samples = 20_000
    sequences, labels = drawn_label_sequences(samples)
    for groups in ((2,), (0, 1)):
        expected = Counter({(): 1})
        for g in groups:
            counts = ref.label_sequences([0.0] * len(labels[g]), labels[g])
            total = sum(counts.values())
            expected = Counter(
                {
                    (*key, seq): p * c / total
                    for key, p in expected.items()
                    for seq, c in counts.items()
                }
            )
        seen = Counter(tuple(s[g] for g in groups) for s in sequences)
        assert set(seen) <= set(expected), set(seen) - set(expected)
        keys = sorted(expected, key=repr)
        observed = np.array([seen[k] for k in keys], dtype=float)
        probability = np.array([expected[k] for k in keys])
        result = stats.chisquare(observed, probability * samples)
        assert result.pvalue > 1e-4, (groups, result)


def test_each_slot_holds_one_doc_and_every_active_doc_is_placed():
    sequences, labels = drawn_label_sequences(500)
    for sequence in sequences:
        for g, drawn in enumerate(sequence):
            assert Counter(drawn) == Counter(labels[g])


def test_sampled_values_do_not_depend_on_batches_or_other_queries(monkeypatch):
    run, qrels = tie_heavy(11)
    measures = ["P@5", "AP", "nDCG@10", "Bpref", "RR", "RBP(p=0.5)", "Judged@20", "DCG@7"]
    whole = tiecore.evaluate(
        {"r": run}, qrels, measures, ties="sampled", samples=40, seed=5, per_query=True
    )
    monkeypatch.setattr(sampling, "BATCH_CELLS", 50)
    small = tiecore.evaluate(
        {"r": run}, qrels, measures, ties="sampled", samples=40, seed=5, per_query=True
    )
    pd.testing.assert_frame_equal(whole, small)
    alone = tiecore.evaluate(
        {"r": run[run["qid"] == "q2"]}, qrels, measures, ties="sampled", samples=40, seed=5,
        per_query=True,
    )  # fmt: skip
    expected = whole[whole["qid"] == "q2"].reset_index(drop=True)
    pd.testing.assert_frame_equal(alone[alone["qid"] == "q2"].reset_index(drop=True), expected)


# ---------------------------------------------------------------- staged draws


def staged_groups() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One query, a group for each way :meth:`sampling._Layout.for_components` draws:
    gains placed then the other judged docs placed (1 gain, 1 judged of 8); shuffled
    whole (2 gains of 3); gains placed then the rest filling the slots left (1 gain, 3
    judged of 5); judged docs only, one at a negative level (no gain: drawn for
    Judged alone); the other docs unjudged."""
    groups = [
        (5.0, [1, 0] + [None] * 6),
        (4.0, [1, 2, 0]),
        (3.0, [0, 1, 0, 0, None]),
        (2.0, [0, -1, None, None]),
    ]
    rows, qrels = [], []
    for score, labels in groups:
        for label in labels:
            docno = f"d{len(rows)}"
            rows.append(("q", docno, score))
            if label is not None:
                qrels.append(("q", docno, label))
    qrels.append(("q", "unretrieved", 1))  # R = 5: Bpref's count stays below it
    run = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    return run, pd.DataFrame(qrels, columns=["qid", "docno", "level"])


def staged_sequences(components: set[str], samples: int) -> tuple[list, list, sampling._Layout]:
    """Per sample and group the labels in slot order (None: no doc placed there)."""
    run, qrels = staged_groups()
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    layout = sampling._Layout.for_components(ranking, judgments, 100, components)
    words = sampling._Words(4321, judgments, ranking, layout.docs)
    doc, slot = sampling.draw(layout, words, 0, samples)
    label = np.where(ranking.judged, ranking.level, -9)
    sequences = []
    for s in range(samples):
        assert np.unique(slot[s]).size == slot.shape[1]  # one doc per slot
        placed = dict(zip(slot[s].tolist(), label[doc[s]].tolist(), strict=True))
        sequences.append(
            tuple(
                tuple(
                    None if placed.get(row, -9) == -9 else placed[row]
                    for row in range(start, start + size)
                )
                for start, size in zip(ranking.group_start, ranking.size, strict=True)
            )
        )
    labels = [
        [None if v == -9 else v for v in label[start : start + size].tolist()]
        for start, size in zip(ranking.group_start, ranking.size, strict=True)
    ]
    return sequences, labels, layout


def test_staged_layout_draws_only_what_the_components_tell_apart():
    _, _, gains = staged_sequences({"ap", "gain:linear"}, 1)
    kinds = Counter(gains.kind.tolist())
    assert kinds == {sampling.FIRST: 2, sampling.WHOLE: 3}  # the gains, a group whole
    _, _, bpref = staged_sequences({"ap", "bpref"}, 1)
    kinds = Counter(bpref.kind.tolist())
    assert kinds == {sampling.FIRST: 2, sampling.WHOLE: 3, sampling.SECOND: 1, sampling.FILL: 4}
    _, _, judged = staged_sequences({"judged"}, 1)
    assert Counter(judged.kind.tolist())[sampling.SECOND] == 3  # and the judged-only group


def chi_square_against_brute_force(sequences, labels, groups, keep) -> None:
    """The drawn arrangements of ``groups`` against every ordering (labels not ``keep``
    shown as None, as they are not placed)."""
    expected = Counter({(): 1.0})
    for g in groups:
        counts = Counter()
        for seq, c in ref.label_sequences([0.0] * len(labels[g]), labels[g]).items():
            counts[tuple(v if keep(v) else None for v in seq)] += c
        total = sum(counts.values())
        expected = Counter(
            {(*k, seq): p * c / total for k, p in expected.items() for seq, c in counts.items()}
        )
    seen = Counter(tuple(s[g] for g in groups) for s in sequences)
    assert set(seen) <= set(expected), set(seen) - set(expected)
    keys = sorted(expected, key=repr)
    observed = np.array([seen[k] for k in keys], dtype=float)
    probability = np.array([expected[k] for k in keys])
    result = stats.chisquare(observed, probability * len(sequences))
    assert result.pvalue > 1e-4, (groups, result)


def test_staged_draws_are_uniform_over_orderings():
    """Every judged doc placed (Judged asks for them all): each group's arrangement, and
    the first and third jointly, against brute force; with gains alone, the gains'."""
    samples = 20_000
    sequences, labels, _ = staged_sequences({"judged", "ap"}, samples)
    for groups in ((0,), (2,), (3,), (0, 2)):
        chi_square_against_brute_force(sequences, labels, groups, lambda v: v is not None)
    sequences, labels, _ = staged_sequences({"ap", "bpref"}, samples)
    for groups in ((0,), (2,), (0, 2)):
        chi_square_against_brute_force(sequences, labels, groups, lambda v: v is not None)
    sequences, labels, _ = staged_sequences({"gain:exp"}, samples)
    for groups in ((0,), (2,)):
        chi_square_against_brute_force(sequences, labels, groups, lambda v: v is not None and v > 0)


def test_sampled_means_approach_the_exact_tie_aware_values():
    """Bpref, AP, nDCG and P@k drawn by stages: the mean over many samples is within
    5 standard errors of the exact tie-aware value, per query."""
    run, qrels = tie_heavy(21)
    measures = ["P@5", "AP", "nDCG", "Bpref", "Judged@10", "RR"]
    drawn = tiecore.evaluate(run, qrels, measures, ties="sampled", samples=4000, per_query=True)
    exact = tiecore.evaluate(run, qrels, measures, ties="aware", per_query=True)
    both = drawn.merge(exact, on=["run", "qid", "measure"], suffixes=("", "_exact"))
    error = (both["value"] - both["value_exact"]).abs()
    assert (error <= 5 * both["stderr"] + 1e-12).all(), both[error > 5 * both["stderr"]]
