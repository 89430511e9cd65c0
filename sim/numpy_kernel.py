"""The simulation kernel in plain numpy: the CPU backend of ``sim.simulate`` for ``prefix`` packing.

The same model as the JAX kernel (MODEL §1-§4): the same draws in distribution (query type,
evidence cluster, distractors, retriever scores, cluster redundancy), the same candidate records
per action, packing in rank order, the reader on the grid ``2**-24`` and the same 17 integer sums
per bootstrap block. Written for a CPU, where it is faster than the XLA kernel (docs/performance.md,
"Issue 25"), and for ``prefix`` packing with a retriever of recall 1 (the default scenario);
``simulate`` runs everything else on the JAX kernel.

This module is the driver only. Each numpy stage lives beside its JAX twin in ``sim.kernel``
(the table at the top of ``sim/kernel/__init__.py``): the draws in ``sim/kernel/_draws.py``
(``draw_columns``), the rank order in ``_ranking.py`` (``rank_order``), the frontier and the
reader in ``_reader.py`` (``frontier_columns``; ``frontier_closed_form``, the same frontier without
the ranking), the step positions and sums in ``_sums.py`` (``frontier_events``: the closed form,
exact where a budget lies within its rounding of a threshold; ``histogram_of_events``). Their names are re-exported here. Nothing here imports JAX: with a key given
as its words (``sim.kernel.key_of_seed``, ``split_key``) the numpy path runs without it.

Layout: every per-record array is record-major, ``(records, queries)``, so each step is a whole-row
operation on a contiguous row of queries.

Randomness: ``simulate`` seeds one ``Generator`` per chunk of ``CHUNK`` queries from the key's
words and the chunk's index (``chunk_rng``), so a run's bytes depend on the key, the number of
queries and the budgets only. The stream is not the JAX kernel's (``sim.kernel`` draws with
Threefry); the two backends agree in distribution (tests/sim/test_sim_numpy_kernel.py).

References: MODEL §2 (packing, reader), §3 (``G_B``, ``H_B``), §4 (coverage / replacement).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sim.kernel._draws import (
    Columns,
    NpDraw,
    NpParams,
    chunk_rng,
    columns_of,
    draw_columns,
    draw_of_columns,
    params_of,
    query_types,
    record_lengths,
)
from sim.kernel._ranking import rank_order
from sim.kernel._reader import GRID_F32 as GRID
from sim.kernel._reader import (
    NpFrontier,
    NpOutcome,
    closed_form_tol,
    frontier_closed_form,
    frontier_columns,
    outcome_of_frontier,
    reader_tables,
)
from sim.kernel._sums import (
    Events,
    Histogram,
    bucket_table,
    event_block_sums,
    event_histogram,
    events_of_frontier,
    frontier_events,
    histogram_of_events,
    positions,
    sums_of_histogram,
)

__all__ = [
    "CHUNK",
    "GRID",
    "Columns",
    "Events",
    "Histogram",
    "NpDraw",
    "NpFrontier",
    "NpOutcome",
    "NpParams",
    "bucket_table",
    "chunk_rng",
    "closed_form_tol",
    "columns_of",
    "default_threads",
    "draw_columns",
    "draw_of_columns",
    "event_block_sums",
    "event_histogram",
    "events_of_frontier",
    "frontier_closed_form",
    "frontier_columns",
    "frontier_events",
    "histogram_of_events",
    "outcome_of_frontier",
    "params_of",
    "positions",
    "query_types",
    "rank_order",
    "reader_tables",
    "record_lengths",
    "simulate_block_sums",
    "sums_of_histogram",
    "supports",
]

CHUNK = 32768  # queries per chunk and per seeded Generator (fixed: part of the stream)


def supports(scenario) -> bool:
    """Whether this kernel runs ``scenario``: ``prefix`` packing and retriever recall 1."""
    return scenario.packing == "prefix" and scenario.retriever.recall >= 1.0


def default_threads() -> int:
    """Threads for ``simulate_block_sums``: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def simulate_block_sums(
    key,
    scenario,
    n_queries: int,
    budgets,
    *,
    n_blocks: int,
    on_chunk=None,
    threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw, rank and sum ``n_queries`` queries chunk by chunk (``CHUNK`` queries, one seeded
    ``Generator`` each): ``(sums (n_blocks, nB, 17) int64, counts (n_blocks,) int64)``, the
    count columns as totals in block 0 (``sums_of_histogram``).

    ``sim.simulate(..., backend="numpy")`` reads its result from these sums. Query ``i`` is in block
    ``i % n_blocks``. Chunks run on ``threads`` threads (default ``default_threads()``; numpy
    releases the GIL inside its array operations and each chunk has its own ``Generator``): the
    sums are integers, so the result does not depend on the thread count. ``on_chunk(c)``
    (optional) is called after each chunk of ``c`` queries.

    Raises:
      ValueError: the scenario is not supported (``supports``).
    """
    if not supports(scenario):
        raise ValueError(
            "sim.numpy_kernel runs prefix packing with retriever recall 1 only; got packing "
            f"{scenario.packing!r}, recall {scenario.retriever.recall:g}."
        )
    st, pr = params_of(scenario)
    b = np.asarray(budgets, np.float32)
    table = bucket_table(b)
    starts = list(range(0, n_queries, CHUNK))

    def one(i: int) -> Histogram:
        start = starts[i]
        c = min(CHUNK, n_queries - start)
        cols = draw_columns(chunk_rng(key, i), c, st, pr)
        return histogram_of_events(frontier_events(cols, pr, b, table), b.size, start, n_blocks)

    total = None
    workers = min(default_threads() if threads is None else int(threads), len(starts))
    if workers <= 1:
        sums = map(one, range(len(starts)))
    else:
        pool = ThreadPoolExecutor(workers)
        sums = pool.map(one, range(len(starts)))
    try:
        for i, h in enumerate(sums):
            total = h if total is None else Histogram(*(x + y for x, y in zip(total, h)))
            if on_chunk is not None:
                on_chunk(min(CHUNK, n_queries - starts[i]))
    finally:
        if workers > 1:
            pool.shutdown(cancel_futures=True)
    assert total is not None, "n_queries must be >= 1"
    # queries per block (query i in block i % n_blocks), without an array of n_queries indices
    counts = np.full(n_blocks, n_queries // n_blocks, np.int64)
    counts[: n_queries % n_blocks] += 1
    return sums_of_histogram(total, n_blocks, b.size), counts
