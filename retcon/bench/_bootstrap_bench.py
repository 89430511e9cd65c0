"""Grouped bootstrap CIs: ``retcon.bootstrap.grouped_bootstrap_mean`` against a Python loop.

The loop is what one writes without vectorizing: for each of the R resamples, draw G groups with
replacement, gather the rows of the drawn groups and take the masked column means; then the
percentiles. It is fed the very group draws the vectorized version makes (the same key), so the
two must agree before they are timed.

References: MODEL §8 (metrics with grouped bootstrap CIs).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import jax
import numpy as np

from retcon.bench._timing import interleaved

N_STATS = 28  # 4 actions x 7 budgets, the shape of an OAS metric table


class BootstrapData(NamedTuple):
    """One synthetic metric table: ``values``, ``mask`` ``(n, m)``, ``groups`` ``(n,)``."""

    values: np.ndarray
    mask: np.ndarray
    groups: np.ndarray


def make_data(seed: int, n_rows: int, n_groups: int, n_stats: int = N_STATS) -> BootstrapData:
    """Per-row outcomes in [0, 1] for ``n_stats`` statistics, rows in ``n_groups`` groups of uneven size."""
    rng = np.random.default_rng(seed)
    groups = np.sort(rng.integers(0, n_groups, n_rows))
    groups[:n_groups] = np.arange(n_groups)  # every group present
    effect = rng.normal(0.0, 0.1, n_groups)[groups][:, None]
    values = np.clip(rng.normal(0.6, 0.2, (n_rows, n_stats)) + effect, 0.0, 1.0)
    mask = rng.random((n_rows, n_stats)) < 0.9
    return BootstrapData(values, mask, groups)


def bootstrap_loop(
    draws: np.ndarray, data: BootstrapData, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile CI of masked column means by a plain loop over resamples (float64 reference).

    Args:
      draws: ``(R, G)`` int, the groups drawn in each resample (dense ids 0..G-1).
      data: the table; groups must already be dense ids.
      level: two-sided coverage.

    Returns:
      ``(lower, upper)`` of shape ``(m,)``.
    """
    rows_of = [np.flatnonzero(data.groups == g) for g in range(int(data.groups.max()) + 1)]
    stats = np.empty((draws.shape[0], data.values.shape[1]))
    for r, drawn in enumerate(draws):
        rows = np.concatenate([rows_of[g] for g in drawn])
        v, w = data.values[rows], data.mask[rows]
        den = w.sum(0)
        stats[r] = np.where(den > 0, (v * w).sum(0) / np.maximum(den, 1), np.nan)
    alpha = (1.0 - level) / 2.0
    return np.nanquantile(stats, alpha, axis=0), np.nanquantile(stats, 1.0 - alpha, axis=0)


def bench_bootstrap(
    seed: int, sizes, *, n_resamples: int = 2000, repeats: int = 3, limits=None
) -> list[dict]:
    """Check, then time, vectorized vs loop grouped bootstrap at each number of rows in ``sizes``.

    Each size ``n`` has ``max(10, n // 50)`` groups and 28 statistics. The vectorized figure is
    the public function end to end (host preparation, jitted resampling, percentiles), after one
    call that compiles it; the loop is timed once per repeat as well (best of ``repeats``; its run
    during the check counts as the first, and a loop slower than 10 s is not repeated).

    Returns:
      one row per size: times, ratio, the agreement (max abs difference of the bounds), and the
      achieved GFLOP/s of the two resampling matmuls when ``limits`` is given.
    """
    from retcon.bootstrap import grouped_bootstrap_mean

    rows = []
    key = jax.random.key(seed)
    for n in sizes:
        n_groups = max(10, n // 50)
        data = make_data(seed, n, n_groups)

        def vec(data=data):
            return grouped_bootstrap_mean(
                key, data.values, data.groups, data.mask, n_resamples=n_resamples
            )

        ci = jax.block_until_ready(vec())
        # the draws grouped_bootstrap_mean makes from this key (its _resample: randint(key, (R, G)))
        draws = np.asarray(jax.random.randint(key, (n_resamples, n_groups), 0, n_groups))
        t0 = time.perf_counter()
        lo, hi = bootstrap_loop(draws, data)
        t_loop = time.perf_counter() - t0
        diff = float(
            max(
                np.max(np.abs(np.asarray(ci.lower) - lo)), np.max(np.abs(np.asarray(ci.upper) - hi))
            )
        )
        if not diff < 1e-5:  # float32 resampling against the float64 loop
            raise AssertionError(
                f"bootstrap: vectorized and loop CIs differ by {diff:.3g} at n={n}"
            )
        t = interleaved(
            {"vectorized": vec, "loop": lambda draws=draws, data=data: bootstrap_loop(draws, data)},
            repeats,
            first={"loop": t_loop},
        )
        flops = 2 * 2.0 * n_resamples * n_groups * N_STATS  # (R, G) @ (G, m), twice
        row = {
            "rows": n,
            "groups": n_groups,
            "stats": N_STATS,
            "resamples": n_resamples,
            "vectorized_s": t["vectorized"],
            "loop_s": t["loop"],
            "speedup": t["loop"] / t["vectorized"],
            "max_abs_diff": diff,
            "gflops": flops / t["vectorized"] / 1e9,
        }
        if limits is not None:
            row["fraction_of_f32_matmul"] = row["gflops"] / limits.gflops_f32
        rows.append(row)
    return rows
