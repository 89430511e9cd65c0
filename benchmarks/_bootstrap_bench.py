"""Grouped bootstrap CIs: ``retcon.bootstrap.grouped_bootstrap_mean`` against numpy.

``grouped_bootstrap_mean(..., backend="jax")`` aggregates the rows to group sums once, draws the
``(R, G)`` group multiplicities from its JAX key, and takes the resampled means as two
``(R, G) @ (G, m)`` matmuls and their percentiles in one ``jit`` call (float32). The competent
alternative, ``numpy_bootstrap``, runs the same algorithm in numpy float64: the same group sums and
the same multiplicities from the same key, ``@`` and ``np.nanquantile`` (linear interpolation, as
``jnp.nanquantile``); it is ``retcon.bootstrap``'s default backend, since it measured faster on
CPU. It is fed the very group draws the JAX version makes (the same key), so the two must agree
before they are timed. (The former baseline row, a Python loop over resamples, is gone; its
figures are in the CHANGELOG.)

References: MODEL §8 (metrics with grouped bootstrap CIs).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import jax
import numpy as np

from benchmarks._timing import interleaved

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


def numpy_bootstrap(
    key: jax.Array, data: BootstrapData, n_resamples: int, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile CI of masked column means: ``grouped_bootstrap_mean``'s algorithm in numpy float64.

    Returns:
      ``(lower, upper)`` of shape ``(m,)``.
    """
    from retcon.bootstrap import _group_sums, group_resample_weights, numpy_percentiles

    sums, counts = _group_sums(data.values, data.groups, data.mask, "numpy_bootstrap")
    w = group_resample_weights(key, sums.shape[0], n_resamples)
    return numpy_percentiles(w, sums, counts, level=level)


def bench_bootstrap(
    seed: int, sizes, *, n_resamples: int = 2000, repeats: int = 3, limits=None
) -> list[dict]:
    """Check, then time, the JAX function and numpy's same algorithm at each size.

    Each size ``n`` has ``max(10, n // 50)`` groups and 28 statistics. The JAX and numpy figures
    are end to end (group sums, the multiplicities drawn from the key, resampled means,
    percentiles), after one call that compiles (best of ``repeats``). The stages are timed too, interleaved: the draws (``group_resample_weights``,
    shared by both), and the resampling + percentiles alone, JAX float32 against numpy float64.

    Returns:
      one row per size: times, ratios, the agreement (max abs difference of the bounds against the
      JAX function), and the achieved GFLOP/s of the two resampling matmuls when ``limits`` is
      given.
    """
    import jax.numpy as jnp

    from retcon.bootstrap import (
        _group_sums,
        _percentiles,
        group_resample_weights,
        grouped_bootstrap_mean,
        numpy_percentiles,
    )

    rows = []
    key = jax.random.key(seed)
    for n in sizes:
        n_groups = max(10, n // 50)
        data = make_data(seed, n, n_groups)

        def vec(data=data):
            return grouped_bootstrap_mean(
                key, data.values, data.groups, data.mask, n_resamples=n_resamples, backend="jax"
            )

        ci = jax.block_until_ready(vec())
        w = group_resample_weights(key, n_groups, n_resamples)
        t0 = time.perf_counter()
        nlo, nhi = numpy_bootstrap(key, data, n_resamples)
        t_numpy = time.perf_counter() - t0
        diffs = {}
        for name, (a, b) in {"numpy": (nlo, nhi)}.items():
            diffs[name] = float(
                max(
                    np.max(np.abs(np.asarray(ci.lower) - a)),
                    np.max(np.abs(np.asarray(ci.upper) - b)),
                )
            )
            if not diffs[name] < 1e-5:  # float32 resampling against float64
                raise AssertionError(
                    f"bootstrap: the JAX function and {name} CIs differ by {diffs[name]:.3g} at n={n}"
                )
        t = interleaved(
            {
                "vectorized": vec,
                "numpy": lambda data=data: numpy_bootstrap(key, data, n_resamples),
            },
            repeats,
            first={"numpy": t_numpy},
        )
        sums, cnts = _group_sums(data.values, data.groups, data.mask, "bench_bootstrap")
        w32, s32, c32 = (jnp.asarray(a, jnp.float32) for a in (w, sums, cnts))
        stages = interleaved(
            {
                "draws": lambda g=n_groups: group_resample_weights(key, g, n_resamples),
                "jax_resample": lambda w=w32, s=s32, c=c32: _percentiles(w, s, c, level=0.95),
                "numpy_resample": lambda w=w, s=sums, c=cnts: numpy_percentiles(
                    w, s, c, level=0.95
                ),
            },
            max(repeats, 3),
        )
        flops = 2 * 2.0 * n_resamples * n_groups * N_STATS  # (R, G) @ (G, m), twice
        row = {
            "rows": n,
            "groups": n_groups,
            "stats": N_STATS,
            "resamples": n_resamples,
            "vectorized_s": t["vectorized"],
            "numpy_s": t["numpy"],
            "speedup_vs_numpy": t["numpy"] / t["vectorized"],
            "draws_s": stages["draws"],
            "jax_resample_s": stages["jax_resample"],
            "numpy_resample_s": stages["numpy_resample"],
            "resample_speedup_vs_numpy": stages["numpy_resample"] / stages["jax_resample"],
            "max_abs_diff_numpy": diffs["numpy"],
            "gflops": flops / t["vectorized"] / 1e9,
        }
        if limits is not None:
            row["fraction_of_f32_matmul"] = row["gflops"] / limits.gflops_f32
        rows.append(row)
    return rows
