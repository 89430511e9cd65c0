"""retcon.bootstrap, the one resampling engine (MODEL §8: groups are the unit of resampling)."""

import jax
import numpy as np
import pytest

from retcon.bootstrap import group_resample_weights, grouped_bootstrap_mean
from retcon.errors import InputError


def test_group_resample_weights_are_multiplicities():
    """Each resample draws G groups with replacement: counts are non-negative integers summing to
    G; the same key gives the same counts, another key other counts."""
    w = group_resample_weights(jax.random.key(0), 7, 500)
    assert w.shape == (500, 7) and w.dtype == np.float64
    assert np.all(w >= 0) and np.all(w == np.round(w)) and np.all(w.sum(1) == 7)
    np.testing.assert_array_equal(w, group_resample_weights(jax.random.key(0), 7, 500))
    assert not np.array_equal(w, group_resample_weights(jax.random.key(1), 7, 500))
    # each group is drawn with probability 1/G per slot: mean multiplicity 1
    assert abs(w.mean() - 1.0) < 0.05
    with pytest.raises(InputError, match="group_resample_weights: n_groups"):
        group_resample_weights(jax.random.key(0), 0, 10)


def test_grouped_mean_resamples_with_the_shared_weights():
    """grouped_bootstrap_mean's interval is the percentile of (w @ sums) / (w @ counts) for the
    weights group_resample_weights draws from the same key."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=60)
    groups = rng.integers(0, 9, 60)
    key = jax.random.key(3)
    ci = grouped_bootstrap_mean(key, values, groups, n_resamples=400)
    w = group_resample_weights(key, 9, 400)
    sums = np.bincount(groups, weights=values, minlength=9)
    counts = np.bincount(groups, minlength=9).astype(float)
    stat = (w @ sums) / (w @ counts)
    lo, hi = np.quantile(stat, [0.025, 0.975])
    assert float(ci.lower) == pytest.approx(lo, abs=1e-5)
    assert float(ci.upper) == pytest.approx(hi, abs=1e-5)
    assert float(ci.point) == pytest.approx(values.mean(), rel=1e-6)


def test_the_two_backends_give_the_same_interval():
    """MODEL §8: the numpy (float64) and JAX (float32) backends resample with the same group
    multiplicities from the key, so their percentile bounds agree to float32 rounding."""
    rng = np.random.default_rng(1)
    values = rng.random((400, 3))
    groups = rng.integers(0, 25, 400)
    mask = rng.random((400, 3)) < 0.7
    key = jax.random.PRNGKey(4)
    a = grouped_bootstrap_mean(key, values, groups, mask, n_resamples=300)
    b = grouped_bootstrap_mean(key, values, groups, mask, n_resamples=300, backend="jax")
    np.testing.assert_array_equal(a.point, b.point)
    np.testing.assert_allclose(a.lower, b.lower, atol=1e-6)
    np.testing.assert_allclose(a.upper, b.upper, atol=1e-6)
    assert not np.allclose(a.lower, a.upper)
    with pytest.raises(InputError, match="backend must be one of"):
        grouped_bootstrap_mean(key, values, groups, mask, backend="cuda")


def test_resample_draws_are_uniform_and_group_sums_exact():
    """MODEL §8 (grouped bootstrap): the groups a resample draws are uniform on 0..G-1 (a
    chi-square test over 20,000 draws), the multiplicities are their counts, a raw uint32 key
    gives the draws of the typed key with the same words, and the flat-bincount group sums equal
    a loop over rows."""
    from retcon.bootstrap import _group_sums, resample_draws

    d = resample_draws(jax.random.key(2), 40, 500)
    assert d.shape == (500, 40) and d.min() >= 0 and d.max() < 40
    obs = np.bincount(d.ravel(), minlength=40)
    assert np.sum((obs - 500.0) ** 2 / 500.0) < 72.05  # chi-square, 39 df, 0.999 quantile
    w = group_resample_weights(jax.random.key(2), 40, 500)
    np.testing.assert_array_equal(w, np.stack([np.bincount(r, minlength=40) for r in d]))
    np.testing.assert_array_equal(
        d, resample_draws(jax.random.key_data(jax.random.key(2)), 40, 500)
    )
    rng = np.random.default_rng(0)
    v, g, m = rng.normal(size=(50, 3)), rng.integers(0, 6, 50), rng.random((50, 3)) > 0.3
    sums, counts = _group_sums(v, g, m, "test")
    ref_s, ref_c = np.zeros((6, 3)), np.zeros((6, 3))
    for i in range(50):
        ref_s[g[i]] += np.where(m[i], v[i], 0.0)
        ref_c[g[i]] += m[i]
    np.testing.assert_array_equal(sums, ref_s)
    np.testing.assert_array_equal(counts, ref_c)
