"""Grouped five-fold cross-fitting of the routing policies: the paper's router evaluation (MODEL
§11), beside leave-one-conversation-out (``paper_checks._loco``).

The units (questions by default, as the paper: all budgets of a question in one fold) are dealt
into five folds by a keyed permutation. Rotating ``f = 0..4``: fold ``f`` is the test fold, fold
``f + 1`` (mod 5) calibrates ``tau_B``, the other three fit the ridge utility model (its penalty by
inner grouped CV on those three only); the baselines and the MLP control are fitted too. Each row
is scored once, in the rotation that tests its fold. Calibration is the paper's zero-harm rule
(``oas.calibrate_accuracy`` at ``alpha = 0``).

Where this is our reading: the deal is ``jax.random.permutation`` of the sorted unit labels, dealt
round-robin; the inner CV groups are the paired data's ``group_id`` (conversations), which makes
the penalty's choice stricter than question groups would; the baselines (``oas.knn_router`` and
the rest) and the MLP control (``oas.fit_mlp``: width, decay and stopping epoch by its own inner
grouped CV on the same ``group_id``) are fitted on the fit and calibration folds together, like
best-fixed in ``paper_checks._loco`` (the MLP calibrates nothing, so the calibration fold is
training data to it; the paper does not say which folds its MLP saw).

References: MODEL §8 (policies, calibration, baselines), §11 (router evaluation).
"""

from __future__ import annotations

import jax
import numpy as np

from oas import (
    argmax_policy,
    calibrate_accuracy,
    calibrated_policy,
    evidence_fit_rule,
    fit_mlp,
    grouped_folds,
    knn_router,
    predict_mlp,
    predict_ridge,
    training_selected_operator,
)
from paper_checks._loco import LocoEval
from retcon.errors import InputError

N_FOLDS = 5
#: The policies scored, in the paper's Table 8 order (``oas-calibrated@0``: the zero-harm rule),
#: then the MLP control of Table 11.
POLICIES = ("always-ret", "fixed-operator", "evidence-fit", "knn", "oas", "oas-calibrated@0", "mlp")


def deal_folds(key: jax.Array, units, n_folds: int = N_FOLDS) -> np.ndarray:
    """``(n,)`` fold of each row: its unit's place in a keyed permutation of the sorted distinct
    units, dealt round-robin into ``n_folds`` folds (every row of a unit in one fold)."""
    u = np.asarray(units).astype(str)
    labels = np.unique(u)
    if labels.size < n_folds:
        raise InputError(
            f"cross-fitting needs at least {n_folds} units (questions) for {n_folds} folds; got "
            f"{labels.size}."
        )
    # the same deal as ``oas.grouped_folds`` (sorted labels, keyed permutation, round-robin),
    # whose permutation compiles once for every unit count
    return np.asarray(grouped_folds(key, u, n_folds), dtype=np.int64)


def crossfit_evaluate(key: jax.Array, paired, *, units=None, n_folds: int = N_FOLDS) -> LocoEval:
    """Held-out choices of the Table 8 policies under grouped five-fold cross-fitting.

    Args:
      key: JAX key; the deal uses ``fold_in(key, 0)``, rotation ``f`` ``fold_in(key, 1 + f)`` (its
        MLP ``fold_in(fold_in(key, 1 + f), 1)``).
      paired: ``oas.PairedData``.
      units: ``(n,)`` the fold unit of each row; ``None``: the question (``paired.query_id``).
      n_folds: folds (the paper: 5; at least 3: fit, calibrate, test).

    Returns:
      ``LocoEval`` whose ``fold`` is the test fold of each row and ``groups`` the fold names
      (``fold0`` ..), ``chosen`` keyed by ``POLICIES``, ``alphas`` ``(0.0,)``.

    References: MODEL §8, §11 (router evaluation).
    """
    from paper_checks._curves import raw_grounded
    from paper_checks._policies import fit_ridge_on

    if n_folds < 3:
        raise InputError(f"crossfit_evaluate: n_folds must be >= 3; got {n_folds}.")
    fold = deal_folds(
        jax.random.fold_in(key, 0),
        paired.query_id if units is None else units,
        n_folds,
    )
    chosen = {p: np.zeros(paired.n, np.int64) for p in POLICIES}
    for f in range(n_folds):
        test_rows = np.flatnonzero(fold == f)
        cal_rows = np.flatnonzero(fold == (f + 1) % n_folds)
        fit_rows = np.flatnonzero((fold != f) & (fold != (f + 1) % n_folds))
        train, calib, test = paired.take(fit_rows), paired.take(cal_rows), paired.take(test_rows)
        seen = paired.take(np.concatenate([fit_rows, cal_rows]))
        k_f = jax.random.fold_in(key, 1 + f)
        ridge = fit_ridge_on(k_f, train, backend="numpy")
        mu, mu_cal = predict_ridge(ridge, test.features), predict_ridge(ridge, calib.features)
        th = calibrate_accuracy(mu_cal, calib.outcomes, calib.budget, 0.0)
        op = training_selected_operator(seen.outcomes)
        mlp = fit_mlp(jax.random.fold_in(k_f, 1), seen.features, seen.outcomes, seen.group_id)
        picks = {
            "always-ret": np.zeros(test.n, np.int64),
            "fixed-operator": np.full(test.n, op),
            "evidence-fit": evidence_fit_rule(test.features, op),
            "knn": knn_router(seen.features, seen.outcomes, seen.group_id, test.features).actions,
            "oas": argmax_policy(mu),
            "oas-calibrated@0": calibrated_policy(mu, test.budget, th),
            "mlp": argmax_policy(predict_mlp(mlp, test.features)),
        }
        for name, c in picks.items():
            chosen[name][test_rows] = np.asarray(c, np.int64)
    return LocoEval(
        np.arange(paired.n),
        fold,
        np.array([f"fold{f}" for f in range(n_folds)]),
        np.asarray(paired.outcomes, float),
        np.asarray(paired.budget, float),
        raw_grounded(paired),
        chosen,
        (0.0,),
    )
