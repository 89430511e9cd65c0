"""The run-time formulas of the single-cluster model: sympy's results written out once.

`theory.symbolic` and `theory.closed_forms` derive every quantity here from the reader's three
outcomes (docs/model.md §6); sympy stays the source of truth. Deriving them again in every
process (a ``limit`` and two ``simplify`` calls, ``lambdify``) and importing sympy cost about a
second per ``retcon crossover``, so the run-time path evaluates these plain functions instead.

Each function uses only ``+ - * / **`` on its arguments, so the same code runs on floats, numpy
arrays, jax arrays and sympy symbols: tests/theory/test_theory_formulas.py calls it with sympy symbols
and checks the expression it returns against the derivation it stands for (exactly, by
``simplify``), and on a grid of numbers against the lambdified derivation.

Inputs are assumed validated (theory._checks); ``phi`` is the effective fidelity
``min(phi, 1/a)`` where the reader's accuracy is clipped at 1 (docs/model.md §2).
References: docs/model.md §6.1-6.3, §6.6.
"""

from __future__ import annotations

import math

import numpy as np

from retcon.errors import InputError, Spell
from theory._checks import check_model
from theory._dists import check_dist

#: The largest order ``n = 1/rho`` whose exponential polynomial `closed_form_crossover` solves
#: (``np.roots`` of an ``n x n`` companion matrix: under a second at 256, seconds at 1000).
_MAX_EXP_ORDER = 256


def reader_success(support, acc_raw, acc_guess):
    """The reader of docs/model.md §2: ``p = clip(g + (a - g) s, 0, 1)`` from the support ``s``.

    The one numeric home of the §2 reader: identification and the tests' toy simulator call it
    (``sim``'s kernel quantizes the same expression). Broadcasts over numpy and jax arrays
    (their ``clip`` method) and plain floats.

    Args:
      support: ``s`` in [0, inf) (a product of 1, ``phi_o`` and 0 over evidence units).
      acc_raw: ``a_t``, the accuracy with all evidence raw.
      acc_guess: ``g``, the accuracy of a guess.

    References: MODEL §2.
    """
    p = acc_guess + (acc_raw - acc_guess) * support
    return p.clip(0.0, 1.0) if hasattr(p, "clip") else min(max(p, 0.0), 1.0)


def kappa(phi, a, g):
    """``kappa_o = (a - g) / (a phi - g)`` (``theory.symbolic.KAPPA``). References: MODEL §6."""
    return (a - g) / (a * phi - g)


def decompose(f_b, f_b_over_rho, phi, a, g):
    """``(dU, C, R)`` from the CDF values ``F(B)`` and ``F(B/rho)``.

    ``dU = (a phi - g) F(B/rho) - (a - g) F(B)``, ``C = (a phi - g)(F(B/rho) - F(B))``,
    ``R = -a (1 - phi) F(B)``: `theory.symbolic.decomposition` with the two CDF values as
    arguments. References: docs/model.md §4, §6.1.
    """
    gain = a * phi - g
    delta = gain * f_b_over_rho - (a - g) * f_b
    coverage = gain * (f_b_over_rho - f_b)
    replacement = -a * (1 - phi) * f_b
    return delta, coverage, replacement


def loose_limit(phi, a, g):
    """``lim_{B -> inf} dU = -a (1 - phi)`` (`theory.symbolic.loose_budget_limit_expr`).

    ``g`` does not enter; it is an argument so that the signature matches the derivation's
    symbols. References: docs/model.md §6.2.
    """
    del g
    return -a * (1 - phi)


def tight_ratio(rho, k, phi, a, g):
    """``lim_{B -> 0} dU / F(B) = (a phi - g) rho^(-k) - (a - g)`` for ``F(x) ~ c x^k``.

    `theory.symbolic.tight_budget_ratio_expr`. References: docs/model.md §6.3.
    """
    return (a * phi - g) * rho ** (-k) - (a - g)


def point_mass_budget(length):
    """``B* = l`` for ``L = l`` (`theory.closed_forms.point_mass_crossover`). MODEL §6.6."""
    return length


