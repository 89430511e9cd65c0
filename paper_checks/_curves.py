"""Curves of ``dU`` against the budget from paired outcomes, with few-groups intervals.

Paired data (``oas.PairedData``: one row per question x budget, outcomes of all four actions;
MODEL §8) give the utility differences of MODEL §3. Every statistic follows the few-groups
protocol of docs/statistics.md (``retcon.inference``): it is computed per group (conversation),
``group_curves``; the curve is the mean of the per-group curves; the pointwise bands are
Student-t intervals on ``G - 1`` df; the crossover's interval comes from a wild cluster bootstrap
with Webb's weights (``retcon.inference.wild_cluster_replicates``: every resample is a whole
``dU(B)`` curve), read by the one crossover rule ``theory.crossover_interval``.
"""

from __future__ import annotations

import numpy as np

import theory
from paper_checks._types import Estimate, OperatorCurve, SourceCurves
from retcon.errors import InputError
from retcon.inference import (
    group_delta_curves,
    group_means,
    group_t_interval,
    wild_cluster_replicates,
)
from retcon.vocab import ACTIONS, OPERATORS

LEVEL = 0.95


def evidence_length(paired) -> np.ndarray:
    """``len(C)`` in tokens per row: the stored column ``oas.PairedData.cluster_tokens``.

    Raises:
      InputError: the paired data carry no ``cluster_tokens``.
    """
    stored = getattr(paired, "cluster_tokens", None)
    if stored is None:
        raise InputError(
            "paired data without cluster_tokens: claims 1-6 need len(C) per instance (docs/"
            "paired-data.md, column cluster_tokens)."
        )
    return np.asarray(stored, float)


def raw_grounded(paired) -> np.ndarray:
    """1.0 where retention packs all of ``C`` under the budget (``q in G_B``, MODEL §3): the one
    definition, ``oas.PairedData.raw_grounded`` (NaN where ``len(C)`` is unknown)."""
    return np.asarray(paired.raw_grounded, float)


def t_estimate(values, level: float = LEVEL) -> Estimate:
    """``Estimate`` of the mean of per-group values ``(G,)`` with its Student-t interval."""
    ci = group_t_interval(np.asarray(values, float).reshape(-1), level=level)
    if not np.isfinite(ci.estimate[0]):
        return Estimate.missing()
    lo, hi = float(ci.lower[0]), float(ci.upper[0])
    if not np.isfinite(lo):
        lo, hi = -np.inf, np.inf
    return Estimate(float(ci.estimate[0]), lo, hi)


def crossover_estimate(budgets, point, replicates, level: float = LEVEL) -> tuple[Estimate, str]:
    """Crossover of a ``dU`` curve with an interval from resampled curves (MODEL §6.4).

    ``theory.crossover_interval``, the one rule: a resampled curve without a ``+ -> -`` root
    counts as crossing below the grid (0) when it is never positive and above it (inf) otherwise.
    An interval that reaches 0 or inf is unbounded.

    Args:
      budgets: ``(nB,)``; point: ``(nB,)``; replicates: ``(R, nB)``.

    Returns:
      ``(Estimate, status)``; ``Estimate.missing()`` when the point curve has no crossover.
    """

    c = theory.crossover_interval(
        np.asarray(budgets, float), np.asarray(point, float), replicates, level=level
    )
    status = str(c.status)
    if not np.isfinite(c.crossover_budget):
        return Estimate.missing(), status
    return Estimate(float(c.crossover_budget), float(c.lower), float(c.upper)), status


def crossover_estimates(budgets, point, replicates, level: float = LEVEL) -> list:
    """``crossover_estimate`` of every curve of a ``(S, K, nB)`` stack in one
    ``theory.crossover_interval`` call (its rule is per curve, so each entry is the one
    ``crossover_estimate`` gives that curve alone).

    Args:
      budgets: ``(nB,)``; point: ``(S, K, nB)``; replicates: ``(R, S, K, nB)``.

    Returns:
      ``est[s][k]`` the ``Estimate`` (``Estimate.missing()`` without a point crossover).
    """

    p = np.asarray(point, float)
    c = theory.crossover_interval(np.asarray(budgets, float), p, replicates, level=level)
    S, K = p.shape[:2]
    return [
        [
            Estimate(float(c.crossover_budget[s, k]), float(c.lower[s, k]), float(c.upper[s, k]))
            if np.isfinite(c.crossover_budget[s, k])
            else Estimate.missing()
            for k in range(K)
        ]
        for s in range(S)
    ]


def bounded(e: Estimate) -> bool:
    """An interval strictly inside ``(0, inf)``: graded on; otherwise reported only."""
    return e.defined and e.lower > 0 and np.isfinite(e.upper)


