"""Where the simulation kernel's time goes: each stage of ``sim.kernel`` timed on its own.

JAX fuses a jitted function, so a per-op profile of the whole kernel is hard to read on CPU; instead
each prefix of the pipeline (draws; + candidate records; + the evidence frontier and outcome table,
or + the per-budget packing and reader) is jitted and timed on the same chunk, and the differences
are the stages' costs; the whole chunk (to the block sums) is timed both ways. The numpy kernels'
stages are timed directly.

References: ``sim/_kernel.py`` (the stages), MODEL §2 (packing).
"""

from __future__ import annotations

import time

import numpy as np


def _best(fn, repeats=2):
    import jax

    jax.block_until_ready(fn())
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t0)
    return best


def profile_sim(seed: int, scenario_name: str = "locomo-like", n: int = 65536) -> dict:
    """Stage costs (seconds) of the JAX and numpy kernels on one chunk of ``n`` queries."""
    import jax
    import jax.numpy as jnp

    from retcon.bench import _sim_numpy as S
    from sim import kernel as K
    from sim import load_scenario

    sc = load_scenario(scenario_name)
    st, pr = K.split(sc)
    b = jnp.asarray(sc.budgets, jnp.float32)
    key = jax.random.key(seed)
    idx = jnp.arange(n, dtype=jnp.int32)
    valid = jnp.ones((n,), bool)
    n_blocks = 1024

    def draws_fn(i):
        return jax.vmap(lambda k: K.draw_query(k, st, pr))(K.query_keys(key, i))

    d = jax.jit(draws_fn)(idx)

    def upto(stage):
        def one(x):
            lengths, scores = K.candidate_records(x, pr)
            if stage == "candidates":
                return lengths, scores
            if stage == "frontier":
                return K.frontier_table(
                    x, K.evidence_frontier(lengths, scores, st.k_max, st.packing), pr, st.packing
                )
            kept = K.pack_in_rank_order(lengths, scores, b, st.packing)
            return K.reader_outcome(x, lengths, kept, pr)

        return jax.jit(jax.vmap(one))

    t = {"draws": _best(lambda: jax.jit(draws_fn)(idx))}
    for stage in ("candidates", "frontier", "per-budget"):
        f = upto(stage)
        t[stage] = _best(lambda f=f: f(d))
    t["chunk"] = _best(lambda: K.chunk_block_sums(key, idx, valid, b, pr, st=st, n_blocks=n_blocks))
    t["chunk_pb"] = _best(
        lambda: K.chunk_block_sums(
            key, idx, valid, b, pr, st=st, n_blocks=n_blocks, method="per-budget"
        )
    )
    jax_stages = {
        "draws": t["draws"],
        "candidate records": t["candidates"],
        "evidence frontier and outcome table (once per query)": t["frontier"] - t["candidates"],
        "per-budget packing and reader (the per-budget path)": t["per-budget"] - t["candidates"],
        "whole chunk, frontier (draws to block sums)": t["chunk"],
        "budget reading and block sums (chunk minus draws and frontier)": t["chunk"]
        - t["draws"]
        - t["frontier"],
        "whole chunk, per-budget path": t["chunk_pb"],
    }
    out = {"queries": n, "budgets": int(b.size), "jax": jax_stages}

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