def uniform_budget(l_max, phi, a, g):
    """``B* = l_max / kappa`` for ``L ~ U(0, l_max)``, ``rho < 1/kappa``.

    `theory.closed_forms.uniform_crossover`. References: docs/model.md §6.6.
    """
    return l_max * (a * phi - g) / (a - g)


def exponential_coefficients(order: int, phi, a, g) -> list:
    """Coefficients, highest power first, of ``1 + u + ... + u^(n-1) - kappa`` with ``n = order``.

    The polynomial in ``u = exp(-B/mu)`` whose root in ``(0, 1)`` is the crossover of an
    exponential length when ``rho = 1/n`` (`theory.closed_forms.exponential_polynomial`).
    References: docs/model.md §6.6.
    """
    return [1] * (order - 1) + [1 - kappa(phi, a, g)]


def exponential_crossover_budget(
    order: int, mean: float, fidelity: float, acc_raw: float, acc_guess: float
) -> float | None:
    """``B*`` for an exponential length with mean ``mean`` and ``rho = 1/order`` (tokens).

    The polynomial of `exponential_coefficients` has exactly one root in ``(0, 1)`` when
    ``1 < kappa < order`` (it is increasing on ``(0, 1)`` from ``1 - kappa`` to ``order - kappa``);
    outside that range there is no crossover and this returns ``None``.

    References: docs/model.md §6.6.
    """
    kap = kappa(fidelity, acc_raw, acc_guess)
    if not 1.0 < kap < order:
        return None
    coeffs = np.asarray(exponential_coefficients(order, fidelity, acc_raw, acc_guess), dtype=float)
    roots = np.roots(coeffs)
    inside = [r.real for r in roots if abs(r.imag) < 1e-9 and 0.0 < r.real < 1.0]
    if len(inside) != 1:
        raise ArithmeticError(f"expected one root in (0, 1), got {roots}")
    return float(-mean * math.log(inside[0]))


def closed_form_crossover(
    dist, *, compress_ratio: float, fidelity: float, acc_raw: float, acc_guess: float
) -> float | None:
    """The §6.6 closed-form ``B*`` for ``dist`` where one exists, else ``None``.

    Covered: point mass (``g < a phi < a``), uniform with ``rho < 1/kappa``, exponential with
    ``1/rho`` an integer ``n >= 2`` and ``1 < kappa < n``.

    Raises:
      InputError: ``dist`` is not a `theory.LengthDist`, a model scalar is outside its range
        (`theory.check_model`), or ``dist`` is exponential with ``1/rho`` above
        ``_MAX_EXP_ORDER`` (the polynomial of order ``1/rho`` is not solved; `theory.crossover`
        answers for any ``rho``).

    References: docs/model.md §6.6.
    """
    spell = Spell("closed_form_crossover")
    check_dist(dist, spell)
    compress_ratio, fidelity, acc_raw, acc_guess = check_model(
        compress_ratio, fidelity, acc_raw, acc_guess, spell
    )
    if dist.name == "exponential" and not 1.0 / compress_ratio <= _MAX_EXP_ORDER:
        raise InputError(
            f"{spell.lead('compress_ratio')} must be at least 1/{_MAX_EXP_ORDER} for the "
            f"exponential closed form (a polynomial of order 1/compress_ratio); got "
            f"{compress_ratio:g} (theory.crossover covers it)."
        )
    if not acc_guess < acc_raw * fidelity < acc_raw:
        return None
    kap = kappa(fidelity, acc_raw, acc_guess)
    p = dist.params
    if dist.name == "point":
        return float(point_mass_budget(p["length"]))
    if dist.name == "uniform" and compress_ratio < 1.0 / kap:
        return float(uniform_budget(p["max"], fidelity, acc_raw, acc_guess))
    if dist.name == "exponential":
        order = round(1.0 / compress_ratio)
        if order >= 2 and abs(order * compress_ratio - 1.0) < 1e-12:
            return exponential_crossover_budget(order, p["mean"], fidelity, acc_raw, acc_guess)
    return None
