"""``retcon paper-checks --design both`` (issue 46 item 7): the two LoCoMo designs side by side,
each design's folder the bytes of a run of that design alone; and the config's checks that the
command no longer repeats (issue 45 item 5)."""

from __future__ import annotations

import json
import math
import shutil

import pytest

import paper_checks as pc
from paper_checks._config import DESIGN_TRAITS, other_design
from paper_checks.report._designs import (
    designs_markdown,
    designs_summary,
    designs_text,
    operator_line,
)
from retcon.cli import main
from retcon.commands.paper_checks import single_design_command
from retcon.errors import InputError, cli_spelling
from tests._data import LOCOMO_PATH, needs_locomo

NAN = float("nan")


def _crossovers(design: str, merge, abstract, budgets) -> dict:
    def op(est, status="unique"):
        return {"crossover_budget": pc.Estimate(*est), "status": status}

    return {
        "design": design,
        "unit": "locomo:lexical",
        "data": f"LoCoMo under {design}",
        "budgets": budgets,
        "operators": {"merge": op(merge), "abstract": op(abstract, "none")},
    }


def _result(cid: str, verdict: str, curves: dict | None = None) -> pc.ClaimResult:
    details = {} if curves is None else {"curves": curves}
    return pc.ClaimResult(cid, "claim", None, None, "-", "data", verdict, details)


CROSS = {
    "ours": _crossovers("ours", (838.0, 341.0, 1443.0), (NAN, NAN, NAN), [32.0, 2048.0]),
    "paper": _crossovers("paper", (49.8, 40.9, 75.7), (19.4, 0.0, 36.9), [16.0, 128.0]),
}
RESULTS = {
    "ours": [_result("1", "PASS"), _result("7", "FAIL")],
    "paper": [_result("1", "INCONCLUSIVE"), _result("7", "FAIL")],
}


def test_summary_sets_each_operator_and_claim_side_by_side():
    s = designs_summary(CROSS, RESULTS)
    assert list(s["designs"]) == ["ours", "paper"]
    merge, abstract = s["operators"]
    assert merge["operator"] == "merge"
    assert merge["ours"]["crossover_budget"] == {"point": 838.0, "lower": 341.0, "upper": 1443.0}
    assert merge["paper"]["crossover_budget"]["point"] == 49.8
    # an undefined B* is JSON null, said in words in the line
    assert abstract["ours"]["crossover_budget"]["point"] is None
    assert "no crossover (status none) under ours" in abstract["line"]
    assert "838 [341, 1443] under ours" in merge["line"]
    assert "49.8 [40.9, 75.7] under --design paper" in merge["line"]
    for d in ("ours", "paper"):  # the line names each design's tokens, packing and grid
        for aspect in ("tokens", "packing"):
            assert DESIGN_TRAITS[d][aspect] in merge["line"]
    assert "budgets 32-2048" in merge["line"] and "budgets 16-128" in merge["line"]
    assert s["claims"] == [
        {"claim_id": "1", "ours": "PASS", "paper": "INCONCLUSIVE"},
        {"claim_id": "7", "ours": "FAIL", "paper": "FAIL"},
    ]
    assert s["differ"]["tokens"] == {"ours": "regex tokens", "paper": "alphanumeric tokens"}
    json.dumps(s, allow_nan=False)  # strict JSON


def test_summary_markdown_tables_are_well_formed_and_text_has_a_line_per_operator():
    s = designs_summary(CROSS, RESULTS)
    md = designs_markdown(s)
    lines = md.splitlines()
    for head, rule in zip(lines, lines[1:], strict=False):  # GFM: a rule cell per header cell
        if rule.startswith("| ---"):
            assert head.count("|") == rule.count("|"), head
    assert "| merge | 838 [341, 1443] | 49.8 [40.9, 75.7] |" in md
    assert "| 1 | PASS | INCONCLUSIVE |" in md
    text = designs_text(s)
    assert sum(t.strip().startswith(("merge:", "abstract:")) for t in text) == 2


def test_a_design_without_locomo_is_said_not_measured():
    cross = {**CROSS, "paper": {"design": "paper", "skipped": "LoCoMo data absent"}}
    line = operator_line("merge", cross)
    assert "not measured under --design paper (LoCoMo data absent)" in line
    assert "not measured: LoCoMo data absent" in designs_markdown(designs_summary(cross, RESULTS))


def test_a_single_design_prints_its_crossovers_and_the_other_design():
    curves = {
        "locomo:lexical": CROSS["ours"]["operators"],
        "sim:locomo-like": CROSS["paper"]["operators"],
    }
    lines = pc.crossover_lines([_result("2", "PASS"), _result("1", "PASS", curves)], "ours")
    assert lines == [
        "crossover B* (tokens) on locomo:lexical under ours: merge 838 [341, 1443], "
        "abstract no crossover (status none)",
        other_design("ours"),
    ]
    assert "--design paper" in lines[1] and "alphanumeric tokens" in lines[1]
    assert pc.crossover_lines([_result("1", "SKIPPED", {})], "ours") == []  # no LoCoMo graded


