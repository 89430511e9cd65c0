"""Grouped (cluster) bootstrap confidence intervals for means, vectorized.

Resampling whole groups (conversations, users) keeps dependent rows together: the unit of
independence is the group, never the row (MODEL §8, metrics). Every mean is a ratio of group sums,
so one resample is a vector of group multiplicities ``w`` and the resampled mean is
``(w @ sums) / (w @ counts)``: all resamples together are two matrix products. The
multiplicities come from a JAX key (same key, same resamples; drawn by numpy's generator seeded
with the key's words, ``resample_draws``); the products and percentiles run
in numpy float64 by default, which is faster on CPU than the same algorithm under ``jit``
(docs/performance.md), or in JAX (``backend="jax"``).
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from retcon.errors import InputError, check_choice, check_range

if TYPE_CHECKING:  # JAX is imported only where a JAX key or ``backend="jax"`` needs it
    import jax

#: Where the resampled means and percentiles run (``grouped_bootstrap_mean``).
BACKENDS = ("numpy", "jax")


class BootstrapCI(NamedTuple):
    """Point estimate and percentile interval; each of shape ``(m,)``."""

    point: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def group_index(groups) -> tuple[np.ndarray, int]:
    """Map arbitrary group labels, shape ``(n,)``, to dense ids ``0..G-1``; return ``(ids, G)``."""
    _, ids = np.unique(np.asarray(groups), return_inverse=True)
    ids = ids.reshape(-1).astype(np.int32)
    return ids, int(ids.max()) + 1 if ids.size else 0


def group_resample_weights(key: jax.Array, n_groups: int, n_resamples: int) -> np.ndarray:
    """Multiplicities of the groups in each bootstrap resample: the one resampling engine.

    Each resample draws ``n_groups`` groups uniformly with replacement; a resampled statistic that
    is a ratio of group sums is then ``(w @ sums) / (w @ counts)``.

    Args:
      key: JAX PRNG key; the same key gives the same multiplicities.
      n_groups: ``G`` >= 1, the number of groups (blocks, conversations).
      n_resamples: ``R`` >= 1, bootstrap replicates.

    Returns:
      ``(R, G)`` float64 counts; every row sums to ``G``.

    References: Efron & Tibshirani (1993), ch. 6 and 13.
    """
    G, R = int(n_groups), int(n_resamples)
    if G < 1 or R < 1:
        raise InputError(
            f"group_resample_weights: n_groups and n_resamples must be >= 1; got {G} and {R}."
        )
    draws = resample_draws(key, G, R)
    draws += (np.arange(R, dtype=np.int64) * G)[:, None]
    return np.bincount(draws.ravel(), minlength=R * G).reshape(R, G).astype(np.float64)


def resample_draws(key: jax.Array, n_groups: int, n_resamples: int) -> np.ndarray:
    """The groups each resample draws, ``(R, G)`` int64 ids uniform on ``0..G-1``.

    numpy's ``Generator`` (PCG64, Lemire's bounded integers) seeded with the key's words: the same
    key gives the same draws, and it draws them about 8x faster on a CPU than ``jax.random.randint``
    (Threefry); the multiplicities are a few MB that the resampling then reads once, so nothing is
    gained by drawing them on an accelerator. (Stream changed once; CHANGELOG.md.)
    """
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(key_words(key))))
    return rng.integers(0, n_groups, size=(n_resamples, n_groups), dtype=np.int64)


def key_words(key) -> list[int]:
    """The uint32 words of a PRNG key, the seed of every numpy generator drawn from a key: a JAX
    key (typed, or raw uint32 words) or its words as any integer array (``sim.kernel.key_of_seed``,
    ``sim.kernel.split_key``), without importing JAX (a JAX key implies JAX is imported)."""
    if "jax" in sys.modules:
        import jax
        import jax.numpy as jnp

        if isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
            key = jax.random.key_data(key)
    return [int(v) for v in np.asarray(key, np.uint32).ravel()]


def grouped_bootstrap_mean(
    key: jax.Array,
    values,
    groups=None,
    mask=None,
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    backend: str = "numpy",
) -> BootstrapCI:
    """Mean of each column of ``values`` over the rows where ``mask`` is set, with a grouped CI.

    Args:
      key: JAX PRNG key; the same key gives bit-identical intervals.
      values: shape ``(n,)`` or ``(n, m)``; m statistics sharing the same rows.
      groups: shape ``(n,)`` group labels (any hashable dtype numpy can sort); ``None`` means every
        row is its own group (the ordinary bootstrap).
      mask: optional, shape like ``values``: which rows count for each column (e.g. one budget).
      n_resamples: bootstrap replicates R.
      level: two-sided coverage of the percentile interval.
      backend: where the resampled means and percentiles run, on the same group multiplicities:
        ``"numpy"`` (float64, the default: the faster on CPU, docs/performance.md) or ``"jax"``
        (one ``jit`` call, float32; for accelerators). The two agree to float32 rounding.

    Returns:
      ``BootstrapCI`` of shape ``(m,)`` (a scalar per field for 1-D ``values``). A column whose
      mask is empty gives NaN; a resample that draws no masked row of a column is left out of that
      column's percentiles.

    References:
      MODEL §8 (metrics with grouped bootstrap CIs); Efron & Tibshirani (1993), ch. 13 (percentile).
    """
    values = np.asarray(values, dtype=np.float64)
    squeeze = values.ndim == 1
    check_range("grouped_bootstrap_mean: level", level, 0, 1)
    check_choice("grouped_bootstrap_mean: backend", backend, BACKENDS)
    sums, counts = _group_sums(values, groups, mask, "grouped_bootstrap_mean")
    w = group_resample_weights(key, sums.shape[0], int(n_resamples))
    if backend == "jax":
        lo, hi = (
            np.asarray(x, dtype=np.float64)
            for x in _percentiles(
                np.asarray(w, np.float32),
                np.asarray(sums, np.float32),
                np.asarray(counts, np.float32),
                level=float(level),
            )
        )
    else:
        lo, hi = numpy_percentiles(w, sums, counts, level=float(level))
    point = np.where(counts.sum(0) > 0, sums.sum(0) / np.maximum(counts.sum(0), 1e-300), np.nan)
    out = BootstrapCI(point, lo, hi)
    return BootstrapCI(*(x[0] for x in out)) if squeeze else out


def grouped_bootstrap_replicates(
    key: jax.Array, values, groups=None, mask=None, *, n_resamples: int = 2000
) -> np.ndarray:
    """The resampled means themselves: shape ``(n_resamples, m)`` (``(n_resamples,)`` for 1-D).

    The same resamples as ``grouped_bootstrap_mean`` with the same key (``group_resample_weights``,
    one draw of groups shared by every column), for statistics that are not means of the columns,
    e.g. the crossover of a resampled ``dU(B)`` curve. NaN where a resample draws no masked row of
    a column.

    Args: as ``grouped_bootstrap_mean``.
    """
    values = np.asarray(values, dtype=np.float64)
    squeeze = values.ndim == 1
    sums, counts = _group_sums(values, groups, mask, "grouped_bootstrap_replicates")
    stat = numpy_means(group_resample_weights(key, sums.shape[0], int(n_resamples)), sums, counts)
    return stat[:, 0] if squeeze else stat


def delta_curve_replicates(
    key: jax.Array, outcomes, groups, budget, budgets, *, n_resamples: int = 2000
) -> tuple[np.ndarray, np.ndarray]:
    """``dU_o(B)``, the mean of ``y_o - y_ret`` per operator and budget, and its grouped resamples.

    The one computation of a paired-data ``dU`` curve with its bootstrap: the point curve and the
    resampled curves, one draw of groups per resample shared by every operator and budget (the
    same draws as ``grouped_bootstrap_replicates`` with the same key). Pass the result to
    ``theory.crossover_interval`` for the crossover and its interval.

    Args:
      key: JAX PRNG key of the resampling.
      outcomes: ``(n, A)`` outcomes, ``ret`` first (``ACTIONS`` order; any finite numbers, e.g.
        chance-corrected).
      groups: ``(n,)`` group labels (``None``: every row its own group).
      budget: ``(n,)`` each row's budget; budgets: ``(m,)`` the grid.
      n_resamples: ``R``.

    Returns:
      ``(point (A - 1, m), replicates (R, A - 1, m))``; NaN where a budget has no row (in a
      resample: no drawn row).

    References: MODEL §3 (``dU``), §8 (grouped bootstrap).
    """
    values, mask, shape = delta_columns(outcomes, budget, budgets, "delta_curve_replicates")
    counts = mask.sum(0)
    point = np.where(counts > 0, (values * mask).sum(0) / np.maximum(counts, 1.0), np.nan)
    reps = grouped_bootstrap_replicates(key, values, groups, mask, n_resamples=n_resamples)
    return point.reshape(shape), reps.reshape((-1, *shape))


def delta_columns(outcomes, budget, budgets, who: str) -> tuple[np.ndarray, np.ndarray, tuple]:
    """The columns whose masked means are a paired-data ``dU`` curve (MODEL §3), the one rule
    for it: ``values (n, (A - 1) m)``, each operator's ``y_o - y_ret`` repeated per budget of the
    grid ``budgets (m,)``, operator-major; ``mask`` like it, the rows at that column's budget
    (``budget (n,)``); and the curve's shape ``(A - 1, m)``. ``outcomes (n, A)`` has ``ret``
    first; ``who`` opens the messages."""
    y = np.asarray(outcomes, dtype=np.float64)
    if y.ndim != 2 or y.shape[1] < 2:
        raise InputError(f"{who}: outcomes must have shape (n, actions >= 2); got {y.shape}.")
    grid = np.asarray(budgets, dtype=np.float64).reshape(-1)
    b = np.asarray(budget, dtype=np.float64).reshape(-1)
    if b.shape[0] != y.shape[0]:
        raise InputError(f"{who}: budget has {b.shape[0]} rows; outcomes has {y.shape[0]}.")
    nb, no = grid.size, y.shape[1] - 1
    values = np.repeat(y[:, 1:] - y[:, :1], nb, axis=1)  # (n, no * nb), operator-major
    mask = np.tile((b[:, None] == grid[None, :]).astype(np.float64), (1, no))
    return values, mask, (no, nb)


def _group_sums(values, groups, mask, who: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-group sums of the masked values and of the mask: ``(G, m)`` each, groups in
    ``np.unique`` order of their labels (``None``: every row its own group). ``values``: ``(n, ...)``
    float64, flattened to ``(n, m)``; ``mask`` like it (default all); ``who`` opens the messages."""
    values = values.reshape(values.shape[0], -1)
    n = values.shape[0]
    if n == 0:
        raise InputError(f"{who}: values is empty; expected at least one row.")
    mask = (
        np.ones_like(values)
        if mask is None
        else np.asarray(mask, dtype=np.float64).reshape(values.shape)
    )
    if groups is None:
        ids, n_groups = np.arange(n, dtype=np.int32), n
    else:
        if len(groups) != n:
            raise InputError(f"{who}: groups has {len(groups)} rows; values has {n}.")
        ids, n_groups = group_index(groups)
    # one flat bincount per quantity over (group, column) bins: it adds each bin's rows in row
    # order, as np.add.at and a bincount per column do, and is many times faster than either
    m = values.shape[1]
    flat = (ids.astype(np.int64)[:, None] * m + np.arange(m)).ravel()
    masked = np.where(mask > 0, values, 0.0)
    sums = np.bincount(flat, masked.ravel(), n_groups * m).reshape(n_groups, m)
    counts = np.bincount(flat, mask.ravel(), n_groups * m).reshape(n_groups, m)
    return sums, counts


