"""The single-cluster model as sympy expressions, derived from the reader, not typed in.

Every expression here is built from the three reader outcomes of MODEL §6 (``a`` with the raw
cluster in context, ``a*phi`` with the generated record, ``g`` with neither) and the three events on
the cluster's raw length ``L ~ F`` that prefix packing distinguishes:

  L <= B             raw cluster fits (the query is raw-grounded, q in G_B)   prob F(B)
  B < L <= B/rho     only the generated record fits                            prob F(B/rho) - F(B)
  L > B/rho          nothing fits                                              prob 1 - F(B/rho)

``F`` is an undefined sympy Function, so every identity proved here holds for any length
distribution. References: docs/model.md §4 (Proposition 1), §6 (Proposition 2).
"""

from __future__ import annotations

import functools
from typing import NamedTuple, cast

import sympy as sp

# Symbols of docs/model.md §6. Budgets and lengths are positive.
B = sp.Symbol("B", positive=True)  # budget, tokens
x = sp.Symbol("x", positive=True)  # a length, tokens
s = sp.Symbol("s", positive=True)  # scale factor of the length distribution
rho = sp.Symbol("rho", positive=True)  # compress_ratio
phi = sp.Symbol("phi", nonnegative=True)  # fidelity
a = sp.Symbol("a", positive=True)  # acc_raw
g = sp.Symbol("g", nonnegative=True)  # acc_guess
k = sp.Symbol("k", positive=True)  # tail exponent: F(x) ~ c x^k near 0
c = sp.Symbol("c", positive=True)  # tail constant
F = sp.Function("F")  # CDF of the cluster's raw length L

#: kappa_o = (a - g) / (a phi - g), MODEL §6.
KAPPA = (a - g) / (a * phi - g)


class SymbolicDecomposition(NamedTuple):
    """``dU = C + R`` as sympy expressions in ``F``, ``B``, ``rho``, ``phi``, ``a``, ``g``."""

    delta: sp.Expr
    coverage: sp.Expr
    replacement: sp.Expr


@functools.cache
def decomposition() -> SymbolicDecomposition:
    """Derive ``dU_o(B)``, ``C_o(B)``, ``R_o(B)`` of the single-cluster model from the reader.

    ``dU`` is ``E[p_o] - E[p_ret]``; ``C`` sums ``p_o - p_ret`` over the queries that are not
    raw-grounded (``L > B``), ``R`` over those that are (``L <= B``). Nothing forces ``C + R = dU``
    in this construction except the algebra, which `identity_residual` checks.

    Returns:
      SymbolicDecomposition(delta, coverage, replacement), sympy expressions.

    References: docs/model.md §4 (the split by raw-grounded region), §6.1 (the formulas).
    """
    p_fit_raw, p_only_gen, p_none = F(B), F(B / rho) - F(B), 1 - F(B / rho)
    # reader outcome on each event: (under ret, under the operator o)
    outcome = {
        "raw_fits": (a, a * phi),  # raw is packed under ret; the shorter generated record too
        "only_gen_fits": (g, a * phi),
        "nothing_fits": (g, g),
    }
    prob = {"raw_fits": p_fit_raw, "only_gen_fits": p_only_gen, "nothing_fits": p_none}
    u_ret = sum(prob[e] * outcome[e][0] for e in prob)
    u_op = sum(prob[e] * outcome[e][1] for e in prob)
    delta = sp.expand(u_op - u_ret)
    coverage = sp.factor(
        sum(prob[e] * (outcome[e][1] - outcome[e][0]) for e in ("only_gen_fits", "nothing_fits"))
    )
    replacement = sp.factor(prob["raw_fits"] * (outcome["raw_fits"][1] - outcome["raw_fits"][0]))
    return SymbolicDecomposition(delta=delta, coverage=coverage, replacement=replacement)


def identity_residual() -> sp.Expr:
    """Return ``simplify(C + R - dU)``; Proposition 1 says it is exactly ``0``.

    References: docs/model.md §4.
    """
    d = decomposition()
    return sp.simplify(d.coverage + d.replacement - d.delta)


@functools.cache
def loose_budget_limit_expr() -> sp.Expr:
    """``lim_{B -> inf} dU_o(B)``: both CDF values tend to 1, leaving ``-a (1 - phi)``.

    References: docs/model.md §6.2.
    """
    one = sp.Symbol("one_minus_eps")
    d = decomposition().delta
    # F(B) and F(B/rho) both tend to 1; dU is affine in them, so the limit is the substitution.
    lim = d.subs({F(B / rho): one, F(B): one})
    return sp.factor(sp.limit(lim, one, 1))


