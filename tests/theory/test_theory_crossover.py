"""Numbers from theory/: decomposition signs, limits, closed forms vs numeric roots, uniqueness.

References are independent of the library's code path: the model's formulas typed as float64
numpy, scipy's CDFs, the §6.6 formulas as printed in docs/model.md.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as sst
import sympy as sp
from hypothesis import assume, given
from hypothesis import strategies as st

import theory
from retcon.errors import InputError
from tests.strategies import ANY, NICE, dist_of, readers, shape_scale
from theory import symbolic as S
from theory._crossover import REASON_WEAK
from theory._twins import decompose_jax, decompose_numpy

# --- strategies (shared: tests/strategies.py, docs/testing.md) ------------------------------------


def ref_delta(cdf, b, rho, phi, a, g):
    """docs/model.md §6.1 typed as numpy: dU = (a phi - g) F(B/rho) - (a - g) F(B)."""
    return (a * phi - g) * cdf(b / rho) - (a - g) * cdf(b)


# --- §4 / §6.1 ----------------------------------------------------------------------------------


# A raw accuracy and the guess as a share of it, for the §4 decomposition's properties.
ACC_GUESS = dict(a=st.floats(0.2, 1.0), g_frac=st.floats(0.0, 0.99))


@given(
    spec=ANY,
    rho=st.floats(0.05, 0.95),
    phi=st.floats(0.0, 1.0),
    **ACC_GUESS,
    budgets=st.lists(st.floats(0.5, 2e4), min_size=1, max_size=8),
)
def test_decomposition_signs_and_identity(spec, rho, phi, a, g_frac, budgets):
    """docs/model.md §4, §6.1: C + R = dU; R <= 0 when phi <= 1; C >= 0 when also a phi >= g."""
    g = g_frac * a
    dist = dist_of(spec)
    dec = theory.delta_curve(
        dist, budgets, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g
    )
    b = np.asarray(budgets)
    np.testing.assert_allclose(dec.coverage + dec.replacement, dec.delta, atol=1e-12)
    np.testing.assert_allclose(dec.delta, ref_delta(dist.cdf, b, rho, phi, a, g), atol=1e-12)
    assert np.all(dec.replacement <= 1e-15)
    if a * phi >= g:
        assert np.all(dec.coverage >= -1e-15)


@given(spec=NICE, rho=st.floats(0.05, 0.95), phi=st.floats(1.0, 3.0), **ACC_GUESS)
def test_replacement_signed_above_one(spec, rho, phi, a, g_frac):
    """docs/model.md §4: with phi > 1 the replacement effect is >= 0 (the reader clipped at 1, §2)."""
    dist = dist_of(spec)
    dec = theory.delta_curve(
        dist, [dist.mean], compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g_frac * a
    )
    assert dec.replacement[0] >= -1e-15
    assert dec.delta[0] >= -1e-15


# --- §6.2, §6.3 ---------------------------------------------------------------------------------


@given(spec=ANY, rho=st.floats(0.05, 0.95), reader=readers())
def test_loose_budget_limit(spec, rho, reader):
    """docs/model.md §6.2: dU -> -a (1 - phi) < 0 once F(B) = 1."""
    phi, a, g = reader
    dist = dist_of(spec)
    lim = theory.loose_budget_limit(fidelity=phi, acc_raw=a, acc_guess=g)
    assert math.isclose(lim, -a * (1 - phi), rel_tol=1e-12, abs_tol=1e-15)
    far = float(dist.ppf(1 - 1e-15)) * 10 if dist.name != "uniform" else dist.params["max"] * 1.01
    dec = theory.delta_curve(dist, [far], compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g)
    assert math.isclose(dec.delta[0], lim, rel_tol=1e-9, abs_tol=1e-12)


@given(spec=NICE, rho=st.floats(0.05, 0.95), reader=readers())
def test_tight_budget_sign_at_small_budget(spec, rho, reader):
    """docs/model.md §6.3: sign of dU at small B is the sign of rho^(-k) - kappa.

    The condition is a limit B -> 0. Power tails (finite k) are checked at F(B) = 1e-30; the
    lognormal (k = inf) reaches its limit only as fast as exp(-(ln B)^2), so it is checked where
    F(B) = 1e-300 and only for parameters whose limit has set in there (dU < 0 below float64
    range is a budget no reader sees).
    """
    phi, a, g = reader
    dist = dist_of(spec)
    tight = theory.tight_budget_condition(
        dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g
    )
    assert math.isclose(tight.kappa, (a - g) / (a * phi - g), rel_tol=1e-12)
    k = dist.tail_exponent
    kw = dict(compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g)
    if math.isfinite(k):
        assert math.isclose(tight.value, rho ** (-k), rel_tol=1e-12)
        assert math.isclose(
            tight.limit_ratio, (a * phi - g) * rho ** (-k) - (a - g), rel_tol=1e-9, abs_tol=1e-12
        )
        assume(abs(math.log(tight.value / tight.kappa)) > 0.05)
        small = float(dist.ppf(1e-30))
    else:
        assert tight.holds and tight.value == math.inf
        small = float(dist.ppf(1e-300))
        r = dist.cdf(small / rho) / dist.cdf(small)
        assume(r > tight.kappa * 1.01)
    d = theory.delta_curve(dist, [small], **kw).delta[0]
    assert (d > 0) == tight.holds


def test_tight_budget_condition_accepts_exponent():
    """docs/model.md §6.3: the condition depends on F only through k; a number k gives the same answer."""
    kw = dict(compress_ratio=0.5, fidelity=0.85, acc_raw=0.9, acc_guess=0.1)
    dist = theory.make_length_dist("gamma", shape=3.0, scale=10.0)
    assert theory.tight_budget_condition(dist, **kw) == theory.tight_budget_condition(3.0, **kw)
    assert theory.tight_budget_condition(0.2, **kw).holds is False  # 2^0.2 = 1.15 < kappa = 1.20


def test_tight_budget_condition_past_the_float_range():
    """docs/model.md §6.3: ``rho^(-k)`` beyond the largest float is +inf, and the condition holds.

    The slow fuzz found ``rho = 5e-324`` (subnormal) with ``k = 1`` raising ``OverflowError``
    (there with ``phi = 0``, where kappa is infinite and the condition fails).
    """
    kw = dict(fidelity=0.85, acc_raw=0.9, acc_guess=0.1)
    dist = theory.make_length_dist("uniform", max=200.0)
    tight = theory.tight_budget_condition(dist, compress_ratio=5e-324, **kw)
    assert tight.value == math.inf and tight.holds
    assert theory.tight_budget_condition(400.0, compress_ratio=0.01, **kw).value == math.inf
    worthless = dict(fidelity=0.0, acc_raw=1.0, acc_guess=0.0)  # kappa = inf
    assert not theory.tight_budget_condition(dist, compress_ratio=5e-324, **worthless).holds


@given(
    spec=st.sampled_from(
        [
            ("exponential", {"mean": 300.0}),
            ("uniform", {"max": 900.0}),
            ("gamma", {"shape": 2.0, "scale": 100.0}),
            ("weibull", {"shape": 1.5, "scale": 250.0}),
        ]
    ),
    reader=readers(),
    margin=st.floats(0.02, 0.98),
)
def test_tight_condition_fails_means_none(spec, reader, margin):
    """docs/model.md §6.3-6.4: rho^(-k) < kappa => no crossover, dU < 0 wherever F(B) > 0."""
    phi, a, g = reader
    dist = dist_of(spec)
    kap = (a - g) / (a * phi - g)
    lo = kap ** (-1.0 / dist.tail_exponent)  # rho above this makes rho^(-k) < kappa
    rho = lo + margin * (1 - lo)
    assume(0.0 < rho < 1.0 and rho ** (-dist.tail_exponent) < kap * (1 - 1e-6))
    res = theory.crossover(dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g)
    assert res.status == "none" and res.reason == REASON_WEAK and res.crossover_budget is None
    grid = theory.scan_budgets(dist, rho)
    grid = grid[dist.cdf(grid) > 0]
    d = ref_delta(dist.cdf, grid, rho, phi, a, g)
    assert np.all(d < 0)


# --- §6.4 ---------------------------------------------------------------------------------------


@given(spec=NICE, rho=st.floats(0.05, 0.95), reader=readers())
def test_unique_crossover_when_elasticity_nonincreasing(spec, rho, reader):
    """docs/model.md §6.4: e non-increasing and rho^(-k) > kappa => one root; dU > 0 below, < 0 above."""
    phi, a, g = reader
    dist = dist_of(spec)
    assert theory.elasticity_nonincreasing(dist)
    tight = theory.tight_budget_condition(
        dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g
    )
    assume(tight.value > tight.kappa * 1.01)
    if not math.isfinite(
        tight.value
    ):  # lognormal: keep parameters whose root is within float64 range
        tiny = float(dist.ppf(1e-290))
        assume(ref_delta(dist.cdf, tiny, rho, phi, a, g) > 0)
    res = theory.crossover(dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g)
    assert res.status == "unique", res
    b = res.crossover_budget
    assert res.bracket[0] <= b <= res.bracket[1]
    assert abs(ref_delta(dist.cdf, b, rho, phi, a, g)) < 1e-9
    below = np.geomspace(max(float(dist.ppf(1e-290)), b * 1e-12), b * (1 - 1e-6), 50)
    below = below[dist.cdf(below / rho) > 0]
    above = np.geomspace(b * (1 + 1e-6), float(dist.ppf(1 - 1e-9)) * 2, 50)
    assert np.all(ref_delta(dist.cdf, below, rho, phi, a, g) > 0)
    assert np.all(ref_delta(dist.cdf, above, rho, phi, a, g) < 0)


class _TwoBumps:
    """Duck-typed length law: an even mixture of lognormals at 100 and 3000 tokens."""

    continuous = True
    parts = (sst.lognorm(0.2, scale=100.0), sst.lognorm(0.2, scale=3000.0))

    def ppf(self, p):
        return np.geomspace(20.0, 2e4, np.size(p))

    def elasticity(self, x):
        f = sum(d.pdf(x) for d in self.parts) / 2
        F = sum(d.cdf(x) for d in self.parts) / 2
        return x * f / F


def test_elasticity_check_can_fail():
    """docs/model.md §6.4: the numeric check is not vacuous: a two-bump length law fails it."""
    assert not theory.elasticity_nonincreasing(_TwoBumps())
    assert theory.elasticity_nonincreasing(
        theory.make_length_dist("lognormal", sigma=0.2, scale=100.0)
    )
    assert not theory.elasticity_nonincreasing(theory.make_length_dist("point", length=10.0))


def test_multiple_crossings_reported():
    """docs/model.md §6.7: without a monotone elasticity dU can change sign more than once."""
    # Two length clusters: 100 and 1000 tokens; rho = 0.5 moves each only part of the way.
    lengths = np.r_[np.full(50, 100.0), np.full(50, 1000.0)]
    dist = theory.empirical_lengths(lengths)
    res = theory.crossover(dist, compress_ratio=0.5, fidelity=0.85, acc_raw=0.9, acc_guess=0.1)
    assert res.status == "multiple"
    assert res.crossover_budget == pytest.approx(1000.0, rel=1e-9)
    assert res.bracket[0] == pytest.approx(100.0, rel=1e-9)


# --- §6.5 ---------------------------------------------------------------------------------------


@given(spec=ANY, s=st.floats(0.05, 20.0), rho=st.floats(0.05, 0.95), reader=readers())
def test_scale_equivariance(spec, s, rho, reader):
    """docs/model.md §6.5: B*(s) = s B*(1)."""
    _check_scale(spec, s, rho, reader)


def _check_scale(spec, s, rho, reader):
    """§6.5's equivariance B*(s) = s B*(1) for one law; returns the law, B*(1) and the reader."""
    phi, a, g = reader
    dist = dist_of(spec)
    kw = dict(compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g)
    one, scaled = theory.crossover(dist, **kw), theory.crossover(dist.scaled(s), **kw)
    assert one.status == scaled.status
    if one.status == "unique":
        assert scaled.crossover_budget == pytest.approx(s * one.crossover_budget, rel=1e-6)
    return dist, one, kw


