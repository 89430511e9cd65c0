"""The analyses behind the command-line scripts of ``experiments/`` (``paper_checks.studies.scripts``,
reached through ``paper_checks.run_experiment``), the optional report sections
(``paper_checks.append_sections``) and the claims' lines of text (``paper_checks.format_claims``),
each on constructed inputs whose answer is written here by hand."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

import paper_checks as pc
from paper_checks._types import ClaimResult


def _g(point, lower, upper):
    return {"point": point, "lower": lower, "upper": upper}


def test_run_experiment_names_the_scripts_it_knows():
    from retcon.errors import InputError

    with pytest.raises(InputError, match="unknown name 'nope'.*end_to_end_router"):
        pc.run_experiment("nope", None, [])


def test_rule_oc_resumes_from_its_cache_and_skips_a_cut_line(tmp_path, monkeypatch):
    """``--rule-oc`` (MODEL §6, the router rule's error rates): the records already in
    ``rule_oc.jsonl`` are passed on as done (a line cut by an interruption is skipped), and each
    new record is appended as it finishes."""
    from paper_checks.studies.scripts import _router as _script_router

    old = {"signal": 0.0, "index": 0, "deployable": {"verdict": "NO"}}
    old["anchored"] = {"verdict": "NO"}
    (tmp_path / "rule_oc.jsonl").write_text(json.dumps(old) + "\n" + '{"signal": 0.0, "ind\n')
    seen = {}

    def fake(key, signals, *, n_datasets, n_questions, progress, done):
        seen.update(signals=list(signals), n=n_datasets, q=n_questions, done=dict(done))
        new = {**old, "index": 1, "deployable": {"verdict": "YES"}}
        progress(new)
        return ["rates"]

    monkeypatch.setattr(_script_router, "router_rule_characteristics", fake)
    out = _script_router.rule_oc(None, tmp_path, signals=(0.0, 0.05), n_datasets=2)
    assert out == ["rates"]
    assert seen == {"signals": [0.0, 0.05], "n": 2, "q": 150, "done": {(0.0, 0): old}}
    lines = (tmp_path / "rule_oc.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["index"] == 1 and len(lines) == 3


def test_rule_oc_cache_cut_without_a_newline_loses_no_later_record(tmp_path, monkeypatch):
    """A kill in the middle of a write leaves a tail with no newline; the resumed run drops it,
    so the next record starts its own line and is read back (a cache survives an interruption)."""
    from paper_checks.studies.scripts import _router as _script_router

    old = {
        "signal": 0.0,
        "index": 0,
        "deployable": {"verdict": "NO"},
        "anchored": {"verdict": "NO"},
    }
    (tmp_path / "rule_oc.jsonl").write_text(json.dumps(old) + "\n" + '{"signal": 0.0, "ind')

    def fake(key, signals, *, n_datasets, n_questions, progress, done):
        progress({**old, "index": 1})
        return []

    monkeypatch.setattr(_script_router, "router_rule_characteristics", fake)
    _script_router.rule_oc(None, tmp_path, signals=(0.0,), n_datasets=2)
    lines = (tmp_path / "rule_oc.jsonl").read_text().splitlines()
    assert [json.loads(x)["index"] for x in lines] == [0, 1]


def test_router_tables_show_every_policy_of_every_section():
    from paper_checks.studies.scripts._router import tables

    oc = {"signal": 0.03, "policy": "deployable", "yes": 0.5, "no": 0.0, "undecided": 0.5}
    oc.update(coverage=0.95, mean_truth=0.01, mean_gain=0.012, oracle_headroom=0.1, n_datasets=4)
    sim = {"recalls": [1.0, 0.5], "cells": []}
    for r, p in ((1.0, 0.02), (0.5, -0.01)):
        gain = {"best-fixed": _g(0, 0, 0), "deployable": _g(p, p - 0.01, p + 0.01)}
        sim["cells"].append({"recall": r, "gain": gain})
    text = tables({"rule_oc": [oc], "simulation": sim})
    assert (
        "| 0.03 | deployable | 50.0% | 0.0% | 50.0% | 95.0% | +0.0100 | +0.0120 | +0.100 | 4 |"
        in text
    )
    assert "| recall | deployable |" in text and "best-fixed |" not in text.split("| recall |")[1]
    assert "| 1 | +0.020 [+0.010, +0.030] |" in text
    assert "| 0.5 | -0.010 [-0.020, +0.000] |" in text


def test_sweep_table_lists_each_cell_with_its_interval():
    """``end_to_end_sim``: OAS and oracle minus best-fixed per (recall, accuracy) cell, then the
    intact share per recall and the realized type accuracy per setting."""
    from paper_checks.studies.scripts._sweep import _table

    def cell(oas, acc, share, type_acc):
        gain = {"oas": _g(oas, oas - 0.1, oas + 0.1), "oracle": _g(0.2, 0.1, 0.3)}
        return {
            "gain": gain,
            "accuracy_setting": acc,
            "intact_share": share,
            "type_accuracy": type_acc,
        }

    res = {
        "recalls": [1.0, 0.5],
        "accuracies": [1.0, None],
        "cells": [
            [cell(0.05, 1.0, 1.0, 1.0), cell(0.01, None, 1.0, 0.7)],
            [cell(-0.02, 1.0, 0.3, 1.0), cell(0.0, None, 0.3, 0.7)],
        ],
    }
    text = _table(res)
    assert "| recall | 1 | scenario |" in text
    assert "| 1 | +0.050 [-0.050, +0.150] | +0.010 [-0.090, +0.110] |" in text
    assert "| 0.5 | -0.020 [-0.120, +0.080] | +0.000 [-0.100, +0.100] |" in text
    assert "1: 1.000, 0.5: 0.300" in text and "1: 1.000, scenario: 0.700" in text


def test_recall_table_shows_the_difference_from_bm25_and_the_types():
    from paper_checks.studies.scripts._args import numbers
    from paper_checks.studies.scripts._recall import table

    s = {"k": [1, 4], "mean": [0.2, 0.6], "lower": [0.1, 0.5], "upper": [0.3, 0.7]}
    s["by_type"] = {"single-hop": [0.3, 0.8]}
    d = {**s, "minus_bm25": {"mean": [0.05, -0.1], "lower": [0.0, -0.2], "upper": [0.1, 0.0]}}
    text = table({"session": {"bm25": s, "dense": d}})
    assert "| bm25 | 0.200 [0.100, 0.300] | 0.600 [0.500, 0.700] |" in text
    assert "| dense − bm25 | +0.050 [+0.000, +0.100] | -0.100 [-0.200, +0.000] |" in text
    assert "- dense: single-hop 0.800" in text and "| retriever | k = 1 | k = 4 |" in text
    from retcon.errors import InputError

    assert numbers("--turn-k", "5,10", int) == (5, 10)
    with pytest.raises(InputError, match="--turn-k"):
        numbers("--turn-k", "0,5", int)
    with pytest.raises(InputError, match="--recalls must be comma-separated numbers"):
        numbers("--recalls", "1,x")


def test_append_sections_writes_the_asked_sections_in_order(tmp_path, monkeypatch):
    """magnitude, end to end, robustness (the claims rerun on the audited workspace, its
    statement to ``note``), memory over time: only those asked, in this order."""
    from paper_checks import _run
    from paper_checks.studies import _end_to_end as _endtoend
    from paper_checks.studies import _magnitude, _robustness, _timeline

    calls = []
    monkeypatch.setattr(_magnitude, "append_magnitude", lambda out, ws: calls.append("magnitude"))
    monkeypatch.setattr(
        _endtoend, "append_end_to_end", lambda out, ws: calls.append("e2e") or {"v": 1}
    )
    monkeypatch.setattr(
        _run,
        "run_checks",
        lambda config, *, seed, claims, workspace: (["after", seed, claims], workspace),
    )
    section = {"statement": "holds"}
    monkeypatch.setattr(
        _robustness,
        "robustness",
        lambda a, ws, b, ws_b, *, resampled, ws_resampled: (
            calls.append(("rob", b, ws_b, ws_resampled)) or section
        ),
    )
    monkeypatch.setattr(
        _robustness, "append_robustness", lambda out, s: calls.append("rob-written")
    )
    monkeypatch.setattr(_timeline, "locomo_or_none", lambda data: "conversations")
    monkeypatch.setattr(
        _timeline, "append_timeline", lambda out, conv: calls.append(("time", conv))
    )

    class WS:
        seed = 7
        config = type("C", (), {"data": None})()

    class Audited(tuple):
        config = None

    monkeypatch.setattr(
        _robustness,
        "audited_workspace",
        lambda ws, audit, mode, sample="same": Audited((audit, mode, sample)),
    )
    notes = []
    got = pc.append_sections(
        tmp_path,
        [],
        cast(Any, WS()),
        end_to_end=True,
        locomo_audit="a.json",
        over_time=True,
        claims=["1"],
        note=notes.append,
    )
    assert calls == [
        "e2e",
        # the same sample, then the sample drawn again (a separate, labelled line)
        (
            "rob",
            ["after", 7, ["1"]],
            ("a.json", "drop,cite", "same"),
            ("a.json", "drop,cite", "redrawn"),
        ),
        "rob-written",
        ("time", "conversations"),
    ]
    assert got == {"end_to_end": {"v": 1}, "robustness": section} and notes == ["holds"]
    calls.clear()
    assert pc.append_sections(tmp_path, [], cast(Any, WS()), magnitude=True) == {} and calls == [
        "magnitude"
    ]


def test_format_claims_aligns_the_verdicts():
    oc = {"operating_characteristics": {"false_pass_rate": 0.01, "power": 0.86}, "headline": "h"}
    rows = [
        ClaimResult("1", "c", 0.5, (0.4, 0.6), "-", "x", "PASS", oc),
        ClaimResult("2", "c", None, None, "-", "x", "SKIPPED", {}),
    ]
    a, b = pc.format_claims(rows)
    assert a.startswith("claim 1: PASS     0.500 [0.400, 0.600]")
    assert a.endswith("h  [false PASS / power: 1.0% / 86.0%]")
    assert b.startswith("claim 2: SKIPPED  -") and b.endswith("[false PASS / power: -]")
