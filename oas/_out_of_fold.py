"""Predict ``dU(B)`` and the crossover budget from the identified reader; compare with the data.

Out-of-fold prediction: the groups (conversations) are split into folds; the reader of
docs/model.md §2 is identified on the other folds (``oas.identify``) and evaluated on the
held-out fold's rows, each through its own evidence structure and budget. The predicted curve at a
budget is the mean over the held-out rows at that budget of ``p_o - p_ret``; the observed curve is
the mean of ``y_o - y_ret``. Both crossovers and their intervals come from
``theory.crossover_interval`` (the one estimator). Intervals: the predicted curve's from the
bootstrap refits of the reader (parameter uncertainty, rows fixed); the predictive one adds the
held-out groups' sampling (a wild cluster bootstrap with Webb's weights, the few-groups protocol
of docs/statistics.md): it is the interval for the crossover the held-out groups' data show; the
observed curve's from resampling the held-out groups.

The single-cluster route (docs/model.md §6) gives the same prediction in closed form when its
assumptions hold: ``theory.crossover`` on the empirical law of the rows' raw evidence length with
the data's mean compression ratio and the fitted ``a``, ``g``, ``phi`` (§6 parametrization:
``a phi_6 = g + (a - g) phi_2``).

References: docs/model.md §2 (reader), §6 (crossover, parametrization note), §8 (grouped CIs).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from oas._identify import (
    Identified,
    ReaderRows,
    Structure,
    identify,
    success_prob_rows,
    support_fractions,
    unpack_theta,
)
from oas._ridge import grouped_folds
from retcon.bootstrap import delta_curve_replicates
from retcon.vocab import OPERATORS
from theory import crossover, crossover_interval, empirical_lengths


class OutOfFold(NamedTuple):
    """Out-of-fold predicted success probabilities of every row.

    Attributes:
      p: ``(n, 4)`` at each fold's maximum-likelihood reader.
      p_boot: ``(R, n, 4)`` at each fold's bootstrap refits.
      fold: ``(n,)`` int, the fold that held the row out.
      fits: the ``Identified`` reader of each fold (trained without it).
    """

    p: np.ndarray
    p_boot: np.ndarray
    fold: np.ndarray
    fits: list


class CurveComparison(NamedTuple):
    """Predicted vs observed ``dU_o(B)`` and crossover, per operator (OPERATORS order).

    Attributes:
      budgets: ``(m,)``.
      predicted, predicted_lower, predicted_upper: ``(3, m)`` predicted ``dU``.
      observed, observed_lower, observed_upper: ``(3, m)`` observed ``dU``.
      truth: ``(3, m)`` ``dU`` of the true success probabilities (simulation), else None.
      crossover: dict operator -> {"predicted": {...}, "predictive": {...}, "observed": {...},
        "truth": {...} or None}, each ``{"budget", "lower", "upper", "status",
        "share_with_crossover"}``. ``predicted``'s interval is parameter uncertainty only (the
        refits); ``predictive``'s adds the held-out groups' sampling (``held_out_deviations``):
        the interval for the crossover these groups' data will show.
      n_rows, n_groups: rows and groups compared.
    """

    budgets: np.ndarray
    predicted: np.ndarray
    predicted_lower: np.ndarray
    predicted_upper: np.ndarray
    observed: np.ndarray
    observed_lower: np.ndarray
    observed_upper: np.ndarray
    truth: np.ndarray | None
    crossover: dict
    n_rows: int
    n_groups: int


def predict_success(theta, structure: Structure, budget, slot, *, support=None) -> np.ndarray:
    """``(..., n, 4)`` success probabilities of rows at their budgets for ``(..., P)`` readers;
    ``support``: the rows' ``support_fractions(structure, budget)`` when already computed."""
    frac = support_fractions(structure, budget) if support is None else support
    th = np.asarray(theta, np.float32)
    if th.ndim == 1:
        return success_prob_rows(th, frac, slot)
    return success_prob_rows(th.reshape(-1, th.shape[-1]), frac, slot).reshape(
        *th.shape[:-1], frac.shape[0], 4
    )


def out_of_fold(
    key: jax.Array,
    rows: ReaderRows,
    *,
    folds: int = 5,
    n_resamples: int = 200,
    level: float = 0.95,
) -> OutOfFold:
    """Identify the reader on all folds but one and predict the held-out rows, for every fold.

    Args:
      key: JAX key (fold assignment and each fold's bootstrap).
      rows: ``ReaderRows`` (``oas.reader_rows``): their support is computed once, and every
        fold's fit and prediction takes its slice.
      folds: number of group folds (the number of groups: leave one group out).
      n_resamples: bootstrap refits per fold.
      level: CI level of each fit.

    Returns:
      ``OutOfFold``.

    References: docs/model.md §2, §8.
    """
    k_fold, k_fit = jax.random.split(key)
    fold = grouped_folds(k_fold, rows.groups, int(folds))  # the one grouped fold assignment
    n = rows.n
    p = np.full((n, 4), np.nan)
    p_boot = np.full((int(n_resamples), n, 4), np.nan)
    fits = []
    for f in range(int(folds)):
        tr, te = fold != f, fold == f
        fit = identify(
            jax.random.fold_in(k_fit, f), rows.take(tr), n_resamples=n_resamples, level=level
        )
        fits.append(fit)
        held = rows.take(te)
        p[te] = predict_success(
            fit.theta, held.structure, held.budget, held.slot, support=held.support
        )
        if n_resamples:
            p_boot[:, te] = predict_success(
                fit.theta_boot, held.structure, held.budget, held.slot, support=held.support
            )
    return OutOfFold(p, p_boot, fold, fits)


