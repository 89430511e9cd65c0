"""OAS policies (MODEL §8): argmax with ret on ties; tau_B by max accuracy s.t. harm <= alpha (a) and
by conformal risk control (b), whose expected harm stays <= alpha on fresh data."""

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oas._policy import (
    argmax_policy,
    calibrate_accuracy,
    calibrate_crc,
    calibrated_policy,
    harm,
    margin,
    tau_for,
)


def test_argmax_takes_ret_on_ties():
    mu = np.array(
        [[0.5, 0.5, 0.2, 0.5], [0.1, 0.3, 0.3, 0.0], [0.2, 0.1, 0.1, 0.1], [0.0, 0.0, 0.0, 0.0]]
    )
    np.testing.assert_array_equal(argmax_policy(mu), [0, 1, 0, 0])


def test_calibrated_never_consolidates_more_than_argmax():
    rng = np.random.default_rng(0)
    mu = rng.normal(size=(200, 4))
    y = (rng.uniform(size=(200, 4)) < 0.5).astype(float)
    budget = rng.choice([64.0, 128.0], 200)
    for th in (calibrate_accuracy(mu, y, budget, 0.1), calibrate_crc(mu, y, budget, 0.1)):
        cal = calibrated_policy(mu, budget, th)
        arg = argmax_policy(mu)
        assert np.all((cal == 0) | (cal == arg))
        assert np.all(th.tau >= 0)


def synthetic(rng, n):
    """One budget: margin d of the best operator; harm more likely when d is small."""
    d = rng.normal(0.05, 0.2, n)
    y_ret = (rng.uniform(size=n) < 0.6).astype(float)
    y_op = (rng.uniform(size=n) < np.clip(0.55 + 0.8 * d, 0, 1)).astype(float)
    mu = np.c_[np.zeros(n), d, np.full(n, -1.0), np.full(n, -1.0)]
    y = np.c_[y_ret, y_op, np.zeros(n), np.zeros(n)]
    return mu, y, np.full(n, 256.0)


@st.composite
def calibration_sets(draw, max_n: int):
    """One budget, drawn row by row so a failure shrinks to a few rows: the margin ``d`` of the
    best operator over ``ret`` (ties and zero margins on purpose) and binary outcomes of both."""
    n = draw(st.integers(1, max_n))
    margin_values = st.one_of(
        st.sampled_from([-0.1, 0.0, 0.05, 0.1]), st.floats(-0.5, 0.5, allow_nan=False)
    )
    d = np.array(draw(st.lists(margin_values, min_size=n, max_size=n)))
    y_ret, y_op = (
        np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), float) for _ in range(2)
    )
    mu = np.c_[np.zeros(n), d, np.full(n, -1.0), np.full(n, -1.0)]
    y = np.c_[y_ret, y_op, np.zeros(n), np.zeros(n)]
    return mu, y, np.full(n, 256.0)


@given(calibration_sets(40), st.sampled_from([0.05, 0.1, 0.3]))
def test_accuracy_rule_is_the_constrained_optimum(data, alpha):
    """MODEL §8, rule (a), equals brute force over every threshold: the best held-out accuracy
    with harm <= alpha."""
    mu, y, budget = data
    n = len(budget)
    tau = calibrate_accuracy(mu, y, budget, alpha).tau[0]
    _, d = margin(mu)
    best_acc = -1.0
    for t in [0.0, *sorted(d[d > 0]), np.inf]:
        a = np.where(d > t, 1, 0)
        if harm(y, a).mean() <= alpha:
            best_acc = max(best_acc, y[np.arange(n), a].mean())
    a = calibrated_policy(mu, budget, calibrate_accuracy(mu, y, budget, alpha))
    assert harm(y, a).mean() <= alpha
    assert y[np.arange(n), a].mean() == pytest.approx(best_acc)
    assert tau >= 0


@given(calibration_sets(60), st.sampled_from([0.05, 0.1, 0.3]))
def test_crc_rule_matches_definition(data, alpha):
    """MODEL §8, rule (b): tau = inf{tau >= 0: n/(n+1) Rhat(tau) + 1/(n+1) <= alpha}, by brute
    force; +inf if none."""
    mu, y, budget = data
    n = len(budget)
    tau = calibrate_crc(mu, y, budget, alpha).tau[0]
    _, d = margin(mu)
    h = harm(y, np.ones(n, int))
    valid = [
        t
        for t in [0.0, *sorted(d[d > 0])]
        if n / (n + 1) * np.mean((d > t) & h) + 1 / (n + 1) <= alpha
    ]
    assert tau == (min(valid) if valid else np.inf)


def test_no_valid_threshold_retains():
    """n + 1 < 1/alpha: no threshold satisfies the CRC bound, the budget retains."""
    mu, y, budget = synthetic(np.random.default_rng(0), 5)
    th = calibrate_crc(mu, y, budget, 0.1)
    assert th.tau[0] == np.inf
    assert np.all(calibrated_policy(mu, budget, th) == 0)
    assert tau_for(th, np.array([999.0]))[0] == np.inf  # an uncalibrated budget also retains


def test_crc_expected_harm_below_alpha_on_fresh_data():
    """Angelopoulos et al. (ICLR 2024) Thm 1 / MODEL §8: E[harm] <= alpha for fresh exchangeable
    data. Averaged over 300 calibration draws (n = 40 each) and fresh test draws, the realized harm
    stays below alpha (plus 3 Monte Carlo standard errors), while argmax alone exceeds it."""
    alpha, seeds = 0.1, 300
    harms, argmax_harms = [], []
    for s in range(seeds):
        rng = np.random.default_rng(10_000 + s)
        mu, y, budget = synthetic(rng, 40)
        th = calibrate_crc(mu, y, budget, alpha)
        mu_t, y_t, b_t = synthetic(rng, 400)
        harms.append(harm(y_t, calibrated_policy(mu_t, b_t, th)).mean())
        argmax_harms.append(harm(y_t, argmax_policy(mu_t)).mean())
    se = np.std(harms) / np.sqrt(seeds)
    assert np.mean(harms) <= alpha + 3 * se
    assert np.mean(argmax_harms) > alpha  # the bound is binding: calibration had work to do


@pytest.mark.slow
def test_crc_harm_bound_on_simulated_paired_data():
    """The same guarantee end to end: ridge on simulated paired data (independent outcomes),
    CRC on fresh calibration draws, harm on fresh test draws, averaged over seeds."""
    from oas._ridge import fit_ridge, predict_ridge
    from oas._simulate import paired_from_instances
    from tests._toy import toy_instances

    budgets, alpha = [64, 128, 256, 512], 0.03
    train = paired_from_instances(
        jax.random.key(100),
        toy_instances(jax.random.key(0), 40, 10, budgets),
        coupling="independent",
    )
    fit = fit_ridge(jax.random.key(1), train.features, train.outcomes, train.group_id)
    harms = []
    for s in range(40):
        k1, k2, k3, k4 = jax.random.split(jax.random.fold_in(jax.random.key(7), s), 4)
        cal = paired_from_instances(k2, toy_instances(k1, 10, 5, budgets), coupling="independent")
        test = paired_from_instances(k4, toy_instances(k3, 10, 5, budgets), coupling="independent")
        th = calibrate_crc(predict_ridge(fit, cal.features), cal.outcomes, cal.budget, alpha)
        harms.append(
            harm(
                test.outcomes, calibrated_policy(predict_ridge(fit, test.features), test.budget, th)
            ).mean()
        )
    assert np.mean(harms) <= alpha + 3 * np.std(harms) / np.sqrt(len(harms))
