"""Closed-form crossover budgets of MODEL §6.6, derived by sympy from ``dU`` (not typed in).

Each derivation substitutes the distribution's CDF into the symbolic ``dU`` of
`theory.symbolic.decomposition` and solves:

* point mass and uniform: ``F`` is piecewise in ``x``, so ``dU`` is piecewise in ``B`` with
  breakpoints where ``B/rho`` or ``B`` meets a piece boundary; sympy solves ``dU = 0`` on each
  region, keeps the roots inside it, and reads the ``+ -> -`` transition off the region signs;
* exponential with ``rho = 1/n``: with ``u = exp(-B/mu)``, ``dU`` is a polynomial in ``u`` that
  vanishes at ``u = 1``; dividing that factor out leaves ``1 + u + ... + u^(n-1) - kappa``.

Signs that need ``g < a phi < a`` and ``rho < 1`` (or ``rho < 1/kappa``) are decided by rewriting
those assumptions as positive symbols (`_assume`). The results are evaluated at run time by the
plain functions of `theory._formulas` (``closed_form_crossover``), which the tests check against
these derivations. References: docs/model.md §6.6.
"""

from __future__ import annotations

import functools
from typing import NamedTuple, cast

import sympy as sp

from theory.symbolic import B, F, a, decomposition, g, phi, rho, x

l = sp.Symbol("l", positive=True)  # point-mass length / uniform maximum, tokens
mu = sp.Symbol("mu", positive=True)  # exponential mean, tokens
u = sp.Symbol("u", positive=True)  # exp(-B / mu)

# Positive symbols that encode the assumptions: a - g = d, kappa = 1 + v, rho = 1/(1 + r) (rho < 1)
# or rho = 1/((1 + v)(1 + r)) (rho < 1/kappa).
_d, _v, _r = sp.symbols("d v r", positive=True)


def _assume(expr: sp.Basic, *, rho_below_inv_kappa: bool) -> sp.Expr:
    """Rewrite ``expr`` under ``g < a phi < a`` and ``rho < 1`` (or ``< 1/kappa``) as positive symbols."""
    rho_sub = 1 / ((1 + _v) * (1 + _r)) if rho_below_inv_kappa else 1 / (1 + _r)
    # a phi = g + (a - g)/kappa, kappa = 1 + v
    out = sp.simplify(expr.subs(rho, rho_sub).subs(phi, (g + _d / (1 + _v)) / a).subs(a, g + _d))
    return cast(sp.Expr, out)  # sympy's stubs type simplify and subs as Basic


def _sign(expr: sp.Basic, **kw) -> int:
    e = _assume(expr, **kw)
    num, den = sp.fraction(sp.together(e))
    for form in (e, sp.factor(e), sp.expand(num) * sp.expand(den)):  # same sign, other shapes
        if form.is_zero:
            return 0
        if form.is_positive:
            return 1
        if form.is_negative:
            return -1
    raise ArithmeticError(f"sympy could not decide the sign of {e}")


class PiecewiseCrossover(NamedTuple):
    """A derived crossover of a piecewise CDF: the budget and dU on each budget region."""

    crossover_budget: sp.Expr
    breakpoints: tuple  # region boundaries in B, increasing
    region_delta: tuple  # dU on each region (sympy expressions in B)