# Gamma and Weibull laws with shape in (0.2, 1): heavy mass near 0, quantiles down to subnormal
# floats at p = 1e-300 (the scan must stay in normal floats).
SUB_ONE = st.one_of(shape_scale("gamma", 0.2, 0.999), shape_scale("weibull", 0.2, 0.999))


def test_crossover_weibull_shape_below_one_regression():
    """docs/model.md §6.4: the scan of a Weibull(0.7) law ran into subnormal budgets and crashed."""
    dist = theory.make_length_dist("weibull", shape=0.7, scale=300.0)
    res = theory.crossover(dist, compress_ratio=0.41, fidelity=0.85, acc_raw=0.8, acc_guess=0.1)
    assert res.status == "unique" and 423 < res.crossover_budget < 633
    assert theory.scan_budgets(dist, 0.41).min() >= 1e-280


@given(spec=SUB_ONE, s=st.floats(0.05, 20.0), rho=st.floats(0.05, 0.95), reader=readers())
def test_scale_equivariance_shape_below_one(spec, s, rho, reader):
    """docs/model.md §6.5 for shapes in (0.2, 1): crossover runs, B*(s) = s B*(1), and at B* the
    curve changes sign (dU > 0 just below, < 0 just above)."""
    dist, one, kw = _check_scale(spec, s, rho, reader)
    if one.status == "unique":
        b = one.crossover_budget
        d = theory.delta_curve(dist, [b * 0.999, b * 1.001], **kw).delta
        assert d[0] >= 0 >= d[1]


