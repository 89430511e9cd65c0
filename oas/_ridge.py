"""Ridge utility model mu_a(z) = b_a + <theta_a, psi(z)> with grouped K-fold choice of the penalty.

For one training split (row weights w in {0, 1}), features standardized on that split only,
z = (psi - mean_w) / scale_w, and the intercept unpenalized:

    theta = (Z' W Z + lambda I)^-1 Z' W (y - ybar_w),    b = ybar_w

(Z is centered under w, so the intercept decouples from theta and is the weighted mean.)
Two backends run this closed form. ``jax`` (the default): every (fold, action, penalty) solve is
one ``vmap``ped call inside a single ``jit``: the K CV folds plus the full training set, all
actions, the whole penalty grid, and the held-out errors on each fold's own rows. ``numpy``
(float64): per training split one Gram matrix, all penalties and actions in one batched
``np.linalg.solve``, and the held-out predictions of every penalty and action in one matmul over
the held-out rows. On the 2-core CPU of docs/performance.md the two are within about 1.2x of each
other at 10^5 rows with single-threaded BLAS, the jit path being the faster when BLAS threads
compete with other work, numpy the faster below about 10^4 rows. The CV error of a penalty is the
mean squared error over the held-out rows of all folds; each action takes its own argmin (ties go
to the larger penalty).

References: MODEL §8 (utility model, grouped K-fold); Hastie, Tibshirani & Friedman (2009), §3.4.1.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from oas._checks import check_positive_int
from retcon.errors import InputError, check_choice

BACKENDS = ("jax", "numpy")

DEFAULT_PENALTIES = tuple(float(x) for x in 10.0 ** np.arange(-3.0, 5.01, 0.5))


class RidgeFit(NamedTuple):
    """A fitted ridge utility model; A actions, p features, P penalties, n training rows.

    Attributes:
      mean, scale: shape ``(p,)``, the standardization of the training split (scale 1 where a
        feature is constant there).
      coef: shape ``(A, p)``, theta on standardized features.
      intercept: shape ``(A,)``.
      penalty: shape ``(A,)``, the chosen lambda of each action.
      penalties: shape ``(P,)``, the grid.
      cv_error: shape ``(A, P)``, grouped K-fold mean squared error.
      fold: shape ``(n,)`` int, the CV fold of each training row.
    """

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    penalty: np.ndarray
    penalties: np.ndarray
    cv_error: np.ndarray
    fold: np.ndarray


def grouped_folds(key: jax.Array, groups, n_folds: int) -> np.ndarray:
    """Assign each row a fold in 0..K-1 so that a group is never in two folds.

    Groups are shuffled with ``key`` (over the sorted distinct labels, so the assignment does not
    depend on row order) and dealt round-robin, which balances the number of groups per fold.

    Args:
      key: JAX PRNG key.
      groups: shape ``(n,)`` group labels.
      n_folds: K >= 2; at most the number of groups.

    Returns:
      shape ``(n,)`` int fold index.

    References: MODEL §8 (groups never split across folds).
    """
    n_folds = check_positive_int("n_folds", n_folds, 2)
    labels, ids = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    if len(labels) < n_folds:
        raise InputError(
            f"n_folds must be at most the number of groups ({len(labels)}); got {n_folds}."
        )
    order = np.asarray(jax.random.permutation(key, len(labels)))
    fold_of_group = np.empty(len(labels), np.int64)
    fold_of_group[order] = np.arange(len(labels)) % n_folds
    return fold_of_group[ids.reshape(-1)]


def _solve_one(x, y, w, lam):
    """Standardize on the rows with weight w, then solve the penalized normal equations."""
    nw = jnp.sum(w)
    mean = (w @ x) / nw
    var = (w @ (x - mean) ** 2) / nw
    scale = jnp.where(var > 1e-12, jnp.sqrt(var), 1.0)
    z = (x - mean) / scale
    ybar = (w @ y) / nw
    zw = z * w[:, None]
    gram = zw.T @ z + lam * jnp.eye(x.shape[1], dtype=x.dtype)
    theta = jnp.linalg.solve(gram, zw.T @ (y - ybar))
    return mean, scale, theta, ybar


@jax.jit
def _solve_all(x, y, train_w, x_out, y_out, out_w, penalties):
    """All solves: ``train_w`` (F, n) x actions (A) x ``penalties`` (P), and held-out squared errors.

    ``x_out`` (K, m, p), ``y_out`` (K, m, A): the held-out rows of each of the K = F - 1 folds,
    padded to m rows with weight ``out_w`` (K, m) 0. Padding rows of ``x`` and ``y`` have weight 0 in
    every split; both paddings only keep shapes in a few buckets so that ``jit`` compiles once per
    bucket.

    Returns ``(mean (F,A,P,p), scale, theta (F,A,P,p), intercept (F,A,P), sse (K,A,P))``.
    """

    def per(w, yv, lam):
        return _solve_one(x, yv, w, lam)

    over_p = jax.vmap(per, in_axes=(None, None, 0))
    over_a = jax.vmap(over_p, in_axes=(None, 1, None))
    mean, scale, theta, b = jax.vmap(over_a, in_axes=(0, None, None))(train_w, y, penalties)
    k = x_out.shape[0]
    # the standardization depends on the split only: one (m, p) block per fold
    z_out = (x_out - mean[:k, 0, 0, None, :]) / scale[:k, 0, 0, None, :]
    pred = b[:k, :, :, None] + jnp.einsum("kmq,kapq->kapm", z_out, theta[:k])
    resid = jnp.moveaxis(y_out, 2, 1)[:, :, None, :] - pred  # (K, A, P, m)
    sse = jnp.einsum("km,kapm->kap", out_w, resid * resid)
    return mean, scale, theta, b, sse


def _bucket(n: int, least: int) -> int:
    """The power of two >= max(n, least): padded sizes recur, so compilations are shared."""
    return max(least, 1 << (max(n, 1) - 1).bit_length())


def _solve_numpy(x, y, fold, n_folds, lam):
    """The closed form in numpy float64 on the K folds and the full set.

    Returns ``(mean (p,), scale (p,), theta (P, p, A), intercept (A,), sse (A, P))``: the
    standardization, coefficients and intercepts of the fit on all rows, and the held-out squared
    errors summed over the folds.
    """
    p, a = x.shape[1], y.shape[1]
    sse = np.zeros((a, lam.size))
    eye = np.eye(p)
    for k in range(n_folds + 1):
        train = fold != k  # k == n_folds: all rows
        xt, yt = x[train], y[train]
        mean = xt.mean(0)
        var = ((xt - mean) ** 2).mean(0)
        scale = np.where(var > 1e-12, np.sqrt(var), 1.0)
        z = (xt - mean) / scale
        ybar = yt.mean(0)
        rhs = np.broadcast_to(z.T @ (yt - ybar), (lam.size, p, a))
        theta = np.linalg.solve(z.T @ z + lam[:, None, None] * eye, rhs)  # (P, p, A)
        if k == n_folds:
            return mean, scale, theta, ybar, sse
        held = ~train
        pred = ((x[held] - mean) / scale) @ theta.transpose(1, 0, 2).reshape(p, -1)
        resid = (y[held] - ybar)[:, None, :] - pred.reshape(-1, lam.size, a)
        sse += (resid * resid).sum(0).T
    raise AssertionError("unreachable")


def _solve_jax(x, y, fold, n_folds, lam):
    """The closed form in one ``jit`` call (float32 unless x64 is enabled); as ``_solve_numpy``."""
    n = x.shape[0]
    n_pad = _bucket(n, 256)
    train_w = np.concatenate(
        [(fold[None, :] != np.arange(n_folds)[:, None]), np.ones((1, n), bool)]
    )
    train_w = np.pad(train_w.astype(np.float64), ((0, 0), (0, n_pad - n)))
    # held-out rows grouped by fold, each fold padded to m rows (weight 0)
    size = np.bincount(fold, minlength=n_folds)
    m = _bucket(int(size.max()), 64)
    first = np.r_[0, np.cumsum(size)[:-1]]
    slot = np.arange(m)[None, :]
    out_w = slot < size[:, None]
    rows = np.argsort(fold, kind="stable")[np.minimum(first[:, None] + slot, n - 1)]
    rows = np.where(out_w, rows, 0)
    pad = ((0, n_pad - n), (0, 0))
    mean, scale, theta, b, sse = (
        np.asarray(v, dtype=np.float64)
        for v in _solve_all(
            jnp.asarray(np.pad(x, pad)),
            jnp.asarray(np.pad(y, pad)),
            jnp.asarray(train_w),
            jnp.asarray(x[rows]),
            jnp.asarray(y[rows]),
            jnp.asarray(out_w.astype(np.float64)),
            jnp.asarray(lam),
        )
    )
    # (F, A, P, ...) -> the full split's fit, theta as (P, p, A)
    return (
        mean[-1, 0, 0],
        scale[-1, 0, 0],
        theta[-1].transpose(1, 2, 0),
        b[-1, :, 0],
        sse.sum(0),
    )


def fit_ridge(
    key: jax.Array,
    features,
    outcomes,
    groups,
    *,
    penalties=DEFAULT_PENALTIES,
    n_folds: int = 5,
    backend: str = "jax",
) -> RidgeFit:
    """Fit one ridge model per action; choose each action's penalty by grouped K-fold CV.

    Args:
      key: JAX PRNG key for the fold assignment.
      features: shape ``(n, p)`` (p = 11 for MODEL §8's features).
      outcomes: shape ``(n, A)`` in [0, 1], actions in ``ACTIONS`` order.
      groups: shape ``(n,)``, the unit of independence (conversation or user).
      penalties: the grid, shape ``(P,)``, each > 0 (on standardized features).
      n_folds: K >= 2.
      backend: ``"jax"`` (one ``jit`` call; float32 unless the caller enabled x64 with
        ``jax.enable_x64(True)``) or ``"numpy"`` (float64). Both select the same penalties (up to exact ties in the CV error)
        and, in float64, agree to about 1e-11 (docs/performance.md).

    Returns:
      ``RidgeFit``; coefficients of the fit on all n rows at each action's chosen penalty.

    References: MODEL §8.
    """
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    lam = np.asarray(penalties, dtype=np.float64).reshape(-1)
    if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0] or len(groups) != x.shape[0]:
        raise InputError(
            f"fit_ridge: features (n, p), outcomes (n, A) and groups (n,) must share n; got "
            f"{x.shape}, {y.shape}, ({len(groups)},)."
        )
    if lam.size == 0 or np.any(~(lam > 0)) or np.any(~np.isfinite(lam)):
        raise InputError(f"fit_ridge: penalties must be finite and > 0; got {lam.tolist()}.")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise InputError("fit_ridge: features and outcomes must be finite.")
    backend = check_choice("backend", backend, BACKENDS)
    fold = grouped_folds(key, groups, n_folds)
    solve = _solve_numpy if backend == "numpy" else _solve_jax
    mean, scale, theta, b, sse = solve(x, y, fold, n_folds, lam)
    cv_error = sse / x.shape[0]  # (A, P)
    # argmin with ties to the larger penalty: search the reversed grid
    order = np.argsort(lam, kind="stable")[::-1]
    best = order[np.argmin(cv_error[:, order], axis=1)]
    a_idx = np.arange(y.shape[1])
    return RidgeFit(
        mean=mean,
        scale=scale,
        coef=theta[best, :, a_idx],
        intercept=b,
        penalty=lam[best],
        penalties=lam,
        cv_error=cv_error,
        fold=fold,
    )


def predict_ridge(fit: RidgeFit, features) -> np.ndarray:
    """mu_a(z) for each row: shape ``(n, A)`` from features ``(n, p)`` (numpy, float64)."""
    z = (np.asarray(features, dtype=np.float64) - fit.mean) / fit.scale
    return fit.intercept + z @ fit.coef.T
