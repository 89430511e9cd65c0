"""The Monte Carlo kernel: one query at a time, batched with ``vmap`` over queries and budgets.

For each query the kernel draws a query type, its evidence cluster (record lengths, the cluster's
redundancy), distractor records and retriever scores; builds the candidate records under each action
(``ret`` keeps the raw records; ``merge`` and ``abstract`` replace the cluster by one record of
length ``rho * (1 - r_c) * len(C)``; ``rewrite`` compresses each record to ``rho * len(m)``); packs
them under every budget; and evaluates the reader of MODEL §2::

    p = clip(g + (a_t - g) * s, 0, 1),   s = prod over evidence units of their support
                                          (raw: kept fraction, 1 when whole; generated: phi * kept
                                          fraction; absent: 0)

A local rewrite spreads the cluster-level fidelity over its records (``phi**(1/k)`` each) so that
the whole rewritten cluster supports the query with ``phi`` (MODEL §1: fidelity is relative to the
raw records). Membership in ``G_B`` (every evidence record packed whole under ``ret``) and in
``H_B`` (the packed context differs between ``ret`` and the operator) is returned with ``p``.

Exactness: ``p`` is kept on the grid ``2**-24`` (``m = round(p * 2**24)``, an int32), so every
per-query difference and every sum over queries is an exact integer. Coverage and replacement
partition the per-query differences by ``G_B``; the sums therefore satisfy ``dU = C + R`` bit for
bit on every draw, and any device count or chunking gives the same totals.

References: MODEL §2 (reader, packing), §3 (``G_B``, ``H_B``), §4 (Proposition 1), §7 (operators).
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from retcon.vocab import OPERATORS
from sim._pack import _pack_one, cumsum_in_order
from sim._scenario import Scenario
from theory import DIST_PARAMS, sample_lengths

GRID_BITS = 24  # success probabilities live on the grid 2**-24
GRID = float(2**GRID_BITS)
REDUNDANCY_CONCENTRATION = 20.0  # r_c ~ Beta(r * 20, (1 - r) * 20): mean r, sd ~ sqrt(r(1-r)/21)
N_OPS = len(OPERATORS)
FAMILIES = tuple(DIST_PARAMS)  # length families and their order: theory's one table


class Structure(NamedTuple):
    """The static (shape-setting) part of a scenario; one compilation per distinct value."""

    families: tuple[str, ...]  # record-length family per vocabulary slot
    k_max: int
    n_distractors: int
    packing: str


class Params(NamedTuple):
    """The numeric part of a scenario as arrays over vocabulary slots (4) and operators (3)."""

    log_weights: jax.Array  # (4,) log query-mix weights; -inf for absent types
    records: jax.Array  # (4,) int32 records per cluster
    redundancy: jax.Array  # (4,) mean cross-record redundancy r
    len_p1: jax.Array  # (4,) first length parameter (length/max/mean/shape/sigma)
    len_p2: jax.Array  # (4,) second length parameter (scale) or 0
    acc_raw: jax.Array  # (4,) a_t
    acc_guess: jax.Array  # () g
    compress: jax.Array  # (3,) rho per operator
    fidelity: jax.Array  # (3, 4) phi per operator and type
    noise: jax.Array  # () retriever noise


class Draw(NamedTuple):
    """One query's random draw (shapes for one query; ``vmap`` adds the query axis)."""

    query_type: jax.Array  # () int32 slot in the vocabulary
    ev_len: jax.Array  # (K,) evidence record lengths, 0 on padding
    ev_mask: jax.Array  # (K,) bool, True on the cluster's records
    ev_score: jax.Array  # (K,) retriever scores, -inf on padding
    dis_len: jax.Array  # (D,) distractor lengths
    dis_score: jax.Array  # (D,) distractor scores
    redundancy: jax.Array  # () the cluster's own redundancy r_c


class QueryOutcome(NamedTuple):
    """Per query and budget: quantized success probability per action and region membership."""

    m: jax.Array  # (nB, 4) int32, p = m / 2**24, ACTIONS order
    raw_grounded: jax.Array  # (nB,) bool, q in G_B
    affected: jax.Array  # (nB, 3) bool, q in H_B per operator


