"""Where the simulation kernel's time goes: each stage of ``sim.kernel`` timed on its own.

The frontier path of ``sim.kernel.chunk_block_sums`` runs as three compiled programs (the draws,
the evidence frontier with its outcome table, the budget reading with the block sums), so each
stage is timed directly on the same chunk, as is the whole chunk on both paths. Wall times (best
of interleaved repeats) at the scenario's budgets, and process CPU time per query at several
numbers of budgets (interleaved, best of the repeats: on a shared machine CPU time is less
disturbed by the other jobs than wall time; XLA runs parts of a program on several threads, so
CPU time can exceed wall time). The numpy kernels' stages are timed directly.

References: ``sim/kernel/`` (the stages), MODEL §2 (packing).
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._timing import alternate


def _best_interleaved(fns: dict, repeats: int) -> tuple[dict, dict]:
    """Best wall and best process CPU seconds of each callable, timed alternately (after a
    warm-up call each that compiles)."""
    wall, cpu = alternate(fns, repeats)
    wall, cpu = ({k: min(v, default=float("inf")) for k, v in t.items()} for t in (wall, cpu))
    return wall, cpu


STAGES = (
    ("draws", "draws (chunk_draws: keys, query type, lengths, scores, redundancy)"),
    (
        "frontier",
        "evidence frontier and outcome table (chunk_frontiers: candidates, sorting network)",
    ),
    ("budgets", "budget reading and block sums (searchsorted, scatter-add, running sum)"),
    ("chunk", "whole chunk, frontier (draws to block sums)"),
    ("chunk_pb", "whole chunk, per-budget path"),
)


def profile_sim(
    seed: int,
    scenario_name: str = "locomo-like",
    n: int = 65536,
    budget_counts=(1, 8, 29, 64),
    repeats: int = 3,
) -> dict:
    """Stage costs of the JAX and numpy kernels on one chunk of ``n`` queries.

    Returns ``{"queries", "budgets", "jax": {stage: wall s}, "jax_cpu_us": [{"budgets": nB,
    stage: CPU us per query, ...}], "numpy": {stage: s}}``; ``jax_cpu_us`` has one row per entry
    of ``budget_counts`` (budgets ``geomspace(8, 1024, nB)``, as ``retcon bench``'s budget sweep).
    """
    import jax
    import jax.numpy as jnp

    from sim import kernel as K
    from sim import load_scenario
    from tests._references import sim_numpy as S

    sc = load_scenario(scenario_name)
    st, pr = K.split(sc)
    key = jax.random.key(seed)
    idx = jnp.arange(n, dtype=jnp.int32)
    valid = jnp.ones((n,), bool)
    n_blocks = min(1024, n)
    d = K.chunk_draws(key, idx, pr, st=st)
    t = K.chunk_frontiers(d, pr, st=st)

    def stage_fns(b):
        return {
            "draws": lambda: K.chunk_draws(key, idx, pr, st=st),
            "frontier": lambda: K.chunk_frontiers(d, pr, st=st),
            "budgets": lambda: K.frontier_block_sums(
                t, valid, b, pr, n_blocks=n_blocks, packing=st.packing
            ),
            "chunk": lambda: K.chunk_block_sums(key, idx, valid, b, pr, st=st, n_blocks=n_blocks),
            "chunk_pb": lambda: K.chunk_block_sums(
                key, idx, valid, b, pr, st=st, n_blocks=n_blocks, method="per-budget"
            ),
        }

    names = dict(STAGES)
    b = jnp.asarray(sc.budgets, jnp.float32)
    if st.packing == "skip":  # no frontier: only the per-budget path runs
        wall, _ = _best_interleaved({"chunk_pb": stage_fns(b)["chunk_pb"]}, repeats)
        out = {"queries": n, "budgets": int(b.size), "jax": {names["chunk_pb"]: wall["chunk_pb"]}}
        out["jax_cpu_us"] = []
    else:
        wall, _ = _best_interleaved(stage_fns(b), repeats)
        jax_stages = {names[k]: v for k, v in wall.items()}
        out = {"queries": n, "budgets": int(b.size), "jax": jax_stages, "jax_cpu_us": []}
        for nb in budget_counts:
            bn = jnp.asarray(np.geomspace(8.0, 1024.0, int(nb)), jnp.float32)
            _, cpu = _best_interleaved(stage_fns(bn), repeats)
            row = {"budgets_stage" if k == "budgets" else k: v / n * 1e6 for k, v in cpu.items()}
            out["jax_cpu_us"].append({"budgets": int(nb), **row})

    _, npr = S.params_of(sc)
    bn = np.asarray(sc.budgets, np.float32)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    nd = S.draw(rng, n, st, npr)
    t1 = time.perf_counter()
    o = S.evaluate_frontier(nd, bn, npr, st.packing)
    t2 = time.perf_counter()
    S.block_sums(o, np.arange(n), 1024)
    t3 = time.perf_counter()
    S.evaluate(nd, bn, npr, st.packing)
    t4 = time.perf_counter()
    out["numpy"] = {
        "draws": t1 - t0,
        "evaluate, frontier (candidates, sort, frontier, budget reading)": t2 - t1,
        "block sums": t3 - t2,
        "evaluate, per-budget (candidates, sort, pack per budget, reader)": t4 - t3,
    }
    return out
