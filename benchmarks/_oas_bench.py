"""OAS ridge grid: ``oas.fit_ridge`` (one jit call per budget) against its competent alternatives.

The job (MODEL §8): for each of 7 budgets, fit the ridge utility model of 4 actions on that
budget's instances, choosing each action's penalty from a 20-value grid by grouped 5-fold CV,
features standardized on the training split, intercept unpenalized; then refit on all of the
budget's instances at the chosen penalty. That is 4 x 20 x 5 x 7 = 2,800 CV fits plus the refits.

The alternatives, each on the very folds ``fit_ridge`` draws:

- numpy running the same sufficient statistics, float64: ``fit_ridge(..., backend="numpy")`` (one
  pass over the rows builds each fold's moments of ``[1, x, y]``; per split one ``eigh`` serves
  every penalty, and the held-out errors come from each fold's own moments);
- ``sklearn_ridge``: what a competent scikit-learn user writes: per budget and training split, one
  multi-target ``Ridge`` on the standardized features with the outcomes repeated once per penalty
  and ``alpha`` an array with one penalty per target (7 x 6 = 42 fits), held-out errors from its
  predictions;
(the former ``GridSearchCV`` baseline row is gone; its figures are in the CHANGELOG).

Every alternative takes ties to the larger penalty, as ``fit_ridge`` does. Penalties must be
identical and coefficients and intercepts agree (1e-6, float64) before anything is timed.

References: MODEL §8 (utility model, grouped K-fold).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import numpy as np

from benchmarks._timing import interleaved

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


def _choose(cv_error: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Index of each action's penalty minimizing ``cv_error`` ``(A, P)``, ties to the larger penalty."""
    order = np.argsort(lam, kind="stable")[::-1]
    return order[np.argmin(cv_error[:, order], axis=1)]


def sklearn_ridge(data: OasData, folds: np.ndarray, penalties=PENALTIES) -> list[dict]:
    """scikit-learn, one multi-target ``Ridge`` per budget and training split, one alpha per target.

    The targets are the 4 outcomes repeated once per penalty (``P * A`` columns) and ``alpha`` the
    matching ``(P * A,)`` array, on features standardized on the training split: 7 budgets x
    (5 folds + all rows) = 42 fits for the whole grid.

    Returns per budget ``{"penalty": (A,), "coef": (A, p), "intercept": (A,)}``.
    """
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler

    lam = np.asarray(penalties, dtype=np.float64)
    out = []
    for b in np.unique(data.budget):
        rows = np.flatnonzero(data.budget == b)
        x, y, fold = data.features[rows], data.outcomes[rows], folds[rows]
        a = y.shape[1]
        alpha = np.repeat(lam, a)  # target j = (penalty j // A, action j % A)
        sse = np.zeros((a, len(lam)))
        for k in range(N_FOLDS + 1):
            train = fold != k
            scaler = StandardScaler().fit(x[train])
            ridge = Ridge(alpha=alpha, solver="cholesky")  # pyright: ignore[reportArgumentType]
            ridge.fit(scaler.transform(x[train]), np.tile(y[train], (1, len(lam))))
            if k == N_FOLDS:
                best = _choose(sse / len(rows), lam)
                j = best * a + np.arange(a)
                out.append(
                    {"penalty": lam[best], "coef": ridge.coef_[j], "intercept": ridge.intercept_[j]}
                )
                break
            held = ~train
            pred = ridge.predict(scaler.transform(x[held]))
            resid = np.tile(y[held], (1, len(lam))) - pred
            sse += (resid**2).sum(0).reshape(len(lam), a).T
    return out


def jax_grid(key: jax.Array, data: OasData, penalties=PENALTIES, backend: str = "jax") -> list:
    """``oas.fit_ridge`` once per budget (``jax``: one jit call over folds x actions x penalties;
    the moments path)."""
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
                backend=backend,
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


ALTERNATIVES = {"sklearn_ridge": sklearn_ridge}


def _jax_f64(key: jax.Array, data: OasData, penalties) -> list:
    with jax.enable_x64(True):
        return [fit.coef for fit in jax_grid(key, data, penalties)]


def _numpy_fits(key: jax.Array, data: OasData, penalties=PENALTIES) -> list[dict]:
    fits = jax_grid(key, data, penalties, backend="numpy")
    return [{"penalty": f.penalty, "coef": f.coef, "intercept": f.intercept} for f in fits]


