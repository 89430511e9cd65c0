"""Run the kernel over many queries: chunked, sharded over every JAX device, exact aggregates.

JAX is imported only on the JAX path; the numpy kernel's path (``backend="numpy"``, and the CPU
default) runs without it.

The query axis is cut into chunks of fixed shape (one compilation), each chunk is laid out over a
1-D device mesh (``jax.sharding``), and each chunk returns only integer sums per bootstrap block,
so memory stays bounded whatever the number of queries and the totals do not depend on the device
count or the chunk size.

References: MODEL §3 (``U``, ``dU``), §4 (coverage / replacement).
"""

from __future__ import annotations

import math
import os
import sys
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from retcon.errors import InputError
from sim import kernel as K
from sim import numpy_kernel as NK
from sim._chunks import add_chunks
from sim._scenario import Scenario, as_scenario
from sim.kernel._jax import jit

if TYPE_CHECKING:
    import jax
    from jax.sharding import Mesh
    from numpy.typing import ArrayLike

MAX_BLOCKS = 1024  # bootstrap / standard-error blocks (query i is in block i % n_blocks)
CHUNK_QUERIES = (
    65536  # queries per chunk (all devices together); <= 127 * MAX_BLOCKS keeps int32 exact
)
EXACT_BITS = 50  # means are reported on the grid 2**-50, where C + R = dU is exact in float64


class SimResult(NamedTuple):
    """Aggregates of a simulation run. Axes: ``nB`` budgets, 4 actions (ACTIONS), 3 operators,
    in the one order of every result type (docs/simulation.md, "Axis order"): units first
    (blocks), then the action or operator, the budget last.

    Attributes:
      budgets: ``(nB,)`` tokens.
      utility, utility_se: ``(4, nB)`` ``U_B(a)`` and its standard error.
      delta, delta_se: ``(3, nB)`` ``dU_{B,o} = U_B(o) - U_B(ret)``.
      coverage, coverage_se: ``(3, nB)`` coverage effect ``C_{B,o}`` (queries outside ``G_B``).
      replacement, replacement_se: ``(3, nB)`` replacement effect ``R_{B,o}`` (queries in ``G_B``);
        ``coverage + replacement == delta`` holds exactly (float64 equality).
      raw_grounded: ``(nB,)`` share of queries in ``G_B``.
      affected: ``(3, nB)`` share in ``H_B``; ``grounded_affected``: share in ``G_B`` and ``H_B``.
      n_queries: number of simulated queries.
      block_delta: ``(G, 3, nB)`` int64 exact sums of ``m_o - m_ret`` per block (units ``2**-24``),
        for the bootstrap over queries; ``block_count``: ``(G,)`` queries per block.
    """

    budgets: np.ndarray
    utility: np.ndarray
    utility_se: np.ndarray
    delta: np.ndarray
    delta_se: np.ndarray
    coverage: np.ndarray
    coverage_se: np.ndarray
    replacement: np.ndarray
    replacement_se: np.ndarray
    raw_grounded: np.ndarray
    affected: np.ndarray
    grounded_affected: np.ndarray
    n_queries: int
    block_delta: np.ndarray
    block_count: np.ndarray