def _curve(values, budget, grid):
    """``(..., m, k)`` mean of ``values (..., n, k)`` over the rows at each grid budget.

    Each budget's rows are summed in row order, one grid budget at a time (a masked sum, not a
    one-hot contraction over every row: 10x less work at 29 budgets, the same additions in the
    same order, so the same bits; ``tests/oas/test_identify.py`` pins it to the contraction)."""
    b = np.asarray(budget)
    v = np.asarray(values, np.float64)
    s = np.zeros((*v.shape[:-2], len(grid), v.shape[-1]))
    counts = np.zeros(len(grid))
    for j, g in enumerate(grid):
        rows = b == g
        counts[j] = rows.sum()
        if counts[j]:
            s[..., j, :] = v[..., rows, :].sum(axis=-2)
    return s / np.where(counts > 0, counts, np.nan)[:, None]


def _crossover_summary(budgets, point, boot, level) -> dict:
    """Point crossover of ``point (m,)`` and its interval over the bootstrap curves
    (``theory.crossover_interval``; ``boot`` ``None`` gives no interval)."""
    reps = np.zeros((0, len(budgets))) if boot is None else np.asarray(boot, np.float64)
    c = crossover_interval(budgets, point, reps, level=level)
    return {
        "budget": _num(c.crossover_budget),
        "status": str(c.status),
        "lower": _num(c.lower),
        "upper": _num(c.upper),
        "share_with_crossover": _num(c.found_share),
    }


def _num(x):
    x = float(x)
    return None if math.isnan(x) else x


def compare_crossovers(
    key: jax.Array,
    predicted,
    predicted_boot,
    budget,
    outcomes,
    groups,
    *,
    truth=None,
    n_resamples: int = 1000,
    level: float = 0.95,
) -> CurveComparison:
    """Predicted vs observed ``dU_o(B)`` curves and crossovers over a set of rows.

    Args:
      key: JAX key for resampling the groups of the observed curve.
      predicted: ``(n, 4)`` predicted success probabilities (out of fold).
      predicted_boot: ``(R, n, 4)`` the same at bootstrap refits (or None).
      budget: ``(n,)``; outcomes: ``(n, 4)``; groups: ``(n,)``.
      truth: optional ``(n, 4)`` true success probabilities (simulation).
      n_resamples: group resamples of the observed curve.
      level: CI level.

    Returns:
      ``CurveComparison``.

    References: docs/model.md §6.4 (crossover of a sampled curve), §8.
    """
    budget = np.asarray(budget, np.float64)
    grid = np.unique(budget)
    y = np.asarray(outcomes, np.float64)
    alpha = (1.0 - level) / 2.0

    def delta(v):
        return v[..., 1:] - v[..., :1]

    pred = _curve(delta(np.asarray(predicted)), budget, grid).T  # (3, m)
    pboot = None
    if predicted_boot is not None and np.asarray(predicted_boot).shape[0]:
        pboot = np.moveaxis(_curve(delta(np.asarray(predicted_boot)), budget, grid), -1, 0)
    k_wild = jax.random.fold_in(key, 7)
    obs, oboot = delta_curve_replicates(
        key, y, np.asarray(groups), budget, grid, n_resamples=int(n_resamples)
    )  # (3, m), (R, 3, m)
    # predictive replicates: each refit's curve plus a wild-cluster draw of the held-out groups'
    # sampling deviation (the curve a new draw of these groups' outcomes would show)
    n_pred = int(n_resamples) if pboot is None else pboot.shape[1]  # pboot: (3, R, m)
    dev = held_out_deviations(k_wild, delta(y), budget, grid, groups, n_pred)  # (R, m, 3)
    pcurves = pred.T[None] if pboot is None else np.moveaxis(pboot, 0, -1)  # (R|1, m, 3)
    predictive = np.moveaxis(pcurves + dev, -1, 1)  # (R, 3, m)
    tr = None if truth is None else _curve(delta(np.asarray(truth, np.float64)), budget, grid).T
    cross = {}
    for j, o in enumerate(OPERATORS):
        cross[o] = {
            "predicted": _crossover_summary(
                grid, pred[j], None if pboot is None else pboot[j], level
            ),
            "predictive": _crossover_summary(grid, pred[j], predictive[:, j], level),
            "observed": _crossover_summary(grid, obs[j], oboot[:, j], level),
            "truth": None if tr is None else _crossover_summary(grid, tr[j], None, level),
        }

    def q(a, x):  # pointwise percentile over the bootstrap axis of (3, R, m)
        return np.full_like(pred, np.nan) if a is None else np.nanquantile(a, x, axis=1)

    return CurveComparison(
        budgets=grid,
        predicted=pred,
        predicted_lower=q(pboot, alpha),
        predicted_upper=q(pboot, 1.0 - alpha),
        observed=obs,
        observed_lower=np.nanquantile(oboot, alpha, axis=0),
        observed_upper=np.nanquantile(oboot, 1.0 - alpha, axis=0),
        truth=tr,
        crossover=cross,
        n_rows=int(budget.size),
        n_groups=int(np.unique(np.asarray(groups).astype(str)).size),
    )