def check_oas_agreement(
    key: jax.Array,
    data: OasData,
    tol: float = 1e-6,
    penalties=PENALTIES,
    alternatives=("numpy", "sklearn_ridge"),
) -> dict:
    """Fit the grid with ``fit_ridge`` (float64) and each alternative on the same folds; raise unless
    every alternative selects the same penalties and its coefficients and intercepts agree to ``tol``.

    Returns:
      per alternative ``same_penalties_<name>``, ``max_coef_diff_<name>``,
      ``max_intercept_diff_<name>`` and the seconds its checked run took (``<name>_check_s``);
      ``same_penalties`` and ``max_coef_diff`` over all of them.
    """
    with jax.enable_x64(True):
        fits = jax_grid(key, data, penalties)
    folds = _folds(key, data)
    out: dict = {}
    for name in alternatives:
        t0 = time.perf_counter()
        if name == "numpy":
            ref = _numpy_fits(key, data, penalties)
        else:
            ref = ALTERNATIVES[name](data, folds, penalties)
        out[f"{name}_check_s"] = time.perf_counter() - t0
        coef = max(float(np.max(np.abs(f.coef - r["coef"]))) for f, r in zip(fits, ref))
        icpt = max(float(np.max(np.abs(f.intercept - r["intercept"]))) for f, r in zip(fits, ref))
        same = all(np.array_equal(f.penalty, r["penalty"]) for f, r in zip(fits, ref))
        if not (same and coef < tol and icpt < tol):
            raise AssertionError(
                f"OAS grid: fit_ridge and {name} disagree at n={len(data.budget)}: "
                f"same penalties {same}, max |coef diff| {coef:.3g}, "
                f"max |intercept diff| {icpt:.3g}"
            )
        out[f"same_penalties_{name}"] = same
        out[f"max_coef_diff_{name}"] = coef
        out[f"max_intercept_diff_{name}"] = icpt
    out["same_penalties"] = all(out[f"same_penalties_{k}"] for k in alternatives)
    out["max_coef_diff"] = max(out[f"max_coef_diff_{k}"] for k in alternatives)
    out["max_intercept_diff"] = max(out[f"max_intercept_diff_{k}"] for k in alternatives)
    return out


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
    """Check agreement, then time the full grid: JAX (float64, float32), numpy running the same
    closed form and scikit-learn's multi-target ``Ridge``.

    Args:
      seed: data and fold seed.
      sizes: total instances (over the 7 budgets) per row.
      repeats: interleaved timings per implementation; best kept.
      sklearn_max: largest size at which scikit-learn's ``Ridge`` runs (``None``: all; it needs
        scikit-learn installed).
      limits: ``MachineLimits`` for the achieved fraction of f64 matmul throughput.
      penalties: the grid (20 values by default; smaller only for smoke tests).

    Returns:
      one row per size; ``speedup_*`` are the alternative's time over ``fit_ridge`` float64's.
    """
    key = jax.random.key(seed)
    have_sk = sklearn_available()
    if have_sk:  # imports outside the timed runs
        import importlib

        for mod in ("linear_model",):
            importlib.import_module(f"sklearn.{mod}")
    rows = []
    for n in sizes:
        data = make_data(seed, n)
        alts = ["numpy"]
        if have_sk and (sklearn_max is None or n <= sklearn_max):
            alts.append("sklearn_ridge")
        row = {
            "instances": n,
            "budgets": N_BUDGETS,
            "actions": 4,
            "penalties": len(penalties),
            "folds": N_FOLDS,
        }
        if not have_sk:
            row["note"] = "scikit-learn not installed: pip install 'retcon[bench]'"
        row.update(check_oas_agreement(key, data, penalties=penalties, alternatives=alts))
        folds = _folds(key, data)

        t0 = time.perf_counter()
        _jax_f64(key, data, penalties)
        jax_grid(key, data, penalties)  # compile both precisions
        row["compile_s"] = time.perf_counter() - t0
        fns: dict[str, Callable[[], object]] = {
            "jax_f64": lambda data=data: _jax_f64(key, data, penalties),
            "jax_f32": lambda data=data: [f.coef for f in jax_grid(key, data, penalties)],
        }
        fns["numpy"] = lambda data=data: _numpy_fits(key, data, penalties)
        for name in alts[1:]:
            fns[name] = lambda alt=ALTERNATIVES[name], data=data, folds=folds: alt(
                data, folds, penalties
            )
        t = interleaved(fns, repeats, first={k: row[f"{k}_check_s"] for k in alts})
        row.update({f"{k}_s": v for k, v in t.items()})
        for name in alts:
            row[f"speedup_f64_vs_{name}"] = t[name] / t["jax_f64"]
            row[f"speedup_f32_vs_{name}"] = t[name] / t["jax_f32"]
        if "sklearn_ridge" in t:
            row["numpy_vs_sklearn_ridge"] = t["sklearn_ridge"] / t["numpy"]
        row["gflops_f64"] = grid_flops(n, len(penalties)) / t["jax_f64"] / 1e9
        if limits is not None:
            row["fraction_of_f64_matmul"] = row["gflops_f64"] / limits.gflops_f64
        rows.append(row)
    return rows