def curves_from_outcomes(
    key,
    outcomes,
    group,
    budget,
    *,
    grounded=None,
    lengths=None,
    name: str,
    data: str,
    kind: str = "real",
    n_resamples: int = 1000,
) -> SourceCurves:
    """``dU``, coverage and replacement per operator and budget with Student-t bands over the
    groups and wild-cluster-bootstrap crossover intervals (``crossover_estimate``).

    Args:
      key: JAX PRNG key for the wild cluster bootstrap.
      outcomes: ``(n, 4)``; group, budget: ``(n,)`` (at least 2 groups).
      grounded: ``(n,)`` 1 where ``q in G_B`` (MODEL §3), for the coverage/replacement split.
      lengths: ``(n,)`` ``len(C)``; its mean is the source's ``evidence_length``.
      name, data, kind: labels carried into the result.

    References: MODEL §3 (dU), §4 (coverage/replacement split by ``G_B``); docs/statistics.md.
    """
    budget = np.asarray(budget, float)
    budgets = np.unique(budget)
    y = np.asarray(outcomes, float)
    per_group = group_delta_curves(y, group, budget, budgets)  # (G, 3, nB)
    point, reps = wild_cluster_replicates(key, per_group, n_resamples=n_resamples)
    band = group_t_interval(per_group.reshape(per_group.shape[0], -1))
    lo, hi = band.lower.reshape(point.shape), band.upper.reshape(point.shape)
    nb, no = len(budgets), len(OPERATORS)
    cov = np.full((no, nb), np.nan)
    rep = np.full((no, nb), np.nan)
    if grounded is not None:  # the same mean of group means, split by q in G_B (dU = C + R)
        g = np.nan_to_num(np.asarray(grounded, float))[:, None, None]
        at = np.broadcast_to(budget[:, None, None] == budgets, (len(y), no, nb))
        diff = (y[:, 1:] - y[:, :1])[:, :, None] * at
        for out, wgt in ((cov, 1 - g), (rep, g)):
            part = group_means((diff * wgt).reshape(len(y), -1), group, at.reshape(len(y), -1))
            out[:] = np.nanmean(part, axis=0).reshape(no, nb)
    ops = {}
    for k, op in enumerate(OPERATORS):
        cross, status = crossover_estimate(budgets, point[k], reps[:, k])
        ops[op] = OperatorCurve(budgets, point[k], lo[k], hi[k], cov[k], rep[k], cross, status)
    length = float("nan")
    if lengths is not None:
        L = np.asarray(lengths, float)
        length = float(np.mean(L[np.isfinite(L)])) if np.isfinite(L).any() else float("nan")
    return SourceCurves(name, data, ops, length, kind, per_group)


def curves_from_paired(
    key,
    paired,
    *,
    name: str,
    data: str,
    kind: str = "real",
    n_resamples: int = 1000,
    outcomes=None,
) -> SourceCurves:
    """``curves_from_outcomes`` of ``oas.PairedData`` (``outcomes`` replaces its outcomes, e.g.
    chance-corrected ones)."""
    return curves_from_outcomes(
        key,
        paired.outcomes if outcomes is None else outcomes,
        paired.group_id,
        paired.budget,
        grounded=raw_grounded(paired),
        lengths=evidence_length(paired),
        name=name,
        data=data,
        kind=kind,
        n_resamples=n_resamples,
    )


def chance_outcomes(paired) -> np.ndarray | None:
    """``(n, 4)`` chance rates stored by the pairing (``meta_chance_<action>``: the same context
    scored against another question's gold answer), or None when absent."""
    meta = getattr(paired, "meta", None) or {}
    cols = [meta.get(f"meta_chance_{a}") for a in ACTIONS]
    if any(c is None for c in cols):
        return None
    return np.stack([np.asarray(c, float) for c in cols], axis=1)


def raw_accuracy_check(paired) -> dict:
    """The model's premise on raw evidence (MODEL §2): ``U_B(ret)`` non-decreasing in B.

    For every pair of grid budgets ``B < B'`` the drop ``U_B(ret) - U_B'(ret)``: one paired drop
    per group, with a Student-t interval at the Bonferroni level ``1 - 0.05 / pairs`` so that all
    pairs together hold a family-wise 95%. The reader is admissible unless some drop's interval
    lies above 0 (``rules._grades.admissible``).

    Returns:
      ``{"budgets", "accuracy", "lower", "upper", "max_drop": Estimate, "at": (B, B')}``.
    """
    y = np.asarray(paired.outcomes, float)[:, 0]
    budget = np.asarray(paired.budget, float)
    budgets = np.unique(budget)
    at = (budget[:, None] == budgets[None, :]).astype(float)
    values = np.repeat(y[:, None], len(budgets), axis=1)
    per_group = group_means(values, np.asarray(paired.group_id), at)  # (G, nB)
    acc_ci = group_t_interval(per_group)
    acc, lo, hi = acc_ci.estimate, acc_ci.lower, acc_ci.upper
    i, j = np.triu_indices(len(budgets), 1)
    # no pair of budgets, or none that one group saw both of (every interval NaN): no drop measured
    max_drop, pair = Estimate.missing(), None
    if i.size:
        drops = group_t_interval(per_group[:, i] - per_group[:, j], level=1 - (1 - LEVEL) / len(i))
        if np.any(np.isfinite(drops.lower)):
            # the most significant drop: the pair whose interval reaches highest above 0
            k = int(np.nanargmax(drops.lower))
            max_drop = Estimate(
                float(drops.estimate[k]), float(drops.lower[k]), float(drops.upper[k])
            )
            pair = (float(budgets[i[k]]), float(budgets[j[k]]))
    return {
        "budgets": budgets,
        "accuracy": acc,
        "lower": lo,
        "upper": hi,
        "max_drop": max_drop,
        "at": pair,
    }
