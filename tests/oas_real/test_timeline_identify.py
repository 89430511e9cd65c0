"""Prediction over time (MODEL §10; issue 21 item 4): the stream utility against passes, the
pass-chain fit, the held-out comparison, `retcon timeline identify` and its bad input."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import theory
from oas.real._timeline_identify import compare_held_out, fit_pass_chain, predict_timeline
from retcon.cli import main
from retcon.errors import InputError

LOCOMO = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo" / "locomo10.json"


def test_k0_and_k1_are_stream_curve():
    """MODEL §10: with H10's chain, k = 0 is retain-all and k = 1 one pass of every unit."""
    d = theory.make_length_dist("gamma", shape=2.5, scale=300.0)
    b = [512.0, 2048.0]
    c = theory.stream_curve(d, b, 12, compress_ratio=0.3, fidelity=0.7, acc_raw=0.8, acc_guess=0.1)
    s, r = theory.h10_chain(0.3, 0.7, 3)
    u = theory.stream_generation_utility(d, b, 12, support=s, ratio=r, acc_raw=0.8, acc_guess=0.1)
    np.testing.assert_allclose(u[:, 0], c.u_ret[:, -1], rtol=1e-12)
    np.testing.assert_allclose(u[:, 1], c.u_op[:, -1], rtol=1e-12)


def test_point_mass_counts_fitting_ages():
    """MODEL §10, point mass ``l``: U_t(B, k) = S_k #{n <= t: n R_k l <= B} / t (uniform ages)."""
    d = theory.make_length_dist("point", length=100.0)
    support = np.array([1.0, 0.8, 0.5, 0.45])
    ratio = np.array([1.0, 0.4, 0.2, 0.15])
    t, b = 10, 350.0
    u = theory.stream_generation_utility(d, [b], t, support=support, ratio=ratio)[0]
    ref = [s * sum(n * r * 100.0 <= b for n in range(1, t + 1)) / t for s, r in zip(support, ratio)]
    np.testing.assert_allclose(u, ref, rtol=1e-12)
    best = theory.stream_best_generation(d, [b], t, support=support, ratio=ratio)
    assert best.best_generation[0] == int(np.argmax(ref))


@settings(max_examples=15, deadline=None)
@given(
    scale=st.floats(0.25, 4.0),
    budget=st.floats(100.0, 5000.0),
    phi=st.floats(0.5, 0.95),
    rho=st.floats(0.1, 0.8),
)
def test_best_generation_is_scale_free(scale, budget, phi, rho):
    """MODEL §10 (scale): multiplying every length and the budget by c leaves k* unchanged."""
    s, r = theory.h10_chain(rho, phi, 5)
    d = theory.make_length_dist("exponential", mean=300.0)
    k1 = theory.stream_best_generation(d, [budget], 8, support=s, ratio=r).best_generation
    k2 = theory.stream_best_generation(
        d.scaled(scale), [budget * scale], 8, support=s, ratio=r
    ).best_generation
    assert k1[0] == k2[0]


def test_chain_bad_input():
    d = theory.make_length_dist("point", length=100.0)
    with pytest.raises(InputError, match="same length"):
        theory.stream_generation_utility(d, [100.0], 3, support=[1.0, 0.5], ratio=[1.0])
    with pytest.raises(InputError, match=r"support must lie in \[0, 1\]"):
        theory.stream_generation_utility(d, [100.0], 3, support=[1.0, 1.5], ratio=[1.0, 0.5])
    with pytest.raises(InputError, match="time must be an integer"):
        theory.stream_generation_utility(d, [100.0], 0, support=[1.0], ratio=[1.0])


def test_fit_pass_chain_recovers_a_geometric_chain():
    """H10 data (S_k = phi^k exactly, R_k = rho^k) give back phi and rho."""
    k = np.arange(5)
    n = np.array([1000.0, 2000.0])
    survived = np.round(n[:, None] * 0.6**k)
    lengths = np.array([800.0, 600.0])[:, None] * 0.3**k
    f = fit_pass_chain(survived, n, lengths)
    assert f.phi == pytest.approx(0.6, abs=2e-3)
    assert f.rho == pytest.approx(0.3, rel=1e-9)
    np.testing.assert_allclose(f.support, survived.sum(0) / n.sum())
    with pytest.raises(InputError, match="fit_pass_chain"):
        fit_pass_chain(survived[:, :1], n, lengths[:, :1])


