"""The kernel's exact sums: the 17 integer columns per bootstrap block for a chunk of queries
(per-budget outcomes, or the frontier's step events in one histogram under ``prefix``).

Below the JAX functions, their numpy twin: the same step events counted in one histogram per chunk
(``event_histogram``, ``sums_of_histogram``; ``positions`` is the twin of ``searchsorted``), the same
integers. The table in ``sim/kernel/__init__.py`` names the test that pins each pair.

References: MODEL §3-§4 (``dU = C + R`` exact).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sim.kernel._draws import (
    Columns,
    Draw,
    KernelStructure,
    NpParams,
    Params,
    draw_query,
    query_keys,
)
from sim.kernel._jax import jit
from sim.kernel._ranking import _sortable_bits
from sim.kernel._reader import (
    FrontierOutcome,
    NpFrontier,
    QueryOutcome,
    at_budgets,
    closed_form_tol,
    frontier_closed_form,
    frontier_columns,
    query_frontier,
    query_outcome,
)

if TYPE_CHECKING:
    import jax
    import jax.numpy as jnp
else:
    from sim.kernel._jax import jax, jnp

# Columns of the per-block integer sums.
COLS_U = slice(0, 4)  # sum of m per action
COLS_D = slice(4, 7)  # sum of m_o - m_ret per operator
COLS_C = slice(7, 10)  # the same on queries outside G_B (coverage)
COL_G = 10  # count in G_B
COLS_H = slice(11, 14)  # count in H_B per operator
COLS_GH = slice(14, 17)  # count in G_B and H_B per operator
N_COLS = 17


def chunk_block_sums(
    root,
    idx,
    valid,
    budgets,
    pr: Params,
    *,
    st: KernelStructure,
    n_blocks: int,
    method: str = "frontier",
):
    """Exact int32 sums per bootstrap block for one chunk of queries.

    The frontier path runs as three compiled programs, each materializing its result: the draws
    (``chunk_draws``), the evidence frontier and outcome table (``chunk_frontiers``) and the
    budget reading with the block sums. In one program XLA fuses each stage into the next and
    recomputes it once per consumer (the threefry draws once per candidate record, the sorting
    network once per threshold): measured on CPU (locomo-like, 65,536 queries, 29 budgets), 4.4
    us of CPU per query fused against 1.8 us as three programs. The per-budget path is one
    program, as before.

    Args:
      root: the run's root key.
      idx: ``(c,)`` global query indices (``c`` a multiple of ``n_blocks``); query ``i`` is in
        block ``i % n_blocks``.
      valid: ``(c,)`` bool; padding rows past the end of the run count for nothing.
      budgets: ``(nB,)`` budgets in tokens.
      method: ``"frontier"`` or ``"per-budget"`` (``query_outcome``; the same sums).

    Returns:
      ``(sums (n_blocks, nB, 17) int32, counts (n_blocks,) int32)``; columns as ``COLS_*``.
    """
    if method == "frontier" and st.packing in ("prefix", "cut"):
        t = chunk_frontiers(chunk_draws(root, idx, pr, st=st), pr, st=st)
        return frontier_block_sums(t, valid, budgets, pr, n_blocks=n_blocks, packing=st.packing)
    return _per_budget_block_sums(
        root, idx, valid, budgets, pr, st=st, n_blocks=n_blocks, method=method
    )


@jit(static_argnames=("st",))
def chunk_draws(root, idx, pr: Params, *, st: KernelStructure) -> Draw:
    """The draws of the queries ``idx`` (query axis first)."""
    return jax.vmap(lambda k: draw_query(k, st, pr))(query_keys(root, idx))


@jit(static_argnames=("st",))
def chunk_frontiers(d: Draw, pr: Params, *, st: KernelStructure) -> FrontierOutcome:
    """The evidence frontier and outcome table of each query of a chunk of draws."""
    return jax.vmap(lambda x: query_frontier(x, st, pr))(d)


def _block_sum(x, n_blocks: int):
    """Integer sums per block (query ``i`` in block ``i % n_blocks``): exact in any order."""
    c = x.shape[0]
    return x.reshape(c // n_blocks, n_blocks, *x.shape[1:]).sum(axis=0, dtype=jnp.int32)


@jit(static_argnames=("n_blocks", "packing"))
def frontier_block_sums(t: FrontierOutcome, valid, budgets, pr: Params, *, n_blocks, packing):
    """The block sums and counts of ``chunk_block_sums`` from a chunk's outcome tables
    (``chunk_frontiers``): ``prefix`` reads the budgets without a per-budget array
    (``_prefix_block_sums``), ``cut`` evaluates ``at_budgets`` per budget."""
    counts = _block_sum(valid.astype(jnp.int32), n_blocks)
    if packing == "prefix":
        return _prefix_block_sums(t, valid, budgets, n_blocks), counts
    out = jax.vmap(lambda x: at_budgets(x, budgets, pr, packing))(t)
    return _outcome_block_sums(out, valid, n_blocks), counts


@jit(static_argnames=("st", "n_blocks", "method"))
def _per_budget_block_sums(root, idx, valid, budgets, pr: Params, *, st, n_blocks, method):
    keys = query_keys(root, idx)
    _, out = jax.vmap(lambda k: query_outcome(k, budgets, st, pr, method))(keys)
    # keep XLA from fusing the per-query outcome into the block reduction: fused, the chunk ran
    # 2x slower on CPU (measured, locomo-like, 65,536 queries); the values are the same
    out = jax.lax.optimization_barrier(out)
    return _outcome_block_sums(out, valid, n_blocks), _block_sum(valid.astype(jnp.int32), n_blocks)


def _outcome_block_sums(out: QueryOutcome, valid, n_blocks: int):
    """The 17 columns' block sums from per-budget outcomes ``(c, nB, ...)``."""
    # reduce first, take differences after: the block sums of m_o - m_ret are the differences of
    # the block sums of m (exact integers), so only 15 reductions per budget run over the chunk
    g = out.raw_grounded & valid[:, None]  # (c, nB)
    h = out.affected & valid[:, None, None]  # (c, nB, 3)
    m = jnp.where(valid[:, None, None], out.m, 0)  # (c, nB, 4)
    s_m = _block_sum(m, n_blocks)  # (G, nB, 4)
    s_out = _block_sum(jnp.where(out.raw_grounded[..., None], 0, m), n_blocks)  # outside G_B
    s_g = _block_sum(g.astype(jnp.int32), n_blocks)
    s_h = _block_sum(h.astype(jnp.int32), n_blocks)
    s_gh = _block_sum((h & g[..., None]).astype(jnp.int32), n_blocks)
    return _columns(s_m, s_out, s_g, s_h, s_gh)


