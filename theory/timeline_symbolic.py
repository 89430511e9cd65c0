"""Memory over time (MODEL §10) in sympy: the utility after ``k`` passes and the best ``k``, derived.

Single-cluster model along generations (§6 with H10): the cluster's raw length ``L ~ F``; after
``k`` passes of operator ``o`` its unit has length ``rho^k L`` and support ``phi^k`` (§2's
parametrization: the reader gives ``g + (a - g) phi^k`` with the unit in context, ``g`` without).
Prefix packing of the one unit distinguishes two events:

  rho^k L <= B     the unit fits          prob F(B / rho^k)     outcome g + (a - g) phi^k
  rho^k L >  B     nothing fits           prob 1 - F(B / rho^k) outcome g

so ``U(B, k) = g + (a - g) phi^k F(B / rho^k)``. Everything below is derived from that expression
with ``F`` an undefined function (any law), then specialised to the point mass, the uniform and
the exponential law. ``theory._timeline_formulas`` writes the results out as plain arithmetic for
the run-time path; tests/theory/test_theory_timeline.py checks the two against each other.

References: docs/model.md §10 (generations, H10, ``k*``), §6 (the single-cluster model), §6.4
(elasticity), §6.5 (scale).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import sympy as sp

from theory.symbolic import F, a, g, phi, rho, x

B = sp.Symbol("B", positive=True)  # budget, tokens
k = sp.Symbol("k", nonnegative=True)  # generation (passes), relaxed to a real number
s = sp.Symbol("s", positive=True)  # scale factor
ell = sp.Symbol("l", positive=True)  # point-mass length / uniform maximum, tokens
mu = sp.Symbol("mu", positive=True)  # exponential mean, tokens
y = sp.Symbol("y", positive=True)  # B / (mu rho^k): the budget in units of the unit's mean
r = sp.Symbol("r", positive=True)  # ln(1/phi) / ln(1/rho): fidelity loss per compression


@functools.cache
def generation_utility_expr() -> sp.Expr:
    """``U(B, k)`` from the reader's two outcomes: ``g + (a - g) phi^k F(B / rho^k)``.

    References: docs/model.md §10 (H10), §2 (reader).
    """
    fits = F(B / rho**k)
    u = fits * (g + (a - g) * phi**k) + (1 - fits) * g
    return sp.expand(u)


def log_slope_residual() -> sp.Expr:
    """``d/dk ln(U - g) - (ln phi + ln(1/rho) e(B / rho^k))``; it is ``0`` for every ``F``.

    ``e(x) = x F'(x) / F(x)`` is §6.4's elasticity. When ``e`` is non-increasing, the slope is
    non-increasing in ``k`` (``B / rho^k`` grows with ``k``): ``ln(U - g)`` is concave in ``k``,
    so ``U(B, k)`` is an inverted U (unimodal) in ``k`` and its integer maximiser is the floor or
    the ceiling of the real stationary point. References: docs/model.md §10, §6.4.
    """
    xx = B / rho**k
    elasticity = xx * sp.Subs(sp.Derivative(F(x), x), x, xx).doit() / F(xx)
    lhs = sp.diff(sp.log(generation_utility_expr() - g), k)
    rhs = sp.log(phi) + sp.log(1 / rho) * elasticity
    return sp.simplify(sp.expand_log((lhs - rhs).doit(), force=True))


def scale_residual() -> sp.Expr:
    """``U_{sL}(s B, k) - U_L(B, k)`` where ``F_s(x) = F(x / s)``; it is ``0`` (so ``k*`` scales).

    References: docs/model.md §10 (scale), §6.5.
    """
    u = generation_utility_expr()
    scaled = u.replace(F, sp.Lambda(x, F(x / s)))
    return sp.simplify(scaled.subs(B, s * B) - u)


class BestGeneration(NamedTuple):
    """A derived real maximiser ``k_c`` of ``U(B, k)`` and the condition under which it is interior.

    Attributes:
      k_c: sympy expression of the stationary point (or the kink) in ``k``.
      condition: sympy relation under which ``U`` rises before ``k_c`` and falls after it.
    """

    k_c: sp.Expr
    condition: sp.Basic


@functools.cache
def fit_generation() -> sp.Expr:
    """``k`` at which a unit of raw length ``l`` just fits: ``rho^k l = B``, solved for ``k``.

    References: docs/model.md §10.
    """
    (sol,) = sp.solve(sp.Eq(rho**k * ell, B), k)
    return sp.simplify(sol)


@functools.cache
def point_mass_best_generation() -> BestGeneration:
    """``L = l``: ``U = g + (a - g) phi^k 1{rho^k l <= B}``; ``k* = ceil(k_c)`` with ``k_c`` the fit.

    Below ``k_c`` nothing fits (``U = g``), from ``ceil(k_c)`` on ``U = g + (a - g) phi^k``
    decreases (``phi < 1``): the first generation that fits is best. References: MODEL §10.
    """
    return BestGeneration(fit_generation(), sp.StrictLessThan(phi, 1))


@functools.cache
def uniform_best_generation() -> BestGeneration:
    """``L ~ U(0, l)``: the kink ``k_c = ln(l / B) / ln(1 / rho)``, interior when ``rho < phi < 1``.

    Derived region by region: while ``rho^k l > B`` the unit fits with probability
    ``B / (rho^k l)`` and ``d/dk ln(U - g) = ln(phi / rho)``; once ``rho^k l <= B`` it always fits
    and the slope is ``ln phi < 0``. So ``U`` rises to the kink iff ``phi > rho``.
    References: docs/model.md §10.
    """
    u = generation_utility_expr()
    part_fit = u.replace(F, sp.Lambda(x, x / ell))
    all_fit = u.replace(F, sp.Lambda(x, sp.Integer(1)))
    slope_part = sp.simplify(sp.expand_log(sp.diff(sp.log(part_fit - g), k), force=True))
    slope_all = sp.simplify(sp.expand_log(sp.diff(sp.log(all_fit - g), k), force=True))
    assert sp.simplify(slope_part - sp.log(phi / rho).expand(force=True)) == 0
    assert sp.simplify(slope_all - sp.log(phi)) == 0
    return BestGeneration(
        fit_generation(), sp.And(sp.StrictLessThan(rho, phi), sp.StrictLessThan(phi, 1))
    )


@functools.cache
def exponential_stationary_budget() -> sp.Expr:
    """``y* = B / (mu rho^{k_c})`` for ``L ~ Exp(mu)``: the root of ``y / (e^y - 1) = r``.

    The elasticity of the exponential law at ``x`` is ``y / (e^y - 1)`` with ``y = x / mu``
    (derived here from ``F``), decreasing from 1 to 0, so the stationary condition of
    `log_slope_residual`, ``e(B / rho^k) = ln(1/phi) / ln(1/rho) = r``, has one root when
    ``0 < r < 1`` (``rho < phi < 1``). sympy's ``solve`` returns ``-r - W(-r e^{-r})`` on the
    principal branch of Lambert's ``W``, which is the spurious root ``y = 0`` (``W_0(-r e^{-r}) =
    -r`` for ``r < 1``); the positive root is on the branch ``-1``, which this takes and checks.

    References: docs/model.md §10, §6.4.
    """
    cdf = 1 - sp.exp(-x / mu)
    elasticity = sp.simplify((x * sp.diff(cdf, x) / cdf).subs(x, mu * y))
    assert sp.simplify(elasticity - y / (sp.exp(y) - 1)) == 0
    (sol,) = sp.solve(sp.Eq(elasticity, r), y)
    principal = sol.atoms(sp.LambertW)
    assert len(principal) == 1
    (w,) = principal
    root = sol.subs(w, sp.LambertW(w.args[0], -1))
    # the root is a root: check at a few r in (0, 1)
    for val in (sp.Rational(1, 10), sp.Rational(1, 2), sp.Rational(9, 10)):
        y_val = sp.N(root.subs(r, val), 30)
        assert y_val > 0
        assert abs(sp.N(elasticity.subs(y, y_val) - val, 30)) < 1e-20
    return root


@functools.cache
def exponential_best_generation() -> BestGeneration:
    """``L ~ Exp(mu)``: ``k_c = ln(B / (mu y*)) / ln(rho)``, ``y*`` of `exponential_stationary_budget`.

    References: docs/model.md §10.
    """
    (sol,) = sp.solve(sp.Eq(B / (mu * rho**k), y), k)
    r_expr = sp.log(phi) / sp.log(rho)
    k_c = sol.subs(y, exponential_stationary_budget().subs(r, r_expr))
    return BestGeneration(
        sp.simplify(k_c), sp.And(sp.StrictLessThan(rho, phi), sp.StrictLessThan(phi, 1))
    )