def exact_mean(total: np.ndarray, n: int) -> np.ndarray:
    """``total * 2**-24 / n`` rounded to the grid ``2**-50`` (exact integer arithmetic).

    On that grid sums and differences of means in [-2, 2] are exact in float64, so the reported
    ``coverage + replacement`` equals ``delta`` bit for bit.
    """
    shift = EXACT_BITS - K.GRID_BITS
    flat = [int(x) for x in np.asarray(total, dtype=np.int64).ravel()]
    k = [((2 * (x << shift)) + n) // (2 * n) for x in flat]  # round half up
    return np.asarray([float(v) / 2.0**EXACT_BITS for v in k], dtype=np.float64).reshape(
        np.shape(total)
    )


def block_se(block_sums: np.ndarray, block_count: np.ndarray) -> np.ndarray:
    """Standard error of a mean from per-block sums (cluster-robust over blocks), in units of 1.

    ``SE = sqrt(G / (G - 1) * sum_b (S_b - mean * n_b)**2) / N``, blocks with no query dropped.
    """
    keep = block_count > 0
    S = block_sums[keep].astype(np.float64) / K.GRID
    n_b = block_count[keep].astype(np.float64)
    G, N = S.shape[0], n_b.sum()
    if G < 2:
        return np.full(S.shape[1:], np.nan)
    mean = S.sum(0) / N
    resid = S - mean[None] * n_b.reshape(-1, *([1] * (S.ndim - 1)))
    return np.sqrt(G / (G - 1) * (resid**2).sum(0)) / N


def layout(
    n: int, n_devices: int, *, n_blocks: int | None = None, max_chunk: int | None = None
) -> tuple[int, int]:
    """``(n_blocks, chunk)`` for ``n`` rows on ``n_devices``: blocks depend on ``n`` only.

    ``chunk`` is a multiple of both ``n_blocks`` and ``n_devices``, at most ``max(max_chunk, lcm)``.
    """
    max_chunk = CHUNK_QUERIES if max_chunk is None else max_chunk
    if n_blocks is None:
        n_blocks = min(MAX_BLOCKS, 1 << max(0, math.ceil(math.log2(max(n, 1)))))
    base = n_blocks * n_devices // math.gcd(n_blocks, n_devices)
    per = max(1, min(max(max_chunk // base, 1), math.ceil(n / base)))
    return n_blocks, base * per


def _mesh() -> Mesh:
    import jax
    from jax.sharding import Mesh

    return Mesh(np.asarray(jax.devices()), ("q",))


def run_chunks(
    fn,
    n: int,
    *,
    progress: bool | None = None,
    desc: str = "simulate",
    n_blocks: int | None = None,
    max_chunk: int | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Call ``fn(idx, valid)`` on every chunk of ``range(n)`` (sharded) and add the int sums.

    Args:
      fn: jitted ``(idx (c,), valid (c,)) -> (sums (n_blocks, ...), counts (n_blocks,))``.
      n: number of queries.
      progress: show a tqdm bar on stderr (default: when there are more than 4 chunks).

    Returns:
      ``(sums int64, counts int64, n_blocks)``.
    """
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    if jax.process_count() > 1:  # a jax.distributed run: same integers (sim._multiprocess)
        from sim._multiprocess import run_chunks_multiprocess

        n_blocks, chunk = layout(n, len(jax.devices()), n_blocks=n_blocks, max_chunk=max_chunk)
        return (*run_chunks_multiprocess(fn, n, chunk), n_blocks)
    mesh = _mesh()
    n_blocks, chunk = layout(n, mesh.size, n_blocks=n_blocks, max_chunk=max_chunk)
    sharding = NamedSharding(mesh, PartitionSpec("q"))
    starts = range(0, n, chunk)
    if progress is None:
        progress = len(starts) > 4
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(  # disable=None: no "\r" frames into a file or a pipe (issue 48)
            total=n,
            desc=desc,
            unit="q",
            unit_scale=True,
            file=sys.stderr,
            leave=False,
            disable=None,
        )
    total, counts = add_chunks(fn, starts, chunk, n, sharding, bar)
    if bar is not None:
        bar.close()
    assert total is not None and counts is not None, "run_chunks needs n >= 1"
    return total, counts, n_blocks


def _check_budgets(budgets, scenario: Scenario) -> np.ndarray:
    b = np.asarray(scenario.budgets if budgets is None else budgets, dtype=np.float64).reshape(-1)
    if b.size == 0 or not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise InputError(f"budgets must be finite and > 0; got {b.tolist()}.")
    if np.any(np.diff(b) <= 0):
        raise InputError(f"budgets must be strictly increasing; got {b.tolist()}.")
    return b


def _check_n(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= int(n) < 2**31:
        raise InputError(f"{name} must be an integer in [1, 2**31); got {n!r}.")
    return int(n)


def simulate(
    key: jax.Array,
    scenario: Scenario | str,
    n_queries: int | None = None,
    budgets: ArrayLike | None = None,
    *,
    progress: bool | None = None,
    backend: str | None = None,
) -> SimResult:
    """Simulate ``U``, ``dU``, coverage and replacement per operator and budget.

    Args:
      key: JAX PRNG key (``jax.random.key(seed)``) or its uint32 words (the numpy kernel reads the
        words only); with the JAX kernel query ``i`` uses ``fold_in(key, i)``.
      scenario: a ``Scenario``, or a preset name or TOML path (``load_scenario``).
      n_queries: queries to draw (default ``scenario.queries``).
      budgets: ``(nB,)`` increasing budgets in tokens (default ``scenario.budgets``).
      progress: tqdm bar on stderr; default when the run has more than 4 chunks (JAX kernel).
      backend: ``"jax"`` (``sim.kernel``: XLA, sharded over every JAX device, any scenario),
        ``"numpy"`` (``sim.numpy_kernel``: ``prefix`` packing and retriever recall 1 only; it imports
        no JAX when ``key`` is given as its words, ``sim.kernel.key_of_seed`` / ``split_key``) or
        ``None``: ``"numpy"`` where it applies and JAX runs on the CPU in one process (it is the
        faster there, docs/performance.md), else ``"jax"``. The two draw different streams from
        the same key (each one the same bytes for the same key) and agree in distribution.

    Returns:
      ``SimResult``; every mean is exact on the grid ``2**-50`` and ``coverage + replacement ==
      delta`` elementwise in float64.

    Raises:
      InputError: an unknown ``backend``, or ``"numpy"`` for a scenario it does not run.

    References:
      MODEL §3 (utility), §4 (Proposition 1: the partition by ``G_B``).
    """
    scenario = as_scenario(scenario)
    n = _check_n("n_queries", scenario.queries if n_queries is None else n_queries)
    b = _check_budgets(budgets, scenario)
    if choose_backend(scenario, backend) == "numpy":
        n_blocks, _ = layout(n, 1)
        n_chunks = -(-n // NK.CHUNK)
        bar = None
        if progress or (progress is None and n_chunks > 4):
            from tqdm import tqdm

            bar = tqdm(
                total=n, desc="simulate", unit="q", unit_scale=True, file=sys.stderr, leave=False
            )
        sums, counts = NK.simulate_block_sums(
            key, scenario, n, b, n_blocks=n_blocks, on_chunk=None if bar is None else bar.update
        )
        if bar is not None:
            bar.close()
    else:
        import jax
        import jax.numpy as jnp

        st, pr = K.split(scenario)
        b32 = jnp.asarray(b, jnp.float32)
        n_blocks, _ = layout(n, len(jax.devices()))

        def fn(idx, valid):
            return K.chunk_block_sums(key, idx, valid, b32, pr, st=st, n_blocks=n_blocks)

        sums, counts, _ = run_chunks(fn, n, progress=progress)
    return result_of_sums(b, sums, counts, n)


BACKENDS = ("jax", "numpy")


def choose_backend(scenario: Scenario, backend: str | None = None) -> str:
    """The kernel ``simulate`` runs: ``backend`` checked, or for ``None`` ``"numpy"`` when
    ``sim.numpy_kernel`` runs the scenario and JAX's default backend is the CPU in one process
    (there the numpy kernel is the faster, docs/performance.md, "Issue 25"), else ``"jax"``."""
    if backend is None:
        return "numpy" if NK.supports(scenario) and _jax_on_one_cpu() else "jax"
    if backend not in BACKENDS:
        raise InputError(f"backend must be one of {BACKENDS} or None; got {backend!r}.")
    if backend == "numpy" and not NK.supports(scenario):
        raise InputError(
            "backend 'numpy' runs prefix packing with retriever recall 1 only; scenario "
            f"{scenario.name!r} has packing {scenario.packing!r}, recall "
            f"{scenario.retriever.recall:g}: use backend 'jax'."
        )
    return backend


def _jax_on_one_cpu() -> bool:
    """Whether JAX's default backend is the CPU in one process, asking JAX only when it could say
    otherwise: when JAX is imported (a ``jax.distributed`` run is), ``$JAX_PLATFORMS`` names
    another platform, or an accelerator plugin is installed (``jax_plugins``, ``libtpu``, the
    modules through which JAX finds a GPU or TPU). Without any of them JAX runs on the CPU alone,
    so the numpy path answers without importing it."""
    import importlib.util
    from importlib.metadata import entry_points

    platforms = os.environ.get("JAX_PLATFORMS", "").strip().lower()
    plugin = (
        importlib.util.find_spec("jax_plugins") is not None
        or importlib.util.find_spec("libtpu") is not None
        or bool(entry_points(group="jax_plugins"))
    )
    if "jax" not in sys.modules and platforms in ("", "cpu") and (platforms == "cpu" or not plugin):
        return True
    import jax

    return jax.default_backend() == "cpu" and jax.process_count() == 1


def result_of_sums(b: np.ndarray, sums: np.ndarray, counts: np.ndarray, n: int) -> SimResult:
    """``SimResult`` from the 17 exact block sums ``(G, nB, 17)`` and the block counts ``(G,)``."""
    total = sums.sum(0)  # (nB, 17) int64, exact
    blocks_d = sums[..., K.COLS_D]  # (G, nB, 3)
    blocks_c = sums[..., K.COLS_C]
    blocks_r = blocks_d - blocks_c
    utility = exact_mean(total[:, K.COLS_U], n)
    delta = exact_mean(total[:, K.COLS_D], n).T
    coverage = exact_mean(total[:, K.COLS_C], n).T
    replacement = delta - coverage  # exact on the 2**-50 grid
    return SimResult(
        budgets=b,
        utility=utility.T,
        utility_se=block_se(sums[..., K.COLS_U], counts).T,
        delta=delta,
        delta_se=block_se(blocks_d, counts).T,
        coverage=coverage,
        coverage_se=block_se(blocks_c, counts).T,
        replacement=replacement,
        replacement_se=block_se(blocks_r, counts).T,
        raw_grounded=total[:, K.COL_G] / n,
        affected=(total[:, K.COLS_H] / n).T,
        grounded_affected=(total[:, K.COLS_GH] / n).T,
        n_queries=n,
        block_delta=np.transpose(blocks_d, (0, 2, 1)),
        block_count=counts,
    )


class QueryArrays(NamedTuple):
    """Per-query outcomes of a small run (for checks and paired data). ``n`` queries, ``nB`` budgets;
    axes in the order of every result type: query, then action or operator, the budget last.

    Attributes:
      query_type: ``(n,)`` vocabulary slot.
      success_prob: ``(n, 4, nB)`` reader success probability per action (ACTIONS order).
      delta, coverage, replacement: ``(n, 3, nB)`` per-query ``p_o - p_ret`` and its partition by
        ``G_B``: ``coverage + replacement == delta`` exactly for every query.
      raw_grounded: ``(n, nB)`` bool; ``affected``: ``(n, 3, nB)`` bool.
      record_lengths: ``(n, K)`` evidence record lengths (0 on padding); ``record_mask``: ``(n, K)``.
      redundancy: ``(n,)`` the cluster's own redundancy ``r_c``.
    """

    query_type: np.ndarray
    success_prob: np.ndarray
    delta: np.ndarray
    coverage: np.ndarray
    replacement: np.ndarray
    raw_grounded: np.ndarray
    affected: np.ndarray
    record_lengths: np.ndarray
    record_mask: np.ndarray
    redundancy: np.ndarray


@jit(static_argnames=("st",))
def _queries_jit(root, idx, budgets, pr, *, st):
    import jax

    draws, out = jax.vmap(lambda k: K.query_outcome(k, budgets, st, pr))(K.query_keys(root, idx))
    return draws, out


def simulate_queries(
    key: jax.Array, scenario: Scenario | str, n_queries: int, budgets=None
) -> QueryArrays:
    """Per-query success probabilities and regions for ``n_queries`` queries (held in memory).

    Query ``i`` is the same draw as query ``i`` of ``simulate(key, scenario, ..., backend="jax")``.

    Args:
      key: JAX PRNG key.
      scenario: the scenario.
      n_queries: number of queries (kept in memory: use ``simulate`` for large runs).
      budgets: ``(nB,)`` budgets (default the scenario's grid).

    Returns:
      ``QueryArrays``; probabilities are exact multiples of ``2**-24``.

    References:
      MODEL §2 (reader), §3 (``G_B``, ``H_B``), §4 (per-query partition).
    """
    scenario = as_scenario(scenario)
    n = _check_n("n_queries", n_queries)
    b = _check_budgets(budgets, scenario)
    import jax.numpy as jnp

    st, pr = K.split(scenario)
    draws, out = _queries_jit(
        key, jnp.arange(n, dtype=jnp.int32), jnp.asarray(b, jnp.float32), pr, st=st
    )
    m = np.asarray(out.m)
    p = m.astype(np.float32) / np.float32(K.GRID)
    d = p[..., 1:] - p[..., :1]
    g = np.asarray(out.raw_grounded)
    cov = np.where(g[..., None], np.float32(0), d)

    def last(x):  # (n, nB, a) -> (n, a, nB): the budget axis last
        return np.moveaxis(x, -1, 1)

    return QueryArrays(
        query_type=np.asarray(draws.query_type),
        success_prob=last(p),
        delta=last(d),
        coverage=last(cov),
        replacement=last(d - cov),
        raw_grounded=g,
        affected=last(np.asarray(out.affected)),
        record_lengths=np.asarray(draws.ev_len),
        record_mask=np.asarray(draws.ev_mask),
        redundancy=np.asarray(draws.redundancy),
    )
