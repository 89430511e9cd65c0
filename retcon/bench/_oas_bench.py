"""OAS ridge grid: ``oas.fit_ridge`` (one jit call per budget) against scikit-learn doing the same job.

The job (MODEL §8): for each of 7 budgets, fit the ridge utility model of 4 actions on that
budget's instances, choosing each action's penalty from a 20-value grid by grouped 5-fold CV,
features standardized on the training split, intercept unpenalized; then refit on all of the
budget's instances at the chosen penalty. That is 4 x 20 x 5 x 7 = 2,800 CV fits plus the refits.

scikit-learn does it the way a user would: per budget and action, ``GridSearchCV`` over
``Pipeline(StandardScaler, Ridge)`` with the grouped folds (the very folds ``fit_ridge`` draws,
passed as explicit splits: GroupKFold semantics, no group in two folds), scored by the summed
squared error so that its argmin is ``fit_ridge``'s pooled CV error, the grid in decreasing order
so that ties go to the larger penalty as in ``fit_ridge``. Penalties and coefficients are checked
to agree (1e-6, float64) before anything is timed.

References: MODEL §8 (utility model, grouped K-fold).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import jax
import numpy as np

from retcon.bench._timing import interleaved

N_BUDGETS = 7
N_PENALTIES = 20
N_FOLDS = 5
N_FEATURES = 11
PENALTIES = tuple(float(x) for x in np.logspace(-3, 5, N_PENALTIES))


class OasData(NamedTuple):
    """Synthetic paired instances: ``features (n, 11)``, ``outcomes (n, 4)``, ``groups``, ``budget`` ``(n,)``."""

    features: np.ndarray
    outcomes: np.ndarray
    groups: np.ndarray
    budget: np.ndarray


def make_data(seed: int, n: int) -> OasData:
    """Instances shaped like MODEL §8's: 11 features (7 numeric, one-hot type), 0/1 outcomes.

    Budgets are dealt round-robin over 7 values, groups (conversations) hold about 50 instances.
    """
    rng = np.random.default_rng(seed)
    budgets = 2.0 ** np.arange(5, 5 + N_BUDGETS)
    budget = budgets[np.arange(n) % N_BUDGETS]
    groups = rng.integers(0, max(N_FOLDS * 2, n // 50), n)
    qtype = rng.integers(0, 4, n)
    length = rng.lognormal(5.0, 0.6, n)
    size = rng.integers(1, 6, n).astype(float)
    x = np.column_stack(
        [
            budget / 512,
            length / budget,
            np.minimum(budget / length, 1.0),
            size,
            np.minimum(size, rng.integers(1, 4, n)),
            rng.beta(2, 8, n),
            rng.beta(8, 2, n),
            np.eye(4)[qtype],
        ]
    )
    theta = rng.normal(0, 0.3, (N_FEATURES, 4))
    logits = (x - x.mean(0)) / (x.std(0) + 1e-9) @ theta
    y = (rng.random((n, 4)) < 1 / (1 + np.exp(-logits))).astype(float)
    return OasData(x, y, groups, budget)


def sklearn_available() -> bool:
    """Whether scikit-learn (the ``bench`` extra) can be imported."""
    import importlib.util

    return importlib.util.find_spec("sklearn") is not None


def sklearn_grid(data: OasData, folds: np.ndarray, penalties=PENALTIES) -> list[dict]:
    """scikit-learn: per budget and action, GridSearchCV(StandardScaler + Ridge) on fixed grouped folds.

    Returns per budget ``{"penalty": (4,), "coef": (4, 11), "intercept": (4,)}``.
    """
    from sklearn.linear_model import Ridge
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    sse = make_scorer(lambda y, p: float(np.sum((y - p) ** 2)), greater_is_better=False)
    grid = {"ridge__alpha": sorted(penalties, reverse=True)}  # first on ties = largest penalty
    out = []
    for b in np.unique(data.budget):
        rows = np.flatnonzero(data.budget == b)
        fold = folds[rows]
        splits = [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(N_FOLDS)]
        pen, coef, icpt = [], [], []
        for a in range(data.outcomes.shape[1]):
            pipe = Pipeline([("scale", StandardScaler()), ("ridge", Ridge(solver="cholesky"))])
            gs = GridSearchCV(pipe, grid, cv=splits, scoring=sse, refit=True)
            gs.fit(data.features[rows], data.outcomes[rows, a])
            ridge = gs.best_estimator_.named_steps["ridge"]
            pen.append(gs.best_params_["ridge__alpha"])
            coef.append(ridge.coef_)
            icpt.append(ridge.intercept_)
        out.append(
            {"penalty": np.asarray(pen), "coef": np.asarray(coef), "intercept": np.asarray(icpt)}
        )
    return out


def jax_grid(key: jax.Array, data: OasData, penalties=PENALTIES) -> list:
    """``oas.fit_ridge`` once per budget (each one jit call over folds x actions x penalties)."""
    from oas import fit_ridge

    out = []
    for i, b in enumerate(np.unique(data.budget)):
        rows = np.flatnonzero(data.budget == b)
        out.append(
            fit_ridge(
                jax.random.fold_in(key, i),
                data.features[rows],
                data.outcomes[rows],
                data.groups[rows],
                penalties=penalties,
                n_folds=N_FOLDS,
            )
        )
    return out


def _folds(key: jax.Array, data: OasData) -> np.ndarray:
    """The folds ``jax_grid`` draws, per budget, laid out over all rows."""
    from oas import grouped_folds

    folds = np.empty(len(data.budget), np.int64)
    for i, b in enumerate(np.unique(data.budget)):
        rows = np.flatnonzero(data.budget == b)
        folds[rows] = grouped_folds(jax.random.fold_in(key, i), data.groups[rows], N_FOLDS)
    return folds


def check_agreement(key: jax.Array, data: OasData, tol: float = 1e-6, penalties=PENALTIES) -> dict:
    """Fit both ways in float64; raise unless penalties match and coefficients agree to ``tol``."""
    with jax.enable_x64(True):
        fits = jax_grid(key, data, penalties)
    t0 = time.perf_counter()
    ref = sklearn_grid(data, _folds(key, data), penalties)
    t_sklearn = time.perf_counter() - t0
    coef_diff = max(float(np.max(np.abs(f.coef - r["coef"]))) for f, r in zip(fits, ref))
    icpt_diff = max(float(np.max(np.abs(f.intercept - r["intercept"]))) for f, r in zip(fits, ref))
    same_pen = all(np.array_equal(f.penalty, r["penalty"]) for f, r in zip(fits, ref))
    if not (same_pen and coef_diff < tol and icpt_diff < tol):
        raise AssertionError(
            f"OAS grid: JAX and scikit-learn disagree at n={len(data.budget)}: "
            f"same penalties {same_pen}, max |coef diff| {coef_diff:.3g}, "
            f"max |intercept diff| {icpt_diff:.3g}"
        )
    return {
        "same_penalties": same_pen,
        "max_coef_diff": coef_diff,
        "max_intercept_diff": icpt_diff,
        "sklearn_check_s": t_sklearn,
    }


def grid_flops(n: int, n_penalties: int = N_PENALTIES) -> float:
    """Flops of the grid, counted as: per budget and training split (5 folds + full), the Gram
    ``2 n p^2`` and standardization ``~6 n p``; per split, action and penalty, the held-out
    prediction ``2 n p``."""
    p, splits = N_FEATURES, N_FOLDS + 1
    return float(splits * (2 * n * p * p + 6 * n * p) + splits * 4 * n_penalties * 2 * n * p)


def bench_oas(
    seed: int,
    sizes,
    *,
    repeats: int = 2,
    sklearn_max: int | None = None,
    limits=None,
    penalties=PENALTIES,
) -> list[dict]:
    """Check agreement, then time the full grid, JAX (float64 and float32) vs scikit-learn.

    Args:
      seed: data and fold seed.
      sizes: total instances (over the 7 budgets) per row.
      repeats: interleaved timings per implementation; best kept.
      sklearn_max: largest size at which scikit-learn runs (``None``: all); above it, or when
        scikit-learn is not installed, only JAX is timed.
      limits: ``MachineLimits`` for the achieved fraction of f64 matmul throughput.
      penalties: the grid (20 values by default; smaller only for smoke tests).

    Returns:
      one row per size.
    """
    key = jax.random.key(seed)
    have_sk = sklearn_available()
    rows = []
    for n in sizes:
        data = make_data(seed, n)
        with_sk = have_sk and (sklearn_max is None or n <= sklearn_max)
        row = {
            "instances": n,
            "budgets": N_BUDGETS,
            "actions": 4,
            "penalties": len(penalties),
            "folds": N_FOLDS,
        }
        if not have_sk:
            row["note"] = "scikit-learn not installed: pip install 'retcon[bench]'"
        if with_sk:
            row.update(check_agreement(key, data, penalties=penalties))
        folds = _folds(key, data)

        def jax64(data=data):
            with jax.enable_x64(True):
                return [f.coef for f in jax_grid(key, data, penalties)]

        t0 = time.perf_counter()
        jax64()
        jax_grid(key, data, penalties)  # compile both precisions
        row["compile_s"] = time.perf_counter() - t0
        fns = {
            "jax_f64": jax64,
            "jax_f32": lambda data=data: [f.coef for f in jax_grid(key, data, penalties)],
        }
        if with_sk:
            fns["sklearn"] = lambda data=data, folds=folds: sklearn_grid(data, folds, penalties)
        t = interleaved(
            fns, repeats, first={"sklearn": row["sklearn_check_s"]} if with_sk else None
        )
        row.update({f"{k}_s": v for k, v in t.items()})
        if with_sk:
            row["speedup_f64"] = t["sklearn"] / t["jax_f64"]
            row["speedup_f32"] = t["sklearn"] / t["jax_f32"]
        row["gflops_f64"] = grid_flops(n, len(penalties)) / t["jax_f64"] / 1e9
        if limits is not None:
            row["fraction_of_f64_matmul"] = row["gflops_f64"] / limits.gflops_f64
        rows.append(row)
    return rows