# --- §6.6 closed forms --------------------------------------------------------------------------


@given(length=st.floats(1.0, 1e4), rho=st.floats(0.02, 0.98), reader=readers())
def test_point_mass_closed_form_equals_numeric(length, rho, reader):
    """docs/model.md §6.6: L = l gives B* = l."""
    phi, a, g = reader
    dist = theory.make_length_dist("point", length=length)
    res = theory.crossover(dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g)
    assert res.status == "unique"
    assert res.crossover_budget == pytest.approx(length, rel=1e-6)
    cf = theory.closed_form_crossover(
        dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g
    )
    assert cf == pytest.approx(length, rel=1e-12)


@given(l_max=st.floats(1.0, 1e4), rho_frac=st.floats(0.02, 0.98), reader=readers())
def test_uniform_closed_form_equals_numeric(l_max, rho_frac, reader):
    """docs/model.md §6.6: U(0, l_max), rho < 1/kappa gives B* = l_max / kappa."""
    phi, a, g = reader
    kap = (a - g) / (a * phi - g)
    rho = rho_frac / kap
    dist = theory.make_length_dist("uniform", max=l_max)
    res = theory.crossover(dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g)
    assert res.status == "unique"
    assert res.crossover_budget == pytest.approx(l_max / kap, rel=1e-6)
    cf = theory.closed_form_crossover(
        dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g
    )
    assert cf == pytest.approx(l_max / kap, rel=1e-12)


