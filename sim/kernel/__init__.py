"""The Monte Carlo kernel: one query at a time, batched with ``vmap`` over queries and budgets.

For each query the kernel draws a query type, its evidence cluster (record lengths, the cluster's
redundancy), distractor records, retriever scores and, when the retriever's recall is below 1,
which of the cluster's records the retriever finds; builds the candidate records under each action
(``ret`` keeps the raw records; ``merge`` and ``abstract`` replace the cluster by one record of
length ``rho * (1 - r_c) * len(C)``; ``rewrite`` compresses each record to ``rho * len(m)``); packs
them under every budget; and evaluates the reader of MODEL §2::

    p = clip(g + (a_t - g) * s, 0, 1),   s = prod over evidence units of their support
                                          (raw: kept fraction, 1 when whole; generated: phi * kept
                                          fraction; absent: 0)

A local rewrite spreads the cluster-level fidelity over its records (``phi**(1/k)`` each) so that
the whole rewritten cluster supports the query with ``phi`` (MODEL §1: fidelity is relative to the
raw records). A record the retriever misses is not a candidate (length 0, never ranked): no action
packs or consolidates it, and the support is 0 under every action (the unit is absent), so the
query scores ``g`` and lies outside ``G_B``. Membership in ``G_B`` (every evidence record packed whole under ``ret``) and in
``H_B`` (the packed context differs between ``ret`` and the operator) is returned with ``p``.

Exactness: ``p`` is kept on the grid ``2**-24`` (``m = round(p * 2**24)``, an int32), so every
per-query difference and every sum over queries is an exact integer. Coverage and replacement
partition the per-query differences by ``G_B``; the sums therefore satisfy ``dU = C + R`` bit for
bit on every draw, and any device count or chunking gives the same totals.

References: MODEL §2 (reader, packing), §3 (``G_B``, ``H_B``), §4 (Proposition 1), §7 (operators).

The kernel is split along its seams: ``_draws`` (scenario split, one query's draw, query keys),
``_ranking`` (candidate records, rank order, packing, the evidence frontier), ``_reader``
(support, ``m``, ``G_B``, ``H_B``; one query end to end) and ``_sums`` (the exact block sums of a
chunk). This package re-exports them, so ``sim.kernel`` reads as one module.

Twins: each file holds the JAX function of a rule and, below it, its numpy twin (the CPU default,
driven by ``sim.numpy_kernel``). Change one, change the other; the test named pins them:

========================  ==============================  ================================  ==========================================================
MODEL §2 rule             JAX (``sim.kernel``)            numpy (same file)                 pinned by (tests/)
========================  ==============================  ================================  ==========================================================
scenario to numbers       ``_draws.split``                ``_draws.split_arrays``,          test_sim_kernel.py::test_split_arrays_are_the_jax_split
                                                          ``params_of``
keys from a seed          ``jax.random`` (Threefry)       ``_draws.key_of_seed``,           test_sim_kernel.py::test_numpy_threefry_equals_jax_keys
                                                          ``split_key``, ``fold_in_key``
draws (type, cluster,     ``_draws.draw_query``           ``_draws.draw_columns``           test_sim_numpy_kernel.py::test_backends_agree_in_distribution;
distractors, scores,                                      (own stream: equal in
redundancy)                                               distribution; ``query_types``,    test_sim_numpy_kernel.py::test_query_types_are_numpys_choice;
                                                          ``choice``'s values; only the     test_sim_numpy_kernel.py::test_draws_leave_out_only_lengths_the_frontier_never_reads
                                                          lengths a threshold reads)
rank order (stable)       ``_ranking._rank_order``        ``_ranking.rank_order``           test_sim_numpy_kernel.py::test_rank_order_is_the_stable_score_order
                          (``sorting_network``)           (same network)
packing, frontier         ``_ranking.evidence_frontier``  ``_reader.frontier_columns``      test_benchmarks.py::test_best_numpy_equals_per_budget_packing;
(``prefix``)                                                                                test_benchmarks.py::test_numpy_kernel_equals_jax_kernel_on_shared_draws
                                                          ``_reader.frontier_closed_form``  test_sim_numpy_kernel.py::test_closed_form_frontier_gives_the_exact_positions
                                                          and ``_sums.frontier_events``     test_sim_numpy_kernel.py::test_near_buckets_hold_every_threshold_the_tolerance_calls_near
                                                          (no ranking; exact re-run near
                                                          a budget): the kernel's path
reader ``m`` on 2**-24    ``_reader.quantized_success``,  ``_reader.reader_tables``         the same two tests (bit for bit on shared draws)
                          ``frontier_table``
``G_B``, ``H_B`` per      ``_reader.at_budgets``          ``_reader.outcome_of_frontier``   the same two tests
budget
17 block sums             ``_sums._prefix_block_sums``    ``_sums.event_histogram``,        test_sim_numpy_kernel.py::test_positions_equal_searchsorted;
                          (``searchsorted``)              ``sums_of_histogram``             test_benchmarks.py::test_best_numpy_equals_per_budget_packing
                                                          (``positions``)
========================  ==============================  ================================  ==========================================================

A third copy of the reader and packing, per budget and written as a numpy user writes it first,
is ``tests/_references/sim_numpy.py``: the benchmark's baseline, a reference only, pinned to this
kernel by test_benchmarks.py::test_numpy_kernel_equals_jax_kernel_on_shared_draws and
test_best_numpy_equals_per_budget_packing.

JAX is imported when a JAX function first runs (``_jax``: the files bind ``jax`` and ``jnp``
lazily, ``jit`` compiles on the first call), so the numpy path never imports it.
"""

