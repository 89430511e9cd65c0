"""Ridge utility model (MODEL §8): float64 normal equations, row-permutation invariance, recovery of
a known linear utility, grouped folds that never split a group."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oas._ridge import DEFAULT_PENALTIES, fit_ridge, grouped_folds, predict_ridge
from retcon.errors import InputError
from tests._references.ridge_rows import fit_ridge_rows

N, P, A = 240, 11, 4


def data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, P))
    x[:, 7:] = np.eye(4)[rng.integers(0, 4, N)]  # one-hot block: collinear with the intercept
    y = rng.uniform(size=(N, A))
    g = rng.integers(0, 24, N)
    return x, y, g


def normal_equations(x, y, lam):
    """Float64 numpy reference: standardize, intercept column unpenalized, solve."""
    mean, sd = x.mean(0), x.std(0)
    sd = np.where(sd**2 > 1e-12, sd, 1.0)
    z = np.c_[np.ones(len(x)), (x - mean) / sd]
    pen = np.diag([0.0] + [lam] * x.shape[1])
    sol = np.linalg.solve(z.T @ z + pen, z.T @ y)
    return sol[0], sol[1:]


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_equals_float64_normal_equations(backend):
    """MODEL §8: closed-form ridge with an unpenalized intercept on the training standardization,
    equal to numpy's float64 solve to 1e-6 (x64 enabled only inside this test), on either backend."""
    x, y, g = data()
    with jax.enable_x64(True):
        fit = fit_ridge(jax.random.key(0), x, y, g, n_folds=4, backend=backend)
    assert fit.coef.shape == (A, P)
    for a in range(A):
        b, theta = normal_equations(x, y[:, a], fit.penalty[a])
        np.testing.assert_allclose(fit.coef[a], theta, atol=1e-6)
        assert fit.intercept[a] == pytest.approx(b, abs=1e-6)
    # the chosen penalty minimizes the grouped CV error
    np.testing.assert_array_equal(
        fit.cv_error[np.arange(A), np.searchsorted(fit.penalties, fit.penalty)],
        fit.cv_error.min(axis=1),
    )


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_cv_error_matches_python_loop(backend):
    """MODEL §8: the batched CV error (both backends) equals a loop over folds that refits on each
    training part."""
    x, y, g = data(1)
    with jax.enable_x64(True):
        fit = fit_ridge(
            jax.random.key(3), x, y, g, penalties=(0.1, 10.0), n_folds=3, backend=backend
        )
    for p, lam in enumerate(fit.penalties):
        sse = np.zeros(A)
        for k in range(3):
            tr, te = fit.fold != k, fit.fold == k
            for a in range(A):
                b, theta = normal_equations(x[tr], y[tr, a], lam)
                mean, sd = x[tr].mean(0), x[tr].std(0)
                sd = np.where(sd**2 > 1e-12, sd, 1.0)
                sse[a] += np.sum((y[te, a] - b - ((x[te] - mean) / sd) @ theta) ** 2)
        np.testing.assert_allclose(fit.cv_error[:, p], sse / N, rtol=1e-8)


def test_backends_agree_and_bad_backend_is_refused():
    """MODEL §8: numpy (float64) and jax (x64) pick the same penalties, coefficients to 1e-10."""
    x, y, g = data(3)
    with jax.enable_x64(True):
        j = fit_ridge(jax.random.key(4), x, y, g, n_folds=4, backend="jax")
    n = fit_ridge(jax.random.key(4), x, y, g, n_folds=4, backend="numpy")
    np.testing.assert_array_equal(j.penalty, n.penalty)
    np.testing.assert_allclose(j.coef, n.coef, rtol=0, atol=1e-10)
    np.testing.assert_allclose(j.cv_error, n.cv_error, rtol=1e-10)
    np.testing.assert_array_equal(j.fold, n.fold)
    with pytest.raises(InputError, match=r"backend must be one of \['jax', 'numpy'\]"):
        fit_ridge(jax.random.key(4), x, y, g, backend="torch")


def test_unchanged_by_row_permutation():
    x, y, g = data(2)
    perm = np.random.default_rng(5).permutation(N)
    a = fit_ridge(jax.random.key(1), x, y, g)
    b = fit_ridge(jax.random.key(1), x[perm], y[perm], g[perm])
    np.testing.assert_array_equal(a.penalty, b.penalty)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a.intercept, b.intercept, atol=1e-5)
    np.testing.assert_array_equal(a.fold[perm], b.fold)


