"""Ridge utility model mu_a(z) = b_a + <theta_a, psi(z)> with grouped K-fold choice of the penalty.

For one training split (row weights w in {0, 1}), features standardized on that split only,
z = (psi - mean_w) / scale_w, and the intercept unpenalized:

    theta = (Z' W Z + lambda I)^-1 Z' W (y - ybar_w),    b = ybar_w

(Z is centered under w, so the intercept decouples from theta and is the weighted mean.)
Everything the grid needs is in each fold's moments of ``[1, x, y]`` (``fold_moments``, one pass
over the rows): a training split's moments are the total minus its fold's, which give its
standardization, ``Z'Z`` and ``Z'(y - ybar)``; one ``eigh`` of ``Z'Z`` serves every penalty; and a
fold's held-out squared error for each action and penalty is a quadratic form in its own moments
(``_grid_from_moments``). Two backends run it: ``jax`` (the default; moments and grid in one
``jit``, float32 unless x64 is enabled) and ``numpy`` (float64). The former path (a pass over the
rows per split) is the test oracle ``tests/_references/ridge_rows.py``; in float64 the two agree
to 1e-10. The CV error of a penalty is the
mean squared error over the held-out rows of all folds; each action takes its own argmin (ties go
to the larger penalty).

References: MODEL §8 (utility model, grouped K-fold); Hastie, Tibshirani & Friedman (2009), §3.4.1.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from retcon.errors import InputError, check_at_least, check_choice

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
    n_folds = check_at_least("n_folds", n_folds, 2)
    labels, ids = _labels_in_string_order(np.asarray(groups))
    if len(labels) < n_folds:
        raise InputError(
            f"n_folds must be at most the number of groups ({len(labels)}); got {n_folds}."
        )
    order = np.asarray(_permutation(key, len(labels)))
    fold_of_group = np.empty(len(labels), np.int64)
    fold_of_group[order] = np.arange(len(labels)) % n_folds
    return fold_of_group[ids.reshape(-1)]


#: Up to this many groups ``jax.random.permutation`` sorts once (by one 32-bit key per element,
#: stably), so ``_permutation`` reads its sort keys off one fixed-shape draw.
_ONE_ROUND = 1625


def _permutation(key, n: int) -> np.ndarray:
    """``jax.random.permutation(key, n)``, the same values, compiled once for every ``n`` up to
    ``_ONE_ROUND`` instead of once per ``n`` (each compilation took longer than the ridge grid).

    For such ``n`` JAX's shuffle is one stable sort of ``arange(n)`` by the bits of
    ``split(key)[1]`` of shape ``(n,)``; with ``jax_threefry_partitionable`` (JAX's default)
    those bits are the first ``n`` of a longer draw, so one draw of ``2048`` serves every ``n``
    (``tests/oas/test_ridge.py`` checks the equality). Otherwise, the op itself, jitted per ``n``.
    """
    if n <= _ONE_ROUND and jax.config.jax_threefry_partitionable:  # pyright: ignore[reportAttributeAccessIssue]
        return np.argsort(np.asarray(_sort_bits(key))[:n], kind="stable")
    return np.asarray(_permutation_jit(key, n))


@jax.jit
def _sort_bits(key):
    return jax.random.bits(jax.random.split(key)[1], (2048,), jnp.uint32)


@partial(jax.jit, static_argnums=1)
def _permutation_jit(key, n: int):
    return jax.random.permutation(key, n)


def _labels_in_string_order(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(g.astype(str), return_inverse=True)``, without writing every row as a string
    when the labels are integers: the distinct integers are found first and only they are sorted
    as strings (the same order and ids; an integer's decimal string is unique to it)."""
    if g.dtype.kind in "iub" and g.size:
        distinct, ids = np.unique(g, return_inverse=True)
        as_str = distinct.astype(str)
        order = np.argsort(as_str, kind="stable")
        rank = np.empty(order.size, np.int64)
        rank[order] = np.arange(order.size)
        return as_str[order], rank[ids.reshape(-1)]
    return np.unique(g.astype(str), return_inverse=True)


def _bucket(n: int, least: int) -> int:
    """The power of two >= max(n, least): padded sizes recur, so compilations are shared."""
    return max(least, 1 << (max(n, 1) - 1).bit_length())


def fold_moments(x: np.ndarray, y: np.ndarray, fold: np.ndarray, n_folds: int) -> np.ndarray:
    """Each fold's moments ``D_k' D_k`` of ``D = [1, x - c, y - d]`` (``c``, ``d`` the column means
    over all rows, taken out so that float sums lose little to cancellation): shape
    ``(K, q, q)``, ``q = 1 + p + A``. One pass over the rows (grouped by fold)."""
    n = x.shape[0]
    d = np.empty((n, 1 + x.shape[1] + y.shape[1]))
    d[:, 0] = 1.0
    d[:, 1 : 1 + x.shape[1]] = x - x.mean(0)
    d[:, 1 + x.shape[1] :] = y - y.mean(0)
    out = np.empty((n_folds, d.shape[1], d.shape[1]))
    for k in range(n_folds):
        dk = d[fold == k]
        np.matmul(dk.T, dk, out=out[k])
    return out


def _grid_from_moments(xp, eigh, held, lam, p: int):
    """The ridge grid from moments only (MODEL §8), numpy or JAX (``xp``, ``eigh``).

    ``held`` ``(K, q, q)`` are the folds' moments of ``[1, x, y]`` (centred, ``fold_moments``);
    the training split of fold ``k`` is the total minus ``held[k]``, the full fit the total. Per
    split: ``n``, the means and the population variances give the standardization; the
    standardized Gram ``Z'Z`` and ``Z'(y - ybar)`` come from the centred moments; one ``eigh`` of
    ``Z'Z`` serves every penalty, ``theta = V diag(1 / (e + lambda)) V' Z'(y - ybar)``. Fold ``k``'s
    held-out squared error for each action and penalty is a quadratic form in its own moments
    after the split's affine map ``[1, x, y] -> [1, (x - mean) / scale, y - ybar]``.

    Returns ``(mean (p,), scale (p,), theta (P, p, A), ybar (A,), sse (A, P))``: the full fit
    (means in the centred coordinates) and the held-out errors summed over folds.
    """
    total = held.sum(0)
    splits = xp.concatenate([total[None] - held, total[None]], axis=0)  # (F, q, q)
    n = splits[:, 0, 0]
    mu = splits[:, 0, 1:] / n[:, None]  # (F, p + A) means of x and y
    cov = splits[:, 1:, 1:] / n[:, None, None] - mu[:, :, None] * mu[:, None, :]
    var = xp.diagonal(cov[:, :p, :p], axis1=1, axis2=2)
    scale = xp.where(var > 1e-12, xp.sqrt(xp.maximum(var, 0.0)), 1.0)  # (F, p)
    gram = n[:, None, None] * cov[:, :p, :p] / (scale[:, :, None] * scale[:, None, :])
    rhs = n[:, None, None] * cov[:, :p, p:] / scale[:, :, None]  # (F, p, A)
    e, v = eigh(gram)  # (F, p), (F, p, p)
    vr = xp.einsum("fji,fja->fia", v, rhs)  # V' Z'(y - ybar): (F, p, A)
    shrink = 1.0 / (e[:, None, :] + lam[None, :, None])  # (F, P, p)
    theta = xp.einsum("fij,fpj,fja->fpia", v, shrink, vr)  # (F, P, p, A)
    k = held.shape[0]
    # held-out moments in the split's standardized coordinates: t = r @ M, r = [1, x, y]
    q = held.shape[1]
    m = xp.zeros((k, q, q)) + xp.eye(q)[None]
    m = _set_affine(xp, m, mu[:k], scale[:k], p)
    g = xp.einsum("kij,kil,klm->kjm", m, held, m)  # (K, q, q)
    gxx, gxy, gyy = g[:, 1 : 1 + p, 1 : 1 + p], g[:, 1 : 1 + p, 1 + p :], g[:, 1 + p :, 1 + p :]
    th = theta[:k]  # (K, P, p, A)
    quad = xp.einsum("kpia,kij,kpja->kap", th, gxx, th)
    cross = xp.einsum("kpia,kia->kap", th, gxy)
    yy = xp.diagonal(gyy, axis1=1, axis2=2)[:, :, None]  # (K, A, 1)
    sse = (yy - 2.0 * cross + quad).sum(0)  # (A, P)
    return mu[-1, :p], scale[-1], theta[-1], mu[-1, p:], sse


def _set_affine(xp, m, mu, scale, p: int):
    """``m`` (K, q, q) identity -> the map ``[1, x, y] -> [1, (x - mu_x) / scale, y - mu_y]``."""
    k, q = m.shape[0], m.shape[1]
    col_x = xp.concatenate([-mu[:, :p] / scale, xp.zeros((k, q - 1 - p))], axis=1)
    col_y = xp.concatenate([xp.zeros((k, p)), -mu[:, p:]], axis=1)
    first = xp.concatenate([xp.ones((k, 1)), col_x[:, :p], col_y[:, p:]], axis=1)  # row 0
    diag = xp.concatenate([xp.ones((k, 1)), 1.0 / scale, xp.ones((k, q - 1 - p))], axis=1)
    body = diag[:, :, None] * xp.eye(q)[None]
    return xp.concatenate([first[:, None, :], body[:, 1:, :]], axis=1)


def _solve_moments(x, y, fold, n_folds, lam, backend: str):
    """The ridge grid from the folds' moments (``_grid_from_moments``), as ``_solve_numpy``:
    numpy builds the moments with one matmul per fold; JAX builds them inside the same ``jit``
    (rows padded to a power of two with weight 0, so that sizes share a compilation)."""
    p = x.shape[1]
    if backend == "numpy":
        held = fold_moments(x, y, fold, n_folds)
        mean, scale, theta, ybar, sse = _grid_from_moments(np, np.linalg.eigh, held, lam, p)
        return mean + x.mean(0), scale, theta, ybar + y.mean(0), sse
    n = x.shape[0]
    pad = _bucket(n, 256) - n
    out = _moments_grid_jit(
        jnp.asarray(np.pad(x, ((0, pad), (0, 0)))),
        jnp.asarray(np.pad(y, ((0, pad), (0, 0)))),
        jnp.asarray(np.pad(fold, (0, pad), constant_values=-1).astype(np.int32)),
        jnp.asarray(lam),
        n_folds=n_folds,
    )
    return tuple(np.asarray(v, dtype=np.float64) for v in out)


@partial(jax.jit, static_argnames=("n_folds",))
def _moments_grid_jit(x, y, fold, lam, *, n_folds: int):
    """``fold_moments`` and ``_grid_from_moments`` in one program; rows with fold -1 are padding."""
    valid = (fold >= 0).astype(x.dtype)
    n = jnp.sum(valid)
    c, d = (valid @ x) / n, (valid @ y) / n
    rows = jnp.concatenate([valid[:, None], (x - c) * valid[:, None], (y - d) * valid[:, None]], 1)
    held = jnp.stack(
        [(rows * (fold == k).astype(x.dtype)[:, None]).T @ rows for k in range(n_folds)]
    )
    mean, scale, theta, ybar, sse = _grid_from_moments(jnp, jnp.linalg.eigh, held, lam, x.shape[1])
    return mean + c, scale, theta, ybar + d, sse


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
    mean, scale, theta, b, sse = _solve_moments(x, y, fold, n_folds, lam, backend)
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
