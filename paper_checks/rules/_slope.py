"""Claim 5's statistics: crossovers per evidence-length stratum (strata by ``oas.length_strata``), and the slope of log B* on log L.

The crossover budget ``B*`` is measured per evidence-length stratum with the few-groups protocol
(docs/statistics.md): per-conversation ``dU`` curves per stratum, their mean, and one wild
cluster bootstrap (Webb's weights) shared by every stratum, operator and budget. The slope of
``log B*`` on ``log L`` over the strata is 1 when relative pressure governs (MODEL §6.5); its
interval keeps every resample (a resample without a root in a stratum crosses at 0 or inf there,
and its slope is then infinite or undefined, which widens the interval instead of being dropped,
as MODEL §6.4's interval rule asks).

Claim 5's rule (``slope_verdict``, graded by ``grade_slope``) and the simulation of that same
rule's error rates (``slope_oc``) live here too: one home per rule.

References: MODEL §6.4-6.5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import jax
import numpy as np

import theory
from paper_checks._curves import crossover_estimates
from paper_checks._types import Estimate, Verdict
from paper_checks.operating import N_DATASETS, operating_characteristics
from paper_checks.rules._grades import NO, POINT, SIGNIFICANT, combine
from retcon.inference import group_means, wild_cluster_replicates


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


#: Claim 5's equivalence band for the slope of log B* on log L: "roughly constant B*/L" means
#: B* grows between as the square root and as the 1.5th power of the evidence length.
SLOPE_BAND = (0.5, 1.5)


def grade_slope(slope90: Estimate, slope95: Estimate | None = None, band=SLOPE_BAND) -> int | None:
    """Claim 5: grade of the slope of ``log B*`` on ``log L`` (MODEL §6.5: slope 1 when relative
    pressure governs), an equivalence rule.

    2 when the 90% interval lies inside ``band`` (two one-sided tests at 5%); 0 when the 95%
    interval misses the band (entirely below or above it); 1 when the 95% interval lies above 0
    (B* grows with L: the direction holds) but neither of the above; None otherwise or when the
    interval is unbounded on both sides.
    """
    s95 = slope90 if slope95 is None else slope95
    if not (slope90.defined and s95.defined):
        return None
    lo, hi = float(band[0]), float(band[1])
    if lo < slope90.lower and slope90.upper < hi:
        return SIGNIFICANT
    if s95.upper < lo or s95.lower > hi:
        return NO
    if s95.lower > 0:
        return POINT
    return None


def verdict_crossover_scaling(
    slopes: Mapping[str, tuple[Estimate, Estimate]],
    *,
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Claim 5: per real unit (source x operator), ``grade_slope`` of the fitted slope.

    Args:
      slopes: ``{unit: (90% Estimate, 95% Estimate) of the slope}``; units whose grade is None are
        named as not graded.
    """
    grades, undecided = {}, dict(inconclusive or {})
    for unit, (e90, e95) in slopes.items():
        g = grade_slope(e90, e95)
        if g is None:
            undecided[unit] = (
                f"slope {e95.fmt()} too wide to decide (neither inside nor outside the band "
                f"{SLOPE_BAND[0]:g}-{SLOPE_BAND[1]:g}, nor above 0)"
            )
        else:
            grades[unit] = g
    return combine(grades, missing, undecided)


#: Wild resamples per synthetic data set in claim 5's operating characteristics (each data set
#: is a full stratified crossover bootstrap).
OC5_RESAMPLES = 200


def slope_verdict(
    key, curves, budgets, lengths, units, *, n_resamples, missing=(), inconclusive=None
):
    """Claim 5 on per-group stratified curves ``(G, S, K, m)``: ``slope_test`` per operator
    (``units[k]`` its name, None to skip), graded by ``verdict_crossover_scaling``."""
    slopes, est = slope_test(key, curves, budgets, lengths, n_resamples=n_resamples)
    graded, undecided = {}, dict(inconclusive or {})
    for k, unit in enumerate(units):
        if unit is None:
            continue
        if slopes[k] is None:
            n = sum(e[k].defined for e in est)
            undecided[unit] = f"{n} of {len(est)} strata have a crossover; the slope needs 3"
        else:
            graded[unit] = slopes[k]
    return verdict_crossover_scaling(graded, missing=missing, inconclusive=undecided), graded, est


def _steepness(mu, logb) -> np.ndarray:
    """Per operator, the median over strata of the fall of ``dU`` per doubling of B across its
    point crossover (``(S, K, m)`` curves); a linear fit over the grid where no stratum crosses.
    Negative, at least 0.005 per doubling in size."""
    S, K, _ = mu.shape
    out = np.empty(K)
    xc = logb - logb.mean()
    for k in range(K):
        falls = []
        for s in range(S):
            d = mu[s, k]
            j = np.flatnonzero((d[:-1] > 0) & (d[1:] < 0))
            if j.size:
                i = j[-1]
                falls.append((d[i + 1] - d[i]) / (logb[i + 1] - logb[i]))
        fit = np.nanmean((mu[:, k] - np.nanmean(mu[:, k], -1, keepdims=True)) @ xc / (xc @ xc))
        out[k] = np.median(falls) if falls else fit
    return -np.maximum(np.abs(np.nan_to_num(out)), 0.005)


def slope_oc(key, curves, budgets, lengths, units, *, n_datasets: int = N_DATASETS // 2):
    """Claim 5's rule in synthetic stratified worlds with LoCoMo's per-group spread: per operator
    and stratum a ``dU`` curve linear in ``log B`` with the operator's measured steepness,
    crossing at ``B*_s`` proportional to ``L_s ** slope`` around the grid's middle (slope 1: true;
    0 and 2: null), its steepness the measured fall per doubling across the crossover
    (``_steepness``)."""
    keep = [k for k, u in enumerate(units) if u is not None]
    if not keep:
        return None
    c = np.asarray(curves, float)[:, :, keep]
    mu = np.nanmean(c, axis=0)  # (S, K, m)
    logb = np.log2(np.asarray(budgets, float))
    steep = _steepness(mu, logb)
    L = np.log2(np.asarray(lengths, float))
    mid = (logb[0] + logb[-1]) / 2

    def world(slope):
        log_bstar = mid + slope * (L - L.mean())  # (S,)
        return {"c": steep[None, :, None] * (logb[None, None, :] - log_bstar[:, None, None])}

    def rule(d):
        return slope_verdict(
            jax.random.key(0),
            d["c"],
            budgets,
            lengths,
            [f"u{k}" for k in keep],
            n_resamples=OC5_RESAMPLES,
        )[0].verdict

    return operating_characteristics(
        rule,
        c.shape[0],
        group_values={"c": c},
        true_means=world(1.0),
        null_means={"slope 0": world(0.0), "slope 2": world(2.0)},
        key=key,
        n_datasets=n_datasets,
        true_world="slope 1 (B*/L constant), curves of LoCoMo's steepness and spread",
        half_means=world(0.5),
        half_world="slope 0.5 (half of slope 1's dependence on L)",
    )
