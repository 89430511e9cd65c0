"""Beyond the paper: memory over time (MODEL §10): the YES / NO / UNDECIDED rules on inputs whose
answer is known, and the option's bad-input contract."""

from typing import NamedTuple

import numpy as np
import pytest

from paper_checks.studies._timeline import timeline_markdown
from paper_checks.studies._timeline_rules import beats, inverted_u
from retcon.cli import main
from retcon.vocab import OPERATORS


def _row(u, half=0.01):
    u = np.asarray(u, float)
    return {
        "operator": "merge",
        "budget": 512.0,
        "utility": u,
        "lower": u - half,
        "upper": u + half,
    }


def test_inverted_u_rule():
    """MODEL §10 (best number of passes k*): an interior peak clear of both ends is YES; a
    monotone curve is NO; a peak inside the noise is UNDECIDED."""
    assert inverted_u({"by_generation": [_row([0.2, 0.5, 0.3])]})["answer"] == "YES"
    assert inverted_u({"by_generation": [_row([0.6, 0.4, 0.1])]})["answer"] == "NO"
    assert inverted_u({"by_generation": [_row([0.30, 0.31, 0.30])]})["answer"] == "UNDECIDED"


class _Result(NamedTuple):
    rows: tuple
    outcome: np.ndarray


def _result(shift, q=200, seed=0):
    rng = np.random.default_rng(seed)
    rows = (("retain-all", None),) + tuple(
        (p, o) for o in OPERATORS for p in ("overflow", "budget-aware")
    )
    out = rng.uniform(0.2, 0.6, (q, len(rows), 2, 5))
    for i, (p, _) in enumerate(rows):
        if p == "budget-aware":
            out[:, i] += shift + rng.normal(0, 0.05, (q, 2, 5))
    return _Result(rows, out)


@pytest.mark.parametrize(("shift", "answer"), [(0.2, "YES"), (-0.2, "NO")])
def test_beats_rule(shift, answer):
    """A policy shifted clearly above (below) its baseline in every cell is YES (NO)."""
    r = _result(shift)
    assert beats(r, "budget-aware", "retain-all", [256.0, 1024.0])["answer"] == answer


def test_beats_rule_undecided_without_difference():
    r = _result(0.0)
    r.outcome[:, 2::2] = r.outcome[:, 0:1]  # budget-aware == retain-all exactly
    assert beats(r, "budget-aware", "retain-all", [256.0, 1024.0])["answer"] == "UNDECIDED"


def test_markdown_names_every_statement():
    cell = {"lower": 0.1, "upper": 0.2}
    sec = {
        "scenario": "locomo-stream",
        "queries": 8,
        "inverted_u": {"answer": "YES", "cells": [{"inverted_u": True}]},
        "geometric_loss": {"answer": "UNDECIDED", "verdicts": {}, "skipped": "no LoCoMo data"},
        "budget_aware_beats_overflow": {"answer": "YES", "cells": [cell]},
        "budget_aware_beats_retain_all": {"answer": "YES", "cells": [cell]},
    }
    md = timeline_markdown(sec)
    assert "## Beyond the paper: memory over time" in md and md.count("| YES |") == 3


def test_timeline_needs_out(capsys):
    try:
        rc = main(["paper-checks", "--over-time"])
    except SystemExit as e:
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--over-time needs --out" in err[0]


@pytest.mark.slow
def test_paper_checks_timeline_end_to_end(tmp_path, monkeypatch):
    """`retcon paper-checks --over-time --out DIR` at small sizes (claim 1 on 30 LoCoMo questions,
    no simulated presets, 20 resamples): the section is appended to REPORT.md with all four
    statements, over_time.json carries each simulation rule's measured error rates, and a rule
    that misses the targets is UNDECIDED."""
    import json
    from pathlib import Path

    from paper_checks import CheckConfig

    small = {"scenarios": (), "n_resamples": 20, "oc_datasets": 10}
    monkeypatch.setattr(CheckConfig, "fast", classmethod(lambda cls, **o: cls(**{**small, **o})))

    locomo = Path(__file__).resolve().parents[2].parent / "shared/data/locomo/locomo10.json"
    if not locomo.is_file():
        pytest.skip("LoCoMo not in ../shared/data/locomo")
    out = tmp_path / "pc"
    argv = ["paper-checks", "--claims", "1", "--limit", "30", "--no-figures", "--over-time"]
    assert main([*argv, "--data", str(locomo), "--out", str(out)]) == 0
    md = (out / "REPORT.md").read_text()
    assert "## Beyond the paper: memory over time" in md and "false YES" in md
    sec = json.loads((out / "over_time.json").read_text())
    for key in ("inverted_u", "budget_aware_beats_overflow", "budget_aware_beats_retain_all"):
        s = sec[key]
        oc = s["operating"]["simultaneous"]
        assert s["answer"] in ("YES", "NO", "UNDECIDED") and 0 <= oc["false_yes"] <= 1
        assert oc["meets_targets"] or s["answer"] == "UNDECIDED"
    assert sec["geometric_loss"]["answer"] in ("YES", "NO", "UNDECIDED")
    assert len(sec["geometric_loss"]["verdicts"]) == 6