def split(scenario: Scenario) -> tuple[Structure, Params]:
    """Split a scenario into its static structure and its numeric parameters (vocabulary slots)."""
    vocab = scenario.query_types
    by_name = {t.name: t for t in scenario.types}
    fam, w, rec, red, p1, p2, acc, phi = [], [], [], [], [], [], [], []
    for name in vocab:
        t = by_name.get(name)
        if t is None:
            fam.append("point")
            w.append(-np.inf)
            rec.append(1)
            red.append(0.0)
            p1.append(1.0)
            p2.append(0.0)
            acc.append(1.0)
            phi.append((1.0,) * N_OPS)
            continue
        # a listed type keeps its family even at weight 0, so reweighting never recompiles
        fam.append(t.length.dist)
        w.append(math.log(t.weight) if t.weight > 0 else -np.inf)
        rec.append(t.records)
        red.append(t.redundancy)
        a, b = t.length.pair
        p1.append(a)
        p2.append(b)
        acc.append(t.acc_raw)
        phi.append(t.fidelity)
    st = Structure(tuple(fam), scenario.k_max, scenario.retriever.distractors, scenario.packing)
    f32 = partial(jnp.asarray, dtype=jnp.float32)
    pr = Params(
        log_weights=f32(w),
        records=jnp.asarray(rec, jnp.int32),
        redundancy=f32(red),
        len_p1=f32(p1),
        len_p2=f32(p2),
        acc_raw=f32(acc),
        acc_guess=f32(scenario.acc_guess),
        compress=f32([o.compress_ratio for o in scenario.operators]),
        fidelity=f32(np.asarray(phi, dtype=np.float32).T),
        noise=f32(scenario.retriever.noise),
    )
    return st, pr


def _lengths_of_type(key, t, st: Structure, pr: Params, n: int) -> jax.Array:
    """``n`` record lengths of query type ``t``: one draw per distinct family, then select."""
    families = sorted(set(st.families), key=FAMILIES.index)
    if len(families) == 1:
        return sample_lengths(
            jax.random.fold_in(key, FAMILIES.index(families[0])),
            families[0],
            pr.len_p1[t],
            pr.len_p2[t],
            (n,),
        )
    draws = jnp.stack(
        [
            sample_lengths(
                jax.random.fold_in(key, FAMILIES.index(f)), f, pr.len_p1[t], pr.len_p2[t], (n,)
            )
            for f in families
        ]
    )
    fam_of_type = jnp.asarray([families.index(f) for f in st.families], jnp.int32)
    return draws[fam_of_type[t]]


def draw_query(key: jax.Array, st: Structure, pr: Params) -> Draw:
    """Draw one query: type, evidence cluster, distractors, retriever scores (MODEL §1-§2)."""
    k_type, k_len, k_dis, k_ev_noise, k_dis_noise, k_red = jax.random.split(key, 6)
    K, D = st.k_max, st.n_distractors
    t = jax.random.categorical(k_type, pr.log_weights).astype(jnp.int32)
    ev = _lengths_of_type(k_len, t, st, pr, K)
    mask = jnp.arange(K) < pr.records[t]
    ev = jnp.where(mask, ev, 0.0)
    dis = _lengths_of_type(k_dis, t, st, pr, D) if D else jnp.zeros((0,), jnp.float32)
    # oracle order is noise 0: scores exactly 1 (evidence) and 0 (distractors), ties kept in order
    ev_score = 1.0 + pr.noise * jax.random.normal(k_ev_noise, (K,))
    dis_score = pr.noise * jax.random.normal(k_dis_noise, (D,))
    ev_score = jnp.where(mask, ev_score, -jnp.inf)
    r = pr.redundancy[t]
    c = REDUNDANCY_CONCENTRATION
    r_c = jax.random.beta(k_red, jnp.maximum(r * c, 1e-3), jnp.maximum((1.0 - r) * c, 1e-3))
    r_c = jnp.where((r > 0) & (pr.records[t] > 1), r_c, 0.0)
    return Draw(t, ev, mask, ev_score, dis, dis_score.astype(jnp.float32), r_c.astype(jnp.float32))


def sum_in_order(x: jax.Array) -> jax.Array:
    """Sum over the last (small, static) axis strictly left to right: ``((x0 + x1) + x2) + ...``.

    ``jnp.sum`` leaves the order to XLA, which picks it by the shape of the whole batch (on CPU
    it may add the halves, ``(x0 + x2) + x1``, in one batch size and not in another), so a query's
    numbers would depend on how many queries run with it. An unrolled loop fixes the order.
    """
    out = x[..., 0]
    for j in range(1, x.shape[-1]):
        out = out + x[..., j]
    return out


def prod_in_order(x: jax.Array) -> jax.Array:
    """Product over the last (small, static) axis strictly left to right (see ``sum_in_order``)."""
    out = x[..., 0]
    for j in range(1, x.shape[-1]):
        out = out * x[..., j]
    return out


