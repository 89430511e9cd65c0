"""The sympy side of theory/: Propositions 1-2 as identities, and the §6.6 closed forms.

The references typed in here are the formulas as docs/model.md prints them; the library derives
its expressions from the reader, so each comparison checks the derivation against the spec.
"""

import functools
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from theory import closed_forms as CF
from theory import symbolic as S
from theory._formulas import exponential_crossover_budget

B, F, a, g, phi, rho = S.B, S.F, S.a, S.g, S.phi, S.rho
KAPPA = (a - g) / (a * phi - g)


def test_identity_coverage_plus_replacement_is_delta():
    """docs/model.md §4: C + R - dU simplifies to exactly 0 for an arbitrary F."""
    assert S.identity_residual() == 0


def test_decomposition_matches_model_formulas():
    """docs/model.md §6.1: dU, C, R as the model prints them."""
    d = S.decomposition()
    assert sp.simplify(d.delta - ((a * phi - g) * F(B / rho) - (a - g) * F(B))) == 0
    assert sp.simplify(d.coverage - (a * phi - g) * (F(B / rho) - F(B))) == 0
    assert sp.simplify(d.replacement - (-a * (1 - phi) * F(B))) == 0
    assert (S.dU, S.C, S.R) == tuple(d)


def test_loose_budget_limit_expr():
    """docs/model.md §6.2: dU -> -a (1 - phi) as B -> inf."""
    assert sp.simplify(S.loose_budget_limit_expr() + a * (1 - phi)) == 0


def test_tight_budget_ratio_expr():
    """docs/model.md §6.3: lim dU/F(B) = (a phi - g) rho^(-k) - (a - g) for F ~ c x^k."""
    expected = (a * phi - g) * rho ** (-S.k) - (a - g)
    assert sp.simplify(S.tight_budget_ratio_expr() - expected) == 0


@functools.cache
def _tight_ratio():
    return sp.lambdify((rho, S.k, phi, a, g), S.tight_budget_ratio_expr(), "math")


@given(
    rho_=st.floats(0.01, 0.99),
    k_=st.floats(0.2, 5.0),
    w=st.floats(0.02, 0.98),
    a_=st.floats(0.2, 1.0),
    g_frac=st.floats(0.0, 0.95),
)
def test_tight_ratio_sign_is_the_condition(rho_, k_, w, a_, g_frac):
    """docs/model.md §6.3: the limit ratio is > 0 exactly when rho^(-k) > kappa."""
    g_ = g_frac * a_
    phi_ = (g_ + w * (a_ - g_)) / a_  # g < a phi < a, kappa = 1/w
    ratio = _tight_ratio()(rho_, k_, phi_, a_, g_)
    gap = rho_ ** (-k_) - 1.0 / w
    if abs(gap) > 1e-9:
        assert (ratio > 0) == (gap > 0)


def test_uniqueness_lemma():
    """docs/model.md §6.4: d ln r / dB = (e(B/rho) - e(B)) / B, so e non-increasing => r non-increasing."""
    assert S.uniqueness_lemma_residual() == 0


def test_scale_equivariance_symbolic():
    """docs/model.md §6.5: dU for s L at s B equals dU for L at B."""
    assert S.scale_equivariance_residual() == 0


@pytest.mark.parametrize(
    "name,proved",
    [
        ("uniform", True),
        ("exponential", True),
        ("weibull", True),
        ("gamma", None),
        ("lognormal", None),
    ],
)
def test_elasticity_symbolic(name, proved):
    """docs/model.md §6.4: sympy proves e(x) non-increasing where it can, and says None otherwise."""
    assert S.elasticity_nonincreasing_symbolic(name) is proved


def test_point_mass_closed_form():
    """docs/model.md §6.6: L = l gives dU = a phi - g on [rho l, l), -a(1 - phi) from l on, B* = l."""
    res = CF.point_mass_crossover()
    assert res.crossover_budget == CF.l
    assert [sp.simplify(b) for b in res.breakpoints] == [rho * CF.l, CF.l]
    zero, middle, last = res.region_delta
    assert zero == 0
    assert sp.simplify(middle - (a * phi - g)) == 0
    assert sp.simplify(last + a * (1 - phi)) == 0


def test_uniform_closed_form():
    """docs/model.md §6.6: L ~ U(0, l_max), rho < 1/kappa gives B* = l_max / kappa."""
    assert sp.simplify(CF.uniform_crossover().crossover_budget - CF.l / KAPPA) == 0


@pytest.mark.parametrize("order", [2, 3, 4, 5])
def test_exponential_polynomial(order):
    """docs/model.md §6.6: rho = 1/n, u = exp(-B/mu): 1 + u + ... + u^(n-1) = kappa."""
    u = CF.u
    expected = sum(u**i for i in range(order)) - KAPPA
    assert sp.simplify(CF.exponential_polynomial(order) - expected) == 0


def test_exponential_half_closed_form():
    """docs/model.md §6.6: n = 2 gives B* = -mu ln(kappa - 1)."""
    derived = CF.exponential_half_crossover()
    assert derived.has(sp.log)
    assert sp.simplify(sp.exp(-derived / CF.mu) - (KAPPA - 1)) == 0


@given(order=st.integers(2, 6), w_frac=st.floats(0.02, 0.98), mean=st.floats(1.0, 1e4))
def test_exponential_root_solves_polynomial(order, w_frac, mean):
    """docs/model.md §6.6: the returned B* makes sum_{i<n} u^i = kappa with u = exp(-B*/mu)."""
    kap = 1.0 + w_frac * (order - 1)  # 1 < kappa < n
    a_, g_ = 0.9, 0.1
    phi_ = (g_ + (a_ - g_) / kap) / a_
    b = exponential_crossover_budget(order, mean, phi_, a_, g_)
    assert b is not None
    u = math.exp(-b / mean)
    assert 0 < u < 1
    assert math.isclose(sum(u**i for i in range(order)), kap, rel_tol=1e-9)


def test_exponential_out_of_range_has_no_root():
    """docs/model.md §6.6: a root in (0, 1) needs 1 < kappa < n."""
    a_, g_ = 0.9, 0.1
    phi_ = (g_ + (a_ - g_) / 2.5) / a_  # kappa = 2.5 >= n = 2
    assert exponential_crossover_budget(2, 100.0, phi_, a_, g_) is None
    b = exponential_crossover_budget(3, 100.0, phi_, a_, g_)
    assert b is not None and np.isfinite(b)


def test_public_names_resolve():
    """Every name in theory.__all__ is importable (the package loads its modules lazily)."""
    import theory

    for name in theory.__all__:
        assert getattr(theory, name) is not None, name
    assert sorted(dir(theory)) == sorted(theory.__all__)
