"""Fit a full OAS router: grouped split, ridge on the training part, tau_B on the held-out part.

Protocol (MODEL §8): the groups (conversations, users) are shuffled with the key and split into a
training part and a calibration part, so no group is in both. The ridge utility model is fitted on
the training part (penalty by grouped K-fold CV inside it); tau_B of both calibrations is fitted on
the calibration part, where the model's predictions are out of sample.

References: MODEL §8.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import jax
import numpy as np

from oas._paired import PairedData
from oas._policy import calibrate_accuracy, calibrate_crc, harm
from oas._ridge import DEFAULT_PENALTIES, RidgeFit, fit_ridge, predict_ridge
from oas._router import Router, group_digests
from oas._structure import STRUCTURE_COLUMN
from oas._theory_router import fit_theory_router
from retcon.errors import InputError, check_range


def group_split(key: jax.Array, groups, fractions) -> np.ndarray:
    """Split rows into parts by group: shape ``(n,)`` part index in 0..len(fractions)-1.

    Distinct groups are shuffled with ``key`` (over sorted labels, so row order does not matter)
    and cut by the cumulative ``fractions``; every part gets at least one group.

    Args:
      key: JAX PRNG key.
      groups: shape ``(n,)`` labels.
      fractions: positive shares of groups per part (normalized).

    Returns:
      shape ``(n,)`` int.
    """
    frac = np.asarray(fractions, dtype=np.float64)
    if frac.ndim != 1 or frac.size < 1 or np.any(~(frac > 0)):
        raise InputError(f"group_split: fractions must be positive; got {frac.tolist()}.")
    labels, ids = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    n_groups, k = len(labels), len(frac)
    if n_groups < k:
        raise InputError(
            f"group_split: {k} parts need at least {k} groups (group_id values); got {n_groups}."
        )
    cuts = _cuts(n_groups, frac)
    order = np.asarray(jax.random.permutation(key, n_groups))
    part_of_rank = np.searchsorted(cuts, np.arange(n_groups), side="right")
    part_of_group = np.empty(n_groups, np.int64)
    part_of_group[order] = part_of_rank
    return part_of_group[ids.reshape(-1)]


def _cuts(n_groups: int, frac: np.ndarray) -> np.ndarray:
    k = len(frac)
    cuts = np.round(np.cumsum(frac / frac.sum())[:-1] * n_groups).astype(int)
    cuts = np.clip(cuts, np.arange(1, k), n_groups - np.arange(k - 1, 0, -1))  # >= 1 group per part
    return np.maximum.accumulate(cuts)


def split_sizes(n_groups: int, fractions) -> list[int]:
    """Groups per part that ``group_split`` makes of ``n_groups`` groups (the key only picks which)."""
    frac = np.asarray(fractions, dtype=np.float64)
    if n_groups < len(frac):
        return [0] * len(frac)
    edges = [0, *_cuts(n_groups, frac).tolist(), n_groups]
    return [edges[i + 1] - edges[i] for i in range(len(frac))]


def router_from_parts(
    fit: RidgeFit,
    calib: PairedData,
    *,
    alpha: float,
    vocabulary: str,
    packing: str = "prefix",
    provenance: dict | None = None,
) -> Router:
    """The ``Router`` of a ridge fit with both tau_B calibrations fitted on ``calib``."""
    mu = predict_ridge(fit, calib.features)
    return Router(
        mean=fit.mean,
        scale=fit.scale,
        coef=fit.coef,
        intercept=fit.intercept,
        penalty=fit.penalty,
        calibrated=calibrate_accuracy(mu, calib.outcomes, calib.budget, alpha),
        crc=calibrate_crc(mu, calib.outcomes, calib.budget, alpha),
        alpha=float(alpha),
        vocabulary=vocabulary,
        packing=packing,
        provenance=dict(provenance or {}),
    )


def calibration_harm(router: Router, calib: PairedData) -> dict:
    """Harm rate (consolidating below ``ret``, MODEL §8) of both calibrated variants on the
    calibration rows: ``{variant: {"overall": h, "max_per_budget": h_max}}``; tau_B is chosen
    budget by budget, so ``max_per_budget`` is the figure to hold against alpha."""
    out = {}
    for variant in ("calibrated", "crc"):
        h = harm(calib.outcomes, router.choose(calib.features, calib.budget, variant))
        per_budget = [float(h[calib.budget == b].mean()) for b in np.unique(calib.budget)]
        out[variant] = {"overall": float(h.mean()), "max_per_budget": max(per_budget)}
    return out


def fit_router(
    key: jax.Array,
    data: PairedData,
    *,
    alpha: float = 0.1,
    n_folds: int = 5,
    calibration_fraction: float = 0.3,
    penalties: Sequence[float] = DEFAULT_PENALTIES,
    packing: str = "prefix",
    provenance: dict[str, Any] | None = None,
) -> Router:
    """Fit the ridge OAS router and its per-budget thresholds on disjoint groups.

    Args:
      key: JAX PRNG key; split into the group split and the CV folds.
      data: paired data (MODEL §8).
      alpha: harm bound in [0, 1) for both calibrations (0: the paper's zero-harm rule).
      n_folds: grouped K-fold for the penalty.
      calibration_fraction: share of groups held out for tau_B, in (0, 1).
      penalties: ridge grid.
      packing: recorded in the router (how feature 3 was made).
      provenance: extra fields for the JSON.

    Returns:
      ``Router``.

    References: MODEL §8.
    """
    if not 0 < calibration_fraction < 1:
        raise InputError(
            f"fit_router: calibration_fraction must be in (0, 1); got {calibration_fraction}."
        )
    check_range("fit_router: alpha", alpha, 0, 1, low_open=False)
    k_split, k_folds = jax.random.split(key)
    part = group_split(k_split, data.group_id, (1 - calibration_fraction, calibration_fraction))
    train, calib = data.take(part == 0), data.take(part == 1)
    fit = fit_ridge(
        k_folds,
        train.features,
        train.outcomes,
        train.group_id,
        penalties=penalties,
        n_folds=n_folds,
    )
    prov = {
        "n_train": train.n,
        "n_calibration": calib.n,
        "groups_train": len(np.unique(train.group_id)),
        "groups_calibration": len(np.unique(calib.group_id)),
        "n_folds": int(n_folds),
        "calibration_fraction": float(calibration_fraction),
        **(provenance or {}),
    }
    router = router_from_parts(
        fit, calib, alpha=alpha, vocabulary=data.vocabulary, packing=packing, provenance=prov
    )
    fitted = {"train": group_digests(train.group_id), "calibration": group_digests(calib.group_id)}
    prov["calibration_harm"] = calibration_harm(router, calib)
    router = replace(router, fitted_groups=fitted, provenance=prov)
    if STRUCTURE_COLUMN in data.meta:  # the theory router rides along (same rows, all groups)
        router = replace(router, theory=fit_theory_router(jax.random.fold_in(key, 1), data))
    return router
