"""Assumption-1 stress test in shared memories (MODEL §5)."""

import json
import re

import jax
import numpy as np
import pytest

import sim
from retcon.cli import main
from retcon.errors import InputError
from tests._cli import error_lines

MEMORIES, SIZE = 64, 4
KNOBS = dict(budget_spillover=(0.0, 0.2, 0.5), rank_spillover=(0.0, 0.2, 0.5))


@pytest.fixture(scope="module")
def result():
    s = sim.load_scenario("locomo-like")
    return s, sim.stress(jax.random.key(0), s, n_memories=MEMORIES, memory_size=SIZE, **KNOBS)


def test_decomposition_exact(result):
    """MODEL §5: dU = C_loc + R_loc + S exactly (float64 equality on the exact grid)."""
    _, r = result
    assert np.array_equal(r.coverage_loc + r.replacement_loc + r.spillover, r.delta)
    assert np.array_equal(r.predicted, r.coverage_loc + r.replacement_loc)


def test_no_spillover_when_knobs_are_zero(result):
    """MODEL §5: with both knobs at 0 foreign records never rank among a query's evidence, so
    Assumption 1 holds and S = 0 exactly; the crossover equals the prediction."""
    _, r = result
    (c0,) = np.flatnonzero((r.budget_spillover == 0) & (r.rank_spillover == 0))
    assert np.all(r.spillover[c0] == 0)
    np.testing.assert_array_equal(r.crossover_budget[c0], r.predicted_crossover[c0])


def test_knob_signs(result):
    """Budget spillover frees tokens (S >= 0 on average: consolidated foreign records are shorter);
    rank spillover displaces evidence (S <= 0: generated records climb over it)."""
    _, r = result
    xb = np.flatnonzero(r.budget_spillover == 0.5)[0]
    xr = np.flatnonzero(r.rank_spillover == 0.5)[0]
    for i in range(3):
        assert r.spillover[xb, i].max() > 3 * r.spillover_se[xb, i][r.spillover[xb, i].argmax()]
        assert r.spillover[xr, i].min() < -3 * r.spillover_se[xr, i][r.spillover[xr, i].argmin()]


@pytest.mark.slow
def test_matches_single_query_kernel_without_spillover():
    """With knobs at 0 and one query per memory, the stress kernel is the single-query kernel's
    model (oracle order, no distractors): the same §6 curve within sampling error."""
    s = sim.load_scenario("single-cluster")
    r = sim.stress(
        jax.random.key(1),
        s,
        n_memories=4096,
        memory_size=1,
        budget_spillover=(0.0,),
        rank_spillover=(0.0,),
    )
    q = sim.simulate(jax.random.key(2), s, 4096)
    z = (r.delta[0] - q.delta) / np.sqrt(r.delta_se[0] ** 2 + q.delta_se**2 + 1e-12)
    assert np.all(np.abs(z) < 5)


def test_stress_cli_writes_phase_diagram_and_json(tmp_path, capsys):
    rc = main(
        [
            "stress",
            "--memories",
            str(MEMORIES),
            "--memory-size",
            str(SIZE),
            "--budget-spillover",
            "0,0.2,0.5",
            "--rank-spillover",
            "0,0.2,0.5",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert (tmp_path / "phase.png").stat().st_size > 0
    assert json.loads((tmp_path / "stress.json").read_text()) == report
    side = json.loads((tmp_path / "sidecar.json").read_text())
    assert side["command"] == "retcon stress" and "retcon_version" in side
    assert len(report["conditions"]) == 5
    op = report["conditions"][0]["operators"]["merge"]
    assert {
        "spillover",
        "spill_ratio",
        "crossover_shift",
        "sign_reversal",
        "predicted_crossover",
    } <= set(op)
    # the table says its baseline world is not retcon simulate's
    assert "is not that of `retcon simulate`" in (tmp_path / "stress.txt").read_text()


def test_stress_bad_knob_exits_2(capsys):
    assert main(["stress", "--budget-spillover", "0,1.5", "--memories", "4"]) == 2
    err = error_lines(capsys.readouterr().err)  # after the line saying what stress will do
    assert len(err) == 1 and "--budget-spillover" in err[0] and "1.5" in err[0]


@pytest.mark.parametrize(
    "knob, values, expected",
    [
        ("budget_spillover", [0.1, float("nan")], "in [0, 1]"),
        ("budget_spillover", [2.0], "in [0, 1]"),
        ("rank_spillover", [float("inf")], "finite and >= 0"),
        ("rank_spillover", [-1.0], "finite and >= 0"),
    ],
)
def test_stress_knob_errors_state_the_knobs_range(knob, values, expected):
    """The budget spillover is a probability (MODEL §5), the rank spillover a nonnegative weight."""
    other = "rank_spillover" if knob == "budget_spillover" else "budget_spillover"
    with pytest.raises(InputError, match=re.escape(expected)) as info:
        sim.stress(
            jax.random.PRNGKey(0), sim.load_scenario("locomo-like"), **{knob: values, other: [0.0]}
        )
    assert knob in str(info.value)


@pytest.mark.parametrize("entry", ["simulate", "simulate_queries", "simulate_instances", "stress"])
def test_a_scenario_that_is_not_one_is_refused_by_name(entry):
    with pytest.raises(InputError, match=r"scenario must be a sim.Scenario.*got dict"):
        extra = () if entry == "stress" else (8,)
        getattr(sim, entry)(jax.random.PRNGKey(0), {"name": "x"}, *extra)


def test_spillover_summary_finite_near_crossover(result):
    """MODEL §5: |S| against the curve's scale stays bounded where |S|/|dU| explodes at B*."""
    _, r = result
    # a curve crossing 0 between two budgets with a tiny dU there: |S|/|dU| is huge at that budget
    nb = r.budgets.size
    delta = np.linspace(0.2, -0.2, nb)
    delta[nb // 2] = 1e-9
    spill = np.full(nb, 0.01)
    bstar = float(r.budgets[nb // 2])
    fake = r._replace(
        delta=delta[None, None, :],
        spillover=spill[None, None, :],
        crossover_budget=np.array([[bstar]]),
    )
    summ = sim.spillover_summary(fake)
    assert summ.relative[0, 0] == pytest.approx(0.01 / 0.2)
    far = (r.budgets <= bstar / 2) | (r.budgets >= 2 * bstar)
    assert summ.away[0, 0] == pytest.approx(np.max(0.01 / np.abs(delta[far])))
    assert summ.away[0, 0] < 1e3 < 0.01 / 1e-9
    # on the real result both are finite wherever dU is not identically 0
    real = sim.spillover_summary(r)
    assert real.relative.shape == r.crossover_budget.shape
    assert np.all(np.isfinite(real.relative[np.abs(r.delta).max(-1) > 0]))