def _columns(s_m, s_out, s_g, s_h, s_gh):
    """The 17 columns from the block sums of ``m``, ``m`` outside ``G_B``, ``G_B``, ``H_B`` and
    both (exact integer differences)."""
    d = s_m[..., 1:] - s_m[..., :1]
    cov = s_out[..., 1:] - s_out[..., :1]
    return jnp.concatenate([s_m, d, cov, s_g[..., None], s_h, s_gh], axis=-1)


def _prefix_block_sums(t: FrontierOutcome, valid, budgets, n_blocks: int):
    """Block sums under ``prefix`` packing without a per-budget array: every column is a step
    function of the budget (a value below a threshold, another from it on), so each query adds its
    steps at the thresholds' positions in the sorted budgets (``searchsorted``: budget ``i`` is at
    or above threshold ``w`` exactly when ``i >= #{budgets < w}``, the comparison ``w <= B`` of the
    per-budget path), and a running sum over the budget axis reads every budget's sum. Integer
    arithmetic throughout: the same sums, bit for bit, at a cost that does not grow with the
    number of budgets beyond the final running sum.

    Only the 7 distinct thresholds are searched (``last_total`` per action, the start of ``H_B``
    per operator): a position is monotone in its threshold, so the position of ``max(x, y)`` is
    the larger of the two positions, and ``G_B``'s threshold is ``ret``'s, ``-inf`` (position 0) or,
    when the retriever missed an evidence record, ``inf`` (position ``nB``, past every budget).
    """
    c = valid.shape[0]
    nb = budgets.shape[0]
    f = t.frontier
    v = valid.astype(jnp.int32)
    h = jnp.minimum(f.first_total[:, :1], f.first_total[:, 1:])  # (c, 3): H_B from h on
    # m is m_whole from last_total on, m_absent below; G_B from p_g on; H_B from p_h on
    thr = jnp.concatenate([f.last_total, h], axis=-1)  # (c, 7)
    pos = jnp.searchsorted(budgets, thr.reshape(-1), side="left", method="scan_unrolled")
    pos = pos.astype(jnp.int32).reshape(thr.shape)
    p_w, p_h = pos[:, :4], pos[:, 4:]
    p_g = jnp.where(t.grounded_absent, 0, p_w[:, 0])
    if t.intact is not None:  # a missed evidence record: never in G_B (threshold inf: position nB)
        p_g = jnp.where(t.intact, p_g, nb)
    m_lo = t.m_absent * v[:, None]
    step = (t.m_whole - t.m_absent) * v[:, None]
    # (position, column, value) events; columns: m (0-3), m outside G_B (4-7), G (8), H (9-11),
    # G and H (12-14)
    ps = [p_w[:, a] for a in range(4)]
    at = (
        ps
        + [p_g] * 4
        + ps
        + [jnp.maximum(p_w[:, a], p_g) for a in range(4)]
        + [p_g]
        + [p_h[:, o] for o in range(3)]
        + [jnp.maximum(p_h[:, o], p_g) for o in range(3)]
    )
    col = [0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    val = (
        [step[:, a] for a in range(4)]
        + [-m_lo[:, a] for a in range(4)]
        + [step[:, a] for a in range(4)]
        + [-step[:, a] for a in range(4)]
        + [v] * 7
    )
    at = jnp.stack(at, axis=-1)  # (c, E)
    block = jnp.arange(c, dtype=jnp.int32) % n_blocks
    flat = (block[:, None] * (nb + 1) + at) * 15 + jnp.asarray(col, jnp.int32)[None]
    hist = jnp.zeros((n_blocks * (nb + 1) * 15,), jnp.int32)
    hist = hist.at[flat.reshape(-1)].add(jnp.stack(val, axis=-1).reshape(-1))
    hist = hist.reshape(n_blocks, nb + 1, 15)[:, :nb]
    base = jnp.concatenate([m_lo, m_lo, jnp.zeros((c, 7), jnp.int32)], axis=-1)  # (c, 15)
    base = base.reshape(c // n_blocks, n_blocks, 15).sum(axis=0, dtype=jnp.int32)
    s = _running_sum(hist) + base[:, None]  # (G, nB, 15)
    return _columns(s[..., 0:4], s[..., 4:8], s[..., 8], s[..., 9:12], s[..., 12:15])


def _running_sum(x: jax.Array) -> jax.Array:
    """Running sums of integers over axis 1 (exact in any order): an add chain, one add per
    element (``jnp.cumsum`` of the block histogram took 4x as long on CPU at 64 budgets: 0.08 against
    0.02 us per query of a 65,536-query chunk)."""
    n = x.shape[1]
    if n > 256:
        return jax.lax.associative_scan(jnp.add, x, axis=1)
    parts = [x[:, 0]]
    for j in range(1, n):
        parts.append(parts[-1] + x[:, j])
    return jnp.stack(parts, axis=1)


# ---- numpy twin (sim.numpy_kernel's sums): the same 17 integer columns from the frontier's
# step events, bit for bit (tests/sim/test_sim_numpy_kernel.py) ----


# How far, in float32 steps, a closed-form threshold can lie from a budget that
# ``frontier_events``' tolerance still calls near: its relative ``closed_form_tol`` of at most
# ``MAX_RECORDS + MAX_DISTRACTORS`` records is 4 (16 + 256) 2**-24, fewer than 4 * 272 steps of
# the threshold's own binade and twice that across a binade; and a margin.
_NEAR_RECORDS = 16 + 256
_NEAR_STEPS = 16 * _NEAR_RECORDS + 64
_NEAR_SHIFT = 12  # ``near_buckets``: buckets of 2**12 sortable values


def bucket_table(budgets: np.ndarray):
    """Lookup tables for ``positions``: budgets below each bucket of 2**16 sortable values, and the
    budgets inside it (at most ``width`` per bucket), padded; third, ``near_buckets`` (the buckets
    of 2**12 sortable values within ``_NEAR_STEPS`` of a budget: ``frontier_events`` checks the
    tolerance only for thresholds there)."""
    s = _sortable_bits(np.asarray(budgets, np.float32)).astype(np.int64)
    edges = (np.arange(1 << 16, dtype=np.int64) - (1 << 15)) << 16  # each bucket's least value
    lo = np.searchsorted(s, edges, side="left")  # budgets below the bucket
    hi = np.searchsorted(s, edges + (1 << 16), side="left")
    width = int((hi - lo).max())
    inside = []
    for j in range(width):
        k = np.minimum(lo + j, s.size - 1)
        inside.append(np.where(lo + j < hi, s[k], np.iinfo(np.int32).max).astype(np.int32))
    near = np.zeros(1 << (32 - _NEAR_SHIFT), bool)
    half = 1 << (31 - _NEAR_SHIFT)
    for a, b in zip((s - _NEAR_STEPS) >> _NEAR_SHIFT, (s + _NEAR_STEPS) >> _NEAR_SHIFT):
        near[max(0, a + half) : min(near.size, b + half + 1)] = True
    return lo.astype(np.int32), inside, near


def _positions_of_bits(s: np.ndarray, table) -> np.ndarray:
    """``positions`` from the sortable bits ``s`` (int32) of the thresholds, one row at a time (a
    row's bucket indices stay in cache: half the time of the whole array at once)."""
    lo, inside = table[0], table[1]
    rows = s.reshape(-1, s.shape[-1]) if s.ndim else s.reshape(1, 1)
    pos = np.empty(rows.shape, np.int32)
    k = np.empty(rows.shape[1], np.intp)  # ``take`` casts int32 indices on every call: cast once
    for r, out in zip(rows, pos):
        np.right_shift(r, 16, out=k, casting="unsafe")
        k += 1 << 15
        np.take(lo, k, out=out)
        for b in inside:
            out += np.take(b, k) < r
    return pos.reshape(s.shape)


def positions(budgets: np.ndarray, x: np.ndarray, table=None) -> np.ndarray:
    """``#{budgets < x}`` for every element of float32 ``x`` (``searchsorted(budgets, x, "left")``),
    by a lookup on the top 16 bits of the sortable bits and one comparison per budget in the bucket:
    no binary search, whose branches a random ``x`` mispredicts."""
    table = bucket_table(budgets) if table is None else table
    return _positions_of_bits(_sortable_bits(np.asarray(x, np.float32).copy()), table)


# the histogram column of a query's step events: 11 weighted ones over (block, position, 8
# columns): m x 4 at its threshold, m out of G_B (an operator's step when taken before G_B starts,
# x 3, and all of each action's m when G_B starts, x 4); 7 counts over (position, 7 columns): G, H x 3, G and H x 3
_WEIGHTED_COLS = np.asarray([0, 1, 2, 3, 5, 6, 7, 4, 5, 6, 7])[:, None]
_COUNT_COLS = np.arange(7)[:, None]


class Histogram(NamedTuple):
    """Step events of a chunk (or a run), before the running sum over the budgets:
    ``weighted (n_blocks * (nB + 1) * 8,)`` float64 (integer values) of ``m`` and ``m`` out of
    ``G_B`` per block; ``counts ((nB + 1) * 7,)`` int64 of ``G_B``, ``H_B`` and both over all
    queries; ``base (n_blocks, 4)`` int64, the sum of each action's ``m`` below every threshold."""

    weighted: np.ndarray
    counts: np.ndarray
    base: np.ndarray


class Events(NamedTuple):
    """Where each query's steps fall in the sorted budgets (``positions``), ``(., n)`` int32:
    ``m`` of action ``a`` is ``m_absent`` below ``p_w[a]`` and ``m_whole`` from it on (``(4, n)``
    each), ``G_B`` holds from ``p_g`` on, ``H_B`` of operator ``o`` from ``p_h[o]`` on."""

    p_w: np.ndarray
    p_h: np.ndarray
    p_g: np.ndarray
    m_whole: np.ndarray
    m_absent: np.ndarray


def _thresholds(t: NpFrontier) -> np.ndarray:
    """``(7, n)``: ``last_total`` per action, then the start of ``H_B`` per operator."""
    return np.concatenate([t.last_total, np.minimum(t.first_total[:1], t.first_total[1:])])


def events_of_frontier(t: NpFrontier, budgets: np.ndarray, table=None) -> Events:
    """The step positions of an exact frontier (``frontier_columns``)."""
    pos = positions(np.asarray(budgets, np.float32), _thresholds(t), table)
    p_g = np.where(t.grounded_absent, 0, pos[0])
    return Events(pos[:4], pos[4:], p_g, t.m_whole, t.m_absent)


def frontier_events(c: Columns, pr: NpParams, budgets: np.ndarray, table=None) -> Events:
    """``events_of_frontier(frontier_columns(c, pr), ...)``, the same integers, by the closed form.

    The closed form's thresholds (``frontier_closed_form``) may differ from the rank-order sums in
    their last bits, by less than ``closed_form_tol`` of their value. Where the nearest budget on
    either side of every threshold is farther than that, both compare the same way with every
    budget and the positions are the exact ones; the other queries (and the closed form's odd
    ones) are ranked and summed exactly (``frontier_columns`` on those columns). That tolerance is
    checked only for thresholds in ``table``'s near buckets (within ``_NEAR_STEPS`` float steps of
    a budget; every threshold for more than ``_NEAR_RECORDS`` records). Budgets sorted.
    """
    b = np.asarray(budgets, np.float32)
    table = bucket_table(b) if table is None else table
    n_records = c.ev_len.shape[0] + c.dis_len.shape[0]
    t, odd = frontier_closed_form(c, pr)
    x = _thresholds(t)
    s = (x + np.float32(0)).view(np.int32)  # sortable as they are: thresholds are sums, >= 0
    if s.min() < 0:  # pragma: no cover - a negative threshold
        s = _sortable_bits(x.copy())
    pos = _positions_of_bits(s, table)
    # the tolerance, checked where a budget is within _NEAR_STEPS (about 3% of locomo-like queries)
    flagged = np.full(x.shape[1], n_records > _NEAR_RECORDS)
    k = np.empty(x.shape[1], np.intp)
    for r in s if n_records <= _NEAR_RECORDS else ():
        np.right_shift(r, _NEAR_SHIFT, out=k, casting="unsafe")
        k += 1 << (31 - _NEAR_SHIFT)
        flagged |= np.take(table[2], k)
    maybe = np.flatnonzero(flagged)
    xm, pm = x[:, maybe], pos[:, maybe]
    edge = np.concatenate([[-np.inf], b, [np.inf]]).astype(np.float32)
    tol = xm * closed_form_tol(n_records)
    near = (xm - edge[pm] <= tol) | (edge[pm + 1] - xm <= tol)  # the budgets on either side
    odd[maybe[near.any(0)]] = True
    redo = np.flatnonzero(odd)
    m_whole, m_absent, p_g = t.m_whole, t.m_absent, pos[0].copy()
    if redo.size:
        exact = events_of_frontier(
            frontier_columns(Columns(*(a[..., redo] for a in c)), pr), b, table
        )
        pos[:4, redo], pos[4:, redo], p_g[redo] = exact.p_w, exact.p_h, exact.p_g
        m_absent = m_absent.copy()
        m_absent[:, redo] = exact.m_absent
    return Events(pos[:4], pos[4:], p_g, m_whole, m_absent)


def event_histogram(
    t: NpFrontier, budgets: np.ndarray, start: int, n_blocks: int, table=None
) -> Histogram:
    """The step events of ``n`` queries (query ``start + i`` in block ``(start + i) % n_blocks``):
    ``histogram_of_events(events_of_frontier(t, budgets, table), ...)``. ``table``:
    ``bucket_table(budgets)``."""
    e = events_of_frontier(t, budgets, table)
    return histogram_of_events(e, np.asarray(budgets).size, start, n_blocks)


_WORK = threading.local()  # per thread: the index and weight buffers of histogram_of_events


def _workspace(n: int, n_blocks: int, start: int, stride: int):
    """This thread's buffers for ``n`` queries (reused from chunk to chunk: a fresh 3 MB array is
    a page fault per 4 KiB page, which cost more than the arithmetic on a loaded machine) and the
    block offset of each query, ``((start + i) % n_blocks) * stride``."""
    w = getattr(_WORK, "buffers", None)
    if w is None or w[0].shape[1] != n:
        w = (np.empty((11, n), np.intp), np.empty((11, n), np.float64), np.empty((7, n), np.intp))
        _WORK.buffers, _WORK.offsets = w, {}
    key = (n_blocks, start % n_blocks, stride)
    off = _WORK.offsets.get(key)
    if off is None:
        off = (start % n_blocks + np.arange(n, dtype=np.intp)) % n_blocks * stride
        _WORK.offsets = {key: off}
    return (*w, off)


def histogram_of_events(e: Events, n_budgets: int, start: int, n_blocks: int) -> Histogram:
    """The step events of ``n`` queries (query ``start + i`` in block ``(start + i) % n_blocks``).

    Every column is a step function of the budget: ``m`` is ``m_absent`` below ``last_total`` and
    ``m_whole`` from it on, ``G_B`` holds from ``ret``'s threshold on (always when its last unit is
    absent-grounded), ``H_B`` from the least of ``first_total`` of ``ret`` and the operator. Each
    query adds its steps at the thresholds' positions in the sorted budgets (``positions``: budget
    ``i`` is at or above ``w`` exactly when ``i >= #{budgets < w}``), one ``bincount`` of the
    weighted steps per block and one of the counts. Histograms of chunks add up (float64 holds the
    integer bins exactly: each is below 2**53). ``ret``'s step is never taken before ``G_B``
    starts (``p_g`` is 0 or ``ret``'s own position), so 11 weighted events per query, not 12.
    """
    n = e.p_g.shape[0]
    nb = n_budgets
    p_w, p_h, p_g = e.p_w, e.p_h, e.p_g
    at, val, at_c, off = _workspace(n, n_blocks, start, (nb + 1) * 8)
    at_c[0], at_c[1:4] = p_g, p_h
    np.maximum(p_h, p_g, out=at_c[4:7])
    at_c *= 7
    at_c += _COUNT_COLS
    counts = np.bincount(at_c.ravel(), minlength=(nb + 1) * 7)
    step, early, out = val[0:4], val[4:7], val[7:11]
    np.subtract(e.m_whole, e.m_absent, out=step)
    np.multiply(step[1:], p_w[1:] < p_g, out=early)  # the step is taken before G_B starts
    out[0] = e.m_absent[0]
    np.add(e.m_absent[1:], early, out=out[1:])
    np.negative(out, out=out)
    np.multiply(p_w, 8, out=at[0:4])
    np.multiply(p_w[1:], 8, out=at[4:7])
    np.multiply(p_g, 8, out=at[7:11])
    at += _WEIGHTED_COLS
    at += off
    weighted = np.bincount(at.ravel(), val.ravel(), minlength=n_blocks * (nb + 1) * 8)
    m_lo = e.m_absent
    if start % n_blocks == 0 and n % n_blocks == 0:
        base = m_lo.reshape(4, -1, n_blocks).sum(1, dtype=np.int64).T
    else:
        block = off // ((nb + 1) * 8)
        base = np.stack([np.bincount(block, weights=r, minlength=n_blocks) for r in m_lo], 1)
        base = base.astype(np.int64)
    return Histogram(weighted, counts, base)


def sums_of_histogram(hist: Histogram, n_blocks: int, n_budgets: int) -> np.ndarray:
    """The 17 columns ``(n_blocks, nB, 17)`` of ``sim.kernel`` from a histogram: a running sum over
    the budgets. Columns 0-9 (``m`` per action, ``m_o - m_ret``, the same out of ``G_B``) are per
    block; columns 10-16 (the ``G_B`` / ``H_B`` counts, reported as totals only) are the totals, in
    block 0."""
    nb = n_budgets
    w = np.rint(hist.weighted).astype(np.int64).reshape(n_blocks, nb + 1, 8)[:, :nb]
    s = np.cumsum(w, axis=1)
    s += np.concatenate([hist.base, hist.base], axis=1)[:, None]
    m, out = s[..., 0:4], s[..., 4:8]
    counts = np.zeros((n_blocks, nb, 7), np.int64)
    counts[0] = np.cumsum(hist.counts.reshape(nb + 1, 7)[:nb], axis=0)
    return np.concatenate([m, m[..., 1:] - m[..., :1], out[..., 1:] - out[..., :1], counts], -1)


def event_block_sums(
    t: NpFrontier, budgets: np.ndarray, start: int, n_blocks: int, table=None
) -> np.ndarray:
    """``sums_of_histogram(event_histogram(...))``: the chunk's ``(n_blocks, nB, 17)`` sums."""
    hist = event_histogram(t, budgets, start, n_blocks, table)
    return sums_of_histogram(hist, n_blocks, np.asarray(budgets).size)
