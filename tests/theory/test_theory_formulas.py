"""The run-time formulas of theory/ against their sources: sympy's derivations and scipy's laws.

`theory._formulas` writes the results of theory.symbolic and theory.closed_forms out as plain
arithmetic, so `retcon crossover` neither imports sympy nor derives anything per process; the
length families' CDF, quantiles, densities and means are numpy closed forms instead of
scipy.stats. Each is checked here against what it replaces: the formulas called with sympy
symbols give the derived expressions exactly; on a grid of numbers they agree with the
lambdified derivations; the families agree with scipy.stats. A subprocess checks that the
crossover path imports none of sympy, scipy.stats, scipy.optimize, JAX or matplotlib.
"""

import functools
import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import scipy.stats as sst
import sympy as sp

import theory
from theory import _formulas as FM
from theory import closed_forms as CF
from theory import symbolic as S

# One parameter set per family of theory.DIST_PARAMS, with a shape below 1 where there is one.
FAMILIES = {
    "point": [{"length": 400.0}],
    "uniform": [{"max": 1000.0}],
    "exponential": [{"mean": 300.0}],
    "gamma": [{"shape": 2.5, "scale": 150.0}, {"shape": 0.4, "scale": 150.0}],
    "lognormal": [{"sigma": 0.8, "scale": 300.0}],
    "weibull": [{"shape": 1.5, "scale": 300.0}, {"shape": 0.4, "scale": 300.0}],
}
CONTINUOUS = [(n, p) for n, ps in FAMILIES.items() if n != "point" for p in ps]

F_B, F_S = sp.symbols("F_B F_S", nonnegative=True)
# F(B), F(B/rho) of the derivation -> the two CDF values the run-time formulas take.
_CDF_VALUES: dict[sp.Basic | complex, sp.Basic | complex] = {S.F(S.B / S.rho): F_S, S.F(S.B): F_B}

# A grid of readers with g < a phi < a, and of compression ratios and tail exponents.
_A = np.array([0.4, 0.7, 0.9, 1.0])
_G_FRAC = np.array([0.0, 0.3, 0.8])
_W = np.array([0.05, 0.4, 0.9])  # kappa = 1 / w
a_grid, g_frac, w_grid = (v.ravel() for v in np.meshgrid(_A, _G_FRAC, _W, indexing="ij"))
g_grid = g_frac * a_grid
phi_grid = (g_grid + w_grid * (a_grid - g_grid)) / a_grid


def test_families_cover_dist_params():
    """Every family of theory.DIST_PARAMS is exercised below (a new family must be added here)."""
    assert set(FAMILIES) == set(theory.DIST_PARAMS)


# --- sympy: the formulas called with symbols are the derivations --------------------------------


def _zero(expr) -> bool:
    return sp.simplify(expr) == 0


def test_decompose_is_the_derived_decomposition():
    """docs/model.md §4, §6.1: dU, C, R of theory._formulas equal theory.symbolic's derivation."""
    subs = _CDF_VALUES
    derived = [e.subs(subs) for e in S.decomposition()]
    plain = FM.decompose(F_B, F_S, S.phi, S.a, S.g)
    for d, p in zip(derived, plain, strict=True):
        assert _zero(d - p), (d, p)
    assert _zero(FM.kappa(S.phi, S.a, S.g) - S.KAPPA)


def test_limits_are_the_derived_limits():
    """docs/model.md §6.2, §6.3: the loose-budget limit and the tight-budget ratio."""
    assert _zero(FM.loose_limit(S.phi, S.a, S.g) - S.loose_budget_limit_expr())
    assert _zero(FM.tight_ratio(S.rho, S.k, S.phi, S.a, S.g) - S.tight_budget_ratio_expr())


