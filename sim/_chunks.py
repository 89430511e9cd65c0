"""The one chunk loop of a JAX simulation run, shared below ``sim._simulate`` (one process) and
``sim._multiprocess`` (each process of a ``jax.distributed`` run), so neither imports the other.

References: MODEL §3 (``U``, ``dU``: exact integer sums over queries).
"""

from __future__ import annotations

import numpy as np


def add_chunks(fn, starts, chunk: int, n: int, sharding, bar=None):
    """Exact int64 sums of ``fn(idx, valid)`` over the chunks that begin at ``starts``.

    The one chunk loop of a run, in one process or in each process of a multi-process run.

    Returns:
      ``(sums, counts)`` int64, or ``(None, None)`` when ``starts`` is empty.
    """
    import jax

    total = counts = None
    for start in starts:
        idx_np = np.arange(start, start + chunk, dtype=np.int64)
        valid_np = idx_np < n
        idx = jax.device_put(idx_np.astype(np.int32), sharding)
        valid = jax.device_put(valid_np, sharding)
        s, c = fn(idx, valid)
        s, c = np.asarray(s, np.int64), np.asarray(c, np.int64)
        total = s if total is None else total + s
        counts = c if counts is None else counts + c
        if bar is not None:
            bar.update(int(valid_np.sum()))
    return total, counts
