"""Sampled mode: uniform draws, and the same seed draws the same tie-breaks whatever
else is asked."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import tiecore
from tiecore.engine import sampling
from tiecore.engine.judgments import Judgments
from tiecore.engine.ranking import Ranking


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


def test_bpref_draws_the_same_values_alone_or_with_judged():
    """Bpref counts its judged non-relevant docs, Judged@k places them: asking for
    Judged too changes no Bpref value."""
    run, qrels = tie_heavy(5)
    alone = tiecore.evaluate(run, qrels, ["Bpref"], ties="sampled", samples=50, per_query=True)
    together = tiecore.evaluate(
        run, qrels, ["Judged@10", "Bpref", "AP"], ties="sampled", samples=50, per_query=True
    )
    together = together[together["measure"] == "Bpref"].reset_index(drop=True)
    pd.testing.assert_frame_equal(alone, together)
    assert (alone["std"] > 0).any()


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


def test_collisions_found_by_sorting_by_a_slot_array_or_by_layers_give_the_same_draws(
    monkeypatch,
):
    """:func:`sampling._place` keeps the earliest draw of a slot either way (and
    some round finds every draw rejected); its first round by layers
    (:func:`sampling._first_round`, ``LAYERS = 0``: never) changes no draw."""
    run, qrels = tie_heavy(13)
    measures = ["AP", "Bpref", "Judged@10", "nDCG@10"]
    draws = []
    for sparse, layers in ((0, 0), (10**9, 0), (0, 10**9), (10**9, 10**9), (0, 3)):
        monkeypatch.setattr(sampling, "SPARSE", sparse)
        monkeypatch.setattr(sampling, "LAYERS", layers)
        draws.append(
            tiecore.evaluate(run, qrels, measures, ties="sampled", samples=400, per_query=True)
        )
    for other in draws[1:]:
        pd.testing.assert_frame_equal(draws[0], other)


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
    assert kinds == {sampling.FIRST: 2, sampling.WHOLE: 3}  # the judged non-relevant: counted
    assert bpref.tally.free.tolist() == [7, 4] and bpref.tally.good.tolist() == [1, 3]
    _, _, judged = staged_sequences({"judged"}, 1)
    assert Counter(judged.kind.tolist())[sampling.SECOND] == 3  # and the judged-only group


def chi_square_against_brute_force(sequences, labels, groups, keep) -> None:
    """The drawn arrangements of ``groups`` against every ordering (labels not ``keep``
    shown as None, as they are not placed)."""

    def counts_of(g: int) -> Counter:
        counts = Counter()
        for seq, c in ref.label_sequences([0.0] * len(labels[g]), labels[g]).items():
            counts[tuple(v if keep(v) else None for v in seq)] += c
        return counts

    chi_square_against(sequences, groups, counts_of, groups)


def chi_square_against(sequences, groups, counts_of, context) -> None:
    """Chi-square of the drawn ``groups`` (jointly) against the product of each group's
    brute-force counts ``counts_of(g)`` (independent groups); ``context`` names the case."""
    expected = Counter({(): 1.0})
    for g in groups:
        counts = counts_of(g)
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
    assert result.pvalue > 1e-4, (context, result)


def test_staged_draws_are_uniform_over_orderings():
    """Every judged doc placed (Judged asks for them all): each group's arrangement, and
    the first and third jointly, against brute force; with gains alone, the gains'.
    (Bpref's counts: :func:`test_bpref_counts_are_uniform_over_orderings`.)"""
    samples = 20_000
    sequences, labels, _ = staged_sequences({"judged", "ap"}, samples)
    for groups in ((0,), (2,), (3,), (0, 2)):
        chi_square_against_brute_force(sequences, labels, groups, lambda v: v is not None)
    sequences, labels, _ = staged_sequences({"gain:exp"}, samples)
    for groups in ((0,), (2,)):
        chi_square_against_brute_force(sequences, labels, groups, lambda v: v is not None and v > 0)


@pytest.mark.parametrize("rel_level", [1, 2, 0])
def test_sampled_means_approach_the_exact_tie_aware_values(rel_level):
    """Bpref, AP, nDCG and P@k drawn by stages: the mean over many samples is within
    5 standard errors of the exact tie-aware value, per query; with ``rel_level`` 2
    (docs at level 1 have a gain but are not relevant) and 0 (docs at level 0 are
    relevant without a gain: placed in the first stage too)."""
    run, qrels = tie_heavy(21)
    measures = ["P@5", "AP", "nDCG", "Bpref", "Judged@10", "RR"]
    drawn = tiecore.evaluate(
        run, qrels, measures, ties="sampled", samples=4000, per_query=True, rel_level=rel_level
    )
    exact = tiecore.evaluate(
        run, qrels, measures, ties="aware", per_query=True, rel_level=rel_level
    )
    both = drawn.merge(exact, on=["run", "qid", "measure"], suffixes=("", "_exact"))
    error = (both["value"] - both["value_exact"]).abs()
    assert (error <= 5 * both["stderr"] + 1e-12).all(), both[error > 5 * both["stderr"]]


# ---------------------------------------------------------------- Bpref's counts


def bpref_groups() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One query: two groups whose judged non-relevant docs Bpref counts (:class:`sampling._Tally`):
    2 relevant docs (levels 2 and 1), 2 judged non-relevant, 2 unjudged; 1 relevant,
    1 non-relevant, 1 at a negative level, 1 unjudged; then a group shuffled whole.
    Unretrieved relevant docs keep the counts below R."""
    groups = [
        (3.0, [2, 1, 0, 0, None, None]),
        (2.0, [2, 0, -1, None]),
        (1.0, [2, 2, 0]),
    ]
    rows, qrels = [], []
    for score, labels in groups:
        for label in labels:
            docno = f"d{len(rows)}"
            rows.append(("q", docno, score))
            if label is not None:
                qrels.append(("q", docno, label))
    qrels += [("q", f"unretrieved{i}", 2) for i in range(6)]
    run = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    return run, pd.DataFrame(qrels, columns=["qid", "docno", "level"])


def tallied_sequences(
    rel_level: int, samples: int, components: frozenset = frozenset({"ap", "bpref"})
) -> tuple[list, list, sampling._Layout]:
    """Per sample and counted group: the first-stage labels in slot order (None: no doc
    placed there) and, per relevant doc in slot order, the judged non-relevant docs
    counted above it in the group (:func:`sampling.tally`)."""
    run, qrels = bpref_groups()
    judgments = Judgments.from_qrels(qrels, rel_level=rel_level)
    ranking = Ranking.build(run, judgments, tiebreak="file_order")
    layout = sampling._Layout.for_components(ranking, judgments, 100, set(components))
    words = sampling._Words(2468, judgments, ranking, layout.docs)
    doc, slot = sampling.draw(layout, words, 0, samples)
    later = sampling.tally(ranking, layout, words, doc, slot, 0)
    label = np.where(ranking.judged, ranking.level, -9)
    counted = np.unique(ranking.group[layout.docs[layout.tally.columns]])
    sequences = []
    for s in range(samples):
        placed = dict(zip(slot[s].tolist(), label[doc[s]].tolist(), strict=True))
        above = dict(zip(slot[s].tolist(), later[s].tolist(), strict=True))
        per_group = []
        for g in counted:
            rows = range(ranking.group_start[g], ranking.group_start[g] + ranking.size[g])
            seq = tuple(first_stage(placed.get(row), rel_level) for row in rows)
            counts = tuple(above[row] for row in rows if placed.get(row, -9) >= rel_level)
            per_group.append((seq, counts))
        sequences.append(tuple(per_group))
    labels = [
        [None if v == -9 else v for v in label[start : start + size].tolist()]
        for start, size in zip(ranking.group_start[counted], ranking.size[counted], strict=True)
    ]
    return sequences, labels, layout


def first_stage(label, rel_level: int):
    """The label of a doc placed in the first stage (a gain or relevant), else None."""
    return label if label is not None and (label > 0 or label >= rel_level) else None


def brute_force_counts(labels: list, rel_level: int) -> Counter:
    """Over every ordering of a group: the labels of the docs with a gain or relevant, in
    slot order (others None), and per relevant doc the judged non-relevant docs without
    a gain above it; with how many orderings give each."""
    out = Counter()
    for seq, c in ref.label_sequences([0.0] * len(labels), labels).items():
        first = tuple(first_stage(v, rel_level) for v in seq)
        counted = [v is not None and 0 <= v < rel_level and v <= 0 for v in seq]
        above = tuple(
            sum(counted[:i]) for i, v in enumerate(seq) if v is not None and v >= rel_level
        )
        out[(first, above)] += c
    return out


@pytest.mark.parametrize(
    ("rel_level", "components"),
    [(1, {"ap", "bpref"}), (2, {"ap", "bpref"}), (1, {"judged", "bpref"})],
)
def test_bpref_counts_are_uniform_over_orderings(rel_level, components):
    """The first stage and the counts drawn for Bpref against every ordering (brute
    force): each counted group, and both jointly (independence).  With ``rel_level``
    2 the level-1 doc has a gain but is not relevant: placed, and counted as placed;
    with Judged, which places the other judged docs, Bpref counts all the same."""
    samples = 30_000
    sequences, labels, layout = tallied_sequences(rel_level, samples, frozenset(components))
    assert len(labels) == 2 and Counter(layout.kind.tolist())[sampling.WHOLE] == 3
    assert (sampling.SECOND in layout.kind) == ("judged" in components)
    assert len(sequences) == samples

    def counts_of(g: int) -> Counter:
        return brute_force_counts(labels[g], rel_level)

    for groups in ((0,), (1,), (0, 1)):
        chi_square_against(sequences, groups, counts_of, (rel_level, groups))


@pytest.mark.parametrize(
    ("good", "bad", "draws"),
    [(5, 15, 8), (1, 6, 3), (3, 1, 2), (40, 400, 300), (100, 50, 120), (0, 5, 3), (7, 0, 3)],
)
def test_hypergeometric_inverts_scipys_distribution(good, bad, draws):
    """Just below and above each cumulative probability of the search's order (mode,
    mode + 1, mode - 1, ...; scipy's pmf) the draw is that value and the next; and a
    chi-square of 100,000 draws against scipy's pmf."""
    law = stats.hypergeom(good + bad, good, draws)
    low, high = max(0, draws - bad), min(draws, good)
    mode = min(max((draws + 1) * (good + 1) // (good + bad + 2), low), high)
    order = [mode]
    for step in range(1, high - low + 1):
        order += [x for x in (mode + step, mode - step) if low <= x <= high]
    cumulative = np.cumsum(law.pmf(order))
    inner = [(c, x) for c, x in zip(cumulative, order, strict=True) if 1e-7 < c < 1 - 1e-7]
    below = np.array([c - 1e-9 for c, _ in inner])
    drawn = sampling.hypergeometric(good, bad, draws, below)
    assert drawn.tolist() == [x for _, x in inner]
    above = np.array([c + 1e-9 for c, _ in inner])
    following = [order[order.index(x) + 1] for _, x in inner]
    assert sampling.hypergeometric(good, bad, draws, above).tolist() == following
    u = (np.arange(100_000) + np.random.default_rng(good).random(100_000)) / 100_000
    x = sampling.hypergeometric(good, bad, draws, np.random.default_rng(draws).permutation(u))
    support = np.arange(low, high + 1)
    observed = np.bincount(x - low, minlength=support.size)
    assert observed.size == support.size and x.min() >= low
    if support.size > 1:
        expected = law.pmf(support) * x.size
        result = stats.chisquare(observed, expected * observed.sum() / expected.sum())
        assert result.pvalue > 1e-4, result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_public_sampler_draws_what_the_layout_draws(seed):
    """Sampler.draws: the batches of draw() over the layout of the mixed groups, the run
    key taken once from the generator, whatever the batch size."""
    run, qrels = tie_heavy(seed)
    judgments = Judgments.from_qrels(qrels)
    ranking = Ranking.build(run, judgments)
    sampler = sampling.Sampler(ranking, judgments, 50)
    layout = sampling._Layout.of(ranking, 50)
    assert np.array_equal(sampler.rows, layout.docs)
    assert np.array_equal(sampler.cleared, layout.cleared)
    words = sampling._Words(seed + 7, judgments, ranking, layout.docs)
    doc, slot = sampling.draw(layout, words, 0, 30)
    cells = sampling.BATCH_CELLS // 8  # batches of 8 samples
    got = list(sampler.draws(30, seed + 7, max(cells, 1)))
    assert [size for _, size, _, _ in got] == [8, 8, 8, 6]
    assert np.array_equal(np.concatenate([d for _, _, d, _ in got]), doc)
    assert np.array_equal(np.concatenate([s for _, _, _, s in got]), slot)
    rng, twin = np.random.default_rng(seed), np.random.default_rng(seed)
    empty = list(sampling.Sampler(ranking, judgments, 0).draws(3, rng))
    assert [(doc, slot) for _, _, doc, slot in empty] == [(None, None)]
    twin.integers(0, 2**64, dtype=np.uint64)  # the one word the run key takes
    assert rng.random() == twin.random()