@given(
    mean=st.floats(1.0, 1e4),
    order=st.integers(2, 6),
    w_frac=st.floats(0.02, 0.98),
    a=st.floats(0.3, 1.0),
    g_frac=st.floats(0.0, 0.9),
)
def test_exponential_closed_form_equals_numeric(mean, order, w_frac, a, g_frac):
    """docs/model.md §6.6: exponential, rho = 1/n, 1 < kappa < n: the polynomial root; n = 2: -mu ln(kappa - 1)."""
    kap = 1.0 + w_frac * (order - 1)
    g = g_frac * a
    phi = (g + (a - g) / kap) / a
    dist = theory.make_length_dist("exponential", mean=mean)
    kw = dict(compress_ratio=1.0 / order, fidelity=phi, acc_raw=a, acc_guess=g)
    res = theory.crossover(dist, **kw)
    cf = theory.closed_form_crossover(dist, **kw)
    assert res.status == "unique"
    assert res.crossover_budget == pytest.approx(cf, rel=1e-6)
    if order == 2:
        assert cf == pytest.approx(-mean * math.log(kap - 1.0), rel=1e-9)


# --- other distributions: independent numeric roots ---------------------------------------------


@pytest.mark.parametrize(
    "name,params,frozen",
    [
        ("gamma", {"shape": 2.5, "scale": 120.0}, sst.gamma(2.5, scale=120.0)),
        ("weibull", {"shape": 1.7, "scale": 400.0}, sst.weibull_min(1.7, scale=400.0)),
        ("lognormal", {"sigma": 0.8, "scale": 250.0}, sst.lognorm(0.8, scale=250.0)),
    ],
)
def test_numeric_root_matches_independent_solve(name, params, frozen):
    """docs/model.md §6.4: the crossover solves dU = 0 (scipy CDF, bisection on a coarse bracket)."""
    rho, phi, a, g = 0.35, 0.8, 0.85, 0.15
    res = theory.crossover(
        theory.make_length_dist(name, **params),
        compress_ratio=rho,
        fidelity=phi,
        acc_raw=a,
        acc_guess=g,
    )

    def d(b):
        return (a * phi - g) * frozen.cdf(b / rho) - (a - g) * frozen.cdf(b)

    lo, hi = frozen.ppf(1e-6), frozen.ppf(1 - 1e-9)
    assert d(lo) > 0 > d(hi)
    for _ in range(200):  # plain bisection, independent of brentq
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if d(mid) > 0 else (lo, mid)
    assert res.status == "unique"
    assert res.crossover_budget == pytest.approx(0.5 * (lo + hi), rel=1e-8)


