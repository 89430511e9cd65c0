"""The paper's stratified outcome-blind sample (MODEL §11): size, proportional allocation over
cost quartiles, keyed reproducibility."""

import jax
import numpy as np
import pytest

from oas.real._paper_sample import PAPER_SEED, paper_sample, proportional_allocation
from retcon.errors import InputError


def test_allocation_is_proportional_with_largest_remainders():
    np.testing.assert_array_equal(
        proportional_allocation([100, 100, 100, 100], 75), [19, 19, 19, 18]
    )
    np.testing.assert_array_equal(proportional_allocation([10, 30, 60], 10), [1, 3, 6])
    np.testing.assert_array_equal(proportional_allocation([1, 1, 1], 3), [1, 1, 1])
    with pytest.raises(InputError, match="n must be"):
        proportional_allocation([2, 2], 5)


def test_sample_draws_75_across_cost_quartiles_and_repeats_with_the_key():
    rng = np.random.default_rng(0)
    q = np.array([f"q{i:04d}" for i in range(400)])
    cost = rng.integers(5, 300, 400).astype(float)
    key = jax.random.key(PAPER_SEED)
    s = paper_sample(key, q, cost)
    assert len(s.query_id) == 75 == s.allocation.sum() and len(set(s.query_id)) == 75
    assert set(s.query_id) <= set(q)
    # each cost quartile, counted independently here, holds its proportional share of the draw
    edges = np.quantile(cost, [0.25, 0.5, 0.75])
    quart = np.searchsorted(edges, cost, side="right")
    picked = np.isin(q, s.query_id)
    counts = np.bincount(quart[picked], minlength=4)
    sizes = np.bincount(quart, minlength=4)
    assert np.all(np.abs(counts - 75 * sizes / 400) < 1.0)
    again = paper_sample(key, q[::-1], cost[::-1])  # row order does not matter
    np.testing.assert_array_equal(again.query_id, s.query_id)
    other = paper_sample(jax.random.key(1), q, cost)
    assert set(other.query_id) != set(s.query_id)