def numpy_means(w, sums, counts) -> np.ndarray:
    """The resampled ratio means ``(w @ sums) / (w @ counts)``, float64; NaN where a resample
    draws no masked row. Shapes: ``w (R, G)``, ``sums`` and ``counts (G, m)`` -> ``(R, m)``."""
    num = np.asarray(w, np.float64) @ sums
    den = np.asarray(w, np.float64) @ counts
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def numpy_percentiles(w, sums, counts, *, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval (linear interpolation, NaN resamples left out) of ``numpy_means``."""
    import warnings

    stat = numpy_means(w, sums, counts)
    alpha = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column no resample covers: NaN
        return np.nanquantile(stat, alpha, axis=0), np.nanquantile(stat, 1.0 - alpha, axis=0)


@cache
def _jax_percentiles():
    """``numpy_percentiles`` under one ``jit`` (float32; ``backend="jax"``), built on first use."""
    import jax
    import jax.numpy as jnp

    def means(w, sums, counts):
        num = w @ sums
        den = w @ counts
        return jnp.where(den > 0, num / jnp.where(den > 0, den, 1.0), jnp.nan)

    def percentiles(w, sums, counts, *, level):
        stat = means(w, sums, counts)
        alpha = (1.0 - level) / 2.0
        lo = jnp.nanquantile(stat, alpha, axis=0)
        hi = jnp.nanquantile(stat, 1.0 - alpha, axis=0)
        return lo, hi

    return jax.jit(percentiles, static_argnames=("level",))


def _percentiles(w, sums, counts, *, level: float):
    """The ``backend="jax"`` percentiles (``_jax_percentiles``): float32 arrays in, JAX arrays out."""
    return _jax_percentiles()(w, sums, counts, level=level)