def _piecewise_crossover(
    pieces: list[tuple[sp.Expr, sp.Expr]], *, rho_below_inv_kappa: bool
) -> PiecewiseCrossover:
    """Derive the ``+ -> -`` root of ``dU`` for ``F(x) = pieces[i][0]`` on ``x < pieces[i][1]``.

    Args:
      pieces: ``(F on the piece, upper end of the piece)`` in increasing order; last end ``oo``.
      rho_below_inv_kappa: encode ``rho < 1/kappa`` instead of only ``rho < 1``.
    """
    kw = {"rho_below_inv_kappa": rho_below_inv_kappa}
    delta = decomposition().delta
    ends = [end for _, end in pieces[:-1]]
    # Budgets where B/rho or B crosses a piece end.
    cand = {sp.solve(sp.Eq(arg, end), B)[0] for end in ends for arg in (B / rho, B)}
    breaks = sorted(
        cand, key=lambda b: float(sp.N(_assume(b, **kw).subs({_d: 1, _v: 1, _r: 1, g: 0, l: 1})))
    )
    for lo, hi in zip(breaks, breaks[1:]):  # the numeric sort must agree with the symbolic order
        assert _sign(hi - lo, **kw) > 0
    bounds = [sp.Integer(0), *breaks, sp.oo]

    def piece_at(arg):
        for expr, end in pieces:
            if end is sp.oo or _sign(end - arg, **kw) > 0:
                return expr
        raise AssertionError("unreachable: the last piece is unbounded")

    region_delta, events = [], []
    for lo, hi in zip(bounds, bounds[1:]):
        rep = lo / 2 + hi / 2 if hi is not sp.oo else 2 * lo  # a point strictly inside the region
        if lo == 0:
            rep = hi / 2
        d_region = sp.simplify(
            delta.subs(
                {F(B / rho): piece_at(rep / rho).subs(x, B / rho), F(B): piece_at(rep).subs(x, B)}
            )
        )
        region_delta.append(d_region)
        roots = [
            r
            for r in sp.solve(sp.Eq(d_region, 0), B)
            if _sign(r - lo, **kw) > 0 and (hi is sp.oo or _sign(hi - r, **kw) > 0)
        ]
        if d_region.is_zero:
            events.append(("zero", lo))
            continue
        for r in roots:  # a root inside the region: the sign on either side decides its direction
            left, right = (
                d_region.subs(B, (lo + r) / 2),
                d_region.subs(B, r + (hi - r) / 2 if hi is not sp.oo else 2 * r),
            )
            events.append(((_sign(left, **kw), _sign(right, **kw)), r))
        if not roots:
            events.append((_sign(d_region.subs(B, rep), **kw), lo))
    # Walk the region signs: the crossover is the first place where dU goes from > 0 to < 0.
    last_sign, crossover = 0, None
    for ev, where in events:
        if ev == "zero":
            continue
        if isinstance(ev, tuple):
            if ev == (1, -1) and crossover is None:
                crossover = where
            last_sign = ev[1]
            continue
        if last_sign == 1 and ev == -1 and crossover is None:
            crossover = where
        last_sign = ev
    if crossover is None:
        raise ArithmeticError("no + -> - transition of dU under the stated assumptions")
    return PiecewiseCrossover(sp.simplify(crossover), tuple(breaks), tuple(region_delta))


@functools.cache
def point_mass_crossover() -> PiecewiseCrossover:
    """Derive ``B* = l`` for ``L = l`` (``dU = a phi - g`` on ``[rho l, l)``, ``-a(1 - phi)`` after).

    References: docs/model.md §6.6.
    """
    return _piecewise_crossover(
        [(sp.Integer(0), l), (sp.Integer(1), sp.oo)], rho_below_inv_kappa=False
    )


@functools.cache
def uniform_crossover() -> PiecewiseCrossover:
    """Derive ``B* = l_max / kappa`` for ``L ~ U(0, l_max)`` under ``rho < 1/kappa``.

    References: docs/model.md §6.6.
    """
    return _piecewise_crossover([(x / l, l), (sp.Integer(1), sp.oo)], rho_below_inv_kappa=True)


@functools.cache
def exponential_polynomial(order: int) -> sp.Expr:
    """Derive the polynomial in ``u = exp(-B/mu)`` whose root gives ``B*`` when ``rho = 1/order``.

    ``dU`` with ``F(x) = 1 - exp(-x/mu)`` becomes ``(a phi - g)(1 - u^n) - (a - g)(1 - u)``; the
    factor ``1 - u`` (the trivial root ``B = 0``) is divided out and the rest scaled by
    ``a phi - g``, which leaves ``1 + u + ... + u^(n-1) - kappa``.

    Args:
      order: ``n = 1/rho``, an integer ``>= 2``.

    References: docs/model.md §6.6.
    """
    cdf = sp.Lambda(x, 1 - sp.exp(-x / mu))
    delta = decomposition().delta.subs(rho, sp.Rational(1, order)).replace(F, cdf)
    in_u = sp.powsimp(sp.expand(delta.subs(B, -mu * sp.log(u))), force=True)
    quotient = sp.cancel(in_u / (1 - u))
    assert sp.simplify(in_u - quotient * (1 - u)) == 0
    poly = sp.Poly(sp.expand(quotient), u)
    return sp.Add(*(sp.simplify(coef / (a * phi - g)) * u**i for (i,), coef in poly.terms()))


@functools.cache
def exponential_half_crossover() -> sp.Expr:
    """Solve the ``n = 2`` polynomial: ``B* = -mu ln(kappa - 1)``. References: docs/model.md §6.6."""
    (root,) = sp.solve(exponential_polynomial(2), u)
    return sp.simplify(-mu * sp.log(root))