def test_predicted_crossover_is_the_point_mass_closed_form():
    """Sessions of one length: `predict_timeline`'s t* is theory's point-mass closed form."""
    f = fit_pass_chain(
        np.array([[100.0, 70.0, 50.0]]), np.array([100.0]), np.array([[500.0, 150.0, 60.0]])
    )
    budgets = [1200.0, 2600.0]
    pred = predict_timeline(f, np.full(40, 500.0), budgets)
    for b, t in zip(budgets, pred["per-pass"]["crossover_time"]):
        ref = theory.point_mass_crossover_time(
            500.0, b, compress_ratio=0.3, fidelity=0.7, age_law="uniform"
        )
        assert t == ref


def test_compare_held_out_bias_and_coverage():
    """A prediction off by a constant 2 sessions: bias 2, intervals centred on the truth."""
    rng = np.random.default_rng(0)
    obs = rng.integers(3, 9, 10).astype(float)
    pred = obs - 2.0 + rng.normal(0, 0.3, 10)
    c = compare_held_out(pred, obs)
    assert c["bias"] == pytest.approx(np.mean(obs - pred))
    assert c["lower"] < 2.0 < c["upper"] and c["p_value"] == pytest.approx(2 / 1024)
    assert c["covered"] >= 9 and c["with_interval"] == 10
    same = compare_held_out(obs, obs)
    assert same["agree"] == 1.0 and same["bias"] == 0.0 and same["coverage"] == 1.0
    none = compare_held_out([np.nan, 3.0, 4.0], [np.nan, np.nan, 4.0])
    assert none["status_mismatch"] == 1 and none["agree"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["timeline", "--identify"], "--identify"),
        (["timeline", "locomo", "--data", "x.json", "--identify"], "retcon timeline identify"),
        (["timeline", "identify", "--data", "x.json", "--passes", "1"], "at least 2"),
        (["timeline", "identify", "--data", "x.json", "--policy", "tiered"], "--policy"),
        (["timeline", "identify", "--data", "nope.json"], "no such file"),
        (
            ["timeline", "identify", "--data", "x.json", "--budgets", "512", "256"],
            "strictly increasing",
        ),
    ],
)
def test_identify_bad_input_exits_2_with_one_line(argv, needle, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse refuses an option the form does not take
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.is_file(), reason="LoCoMo not in ../shared/data/locomo")
def test_identify_on_locomo(capsys, tmp_path):
    """LoCoMo, leave one conversation out: every conversation gets a prediction and an observation
    per cell; t* with the measured per-pass chain agrees with the data within its intervals."""
    import json

    out = tmp_path / "out"
    argv = ["timeline", "identify", "--data", str(LOCOMO), "--json", "--passes", "3"]
    assert main([*argv, "--budgets", "1024", "4096", "--out", str(out)]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["conversations"] == 10 and len(rep["cells"]) == 2 * 2 * 3 * 2
    for c in rep["cells"]:
        assert len(c["predicted"]) == 10 and len(c["observed"]) == 10
        assert c["quantity"] != "best_generation" or all(0 <= k <= 3 for k in c["observed"])
    t = rep["misfit"]["per-pass/crossover_time"]
    assert not t["misfit"] and t["coverage"]["share"] >= 0.8
    assert (out / "timeline_identify.json").is_file() and (out / "sidecar.json").is_file()


@pytest.mark.slow
def test_identify_rules_in_worlds_with_known_truth():
    """Error rates of the misfit rule and coverage of the predictive intervals (MODEL §10): where
    H10 holds neither chain is called misfit and the intervals hold most observed values; where
    survival levels off, H10's chain is called misfit for k*, the measured per-pass chain is not."""
    from oas.real._timeline_identify import identify_operating

    good = identify_operating(3, worlds=12, truth="h10")
    for v in good.values():
        assert v["misfit_rate"] <= 0.25 and v["coverage"] >= 0.8
    bad = identify_operating(3, worlds=12, truth="levels-off")
    assert bad["h10/best_generation"]["misfit_rate"] >= 0.75
    assert bad["per-pass/best_generation"]["misfit_rate"] <= 0.25
