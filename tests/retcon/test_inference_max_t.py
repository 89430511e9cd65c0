"""``retcon.inference.max_t_sign_flip`` against a brute-force loop over sign patterns with
scipy's one-sample t (docs/statistics.md, steps 3 and 5; MODEL §8, metrics: the group is the
unit). The family-wise error in null worlds is measured in the slow tier."""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest
from scipy import stats

from retcon.errors import InputError
from retcon.inference import max_t_sign_flip, sign_flip_test, sign_patterns


def scipy_t(x: np.ndarray) -> np.ndarray:
    """One-sample t statistics of the columns, by scipy (the reference)."""
    return np.asarray(stats.ttest_1samp(x, 0.0)[0], float)


def brute_force_max_t(v: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Adjusted p-values by enumerating every pattern with scipy's t (independent reference)."""
    G, C = v.shape
    obs = d * scipy_t(v)
    hits = np.zeros(C)
    for signs in itertools.product((1.0, -1.0), repeat=G):
        t = d * scipy_t(np.asarray(signs)[:, None] * v)
        hits += t.max() >= obs - 1e-9
    return hits / 2**G


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_max_t_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    G, C = 7, 4
    common = rng.normal(size=(G, 1))
    v = 0.6 * common + rng.normal(0.3, 1.0, size=(G, C))  # correlated cells
    d = np.array([1.0, -1.0, 1.0, -1.0])
    got = max_t_sign_flip(v, d)
    np.testing.assert_allclose(got.adjusted, brute_force_max_t(v, d), atol=1e-12)
    np.testing.assert_allclose(got.statistic, d * scipy_t(v))
    assert got.exact and got.n_patterns == 2**G


def test_one_cell_is_the_one_sided_sign_flip_test():
    rng = np.random.default_rng(3)
    for G in (4, 8, 10):
        v = rng.normal(0.4, 1.0, size=G)
        assert max_t_sign_flip(v).adjusted[0] == pytest.approx(
            sign_flip_test(v, alternative="greater")[0]
        )
        assert max_t_sign_flip(v, [-1.0]).adjusted[0] == pytest.approx(
            sign_flip_test(v, alternative="less")[0]
        )


def test_floor_and_bounds_at_ten_groups():
    """p >= 1 / 2**G; every group in the cell's direction reaches the floor exactly; an adjusted
    p-value is never below the cell's own sign-flip p-value."""
    v = np.stack([np.arange(1.0, 11.0), -np.arange(1.0, 11.0), np.linspace(-1, 2, 10)], 1)
    got = max_t_sign_flip(v, [1.0, -1.0, 1.0])
    assert got.adjusted.min() >= 1 / 1024
    # only the observed pattern reaches cells 0 and 1 (the mirror reverses both directions)
    assert got.adjusted[0] == pytest.approx(1 / 1024) == got.adjusted[1]
    rng = np.random.default_rng(4)
    for _ in range(10):
        w = rng.normal(0.2, 1.0, size=(10, 5))
        adj = max_t_sign_flip(w).adjusted
        own = sign_flip_test(w, alternative="greater")
        assert (adj >= own - 1e-12).all() and (adj >= 1 / 1024).all()


def test_identical_cells_count_once():
    """Duplicating a cell (merge and rewrite the same text) leaves every adjusted p unchanged:
    the correction follows the correlation, unlike Bonferroni."""
    rng = np.random.default_rng(5)
    v = rng.normal(0.5, 1.0, size=(10, 2))
    once = max_t_sign_flip(v, [1.0, -1.0]).adjusted
    twice = max_t_sign_flip(v[:, [0, 0, 1]], [1.0, 1.0, -1.0]).adjusted
    np.testing.assert_allclose(twice, [once[0], once[0], once[1]])


def test_missing_groups_and_degenerate_cells():
    v = np.array([[1.0, 0.0, 1.0], [2.0, 0.0, np.nan], [3.0, 0.0, np.nan], [4.0, 0.0, np.nan]])
    got = max_t_sign_flip(v)
    # a cell of zeros never tops anything and is never significant
    assert got.statistic[1] == 0.0 and got.adjusted[1] == pytest.approx(1.0)
    # one group only: no t, no p-value
    assert np.isnan(got.statistic[2]) and np.isnan(got.adjusted[2])
    assert got.adjusted[0] == pytest.approx(1 / 16)
    # NaN groups are left out of their cell only: same as the cell on its finite groups
    w = np.array([[1.0, 0.5], [2.0, np.nan], [-0.5, 1.0], [3.0, 2.0], [1.5, -0.2]])
    ref = brute_force_max_t(w[[0, 2, 3, 4], 1:], np.ones(1))
    alone = max_t_sign_flip(w[:, 1:]).adjusted
    assert alone[0] == pytest.approx(ref[0])


def test_monte_carlo_beyond_sixteen_groups_is_fixed_and_floored():
    rng = np.random.default_rng(6)
    v = rng.normal(0.1, 1.0, size=(20, 3))
    a, b = max_t_sign_flip(v, n_draws=999), max_t_sign_flip(v, n_draws=999)
    np.testing.assert_array_equal(a.adjusted, b.adjusted)
    assert not a.exact and a.n_patterns == 1000
    strong = max_t_sign_flip(np.abs(v) + 1.0, n_draws=999).adjusted
    assert strong.min() == pytest.approx(1 / 1000)
    signs, exact = sign_patterns(20, key=jax.random.key(1), n_draws=50)
    assert not exact and signs.shape == (51, 20) and (signs[0] == 1).all()
    assert set(np.unique(signs)) == {-1.0, 1.0}


def test_bad_directions_are_refused():
    with pytest.raises(InputError, match="directions"):
        max_t_sign_flip(np.ones((5, 2)), [1.0, 0.0])
    with pytest.raises(InputError, match="directions"):
        max_t_sign_flip(np.ones((5, 2)), [1.0])


def _null_world(rng, kind: str, G: int = 10, C: int = 6) -> np.ndarray:
    """Per-group cell values symmetric about 0 (the complete null), correlated across cells."""
    if kind == "normal":
        e = rng.normal(size=(G, C))
    elif kind == "heavy tails":
        e = rng.standard_t(2, size=(G, C))
    elif kind == "heterogeneous":
        e = rng.normal(size=(G, C)) * rng.uniform(0.2, 3.0, size=(G, 1))
    else:  # one outlier conversation
        e = rng.normal(size=(G, C))
        e[0] *= 25.0
    return 0.7 * e[:, :1] + e


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["normal", "heavy tails", "heterogeneous", "outlier"])
def test_family_wise_error_in_null_worlds(kind):
    """FWER <= 5% in exchangeable null worlds with correlated cells, heavy tails, groups of
    unequal spread and one outlier group; and in a partial null, the false rejections among the
    null cells stay <= 5% (strong control). 2000 data sets each: sd of a 5% rate 0.5 points."""
    rng = np.random.default_rng({"normal": 0, "heavy tails": 1, "heterogeneous": 2}.get(kind, 3))
    d = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    n, full, partial = 2000, 0, 0
    for _ in range(n):
        v = _null_world(rng, kind)
        full += max_t_sign_flip(v, d).adjusted.min() <= 0.05
        w = _null_world(rng, kind)
        w[:, :2] += 2.0  # two cells truly positive: their rejections are not errors
        partial += max_t_sign_flip(w, d).adjusted[2:].min() <= 0.05
    assert full / n <= 0.05 + 0.012
    assert partial / n <= 0.05 + 0.012
