"""The kernel's reader (MODEL §2): support, the quantized success probability ``m``, ``G_B`` and
``H_B`` per budget, from the packed contexts (per-budget path) or the frontier's outcome table;
and one query end to end (``query_outcome``).

Below the JAX functions, their numpy twins: the ``prefix`` frontier of every action
(``frontier_columns``, the twin of ``query_frontier``), the reader's two values per type
(``reader_tables``, the twin of ``frontier_table``) and the per-budget outcomes
(``outcome_of_frontier``, the twin of ``at_budgets``), bit for bit on the same draws. The table in
``sim/kernel/__init__.py`` names the test that pins each pair.

References: MODEL §2 (reader), §3 (regions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sim.kernel._draws import (
    Columns,
    Draw,
    KernelStructure,
    NpParams,
    Params,
    cluster_totals,
    draw_query,
    query_keys,
)
from sim.kernel._jax import jit
from sim.kernel._ranking import (
    Frontier,
    _running,
    candidate_records,
    evidence_frontier,
    pack_in_rank_order,
    prod_in_order,
    rank_order,
)
from theory import reader_success

if TYPE_CHECKING:
    import jax
    import jax.numpy as jnp
else:
    from sim.kernel._jax import jax, jnp

GRID_BITS = 24  # success probabilities live on the grid 2**-24
GRID = float(2**GRID_BITS)


class QueryOutcome(NamedTuple):
    """Per query and budget: quantized success probability per action and region membership."""

    m: jax.Array  # (nB, 4) int32, p = m / 2**24, ACTIONS order
    raw_grounded: jax.Array  # (nB,) bool, q in G_B
    affected: jax.Array  # (nB, 3) bool, q in H_B per operator


class FrontierOutcome(NamedTuple):
    """One query's outcomes as functions of the budget (``frontier_table``; ``at_budgets`` reads
    them at each budget). Shapes for one query.

    Attributes:
      frontier: the evidence frontier per action.
      m_whole, m_absent: ``(4,)`` int32 ``m`` when the last evidence unit is whole / not in the
        context (``prefix``: the only two values); unused under ``cut``.
      grounded_absent: ``()`` ``G_B`` when ``ret``'s last unit is not whole (``prefix``).
      phi: ``(3,)`` the operators' fidelity for the query's type; acc_raw: ``()`` ``a_t``.
      intact: ``()`` bool, the retriever found every evidence record (``Draw.intact``); ``None``
        when recall is 1.
    """

    frontier: Frontier
    m_whole: jax.Array
    m_absent: jax.Array
    grounded_absent: jax.Array
    phi: jax.Array
    acc_raw: jax.Array
    intact: jax.Array | None = None


def _support(kept: jax.Array, length: jax.Array, phi: jax.Array, intact=None) -> jax.Array:
    """``(..., 4)`` supports from the last evidence unit's kept tokens (see ``evidence_frontier``);
    0 under every action when the retriever missed an evidence record (``intact`` False)."""
    frac = kept_fraction(kept, length)
    s = jnp.concatenate([frac[..., :1], phi * frac[..., 1:]], axis=-1)
    return s if intact is None else _found(intact, s)


def _found(intact, x):
    """``x`` where every evidence record was retrieved, else zero (an absent unit, MODEL §2)."""
    return jnp.where(intact, x, jnp.zeros((), x.dtype))


def frontier_table(d: Draw, f: Frontier, pr: Params, mode: str) -> FrontierOutcome:
    """What the per-budget outcomes need, once per query. Under ``prefix`` the last unit is whole
    or absent, so ``m`` takes one of two values per action, computed here by the reader's own
    arithmetic."""
    phi = pr.fidelity[:, d.query_type]
    acc = pr.acc_raw[d.query_type]
    if mode == "prefix":
        kept = jnp.stack([f.last_len, jnp.zeros_like(f.last_len)])  # whole, absent
        length = jnp.broadcast_to(f.last_len, kept.shape)
        m = quantized_success(_support(kept, length, phi, d.intact), acc, pr.acc_guess)
        grounded_absent = kept[1, 0] == length[1, 0]
        if d.intact is not None:
            grounded_absent = grounded_absent & d.intact
        return FrontierOutcome(f, m[0], m[1], grounded_absent, phi, acc, d.intact)
    zero = jnp.zeros((4,), jnp.int32)
    return FrontierOutcome(f, zero, zero, jnp.zeros((), bool), phi, acc, d.intact)


def at_budgets(t: FrontierOutcome, budgets: jax.Array, pr: Params, mode: str) -> QueryOutcome:
    """Per-budget outcomes from the frontier: a few scalar comparisons per budget and action.

    Bit for bit ``reader_outcome`` of ``pack_in_rank_order`` (``prefix`` and ``cut``): every value
    is the same arithmetic on the same operands (the kept tokens of the last evidence unit, its
    kept fraction, ``phi`` times it, the quantized success probability).
    """
    f = t.frontier
    b = budgets[:, None]  # (nB, 1)
    fits = f.last_total[None] <= b  # (nB, 4)
    if mode == "prefix":
        m = jnp.where(fits, t.m_whole[None], t.m_absent[None])
        grounded = fits[:, 0] | t.grounded_absent
        some = f.first_total[None] <= b
    else:
        length = jnp.broadcast_to(f.last_len[None], fits.shape)
        kept = jnp.where(fits, length, jnp.clip(b - f.last_before[None], 0.0, length))
        m = quantized_success(_support(kept, length, t.phi, t.intact), t.acc_raw, pr.acc_guess)
        grounded = kept[:, 0] == length[:, 0]
        some = (f.first_total[None] <= b) | (b > f.first_before[None])
    if t.intact is not None:  # a missed record is outside every context: q is not in G_B
        grounded = grounded & t.intact
    return QueryOutcome(m, grounded, some[:, :1] | some[:, 1:])


def kept_fraction(kept: jax.Array, lengths: jax.Array) -> jax.Array:
    """Share of each record's tokens in the context: exactly 1 when whole (also for padding), 0
    when absent, ``kept * (1 / length)`` when cut. The reciprocal is written out: XLA on CPU
    divides that way anyway, and spelled out every path and platform rounds the same way."""
    whole = kept >= lengths
    return jnp.where(whole, 1.0, kept * (1.0 / jnp.where(lengths > 0, lengths, 1.0)))


def reader_outcome(d: Draw, lengths: jax.Array, kept: jax.Array, pr: Params) -> QueryOutcome:
    """Support, success probability (quantized), ``G_B`` and ``H_B`` from the packed contexts.

    Args:
      d: the query's draw.
      lengths: ``(4, K + D)`` candidate lengths per action.
      kept: ``(nB, 4, K + D)`` tokens kept per budget, action and candidate.
      pr: scenario parameters.
    """
    K = d.ev_len.shape[0]
    t = d.query_type
    frac = kept_fraction(kept, lengths)
    f_ev = frac[..., :K]  # (nB, 4, K)
    phi = pr.fidelity[:, t]  # (3,)
    s = jnp.stack(
        [
            prod_in_order(f_ev[:, 0]),  # ret: raw units
            phi[0] * f_ev[:, 1, 0],  # merge: one generated unit
            phi[1] * f_ev[:, 2, 0],  # abstract: one generated unit
            phi[2] * prod_in_order(f_ev[:, 3]),  # rewrite: k units of phi**(1/k)
        ],
        axis=-1,
    )  # (nB, 4)
    if d.intact is not None:  # a missed evidence record: absent under every action
        s = _found(d.intact, s)
    m = quantized_success(s, pr.acc_raw[t], pr.acc_guess)
    grounded = jnp.all(kept[:, 0, :K] == lengths[0, :K], axis=-1)
    if d.intact is not None:
        grounded = grounded & d.intact
    cluster_ret = jnp.any(kept[:, 0, :K] > 0, axis=-1)[:, None]
    cluster_op = jnp.any(kept[:, 1:, :K] > 0, axis=-1)
    others = jnp.any(kept[:, 1:, K:] != kept[:, :1, K:], axis=-1)
    return QueryOutcome(m, grounded, cluster_ret | cluster_op | others)


def quantized_success(support: jax.Array, acc_raw, acc_guess) -> jax.Array:
    """``m = round(clip(g + (a - g) * s, 0, 1) * 2**24)`` as int32, the same arithmetic for every
    element: the barrier stops XLA from fusing (and contracting to FMA) the actions differently,
    so equal supports always give equal ``m`` (MODEL §2 reader)."""
    s = jax.lax.optimization_barrier(support)
    p = jnp.asarray(reader_success(s, acc_raw, acc_guess))  # theory's §2 reader, one home
    return jnp.round(p * GRID).astype(jnp.int32)


def query_frontier(d: Draw, st: KernelStructure, pr: Params) -> FrontierOutcome:
    """The query's evidence frontier and outcome table (``prefix`` and ``cut`` packing)."""
    lengths, scores = candidate_records(d, pr)
    f = evidence_frontier(lengths, scores, st.k_max, st.packing)
    return frontier_table(d, f, pr, st.packing)  # how query_outcome evaluates the budgets


