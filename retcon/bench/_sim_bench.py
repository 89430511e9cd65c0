"""Simulation kernel: ``sim.simulate`` (JAX) against ``retcon.bench._sim_numpy`` (plain numpy).

First the check: the JAX kernel's own draws for a few thousand queries are fed to the numpy
kernel, and the success probabilities on the ``2**-24`` grid, ``G_B`` and ``H_B`` must agree bit
for bit, as must the per-budget sums ``dU``, ``C`` and ``R``. Then each implementation runs end to
end (its own draws, chunked, reduced to the 17 block sums) in a fresh subprocess per size, which
reports the best wall time and the peak resident memory; the two are alternated size by size so a
load change hits both. Throughput counts query x budget x action evaluations per second.

References: MODEL §2-§4; ``sim/_kernel.py``, ``sim/_simulate.py``.
"""

from __future__ import annotations

import numpy as np

from retcon.bench._timing import run_worker

# Rows compared. The kernel reduces over a cluster's records strictly left to right
# (sim.kernel.sum_in_order / prod_in_order), whatever the batch size, and so does the numpy kernel.
N_CHECK = 4096


def check_agreement(seed: int, scenario, n: int = N_CHECK) -> dict:
    """Feed the JAX kernel's draws to the numpy kernel; raise unless the outcomes agree exactly.

    Args:
      seed: root key of the draws.
      scenario: a ``sim.Scenario``, a preset name or a TOML path.
      n: queries compared.

    Returns the numbers compared: queries, budgets, mismatching ``m`` / ``G_B`` / ``H_B`` entries
    (all 0) and whether the per-budget ``dU = C + R`` sums are equal.
    """
    import jax
    import jax.numpy as jnp

    from retcon.bench import _sim_numpy as S
    from sim import kernel as K
    from sim import load_scenario

    sc = load_scenario(scenario) if isinstance(scenario, str) else scenario
    st, pr = K.split(sc)
    b = np.asarray(sc.budgets, np.float32)
    keys = K.query_keys(jax.random.key(seed), jnp.arange(n, dtype=jnp.int32))
    draws, out = jax.jit(jax.vmap(lambda k: K.query_outcome(k, jnp.asarray(b), st, pr)))(keys)
    _, npr = S.params_of(sc)
    d = S.NpDraw(*(np.asarray(x) for x in draws))
    o = S.evaluate(d, b, npr, st.packing)
    idx = np.arange(n)
    sums_np = S.block_sums(o, idx, 1).sum(0)
    ref = S.NpOutcome(np.asarray(out.m), np.asarray(out.raw_grounded), np.asarray(out.affected))
    sums_jax = S.block_sums(ref, idx, 1).sum(0)
    row = {
        "queries": n,
        "budgets": int(b.size),
        "scenario": sc.name,
        "m_mismatch": int(np.sum(o.m != ref.m)),
        "raw_grounded_mismatch": int(np.sum(o.raw_grounded != ref.raw_grounded)),
        "affected_mismatch": int(np.sum(o.affected != ref.affected)),
        "sums_equal": bool(np.array_equal(sums_np, sums_jax)),
    }
    if (
        row["m_mismatch"]
        or row["raw_grounded_mismatch"]
        or row["affected_mismatch"]
        or not row["sums_equal"]
    ):
        raise AssertionError(f"simulation kernel: numpy and JAX disagree on the same draws: {row}")
    return row


def _evals(n: int, n_budgets: int) -> float:
    return float(n) * n_budgets * 4


def _kernel_bytes(n: int, n_budgets: int, n_slots: int) -> float:
    """Memory-traffic model: one float32 write and one read per (query, budget, action, record slot)."""
    return 8.0 * n * n_budgets * 4 * n_slots


def _max_z(a: dict, b: dict) -> float:
    da, db = np.asarray(a["delta"]), np.asarray(b["delta"])
    se = np.hypot(np.asarray(a["delta_se"]), np.asarray(b["delta_se"]))
    ok = se > 0
    return float(np.max(np.abs(da - db)[ok] / se[ok])) if ok.any() else 0.0


