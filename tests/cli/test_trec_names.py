"""trec_eval's names out when they came in, and outputs that name their tie mode.

``tiecore eval -m map -m P.5,10 ...`` prints the lines trec_eval prints for them
(its own expected outputs, ``out.test.aq``), names included; tiecore's names stay
tiecore's; csv and json name the mode (``ties``, ``tiebreak``) on every row.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from shared_data import TREC_EVAL

from tiecore.cli import main
from tiecore.cli.all_trec import trec_names
from tiecore.measures import split_measures

FILES = [str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.test")]
TREC = ["map", "P.5,10", "recall.100", "success.5,10", "ndcg_cut.10,20", "bpref", "recip_rank"]
TREC += ["Rprec", "map_cut.100", "ndcg"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["eval", *FILES, *argv]) == 0
    return capsys.readouterr().out


def test_trec_eval_names_give_trec_eval_lines(capsys):
    measures = [a for name in TREC for a in ("-m", name)]
    out = run(capsys, *measures, "--ties", "oblivious", "-q")
    expected = set((TREC_EVAL / "out.test.aq").read_text().splitlines())
    lines = out.splitlines()
    assert lines[:2] == ["runid                 \tall\tSTANDARD", "num_q                 \tall\t3"]
    assert all(line in expected for line in lines), [x for x in lines if x not in expected]
    names = list(dict.fromkeys(line.split("\t")[0].strip() for line in lines[2:]))
    assert names == [
        "map", "P_5", "P_10", "recall_100", "success_5", "success_10", "ndcg_cut_10",
        "ndcg_cut_20", "bpref", "recip_rank", "Rprec", "map_cut_100", "ndcg",
    ]  # fmt: skip
    assert len(lines) == 2 + 4 * len(names)  # three queries and "all" each


def test_tiecore_names_stay_and_csv_json_name_the_mode(capsys):
    out = run(capsys, "-m", "P@5,map,nDCG@10", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["measure"] for r in rows] == ["P@5", "map", "nDCG@10"]
    assert {(r["ties"], r["tiebreak"]) for r in rows} == {("aware", "")}
    out = run(capsys, "-m", "ndcg_cut.10", "--ties", "oblivious", "--tiebreak", "docno_asc")
    assert out.splitlines()[2].startswith("ndcg_cut_10 ")
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
    assert trec_names(["map", "AP", "P@5"], ["AP", "AP", "P@5"]) == {"AP": "map"}
    assert trec_names(["AP", "map"], ["AP", "AP"]) == {}  # the first spelling wins
