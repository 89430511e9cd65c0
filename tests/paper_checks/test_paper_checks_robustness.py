"""``retcon paper-checks --locomo-audit FILE``: the robustness section (paper_checks._robustness)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from paper_checks import CheckConfig
from paper_checks._robustness import robustness, robustness_markdown
from paper_checks._sources import locomo_conversations
from paper_checks._types import ClaimResult
from retcon.cli import main
from tests._data import LOCOMO_PATH, needs_locomo

AUDIT = (
    Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo-audit" / "errors.json"
)
needs_audit = pytest.mark.skipif(
    not AUDIT.is_file(), reason=f"the LoCoMo audit not found ({AUDIT})"
)


def _claim(cid, verdict, measured, ci=(0.0, 1.0)):
    return ClaimResult(cid, "c", measured, ci, "-", "locomo", verdict, {})


def _ws(audit=None):
    return SimpleNamespace(
        config=SimpleNamespace(readers=(), locomo_audit=audit, audit_mode="drop,cite")
    )


def test_section_names_the_verdicts_that_change():
    before = [_claim("1", "PASS", 0.2), _claim("2", "PASS", 0.5)]
    same = robustness(
        before, _ws(), [_claim("1", "PASS", 0.25), _claim("2", "PASS", 0.4)], _ws("a")
    )
    assert not same["verdicts_depend_on_annotation_errors"]
    assert "No verdict depends" in same["statement"]
    assert [c["change"] for c in same["claims"]] == pytest.approx([0.05, -0.1])
    flip = robustness(before, _ws(), [_claim("1", "PASS", 0.2), _claim("2", "FAIL", 0.1)], _ws("a"))
    assert flip["verdicts_depend_on_annotation_errors"]
    assert "claim 2 PASS -> FAIL" in flip["statement"]
    md = robustness_markdown(flip)
    assert "| 2 | PASS | FAIL |" in md and "claim 2 PASS -> FAIL" in md


@needs_locomo
@needs_audit
def test_the_audited_config_pairs_the_audited_questions():
    plain = locomo_conversations(CheckConfig.fast(), LOCOMO_PATH)
    audited = locomo_conversations(CheckConfig.fast(locomo_audit=str(AUDIT)), LOCOMO_PATH)
    n = sum(len(c.queries) for c in plain)
    assert sum(len(c.queries) for c in audited) == n - 99
    ev = {q.query_id: q.evidence_ids for c in audited for q in c.queries}
    assert ev["conv-26/q1"] == ("D1:14",)  # locomo_0_qa1, a wrong citation


@needs_audit
def test_cli_refuses_bad_audit_options(tmp_path, capsys):
    base = ["paper-checks", "--no-figures"]
    for argv, needle in (
        ([*base, "--locomo-audit", str(AUDIT)], "needs --out"),
        ([*base, "--audit-mode", "drop"], "--audit-mode needs --locomo-audit"),
        ([*base, "--out", str(tmp_path / "o"), "--locomo-audit", str(tmp_path / "x")], "no such"),
        (
            [
                *base,
                "--out",
                str(tmp_path / "o"),
                "--locomo-audit",
                str(AUDIT),
                "--audit-mode",
                "x",
            ],
            "unknown mode 'x'",
        ),
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and needle in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
@needs_locomo
@needs_audit
def test_paper_checks_writes_the_robustness_section(tmp_path, capsys):
    out = tmp_path / "pc"
    argv = ["paper-checks", "--data", str(LOCOMO_PATH), "--locomo-audit", str(AUDIT)]
    argv += ["--out", str(out), "--no-figures", "--claims", "1,2", "--limit", "60"]
    assert main(argv) == 0
    capsys.readouterr()
    section = json.loads((out / "robustness.json").read_text(encoding="utf-8"))
    assert [c["claim_id"] for c in section["claims"]] == ["1", "2"]
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["robustness"] == section
    assert section["crossovers"] and all(x["audited"] for x in section["crossovers"])
    text = (out / "REPORT.md").read_text(encoding="utf-8")
    assert "## Robustness: LoCoMo and the audited LoCoMo" in text
    assert section["statement"] in text
