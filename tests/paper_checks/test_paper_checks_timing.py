"""Where a paper-checks run's time goes: ``stage_timings`` (issue 34).

The clock is a fake (``time.perf_counter`` patched to a counter the test advances), so the
figures are exact and no assertion depends on how fast the machine is.
"""

from __future__ import annotations

import json

import pytest

import paper_checks as pc
from paper_checks import _run
from paper_checks._types import SKIPPED, ClaimResult


class Clock:
    """A ``perf_counter`` that moves only when the test says so."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr("time.perf_counter", c)
    return c


def _skipped(cid: str) -> ClaimResult:
    return ClaimResult(cid, "claim", None, None, "-", "none", SKIPPED, {"summary": "skipped"})


def test_a_stage_is_timed_without_the_stages_nested_in_it(clock):
    ws = pc.Workspace(pc.CheckConfig.fast(), seed=0)

    def inner():
        clock.advance(2.0)
        return "inner"

    def outer():
        clock.advance(1.0)
        value = ws._get("inner", inner)
        clock.advance(0.5)
        return value

    assert ws._get("outer", outer) == "inner"
    assert ws._get("outer", outer) == "inner"  # memoized: no second stage
    assert pc.stage_timings(ws) == [("inner", 2.0), ("outer", 1.5)]
    assert ws.timings == {"inner": 2.0, "outer": 3.5}  # the progress line's figure: all of it


def test_a_source_that_raises_is_still_timed(clock):
    ws = pc.Workspace(pc.CheckConfig.fast(), seed=0)

    def missing():
        clock.advance(3.0)
        raise pc.DataMissing("absent")

    with pytest.raises(pc.DataMissing):
        ws._get("locomo:lexical", missing)
    assert pc.stage_timings(ws) == [("locomo:lexical", 3.0)]


def test_run_checks_times_each_claim_and_its_sources_apart(clock, monkeypatch, tmp_path):
    def claim(cid: str, seconds: float, source_seconds: float):
        def check(ws):
            clock.advance(seconds)

            def make():
                clock.advance(source_seconds)
                return 1

            ws._get("shared", make)  # built by the first claim that asks, then memoized
            return _skipped(cid)

        return check

    monkeypatch.setattr(_run, "CHECKS", {"1": claim("1", 1.0, 4.0), "2": claim("2", 0.25, 9.0)})
    results, ws = pc.run_checks(pc.CheckConfig.fast(), seed=0)
    assert [r.claim_id for r in results] == ["1", "2"]
    stages = pc.stage_timings(ws)
    assert [s for s, _ in stages] == [
        "shared",
        "claim 1",
        "operating characteristics 1",
        "claim 2",
        "operating characteristics 2",
    ]
    seconds = dict(stages)
    assert seconds["shared"] == 4.0 and seconds["claim 1"] == 1.0 and seconds["claim 2"] == 0.25
    assert seconds["operating characteristics 1"] == 0.0
    assert all(isinstance(t, float) for _, t in stages)

    # same seed, same bytes: the timings never reach report.json
    pc.write_run(tmp_path / "a", results, ws, figures=False)
    clock.advance(123.0)
    ws.stages.append(("claim 1", 77.0))
    pc.write_run(tmp_path / "b", results, ws, figures=False)
    a = (tmp_path / "a" / "report.json").read_bytes()
    assert a == (tmp_path / "b" / "report.json").read_bytes()
    assert "77.0" not in a.decode() and "timing" not in json.loads(a)


@pytest.mark.slow
def test_cli_timing_only_with_the_flag(tmp_path, monkeypatch, capsys):
    """Issue 34: ``paper-checks --timing --json`` carries the stages and their seconds; without
    the flag the JSON has no ``timing`` (the same seed gives the same bytes)."""
    import json

    from retcon.cli import main

    monkeypatch.setenv("RETCON_DATA_DIR", str(tmp_path / "none"))
    argv = ["-q", "paper-checks", "--sim-only", "--claims", "3", "--no-figures", "--json"]
    assert main([*argv, "--timing"]) == 0
    timed = json.loads(capsys.readouterr().out)
    stages = {s["stage"]: s["seconds"] for s in timed["timing"]["stages"]}
    assert "claim 3" in stages and any(k.startswith("sim-paired:") for k in stages)
    assert all(v >= 0 for v in stages.values())
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "timing" not in plain and {k: v for k, v in timed.items() if k != "timing"} == plain
