"""Evaluation: from checked columns (qid, docno, score) to per-query values."""
