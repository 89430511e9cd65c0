"""Claim 5's statistics: crossovers per evidence-length stratum (strata by ``oas.length_strata``), and the slope of log B* on log L.

The crossover budget ``B*`` is measured per evidence-length stratum with the few-groups protocol
(docs/statistics.md): per-conversation ``dU`` curves per stratum, their mean, and one wild
cluster bootstrap (Webb's weights) shared by every stratum, operator and budget. The slope of
``log B*`` on ``log L`` over the strata is 1 when relative pressure governs (MODEL §6.5); its
interval keeps every resample (a resample without a root in a stratum crosses at 0 or inf there,
and its slope is then infinite or undefined, which widens the interval instead of being dropped,
as MODEL §6.4's interval rule asks).

References: MODEL §6.4-6.5.
"""

from __future__ import annotations

import numpy as np

from paper_checks._curves import crossover_estimates
from paper_checks._types import Estimate
from retcon.inference import group_means, wild_cluster_replicates
from retcon.vocab import ACTIONS


def identical_operators(paired) -> dict[str, str]:
    """``{operator: earlier action}`` for operators whose outcome equals an earlier action's on every
    row (on LoCoMo the dataset's merge and rewrite are the same text)."""
    y = np.asarray(paired.outcomes, float)
    out = {}
    for k, op in enumerate(ACTIONS[1:], 1):
        for j in range(1, k):
            if np.array_equal(y[:, k], y[:, j]):
                out[op] = ACTIONS[j]
                break
    return out


def stratified_group_curves(outcomes, group, budget, strata, budgets) -> np.ndarray:
    """Per-group ``dU_k(b)`` per stratum: ``(G, S, K, m)`` (NaN where a group has no row).

    Args:
      outcomes: ``(n, K + 1)``, ``ret`` first; group, budget, strata: ``(n,)``; budgets: ``(m,)``.
    """
    y = np.asarray(outcomes, float)
    b = np.asarray(budget, float)
    st = np.asarray(strata, int)
    grid = np.asarray(budgets, float)
    S, K, m = int(st.max()) + 1, y.shape[1] - 1, grid.size
    diff = y[:, 1:] - y[:, :1]  # (n, K)
    at = b[:, None] == grid[None, :]  # (n, m)
    ins = st[:, None] == np.arange(S)[None, :]  # (n, S)
    mask = ins[:, :, None, None] & np.ones((1, 1, K, 1), bool) & at[:, None, None, :]
    values = np.broadcast_to(diff[:, None, :, None], mask.shape)
    n = len(y)
    return group_means(values.reshape(n, -1), group, mask.reshape(n, -1)).reshape(-1, S, K, m)


def stratified_crossovers(key, group_curves, budgets, *, n_resamples: int):
    """Crossover per stratum and operator with its wild-cluster-bootstrap interval.

    Args:
      key: JAX PRNG key; group_curves: ``(G, S, K, m)`` (``stratified_group_curves``);
      budgets: ``(m,)``.

    Returns:
      ``(est, reps)``: ``est[s][k]`` an Estimate (missing without a point crossover) and ``reps``
      ``(R, S, K)`` the resampled crossovers, rootless ones placed at 0 or inf
      (``theory.crossover_replicates``).
    """
    import theory

    point, reps = wild_cluster_replicates(key, group_curves, n_resamples=n_resamples)
    est = crossover_estimates(budgets, point, reps)  # every stratum and operator in one call
    return est, theory.crossover_replicates(budgets, reps)


def slope_estimate(lengths, point, replicates, *, level: float = 0.95) -> Estimate:
    """Least-squares slope of ``log B*`` on ``log L`` over strata, with a percentile interval over
    resampled crossovers ``(R, S)`` that keeps every resample (MODEL §6.5: slope 1 when relative
    pressure governs).

    A resample with a crossover at 0 or inf in some stratum has an infinite slope (its sign set by
    the stratum's weight) or, when the infinities pull both ways, an undefined one, which counts
    as ``-inf`` for the lower end and ``+inf`` for the upper: such resamples widen the interval,
    none is dropped. Ends are order statistics (``lower`` rounds down, ``higher`` up).
    """
    x = np.log(np.asarray(lengths, float))
    xc = x - x.mean()
    c = xc / (xc @ xc)  # slope = c @ log B*, with sum(c) = 0

    def slope(b):
        logb = np.log(np.asarray(b, float))
        with np.errstate(invalid="ignore"):
            terms = c * logb
            return np.where(np.isnan(terms).any(-1), np.nan, terms.sum(-1))

    with np.errstate(divide="ignore"):
        p = float(slope(np.asarray(point, float)))
        s = slope(np.asarray(replicates, float))
    a = (1 - level) / 2
    lo = np.quantile(np.where(np.isnan(s), -np.inf, s), a, method="lower")
    hi = np.quantile(np.where(np.isnan(s), np.inf, s), 1 - a, method="higher")
    if not np.isfinite(p):
        return Estimate.missing()
    return Estimate(p, float(min(lo, p)), float(max(hi, p)))


def slope_test(key, group_curves, budgets, lengths, *, n_resamples: int, min_strata: int = 3):
    """Claim 5 on per-group stratified curves: per operator ``(90% Estimate, 95% Estimate)`` of the
    slope over the strata whose point curve has a crossover (None with fewer than ``min_strata``).

    Args:
      key: JAX PRNG key; group_curves: ``(G, S, K, m)``; budgets: ``(m,)``; lengths: ``(S,)``.

    Returns:
      ``(slopes, est)``: ``slopes[k]`` the pair or None; ``est`` as ``stratified_crossovers``.
    """
    est, reps = stratified_crossovers(key, group_curves, budgets, n_resamples=n_resamples)
    S, K = len(est), len(est[0])
    out = []
    for k in range(K):
        keep = [s for s in range(S) if est[s][k].defined]
        if len(keep) < min_strata:
            out.append(None)
            continue
        L = np.asarray(lengths, float)[keep]
        pts = [est[s][k].point for s in keep]
        r = reps[:, keep, k]
        out.append((slope_estimate(L, pts, r, level=0.90), slope_estimate(L, pts, r, level=0.95)))
    return out, est
