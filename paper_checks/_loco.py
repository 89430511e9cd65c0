"""Leave-one-conversation-out evaluation of the OAS policies, and intervals honest with few groups.

With G groups (10 LoCoMo conversations) a single train / calibration / test split scores 3 test
conversations, and a percentile cluster bootstrap over 3 (or 10) groups covers well below its
nominal level. Here every conversation is the test set once: the router is fitted and calibrated
on the other G - 1 (train and calibration parts by group, ``oas.group_split``), every policy
chooses on the held-out conversation, and a statistic is first computed per conversation, then
combined by the mean over conversations with a Student-t interval on G - 1 degrees of freedom
(``paper_checks._curves.t_estimate``, ``retcon.inference.group_t_interval`` in an ``Estimate``),
whose coverage with 10 groups is checked by simulation in the tests.

References: MODEL §8 (OAS, calibrated variants, MLP control, best fixed policy, harm).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from oas import (
    argmax_policy,
    best_fixed_actions,
    calibrate_accuracy,
    calibrate_crc,
    calibrated_policy,
    evidence_fit_rule,
    fit_mlp,
    group_split,
    knn_router,
    predict_mlp,
    predict_ridge,
    training_selected_operator,
)
from paper_checks._curves import raw_grounded
from paper_checks._policies import fit_ridge_on
from retcon.errors import InputError


class LocoEval(NamedTuple):
    """Held-out choices of every policy, each conversation held out once.

    Fields (``n`` rows: all rows of the paired data, each scored in the fold that held out its
    group):
      index: ``(n,)`` row of the paired data.
      fold: ``(n,)`` int, the held-out group's number (0 .. G-1).
      groups: ``(G,)`` the group labels, in fold order.
      outcomes: ``(n, 4)`` the rows' outcomes; budget: ``(n,)``; grounded: ``(n,)`` ``q in G_B``.
      chosen: ``{policy: (n,) int}`` the chosen action; calibrated variants are named
        ``oas-calibrated@<alpha>`` and ``oas-crc@<alpha>``.
      alphas: the calibration targets swept.
    """

    index: np.ndarray
    fold: np.ndarray
    groups: np.ndarray
    outcomes: np.ndarray
    budget: np.ndarray
    grounded: np.ndarray
    chosen: dict
    alphas: tuple

    def outcome(self, policy: str) -> np.ndarray:
        return self.outcomes[np.arange(len(self.index)), self.chosen[policy]]

    def harm(self, policy: str) -> np.ndarray:
        return (self.outcome(policy) < self.outcomes[:, 0]).astype(float)

    def per_group(self, values, rows=None) -> np.ndarray:
        """``(G,)`` the mean of ``values`` over each held-out conversation's ``rows`` (NaN where
        the conversation has none)."""
        v = np.asarray(values, float)
        rows = np.ones(len(v), bool) if rows is None else np.asarray(rows, bool)
        out = np.full(len(self.groups), np.nan)
        for g in range(len(self.groups)):
            r = rows & (self.fold == g)
            if r.any():
                out[g] = v[r].mean()
        return out


def calibrated_name(variant: str, alpha: float) -> str:
    return f"{variant}@{alpha:g}"


def loco_evaluate(
    key,
    paired,
    *,
    alphas=(0.1,),
    calibration_fraction: float = 0.3,
    mlp: bool = True,
    baselines: bool = False,
    progress=None,
) -> LocoEval:
    """Leave-one-group-out choices of always-ret, best-fixed, oas, its calibrated variants at every
    alpha and the MLP (module docstring).

    Args:
      key: JAX key; fold ``g`` uses ``fold_in(key, g)``.
      paired: ``oas.PairedData`` with at least 3 groups.
      alphas: harm targets of both calibrations (``oas.calibrate_accuracy``, ``oas.calibrate_crc``).
      calibration_fraction: share of the G - 1 training groups used to calibrate tau_B.
      mlp: fit the MLP control too (``oas.fit_mlp`` on all G - 1 groups, like best-fixed: its width,
        decay and stopping epoch come from its own inner grouped CV there).
      baselines: add the paper's routing baselines of Table 8 (``fixed-operator``,
        ``evidence-fit``, ``knn``; ``oas._baselines``), fitted on the G - 1 training groups.

    Raises:
      InputError: fewer than 3 groups.
    """
    groups_all = np.asarray(paired.group_id).astype(str)
    labels = np.unique(groups_all)
    if labels.size < 3:
        raise InputError(
            f"leave-one-group-out needs at least 3 groups (group_id values); got {labels.size}."
        )
    n = paired.n
    chosen: dict[str, np.ndarray] = {}
    fold = np.full(n, -1)
    for g, label in enumerate(labels):
        if progress:
            progress(f"leave-one-out fold {g + 1}/{labels.size}")
        k_split, k_fit, k_mlp = jax.random.split(jax.random.fold_in(key, g), 3)
        test_rows = np.flatnonzero(groups_all == label)
        seen_rows = np.flatnonzero(groups_all != label)
        seen, test = paired.take(seen_rows), paired.take(test_rows)
        part = np.asarray(
            group_split(k_split, seen.group_id, (1 - calibration_fraction, calibration_fraction))
        )
        train, calib = seen.take(part == 0), seen.take(part == 1)
        fit = fit_ridge_on(k_fit, train)
        mu_cal = predict_ridge(fit, calib.features)
        mu = predict_ridge(fit, test.features)
        budgets = np.unique(test.budget)
        fixed = best_fixed_actions(seen.outcomes, seen.budget, budgets)
        picks = {
            "always-ret": np.zeros(test.n, int),
            "best-fixed": fixed[np.searchsorted(budgets, test.budget)],
            "oas": argmax_policy(mu),
        }
        for a in alphas:
            th = calibrate_accuracy(mu_cal, calib.outcomes, calib.budget, float(a))
            picks[calibrated_name("oas-calibrated", a)] = calibrated_policy(mu, test.budget, th)
            th = calibrate_crc(mu_cal, calib.outcomes, calib.budget, float(a))
            picks[calibrated_name("oas-crc", a)] = calibrated_policy(mu, test.budget, th)
        if mlp:  # the MLP's own inner grouped CV on the G - 1 groups (MODEL §8)
            m = fit_mlp(k_mlp, seen.features, seen.outcomes, seen.group_id)
            picks["mlp"] = argmax_policy(predict_mlp(m, test.features))
        if baselines:
            op = training_selected_operator(seen.outcomes)
            picks["fixed-operator"] = np.full(test.n, op)
            picks["evidence-fit"] = evidence_fit_rule(test.features, op)
            picks["knn"] = knn_router(
                seen.features, seen.outcomes, seen.group_id, test.features
            ).actions
        for name, c in picks.items():
            chosen.setdefault(name, np.zeros(n, int))[test_rows] = np.asarray(c, int)
        fold[test_rows] = g
    return LocoEval(
        np.arange(n),
        fold,
        labels,
        np.asarray(paired.outcomes, float),
        np.asarray(paired.budget, float),
        raw_grounded(paired),
        chosen,
        tuple(float(a) for a in alphas),
    )