@functools.cache
def tight_budget_ratio_expr() -> sp.Expr:
    """``lim_{B -> 0} dU_o(B) / F(B)`` when ``F(x) = c x^k`` near 0: ``(a phi - g) rho^(-k) - (a - g)``.

    ``dU > 0`` for all small ``B`` iff this is positive, i.e. iff ``rho^(-k) > kappa``.

    References: docs/model.md §6.3.
    """
    d = decomposition().delta
    power = sp.Lambda(x, c * x**k)
    ratio = cast(sp.Expr, d.replace(F, power)) / power(B)  # sympy's stubs: replace -> Basic
    return sp.simplify(sp.limit(sp.simplify(ratio), B, 0, "+"))


def uniqueness_lemma_residual() -> sp.Expr:
    """``d/dB ln r(B) - (e(B/rho) - e(B)) / B`` for ``r = F(B/rho)/F(B)`` and ``e(x) = x F'(x)/F(x)``.

    It is ``0`` for every ``F``: since ``B/rho > B``, a non-increasing elasticity makes ``r``
    non-increasing, so ``dU = F(B) ((a phi - g) r(B) - (a - g))`` changes sign at most once.

    References: docs/model.md §6.4.
    """

    def e(arg):
        return arg * sp.Subs(sp.Derivative(F(x), x), x, arg).doit() / F(arg)

    lhs = sp.diff(sp.log(F(B / rho)) - sp.log(F(B)), B)
    rhs = (e(B / rho) - e(B)) / B
    return sp.simplify((lhs - rhs).doit())


def scale_equivariance_residual() -> sp.Expr:
    """``dU_s(s B) - dU_1(B)`` where ``F_s(x) = F(x / s)`` is the law of ``s L``; it is ``0``.

    So every root scales with ``s``: ``B*(s) = s B*(1)``.

    References: docs/model.md §6.5.
    """
    d = decomposition().delta
    scaled = d.replace(F, sp.Lambda(x, F(x / s)))
    return sp.simplify(scaled.subs(B, s * B) - d)


def elasticity_expr(cdf: sp.Expr) -> sp.Expr:
    """``e(x) = x f(x) / F(x)`` for a sympy CDF in ``x``. References: docs/model.md §6.4."""
    return sp.simplify(x * sp.diff(cdf, x) / cdf)


def _nonincreasing_by_numerator(e: sp.Expr, t: sp.Symbol) -> bool | None:
    """Decide ``de/dt <= 0`` on ``t > 0`` by sympy: ``de/dt = N(t)/D(t)`` with ``D >= 0``,
    then either ``N <= 0`` directly, or ``N(0+) <= 0`` and ``N' <= 0``. ``None`` if undecided."""
    num, den = sp.fraction(sp.together(sp.diff(e, t)))
    num, den = sp.simplify(num), sp.factor(den)
    if den.is_nonnegative is not True:
        return None
    if num.is_nonpositive:
        return True
    start = sp.limit(num, t, 0, "+")
    slope = sp.simplify(sp.diff(num, t))
    if start.is_nonpositive and slope.is_nonpositive:
        return True
    return None


def elasticity_nonincreasing_symbolic(name: str) -> bool | None:
    """Prove with sympy that the family's elasticity ``e(x)`` is non-increasing, where it can.

    ``e`` is scale free (``e_{sL}(x) = e_L(x / s)``), so each family is checked in its standard
    variable ``t``: ``uniform`` (``F = t`` on (0, 1), ``e = 1``), ``exponential``
    (``F = 1 - exp(-t)``) and ``weibull`` (``e(x) = k e_exp(t)`` with ``t = (x/scale)^k``
    increasing in ``x``). Returns ``True`` when proved, ``None`` when sympy cannot decide
    (``gamma``, ``lognormal``: use the numeric check).

    References: docs/model.md §6.4.
    """
    t = sp.Symbol("t", positive=True)
    if name == "uniform":
        return _nonincreasing_by_numerator(elasticity_expr(x).subs(x, t), t)
    if name == "weibull":  # reduce to the exponential: e_weibull(x) = k e_exp((x/scale)^k)
        scale = sp.Symbol("scale", positive=True)
        e_exp = elasticity_expr(1 - sp.exp(-x))
        reduced = elasticity_expr(1 - sp.exp(-((x / scale) ** k))) - k * e_exp.subs(
            x, (x / scale) ** k
        )
        if sp.simplify(reduced) != 0:
            return None
    if name in ("exponential", "weibull"):
        return _nonincreasing_by_numerator(elasticity_expr(1 - sp.exp(-x)).subs(x, t), t)
    return None


def __getattr__(name: str):
    """``symbolic.dU``, ``symbolic.C``, ``symbolic.R``: the expressions of `decomposition`."""
    fields = {"dU": "delta", "C": "coverage", "R": "replacement"}
    if name in fields:
        return getattr(decomposition(), fields[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
