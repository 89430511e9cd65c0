"""paper_checks, beyond the paper: end to end. The statements' answers on constructed runs (each
comes out YES, NO and UNDECIDED), the section when LoCoMo is absent, the CLI option, and (slow
tier) the section on a LoCoMo subset."""

from __future__ import annotations

import json

import pytest

import paper_checks as pc
from paper_checks.studies import _end_to_end as E2E
from paper_checks.studies._end_to_end import (
    end_to_end_markdown,
    end_to_end_section,
    end_to_end_verdicts,
)
from retcon.vocab import OPERATORS


def _gain(point, lo, hi):
    """A ``loco_policies`` entry whose overall (last) value is ``point [lo, hi]``."""
    return {"point": [0.0, point], "lower": [0.0, lo], "upper": [0.0, hi]}


def _cross(b, lo, hi, p=1.0):
    return {"crossover_budget": b, "lower": lo, "upper": hi, "p_crossover": p}


def _run(gain, headroom=(0.05, 0.04, 0.06), cross=(500.0, 450.0, 600.0)):
    return {
        "policies": {"gain": {"oas": _gain(*gain), "oracle": _gain(*headroom)}},
        "crossover": {o: _cross(*cross) for o in OPERATORS},
    }


def _answers(results) -> dict:
    return {v["statement"]: v["answer"] for v in end_to_end_verdicts(results)}


def _by_prefix(answers: dict, prefix: str) -> list[str]:
    return [a for s, a in answers.items() if s.startswith(prefix)]


def test_gain_survives_yes_no_undecided():
    """The oracle-protocol gain and its end-to-end counterparts, answered from their intervals
    (MODEL §8: OAS against the best fixed policy)."""
    res = {
        "oracle": _run((0.014, 0.010, 0.019)),
        "e2e-gold-type": _run((-0.011, -0.015, -0.008)),
        "e2e": _run((0.004, -0.002, 0.010)),
    }
    v = end_to_end_verdicts(res)
    assert [x["answer"] for x in v[:3]] == [E2E.YES, E2E.NO, E2E.UNDECIDED]
    assert "-0.011 [-0.015, -0.008]" in v[1]["evidence"]
    res["e2e"] = _run((0.02, 0.01, 0.03))
    assert end_to_end_verdicts(res)[2]["answer"] == E2E.YES
    res["e2e"] = _run((-0.007, -0.010, -0.004))
    assert end_to_end_verdicts(res)[2]["answer"] == E2E.NO


def test_headroom_and_crossover_yes_no_undecided():
    """The oracle selector's headroom and the crossover shift (MODEL §6: crossover budget)."""
    base = {"oracle": _run((0.01, 0.005, 0.02)), "e2e-gold-type": _run((0.01, 0.005, 0.02))}
    later = _answers({**base, "e2e": _run((0, -1, 1), cross=(766.0, 689.0, 842.0))})
    assert set(_by_prefix(later, "the merge crossover")) == {E2E.YES}
    assert _by_prefix(later, "the oracle selector")[0] == E2E.YES
    earlier = _answers(
        {**base, "e2e": _run((0, -1, 1), headroom=(-0.01, -0.02, -0.005), cross=(300, 250, 400))}
    )
    assert set(_by_prefix(earlier, "the abstract crossover")) == {E2E.NO}
    assert _by_prefix(earlier, "the oracle selector")[0] == E2E.NO
    overlap = _answers(
        {**base, "e2e": _run((0, -1, 1), headroom=(0.0, -0.01, 0.01), cross=(550, 500, 700))}
    )
    assert set(_by_prefix(overlap, "the rewrite crossover")) == {E2E.UNDECIDED}
    assert _by_prefix(overlap, "the oracle selector")[0] == E2E.UNDECIDED
    none = _answers({**base, "e2e": _run((0, -1, 1), cross=(None, None, None))})
    assert set(_by_prefix(none, "the merge crossover")) == {E2E.UNDECIDED}
    inf = float("inf")  # an interval end beyond the grid (rootless resamples) compares as such
    unbounded = {**base, "oracle": _run((0.01, 0.005, 0.02), cross=(500.0, 450.0, inf))}
    moved = _answers({**unbounded, "e2e": _run((0, -1, 1), cross=(900.0, 800.0, 1000.0))})
    assert set(_by_prefix(moved, "the merge crossover")) == {E2E.UNDECIDED}
    low = {**base, "oracle": _run((0.01, 0.005, 0.02), cross=(300.0, 0.0, 400.0))}
    moved = _answers({**low, "e2e": _run((0, -1, 1), cross=(900.0, 600.0, inf))})
    assert set(_by_prefix(moved, "the merge crossover")) == {E2E.YES}


