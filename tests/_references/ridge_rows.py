"""Test oracle: the ridge grid by a pass over the rows per split (MODEL §8).

The path ``oas.fit_ridge`` took before sufficient statistics: for each of the K folds and the full
set, standardize on the training rows, solve the penalized normal equations for every penalty, and
sum the held-out squared errors. It is slower than the moments path (one pass over the rows) and
exists only to pin it: ``tests/oas/test_oas_ridge.py`` compares the two to 1e-10 in float64.
"""

import numpy as np

from oas import RidgeFit, grouped_folds


def solve_rows(x, y, fold, n_folds, lam):
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


def fit_ridge_rows(key, features, outcomes, groups, *, penalties, n_folds: int = 5) -> RidgeFit:
    """``oas.fit_ridge`` on the same folds, its grid from ``solve_rows`` (float64, numpy)."""
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    lam = np.asarray(penalties, dtype=np.float64).reshape(-1)
    fold = grouped_folds(key, groups, n_folds)
    mean, scale, theta, b, sse = solve_rows(x, y, fold, n_folds, lam)
    cv_error = sse / x.shape[0]
    order = np.argsort(lam, kind="stable")[::-1]  # ties to the larger penalty
    best = order[np.argmin(cv_error[:, order], axis=1)]
    return RidgeFit(
        mean=mean,
        scale=scale,
        coef=theta[best, :, np.arange(y.shape[1])],
        intercept=b,
        penalty=lam[best],
        penalties=lam,
        cv_error=cv_error,
        fold=fold,
    )
