"""Where the simulation kernel's time goes: each stage of ``sim.kernel`` timed on its own.

JAX fuses a jitted function, so a per-op profile of the whole kernel is hard to read on CPU; instead
each prefix of the pipeline (draws; + candidate records; + rank sort; + packing and unsort; + the
reader) is jitted and timed on the same chunk, and the differences are the stages' costs. The numpy
kernel's stages are timed directly. The stages are those of the sort-based packing the kernel used
before (``sorted_pack``: a stable sort, packing in rank order, an inverse gather); the kernel's
sort-free ``prefix`` path (ranks from an ``N x N`` comparison per action, exact one-hot
contractions instead of the gathers) is timed alongside and checked bit-equal on the chunk.

References: ``sim/_kernel.py`` (the stages), MODEL §2 (prefix packing).
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


def sort_free_prefix(lengths, scores, budgets):
    """``prefix`` packing without sorting, ``(nB, A, N)`` tokens kept in the records' own order: the
    kernel's own path (``sim.kernel.pack_in_rank_order``; ranks by comparison, running sums in rank
    order through exact one-hot contractions)."""
    from sim import kernel as K

    return K.pack_in_rank_order(lengths, scores, budgets, "prefix")


def sorted_pack(lengths, scores, budgets, mode):
    """The sort-based packing the kernel used before: stable sort by score, ``sim.pack`` on the
    sorted list for every budget, and the inverse gather back to the records' order."""
    import jax.numpy as jnp

    from sim import pack

    order = jnp.argsort(-scores, axis=-1, stable=True)
    inverse = jnp.argsort(order, axis=-1)
    ranked = jnp.take_along_axis(lengths, order, axis=-1)
    kept = pack(ranked[None], jnp.asarray(budgets)[:, None], mode)  # (nB, A, N)
    return jnp.take_along_axis(kept, jnp.broadcast_to(inverse, kept.shape), axis=-1)


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

    def draws_fn(i):
        return jax.vmap(lambda k: K.draw_query(k, st, pr))(K.query_keys(key, i))

    d = jax.jit(draws_fn)(idx)

    def upto(stage):
        def one(x):
            lengths, scores = K.candidate_records(x, pr)
            if stage == "candidates":
                return lengths, scores
            if stage == "sort":
                return jnp.argsort(-scores, axis=-1, stable=True)
            if stage == "sort_free":
                kept = sort_free_prefix(lengths, scores, b)
            else:
                kept = sorted_pack(lengths, scores, b, st.packing)
            if stage == "pack":
                return kept
            return K.reader_outcome(x, lengths, kept, pr)

        return jax.jit(jax.vmap(one))

    t = {"draws": _best(lambda: jax.jit(draws_fn)(idx))}
    for stage in ("candidates", "sort", "pack", "reader"):
        f = upto(stage)
        t[stage] = _best(lambda f=f: f(d))
    jax_stages = {
        "draws": t["draws"],
        "candidate records": t["candidates"],
        "rank sort": t["sort"] - t["candidates"],
        "packing + unsort gathers": t["pack"] - t["sort"],
        "reader, G_B, H_B": t["reader"] - t["pack"],
        "outcome total (from draws)": t["reader"],
    }
    out = {"queries": n, "budgets": int(b.size), "jax": jax_stages}
    if st.packing == "prefix":
        f = upto("sort_free")
        t_sf = _best(lambda: f(d))
        a, c = upto("reader")(d), f(d)
        out["sort_free_outcome_s"] = t_sf
        out["sort_free_speedup"] = t["reader"] / t_sf
        out["sort_free_bit_equal"] = bool(
            all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, c))
        )

    _, npr = S.params_of(sc)
    bn = np.asarray(sc.budgets, np.float32)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    nd = S.draw(rng, n, st, npr)
    t1 = time.perf_counter()
    o = S.evaluate(nd, bn, npr, st.packing)
    t2 = time.perf_counter()
    S.block_sums(o, np.arange(n), 1024)
    t3 = time.perf_counter()
    out["numpy"] = {
        "draws": t1 - t0,
        "evaluate (candidates, sort, pack, reader)": t2 - t1,
        "block sums": t3 - t2,
    }
    return out