def test_closed_forms_are_the_derived_closed_forms():
    """docs/model.md §6.6: point mass, uniform and the exponential polynomial's coefficients."""
    assert _zero(FM.point_mass_budget(CF.l) - CF.point_mass_crossover().crossover_budget)
    uniform = FM.uniform_budget(CF.l, S.phi, S.a, S.g)
    assert _zero(uniform - CF.uniform_crossover().crossover_budget)
    for order in (2, 3, 4, 5):
        derived = sp.Poly(CF.exponential_polynomial(order), CF.u).all_coeffs()
        plain = FM.exponential_coefficients(order, S.phi, S.a, S.g)
        assert len(derived) == len(plain)
        assert all(_zero(d - p) for d, p in zip(derived, plain)), (order, derived, plain)


# --- numbers: the formulas agree with the lambdified derivations on a grid ----------------------


@functools.cache
def _lambdified():
    subs = _CDF_VALUES
    args = (S.rho, S.k, F_B, F_S, S.phi, S.a, S.g)
    exprs = [
        *(e.subs(subs) for e in S.decomposition()),
        S.loose_budget_limit_expr(),
        S.tight_budget_ratio_expr(),
    ]
    return sp.lambdify(args, exprs, "numpy")


@pytest.mark.parametrize("rho", [0.05, 0.3, 0.9])
@pytest.mark.parametrize("k", [0.3, 1.0, 4.0])
def test_formulas_match_lambdified_derivations_on_a_grid(rho, k):
    """docs/model.md §6.1-6.3: the run-time numbers equal the derivation's, to rounding."""
    f_b = np.linspace(0.0, 1.0, a_grid.size)
    f_s = f_b + 0.5 * (1.0 - f_b)  # F(B/rho) >= F(B)
    ref = _lambdified()(rho, k, f_b, f_s, phi_grid, a_grid, g_grid)
    out = [
        *FM.decompose(f_b, f_s, phi_grid, a_grid, g_grid),
        FM.loose_limit(phi_grid, a_grid, g_grid),
        FM.tight_ratio(rho, k, phi_grid, a_grid, g_grid),
    ]
    for r, o in zip(ref, out, strict=True):
        scale = np.maximum(1.0, np.abs(np.broadcast_to(r, a_grid.shape)))
        np.testing.assert_allclose(o / scale, np.broadcast_to(r, a_grid.shape) / scale, atol=1e-13)


def test_closed_form_crossover_matches_derivations_on_a_grid():
    """docs/model.md §6.6: theory.closed_form_crossover against the lambdified derivations."""
    args = (CF.l, S.phi, S.a, S.g)
    point = sp.lambdify(args, CF.point_mass_crossover().crossover_budget, "math")
    uniform = sp.lambdify(args, CF.uniform_crossover().crossover_budget, "math")
    half = sp.lambdify((CF.mu, S.phi, S.a, S.g), CF.exponential_half_crossover(), "math")
    checked = {"point": 0, "uniform": 0, "exponential": 0}
    for phi, a, g in zip(phi_grid, a_grid, g_grid):
        kap = (a - g) / (a * phi - g)
        for length in (3.0, 400.0, 1e5):
            kw = dict(compress_ratio=0.5, fidelity=phi, acc_raw=a, acc_guess=g)
            got = theory.closed_form_crossover(
                theory.make_length_dist("point", length=length), **kw
            )
            assert got == pytest.approx(point(length, phi, a, g), rel=1e-14)
            checked["point"] += 1
            rho = 0.5 / kap  # rho < 1/kappa
            got = theory.closed_form_crossover(
                theory.make_length_dist("uniform", max=length), **{**kw, "compress_ratio": rho}
            )
            assert got == pytest.approx(uniform(length, phi, a, g), rel=1e-14)
            checked["uniform"] += 1
            got = theory.closed_form_crossover(
                theory.make_length_dist("exponential", mean=length), **kw
            )
            if 1.0 < kap < 2.0:
                assert got == pytest.approx(half(length, phi, a, g), rel=1e-12)
                checked["exponential"] += 1
            else:
                assert got is None
    assert min(checked.values()) > 0, checked


# --- the length families against scipy.stats ---------------------------------------------------