def held_out_deviations(key: jax.Array, diffs, budget, grid, groups, n_resamples: int):
    """Wild cluster bootstrap draws of the sampling deviation of a ``dU`` curve over groups.

    Each row's residual ``e_i = d_i - dbar(B_i)`` (``d``: ``y_o - y_ret``, ``dbar``: the mean at
    that budget) is summed per group and budget; a draw is ``sqrt(G / (G - 1)) sum_g w_g E_g(B) /
    N(B)`` with Webb's six-point weights ``w_g`` (``retcon.inference.webb_weights``): mean 0 and
    the cluster-robust variance of the curve, with ``6**G`` patterns even at ``G = 10``.

    Args:
      key: JAX key; diffs: ``(n, k)`` per-row differences; budget: ``(n,)``; grid: ``(m,)``;
      groups: ``(n,)`` labels; n_resamples: ``R``.

    Returns:
      ``(R, m, k)`` deviations (0 with a single group).

    References: docs/statistics.md (the few-groups protocol); Webb (2014); Cameron & Miller
    (2015), section VI.C (the small-G correction).
    """
    from retcon.inference import webb_weights

    d = np.asarray(diffs, np.float64)
    onehot = (np.asarray(budget)[:, None] == np.asarray(grid)[None, :]).astype(np.float64)
    counts = onehot.sum(0)  # (m,)
    mean = (onehot.T @ d) / np.where(counts > 0, counts, 1.0)[:, None]  # (m, k)
    resid = d - onehot @ mean  # (n, k)
    _, gid = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    gid = gid.reshape(-1)
    G = int(gid.max()) + 1
    if G < 2:
        return np.zeros((int(n_resamples), onehot.shape[1], d.shape[1]))
    per = np.zeros((G, onehot.shape[1], d.shape[1]))
    np.add.at(per, gid, onehot[:, :, None] * resid[:, None, :])
    w = webb_weights(key, G, int(n_resamples)) * math.sqrt(G / (G - 1.0))  # (R, G)
    return np.einsum("rg,gmk->rmk", w, per) / np.where(counts > 0, counts, np.nan)[None, :, None]


def single_cluster_crossover(fit: Identified, raw_lengths, *, slot: int = 0) -> dict:
    """The §6 single-cluster crossover of each operator from a fitted reader, with a CI.

    ``theory.crossover`` on the empirical law of ``raw_lengths`` (one per query: the raw evidence
    tokens), with ``rho_o`` the data's mean compression ratio and the fitted ``a_t``, ``g``,
    ``phi_{o,t}`` of type ``slot`` mapped to §6's parametrization. Exact only under §6's
    assumptions (one cluster, prefix packing, no distractors).

    Returns:
      dict operator -> ``{"budget", "lower", "upper", "status"}``.

    References: docs/model.md §6 (parametrization note, Proposition 2).
    """

    dist = empirical_lengths(np.asarray(raw_lengths, np.float64))
    out = {}
    alpha = (1.0 - fit.level) / 2.0
    for j, o in enumerate(OPERATORS):
        rho = float(fit.compress_ratio[j, slot])

        def one(theta, j=j, rho=rho):
            g, a, phi = (np.asarray(x, np.float64) for x in unpack_theta(jnp.asarray(theta)))
            a_t, ph = float(a[slot]), float(phi[j, slot])
            phi6 = (float(g) + (a_t - float(g)) * ph) / a_t
            c = crossover(dist, compress_ratio=rho, fidelity=phi6, acc_raw=a_t, acc_guess=float(g))
            return math.nan if c.crossover_budget is None else float(c.crossover_budget), c.status

        if not 0 < rho < 1:
            out[o] = {"budget": None, "lower": None, "upper": None, "status": "none"}
            continue
        b, status = one(fit.theta)
        boot = np.array([one(t)[0] for t in fit.theta_boot]) if fit.theta_boot.shape[0] else None
        lo = hi = None
        if boot is not None and np.isfinite(boot).any():
            filled = np.where(np.isfinite(boot), boot, 0.0)
            lo, hi = _num(np.quantile(filled, alpha)), _num(np.quantile(filled, 1 - alpha))
        out[o] = {"budget": _num(b), "lower": lo, "upper": hi, "status": status}
    return out


__all__ = [
    "CurveComparison",
    "OutOfFold",
    "compare_crossovers",
    "held_out_deviations",
    "out_of_fold",
    "predict_success",
    "single_cluster_crossover",
]