from sim.kernel._draws import (
    FAMILIES as FAMILIES,
)
from sim.kernel._draws import (
    MISS_STREAM as MISS_STREAM,
)
from sim.kernel._draws import (
    N_OPS as N_OPS,
)
from sim.kernel._draws import (
    REDUNDANCY_CONCENTRATION as REDUNDANCY_CONCENTRATION,
)
from sim.kernel._draws import (
    UNUSED_BETA as UNUSED_BETA,
)
from sim.kernel._draws import (
    Draw as Draw,
)
from sim.kernel._draws import (
    KernelStructure as KernelStructure,
)
from sim.kernel._draws import (
    Params as Params,
)
from sim.kernel._draws import (
    _lengths_of_type as _lengths_of_type,
)
from sim.kernel._draws import (
    cluster_redundancy as cluster_redundancy,
)
from sim.kernel._draws import (
    draw_query as draw_query,
)
from sim.kernel._draws import (
    fold_in_key as fold_in_key,
)
from sim.kernel._draws import (
    key_of_seed as key_of_seed,
)
from sim.kernel._draws import (
    query_keys as query_keys,
)
from sim.kernel._draws import (
    split as split,
)
from sim.kernel._draws import (
    split_arrays as split_arrays,
)
from sim.kernel._draws import (
    split_key as split_key,
)
from sim.kernel._ranking import (
    NETWORK_MAX as NETWORK_MAX,
)
from sim.kernel._ranking import (
    Frontier as Frontier,
)
from sim.kernel._ranking import (
    _frontier_by_rank as _frontier_by_rank,
)
from sim.kernel._ranking import (
    _rank_order as _rank_order,
)
from sim.kernel._ranking import (
    _rank_totals as _rank_totals,
)
from sim.kernel._ranking import (
    candidate_records as candidate_records,
)
from sim.kernel._ranking import (
    evidence_frontier as evidence_frontier,
)
from sim.kernel._ranking import (
    pack_in_rank_order as pack_in_rank_order,
)
from sim.kernel._ranking import (
    prod_in_order as prod_in_order,
)
from sim.kernel._ranking import (
    sorting_network as sorting_network,
)
from sim.kernel._ranking import (
    sum_in_order as sum_in_order,
)
from sim.kernel._reader import (
    GRID as GRID,
)
from sim.kernel._reader import (
    GRID_BITS as GRID_BITS,
)
from sim.kernel._reader import (
    FrontierOutcome as FrontierOutcome,
)
from sim.kernel._reader import (
    QueryOutcome as QueryOutcome,
)
from sim.kernel._reader import (
    _found as _found,
)
from sim.kernel._reader import (
    _support as _support,
)
from sim.kernel._reader import (
    at_budgets as at_budgets,
)
from sim.kernel._reader import (
    frontier_table as frontier_table,
)
from sim.kernel._reader import (
    kept_fraction as kept_fraction,
)
from sim.kernel._reader import (
    quantized_success as quantized_success,
)
from sim.kernel._reader import (
    query_frontier as query_frontier,
)
from sim.kernel._reader import (
    query_outcome as query_outcome,
)
from sim.kernel._reader import (
    query_outcomes as query_outcomes,
)
from sim.kernel._reader import (
    reader_outcome as reader_outcome,
)
from sim.kernel._sums import (
    COL_G as COL_G,
)
from sim.kernel._sums import (
    COLS_C as COLS_C,
)
from sim.kernel._sums import (
    COLS_D as COLS_D,
)
from sim.kernel._sums import (
    COLS_GH as COLS_GH,
)
from sim.kernel._sums import (
    COLS_H as COLS_H,
)
from sim.kernel._sums import (
    COLS_U as COLS_U,
)
from sim.kernel._sums import (
    N_COLS as N_COLS,
)
from sim.kernel._sums import (
    _block_sum as _block_sum,
)
from sim.kernel._sums import (
    _columns as _columns,
)
from sim.kernel._sums import (
    _outcome_block_sums as _outcome_block_sums,
)
from sim.kernel._sums import (
    _per_budget_block_sums as _per_budget_block_sums,
)
from sim.kernel._sums import (
    _prefix_block_sums as _prefix_block_sums,
)
from sim.kernel._sums import (
    _running_sum as _running_sum,
)
from sim.kernel._sums import (
    chunk_block_sums as chunk_block_sums,
)
from sim.kernel._sums import (
    chunk_draws as chunk_draws,
)
from sim.kernel._sums import (
    chunk_frontiers as chunk_frontiers,
)
from sim.kernel._sums import (
    frontier_block_sums as frontier_block_sums,
)