def test_markdown_lists_statements_and_table():
    res = {
        "oracle": _run((0.014, 0.010, 0.019)),
        "e2e-gold-type": _run((-0.011, -0.015, -0.008)),
        "e2e": _run((-0.007, -0.010, -0.004)),
    }
    section = {
        "data": "LoCoMo test",
        "n_resamples": 10,
        "verdicts": end_to_end_verdicts(res),
        "table": "| | oracle |\n|---|---|",
        "gap": {"gain_lost_to_retrieval": 0.025, "gain_lost_to_type": -0.004},
    }
    md = end_to_end_markdown(section)
    assert md.startswith("## Beyond the paper: end to end")
    assert "survives end to end (retrieval and predicted type) | **NO** |" in md
    assert "lost to retrieval: +0.025; to type errors: -0.004" in md
    skipped = end_to_end_markdown({"skipped": "LoCoMo data absent"})
    assert "Skipped: LoCoMo data absent." in skipped and "| statement |" not in skipped


def _no_locomo(tmp_path, monkeypatch):
    monkeypatch.setenv("RETCON_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def test_section_without_locomo_is_skipped(tmp_path, monkeypatch):
    _no_locomo(tmp_path, monkeypatch)
    ws = pc.Workspace(pc.CheckConfig(), seed=0)
    section = E2E.append_end_to_end(tmp_path, ws)
    assert "LoCoMo" in section["skipped"]
    assert "Skipped: LoCoMo data absent" in (tmp_path / "REPORT.md").read_text()
    assert "skipped" in json.loads((tmp_path / "end_to_end.json").read_text())


def test_cli_end_to_end_needs_out(capsys):
    from retcon.cli import main

    assert main(["paper-checks", "--claims", "4", "--end-to-end"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--end-to-end" in err and "--out" in err and "\n" not in err


def test_cli_end_to_end_without_locomo_says_skipped(tmp_path, capsys, monkeypatch):
    from retcon.cli import main

    _no_locomo(tmp_path, monkeypatch)
    out = tmp_path / "o"
    assert (
        main(
            [
                "paper-checks",
                "--sim-only",
                "--claims",
                "4",
                "--end-to-end",
                "--json",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    obj = json.loads(capsys.readouterr().out)
    assert "LoCoMo" in obj["end_to_end"]["skipped"]
    assert "## Beyond the paper: end to end" in (out / "REPORT.md").read_text()
    assert (out / "end_to_end.json").is_file()


@pytest.mark.slow
def test_section_on_a_locomo_subset():
    """30 questions (3 per conversation), paired three ways; the same questions in every run."""
    import numpy as np

    try:
        pc.locomo_path(None)
    except pc.DataMissing:
        pytest.skip("LoCoMo file not available")
    ws = pc.Workspace(pc.CheckConfig(locomo_limit=30, n_resamples=50), seed=0)
    section = end_to_end_section(ws)
    assert set(section["results"]) == {"oracle", "e2e-gold-type", "e2e"}
    assert all(v["answer"] in E2E.ANSWERS for v in section["verdicts"])
    ids = {
        n: set(np.asarray(p.instance_id).tolist())
        for n, p in (
            ("oracle", ws.locomo_paired("lexical")),
            ("gold", ws.locomo_end_to_end("gold")[0]),
            ("predicted", ws.locomo_end_to_end("predicted")[0]),
        )
    }
    assert ids["oracle"] == ids["gold"] == ids["predicted"] and len(ids["oracle"]) == 30 * len(
        ws.config.budgets
    )
    r = section["results"]
    assert "retrieval_recall" not in r["oracle"]
    assert 0 < r["e2e"]["retrieval_recall"]["cluster"] < 1
    assert "type_classifier" not in r["e2e-gold-type"]
    assert 0 < r["e2e"]["type_classifier"]["accuracy"] < 1
    gold = ws.locomo_end_to_end("gold")[0]
    assert list(gold.query_type) == list(gold.meta["meta_gold_type"])
    assert section["gap"]["gain_lost_to_retrieval"] == pytest.approx(
        section["gap"]["oas_gain"]["oracle"] - section["gap"]["oas_gain"]["e2e-gold-type"]
    )
