"""The simulation kernel in plain numpy: the CPU backend of ``sim.simulate`` for ``prefix`` packing.

The same model as ``sim.kernel`` (MODEL §1-§4): the same draws in distribution (query type,
evidence cluster, distractors, retriever scores, cluster redundancy), the same candidate records
per action, packing in rank order, the reader on the grid ``2**-24`` and the same 17 integer sums
per bootstrap block. Written for a CPU, where it is faster than the XLA kernel (docs/performance.md,
"Issue 25"), and for ``prefix`` packing with a retriever of recall 1 (the default scenario);
``simulate`` runs everything else on the JAX kernel.

Layout: every per-record array is record-major, ``(records, queries)``, so each step is a whole-row
operation on a contiguous row of queries.

- **Draws** (``draw_columns``): numpy's ``Generator`` (SFC64), the redundancy's beta drawn only
  where it is used (more than one record and ``r > 0``).
- **Rank order** (``frontier_columns``): a sorting network (``sim.kernel.sorting_network``) on one
  integer key per record (the score's order-preserving bits, then the slot), one ``maximum`` and
  one ``minimum`` per compare-exchange; ``ret`` and ``rewrite`` share it, and ``merge`` /
  ``abstract`` place their generated record in closed form (after the distractors scored above the
  top evidence score). Running totals are taken in rank order, left to right: bit for bit the
  kernel's.
- **Sums** (``event_block_sums``): every column is a step function of the budget; each query adds
  23 step events at the thresholds' positions in the sorted budgets (``searchsorted``), one
  histogram per chunk (``bincount``) and one running sum over the budgets read every budget.

Randomness: ``simulate`` seeds one ``Generator`` per chunk of ``CHUNK`` queries from the JAX key's
words and the chunk's index (``chunk_rng``), so a run's bytes depend on the key, the number of
queries and the budgets only. The stream is not the JAX kernel's (``sim.kernel`` draws with
Threefry); the two backends agree in distribution (tests/test_sim_numpy_kernel.py).

References: MODEL §2 (packing, reader), §3 (``G_B``, ``H_B``), §4 (coverage / replacement).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sim.kernel import REDUNDANCY_CONCENTRATION, sorting_network, split

GRID = np.float32(2**24)
CHUNK = 32768  # queries per chunk and per seeded Generator (fixed: part of the stream)


class NpParams(NamedTuple):
    """``sim.kernel.Params`` as numpy arrays (vocabulary slots 4, operators 3)."""

    weights: np.ndarray  # (4,) query-mix probabilities
    records: np.ndarray  # (4,) int
    redundancy: np.ndarray  # (4,)
    len_p1: np.ndarray  # (4,)
    len_p2: np.ndarray  # (4,)
    acc_raw: np.ndarray  # (4,)
    acc_guess: np.float32
    compress: np.ndarray  # (3,)
    fidelity: np.ndarray  # (3, 4)
    noise: np.float32


class NpDraw(NamedTuple):
    """Draws for ``n`` queries: ``query_type (n,)``, ``ev_len, ev_mask, ev_score (n, K)``,
    ``dis_len, dis_score (n, D)``, ``redundancy (n,)`` (query-major, the kernel's ``Draw``)."""

    query_type: np.ndarray
    ev_len: np.ndarray
    ev_mask: np.ndarray
    ev_score: np.ndarray
    dis_len: np.ndarray
    dis_score: np.ndarray
    redundancy: np.ndarray


class Columns(NamedTuple):
    """Draws for ``n`` queries, record-major: ``ev_len, ev_score (K, n)`` (padding: length 0, score
    ``-inf``), ``dis_len, dis_score (D, n)``, ``query_type, redundancy (n,)``."""

    query_type: np.ndarray
    ev_len: np.ndarray
    ev_score: np.ndarray
    dis_len: np.ndarray
    dis_score: np.ndarray
    redundancy: np.ndarray


class NpFrontier(NamedTuple):
    """Per action and query ``(4, n)``: the running total at which the last evidence unit is whole
    (``-inf``: none), the least running total from the first evidence unit on (``H_B`` starts
    there), ``m`` when the last unit is whole / absent; ``grounded_absent (n,)``: ``G_B`` holds
    when ``ret``'s last unit is absent (it has no evidence unit of positive length)."""

    last_total: np.ndarray
    first_total: np.ndarray
    m_whole: np.ndarray
    m_absent: np.ndarray
    grounded_absent: np.ndarray


class NpOutcome(NamedTuple):
    """Per query and budget: ``m (n, nB, 4)`` int32, ``raw_grounded (n, nB)``, ``affected (n, nB, 3)``."""

    m: np.ndarray
    raw_grounded: np.ndarray
    affected: np.ndarray


def supports(scenario) -> bool:
    """Whether this kernel runs ``scenario``: ``prefix`` packing and retriever recall 1."""
    return scenario.packing == "prefix" and scenario.retriever.recall >= 1.0


def params_of(scenario):
    """``(structure, NpParams)`` of a scenario, from the kernel's own split (same numbers)."""
    st, pr = split(scenario)
    lw = np.asarray(pr.log_weights, np.float64)
    w = np.exp(lw - lw[np.isfinite(lw)].max())
    f32 = lambda x: np.asarray(x, np.float32)  # noqa: E731
    return st, NpParams(
        w / w.sum(),
        np.asarray(pr.records),
        f32(pr.redundancy),
        f32(pr.len_p1),
        f32(pr.len_p2),
        f32(pr.acc_raw),
        np.float32(pr.acc_guess),
        f32(pr.compress),
        f32(pr.fidelity),
        np.float32(pr.noise),
    )


def chunk_rng(key: jax.Array, chunk_index: int) -> np.random.Generator:
    """The ``Generator`` of one chunk: SFC64 (the fastest of numpy's bit generators for the normal
    draws that dominate) seeded with the key's words and the chunk's index."""
    data = key if not jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else jax.random.key_data(key)
    seed = [int(v) for v in np.asarray(data, np.uint32).ravel()]
    ss = np.random.SeedSequence(seed, spawn_key=(int(chunk_index),))
    return np.random.Generator(np.random.SFC64(ss))


def _lengths(rng: np.random.Generator, families, t: np.ndarray, pr: NpParams, k: int) -> np.ndarray:
    """``(k, n)`` record lengths (``theory.sample_lengths`` in numpy): the type picks the family
    and its parameters; lengths are at least ``1e-30``."""
    n = t.shape[0]
    p1, p2 = pr.len_p1[t], pr.len_p2[t]
    fam = sorted(set(families))
    out = np.empty((k, n), np.float32)
    for f in fam:
        if len(fam) == 1:
            sel, a, b, m = slice(None), p1, p2, n
        else:
            sel = np.flatnonzero(np.asarray([families[i] == f for i in range(4)])[t])
            if not sel.size:
                continue
            a, b, m = p1[sel], p2[sel], sel.size
        if f == "point":
            x = np.broadcast_to(a, (k, m)).astype(np.float32)
        elif f == "uniform":
            x = a * (np.float32(1) - rng.random((k, m), np.float32))
        elif f == "exponential":
            x = a * rng.standard_exponential((k, m), np.float32)
        elif f == "gamma":
            x = b * rng.standard_gamma(np.broadcast_to(a, (k, m))).astype(np.float32)
        elif f == "lognormal":
            x = rng.standard_normal((k, m), np.float32)
            x *= a
            np.exp(x, out=x)
            x *= b
        elif f == "weibull":
            x = b * rng.standard_exponential((k, m), np.float32) ** (np.float32(1) / a)
        else:  # pragma: no cover - the scenario rejects other families
            raise ValueError(f)
        out[:, sel] = x
    np.maximum(out, np.float32(1e-30), out=out)
    return out


def draw_columns(rng: np.random.Generator, n: int, st, pr: NpParams) -> Columns:
    """Draw ``n`` queries as ``sim.kernel.draw_query`` does (same distributions), record-major.

    The cluster's redundancy ``r_c ~ Beta(r c, (1 - r) c)`` is drawn only for the queries whose
    cluster has more than one record and ``r > 0``; the others have ``r_c = 0`` (MODEL §1).
    """
    K, D = st.k_max, st.n_distractors
    f32 = np.float32
    t = rng.choice(4, size=n, p=pr.weights)
    ev = _lengths(rng, st.families, t, pr, K)
    mask = np.arange(K)[:, None] < pr.records[t][None, :]
    ev *= mask
    dis = _lengths(rng, st.families, t, pr, D) if D else np.zeros((0, n), f32)
    noise = rng.standard_normal((K + D, n), f32)
    noise *= pr.noise
    ev_score = noise[:K]
    ev_score += f32(1)
    ev_score[~mask] = -np.inf
    r = pr.redundancy[t]
    used = np.flatnonzero((r > 0) & (pr.records[t] > 1))
    r_c = np.zeros(n, f32)
    if used.size:
        c = REDUNDANCY_CONCENTRATION
        ru = r[used].astype(np.float64)
        r_c[used] = rng.beta(np.maximum(ru * c, 1e-3), np.maximum((1.0 - ru) * c, 1e-3))
    return Columns(t, ev, ev_score, dis, noise[K:], r_c)


def draw_of_columns(c: Columns) -> NpDraw:
    """Record-major ``Columns`` as query-major draws (the per-budget references read these)."""
    return NpDraw(
        c.query_type,
        np.ascontiguousarray(c.ev_len.T),
        np.ascontiguousarray(np.isfinite(c.ev_score).T),
        np.ascontiguousarray(c.ev_score.T),
        np.ascontiguousarray(c.dis_len.T),
        np.ascontiguousarray(c.dis_score.T),
        c.redundancy,
    )


def columns_of(d: NpDraw) -> Columns:
    """Query-major draws (the JAX kernel's ``Draw`` as numpy) as record-major ``Columns``."""
    c = lambda x: np.ascontiguousarray(np.asarray(x, np.float32).T)  # noqa: E731
    return Columns(
        np.asarray(d.query_type),
        c(d.ev_len),
        c(np.where(d.ev_mask, d.ev_score, -np.inf)),
        c(d.dis_len),
        c(d.dis_score),
        np.asarray(d.redundancy, np.float32),
    )


def _rank_keys(scores: np.ndarray) -> tuple[np.ndarray, int]:
    """One int64 key per record whose descending order is the stable rank order: the score's
    order-preserving integer bits (``-0.0`` counts as ``0.0``, as in a float comparison), then the
    slot, earlier slots first among equal scores. Returns ``(keys (N, n), slot bits)``."""
    N = scores.shape[0]
    keys = _sortable_bits(scores).astype(np.int64)
    shift = max(1, (N - 1).bit_length())
    keys <<= shift
    keys |= (np.int64((1 << shift) - 1) - np.arange(N, dtype=np.int64))[:, None]
    return keys, shift


def _sortable_bits(x: np.ndarray) -> np.ndarray:
    """int32 whose order is the float32 order of ``x`` (``-0.0`` and ``0.0`` equal; no NaN)."""
    bits = (x + np.float32(0)).view(np.int32)  # -0.0 + 0.0 == +0.0
    flip = bits >> 31  # -1 on negative floats, 0 elsewhere
    flip &= np.int32(0x7FFFFFFF)
    bits ^= flip
    return bits


def rank_order(scores: np.ndarray) -> np.ndarray:
    """``(N, n)`` slot of the record at each rank (higher score first, equal scores by slot): the
    order of a stable ``argsort(-scores, axis=0)``, by a sorting network over whole rows."""
    keys, shift = _rank_keys(scores)
    rows = list(keys)
    for a, b in sorting_network(len(rows)):
        hi = np.maximum(rows[a], rows[b])
        np.minimum(rows[a], rows[b], out=rows[b])
        rows[a] = hi
    out = np.stack(rows)
    out &= np.int64((1 << shift) - 1)
    np.subtract(np.int64((1 << shift) - 1), out, out=out)
    return out


def _running(x: np.ndarray, op=np.add) -> np.ndarray:
    """Running ``op`` over the rows of ``x`` ``(N, n)``, strictly in row order (row by row: numpy's
    ``accumulate`` along axis 0 walks each column separately, many times slower)."""
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        op(out[i - 1], x[i], out=out[i])
    return out


def bucket_table(budgets: np.ndarray):
    """Lookup tables for ``positions``: budgets below each bucket of 2**16 sortable values, and the
    budgets inside it (at most ``width`` per bucket), padded."""
    s = _sortable_bits(np.asarray(budgets, np.float32)).astype(np.int64)
    edges = (np.arange(1 << 16, dtype=np.int64) - (1 << 15)) << 16  # each bucket's least value
    lo = np.searchsorted(s, edges, side="left")  # budgets below the bucket
    hi = np.searchsorted(s, edges + (1 << 16), side="left")
    width = int((hi - lo).max())
    inside = []
    for j in range(width):
        k = np.minimum(lo + j, s.size - 1)
        inside.append(np.where(lo + j < hi, s[k], np.iinfo(np.int32).max).astype(np.int32))
    return lo.astype(np.int32), inside


def positions(budgets: np.ndarray, x: np.ndarray, table=None) -> np.ndarray:
    """``#{budgets < x}`` for every element of float32 ``x`` (``searchsorted(budgets, x, "left")``),
    by a lookup on the top 16 bits of the sortable bits and one comparison per budget in the bucket:
    no binary search, whose branches a random ``x`` mispredicts."""
    lo, inside = bucket_table(budgets) if table is None else table
    s = _sortable_bits(np.asarray(x, np.float32).copy())
    k = s >> 16
    k += 1 << 15
    pos = lo[k]
    for b in inside:
        pos += b[k] < s
    return pos


def _reader(s: np.ndarray, a_g: np.ndarray, g: np.float64) -> np.ndarray:
    """``m = round(clip(g + (a - g) s, 0, 1) 2**24)`` with the kernel's one fused multiply-add (the
    float64 product of two float32 is exact, then one rounding to float32)."""
    fma = (g + a_g * s.astype(np.float64)).astype(np.float32)
    return np.round(np.clip(fma, np.float32(0), np.float32(1)) * GRID).astype(np.int32)


def frontier_columns(c: Columns, pr: NpParams) -> NpFrontier:
    """The ``prefix`` evidence frontier of every action, bit for bit the kernel's.

    ``ret`` and ``rewrite`` rank the same records by the same scores: one sorting network serves
    both, and their running totals are two running sums in that order. ``merge`` and ``abstract``
    put one generated record at the top evidence score in the first slot, so it ranks after the
    distractors scored strictly above that score and before all others: its running total is the
    ``ret`` running total just before the first evidence unit plus its length, and the least total
    from it on is that total, or the next distractor's when the generated record is empty.
    """
    f32 = np.float32
    K = c.ev_len.shape[0]
    inf = f32(np.inf)
    order = rank_order(np.concatenate([c.ev_score, c.dis_score]))  # (N, n)
    ranked = np.take_along_axis(np.concatenate([c.ev_len, c.dis_len]), order, axis=0)
    is_ev = order < K
    beyond = _running(is_ev, np.logical_or)  # at or after the first evidence unit
    pos = ranked > 0
    tot = _running(ranked)  # rank order, left to right
    ev_ret = is_ev & pos
    lt_ret = np.where(ev_ret, tot, -inf).max(0)  # running totals never decrease
    ft_ret = np.where(beyond & pos, tot, inf).min(0)
    rw = ranked * np.where(is_ev, pr.compress[2], f32(1))
    tot_rw = _running(rw)
    pos_rw = rw > 0
    ev_rw = is_ev & pos_rw
    lt_rw = np.where(ev_rw, tot_rw, -inf).max(0)
    ft_rw = np.where(beyond & pos_rw, tot_rw, inf).min(0)
    # merge / abstract
    total = c.ev_len[0].copy()
    for j in range(1, K):
        total += c.ev_len[j]
    gen = (pr.compress[:2, None] * (f32(1) - c.redundancy)[None]) * total[None]  # (2, n)
    before = np.where(beyond, f32(0), tot).max(0)  # the distractors ranked above the cluster
    g_pos = gen > 0
    lt_gen = np.where(g_pos, before[None] + gen, -inf)
    ft_gen = lt_gen.copy()
    empty = np.flatnonzero(~g_pos.all(0))
    if empty.size:  # an empty generated record: H_B starts at the next distractor
        after = beyond[:, empty] & ~is_ev[:, empty]
        first = np.argmax(after, axis=0)
        d_next = np.where(after.any(0), ranked[first, empty], inf)
        nxt = before[empty] + d_next
        ft_gen[:, empty] = np.where(g_pos[:, empty], lt_gen[:, empty], nxt[None])
    last_total = np.stack([lt_ret, lt_gen[0], lt_gen[1], lt_rw])
    first_total = np.stack([ft_ret, ft_gen[0], ft_gen[1], ft_rw])
    has = np.stack([ev_ret.any(0), g_pos[0], g_pos[1], ev_rw.any(0)])
    # the reader at the two values the support takes: whole (fraction 1) and absent (0); a unit
    # of length 0 is "whole" at fraction 1 under the kernel's kept_fraction (kept >= 0). Both
    # depend on the query type only: one table of 4 actions x 4 types each, read per query.
    m_whole_by_type, m_absent_by_type = reader_tables(pr)
    t = c.query_type
    m_whole = m_whole_by_type[:, t]
    m_absent = np.where(has, m_absent_by_type[:, t], m_whole)
    return NpFrontier(last_total, first_total, m_whole, m_absent, ~has[0])


def reader_tables(pr: NpParams) -> tuple[np.ndarray, np.ndarray]:
    """``m`` per action and type ``(4, 4)`` when the last evidence unit is whole / absent (MODEL
    §2: support 1 under ``ret``, ``phi`` under an operator; 0 when absent), on the grid
    ``2**-24`` with the kernel's one fused multiply-add."""
    f32 = np.float32
    s_whole = np.concatenate([np.ones((1, 4), f32), pr.fidelity])  # (4 actions, 4 types)
    a_g = (pr.acc_raw - pr.acc_guess).astype(np.float64)[None]  # float32 difference
    g = np.float64(pr.acc_guess)
    return _reader(s_whole, a_g, g), _reader(np.zeros_like(s_whole), a_g, g)


def outcome_of_frontier(t: NpFrontier, budgets: np.ndarray) -> NpOutcome:
    """Per-budget outcomes ``(n, nB, ...)`` from the frontier (for checks; ``simulate`` sums events)."""
    b = np.asarray(budgets, np.float32)[None, :, None]
    fits = t.last_total.T[:, None] <= b  # (n, nB, 4)
    m = np.where(fits, t.m_whole.T[:, None], t.m_absent.T[:, None])
    grounded = fits[..., 0] | t.grounded_absent[:, None]
    some = t.first_total.T[:, None] <= b
    return NpOutcome(m, grounded, some[..., :1] | some[..., 1:])


# the histogram column of a query's step events: 12 weighted ones over (block, position, 8
# columns): m x 4 at its threshold, m out of G_B x 4 (its step when taken before G_B starts, and
# all of it when G_B starts); 7 counts over (position, 7 columns): G, H x 3, G and H x 3
_WEIGHTED_COLS = np.asarray([0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7])[:, None]
_COUNT_COLS = np.arange(7)[:, None]


class Histogram(NamedTuple):
    """Step events of a chunk (or a run), before the running sum over the budgets:
    ``weighted (n_blocks * (nB + 1) * 8,)`` float64 (integer values) of ``m`` and ``m`` out of
    ``G_B`` per block; ``counts ((nB + 1) * 7,)`` int64 of ``G_B``, ``H_B`` and both over all
    queries; ``base (n_blocks, 4)`` int64, the sum of each action's ``m`` below every threshold."""

    weighted: np.ndarray
    counts: np.ndarray
    base: np.ndarray


def event_histogram(
    t: NpFrontier, budgets: np.ndarray, start: int, n_blocks: int, table=None
) -> Histogram:
    """The step events of ``n`` queries (query ``start + i`` in block ``(start + i) % n_blocks``).

    Every column is a step function of the budget: ``m`` is ``m_absent`` below ``last_total`` and
    ``m_whole`` from it on, ``G_B`` holds from ``ret``'s threshold on (always when its last unit is
    absent-grounded), ``H_B`` from the least of ``first_total`` of ``ret`` and the operator. Each
    query adds its steps at the thresholds' positions in the sorted budgets (``positions``: budget
    ``i`` is at or above ``w`` exactly when ``i >= #{budgets < w}``), one ``bincount`` of the
    weighted steps per block and one of the counts. Histograms of chunks add up (float64 holds the
    integer bins exactly: each is below 2**53). ``table``: ``bucket_table(budgets)``.
    """
    n = t.last_total.shape[1]
    b = np.asarray(budgets, np.float32)
    nb = b.size
    h = np.minimum(t.first_total[:1], t.first_total[1:])
    pos = positions(b, np.concatenate([t.last_total, h]), table)
    p_w, p_h = pos[:4], pos[4:]
    p_g = np.where(t.grounded_absent, 0, p_w[0])
    at_c = np.empty((7, n), np.int64)
    at_c[0], at_c[1:4], at_c[4:7] = p_g, p_h, np.maximum(p_h, p_g)
    at_c *= 7
    at_c += _COUNT_COLS
    counts = np.bincount(at_c.ravel(), minlength=(nb + 1) * 7)
    m_lo = t.m_absent.astype(np.int64)
    step = t.m_whole.astype(np.int64) - m_lo
    early = step * (p_w < p_g)  # the step is taken before G_B starts
    at = np.empty((12, n), np.int64)
    at[0:4], at[4:8], at[8:12] = p_w, p_w, p_g
    val = np.empty((12, n), np.float64)
    val[0:4], val[4:8], val[8:12] = step, early, -(m_lo + early)
    block = (start + np.arange(n)) % n_blocks
    at *= 8
    at += block * ((nb + 1) * 8)
    at += _WEIGHTED_COLS
    weighted = np.bincount(at.ravel(), val.ravel(), minlength=n_blocks * (nb + 1) * 8)
    if start % n_blocks == 0 and n % n_blocks == 0:
        base = m_lo.reshape(4, -1, n_blocks).sum(1).T
    else:
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


def default_threads() -> int:
    """Threads for ``simulate_block_sums``: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def simulate_block_sums(
    key: jax.Array,
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
        return event_histogram(frontier_columns(cols, pr), b, start, n_blocks, table)

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
