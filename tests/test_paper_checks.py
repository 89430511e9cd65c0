"""paper_checks: verdict logic on constructed numbers (claim holds / fails), curve helpers against
independent references, each claim check on small constructed sources, the report and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import paper_checks as pc
from paper_checks import Estimate as E
from paper_checks import _verdicts as V

# ---------------------------------------------------------------------------------------------
# verdict functions: constructed inputs where the claim holds, fails, or holds in part
# ---------------------------------------------------------------------------------------------


def sig(x, w=0.01):
    return E(x, x - w, x + w)


def wide(x):
    return E(x, x - 1.0, x + 1.0)


def test_combine_pass_fail_partial_skipped():
    assert V.combine({"a": 2, "b": 2}).verdict == pc.PASS
    assert V.combine({"a": 0, "b": 0}).verdict == pc.FAIL
    assert V.combine({"a": 2, "b": 0}).verdict == pc.PARTIAL
    assert V.combine({"a": 1}).verdict == pc.PARTIAL
    assert V.combine({}).verdict == pc.SKIPPED
    # a part not measured can never make a PASS
    v = V.combine({"a": 2}, missing=["locomo:lexical"])
    assert v.verdict == pc.PARTIAL and "locomo:lexical" in v.reason
    assert V.combine({}, missing=["x"]).verdict == pc.SKIPPED


def test_grade_reversal():
    b = [1, 2, 4, 8]
    d = np.array([0.2, 0.1, -0.1, -0.2])
    assert V.grade_reversal(b, d, d - 0.05, d + 0.05) == 2
    assert V.grade_reversal(b, d, d - 0.5, d + 0.5) == 1  # points reverse, bands cover 0
    assert V.grade_reversal(b, -d, -d - 0.05, -d + 0.05) == 0  # retention first, then consolidation
    assert V.grade_reversal(b, d * 0 - 0.1, d * 0 - 0.2, d * 0) == 0
    # order of the budgets does not matter
    assert V.grade_reversal(b[::-1], d[::-1], (d - 0.05)[::-1], (d + 0.05)[::-1]) == 2


def test_verdict_sign_reversal_hold_and_fail():
    assert (
        V.verdict_sign_reversal({"sim": {"merge": 2, "rewrite": 0}, "locomo": {"merge": 2}}).verdict
        == pc.PASS
    )
    assert V.verdict_sign_reversal({"sim": {"merge": 0}, "locomo": {"merge": 0}}).verdict == pc.FAIL
    assert (
        V.verdict_sign_reversal({"sim": {"merge": 2}, "locomo": {"merge": 1}}).verdict == pc.PARTIAL
    )


def test_verdict_tight_gain():
    assert V.verdict_tight_gain({"s": {"merge": sig(0.3), "rewrite": sig(-0.1)}}).verdict == pc.PASS
    assert V.verdict_tight_gain({"s": {"merge": sig(-0.05)}}).verdict == pc.FAIL
    assert V.verdict_tight_gain({"s": {"merge": wide(0.05)}}).verdict == pc.PARTIAL


def test_verdict_loose_retention():
    assert (
        V.verdict_loose_retention({"s": {"merge": sig(0.09), "abstract": sig(0.1)}}).verdict
        == pc.PASS
    )
    # an operator significantly ahead of retention at the loosest budget contradicts the claim
    assert (
        V.verdict_loose_retention({"s": {"merge": sig(0.09), "abstract": sig(-0.1)}}).verdict
        == pc.FAIL
    )
    assert (
        V.verdict_loose_retention({"s": {"merge": sig(0.09), "abstract": wide(0.01)}}).verdict
        == pc.PARTIAL
    )
    assert V.verdict_loose_retention({"s": {"merge": wide(-0.01)}}).verdict == pc.FAIL


def test_verdict_crossover_scaling():
    short, long = sig(100.0, 5), sig(400.0, 5)
    assert V.grade_order(short, long) == 2
    assert V.grade_order(long, short) == 0
    assert V.grade_order(E(100, 50, 500), E(120, 60, 600)) == 1
    assert V.grade_order(E.missing(), long) is None
    # B*/L constant: 100/200 vs 400/800
    spread = V.relative_spread([100, 400], [200, 800])
    assert spread == pytest.approx(1.0)
    assert V.verdict_crossover_scaling({"m": 2}, {"m": spread}).verdict == pc.PASS
    assert (
        V.verdict_crossover_scaling(
            {"m": 2}, {"m": V.relative_spread([100, 400], [200, 200])}
        ).verdict
        == pc.PARTIAL
    )
    assert V.verdict_crossover_scaling({"m": 0}, {"m": 4.0}).verdict == pc.FAIL
    assert V.verdict_crossover_scaling({"m": None}, {}).verdict == pc.FAIL
    assert V.verdict_crossover_scaling({}, {}, missing=["locomo"]).verdict == pc.SKIPPED


def test_verdict_cross_note():
    beats = {"s": {"merge": sig(0.1), "abstract": sig(0.2)}}
    both_ways = {"t1": sig(0.05), "t2": sig(-0.05)}
    assert V.verdict_cross_note(beats, both_ways).verdict == pc.PASS
    # merge ahead everywhere: one operator dominates
    assert V.verdict_cross_note(beats, {"t1": sig(0.05), "t2": sig(0.02)}).verdict == pc.PARTIAL
    lose = {"s": {"merge": sig(-0.1), "abstract": sig(-0.2)}}
    assert V.verdict_cross_note(lose, {"t1": sig(0.05)}).verdict == pc.FAIL


def test_verdict_router_mlp_harm():
    assert V.verdict_router_gain({"s": sig(0.03)}).verdict == pc.PASS
    assert V.verdict_router_gain({"s": sig(-0.03)}).verdict == pc.FAIL
    # MLP: no significant gain anywhere -> holds; significant overall gain -> fails
    assert (
        V.verdict_no_reliable_improvement({"s": wide(0.01)}, {"s": [wide(0.0)]}).verdict == pc.PASS
    )
    assert V.verdict_no_reliable_improvement({"s": sig(0.05)}, {"s": []}).verdict == pc.FAIL
    assert (
        V.verdict_no_reliable_improvement({"s": wide(0.0)}, {"s": [sig(0.1)]}).verdict == pc.PARTIAL
    )
    # harm: lower harm at small cost holds; higher harm or large cost fails
    assert (
        V.verdict_harm_calibration(
            {"u": sig(-0.05)}, {"u": sig(0.01, 0.005)}, max_cost=0.03
        ).verdict
        == pc.PASS
    )
    assert (
        V.verdict_harm_calibration({"u": sig(0.05)}, {"u": sig(0.0)}, max_cost=0.03).verdict
        == pc.FAIL
    )
    # harm lowered at a cost above the bound: holds in part
    assert (
        V.verdict_harm_calibration({"u": sig(-0.05)}, {"u": sig(0.2)}, max_cost=0.03).verdict
        == pc.PARTIAL
    )
    assert (
        V.verdict_harm_calibration({"u": sig(0.0)}, {"u": sig(0.0)}, max_cost=0.03).verdict
        == pc.FAIL
    )
    assert (
        V.verdict_harm_calibration(
            {"u": sig(-0.05)}, {"u": E(0.02, 0.0, 0.05)}, max_cost=0.03
        ).verdict
        == pc.PARTIAL
    )


@given(st.lists(st.floats(-1, 1), min_size=1, max_size=6), st.floats(0.0, 0.5))
def test_grade_positive_is_monotone_in_the_interval(points, w):
    """A wider interval around the same point never grades higher (an invariant, not a golden number)."""
    for p in points:
        assert V.grade_positive(E(p, p - w, p + w)) >= V.grade_positive(
            E(p, p - w - 0.1, p + w + 0.1)
        )


# ---------------------------------------------------------------------------------------------
# curve helpers
# ---------------------------------------------------------------------------------------------


@given(st.floats(0.5, 8.0), st.floats(0.01, 1.0))
def test_crossover_from_curve_recovers_a_log_linear_root(log_root, slope):
    """dU linear in log B with root B0: the log-interpolated root is exact (MODEL §6.4)."""
    b = np.geomspace(1.0, np.exp(9.0), 13)
    d = slope * (log_root - np.log(b))
    root, status = pc.crossover_from_curve(b, d)
    assert status == "unique"
    assert root == pytest.approx(np.exp(log_root), rel=1e-9)


def test_crossover_status_none_and_multiple():
    b = np.array([1.0, 2, 4, 8, 16])
    assert pc.crossover_from_curve(b, -np.ones(5))[1] == "none"
    assert pc.crossover_from_curve(b, np.ones(5))[1] == "none"
    root, status = pc.crossover_from_curve(b, [1, -1, 1, -1, -1])
    assert status == "multiple" and 1 < root < 2


def test_band_crossover_brackets_the_point():
    b = np.geomspace(10, 10_000, 9)
    d = 0.1 * (np.log(500) - np.log(b))
    e = pc.band_crossover(b, d, d - 0.05, d + 0.05)
    assert e.lower <= e.point <= e.upper
    assert e.lower < 500 < e.upper
    assert not pc.band_crossover(b, -np.abs(d) - 0.1, d, d).defined


def synthetic_table(
    n_q=120, n_groups=8, budgets=(32, 64, 128, 256, 512, 1024, 2048), seed=0, scale=1.0
):
    """Single-cluster reader outcomes (MODEL §6): raw fits iff L <= B; op fits iff rho L <= B."""
    rng = np.random.default_rng(seed)
    L = scale * rng.lognormal(np.log(300), 0.8, n_q)
    qtype = np.array(["single-hop", "multi-hop", "temporal", "open-domain"])[
        rng.integers(0, 4, n_q)
    ]
    rho = {"merge": 0.35, "abstract": 0.15, "rewrite": 0.7}
    phi = {"merge": 0.85, "abstract": 0.7, "rewrite": 0.95}
    rows = []
    for b in budgets:
        u = rng.random((n_q, 4))
        p_ret = np.where(b >= L, 0.9, 0.1)
        ys = [u[:, 0] < p_ret]
        for k, op in enumerate(("merge", "abstract", "rewrite"), 1):
            p = np.where(b >= L, 0.9 * phi[op], np.where(rho[op] * L <= b, 0.9 * phi[op], 0.1))
            ys.append(u[:, k] < p)
        rows.append((np.full(n_q, b), np.stack(ys, 1).astype(float)))
    budget = np.concatenate([r[0] for r in rows])
    y = np.concatenate([r[1] for r in rows])
    reps = len(budgets)
    Lr = np.tile(L, reps)
    return pc.make_table(
        group=np.tile(np.arange(n_q) % n_groups, reps),
        budget=budget,
        y=y,
        query_type=np.tile(qtype, reps),
        evidence_length=Lr,
        raw_grounded=(Lr <= budget).astype(float),
        query_id=np.tile(np.arange(n_q), reps),
    )


def test_curves_from_table_matches_a_python_loop():
    """dU, coverage, replacement per budget equal plain means; C + R = dU (MODEL §4)."""
    import jax

    t = synthetic_table()
    s = pc.curves_from_table(jax.random.PRNGKey(0), t, name="syn", data="syn", n_resamples=200)
    for k, op in enumerate(("merge", "abstract", "rewrite"), 1):
        c = s.operators[op]
        for j, b in enumerate(c.budgets):
            rows = t.budget == b
            diff = t.y[rows, k] - t.y[rows, 0]
            assert c.delta[j] == pytest.approx(diff.mean(), abs=1e-12)
            assert c.coverage[j] == pytest.approx(
                (diff * (1 - t.raw_grounded[rows])).mean(), abs=1e-12
            )
            assert c.lower[j] <= c.delta[j] + 1e-6 <= c.upper[j] + 2e-6
        np.testing.assert_allclose(c.coverage + c.replacement, c.delta, atol=1e-12)
    assert s.evidence_length == pytest.approx(np.mean(t.evidence_length))


def test_make_table_rejects_bad_input():
    with pytest.raises(ValueError, match="y must have shape"):
        pc.make_table(group=[0], budget=[1.0], y=[[0.5, 0.5]])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        pc.make_table(group=[0], budget=[1.0], y=[[0.5, 0.5, 2.0, 0.1]])
    with pytest.raises(ValueError, match="positive"):
        pc.make_table(group=[0], budget=[0.0], y=[[0.5, 0.5, 0.5, 0.1]])


def test_check_config_validates():
    with pytest.raises(ValueError, match="CheckConfig.sim_queries"):
        pc.CheckConfig(sim_queries=3)
    with pytest.raises(ValueError, match="CheckConfig.alpha"):
        pc.CheckConfig(alpha=1.5)
    with pytest.raises(ValueError, match="TheoryModel.compress_ratio"):
        pc.TheoryModel(compress_ratio={"merge": 1.3}, fidelity={"merge": 0.9})
    assert pc.CheckConfig.full_scale().full and pc.CheckConfig.full_scale().locomo_limit is None


def test_estimate_fmt_and_strict_json():
    assert E(0.1234, 0.1, 0.15).fmt() == "0.123 [0.100, 0.150]"
    assert E(833.2, 393.0, float("inf")).fmt() == "833 [393, inf]"
    assert E.exact(1291.6).fmt() == "1292"
    assert E.missing().fmt() == "n/a"
    from paper_checks._report import plain

    obj = plain({"e": E(1.0, float("nan"), float("inf")), "a": np.array([1.0, np.nan])})
    assert obj == {"e": {"point": 1.0, "lower": None, "upper": None}, "a": [1.0, None]}
    json.dumps(obj, allow_nan=False)


# ---------------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------------


def test_cli_bad_options_exit_2_with_one_line(tmp_path, capsys):
    from retcon.cli import main

    assert (
        main(["paper-checks", "--data", str(tmp_path / "none.json"), "--out", str(tmp_path)]) == 2
    )
    err = capsys.readouterr().err.strip()
    assert "--data" in err and "\n" not in err
    assert main(["paper-checks", "--claims", "12", "--out", str(tmp_path)]) == 2
    assert "--claims" in capsys.readouterr().err
    assert not (tmp_path / "REPORT.md").exists()


def test_cli_without_locomo_skips_the_locomo_claim(tmp_path, capsys, monkeypatch):
    """No --data and an empty cache: claim 4 (LoCoMo only) is SKIPPED, never passed."""
    from retcon.cli import main

    monkeypatch.setenv("RETCON_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert main(["paper-checks", "--claims", "4", "--json", "--out", str(tmp_path / "o")]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["verdicts"] == {"4": "SKIPPED"}
    assert "LoCoMo" in obj["claims"][0]["details"]["reason"]
    md = (tmp_path / "o" / "REPORT.md").read_text()
    assert "| 4 |" in md and "**SKIPPED**" in md


def test_claim4_on_real_locomo_subset():
    """The real LoCoMo path at small size: two readers, 20 questions (2 per conversation)."""
    try:
        pc.locomo_path(None)
    except pc.DataMissing:
        pytest.skip("LoCoMo file not available")
    ws = pc.Workspace(pc.CheckConfig(locomo_limit=20, n_resamples=100), seed=0)
    r = pc.check_second_reader(ws)
    assert r.verdict in pc.VERDICTS and r.verdict != pc.SKIPPED
    assert set(r.details["grades"]) == {"locomo:lexical", "locomo:sentence"}
    t = pc.table_from_paired(ws.locomo_paired("lexical"))
    assert len(np.unique(t.group)) == 10  # the subset keeps every conversation as a group
    # verdict recomputed from the reported grades of the second reader: the same
    assert (
        V.verdict_sign_reversal({"locomo:sentence": r.details["grades"]["locomo:sentence"]}).verdict
        == r.verdict
    )


@pytest.mark.slow
def test_every_claim_end_to_end_at_tiny_scale(tmp_path):
    """All nine checks through the real packages (theory, sim, oas, LoCoMo) at tiny sizes."""
    cfg = pc.CheckConfig(sim_queries=512, sim_instances=400, locomo_limit=30, n_resamples=100)
    results, ws = pc.run_checks(cfg, seed=1)
    assert [r.claim_id for r in results] == [str(i) for i in range(1, 10)]
    for r in results:
        assert r.verdict in pc.VERDICTS
        if r.ci is not None:
            assert r.ci[0] <= r.measured + 1e-9 and r.measured <= r.ci[1] + 1e-9
    pc.write_run(tmp_path, results, ws)
    assert json.loads((tmp_path / "report.json").read_text())["verdicts"]


def test_public_names_import():
    import experiments

    for name in pc.__all__:
        assert getattr(pc, name) is not None, name
    for name in experiments.__all__:
        assert getattr(experiments, name) is not None
