"""The run-time formulas of memory over time (MODEL §10): sympy's results written out once.

`theory.timeline_symbolic` derives each of these from the reader's outcomes; sympy stays the
source of truth, these are what runs (no sympy import, no derivation per process).
tests/theory/test_theory_timeline.py checks each against the lambdified derivation on a grid of numbers,
against numeric integration of the length law, and the integer best generation against a brute
force over ``k``.

Parametrization: §2's (support ``phi`` per pass, reader ``g + (a - g) phi^k`` with the unit in
context). Inputs are assumed validated (theory._checks).
References: docs/model.md §10, §6.
"""

from __future__ import annotations

import math

import numpy as np


def generation_utility(cdf_at_fit, phi, k, a, g):
    """``U(B, k) = g + (a - g) phi^k F(B / rho^k)`` from the CDF value ``F(B / rho^k)``.

    `theory.timeline_symbolic.generation_utility_expr`. References: docs/model.md §10.
    """
    return g + (a - g) * phi**k * cdf_at_fit


def fit_generation(length, budget, rho):
    """Real ``k`` with ``rho^k length = budget``: ``ln(length / budget) / ln(1 / rho)``.

    `theory.timeline_symbolic.fit_generation`. References: docs/model.md §10.
    """
    return np.log(np.asarray(length, dtype=np.float64) / budget) / math.log(1.0 / rho)


def loss_ratio(phi, rho) -> float:
    """``r = ln(1/phi) / ln(1/rho)``: fidelity lost per unit of log-compression (``U`` rises iff ``r < 1``)."""
    return math.log(1.0 / phi) / math.log(1.0 / rho)


def exponential_stationary_budget(r: float) -> float:
    """``y* = -r - W_{-1}(-r e^{-r})``, the root of ``y / (e^y - 1) = r`` for ``0 < r < 1``.

    `theory.timeline_symbolic.exponential_stationary_budget`. References: docs/model.md §10.
    """
    import scipy.special as sc

    y = float(-r - sc.lambertw(-r * math.exp(-r), -1).real)
    if not (math.isfinite(y) and y > 0.0):
        # Near r = 1 the argument of W_{-1} rounds onto (or past) the branch point -1/e and W
        # returns NaN; y* is small there, and the series y* ~ 2(1 - r) starts Newton instead.
        y = 2.0 * (1.0 - r)
    # Newton's method on y / expm1(y) = r polishes either start (W_{-1} loses digits near the
    # branch point; expm1 keeps the equation accurate for small y).
    for _ in range(4):
        if y <= 0.0:
            return 0.0
        em1 = math.expm1(y)
        df = (em1 - y * (em1 + 1.0)) / em1**2
        y -= (y / em1 - r) / df
    return max(y, 0.0)


def exponential_best_generation(mean, budget, phi, rho):
    """Real ``k_c`` for ``L ~ Exp(mean)``: the unit's mean ``rho^k mean`` equals ``budget / y*``.

    `theory.timeline_symbolic.exponential_best_generation`. References: docs/model.md §10.
    """
    y_star = exponential_stationary_budget(loss_ratio(phi, rho))
    return fit_generation(mean * y_star, budget, rho)
