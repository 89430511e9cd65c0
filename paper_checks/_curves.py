"""Curves of ``dU`` against the budget from paired outcomes, with bootstrap crossovers.

Paired data (``oas.PairedData``: one row per question x budget, outcomes of all four actions;
MODEL §8) give the utility differences of MODEL §3 as means of per-row differences. One call of
``retcon.bootstrap.delta_curve_replicates`` resamples whole groups once for every budget and
operator, so each resample is a whole ``dU(B)`` curve; ``theory.crossover_interval`` reads the
crossover of all resampled curves at once, and the pointwise bands are the percentiles of the same
resamples.
"""

from __future__ import annotations

import warnings

import numpy as np

from paper_checks._types import Estimate, OperatorCurve, SourceCurves
from retcon.bootstrap import delta_curve_replicates, grouped_bootstrap_replicates
from retcon.errors import InputError
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


def _percentiles(reps: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over the first axis, ignoring NaN resamples (all-NaN columns: NaN)."""
    a = (1 - level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        return np.nanquantile(reps, a, axis=0), np.nanquantile(reps, 1 - a, axis=0)


def crossover_estimate(budgets, point, replicates, level: float = LEVEL) -> tuple[Estimate, str]:
    """Crossover of a ``dU`` curve with a percentile interval from resampled curves (MODEL §6.4).

    ``theory.crossover_interval``, the one rule: a resampled curve without a ``+ -> -`` root
    counts as crossing below the grid (0) when it is never positive and above it (inf) otherwise.
    An interval that reaches 0 or inf is unbounded.

    Args:
      budgets: ``(nB,)``; point: ``(nB,)``; replicates: ``(R, nB)``.

    Returns:
      ``(Estimate, status)``; ``Estimate.missing()`` when the point curve has no crossover.
    """
    import theory

    c = theory.crossover_interval(
        np.asarray(budgets, float), np.asarray(point, float), replicates, level=level
    )
    status = str(c.status)
    if not np.isfinite(c.crossover_budget):
        return Estimate.missing(), status
    return Estimate(float(c.crossover_budget), float(c.lower), float(c.upper)), status


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
    """``dU``, coverage and replacement per operator and budget with grouped bootstrap bands and
    crossover intervals (``crossover_estimate``).

    Args:
      key: JAX PRNG key for the bootstrap.
      outcomes: ``(n, 4)``; group, budget: ``(n,)``.
      grounded: ``(n,)`` 1 where ``q in G_B`` (MODEL §3), for the coverage/replacement split.
      lengths: ``(n,)`` ``len(C)``; its mean is the source's ``evidence_length``.
      name, data, kind: labels carried into the result.

    References: MODEL §3 (dU), §4 (coverage/replacement split by ``G_B``), §8 (grouped CIs).
    """
    budget = np.asarray(budget, float)
    budgets = np.unique(budget)
    y = np.asarray(outcomes, float)
    point, reps = delta_curve_replicates(key, y, group, budget, budgets, n_resamples=n_resamples)
    lo, hi = _percentiles(reps)
    nb, no = len(budgets), len(OPERATORS)
    cov = np.full((no, nb), np.nan)
    rep = np.full((no, nb), np.nan)
    if grounded is not None:
        g = np.asarray(grounded, float)
        diff = y[:, 1:] - y[:, :1]
        for j, bb in enumerate(budgets):
            rows = budget == bb
            cov[:, j] = (diff[rows] * (1 - g[rows, None])).mean(0)
            rep[:, j] = (diff[rows] * g[rows, None]).mean(0)
    ops = {}
    for k, op in enumerate(OPERATORS):
        cross, status = crossover_estimate(budgets, point[k], reps[:, k])
        ops[op] = OperatorCurve(budgets, point[k], lo[k], hi[k], cov[k], rep[k], cross, status)
    length = float("nan")
    if lengths is not None:
        L = np.asarray(lengths, float)
        length = float(np.mean(L[np.isfinite(L)])) if np.isfinite(L).any() else float("nan")
    return SourceCurves(name, data, ops, length, kind)


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


def mean_difference(
    key, values, group, rows=None, *, n_resamples: int = 1000, level: float = LEVEL
) -> Estimate:
    """Grouped-bootstrap percentile Estimate of ``mean(values)`` over ``rows``."""
    v = np.asarray(values, float)
    rows = np.ones(len(v), bool) if rows is None else np.asarray(rows, bool)
    if not rows.any():
        return Estimate.missing()
    reps = grouped_bootstrap_replicates(
        key, v[rows], np.asarray(group)[rows], n_resamples=n_resamples
    )
    lo, hi = _percentiles(reps[:, None], level)
    return Estimate(float(v[rows].mean()), float(lo[0]), float(hi[0]))


def raw_accuracy_check(key, paired, *, n_resamples: int = 1000, outcomes=None) -> dict:
    """The model's premise on raw evidence (MODEL §2): ``U_B(ret)`` non-decreasing in B.

    For every pair of grid budgets ``B < B'`` the drop ``U_B(ret) - U_B'(ret)``, with a paired
    percentile interval (the same group resamples at every budget) at the Bonferroni level
    ``1 - 0.05 / pairs``, so that all pairs together hold a family-wise 95%. The reader is
    admissible unless some drop's interval lies above 0 (``_verdicts.admissible``).

    Returns:
      ``{"budgets", "accuracy", "lower", "upper", "max_drop": Estimate, "at": (B, B')}``.
    """
    y = np.asarray(paired.outcomes if outcomes is None else outcomes, float)[:, 0]
    budget = np.asarray(paired.budget, float)
    budgets = np.unique(budget)
    at = (budget[:, None] == budgets[None, :]).astype(float)
    values = np.repeat(y[:, None], len(budgets), axis=1)
    acc = (values * at).sum(0) / np.maximum(at.sum(0), 1)
    reps = grouped_bootstrap_replicates(
        key, values, np.asarray(paired.group_id), at, n_resamples=n_resamples
    )
    lo, hi = _percentiles(reps)
    i, j = np.triu_indices(len(budgets), 1)
    drops = acc[i] - acc[j]
    drop_reps = reps[:, i] - reps[:, j]
    dlo, dhi = _percentiles(drop_reps, 1 - (1 - LEVEL) / max(len(i), 1))
    if drops.size == 0:
        return {
            "budgets": budgets,
            "accuracy": acc,
            "lower": lo,
            "upper": hi,
            "max_drop": Estimate.missing(),
            "at": None,
        }
    # the most significant drop: the pair whose interval reaches highest above 0
    k = int(np.argmax(dlo))
    return {
        "budgets": budgets,
        "accuracy": acc,
        "lower": lo,
        "upper": hi,
        "max_drop": Estimate(float(drops[k]), float(dlo[k]), float(dhi[k])),
        "at": (float(budgets[i[k]]), float(budgets[j[k]])),
    }