def query_outcome(
    key: jax.Array, budgets: jax.Array, st: KernelStructure, pr: Params, method: str = "frontier"
) -> tuple[Draw, QueryOutcome]:
    """Draw one query and evaluate every action at every budget (vmap this over keys).

    ``method="frontier"`` computes the query's evidence frontier once and compares the budgets
    with it (``prefix`` and ``cut``; ``skip`` is not nested in the budget, MODEL §6.7, and always
    packs per budget); ``"per-budget"`` packs every record under every budget. Both give the same
    bits.
    """
    d = draw_query(key, st, pr)
    lengths, scores = candidate_records(d, pr)
    if method == "frontier" and st.packing in ("prefix", "cut"):
        return d, at_budgets(query_frontier(d, st, pr), budgets, pr, st.packing)
    kept = pack_in_rank_order(lengths, scores, budgets, st.packing)
    return d, reader_outcome(d, lengths, kept, pr)


@jit(static_argnames=("st", "method"))
def query_outcomes(
    root, idx, budgets, pr: Params, *, st: KernelStructure, method: str = "frontier"
):
    """``(Draw, QueryOutcome)`` of the queries ``idx`` (query axis first), held in memory."""
    return jax.vmap(lambda k: query_outcome(k, budgets, st, pr, method))(query_keys(root, idx))


