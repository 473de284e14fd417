"""trec_eval's names out when they came in, and outputs that name their tie mode.

``tiecore eval -m map -m P.5,10 ...`` prints the lines trec_eval prints for them
(its own expected outputs, ``out.test.aq``), names and order included (more in
test_trec_eval_lines.py); tiecore's names stay
tiecore's; csv and json name the mode (``ties``, ``tiebreak``) on every row.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from shared_data import TREC_EVAL

from tiecore.cli import main
from tiecore.cli.trec_eval_names import trec_plan
from tiecore.measures import split_measures

FILES = [str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.test")]
TREC = ["map", "P.5,10", "recall.100", "success.5,10", "ndcg_cut.10,20", "bpref", "recip_rank"]
TREC += ["Rprec", "map_cut.100", "ndcg"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["eval", *FILES, *argv]) == 0
    return capsys.readouterr().out


def test_trec_eval_names_give_trec_eval_lines(capsys):
    """Only trec_eval's names: trec_eval's lines in trec_eval's order (its table's,
    whatever the order of the flags), without the runid and num_q nobody asked for."""
    measures = [a for name in TREC for a in ("-m", name)]
    out = run(capsys, *measures, "--ties", "oblivious", "-q")
    lines = out.splitlines()
    names = list(dict.fromkeys(line.split("\t")[0].strip() for line in lines))
    assert names == [
        "map", "Rprec", "bpref", "recip_rank", "P_5", "P_10", "recall_100", "ndcg",
        "ndcg_cut_10", "ndcg_cut_20", "map_cut_100", "success_5", "success_10",
    ]  # fmt: skip
    expected = (TREC_EVAL / "out.test.aq").read_text().splitlines()
    assert lines == [line for line in expected if line.split("\t")[0].strip() in names]


def test_tiecore_names_stay_and_csv_json_name_the_mode(capsys):
    out = run(capsys, "-m", "P@5,map,nDCG@10", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["measure"] for r in rows] == ["P@5", "map", "nDCG@10"]
    assert {(r["ties"], r["tiebreak"]) for r in rows} == {("aware", "")}
    out = run(capsys, "-m", "ndcg_cut.10", "--ties", "oblivious", "--tiebreak", "docno_asc")
    assert out.splitlines()[0].startswith("ndcg_cut_10 ")
    rows = json.loads(run(capsys, "-m", "AP", "--format", "json", "--ties", "oblivious"))
    assert [(r["measure"], r["ties"], r["tiebreak"]) for r in rows] == [
        ("AP", "oblivious", "trec_eval")
    ]
    rows = json.loads(run(capsys, "-m", "P@5", "--format", "json", "--ties", "sampled"))
    assert (rows[0]["ties"], rows[0]["tiebreak"]) == ("sampled", None)


def test_trec_eval_parameter_lists_and_name_map():
    assert split_measures(["P.5,10", "ndcg_cut.10,20", "RBP(p=0.5)"]) == [
        "P.5", "P.10", "ndcg_cut.10", "ndcg_cut.20", "RBP(p=0.5)",
    ]  # fmt: skip
    assert trec_plan(["map", "AP", "P@5"]).printed == {"AP": "map", "P@5": "P@5"}
    assert trec_plan(["AP", "map"]).printed == {"AP": "AP"}  # the first spelling wins