def _scipy_law(name, p) -> Any:  # scipy's stubs type frozen laws as discrete or continuous
    return {
        "uniform": lambda: sst.uniform(loc=0.0, scale=p["max"]),
        "exponential": lambda: sst.expon(scale=p["mean"]),
        "gamma": lambda: sst.gamma(p["shape"], scale=p["scale"]),
        "lognormal": lambda: sst.lognorm(p["sigma"], scale=p["scale"]),
        "weibull": lambda: sst.weibull_min(p["shape"], scale=p["scale"]),
    }[name]()


@pytest.mark.parametrize("name,params", CONTINUOUS)
def test_length_families_match_scipy(name, params):
    """docs/model.md §6: CDF, quantiles, log-density, log-CDF, elasticity and mean as scipy.stats."""
    dist, law = theory.make_length_dist(name, **params), _scipy_law(name, params)
    x = np.geomspace(1e-3, 1e5, 120)
    p = np.concatenate(
        [np.logspace(-300, -1, 60), np.linspace(0.1, 0.9, 9), 1 - np.logspace(-1, -12, 24)]
    )
    np.testing.assert_allclose(dist.cdf(x), law.cdf(x), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(dist.ppf(p), law.ppf(p), rtol=1e-12)
    np.testing.assert_allclose(dist.logpdf(x), law.logpdf(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dist.pdf(x), law.pdf(x), rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(dist.logcdf(x), law.logcdf(x), rtol=1e-12, atol=1e-13)
    with np.errstate(all="ignore"):
        logf, logF = law.logpdf(x), law.logcdf(x)
        ref = np.where(np.isfinite(logf), np.exp(np.log(x) + logf - logF), 0.0)
    np.testing.assert_allclose(dist.elasticity(x), ref, rtol=1e-11)
    assert dist.mean == pytest.approx(float(law.mean()), rel=1e-13)
    assert dist.cdf(np.array([0.0, -1.0])).tolist() == [0.0, 0.0]


# --- the crossover path imports only what it needs ----------------------------------------------

_PROBE = """
import json, sys
import theory
from retcon.cli import main

families = json.loads(sys.argv[1])
kw = dict(compress_ratio=0.3, fidelity=0.85, acc_raw=0.9, acc_guess=0.1)
for name, sets in families.items():
    for params in sets:
        dist = theory.make_length_dist(name, **params)
        theory.crossover(dist, **kw)
        theory.delta_curve(dist, [10.0, 100.0, 1000.0], **kw)
        theory.tight_budget_condition(dist, **kw)
        theory.closed_form_crossover(dist, **kw)
        theory.loose_budget_limit(fidelity=0.85, acc_raw=0.9, acc_guess=0.1)
        dist.mean
        if dist.continuous:
            theory.elasticity_nonincreasing(dist)
        argv = ["crossover", "--json", "--dist", name]
        for key, value in params.items():
            argv += ["--" + key, repr(value)]
        assert main(argv) == 0
assert main(["crossover"]) == 0
heavy = ("sympy", "scipy.stats", "scipy.optimize", "jax", "matplotlib")
print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def test_crossover_path_imports_no_sympy_scipy_stats_or_jax():
    """`import theory`, the crossover of every family and `retcon crossover` load none of them.

    A structural check of what the run-time path imports (sys.modules in a fresh process), not
    a timing; sympy stays the derivation that the tests above hold these formulas to.
    """
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(FAMILIES)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    loaded = json.loads(out.strip().splitlines()[-1])
    assert loaded == [], f"the crossover path imported {loaded}"


def test_reader_success_is_the_section_2_reader():
    """MODEL §2: p = g + (a - g) s, clipped at [0, 1]; s = 0 guesses, s = 1 reads everything raw;
    the same numbers for floats, numpy and jax arrays."""
    import jax.numpy as jnp

    from theory import reader_success

    s = np.array([0.0, 0.25, 1.0, 1.4, 3.0])
    p = reader_success(s, 0.8, 0.1)
    np.testing.assert_allclose(p, [0.1, 0.275, 0.8, 1.0, 1.0])
    assert reader_success(0.5, 0.8, 0.1) == pytest.approx(0.45)
    np.testing.assert_allclose(np.asarray(reader_success(jnp.asarray(s), 0.8, 0.1)), p, rtol=1e-6)
