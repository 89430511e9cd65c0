"""``retcon paper-checks --locomo-audit FILE``: the robustness section (paper_checks.studies._robustness)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from paper_checks import CheckConfig
from paper_checks._types import ClaimResult
from paper_checks.claims._sources import locomo_conversations
from paper_checks.studies._robustness import robustness, robustness_markdown
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
    assert "no verdict depends" in same["statement"] and "same sample" in same["statement"]
    assert [c["change"] for c in same["claims"]] == pytest.approx([0.05, -0.1])
    flip = robustness(before, _ws(), [_claim("1", "PASS", 0.2), _claim("2", "FAIL", 0.1)], _ws("a"))
    assert flip["verdicts_depend_on_annotation_errors"]
    assert "claim 2 PASS -> FAIL" in flip["statement"]
    md = robustness_markdown(flip)
    assert "| 2 | PASS | FAIL |" in md and "claim 2 PASS -> FAIL" in md


def test_the_resampled_line_is_separate_and_computed_from_its_rows():
    before = [_claim("1", "PASS", 0.2), _claim("6", "FAIL", 0.1)]
    same = [_claim("1", "PASS", 0.21), _claim("6", "FAIL", 0.1)]
    redrawn = [_claim("1", "INCONCLUSIVE", 0.1), _claim("6", "INCONCLUSIVE", 0.0)]
    sec = robustness(before, _ws(), same, _ws("a"), resampled=redrawn)
    assert not sec["verdicts_depend_on_annotation_errors"]
    assert "no verdict depends" in sec["statement"]
    res = sec["resampled"]
    assert [c["verdict_changed"] for c in res["claims"]] == [True, True]
    # every claim that changes is named, from the rows
    for c in res["claims"]:
        assert f"claim {c['claim_id']} {c['verdict']} -> {c['verdict_audited']}" in res["statement"]
    assert res["statement"].startswith("On a sample drawn again")
    md = robustness_markdown(sec)
    assert "Resampled (a separate line" in md and "| 6 | FAIL | INCONCLUSIVE |" in md


@pytest.mark.slow  # four pairings of the 75-question sample: about 30 s
@needs_locomo
@needs_audit
def test_the_audited_run_grades_the_same_sample_less_the_dropped():
    """Under --design paper the audited run grades the released file's 75-question sample less
    the questions the audit drops; redrawn, it grades 75 again, conv-44/q20 included (its only
    question in conv-44: kept without a chance rate, no longer left out)."""
    import numpy as np

    from paper_checks.claims._sources import _locomo_paired

    def ids(**kw):
        cfg = CheckConfig.fast(data=str(LOCOMO_PATH), design="paper", **kw)
        p = _locomo_paired(cfg, "lexical", chance=True)
        return set(np.asarray(p.query_id).astype(str).tolist())

    plain = ids()
    same = ids(locomo_audit=str(AUDIT), audit_mode="drop,cite")
    redrawn = ids(locomo_audit=str(AUDIT), audit_mode="drop,cite", audit_sample="redrawn")
    cite = ids(locomo_audit=str(AUDIT), audit_mode="cite")
    assert len(plain) == 75 and same < plain and len(same) == 73 and cite == plain
    assert len(redrawn) == 75 and "conv-44/q20" in redrawn and len(redrawn & plain) < 20


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
    joint = section["crossovers"][0]["change_joint"]  # lexical/merge: crosses in both runs
    assert section["crossovers"][0]["curve"] == "lexical/merge" and joint["share_defined"] >= 0.95
    assert joint["lower"] <= joint["change"] <= joint["upper"]
    text = (out / "REPORT.md").read_text(encoding="utf-8")
    assert "## Robustness: LoCoMo and the audited LoCoMo" in text
    assert section["statement"] in text


def _curves(groups: int, cross_at: float, budgets, noise: float, seed: int):
    """(G, 3, nB) per-group dU curves crossing zero near ``cross_at`` (log-linear), with noise."""
    import numpy as np

    rng = np.random.default_rng(seed)
    base = -np.log(np.asarray(budgets, float) / cross_at)  # + below cross_at, - above
    return base[None, None, :] + noise * rng.standard_normal((groups, 3, len(budgets)))


@pytest.mark.slow  # 3 s of bootstrap crossovers
def test_joint_crossover_change_is_paired():
    import jax
    import numpy as np

    from paper_checks.studies._robustness import joint_crossover_change

    budgets = np.array([16.0, 32.0, 64.0, 128.0, 256.0])
    groups = np.array([f"g{i}" for i in range(10)])
    x = _curves(10, 60.0, budgets, 0.3, 0)
    key = jax.random.PRNGKey(0)
    # the same data under another group order: no change, and every replicate agrees exactly
    order = np.arange(10)[::-1]
    same = joint_crossover_change(key, budgets, groups, x, groups[order], x[order], n_resamples=200)
    for v in same.values():
        assert v["change"] == 0.0 and v["lower"] == 0.0 and v["upper"] == 0.0
        assert v["n_groups"] == 10 and v["share_defined"] > 0.9
    # every curve moved right by a factor 2 (crossover ~60 -> ~120): the joint interval is
    # positive and narrower than the two separate intervals would allow
    moved = _curves(10, 120.0, budgets, 0.3, 0)
    got = joint_crossover_change(key, budgets, groups, x, groups, moved, n_resamples=200)
    for v in got.values():
        assert v["change"] > 0 and 0 < v["lower"] <= v["change"] <= v["upper"]
    # curves that mostly never cross: too few replicates cross for an interval
    flat = np.abs(_curves(10, 60.0, budgets, 0.3, 1)) + 0.5
    none = joint_crossover_change(key, budgets, groups, flat, groups, x, n_resamples=100)
    for v in none.values():
        assert v["change"] is None and v["lower"] is None and v["share_defined"] < 0.95
    # only the groups both runs have are compared
    part = joint_crossover_change(key, budgets, groups, x, groups[:7], x[:7], n_resamples=50)
    assert all(v["n_groups"] == 7 for v in part.values())


def test_joint_mean_change_pairs_the_conversations():
    import jax
    import numpy as np

    from paper_checks.studies._robustness import joint_mean_change

    rng = np.random.default_rng(1)
    groups = np.repeat([f"c{i}" for i in range(10)], 8)
    v = rng.integers(-1, 2, size=groups.size).astype(float)
    key = jax.random.PRNGKey(3)
    assert joint_mean_change(key, groups, v, groups[::-1], v[::-1], n_resamples=100) == (
        0.0,
        0.0,
        0.0,
    )
    # one conversation's rows all become +1 after the audit: a positive change, paired interval
    w = v.copy()
    w[groups == "c0"] = 1.0
    change, lo, hi = joint_mean_change(key, groups, v, groups, w, n_resamples=400)
    assert change == pytest.approx((w.sum() - v.sum()) / v.size)
    assert change is not None and lo is not None and hi is not None
    assert change > 0 and 0.0 <= lo <= change <= hi
    # a question dropped by the audit: the means are over each run's own rows
    change, _, _ = joint_mean_change(key, groups, v, groups[1:], v[1:], n_resamples=50)
    assert change == pytest.approx(v[1:].mean() - v.mean())
    assert joint_mean_change(key, groups, v, np.array([]), np.array([])) == (None, None, None)


def test_table_4_rows_in_the_markdown():
    section = robustness([_claim("1", "PASS", 0.2)], _ws(), [_claim("1", "PASS", 0.2)], _ws("a"))
    cell = {"operator": "merge", "budget": 16, "paper": 0.1, "ours": 0.05, "ours_audited": 0.07}
    cell.update(interval=[0.0, 0.1], interval_audited=[0.01, 0.13], change=0.02)
    cell.update(change_joint=[-0.01, 0.05], n=75, n_audited=75)
    md = robustness_markdown({**section, "table_4": [cell]})
    assert "| merge | 16 | +0.100 | +0.050 [0.000, 0.100] | +0.070 [0.010, 0.130] |" in md
    assert "+0.020 [-0.010, +0.050] |" in md


@pytest.mark.slow
@needs_locomo
@needs_audit
def test_table_4_under_the_paper_design_on_both_annotations():
    from paper_checks.claims._sources import Workspace
    from paper_checks.studies._robustness import _table_4_change, audited_workspace

    config = CheckConfig.fast(design="paper", readers=("lexical",), data=str(LOCOMO_PATH))
    ws = Workspace(config, 0)
    cells = _table_4_change(ws, audited_workspace(ws, AUDIT))
    assert cells is not None and len(cells) == 12  # 3 operators x 4 budgets
    assert {c["budget"] for c in cells} == {16, 32, 64, 128}
    for c in cells:
        # the paper's 75-question sample, drawn on each (a question may lack a budget's row)
        assert 70 <= c["n"] <= 75 and 70 <= c["n_audited"] <= 75
        assert c["change"] == pytest.approx(c["ours_audited"] - c["ours"], abs=1e-6)
        lo, hi = c["change_joint"]
        assert lo is not None and hi is not None and lo <= hi
    print("\n".join(robustness_markdown({**_empty_section(), "table_4": cells}).splitlines()[-14:]))


def _empty_section():
    return robustness([], _ws(), [], _ws("a"))
