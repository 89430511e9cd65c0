"""The timeline kernel (``sim.simulate_timeline``) against numpy running the same computation.

``timeline_numpy`` is what an expert writes in numpy for MODEL §10's stream: vectorised over
queries, a loop over sessions only where the policy is a recursion in time (``overflow``), and the
same linear formulation as the JAX kernel (level counts per time, running totals of the session
lengths, the evidence's ``before`` read off them). It takes the JAX kernel's own draws (session
lengths, query type, units that must fit), so the two are checked to agree before they are timed (the largest difference in ``2**-24`` grid
steps is reported: XLA's and numpy's float32 ``pow`` may differ in the last bit).
Rows: ``retain-all``, then ``overflow`` and ``periodic`` per operator, ``prefix`` packing (the
kernel also computes its utility against ``k`` at the last session, ``O(1)`` in ``T``); sizes:
session counts ``T`` at a fixed number of queries, so the seconds per query show the growth in
``T`` of both, side by side in one run. One known weakness of the baseline: numpy has no batched
``searchsorted``, so the overflow step finds its cut by a vectorised comparison over the ``T + 1``
running totals (``O(T)`` a step where the kernel's binary search is ``O(log T)``).

References: MODEL §10 (stream, policies), §2 (packing, reader); docs/timeline.md.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from benchmarks._timing import alternate

GRID = 2**24
POLICIES = ("retain-all", "overflow", "periodic")


def _levels_overflow(P, rho, cap, K):
    """``(Q, T, K)`` overflow level counts; numpy, a loop over sessions, queries vectorised."""
    Q, T1 = P.shape
    T = T1 - 1
    powers = rho ** np.arange(K + 1, dtype=np.float32)
    rows = np.arange(Q)
    c = np.zeros((Q, K), np.int64)
    out = np.empty((Q, T, K), np.int64)
    for t in range(T):
        n = t + 1
        for _ in range(K + 1):  # at most one level closes per pass of this loop
            edges = np.concatenate([np.full((Q, 1), n), c, np.zeros((Q, 1), np.int64)], 1)
            size = (
                powers * (P[rows[:, None], edges[:, :-1]] - P[rows[:, None], edges[:, 1:]])
            ).sum(1)
            low = (c >= n).sum(1)
            act = (size > cap) & (low < K)
            if not act.any():
                break
            lo = np.minimum(low, K - 1)
            start = c[rows, lo]
            thr = P[rows, start] + (size - cap) / (powers[lo] * (1.0 - rho))
            end = np.minimum((thr[:, None] > P).sum(1), n)  # searchsorted left, per row
            c[rows[act], lo[act]] = end[act]
        out[:, t] = c
    return out


def _evidence(P, lengths, levels, n_units, rho, phi, acc_raw, acc_guess, budgets):
    """``(Q, nB, T)`` quantized successes under ``prefix`` packing from level counts."""
    Q, T = lengths.shape
    t = np.arange(T)
    s_e = t[None, :] - (n_units - 1)  # (Q, T)
    n_lev = levels.shape[-1]
    powers = rho ** np.arange(n_lev + 1, dtype=np.float32)
    edges = np.concatenate(
        [np.broadcast_to((t + 1)[None, :, None], (Q, T, 1)), levels, np.zeros((Q, T, 1), np.int64)],
        -1,
    )
    e = np.clip(edges, (s_e + 1)[..., None], (t + 1)[None, :, None])
    q = np.arange(Q)[:, None, None]
    before = (powers * (P[q, e[..., :-1]] - P[q, e[..., 1:]])).sum(-1)  # (Q, T)
    gen_e = (s_e[..., None] < levels).sum(-1)
    len_e = np.take_along_axis(lengths, s_e, 1) * rho ** gen_e.astype(np.float32)
    fits = (before + len_e)[:, None, :] <= budgets[None, :, None]
    support = np.where(fits, phi[:, None, None] ** gen_e[:, None, :], 0.0)
    p = np.clip(acc_guess + (acc_raw[:, None, None] - acc_guess) * support, 0.0, 1.0)
    return np.round(p * GRID).astype(np.int64)


def timeline_numpy(
    lengths, qtype, n_units, budgets, *, rho, fidelity, acc_raw, acc_guess, cap, K, period, window
):
    """``(Q, 1 + 2 n_ops, nB, T)`` quantized successes (float32 arithmetic, as the kernel).

    Rows as the kernel's: ``retain-all``, then per operator ``overflow`` and ``periodic``.

    Args:
      lengths: ``(Q, T)`` session lengths; qtype, n_units: ``(Q,)``, ``(Q, T)``: the kernel's draws.
      rho: ``(n_ops,)`` compression; fidelity: ``(n_ops, n_types)``.
    """
    lengths = np.asarray(lengths, np.float32)
    Q, T = lengths.shape
    P = np.concatenate([np.zeros((Q, 1), np.float32), np.cumsum(lengths, 1, dtype=np.float32)], 1)
    a = np.asarray(acc_raw, np.float32)[qtype]
    g = np.float32(acc_guess)
    b = np.asarray(budgets, np.float32)
    ts = np.arange(1, T + 1)
    per = np.broadcast_to(
        np.clip(period * (ts // period) - window, 0, ts)[None, :, None], (Q, T, 1)
    )
    one = np.float32(1.0)
    out = [
        _evidence(
            P, lengths, np.zeros((Q, T, 0), np.int64), n_units, one, np.ones(Q, np.float32), a, g, b
        )
    ]
    for op in range(len(rho)):
        r = np.float32(rho[op])
        phi = np.asarray(fidelity[op], np.float32)[qtype]
        over = _levels_overflow(P, r, np.float32(cap), K)
        out.append(_evidence(P, lengths, over, n_units, r, phi, a, g, b))
        out.append(_evidence(P, lengths, per, n_units, r, phi, a, g, b))
    return np.stack(out, 1)


def _setup(ss, queries: int, seed: int):
    import jax.numpy as jnp

    from sim import draw_stream, query_timeline, stream_params

    sc = dataclasses.replace(ss.scenario, packing="prefix")
    ss = dataclasses.replace(ss, scenario=sc)
    st, pr = stream_params(ss, POLICIES)
    keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.key(seed), i))(jnp.arange(queries))
    budgets = jnp.asarray(sc.budgets, jnp.float32)
    draws = jax.jit(jax.vmap(lambda k: draw_stream(k, st, pr)))(keys)
    kernel = jax.jit(jax.vmap(lambda k: query_timeline(k, budgets, st, pr)[0]))
    s = ss.stream
    kw = dict(
        rho=np.asarray(pr.compress),
        fidelity=np.asarray(pr.fidelity),
        acc_raw=np.asarray(pr.acc_raw),
        acc_guess=float(pr.acc_guess),
        cap=float(s.cap),
        K=s.max_generation,
        period=s.period,
        window=s.window,
    )
    lengths, qtype, n_units = (np.asarray(x) for x in draws)

    def run_numpy():
        return timeline_numpy(lengths, qtype, n_units, np.asarray(budgets), **kw)

    def run_jax():
        return np.asarray(kernel(keys))

    return run_jax, run_numpy


def bench_timeline(
    seed: int,
    sessions=(20, 40, 80),
    *,
    queries: int = 256,
    scenario: str = "locomo-stream",
    repeats: int = 2,
) -> list[dict]:
    """One row per session count: seconds per query of the JAX kernel and of numpy, their ratio,
    and the check that both give the same success probabilities (max difference, grid steps)."""
    import sim

    ss0 = sim.load_stream(scenario)
    rows = []
    for T in sessions:
        ss = dataclasses.replace(ss0, stream=dataclasses.replace(ss0.stream, sessions=int(T)))
        run_jax, run_numpy = _setup(ss, queries, seed)
        diff = int(np.abs(run_jax().astype(np.int64) - run_numpy()).max())  # compiles too
        wall, _ = alternate({"jax": run_jax, "numpy": run_numpy}, max(repeats, 1), warmup=False)
        best = {k: min(v) for k, v in wall.items()}
        rows.append(
            {
                "sessions": int(T),
                "queries": queries,
                "jax_s_per_query": best["jax"] / queries,
                "numpy_s_per_query": best["numpy"] / queries,
                "numpy_over_jax": best["numpy"] / best["jax"],
                "max_diff_grid_steps": diff,
            }
        )
    return rows
