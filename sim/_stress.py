"""Assumption-1 stress test: many queries' clusters in one memory, one retriever, one budget.

A memory holds the evidence clusters of ``memory_size`` queries (drawn from the scenario's query
mix). For query ``q`` its own records rank first as usual (score ``1 + w``, ``w ~ U(0, 1)``); every
other cluster's record is a candidate too, and two knobs say how much it competes:

* ``budget_spillover`` ``x_b`` in [0, 1]: a foreign raw record ranks among ``q``'s evidence (score
  ``1 + w``) with probability ``x_b``, else below it (score ``w``). Consolidating that foreign
  cluster shrinks what it occupies there, so tokens are freed for ``q``'s evidence (MODEL §5 (i)).
* ``rank_spillover`` ``x_r`` >= 0: a generated record is more general than its constituents and
  ranks among other queries' evidence with the larger probability ``min(1, x_b + x_r)``, so it
  can displace their evidence (MODEL §5 (ii)). A merged or abstract record uses the draws of its
  cluster's first record, so with ``x_r = 0`` it competes exactly as often as one raw record did:
  only its length differs, which isolates the budget effect.

Every cluster is consolidated by the operator (the policy "always ``o``") and compared with
"always ``ret``". The Assumption-1 counterfactual changes only ``q``'s own cluster. Per query::

    dU = (p_loc - p_ret) + (p_all - p_loc),  C_loc, R_loc = partition of the first term by G_B,
    S = p_all - p_loc  (the change that reaches q through other clusters; 0 under Assumption 1)

so ``dU = C_loc + R_loc + S`` holds exactly (integer sums on the ``2**-24`` grid). With both knobs
at 0, foreign records never rank above ``q``'s evidence and ``S = 0`` exactly. The scenario's
retriever noise and distractors are replaced by the foreign clusters.

References: MODEL §5 (Assumption 1, budget and rank spillover, ``dU = C_loc + R_loc + S``),
§6 (the Assumption-1 prediction whose crossover is compared).
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from retcon.errors import InputError
from sim import kernel as K
from sim._scenario import Scenario, as_scenario
from sim._simulate import _check_budgets, _check_n, block_se, exact_mean, run_chunks
from theory import grid_crossover, pack_one

MAX_MEMORY_SIZE = 64
STRESS_BLOCKS = 128


class StressResult(NamedTuple):
    """Stress-test aggregates. Axes: ``n_cond`` knob settings, 3 operators, ``nB`` budgets.

    Attributes:
      budgets: ``(nB,)``.
      budget_spillover, rank_spillover: ``(n_cond,)`` the knob values of each condition.
      delta, coverage_loc, replacement_loc, spillover: ``(n_cond, 3, nB)``; ``delta ==
        coverage_loc + replacement_loc + spillover`` exactly. ``*_se``: standard errors (blocks of
        whole memories, since queries in one memory are dependent).
      predicted: ``(n_cond, 3, nB)`` the Assumption-1 prediction ``coverage_loc + replacement_loc``.
      spill_ratio: ``(n_cond, 3, nB)`` ``|S| / |dU|`` (NaN where ``dU = 0``).
      crossover_budget, predicted_crossover: ``(n_cond, 3)`` ``theory.grid_crossover``'s ``B*`` of
        ``dU`` and of the prediction (NaN when none); ``crossover_shift``: their difference.
      n_crossings: ``(n_cond, 3)``; ``sign_reversal``, ``predicted_reversal``: ``(n_cond, 3)`` bool,
        ``dU`` significantly positive (> 2 SE) at some budget and significantly negative at the
        largest budget.
      n_memories, memory_size: run size.
    """

    budgets: np.ndarray
    budget_spillover: np.ndarray
    rank_spillover: np.ndarray
    delta: np.ndarray
    delta_se: np.ndarray
    coverage_loc: np.ndarray
    replacement_loc: np.ndarray
    spillover: np.ndarray
    spillover_se: np.ndarray
    predicted: np.ndarray
    predicted_se: np.ndarray
    spill_ratio: np.ndarray
    crossover_budget: np.ndarray
    predicted_crossover: np.ndarray
    crossover_shift: np.ndarray
    n_crossings: np.ndarray
    sign_reversal: np.ndarray
    predicted_reversal: np.ndarray
    n_memories: int
    memory_size: int


def _memory_outcome(key, knobs, budgets, st: K.KernelStructure, pr: K.Params, M: int):
    """Per query of one memory: ``m`` for ret, local and all contexts, and ``G_B``.

    Returns ``(m_ret (n_cond, M, nB), m_loc (n_cond, M, nB, 3), m_all (n_cond, M, nB, 3),
    grounded (n_cond, M, nB))``.
    """
    k_q, k_flag, k_pos = jax.random.split(key, 3)
    draws = jax.vmap(lambda i: K.draw_query(jax.random.fold_in(k_q, i), st, pr))(jnp.arange(M))
    Kx = st.k_max
    ev_len, mask = draws.ev_len, draws.ev_mask  # (M, K)
    total = K.sum_in_order(ev_len)  # fixed order: batch-independent
    gen = pr.compress[:2][None] * ((1.0 - draws.redundancy) * total)[:, None]  # (M, 2)
    pad = jnp.zeros((M, Kx - 1))
    forms_len = jnp.stack(
        [
            ev_len,
            jnp.concatenate([gen[:, :1], pad], -1),
            jnp.concatenate([gen[:, 1:], pad], -1),
            ev_len * pr.compress[2],
        ],
        axis=1,
    )  # (M, 4 forms, K)
    v = jax.random.uniform(k_flag, (M, M, Kx))  # viewer, cluster, slot
    w = jax.random.uniform(k_pos, (M, M, Kx))
    v = jnp.where(mask[None], v, 2.0)
    w = jnp.where(mask[None], w, -1.0)
    own = jnp.eye(M, dtype=bool)[:, :, None]  # (M, M, 1)
    slot0 = (jnp.arange(Kx) == 0)[None, None]

    def contexts(xb, xr):
        raw_s = jnp.where(own, 1.0, (v < xb).astype(jnp.float32)) + w
        gen_flag = (v[..., :1] < xb + xr).astype(jnp.float32)  # slot 0's draw: one record's odds
        gen_s = jnp.where(own, 1.0 + w.max(-1, keepdims=True), gen_flag + w[..., :1])
        gen_s = jnp.where(slot0, gen_s, -jnp.inf)
        rw_s = jnp.where(own, 1.0, (v < xb + xr).astype(jnp.float32)) + w
        raw_s = jnp.where(mask[None], raw_s, -jnp.inf)
        rw_s = jnp.where(mask[None], rw_s, -jnp.inf)
        forms_s = jnp.stack([raw_s, gen_s, gen_s, rw_s], axis=2)  # (viewer, cluster, form, K)
        # contexts: 0 ret; 1..3 local (own cluster in form o); 4..6 all clusters in form o
        form_ids = [jnp.zeros((M, M), jnp.int32)]
        form_ids += [jnp.where(own[..., 0], o, 0) for o in (1, 2, 3)]
        form_ids += [jnp.full((M, M), o, jnp.int32) for o in (1, 2, 3)]
        fid = jnp.stack(form_ids, axis=1)  # (viewer, ctx, cluster)
        lens = jnp.take_along_axis(forms_len[None, None], fid[..., None, None], axis=3)[..., 0, :]
        viewer = jnp.arange(M)[:, None, None]
        scores = forms_s[viewer, jnp.arange(M)[None, None, :], fid]  # (viewer, ctx, cluster, K)
        return lens, scores

    def evaluate(xb, xr):
        lens, scores = contexts(xb, xr)
        n_ctx = lens.shape[1]
        flat_len = lens.reshape(M, n_ctx, M * Kx)
        flat_s = scores.reshape(M, n_ctx, M * Kx)
        order = jnp.argsort(-flat_s, axis=-1, stable=True)
        ranked = jnp.take_along_axis(flat_len, order, -1)
        kept_r = jax.vmap(
            lambda b: jax.vmap(jax.vmap(lambda l: pack_one(l, b, st.packing)))(ranked)
        )(budgets)
        inv = jnp.argsort(order, -1)
        kept = jnp.take_along_axis(
            kept_r, jnp.broadcast_to(inv, kept_r.shape), -1
        )  # (nB, M, ctx, M*K)
        kept = kept.reshape(kept.shape[:3] + (M, Kx))
        own_kept = jnp.take_along_axis(kept, jnp.arange(M)[None, :, None, None, None], axis=3)[
            :, :, :, 0
        ]
        own_len = jnp.take_along_axis(lens, jnp.arange(M)[:, None, None, None], axis=2)[
            :, :, 0
        ]  # (M, ctx, K)
        frac = K.kept_fraction(own_kept, own_len[None])  # (nB, M, ctx, K)
        t = draws.query_type
        phi = pr.fidelity[:, t].T  # (M, 3)
        s_ret = K.prod_in_order(frac[:, :, 0])

        def op_support(c0):
            return jnp.stack(
                [
                    phi[:, 0] * frac[:, :, c0, 0],
                    phi[:, 1] * frac[:, :, c0 + 1, 0],
                    phi[:, 2] * K.prod_in_order(frac[:, :, c0 + 2]),
                ],
                axis=-1,
            )  # (nB, M, 3)

        support = jnp.concatenate(
            [s_ret[..., None], op_support(1), op_support(4)], axis=-1
        )  # (nB, M, 7)
        m = K.quantized_success(support, pr.acc_raw[t][None, :, None], pr.acc_guess)
        m_ret, m_loc, m_all = m[..., 0], m[..., 1:4], m[..., 4:7]
        grounded = jnp.all(own_kept[:, :, 0] == own_len[None, :, 0], axis=-1)  # (nB, M)
        return (
            jnp.moveaxis(m_ret, 0, 1),
            jnp.moveaxis(m_loc, 0, 1),
            jnp.moveaxis(m_all, 0, 1),
            jnp.moveaxis(grounded, 0, 1),
        )

    return jax.lax.map(lambda kn: evaluate(kn[0], kn[1]), knobs)


@partial(jax.jit, static_argnames=("st", "M", "n_blocks"))
def _stress_chunk(root, idx, valid, knobs, budgets, pr, *, st, M, n_blocks):
    def one(i):
        m_ret, m_loc, m_all, g = _memory_outcome(
            jax.random.fold_in(root, i), knobs, budgets, st, pr, M
        )
        loc = m_loc - m_ret[..., None]
        c_loc = jnp.where(g[..., None], 0, loc)
        r_loc = loc - c_loc
        spill = m_all - m_loc
        d = m_all - m_ret[..., None]
        cols = jnp.stack([d, c_loc, r_loc, spill], axis=-1)  # (n_cond, M, nB, 3, 4)
        return cols.sum(axis=1)  # per memory: (n_cond, nB, 3, 4)

    sums = jax.lax.map(one, idx) * valid.astype(jnp.int32)[:, None, None, None, None]
    c = idx.shape[0]
    return (
        sums.reshape(c // n_blocks, n_blocks, *sums.shape[1:]).sum(0),
        valid.astype(jnp.int32).reshape(c // n_blocks, n_blocks).sum(0),
    )


def _knob_grid(name: str, values) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    upper = 1.0 if name == "budget_spillover" else np.inf
    expected = "in [0, 1]" if name == "budget_spillover" else "finite and >= 0"
    if x.size == 0:
        raise InputError(f"{name} must be at least one value {expected}; got none.")
    if not np.all(np.isfinite(x) & (x >= 0) & (x <= upper)):
        raise InputError(f"{name} values must be {expected}; got {x.tolist()}.")
    return x


def stress_conditions(budget_spillover, rank_spillover) -> np.ndarray:
    """Knob settings ``(n_cond, 2)``: each budget-spillover value with ``x_r = 0``, then each
    rank-spillover value with ``x_b = 0`` (the shared ``(0, 0)`` condition appears once, first)."""
    xb = _knob_grid("budget_spillover", budget_spillover)
    xr = _knob_grid("rank_spillover", rank_spillover)
    conds = [(0.0, 0.0)] + [(b, 0.0) for b in xb if b > 0] + [(0.0, r) for r in xr if r > 0]
    return np.asarray(conds, dtype=np.float64)


def stress(
    key: jax.Array,
    scenario: Scenario | str,
    *,
    n_memories: int = 512,
    memory_size: int = 8,
    budget_spillover=(0.0, 0.05, 0.1, 0.2, 0.4),
    rank_spillover=(0.0, 0.05, 0.1, 0.2, 0.4),
    budgets=None,
    progress: bool | None = None,
) -> StressResult:
    """Sweep the spillover knobs against the budget grid in shared memories.

    Args:
      key: JAX PRNG key; memory ``i`` uses ``fold_in(key, i)`` and every knob setting sees the same
        draws (common random numbers), so differences between settings are the knobs' effect.
      scenario: query mix, operators, reader and packing mode (retriever settings are replaced).
      n_memories: memories simulated; ``memory_size``: queries (clusters) per memory, 1..64.
      budget_spillover, rank_spillover: knob values (see the module docstring).
      budgets: ``(nB,)`` budgets (default the scenario's grid).

    Returns:
      ``StressResult``.

    References:
      MODEL §5 (Assumption 1 and its failures), §6 (prediction under Assumption 1).
    """

    scenario = as_scenario(scenario)
    n = _check_n("n_memories", n_memories)
    if (
        isinstance(memory_size, bool)
        or not isinstance(memory_size, (int, np.integer))
        or not 1 <= memory_size <= MAX_MEMORY_SIZE
    ):
        raise InputError(
            f"memory_size must be an integer in [1, {MAX_MEMORY_SIZE}]; got {memory_size!r}."
        )
    if scenario.retriever.recall < 1.0:
        raise InputError(
            "stress replaces the scenario's retriever by the shared memory, so it has no recall: "
            f"retriever.recall must be 1; got {scenario.retriever.recall:g}."
        )
    b = _check_budgets(budgets, scenario)
    conds = stress_conditions(budget_spillover, rank_spillover)
    st, pr = K.split(scenario)
    st = st._replace(n_distractors=0)
    n_blocks = min(STRESS_BLOCKS, 1 << max(0, math.ceil(math.log2(n))))
    knobs = jnp.asarray(conds, jnp.float32)
    b32 = jnp.asarray(b, jnp.float32)

    def fn(idx, valid):
        return _stress_chunk(
            key, idx, valid, knobs, b32, pr, st=st, M=int(memory_size), n_blocks=n_blocks
        )

    sums, counts, _ = run_chunks(
        fn, n, progress=progress, desc="stress", n_blocks=n_blocks, max_chunk=n_blocks
    )
    Q = n * int(memory_size)
    tot = sums.sum(0)  # (n_cond, nB, 3, 4)
    mean = exact_mean(tot, Q)
    d, c, r, s = (np.moveaxis(mean[..., i], -1, 1) for i in range(4))  # (n_cond, 3, nB)
    r = d - c - s  # exact on the 2**-50 grid
    q_counts = counts * int(memory_size)
    se = block_se(sums, q_counts)  # (n_cond, nB, 3, 4)
    pred_blocks = sums[..., 1] + sums[..., 2]
    pred = c + r
    pred_se = np.moveaxis(block_se(pred_blocks, q_counts), -1, 1)
    d_se, s_se = np.moveaxis(se[..., 0], -1, 1), np.moveaxis(se[..., 3], -1, 1)

    gx = grid_crossover(b, d)
    root, n_cross = gx.crossover_budget, gx.n_sign_changes
    proot = grid_crossover(b, pred).crossover_budget
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(d != 0, np.abs(s) / np.abs(d), np.nan)

    def reversal(x, x_se):
        return np.any(x > 2 * x_se, axis=-1) & (x[..., -1] < -2 * x_se[..., -1])

    return StressResult(
        budgets=b,
        budget_spillover=conds[:, 0],
        rank_spillover=conds[:, 1],
        delta=d,
        delta_se=d_se,
        coverage_loc=c,
        replacement_loc=r,
        spillover=s,
        spillover_se=s_se,
        predicted=pred,
        predicted_se=pred_se,
        spill_ratio=ratio,
        crossover_budget=root,
        predicted_crossover=proot,
        crossover_shift=root - proot,
        n_crossings=n_cross,
        sign_reversal=reversal(d, d_se),
        predicted_reversal=reversal(pred, pred_se),
        n_memories=n,
        memory_size=int(memory_size),
    )


class SpilloverSummary(NamedTuple):
    """How large the spillover term ``S`` is, on scales that stay finite near the crossover.

    ``|S| / |dU|`` per budget explodes where ``dU`` passes through 0 (at ``B*``), so its maximum
    says nothing about Assumption 1. Two summaries that do, each ``(n_cond, 3)``:

    Attributes:
      relative: ``max_B |S| / max_B |dU|``, the spillover against the curve's own scale (NaN where
        ``dU`` is 0 everywhere).
      away: ``max |S| / |dU|`` over the budgets at least ``factor`` away from ``B*`` (``B <= B* /
        factor`` or ``B >= factor B*``; every budget when the curve has no crossover); NaN when no
        budget qualifies.
      factor: the ``factor`` used.
    """

    relative: np.ndarray
    away: np.ndarray
    factor: float


def spillover_summary(result: StressResult, *, factor: float = 2.0) -> SpilloverSummary:
    """``SpilloverSummary`` of a stress result (MODEL §5: ``dU = C_loc + R_loc + S``).

    Args:
      result: ``stress(...)`` output.
      factor: how far from ``B*`` (a ratio > 1) a budget must be to count as away from it.
    """
    if not factor > 1:
        raise InputError(f"spillover_summary: factor must be > 1; got {factor!r}.")
    d = np.abs(np.asarray(result.delta, np.float64))
    s = np.abs(np.asarray(result.spillover, np.float64))
    b = np.asarray(result.budgets, np.float64)
    scale = d.max(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = np.where(scale > 0, s.max(-1) / np.where(scale > 0, scale, 1.0), np.nan)
        ratio = np.where(d > 0, s / np.where(d > 0, d, 1.0), np.nan)
    bstar = np.asarray(result.crossover_budget, np.float64)[..., None]
    far = ~np.isfinite(bstar) | (b <= bstar / factor) | (b >= bstar * factor)
    picked = np.where(far & np.isfinite(ratio), ratio, -np.inf).max(-1)
    away = np.where(np.isfinite(picked), picked, np.nan)
    return SpilloverSummary(relative, away, float(factor))