@pytest.mark.slow
def test_empirical_sample_close_to_parametric():
    """docs/model.md §6, §9: the crossover of 3000 sampled lengths is within 5% of the exact one."""
    kw = dict(compress_ratio=0.3, fidelity=0.85, acc_raw=0.9, acc_guess=0.1)
    for name, params in [
        ("exponential", {"mean": 300.0}),
        ("gamma", {"shape": 2.0, "scale": 150.0}),
    ]:
        dist = theory.make_length_dist(name, **params)
        emp = theory.empirical_lengths(dist.sample(jax.random.key(7), (3000,)))
        exact = theory.crossover(dist, **kw).crossover_budget
        est = theory.crossover(emp, **kw)
        assert est.status in ("unique", "multiple")
        assert est.crossover_budget == pytest.approx(exact, rel=0.05)


# --- conditions that rule a crossover out -------------------------------------------------------


# Any length law, compress ratio and raw accuracy; the guess and fidelity each test's own.
RULED_OUT = dict(spec=ANY, rho=st.floats(0.05, 0.95), a=st.floats(0.3, 1.0))


def _ruled_out(spec, rho, phi, a, g, reason):
    """``theory.crossover`` has status none for ``reason``; returns the length law."""
    dist = dist_of(spec)
    res = theory.crossover(dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g)
    assert (res.status, res.reason) == ("none", reason)
    return dist


@given(**RULED_OUT, g_frac=st.floats(0.05, 0.95), phi_frac=st.floats(0.0, 1.0))
def test_useless_record_means_retention_wins(spec, rho, a, g_frac, phi_frac):
    """docs/model.md §6: a phi <= g => dU <= 0 everywhere, status none, reason 'a*phi <= g'."""
    g = g_frac * a
    phi = phi_frac * g / a
    dist = _ruled_out(spec, rho, phi, a, g, "a*phi <= g")
    grid = theory.scan_budgets(dist, rho)
    assert np.all(ref_delta(dist.cdf, grid, rho, phi, a, g) <= 1e-15)


@given(**RULED_OUT, g_frac=st.floats(0.0, 0.95), phi=st.floats(1.0, 2.0))
def test_no_detail_loss_means_consolidation_never_loses(spec, rho, a, g_frac, phi):
    """docs/model.md §6: phi >= 1 => dU >= 0 everywhere, status none, reason 'phi >= 1'."""
    g = g_frac * a
    dist = _ruled_out(spec, rho, phi, a, g, "phi >= 1")
    dec = theory.delta_curve(
        dist,
        theory.scan_budgets(dist, rho),
        compress_ratio=rho,
        fidelity=phi,
        acc_raw=a,
        acc_guess=g,
    )
    assert np.all(dec.delta >= -1e-15)


# --- twins --------------------------------------------------------------------------------------


