"""Crossover budgets from a simulated ``dU(B)`` curve, with a bootstrap CI over queries.

The crossover ``B*_o`` is where ``dU_o`` changes sign (MODEL §6.4). On a budget grid it is found by
interpolating linearly in ``log B`` between the two grid budgets that bracket a sign change (exact
zeros, e.g. budgets where nothing fits under either action, are passed over). Status: ``none`` (no
sign change), ``unique`` (one), ``multiple`` (several; the first is reported). The interval
resamples the simulation's query blocks with replacement (queries are i.i.d., so i.i.d. blocks of
queries are a valid bootstrap unit) and takes percentiles of the resampled first crossing.

References: MODEL §6.4 (uniqueness of the crossover), §6.7 (what makes it non-unique).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from retcon.errors import InputError


class Crossover(NamedTuple):
    """Crossover per operator (axis 0: ``merge``, ``abstract``, ``rewrite``).

    Attributes:
      crossover_budget: ``(3,)`` first sign change of the point curve in tokens; NaN when none.
      ci_lower, ci_upper: ``(3,)`` percentile interval of the resampled first crossing (NaN when
        the point curve has none).
      n_crossings: ``(3,)`` sign changes of the point curve.
      found_share: ``(3,)`` share of resamples with at least one sign change.
      status: ``("unique" | "none" | "multiple", ...)`` per operator.
    """

    crossover_budget: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    n_crossings: np.ndarray
    found_share: np.ndarray
    status: tuple[str, ...]


def curve_crossings(budgets, delta) -> tuple[np.ndarray, np.ndarray]:
    """First sign change of ``delta`` along its last axis and the number of sign changes.

    Args:
      budgets: ``(m,)`` strictly increasing budgets (> 0).
      delta: ``(..., m)`` curve values.

    Returns:
      ``(root (...), n_crossings (...))``: the root interpolated linearly in ``log B`` between the
      last nonzero value before the first sign change and the value after it (NaN when there is
      none), and the count of sign changes between consecutive nonzero values.
    """
    b = np.log(np.asarray(budgets, dtype=np.float64))
    d = np.asarray(delta, dtype=np.float64)
    m = d.shape[-1]
    s = np.sign(d)
    pos = np.broadcast_to(np.arange(m), d.shape)
    last_nz = np.maximum.accumulate(np.where(s != 0, pos, -1), axis=-1)
    prev = np.concatenate([np.full(d.shape[:-1] + (1,), -1), last_nz[..., :-1]], axis=-1)
    prev_sign = np.take_along_axis(s, np.clip(prev, 0, None), axis=-1)
    cross = (s != 0) & (prev >= 0) & (prev_sign != s)
    n = cross.sum(-1)
    j = np.argmax(cross, axis=-1)[..., None]
    i = np.take_along_axis(prev, j, axis=-1).clip(0)
    di, dj = np.take_along_axis(d, i, -1)[..., 0], np.take_along_axis(d, j, -1)[..., 0]
    bi, bj = b[i[..., 0]], b[j[..., 0]]
    with np.errstate(invalid="ignore", divide="ignore"):
        root = np.exp(bi + (bj - bi) * di / (di - dj))
    return np.where(n > 0, root, np.nan), n


def status_of(n_crossings) -> tuple[str, ...]:
    return tuple(
        "none" if k == 0 else "unique" if k == 1 else "multiple" for k in np.ravel(n_crossings)
    )


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
    if not 0 < level < 1:
        raise InputError(f"bootstrap_crossover: level must be in (0, 1); got {level}.")
    if int(n_resamples) < 10:
        raise InputError(f"bootstrap_crossover: n_resamples must be >= 10; got {n_resamples}.")
    keep = np.asarray(block_count) > 0
    S = np.asarray(block_delta, dtype=np.float64)[keep]
    n_b = np.asarray(block_count, dtype=np.float64)[keep]
    G = S.shape[0]
    point = S.sum(0) / n_b.sum()
    root, n_cross = curve_crossings(budgets, point)
    draws = np.asarray(jax.random.randint(key, (int(n_resamples), G), 0, G))
    flat = (np.arange(draws.shape[0])[:, None] * G + draws).ravel()
    w = (
        np.bincount(flat, minlength=draws.shape[0] * G)
        .reshape(draws.shape[0], G)
        .astype(np.float64)
    )
    curves = np.einsum("rg,gob->rob", w, S) / (w @ n_b)[:, None, None]
    roots, n_r = curve_crossings(budgets, curves)
    alpha = (1.0 - level) / 2.0
    lo = np.full(root.shape, np.nan)
    hi = np.full(root.shape, np.nan)
    found = (n_r > 0).mean(0)
    for o in range(root.shape[0]):
        ok = n_r[:, o] > 0
        if n_cross[o] > 0 and ok.any():
            lo[o], hi[o] = np.quantile(roots[ok, o], [alpha, 1.0 - alpha])
    return Crossover(root, lo, hi, n_cross, found, status_of(n_cross))


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
