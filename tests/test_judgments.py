"""Judgments.lookup against a plain dictionary, with the real hash and with one that collides."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tiecore import judgments as jm


def _case(seed: int) -> tuple[pd.DataFrame, np.ndarray, pa.Array]:
    """Qrels over a few queries and docnos of varied lengths, and run rows partly judged."""
    rng = np.random.default_rng(seed)
    names = [f"d{'x' * int(rng.integers(0, 20))}{i}" for i in range(60)] + ["", "é" * 9]
    drawn = zip(rng.integers(0, 5, 150), rng.integers(0, 61, 150), strict=True)
    pairs = {(str(q), names[d]) for q, d in drawn}
    qrels = pd.DataFrame(sorted(pairs), columns=["qid", "docno"])
    qrels = qrels[qrels["docno"] != ""].reset_index(drop=True)
    qrels["level"] = rng.integers(-1, 4, len(qrels))
    query = rng.integers(0, 5, 400)
    docno = pa.array([names[d] for d in rng.integers(0, 62, 400)], pa.string())
    return qrels, query, docno


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("collide", [False, True])
def test_lookup_equals_a_dictionary(seed, collide, monkeypatch) -> None:
    qrels, query, docno = _case(seed)
    judgments = jm.Judgments.from_qrels(qrels)
    qids = judgments.qids.tolist()
    query = np.minimum(query, len(qids) - 1)
    levels = {(q, d): int(v) for q, d, v in qrels.itertuples(index=False)}
    expected = [levels.get((qids[q], d)) for q, d in zip(query, docno.to_pylist(), strict=True)]
    if collide:  # every hash in one of 3 values: the exact path must answer
        real = jm.string_hashes
        monkeypatch.setattr(jm, "string_hashes", lambda s: real(s) % np.uint64(3))
    for kind in (pa.string(), pa.large_string()):
        level, judged = judgments.lookup(query, docno.cast(kind))
        assert judged.tolist() == [e is not None for e in expected]
        assert level.tolist() == [0 if e is None else e for e in expected]
