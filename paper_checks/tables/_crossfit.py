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

Rows with the paper's LongMemEval split (``meta_split``: train / dev / test) are evaluated by
``split_protocol`` instead: the same fitting and calibration (``_choose``), once, fitted on train,
calibrated on dev, scored on test (MODEL §11: LongMemEval is split before modelling).

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
from paper_checks._curves import raw_grounded
from paper_checks._loco import LocoEval
from paper_checks._policies import fit_ridge_on
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
        picks = _choose(
            jax.random.fold_in(key, 1 + f),
            paired.take(fit_rows),
            paired.take(cal_rows),
            paired.take(np.concatenate([fit_rows, cal_rows])),
            paired.take(test_rows),
        )
        for name, c in picks.items():
            chosen[name][test_rows] = c
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


def _choose(key: jax.Array, train, calib, seen, test) -> dict[str, np.ndarray]:
    """``{policy: (test.n,) int}``: every policy of ``POLICIES`` fitted and chosen once.

    The ridge utility model is fitted on ``train`` (its penalty by inner grouped CV there),
    ``tau_B`` calibrated on ``calib`` (the zero-harm rule), the baselines and the MLP control
    (``fit_mlp(fold_in(key, 1), ..)``) fitted on ``seen``; all choose on ``test``. The one body of
    cross-fitting's rotation and of ``split_protocol``.

    References: MODEL §8 (policies, calibration, baselines), §11 (router evaluation).
    """

    ridge = fit_ridge_on(key, train, backend="numpy")
    mu, mu_cal = predict_ridge(ridge, test.features), predict_ridge(ridge, calib.features)
    th = calibrate_accuracy(mu_cal, calib.outcomes, calib.budget, 0.0)
    op = training_selected_operator(seen.outcomes)
    mlp = fit_mlp(jax.random.fold_in(key, 1), seen.features, seen.outcomes, seen.group_id)
    picks = {
        "always-ret": np.zeros(test.n, np.int64),
        "fixed-operator": np.full(test.n, op),
        "evidence-fit": evidence_fit_rule(test.features, op),
        "knn": knn_router(seen.features, seen.outcomes, seen.group_id, test.features).actions,
        "oas": argmax_policy(mu),
        "oas-calibrated@0": calibrated_policy(mu, test.budget, th),
        "mlp": argmax_policy(predict_mlp(mlp, test.features)),
    }
    return {name: np.asarray(c, np.int64) for name, c in picks.items()}


#: The paired rows' column of the paper's LongMemEval split (``oas.real`` ``pair longmemeval
#: --design paper``), its parts in order, and the protocols' names in the tables.
SPLIT_COLUMN = "meta_split"
SPLIT_PARTS = ("train", "dev", "test")
PROTOCOL_SPLIT = "split 350/75/75: fit train, calibrate dev, test"
PROTOCOL_CROSSFIT = "grouped five-fold cross-fitting"


def has_split(paired) -> bool:
    """Whether the rows carry the paper's split (the ``meta_split`` column)."""
    return SPLIT_COLUMN in paired.meta


def best_per_budget(outcomes, budget, test_budget) -> np.ndarray:
    """``(len(test_budget),)`` per budget the action of highest mean outcome on the rows
    ``(outcomes, budget)`` at that budget (ties to the earlier action); 0 (retention) at a budget
    those rows lack. The per-budget policy selected on fit data (Table 12)."""
    outcomes, budget, test_budget = map(np.asarray, (outcomes, budget, test_budget))
    chosen = np.zeros(test_budget.shape[0], np.int64)
    for b in np.unique(test_budget):
        seen = budget == b
        if seen.any():
            chosen[test_budget == b] = int(np.argmax(outcomes[seen].mean(axis=0)))
    return chosen


def split_protocol(key: jax.Array, paired) -> LocoEval:
    """Held-out choices of the Table 8 policies under the paper's LongMemEval split protocol.

    The rows' ``meta_split`` (``train`` / ``dev`` / ``test``, one per question) is the split:
    every policy is fitted on the train rows (the ridge penalty, the MLP grid and the k-NN ``k``
    by their inner grouped CV there too), ``tau_B`` calibrated on the dev rows (MODEL §8, the
    zero-harm rule at ``alpha = 0``), and every policy chooses once on the test rows. The same
    fitting and calibration as ``crossfit_evaluate`` (``_choose``), except that the baselines,
    the MLP and Table 12's per-budget policy see the train rows only (cross-fitting gives them its
    fit and calibration folds): dev calibrates ``tau_B`` and nothing else.

    Args:
      key: JAX key; the policies use ``fold_in(key, 1)`` (the MLP ``fold_in(fold_in(key, 1), 1)``).
      paired: ``oas.PairedData`` with the ``meta_split`` column.

    Returns:
      ``LocoEval`` of the test rows only: ``index`` their rows of ``paired``, ``fold`` all 0,
      ``groups`` ``["test"]``, ``chosen`` keyed by ``POLICIES`` and ``per-budget-fixed``,
      ``alphas`` ``(0.0,)``.

    Raises:
      InputError: a row's ``meta_split`` is not one of train, dev, test; a question has rows in
        two parts; or a part has no question (a file too small for the split: the error names the
        part and the count of each).

    References: MODEL §8 (calibration), §11 (LongMemEval split 350 / 75 / 75, router evaluation).
    """

    if not has_split(paired):
        raise InputError(f"split_protocol: the rows have no '{SPLIT_COLUMN}' column.")
    part = np.asarray(paired.meta[SPLIT_COLUMN], dtype=object)
    bad = [i for i, v in enumerate(part) if v not in SPLIT_PARTS]
    if bad:
        i = bad[0]
        raise InputError(
            f"split_protocol: row {i} (instance_id {paired.instance_id[i]!r}) has {SPLIT_COLUMN} "
            f"{part[i]!r}; expected one of {', '.join(SPLIT_PARTS)} ({len(bad)} such rows)."
        )
    qid = np.asarray(paired.query_id).astype(str)
    first: dict[str, str] = {}
    for q, v in zip(qid.tolist(), part.tolist(), strict=True):
        if first.setdefault(q, v) != v:
            raise InputError(
                f"split_protocol: question {q!r} has rows in {SPLIT_COLUMN} {first[q]!r} and "
                f"{v!r}; expected one part per question (MODEL §11)."
            )
    counts = {p: sum(v == p for v in first.values()) for p in SPLIT_PARTS}
    empty = [p for p in SPLIT_PARTS if counts[p] == 0]
    if empty:
        have = ", ".join(f"{p} {counts[p]}" for p in SPLIT_PARTS)
        raise InputError(
            f"split_protocol: {SPLIT_COLUMN} part '{empty[0]}' has 0 questions ({have}); the "
            "paper's split protocol (fit train, calibrate dev, test; MODEL §11) needs at least "
            "one question in each part (a LongMemEval file of three or more questions)."
        )
    rows = {p: np.flatnonzero(part == p) for p in SPLIT_PARTS}
    train, test = paired.take(rows["train"]), paired.take(rows["test"])
    chosen = _choose(jax.random.fold_in(key, 1), train, paired.take(rows["dev"]), train, test)
    chosen["per-budget-fixed"] = best_per_budget(train.outcomes, train.budget, test.budget)
    return LocoEval(
        rows["test"],
        np.zeros(test.n, np.int64),
        np.array(["test"]),
        np.asarray(test.outcomes, float),
        np.asarray(test.budget, float),
        raw_grounded(test),
        chosen,
        (0.0,),
    )
