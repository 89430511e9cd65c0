"""What a crossover interval covers (issue 30 item 6): the grid-truth interval, its widening to
the grid's brackets for the continuous B*, and the model-bias widening; their coverage measured
in row-level worlds where both truths are known (slow)."""

import jax
import numpy as np
import pytest

import theory
from paper_checks._types import Estimate
from paper_checks.operating import LOCOMO_BUDGETS
from paper_checks.rules._crossover_coverage import (
    MODEL_WORLD,
    biased_interval,
    continuous_interval,
    crossover_coverage,
    grid_bias_bound,
)
from retcon.errors import InputError

B = LOCOMO_BUDGETS


def test_continuous_interval_widens_to_the_brackets():
    e = continuous_interval(B, Estimate(900.0, 700.0, 1300.0))
    assert (e.point, e.lower, e.upper) == (900.0, 512.0, 2048.0)
    # an end on a grid budget stays; ends beyond the grid stay as they are
    e = continuous_interval(B[::-1], Estimate(100.0, 64.0, np.inf))
    assert (e.lower, e.upper) == (64.0, np.inf)
    e = continuous_interval(B, Estimate(40.0, 0.0, 50.0))
    assert (e.lower, e.upper) == (0.0, 64.0)
    assert not continuous_interval(B, Estimate.missing()).defined


def test_biased_interval_and_its_input_check():
    e = biased_interval(Estimate(900.0, 800.0, 1000.0), 0.2)
    assert e.lower == pytest.approx(800.0 / 1.2) and e.upper == pytest.approx(1000.0 / 0.8)
    with pytest.raises(InputError, match="beta must be in"):
        biased_interval(Estimate(1.0, 1.0, 1.0), 1.0)


def test_the_bracket_holds_the_continuous_root_in_the_model_world():
    """The premise of ``continuous_interval``: the grid truth and the continuous B* share a
    bracket, and the grid's bias is not zero (the grid-truth interval aims elsewhere)."""
    w = MODEL_WORLD
    dist = theory.make_length_dist("lognormal", sigma=w["sigma"], scale=w["scale"])
    kw = dict(compress_ratio=w["rho"], fidelity=w["phi"], acc_raw=w["a"], acc_guess=w["g"])
    gb = theory.grid_bias(dist, B, **kw)
    point = Estimate(gb.grid_budget, gb.grid_budget, gb.grid_budget)
    wide = continuous_interval(B, point)
    assert wide.lower <= gb.exact_budget <= wide.upper
    assert abs(gb.relative) > 0.02
    beta = grid_bias_bound(B)
    assert abs(gb.relative) <= beta < 0.5
    assert grid_bias_bound(np.geomspace(32, 2048, 25)) < beta  # a finer grid, a smaller bias


@pytest.mark.slow
def test_coverage_of_both_intervals_at_g10():
    """200 data sets at LoCoMo's shape (docs/statistics.md, "What a crossover interval covers"):
    the grid-truth interval covers the grid truth in at least 90% but the continuous B* less
    often; the bracket interval covers the continuous B* at least as often as the grid-truth
    interval covers its own truth, and in at least 93%."""
    c = crossover_coverage(jax.random.PRNGKey(0), n_groups=10, n_datasets=200)
    assert c.grid_covers_grid >= 0.90
    assert c.grid_covers_continuous < c.grid_covers_grid
    assert c.wide_covers_continuous >= max(c.grid_covers_grid, 0.93)
    assert c.biased_covers_continuous >= c.grid_covers_continuous
