"""What a crossover interval covers: the grid truth, and the continuous ``B*`` beside it.

A data set measures ``dU`` on a budget grid only. The crossover interval of
``paper_checks._curves.crossover_estimate`` (wild cluster bootstrap, MODEL §6.4) is an interval
for the *grid truth*: the root of the population curve interpolated in ``log B`` between the grid's
budgets (``theory.grid_crossover``). The continuous ``B*`` (``theory.crossover``) differs from it by
the grid's own bias, which no amount of data removes (``theory.grid_bias``: 5-8% on LoCoMo's
octave grid in the model's worlds).

``continuous_interval`` widens a grid-truth interval to the grid's brackets: its lower end down
to the grid budget at or below it, its upper end up to the one at or above it. Where the
continuous curve changes sign once between the two grid budgets around its sampled sign change
(no pair of roots hidden between grid points), the continuous ``B*`` lies in the same bracket as
the grid truth, so the widened interval covers ``B*`` whenever the grid-truth interval covers the
grid truth: at least the same coverage, with no model of the curve between grid points.

``biased_interval`` widens it instead by a bound ``beta`` on the grid's relative bias
(``|grid / continuous - 1| <= beta``): ``[lower / (1 + beta), upper / (1 - beta)]``. It is
narrower but holds only where the bound does; ``grid_bias_bound`` measures one over the
single-cluster model's worlds (``paper_checks.TheoryModel``'s three operators, four length laws,
medians putting ``B*`` inside the grid), so it is a model's bound, not the data's.

``crossover_coverage`` measures all three in row-level worlds at LoCoMo's shape
(``operating.locomo_shaped_data``) whose population ``dU`` is the single-cluster model's curve
(``theory.delta_curve``) on the grid, so that both truths are known.

References: MODEL §6.1, §6.4; docs/statistics.md ("What a crossover interval covers").
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

import theory
from paper_checks._curves import curves_from_outcomes
from paper_checks._types import Estimate
from paper_checks.operating import LOCOMO_BUDGETS, locomo_shaped_data
from retcon.errors import InputError


def continuous_interval(budgets, est: Estimate) -> Estimate:
    """``est`` (a grid-truth crossover interval) widened to the grid's brackets (module doc).

    Args:
      budgets: the grid ``(m,)`` (any order); est: the grid-truth ``Estimate``.

    Returns:
      ``Estimate(point, lower', upper')``: the same point; ``lower'`` the largest grid budget at
      or below ``lower`` (``lower`` itself below the grid, e.g. 0), ``upper'`` the smallest at or
      above ``upper`` (``upper`` itself above it, e.g. inf). A missing estimate stays missing.
    """
    if not est.defined:
        return est
    b = np.sort(np.asarray(budgets, float))
    below = b[b <= est.lower]
    above = b[b >= est.upper]
    lo = float(below[-1]) if below.size else float(est.lower)
    hi = float(above[0]) if above.size else float(est.upper)
    return Estimate(float(est.point), lo, hi)


def biased_interval(est: Estimate, beta: float) -> Estimate:
    """``est`` widened by a relative grid-bias bound ``beta`` in [0, 1) (module doc); a missing
    estimate stays missing."""
    if not 0 <= beta < 1:
        raise InputError(f"biased_interval: beta must be in [0, 1); got {beta!r}.")
    if not est.defined:
        return est
    return Estimate(float(est.point), float(est.lower) / (1 + beta), float(est.upper) / (1 - beta))


#: The single-cluster model's operators (rho, phi) and reader of ``grid_bias_bound``
#: (``paper_checks.TheoryModel``'s defaults).
BIAS_OPERATORS = {"merge": (0.35, 0.9), "abstract": (0.15, 0.75), "rewrite": (0.6, 0.95)}
BIAS_READER = {"acc_raw": 0.8, "acc_guess": 0.1}


def grid_bias_bound(budgets, *, n_scales: int = 14) -> float:
    """The largest ``|grid / continuous - 1|`` (``theory.grid_bias``) on ``budgets`` over the
    model's worlds whose continuous ``B*`` lies inside the grid (a factor 1.2 from either end):
    ``BIAS_OPERATORS`` x lognormal(0.5), lognormal(1), gamma(2), exponential laws x ``n_scales``
    medians geometric between the grid's ends. NaN when no world's ``B*`` is inside."""

    b = np.sort(np.asarray(budgets, float))
    laws = (
        lambda m: theory.make_length_dist("lognormal", sigma=0.5, scale=m),
        lambda m: theory.make_length_dist("lognormal", sigma=1.0, scale=m),
        lambda m: theory.make_length_dist("gamma", shape=2.0, scale=m / 2),
        lambda m: theory.make_length_dist("exponential", mean=m),
    )
    worst = float("nan")
    for rho, phi in BIAS_OPERATORS.values():
        for make in laws:
            for m in np.geomspace(b[0], b[-1], n_scales):
                gb = theory.grid_bias(make(m), b, compress_ratio=rho, fidelity=phi, **BIAS_READER)
                if 1.2 * b[0] < gb.exact_budget < b[-1] / 1.2 and np.isfinite(gb.relative):
                    worst = float(np.fmax(worst, abs(gb.relative)))
    return worst


class CrossoverCoverage(NamedTuple):
    """Coverage of the two crossover intervals in one world (shares of ``n_datasets``).

    Fields:
      grid_truth, continuous: the world's two truths (tokens).
      grid_covers_grid, grid_covers_continuous: the grid-truth interval's coverage of each.
      wide_covers_continuous: ``continuous_interval``'s coverage of the continuous ``B*``.
      biased_covers_continuous: ``biased_interval``'s at ``beta``.
      grid_width, wide_width, biased_width: median ``log2(upper / lower)`` of each interval
        (octaves; inf when unbounded).
      beta: the bias bound used (``grid_bias_bound`` of the grid).
      n_groups, n_datasets: the data sets' size and number.
    """

    grid_truth: float
    continuous: float
    grid_covers_grid: float
    grid_covers_continuous: float
    wide_covers_continuous: float
    grid_width: float
    wide_width: float
    n_groups: int
    n_datasets: int
    biased_covers_continuous: float
    biased_width: float
    beta: float


#: The model world of ``crossover_coverage``: merge of ``paper_checks.TheoryModel``
#: (rho 0.35, phi 0.9; reader a = 0.8, g = 0.1) over lognormal(0.5) evidence of median 500
#: tokens: continuous B* 912 tokens, grid truth 956 on LoCoMo's octave grid (+4.9%).
MODEL_WORLD = {"sigma": 0.5, "scale": 500.0, "rho": 0.35, "phi": 0.9, "a": 0.8, "g": 0.1}


def crossover_coverage(
    key: jax.Array,
    *,
    n_groups: int = 10,
    n_datasets: int = 200,
    n_resamples: int = 400,
    world: dict | None = None,
    budgets=None,
) -> CrossoverCoverage:
    """Coverage of merge's grid-truth and continuous crossover intervals (module doc).

    Args:
      key: JAX PRNG key; n_groups: ``G``; n_datasets: data sets; n_resamples: wild resamples
        per data set; world: ``MODEL_WORLD``'s keys (None: ``MODEL_WORLD``); budgets: the grid
        (None: ``operating.LOCOMO_BUDGETS``).

    Returns:
      ``CrossoverCoverage``.
    """

    w = dict(MODEL_WORLD if world is None else world)
    b = np.asarray(LOCOMO_BUDGETS if budgets is None else budgets, float)
    dist = theory.make_length_dist("lognormal", sigma=w["sigma"], scale=w["scale"])
    kw = dict(compress_ratio=w["rho"], fidelity=w["phi"], acc_raw=w["a"], acc_guess=w["g"])
    delta = theory.delta_curve(dist, b, **kw).delta
    grid = float(theory.grid_crossover(b, delta).crossover_budget)
    exact = theory.crossover(dist, **kw).crossover_budget
    cont = float("nan") if exact is None else float(exact)
    beta = grid_bias_bound(b)
    hits = np.zeros((n_datasets, 4), bool)
    widths = np.full((n_datasets, 3), np.inf)
    for i in range(n_datasets):
        k = jax.random.fold_in(key, i)
        y, g, bb = locomo_shaped_data(k, delta, n_groups=n_groups, budgets=b)
        s = curves_from_outcomes(
            jax.random.fold_in(k, 1), y, g, bb, name="w", data="w", n_resamples=n_resamples
        )
        c = s.operators["merge"].crossover
        if not c.defined:
            continue
        wide, biased = continuous_interval(b, c), biased_interval(c, beta)
        hits[i] = (
            c.lower <= grid <= c.upper,
            c.lower <= cont <= c.upper,
            wide.lower <= cont <= wide.upper,
            biased.lower <= cont <= biased.upper,
        )
        for j, e in enumerate((c, wide, biased)):
            if e.lower > 0 and np.isfinite(e.upper):
                widths[i, j] = float(np.log2(e.upper / e.lower))
    share = hits.mean(axis=0)
    width = np.median(widths, axis=0)
    return CrossoverCoverage(
        grid,
        cont,
        float(share[0]),
        float(share[1]),
        float(share[2]),
        float(width[0]),
        float(width[1]),
        int(n_groups),
        int(n_datasets),
        float(share[3]),
        float(width[2]),
        beta,
    )