@given(f_b=st.floats(0.0, 1.0), extra=st.floats(0.0, 1.0), reader=readers())
def test_numpy_and_jax_twins_equal_sympy(f_b, extra, reader):
    """docs/model.md §6.1: the numpy and JAX functions equal the sympy expressions at 30 digits."""
    phi, a, g = reader
    f_s = f_b + extra * (1.0 - f_b)  # F(B/rho) >= F(B)
    d = S.decomposition()
    subs = {
        S.F(S.B / S.rho): sp.Float(f_s, 30),
        S.F(S.B): sp.Float(f_b, 30),
        S.phi: sp.Float(phi, 30),
        S.a: sp.Float(a, 30),
        S.g: sp.Float(g, 30),
    }
    ref = [float(e.subs(subs)) for e in d]
    np_out = decompose_numpy(f_b, f_s, fidelity=phi, acc_raw=a, acc_guess=g)
    with jax.enable_x64(True):
        jx_out = decompose_jax(
            jnp.float64(f_b), jnp.float64(f_s), fidelity=phi, acc_raw=a, acc_guess=g
        )
        jx_out = [float(v) for v in jx_out]
    for r, n_, j in zip(ref, np_out, jx_out):
        assert float(n_) == pytest.approx(r, abs=1e-14)
        assert j == pytest.approx(r, abs=1e-14)


def test_delta_curve_jax_matches_numpy_and_jits():
    """docs/model.md §6.1: the JAX curve from a jax CDF equals the numpy curve; jit and vmap compose."""
    dist = theory.make_length_dist("exponential", mean=300.0)
    budgets = np.geomspace(10.0, 3000.0, 16)
    kw = dict(compress_ratio=0.3, fidelity=0.85, acc_raw=0.9, acc_guess=0.1)
    ref = theory.delta_curve(dist, budgets, **kw)

    def cdf(x):
        return 1.0 - jnp.exp(-x / 300.0)

    with jax.enable_x64(True):
        out = jax.jit(lambda b: theory.delta_curve_jax(cdf, b, **kw))(jnp.asarray(budgets))
        per_rho = jax.vmap(
            lambda r: (
                theory.delta_curve_jax(
                    cdf, budgets, compress_ratio=r, fidelity=0.85, acc_raw=0.9, acc_guess=0.1
                ).delta
            )
        )(jnp.array([0.3, 0.5]))
    for r, o in zip(ref, out):
        np.testing.assert_allclose(np.asarray(o), r, atol=1e-12)
    np.testing.assert_allclose(np.asarray(per_rho[0]), ref.delta, atol=1e-12)


# --- length distributions -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,params",
    [
        ("point", {"length": 50.0}),
        ("uniform", {"max": 80.0}),
        ("exponential", {"mean": 40.0}),
        ("gamma", {"shape": 2.0, "scale": 20.0}),
        ("lognormal", {"sigma": 0.5, "scale": 35.0}),
        ("weibull", {"shape": 1.5, "scale": 45.0}),
    ],
)
def test_sampling_matches_cdf_and_key(name, params):
    """docs/model.md §6: JAX samples follow F (KS distance small); the same key gives the same draws."""
    dist = theory.make_length_dist(name, **params)
    key = jax.random.key(3)
    x = np.asarray(dist.sample(key, (3000,)), dtype=np.float64)
    np.testing.assert_array_equal(x, np.asarray(dist.sample(key, (3000,))))
    assert x.shape == (3000,) and np.all(x > 0)
    if dist.continuous:
        assert sst.kstest(x, dist.cdf).statistic < 0.04
    assert x.mean() == pytest.approx(dist.mean, rel=0.06)
    assert dist.scaled(2.0).mean == pytest.approx(2.0 * dist.mean, rel=1e-12)


def test_empirical_cdf_and_scaling():
    """docs/model.md §6.5: the empirical law is a right-continuous step CDF; scaling scales lengths."""
    emp = theory.empirical_lengths([3.0, 1.0, 2.0, 2.0])
    np.testing.assert_allclose(
        emp.cdf([0.5, 1.0, 1.5, 2.0, 3.0, 9.0]), [0, 0.25, 0.25, 0.75, 1.0, 1.0]
    )
    np.testing.assert_allclose(emp.scaled(10.0).cdf([10.0, 20.0]), [0.25, 0.75])
    assert emp.mean == pytest.approx(2.0)
    draws = np.asarray(emp.sample(jax.random.key(0), (100,)))
    assert set(np.unique(draws)) <= {1.0, 2.0, 3.0}


# --- bad input through the API ------------------------------------------------------------------

KW = dict(compress_ratio=0.3, fidelity=0.85, acc_raw=0.9, acc_guess=0.1)


