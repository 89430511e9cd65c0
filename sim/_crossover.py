"""Crossover budgets of a simulated ``dU(B)`` curve, with a bootstrap CI over query blocks.

The crossover of a curve sampled on a budget grid is ``theory.grid_crossover`` (docs/model.md
§6.4, "crossover of a sampled curve": sign changes between consecutive nonzero values, roots
interpolated linearly in ``log B``, ``B*`` the largest ``+ -> -`` root, status ``none`` / ``unique``
/ ``multiple``); this module adds only the interval. It resamples the simulation's query blocks
with replacement (queries are i.i.d., so i.i.d. blocks of queries are a valid bootstrap unit,
``retcon.bootstrap.group_resample_weights``) and takes percentiles of the resampled ``B*``.

References: MODEL §6.4 (uniqueness of the crossover), §6.7 (what makes it non-unique).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from retcon.bootstrap import group_resample_weights
from retcon.errors import InputError


class Crossover(NamedTuple):
    """Crossover per operator (axis 0: ``merge``, ``abstract``, ``rewrite``).

    Attributes:
      crossover_budget: ``(3,)`` ``theory.grid_crossover``'s ``B*`` of the point curve (the
        largest ``+ -> -`` root) in tokens; NaN when none.
      ci_lower, ci_upper: ``(3,)`` percentile interval of the resampled ``B*`` (NaN when the point
        curve has none).
      n_crossings: ``(3,)`` sign changes of the point curve (both directions).
      found_share: ``(3,)`` share of resamples whose curve has a ``B*``.
      status: ``("unique" | "none" | "multiple", ...)`` per operator.
    """

    crossover_budget: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    n_crossings: np.ndarray
    found_share: np.ndarray
    status: tuple[str, ...]


def bootstrap_crossover(
    key: jax.Array,
    budgets,
    block_delta,
    block_count,
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
) -> Crossover:
    """Crossover per operator with a percentile CI from resampling query blocks.

    Args:
      key: JAX PRNG key for the resampling (same key, same interval).
      budgets: ``(nB,)`` budgets in tokens.
      block_delta: ``(G, n_ops, nB)`` per-block sums of per-query ``dU`` (any fixed unit).
      block_count: ``(G,)`` queries per block.
      n_resamples: bootstrap replicates.
      level: two-sided coverage of the interval.

    Returns:
      ``Crossover`` over the ``n_ops`` operators.

    References:
      MODEL §6.4; Efron & Tibshirani (1993), ch. 13 (percentile interval).
    """
    from theory import grid_crossover

    if not 0 < level < 1:
        raise InputError(f"bootstrap_crossover: level must be in (0, 1); got {level}.")
    if int(n_resamples) < 10:
        raise InputError(f"bootstrap_crossover: n_resamples must be >= 10; got {n_resamples}.")
    keep = np.asarray(block_count) > 0
    S = np.asarray(block_delta, dtype=np.float64)[keep]
    n_b = np.asarray(block_count, dtype=np.float64)[keep]
    point = grid_crossover(budgets, S.sum(0) / n_b.sum())
    w = group_resample_weights(key, S.shape[0], int(n_resamples))
    curves = np.einsum("rg,gob->rob", w, S) / (w @ n_b)[:, None, None]
    roots = grid_crossover(budgets, curves).crossover_budget  # (R, n_ops)
    alpha = (1.0 - level) / 2.0
    b_star = np.asarray(point.crossover_budget, dtype=np.float64)
    lo = np.full(b_star.shape, np.nan)
    hi = np.full(b_star.shape, np.nan)
    found = np.isfinite(roots)
    for o in range(b_star.shape[0]):
        if np.isfinite(b_star[o]) and found[:, o].any():
            lo[o], hi[o] = np.quantile(roots[found[:, o], o], [alpha, 1.0 - alpha])
    return Crossover(
        b_star,
        lo,
        hi,
        np.asarray(point.n_sign_changes),
        found.mean(0),
        tuple(str(s) for s in point.status),
    )


def simulated_crossover(
    key: jax.Array, result, *, n_resamples: int = 2000, level: float = 0.95
) -> Crossover:
    """Crossover per operator of a ``SimResult`` (see ``bootstrap_crossover``)."""
    return bootstrap_crossover(
        key,
        result.budgets,
        result.block_delta,
        result.block_count,
        n_resamples=n_resamples,
        level=level,
    )