def bench_sim(
    seed: int,
    sizes,
    *,
    scenario: str = "locomo-like",
    numpy_max: int | None = 10**6,
    repeats: int = 1,
    limits=None,
    progress=None,
) -> list[dict]:
    """Time JAX vs numpy end to end at each number of queries in ``sizes`` (one subprocess each).

    Args:
      seed: root key / generator seed.
      sizes: numbers of queries.
      scenario: preset or TOML path.
      numpy_max: largest size at which the numpy kernel runs (``None``: all).
      repeats: timed runs per subprocess (best kept); sizes of 10^6 and more always run once.
      limits: ``MachineLimits`` for the achieved fraction of memory bandwidth.
      progress: callable taking a message, or ``None``.

    Returns:
      one row per size: seconds, throughput (M evaluations/s), peak RSS and its increase over the
      warmed-up process, the speedup, and the largest |z| between the two ``dU`` estimates.
    """
    from sim import kernel as K
    from sim import load_scenario

    st, _ = K.split(load_scenario(scenario))
    slots = st.k_max + st.n_distractors
    rows = []
    for n in sizes:
        r = repeats if n < 10**6 else 1
        spec = {"scenario": scenario, "n": int(n), "seed": seed, "repeats": r}
        if progress:
            progress(f"sim: {n} queries, JAX")
        j = run_worker("sim_jax", spec)
        nb = j["n_budgets"]
        row = {
            "queries": int(n),
            "budgets": nb,
            "jax_s": j["seconds"],
            "jax_compile_s": j["compile_s"],
            "jax_mevals_per_s": _evals(n, nb) / j["seconds"] / 1e6,
            "jax_cpu_per_wall": j["cpu_per_wall"],
            "jax_rss_peak_mib": j["rss_peak_mib"],
            "jax_rss_growth_mib": j["rss_peak_mib"] - j["rss_base_mib"],
        }
        if limits is not None:
            row["jax_fraction_of_bandwidth"] = (
                _kernel_bytes(n, nb, slots) / j["seconds"] / 1e9 / limits.bandwidth_gbs
            )
        if numpy_max is None or n <= numpy_max:
            if progress:
                progress(f"sim: {n} queries, numpy")
            p = run_worker("sim_numpy", spec)
            row.update(
                {
                    "numpy_s": p["seconds"],
                    "numpy_mevals_per_s": _evals(n, nb) / p["seconds"] / 1e6,
                    "numpy_cpu_per_wall": p["cpu_per_wall"],
                    "numpy_rss_peak_mib": p["rss_peak_mib"],
                    "numpy_rss_growth_mib": p["rss_peak_mib"] - p["rss_base_mib"],
                    "speedup": p["seconds"] / j["seconds"],
                    "max_abs_z_delta": _max_z(j, p),
                }
            )
        rows.append(row)
    return rows


def bench_budgets(
    seed: int, n: int, budget_counts, *, scenario: str = "locomo-like", progress=None
) -> list[dict]:
    """Cost against the number of budgets at a fixed number of queries (JAX and numpy)."""
    rows = []
    for nb in budget_counts:
        spec = {"scenario": scenario, "n": int(n), "seed": seed, "n_budgets": int(nb)}
        if progress:
            progress(f"sim: {nb} budgets")
        j = run_worker("sim_jax", spec)
        p = run_worker("sim_numpy", spec)
        rows.append(
            {
                "queries": int(n),
                "budgets": int(nb),
                "jax_s": j["seconds"],
                "numpy_s": p["seconds"],
                "jax_mevals_per_s": _evals(n, nb) / j["seconds"] / 1e6,
                "numpy_mevals_per_s": _evals(n, nb) / p["seconds"] / 1e6,
                "speedup": p["seconds"] / j["seconds"],
            }
        )
    return rows


def bench_scaleout(
    seed: int, n: int, device_counts, *, scenario: str = "locomo-like", progress=None
) -> list[dict]:
    """The sharded simulation on N forced host devices (one subprocess per N, same queries).

    ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` splits the CPU into N XLA devices; the
    kernel shards each chunk over them. Totals must not depend on N (``delta_total`` equal).
    ``cpu_per_wall`` (process CPU seconds per wall second) shows whether the devices ran in parallel.
    """
    rows, first = [], None
    for nd in device_counts:
        if progress:
            progress(f"scale-out: {nd} devices")
        j = run_worker(
            "sim_jax",
            {"scenario": scenario, "n": int(n), "seed": seed},
            env={"XLA_FLAGS": f"--xla_force_host_platform_device_count={int(nd)}"},
        )
        first = j if first is None else first
        rows.append(
            {
                "devices": j["devices"],
                "queries": int(n),
                "jax_s": j["seconds"],
                "mevals_per_s": _evals(n, j["n_budgets"]) / j["seconds"] / 1e6,
                "speedup_vs_first": first["seconds"] / j["seconds"],
                "cpu_per_wall": j["cpu_per_wall"],
                "rss_peak_mib": j["rss_peak_mib"],
                "same_totals": j["delta_total"] == first["delta_total"],
            }
        )
    return rows