def test_recovers_known_linear_utility():
    """Outcomes from mu_a = b_a + <theta_a, psi> plus noise: the fit recovers theta in raw units."""
    rng = np.random.default_rng(7)
    n = 4000
    x = rng.normal(size=(n, 7)) * np.array([1, 2, 0.5, 3, 1, 0.2, 0.3]) + 1.0
    theta = rng.normal(size=(A, 7)) * 0.05
    b = np.array([0.5, 0.4, 0.45, 0.5])
    y = b + x @ theta.T + rng.normal(scale=0.05, size=(n, A))
    fit = fit_ridge(jax.random.key(2), x, y, rng.integers(0, 50, n))
    raw = fit.coef / fit.scale
    np.testing.assert_allclose(raw, theta, atol=0.01)
    np.testing.assert_allclose(fit.intercept - raw @ fit.mean, b, atol=0.02)
    assert np.sqrt(np.mean((predict_ridge(fit, x) - (b + x @ theta.T)) ** 2)) < 0.01


@settings(max_examples=15)
@given(
    st.lists(st.integers(0, 12), min_size=6, max_size=60),
    st.integers(2, 5),
    st.integers(0, 2**31 - 1),
)
def test_grouped_folds_never_split_a_group(groups, k, seed):
    """MODEL §8: groups never split across folds; assignment is a function of the key."""
    groups = np.array(groups)
    if len(np.unique(groups)) < k:
        return
    fold = grouped_folds(jax.random.key(seed), groups, k)
    for gr in np.unique(groups):
        assert len(np.unique(fold[groups == gr])) == 1
    assert set(fold.tolist()) == set(range(k))
    np.testing.assert_array_equal(fold, grouped_folds(jax.random.key(seed), groups, k))


def test_moments_equal_the_row_pass_to_1e10():
    """MODEL §8: the grid from the folds' moments (one pass over the rows, one eigh per split)
    gives the former row-pass path's penalties, CV errors and float64 coefficients to 1e-10, on
    both backends; the fold assignment with integer groups equals the one over their strings."""
    x, y, g = data(4)
    x[:, 3] = 5.0  # a constant feature: scale 1, no signal
    ref = fit_ridge_rows(jax.random.key(6), x, y, g, n_folds=4, penalties=DEFAULT_PENALTIES)
    with jax.enable_x64(True):
        fits = [
            fit_ridge(jax.random.key(6), x, y, g, n_folds=4, backend="jax"),
            fit_ridge(jax.random.key(6), x, y, g, n_folds=4, backend="numpy"),
        ]
    for f in fits:
        np.testing.assert_array_equal(f.penalty, ref.penalty)
        np.testing.assert_allclose(f.coef, ref.coef, rtol=0, atol=1e-10)
        np.testing.assert_allclose(f.intercept, ref.intercept, rtol=0, atol=1e-10)
        np.testing.assert_allclose(f.cv_error, ref.cv_error, rtol=1e-10)
        np.testing.assert_allclose(f.mean, ref.mean, rtol=0, atol=1e-10)
        np.testing.assert_allclose(f.scale, ref.scale, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(
        grouped_folds(jax.random.key(6), g, 4), grouped_folds(jax.random.key(6), g.astype(str), 4)
    )


@pytest.mark.slow  # about 4 s: JAX's own permutation compiles for each case
def test_group_permutation_equals_jaxs_permutation():
    """MODEL §8 (the folds' deal): ``_permutation`` reads one fixed-shape draw instead of
    compiling per group count; it must give ``jax.random.permutation``'s values, typed and raw
    keys, up to the one-sort limit (1625; past it ``_permutation`` runs JAX's op itself)."""
    from oas._ridge import _permutation

    reference = jax.jit(jax.random.permutation, static_argnums=1)
    cases = [(jax.random.key(n), n) for n in (7, 1625)] + [(jax.random.PRNGKey(3), 7)]
    for key, n in cases:
        np.testing.assert_array_equal(_permutation(key, n), np.asarray(reference(key, n)))
