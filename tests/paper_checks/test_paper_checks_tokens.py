"""Tokens beside accuracy in ``retcon paper-checks`` (issue 49 item 2): ``--json``, report.json
and REPORT.md carry, per real-data source, ``oas.token_table`` of the rows it grades: context
tokens per question (packed under the budget, MODEL §2), generated tokens, and the gain over
retention per 1,000 of each with intervals over conversations (MODEL §8)."""

from __future__ import annotations

import json
import math

import numpy as np

import oas
import paper_checks as pc
from paper_checks.report._report import tokens_json, tokens_markdown
from retcon.vocab import ACTIONS
from tests.oas.test_tokens import GEN, rows


def _nulls(obj):
    """NaN as None, as JSON writes it (an independent check of the report's conversion)."""
    if isinstance(obj, dict):
        return {k: _nulls(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_nulls(v) for v in obj]
    if isinstance(obj, float) and math.isnan(obj):
        return None
    return obj


def test_paper_checks_json_and_report_carry_the_token_table(tmp_path, capsys):
    """Claim 5 only (the file has no cluster_tokens: INCONCLUSIVE before any measurement), so
    the run is quick; the tokens block does not depend on which claims run."""
    from retcon.cli import main

    path = tmp_path / "mine.jsonl"
    oas.write_paired(path, rows(groups=4, per=3))
    out = tmp_path / "out"
    args = ["paper-checks", "--paired", str(path), "--claims", "5", "--json", "--no-figures"]
    assert main([*args, "--out", str(out)]) == 0
    obj = json.loads(capsys.readouterr().out)
    block = obj["tokens"]["paired:mine"]["rows"]
    expected = _nulls(oas.token_json(oas.token_table(oas.read_paired(path))))
    assert block == expected
    assert {(r["action"], r["budget"]) for r in block} == {
        (a, b) for a in ACTIONS for b in (100.0, 1000.0)
    }
    for r in block:
        assert r["groups"] == 4 and math.isfinite(r["context_tokens"])
        if r["action"] == "ret":
            assert r["generated_tokens"] == 0.0 and r["gain_per_1k_context"] is None
            continue
        assert r["generated_tokens"] == GEN[r["action"]]
        for key in ("gain_per_1k_context", "gain_per_1k_generated"):
            lo, hi = r[f"{key}_ci"]
            assert all(math.isfinite(v) for v in (r[key], lo, hi)) and lo <= r[key] <= hi, r
    # report.json is the same object; REPORT.md has the table under the source's name
    assert json.loads((out / "report.json").read_text())["tokens"] == obj["tokens"]
    md = (out / "REPORT.md").read_text()
    assert "## Tokens beside accuracy: `paired:mine`" in md
    assert "| 1000 | merge |" in md


def test_a_source_without_evidence_structure_is_skipped_with_its_reason():
    """No ``evidence_structure``: context tokens unknown, so the source says why instead of a
    table of NaN; a source with it gets ``oas.token_table`` of its rows, computed once."""
    bare = rows(groups=2, per=1)
    for r in bare:
        del r["evidence_structure"]
    ws = pc.Workspace(pc.CheckConfig.fast())
    ws.provide("locomo:lexical", oas.paired_from_rows(bare))
    with_structure = oas.paired_from_rows(rows(groups=3, per=2))
    ws.provide("locomo:sentence", with_structure)
    tables = ws.token_tables()
    assert "evidence_structure" in tables["locomo:lexical"]
    measured = tables["locomo:sentence"]
    assert isinstance(measured, list)
    expected = _nulls(oas.token_json(oas.token_table(with_structure)))
    assert _nulls(oas.token_json(measured)) == expected
    ws.token_tables()  # memoized: computed once per source
    assert [s for s, _ in ws.stages].count("tokens:locomo:sentence") == 1
    block = tokens_json(tables)
    assert set(block["locomo:lexical"]) == {"skipped"}
    assert block["locomo:sentence"]["rows"] == expected
    md = tokens_markdown(tables)
    assert "Not measured: the rows carry no evidence_structure" in md
    assert np.isfinite(measured[1].gain_per_1k_generated)
