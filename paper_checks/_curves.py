"""Curves of ``dU`` against the budget from paired outcomes, and crossovers read off a curve.

Paired data (one row per question x budget, outcomes of all four actions; MODEL §8) give the
utility differences of MODEL §3 as means of per-row differences, so their grouped bootstrap
intervals come from one call of ``retcon.bootstrap.grouped_bootstrap_mean``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from paper_checks._types import Estimate, OperatorCurve, SourceCurves
from retcon.bootstrap import grouped_bootstrap_mean
from retcon.errors import InputError
from retcon.vocab import ACTIONS, OPERATORS


class PairedTable(NamedTuple):
    """Paired outcomes as plain arrays, the one convention the checks use (MODEL §8).

    Fields (``n`` rows, one per question x budget):
      group: ``(n,)`` unit of independence (conversation, simulated cluster group).
      query_type: ``(n,)`` str, 4-way type.
      budget: ``(n,)`` tokens.
      y: ``(n, 4)`` outcomes in ``[0, 1]``, columns in ``ACTIONS`` order (ret, merge, abstract, rewrite).
      evidence_length: ``(n,)`` raw length of the cluster ``len(C)`` in tokens (NaN if unknown).
      raw_grounded: ``(n,)`` 1.0 when retention fits all of ``C`` under the budget (``q in G_B``,
        MODEL §3), 0.0 when not, NaN if unknown.
      query_id: ``(n,)`` question id (the same across a question's budgets).
    """

    group: np.ndarray
    query_type: np.ndarray
    budget: np.ndarray
    y: np.ndarray
    evidence_length: np.ndarray
    raw_grounded: np.ndarray
    query_id: np.ndarray

    def select(self, rows) -> PairedTable:
        return PairedTable(*(np.asarray(f)[rows] for f in self))

    @property
    def budgets(self) -> np.ndarray:
        return np.unique(self.budget)


def make_table(
    *, group, budget, y, query_type=None, evidence_length=None, raw_grounded=None, query_id=None
) -> PairedTable:
    """Build a ``PairedTable``, checking shapes and ranges (raises ``InputError``)."""
    y = np.asarray(y, float)
    n = y.shape[0]
    if y.ndim != 2 or y.shape[1] != len(ACTIONS):
        raise InputError(f"paired table: y must have shape (n, {len(ACTIONS)}); got {y.shape}.")
    if np.any(~np.isfinite(y)) or np.any((y < 0) | (y > 1)):
        raise InputError("paired table: outcomes must be finite and in [0, 1].")

    def col(x, fill, dtype=None):
        a = np.full(n, fill) if x is None else np.asarray(x, dtype)
        if a.shape != (n,):
            raise InputError(f"paired table: a column has shape {a.shape}; expected ({n},).")
        return a

    budget = col(budget, np.nan, float)
    if np.any(~(budget > 0)):
        raise InputError("paired table: budgets must be positive.")
    return PairedTable(
        col(group, 0),
        col(query_type, "", object).astype(str),
        budget,
        y,
        col(evidence_length, np.nan, float),
        col(raw_grounded, np.nan, float),
        col(query_id, "", object).astype(str) if query_id is not None else np.arange(n).astype(str),
    )


def crossover_from_curve(budgets, delta) -> tuple[float, str]:
    """The budget where ``dU`` first turns from positive to negative, and the status.

    The root is interpolated linearly in ``log B`` between the two grid budgets that bracket the
    first positive-to-negative change. Status (MODEL §6.4): ``unique`` for one change from + to -
    and none back; ``multiple`` when the sign changes again; ``none`` when ``dU`` never goes from
    positive to negative on the grid (then the crossover is NaN).

    Args:
      budgets: ``(k,)`` increasing budgets (tokens).
      delta: ``(k,)`` ``dU`` at those budgets.
    """
    b = np.asarray(budgets, float)
    d = np.asarray(delta, float)
    keep = np.isfinite(d)
    b, d = b[keep], d[keep]
    s = np.sign(d)
    nz = s != 0
    bs, ss, ds = b[nz], s[nz], d[nz]
    changes = np.flatnonzero(ss[:-1] != ss[1:])
    down = [i for i in changes if ss[i] > 0]
    if not down:
        return float("nan"), "none"
    i = down[0]
    # exact zeros between the bracketing budgets: the root is the first of them
    zeros = b[(b > bs[i]) & (b < bs[i + 1]) & (d == 0)]
    if zeros.size:
        root = float(zeros[0])
    else:
        x0, x1 = np.log(bs[i]), np.log(bs[i + 1])
        root = float(np.exp(x0 + (x1 - x0) * ds[i] / (ds[i] - ds[i + 1])))
    return root, ("unique" if len(changes) == 1 else "multiple")


def band_crossover(budgets, delta, lower, upper) -> Estimate:
    """Crossover with an interval from the pointwise band (MODEL §6.4).

    The lower band turns negative first, the upper band last, so the interval is
    ``[root(lower), root(upper)]``: when the lower band is never positive the interval starts at the
    smallest budget; when the upper band never turns negative it ends at ``inf``. Pointwise bands
    give a rough, not simultaneous, interval.
    """
    point, _ = crossover_from_curve(budgets, delta)
    if not np.isfinite(point):
        return Estimate.missing()
    lo, _ = crossover_from_curve(budgets, lower)
    hi, _ = crossover_from_curve(budgets, upper)
    b = np.asarray(budgets, float)
    if not np.isfinite(lo):
        lo = float(b[0]) if np.all(np.asarray(lower, float) <= 0) else point
    if not np.isfinite(hi):
        hi = float("inf") if np.any(np.asarray(upper, float)[-1:] >= 0) else point
    return Estimate(point, min(lo, point), max(hi, point))


def curves_from_table(
    key, table: PairedTable, *, name: str, data: str, kind: str = "real", n_resamples: int = 1000
) -> SourceCurves:
    """``dU``, coverage and replacement per operator and budget with grouped bootstrap CIs.

    Args:
      key: JAX PRNG key for the bootstrap.
      table: paired outcomes.
      name, data, kind: labels carried into the result.
      n_resamples: bootstrap replicates.

    Returns:
      ``SourceCurves``; a crossover's interval comes from ``band_crossover``.

    References: MODEL §3 (dU), §4 (coverage/replacement split by ``G_B``), §8 (grouped CIs).
    """
    budgets = table.budgets
    nb, no = len(budgets), len(OPERATORS)
    diff = table.y[:, 1:] - table.y[:, :1]  # (n, 3): y_o - y_ret
    at = (table.budget[:, None] == budgets[None, :]).astype(float)  # (n, nb)
    values = np.repeat(diff, nb, axis=1)  # (n, 3*nb), op-major
    mask = np.tile(at, (1, no))
    ci = grouped_bootstrap_mean(key, values, table.group, mask, n_resamples=n_resamples)
    _, lo, hi = (np.asarray(x, float).reshape(no, nb) for x in ci)
    # the point in float64 (the bootstrap runs in float32)
    point = ((values * mask).sum(0) / np.maximum(mask.sum(0), 1)).reshape(no, nb)
    grounded = table.raw_grounded
    known = np.isfinite(grounded)
    cov = np.full((no, nb), np.nan)
    rep = np.full((no, nb), np.nan)
    if known.all():
        for j in range(nb):
            rows = at[:, j] > 0
            n_b = rows.sum()
            cov[:, j] = (diff[rows] * (1 - grounded[rows, None])).sum(0) / n_b
            rep[:, j] = (diff[rows] * grounded[rows, None]).sum(0) / n_b
    ops = {}
    for k, op in enumerate(OPERATORS):
        _, status = crossover_from_curve(budgets, point[k])
        ops[op] = OperatorCurve(
            budgets,
            point[k],
            lo[k],
            hi[k],
            cov[k],
            rep[k],
            band_crossover(budgets, point[k], lo[k], hi[k]),
            status,
        )
    per_q = np.isfinite(table.evidence_length)
    length = float(np.mean(table.evidence_length[per_q])) if per_q.any() else float("nan")
    return SourceCurves(name, data, ops, length, kind)


def mean_difference(
    key, table: PairedTable, plus: int, minus: int, rows=None, *, n_resamples: int = 1000
) -> Estimate:
    """Grouped-bootstrap Estimate of ``mean(y[:, plus] - y[:, minus])`` over ``rows``."""
    rows = np.ones(len(table.budget), bool) if rows is None else np.asarray(rows, bool)
    if not rows.any():
        return Estimate.missing()
    d = table.y[rows, plus] - table.y[rows, minus]
    ci = grouped_bootstrap_mean(key, d, table.group[rows], n_resamples=n_resamples)
    return Estimate(float(d.mean()), float(ci.lower), float(ci.upper))
