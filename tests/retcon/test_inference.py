"""retcon.inference against independent references: scipy's t quantile, a brute-force loop over
sign patterns, and the moments of Webb's weights (docs/statistics.md; MODEL §8, metrics)."""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest
from scipy import stats

from retcon.errors import InputError
from retcon.inference import (
    WEBB_POINTS,
    group_t_interval,
    group_t_pvalue,
    holm,
    sign_flip_test,
    webb_weights,
    wild_cluster_replicates,
)


def test_t_interval_matches_scipy():
    rng = np.random.default_rng(0)
    v = rng.normal(0.3, 1.0, size=(10, 3))
    got = group_t_interval(v, level=0.9)
    for j in range(3):
        lo, hi = stats.t.interval(0.9, df=9, loc=v[:, j].mean(), scale=stats.sem(v[:, j]))
        assert got.lower[j] == pytest.approx(lo, rel=1e-12)
        assert got.upper[j] == pytest.approx(hi, rel=1e-12)
    assert got.df.tolist() == [9.0, 9.0, 9.0]


def test_t_interval_drops_nan_groups_per_column():
    v = np.array([[1.0, 1.0], [2.0, np.nan], [3.0, 3.0], [4.0, np.nan]])
    got = group_t_interval(v)
    assert got.df.tolist() == [3.0, 1.0]
    assert got.estimate.tolist() == [2.5, 2.0]
    one = group_t_interval(np.array([1.0, np.nan]))
    assert np.isnan(one.lower[0]) and np.isnan(one.upper[0])


def test_sign_flip_matches_brute_force():
    rng = np.random.default_rng(1)
    v = rng.normal(0.5, 1.0, size=7)
    obs = v.mean()
    two = greater = 0
    for signs in itertools.product((1.0, -1.0), repeat=7):
        m = float(np.dot(signs, v)) / 7
        two += abs(m) >= abs(obs) - 1e-12
        greater += m >= obs - 1e-12
    assert sign_flip_test(v)[0] == pytest.approx(two / 2**7)
    assert sign_flip_test(v, alternative="greater")[0] == pytest.approx(greater / 2**7)


def test_sign_flip_floor_at_ten_groups():
    # Every group positive: only the observed pattern and its mirror are as extreme.
    v = np.arange(1.0, 11.0)
    assert sign_flip_test(v)[0] == pytest.approx(2 / 1024)
    assert sign_flip_test(v, alternative="greater")[0] == pytest.approx(1 / 1024)
    assert sign_flip_test(v, alternative="less")[0] == pytest.approx(1.0)


def test_sign_flip_rejects_too_many_groups_and_nan():
    with pytest.raises(InputError, match="17"):
        sign_flip_test(np.ones(17))
    with pytest.raises(InputError, match="finite"):
        sign_flip_test(np.array([1.0, np.nan]))


def test_webb_weights_moments_and_support():
    w = webb_weights(jax.random.key(0), 10, 20_000)
    assert w.shape == (20_000, 10)
    assert set(np.unique(w)).issubset(set(WEBB_POINTS))
    assert abs(w.mean()) < 0.02
    assert w.var() == pytest.approx(1.0, abs=0.02)
    assert (WEBB_POINTS**2).mean() == pytest.approx(1.0)
    assert (WEBB_POINTS**4).mean() == pytest.approx(7 / 6)


def test_t_pvalue_matches_scipy_and_the_interval():
    rng = np.random.default_rng(1)
    v = rng.normal(0.2, 1.0, size=(10, 4))
    for alt in ("greater", "less", "two-sided"):
        want = stats.ttest_1samp(v, 0.0, alternative=alt).pvalue
        np.testing.assert_allclose(group_t_pvalue(v, alternative=alt), want, rtol=1e-10)
    # rejecting "mean <= 0" at 2.5% one-sided is the 95% interval lying above 0
    ci = group_t_interval(v)
    np.testing.assert_array_equal(group_t_pvalue(v) <= 0.025, ci.lower > 0)
    # no spread: decided by the sign of the mean; exactly 0 is p = 0.5
    flat = np.array([[0.1, -0.1, 0.0]] * 5)
    assert group_t_pvalue(flat).tolist() == [0.0, 1.0, 0.5]


def test_holm_against_its_definition():
    """Holm (1979): the i-th smallest p (1-based) times (k - i + 1), made monotone, capped at 1."""
    rng = np.random.default_rng(2)
    for _ in range(20):
        p = rng.uniform(0, 0.2, 7)
        order = np.argsort(p)
        want = np.empty(7)
        running = 0.0
        for i, j in enumerate(order):
            running = max(running, (7 - i) * p[j])
            want[j] = min(1.0, running)
        np.testing.assert_allclose(holm(p), want)
    got = holm([0.01, np.nan, 0.04])
    assert np.isnan(got[1]) and got[0] == pytest.approx(0.02) and got[2] == pytest.approx(0.04)


def test_wild_cluster_replicates_reproduce_the_t_interval_for_a_mean():
    """The scale makes the percentile interval of a mean match the Student-t interval on G - 1
    df (docs/statistics.md); every resample moves a group's whole row together."""
    rng = np.random.default_rng(3)
    v = rng.normal(0.3, 1.0, size=(10, 2))
    point, reps = wild_cluster_replicates(jax.random.PRNGKey(0), v, n_resamples=2000)
    np.testing.assert_allclose(point, v.mean(0))
    ci = group_t_interval(v)
    lo, hi = np.quantile(reps, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(lo, ci.lower, atol=0.15 * (ci.upper - ci.lower).max())
    np.testing.assert_allclose(hi, ci.upper, atol=0.15 * (ci.upper - ci.lower).max())
    # a column that is the other times 2 stays so in every resample (one weight per group)
    point, reps = wild_cluster_replicates(
        jax.random.PRNGKey(1), np.stack([v[:, 0], 2 * v[:, 0]], 1), n_resamples=2000
    )
    np.testing.assert_allclose(reps[:, 1] - point[1], 2 * (reps[:, 0] - point[0]))
    with pytest.raises(InputError, match="G >= 2"):
        wild_cluster_replicates(jax.random.PRNGKey(0), np.ones((1, 3)), n_resamples=5)