def candidate_records(d: Draw, pr: Params) -> tuple[jax.Array, jax.Array]:
    """Candidate records under each action: lengths and scores, ``(4, K + D)`` each, ACTIONS order.

    Slots ``0..K-1`` hold the cluster's records (raw, generated or padding), slots ``K..`` the
    distractors, identical under every action.
    """
    K = d.ev_len.shape[0]
    total = sum_in_order(d.ev_len)
    gen_len = pr.compress[:2] * (1.0 - d.redundancy) * total  # merge, abstract: cross-note
    gen_score = jnp.max(d.ev_score)  # at its best constituent's rank
    pad_len = jnp.zeros((K - 1,), jnp.float32)
    pad_score = jnp.full((K - 1,), -jnp.inf, jnp.float32)

    def cross_note(i):
        return (
            jnp.concatenate([gen_len[i : i + 1], pad_len, d.dis_len]),
            jnp.concatenate([gen_score[None], pad_score, d.dis_score]),
        )

    raw = (jnp.concatenate([d.ev_len, d.dis_len]), jnp.concatenate([d.ev_score, d.dis_score]))
    merge, abstract = cross_note(0), cross_note(1)
    rewrite = (jnp.concatenate([d.ev_len * pr.compress[2], d.dis_len]), raw[1])  # local: keeps r
    lengths = jnp.stack([raw[0], merge[0], abstract[0], rewrite[0]])
    scores = jnp.stack([raw[1], merge[1], abstract[1], rewrite[1]])
    return lengths, scores


def pack_in_rank_order(
    lengths: jax.Array, scores: jax.Array, budgets: jax.Array, mode: str
) -> jax.Array:
    """Tokens kept per candidate record ``(nB, A, N)``, records packed in score order (stable).

    ``prefix`` and ``cut`` need no sort: a record's rank is the number of records ranked before it
    (higher score, or an equal score in an earlier slot: the stable order), a comparison of the
    ``N`` scores with each other; the running sums of the lengths in rank order are taken once per
    action (strictly left to right, as ``sim.pack`` does), and read back per record by a one-hot
    selection, which is exact. Only the comparison with each budget is done per budget, in the
    records' own order, so no gather runs over the budgets. The result is bit for bit the one of
    sorting, packing the sorted list with ``sim.pack`` and unsorting. ``skip`` carries the budget
    left from record to record, so it sorts, scans and unsorts.

    Args:
      lengths: ``(A, N)`` candidate lengths per action (0 on padding).
      scores: ``(A, N)`` retriever scores (-inf on padding).
      budgets: ``(nB,)`` budgets in tokens.
      mode: packing mode (MODEL §2).

    References:
      MODEL §2 (packing modes).
    """
    if mode == "skip":
        order = jnp.argsort(-scores, axis=-1, stable=True)
        inverse = jnp.argsort(order, axis=-1)
        ranked = jnp.take_along_axis(lengths, order, axis=-1)
        kept = jax.vmap(lambda b: jax.vmap(lambda l: _pack_one(l, b, mode))(ranked))(budgets)
        return jnp.take_along_axis(kept, jnp.broadcast_to(inverse, kept.shape), axis=-1)
    n = lengths.shape[-1]
    slot = jnp.arange(n)
    s_i, s_j = scores[..., :, None], scores[..., None, :]
    # zeros compare equal (as in jnp.argsort), ties go by slot: the stable order
    ahead = (s_j > s_i) | ((s_j == s_i) & (slot[None, :] < slot[:, None]))  # (A, i, j)
    one = jnp.ones((n,), lengths.dtype)
    # full float32 precision: a GPU or TPU would otherwise round the operands of a float32
    # contraction (TF32 / bfloat16 passes), and the one-hot selections below would not be exact
    dot = partial(jnp.einsum, precision=jax.lax.Precision.HIGHEST)
    rank = dot("aij,j->ai", ahead.astype(lengths.dtype), one)  # (A, N) small integers
    at = (rank[..., :, None] == slot.astype(lengths.dtype)).astype(
        lengths.dtype
    )  # (A, i, r) one-hot
    # products with a one-hot matrix have one nonzero term (x * 1), the rest exact zeros: the
    # sums are exact in any order, so these contractions are gathers, bit for bit
    ranked = dot("air,ai->ar", at, lengths)  # (A, r)
    running = cumsum_in_order(ranked)  # (A, r)
    total = dot("air,ar->ai", at, running)  # (A, i)
    fits = total[None] <= budgets[:, None, None]  # (nB, A, N)
    zero = jnp.zeros((), lengths.dtype)
    if mode == "prefix":
        return jnp.where(fits, lengths[None], zero)
    before_r = jnp.concatenate([jnp.zeros_like(running[..., :1]), running[..., :-1]], axis=-1)
    before = dot("air,ar->ai", at, before_r)  # (A, i)
    b = budgets[:, None, None]
    return jnp.where(fits, lengths[None], jnp.clip(b - before[None], 0.0, lengths[None]))