# ---- numpy twin (sim.numpy_kernel's frontier and reader): bit for bit the JAX kernel's on the
# same draws (tests/retcon/test_benchmarks.py, tests/sim/test_sim_numpy_kernel.py) ----

GRID_F32 = np.float32(2**GRID_BITS)


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


def _reader(s: np.ndarray, a_g: np.ndarray, g: np.float64) -> np.ndarray:
    """``m = round(clip(g + (a - g) s, 0, 1) 2**24)`` with the kernel's one fused multiply-add (the
    float64 product of two float32 is exact, then one rounding to float32)."""
    fma = (g + a_g * s.astype(np.float64)).astype(np.float32)
    return np.round(np.clip(fma, np.float32(0), np.float32(1)) * GRID_F32).astype(np.int32)


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


# Closed form of the ``prefix`` frontier (issue 34): the thresholds as sums over slots, not in
# rank order. A float32 sum of m positive terms in any order lies within (m - 1) 2**-24 (relative,
# to first order) of the real sum, so the closed form and the rank-order sum differ by less than
# ``closed_form_tol(N)`` of the closed form's value: a budget farther than that from a threshold
# compares the same way with both (sim.kernel._sums.frontier_events re-runs the rest exactly).


def closed_form_tol(n_records: int) -> np.float32:
    """Relative distance within which a closed-form threshold may differ from the rank-order one:
    twice the first-order bound ``(N - 1) 2**-24`` of either sum of ``N`` records, doubled again
    for the second-order terms and the rounding of the comparison itself."""
    return np.float32(4 * max(1, n_records) * 2.0**-24)


def frontier_closed_form(c: Columns, pr: NpParams) -> tuple[NpFrontier, np.ndarray]:
    """``frontier_columns`` without the ranking: ``(frontier, odd (n,) bool)``.

    The rank order only decides which distractors come before the cluster's first unit (score
    above the top evidence score: ``before``) and before its last unit (score above the least
    evidence score of a unit of positive length: ``through``); ties rank the distractor after, as
    its slot is later. Then, per action, ``last_total`` is ``through`` plus the cluster's units,
    ``first_total`` is ``before`` plus the first unit (the top-scored one, the earliest slot among
    equal scores), and ``merge`` / ``abstract`` put their generated record at ``before``. The sums
    run over the slots with masked adds, so a threshold may differ from ``frontier_columns``'s in
    its last bits (``closed_form_tol``); the booleans, ``m_whole`` and ``m_absent`` are exact.
    ``odd`` marks the queries outside the closed form (an action without an evidence unit of
    positive length, an empty generated record): their columns are not meaningful.
    """
    f32 = np.float32
    K, D = c.ev_len.shape[0], c.dis_len.shape[0]
    inf = f32(np.inf)
    ev, sc = c.ev_len, c.ev_score
    pos = ev > 0
    top = sc[0].copy()  # the first unit in rank order: highest score, earliest slot
    top_len = ev[0].copy()
    low = np.where(pos, sc, inf).min(0)  # the least score of a unit of positive length
    for j in range(1, K):
        np.copyto(top_len, ev[j], where=sc[j] > top)
        np.maximum(top, sc[j], out=top)
    before = np.zeros_like(top)
    through = np.zeros_like(top)
    above, part = np.empty(top.shape, bool), np.empty_like(top)  # reused: no temporaries
    for j in range(D):
        for acc, score in ((before, top), (through, low)):
            np.greater(c.dis_score[j], score, out=above)
            np.multiply(c.dis_len[j], above, out=part)
            acc += part
    total, total_rw, gen, odd = cluster_totals(ev, c.redundancy, pr.compress)
    rho = pr.compress[2]
    odd |= ~(top_len > 0)
    lt_gen = before[None] + gen
    last_total = np.stack([through + total, lt_gen[0], lt_gen[1], through + total_rw])
    first_total = np.stack([before + top_len, lt_gen[0], lt_gen[1], before + top_len * rho])
    m_whole_by_type, m_absent_by_type = reader_tables(pr)
    t = c.query_type
    grounded_absent = np.zeros(t.shape, bool)
    return (
        NpFrontier(
            last_total,
            first_total,
            np.take(m_whole_by_type, t, axis=1),
            np.take(m_absent_by_type, t, axis=1),
            grounded_absent,
        ),
        odd,
    )
