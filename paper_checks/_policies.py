"""Per-instance outcomes of the OAS policies on a held-out split, for claims 7-9.

The router is fitted by ``oas`` (MODEL §8) on a training split with disjoint groups; what the
claims need is, for every held-out instance and policy, the outcome of the chosen action and
whether it harmed (below retention's outcome). Differences between policies are then means of
per-instance differences, with grouped bootstrap intervals (``paper_checks._curves``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from paper_checks._curves import PairedTable
from paper_checks._types import Estimate
from retcon.bootstrap import grouped_bootstrap_mean


class PolicyEval(NamedTuple):
    """Held-out outcomes per policy.

    Fields:
      table: the held-out rows (``PairedTable``).
      chosen: ``{policy: (n,) int}`` index into ``ACTIONS`` of the chosen action.
      outcome: ``{policy: (n,) float}`` outcome of the chosen action.
      harm: ``{policy: (n,) float}`` 1.0 where the outcome is below retention's.
    """

    table: PairedTable
    chosen: dict
    outcome: dict
    harm: dict


def policy_eval_from_choices(table: PairedTable, chosen: dict) -> PolicyEval:
    """Outcomes and harm of each policy's chosen actions on ``table`` (MODEL §8, harm)."""
    rows = np.arange(len(table.budget))
    outcome, harm = {}, {}
    for name, c in chosen.items():
        c = np.asarray(c, int)
        outcome[name] = table.y[rows, c]
        harm[name] = (outcome[name] < table.y[:, 0]).astype(float)
    return PolicyEval(table, {k: np.asarray(v, int) for k, v in chosen.items()}, outcome, harm)


def policy_difference(
    key,
    ev: PolicyEval,
    a: str,
    b: str,
    rows=None,
    *,
    what: str = "outcome",
    n_resamples: int = 1000,
) -> Estimate:
    """Grouped-bootstrap Estimate of ``mean(metric[a] - metric[b])`` over ``rows``.

    Args:
      what: ``"outcome"`` (accuracy) or ``"harm"`` (harm rate).
    """
    m = getattr(ev, what)
    n = len(ev.table.budget)
    rows = np.ones(n, bool) if rows is None else np.asarray(rows, bool)
    if not rows.any():
        return Estimate.missing()
    d = m[a][rows] - m[b][rows]
    ci = grouped_bootstrap_mean(key, d, ev.table.group[rows], n_resamples=n_resamples)
    return Estimate(float(d.mean()), float(ci.lower), float(ci.upper))


def per_budget_difference(
    key,
    ev: PolicyEval,
    a: str,
    b: str,
    rows=None,
    *,
    what: str = "outcome",
    n_resamples: int = 1000,
) -> tuple[np.ndarray, list[Estimate]]:
    """``(budgets, [Estimate per budget])`` of ``metric[a] - metric[b]``, one bootstrap call."""
    m = getattr(ev, what)
    n = len(ev.table.budget)
    rows = np.ones(n, bool) if rows is None else np.asarray(rows, bool)
    budgets = np.unique(ev.table.budget[rows])
    if budgets.size == 0:
        return budgets, []
    d = (m[a] - m[b])[:, None] * np.ones((1, budgets.size))
    mask = (ev.table.budget[:, None] == budgets[None, :]) & rows[:, None]
    ci = grouped_bootstrap_mean(key, d, ev.table.group, mask, n_resamples=n_resamples)
    _, lo, hi = (np.asarray(x, float) for x in ci)
    pts = (d * mask).sum(0) / np.maximum(mask.sum(0), 1)
    return budgets, [Estimate(float(p), float(l), float(h)) for p, l, h in zip(pts, lo, hi)]


def evaluate_policies(key, paired, *, alpha: float = 0.1, n_resamples: int = 1000) -> PolicyEval:
    """Fit OAS on the training groups of ``paired`` and return every policy's held-out outcomes.

    Calls ``oas.evaluate`` (MODEL §8: train / calibration / test groups, ridge, calibrated and CRC
    thresholds, MLP, best fixed per budget) and pairs its per-row choices with the test rows.

    Raises:
      DependencyMissing: oas (or its evaluator) is not available.
    """
    from paper_checks._sources import DependencyMissing, need, table_from_paired

    evaluate = need("oas", "evaluate")
    ev = evaluate(key, paired, alpha=alpha, n_resamples=n_resamples, n_folds=n_folds_for(paired))
    test_rows = _test_rows(key, paired, ev)
    if test_rows is None:
        raise DependencyMissing("dependency not available: the test rows of oas.evaluate")
    table = table_from_paired(paired.take(test_rows))
    chosen = {name: np.asarray(ev.choices[i]) for i, name in enumerate(ev.policies)}
    return policy_eval_from_choices(table, chosen)


def n_folds_for(paired) -> int:
    """Folds for the ridge penalty's grouped K-fold, which runs inside the training groups (about
    half of all groups): at most 5, at least 2."""
    n_groups = len(np.unique(np.asarray(paired.group_id).astype(str)))
    return int(max(2, min(5, n_groups // 3)))


def _test_rows(key, paired, ev):
    """Indices of the held-out rows: ``ev.info["test_index"]`` when given, else the evaluator's
    documented split (``group_split`` on the first of four subkeys, part 2), checked by count."""
    info = getattr(ev, "info", {}) or {}
    if "test_index" in info:
        return np.asarray(info["test_index"], int)
    import jax

    from paper_checks._sources import need

    group_split = need("oas", "group_split")
    k_split = jax.random.split(key, 4)[0]
    part = np.asarray(group_split(k_split, paired.group_id, (0.5, 0.2, 0.3)))
    rows = np.flatnonzero(part == 2)
    return rows if rows.size == int(info.get("n_test", -1)) == ev.choices.shape[1] else None