def test_claim_1_says_the_other_design_from_the_one_source():
    """The traits of each design are written once (``DESIGN_TRAITS``): the line claim 1's summary
    ends with names every trait of the other design and how to run it."""
    for design, other in (("ours", "paper"), ("paper", "ours")):
        line = other_design(design)
        assert all(t in line for t in DESIGN_TRAITS[other].values())
        assert "--design both" in line


def test_design_workspaces_share_only_what_reads_no_locomo():
    wss = pc.design_workspaces(pc.CheckConfig(), seed=3)
    assert [ws.config.design for ws in wss.values()] == ["ours", "paper"]
    ours, paper = wss.values()
    a = ours.theory_curves()
    assert "theory:1" not in paper.measured()  # shared on demand: the memo's order is its own
    b = paper.theory_curves()
    assert b is a  # measured once
    assert math.isclose(
        float(b.operators["merge"].crossover.point), float(a.operators["merge"].crossover.point)
    )
    # a source that reads LoCoMo is never shared: each design measures its own
    assert ours._get("locomo-curves:lexical", lambda: "ours") == "ours"
    assert paper._get("locomo-curves:lexical", lambda: "paper") == "paper"
    with pytest.raises(InputError, match="paired files carry the design"):
        pc.design_workspaces(pc.CheckConfig(paired=("a.jsonl",), readers=("a",)))


def test_single_design_command_rewrites_design_and_out():
    argv = ["paper-checks", "--design", "both", "--out", "run", "--data", "x.json"]
    assert single_design_command(argv, "paper") == [
        "paper-checks",
        "--design",
        "paper",
        "--out",
        "run/paper",
        "--data",
        "x.json",
    ]
    assert single_design_command(["--design=both", "--out=r"], "ours") == [
        "--design=ours",
        "--out=r/ours",
    ]


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--tables-only"], "--tables-only"),
        (["--protocol", "end-to-end"], "--protocol"),
        (["--second-reader", "x.jsonl"], "--second-reader"),
        (["--limit", "5"], "--limit"),
        (["--paired", "x.jsonl"], "--paired"),
        (["--sim-only"], "--sim-only"),
    ],
)
def test_design_both_refuses_an_option_of_one_design_in_one_line(capsys, extra, option):
    assert main(["paper-checks", "--design", "both", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"retcon paper-checks: error: {option} needs one design")
    assert "--design both" in err


@pytest.mark.parametrize(
    ("fields", "field", "option", "words"),
    [
        ({"locomo_limit": 0}, "locomo_limit", "--limit", "must be a positive integer"),
        ({"protocol": "end-to-end"}, "protocol", "--protocol", "needs {design}"),
        ({"second_reader": "s.jsonl"}, "second_reader", "--second-reader", "needs {design}"),
        ({"paired": ("a",), "readers": ("a", "b")}, "readers", "--reader-name", "2 names for 1"),
        ({"readers": ("a", "a")}, "readers", "--reader-name", "names must differ"),
    ],
)
def test_config_checks_name_the_field_in_python_and_the_option_in_the_cli(
    fields, field, option, words
):
    """The rules the command used to re-check live once, in ``CheckConfig`` (issue 45 item 5):
    the same check names the field from Python and the option on the command line."""
    with pytest.raises(InputError) as e:
        pc.CheckConfig(**fields)
    assert str(e.value).startswith(f"CheckConfig.{field}")
    assert words.format(design="design='paper'") in str(e.value)
    with cli_spelling(), pytest.raises(InputError) as e:
        pc.CheckConfig(**fields)
    assert str(e.value).startswith(option)
    assert words.format(design="--design paper") in str(e.value)


@pytest.mark.slow
@needs_locomo
def test_design_both_on_locomo_writes_each_design_as_its_own_run(tmp_path, capsys):
    """All claims under both designs on LoCoMo: the summary, and each design's folder the bytes
    of ``--design <d>`` alone at the same seed (rerun into that folder: report.html names the
    command, so the same command gives the same bytes)."""
    out = tmp_path / "both"
    base = ["-q", "paper-checks", "--data", str(LOCOMO_PATH), "--no-figures"]
    assert main([*base, "--design", "both", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    summary = json.loads((out / "designs.json").read_text())
    assert summary["sidecar"]["config"]["design"] == "both"
    assert [o["operator"] for o in summary["operators"]] == ["merge", "abstract", "rewrite"]
    merge = summary["operators"][0]
    for d in ("ours", "paper"):
        est = merge[d]["crossover_budget"]
        assert est["lower"] <= est["point"] <= est["upper"]
        assert printed["designs"][d]["verdicts"] == {c["claim_id"]: c[d] for c in summary["claims"]}
    assert (out / "DESIGNS.md").read_text().startswith("# Paper checks: the two LoCoMo designs")
    kept = tmp_path / "kept"
    shutil.copytree(out, kept)
    for d in ("ours", "paper"):  # the same options, one design: the command report.html names
        assert main([*base, "--design", d, "--out", str(out / d), "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == printed["designs"][d]
        for name in ("report.json", "REPORT.md", "report.html"):
            assert (out / d / name).read_bytes() == (kept / d / name).read_bytes(), (d, name)