def kept_fraction(kept: jax.Array, lengths: jax.Array) -> jax.Array:
    """Share of each record's tokens in the context: exactly 1 when whole (also for padding), 0
    when absent, ``kept / length`` when cut (XLA may divide through a reciprocal, so whole records
    are set to 1 explicitly)."""
    whole = kept >= lengths
    return jnp.where(whole, 1.0, kept / jnp.where(lengths > 0, lengths, 1.0))


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
    m = quantized_success(s, pr.acc_raw[t], pr.acc_guess)
    grounded = jnp.all(kept[:, 0, :K] == lengths[0, :K], axis=-1)
    cluster_ret = jnp.any(kept[:, 0, :K] > 0, axis=-1)[:, None]
    cluster_op = jnp.any(kept[:, 1:, :K] > 0, axis=-1)
    others = jnp.any(kept[:, 1:, K:] != kept[:, :1, K:], axis=-1)
    return QueryOutcome(m, grounded, cluster_ret | cluster_op | others)


def quantized_success(support: jax.Array, acc_raw, acc_guess) -> jax.Array:
    """``m = round(clip(g + (a - g) * s, 0, 1) * 2**24)`` as int32, the same arithmetic for every
    element: the barrier stops XLA from fusing (and contracting to FMA) the actions differently,
    so equal supports always give equal ``m`` (MODEL §2 reader)."""
    s = jax.lax.optimization_barrier(support)
    p = jnp.clip(acc_guess + (acc_raw - acc_guess) * s, 0.0, 1.0)
    return jnp.round(p * GRID).astype(jnp.int32)


def query_outcome(
    key: jax.Array, budgets: jax.Array, st: Structure, pr: Params
) -> tuple[Draw, QueryOutcome]:
    """Draw one query and evaluate every action at every budget (vmap this over keys)."""
    d = draw_query(key, st, pr)
    lengths, scores = candidate_records(d, pr)
    kept = pack_in_rank_order(lengths, scores, budgets, st.packing)
    return d, reader_outcome(d, lengths, kept, pr)


def query_keys(root: jax.Array, idx: jax.Array) -> jax.Array:
    """One key per query from its global index, so chunking and sharding never shift a draw."""
    return jax.vmap(lambda i: jax.random.fold_in(root, i))(idx)


# Columns of the per-block integer sums.
COLS_U = slice(0, 4)  # sum of m per action
COLS_D = slice(4, 7)  # sum of m_o - m_ret per operator
COLS_C = slice(7, 10)  # the same on queries outside G_B (coverage)
COL_G = 10  # count in G_B
COLS_H = slice(11, 14)  # count in H_B per operator
COLS_GH = slice(14, 17)  # count in G_B and H_B per operator
N_COLS = 17


@partial(jax.jit, static_argnames=("st", "n_blocks"))
def chunk_block_sums(root, idx, valid, budgets, pr: Params, *, st: Structure, n_blocks: int):
    """Exact int32 sums per bootstrap block for one chunk of queries.

    Args:
      root: the run's root key.
      idx: ``(c,)`` global query indices (``c`` a multiple of ``n_blocks``); query ``i`` is in
        block ``i % n_blocks``.
      valid: ``(c,)`` bool; padding rows past the end of the run count for nothing.
      budgets: ``(nB,)`` budgets in tokens.

    Returns:
      ``(sums (n_blocks, nB, 17) int32, counts (n_blocks,) int32)``; columns as ``COLS_*``.
    """
    _, out = jax.vmap(lambda k: query_outcome(k, budgets, st, pr))(query_keys(root, idx))
    # keep XLA from fusing the per-query outcome into the block reduction: fused, the chunk ran
    # 2x slower on CPU (measured, locomo-like, 65,536 queries); the values are the same
    out = jax.lax.optimization_barrier(out)
    v = valid.astype(jnp.int32)
    m = out.m * v[:, None, None]
    d = m[..., 1:] - m[..., :1]
    g = out.raw_grounded.astype(jnp.int32) * v[:, None]
    h = out.affected.astype(jnp.int32) * v[:, None, None]
    cov = jnp.where(out.raw_grounded[..., None], 0, d)
    cols = jnp.concatenate([m, d, cov, g[..., None], h, h * g[..., None]], axis=-1)
    c = idx.shape[0]
    sums = cols.reshape(c // n_blocks, n_blocks, *cols.shape[1:]).sum(axis=0)
    counts = v.reshape(c // n_blocks, n_blocks).sum(axis=0)
    return sums, counts