@pytest.mark.parametrize(
    "override,message",
    [
        ({"compress_ratio": 1.3}, "{f}: compress_ratio must be in (0, 1); got 1.3."),
        ({"compress_ratio": 0.0}, "{f}: compress_ratio must be in (0, 1); got 0."),
        (
            {"acc_raw": 0.1, "acc_guess": 0.1},
            "{f}: acc_raw must be greater than acc_guess (0.1), in (0.1, 1]; got 0.1.",
        ),
        (
            {"acc_raw": 0.05},
            "{f}: acc_raw must be greater than acc_guess (0.1), in (0.1, 1]; got 0.05.",
        ),
        ({"fidelity": -0.2}, "{f}: fidelity must be in [0, inf); got -0.2."),
        ({"acc_guess": -0.1}, "{f}: acc_guess must be in [0, 1); got -0.1."),
    ],
)
def test_api_rejects_bad_model_input(override, message):
    """docs/model.md §6 domain: each bad scalar raises InputError (a ValueError) naming the
    function and the argument as Python spells them (the CLI's spelling is in test_cli_crossover)."""
    dist = theory.make_length_dist("exponential", mean=300.0)
    with pytest.raises(ValueError) as err:
        theory.crossover(dist, **{**KW, **override})
    assert isinstance(err.value, InputError)
    assert str(err.value) == message.replace("{f}", "crossover")
    with pytest.raises(InputError) as err:
        theory.delta_curve(dist, [100.0], **{**KW, **override})
    assert str(err.value) == message.replace("{f}", "delta_curve")
    assert "--" not in str(err.value)


@pytest.mark.parametrize(
    "call,message",
    [
        (
            lambda: theory.delta_curve(
                theory.make_length_dist("point", length=5.0), [100.0, -5.0], **KW
            ),
            "delta_curve: budgets must be in (0, inf) tokens; got -5.",
        ),
        (
            lambda: theory.delta_curve(theory.make_length_dist("point", length=5.0), [0.0], **KW),
            "delta_curve: budgets must be in (0, inf) tokens; got 0.",
        ),
        (
            lambda: theory.make_length_dist("cauchy", scale=1.0),
            "make_length_dist: name must be one of point, uniform, exponential, gamma, lognormal, "
            "weibull; got 'cauchy'.",
        ),
        (
            lambda: theory.make_length_dist("gamma", shape=2.0),
            "make_length_dist: scale is required for name='gamma': a number in (0, inf); got nothing.",
        ),
        (
            lambda: theory.make_length_dist("exponential", mean=-3.0),
            "make_length_dist: mean must be in (0, inf); got -3.",
        ),
        (
            lambda: theory.make_length_dist("uniform", max=100.0, mean=3.0),
            "make_length_dist: mean does not apply to name='uniform' (it takes max); got 3.0.",
        ),
        (
            lambda: theory.empirical_lengths([]),
            "empirical_lengths(sample) must hold at least one length; got none.",
        ),
        (
            lambda: theory.empirical_lengths([3.0, 0.0]),
            "empirical_lengths(sample) lengths must be in (0, inf) tokens; got 0.",
        ),
    ],
)
def test_api_rejects_bad_dist_and_budget(call, message):
    """docs/model.md §6 domain: bad distributions and budgets raise InputError with one line,
    naming the function and the argument as Python spells them, never a CLI option."""
    with pytest.raises(InputError) as err:
        call()
    assert str(err.value) == message
    assert "\n" not in str(err.value)
    assert "--" not in str(err.value)


def test_one_check_speaks_python_and_cli():
    """The same check spells the argument for its caller: ``make_length_dist("lognormal", mean=5)``
    names the function and ``mean`` from Python, and ``--mean``/``--dist`` inside the CLI."""
    from retcon.errors import cli_spelling

    with pytest.raises(InputError) as err:
        theory.make_length_dist("lognormal", mean=5)
    assert str(err.value) == (
        "make_length_dist: mean does not apply to name='lognormal' (it takes sigma and scale); "
        "got 5."
    )
    with cli_spelling(), pytest.raises(InputError) as err:
        theory.make_length_dist("lognormal", mean=5)
    assert str(err.value) == (
        "--mean does not apply to --dist lognormal (it takes --sigma and --scale); got 5."
    )
    with pytest.raises(InputError) as err:  # the CLI spelling ends with the block
        theory.kappa(0.5, 0.1, 0.1)
    assert str(err.value).startswith("kappa: acc_raw must be greater than acc_guess")
