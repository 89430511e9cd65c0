"""Simulation kernel: ``sim.simulate`` (JAX) against ``tests._references.sim_numpy`` (plain numpy).

First the check: the JAX kernel's own draws for a few thousand queries are fed to the numpy
kernel, and the success probabilities on the ``2**-24`` grid, ``G_B`` and ``H_B`` must agree bit
for bit, as must the per-budget sums ``dU``, ``C`` and ``R``. Then each implementation runs end to
end (its own draws, chunked, reduced to the 17 block sums) in a fresh subprocess per size, which
reports the best wall time and the peak resident memory; the two are alternated size by size so a
load change hits both. Throughput counts query x budget x action evaluations per second.

References: MODEL §2-§4; ``sim/kernel/``, ``sim/_simulate.py``.
"""

from __future__ import annotations

import os

import numpy as np

from benchmarks._timing import alternate, run_worker

# Rows compared. The kernel reduces over a cluster's records strictly left to right
# (sim.kernel.sum_in_order / prod_in_order), whatever the batch size, and so does the numpy kernel.
N_CHECK = 4096


# numpy's BLAS settings that a machine's environment may pin (a core type, a cache size): the
# numpy baselines run without them, so numpy picks its own kernel for this CPU
BLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def check_sim_agreement(seed: int, scenario, n: int = N_CHECK) -> dict:
    """Feed the JAX kernel's draws to both numpy kernels; raise unless the outcomes agree exactly.

    The JAX kernel runs both ways (the evidence frontier and the per-budget packing), and its draws
    go to the numpy frontier formulation and to the numpy per-budget kernel: all four must give
    the same ``m``, ``G_B`` and ``H_B`` for every query, budget and action, and the same per-budget
    ``dU``, ``C``, ``R`` sums.

    Args:
      seed: root key of the draws.
      scenario: a ``sim.Scenario``, a preset name or a TOML path.
      n: queries compared.

    Returns the numbers compared: queries, budgets, mismatching ``m`` / ``G_B`` / ``H_B`` entries
    over the three comparisons (all 0) and whether the sums are equal.
    """
    import jax
    import jax.numpy as jnp

    from sim import kernel as K
    from sim import load_scenario
    from sim import numpy_kernel as NK
    from tests._references import sim_numpy as S

    sc = load_scenario(scenario) if isinstance(scenario, str) else scenario
    st, pr = K.split(sc)
    b = np.asarray(sc.budgets, np.float32)
    key, idx = jax.random.key(seed), jnp.arange(n, dtype=jnp.int32)
    draws, out = K.query_outcomes(key, idx, jnp.asarray(b), pr, st=st, method="frontier")
    _, old = K.query_outcomes(key, idx, jnp.asarray(b), pr, st=st, method="per-budget")
    _, npr = S.params_of(sc)
    d = S.NpDraw(**{f: np.asarray(getattr(draws, f)) for f in S.NpDraw._fields})
    ref = S.NpOutcome(np.asarray(out.m), np.asarray(out.raw_grounded), np.asarray(out.affected))
    others = [
        S.NpOutcome(np.asarray(old.m), np.asarray(old.raw_grounded), np.asarray(old.affected)),
        S.evaluate_frontier(d, b, npr, st.packing),
        S.evaluate(d, b, npr, st.packing),
    ]
    best_sums_equal = True
    if st.packing == "prefix":  # the best numpy's frontier and its event histogram
        t = NK.frontier_columns(NK.columns_of(d), npr)
        others.append(NK.outcome_of_frontier(t, b))
        got, want = NK.event_block_sums(t, b, 0, 64), S.block_sums(ref, np.arange(n), 64)
        best_sums_equal = np.array_equal(got[..., :10], want[..., :10]) and np.array_equal(
            got[..., 10:].sum(0),
            want[..., 10:].sum(0),  # G_B / H_B counts: totals only
        )
    rows = np.arange(n)
    sums_jax = S.block_sums(ref, rows, 1).sum(0)
    row = {
        "queries": n,
        "budgets": int(b.size),
        "scenario": sc.name,
        "compared": "JAX frontier vs JAX per-budget, numpy frontier, numpy per-budget, best numpy",
        "m_mismatch": sum(int(np.sum(o.m != ref.m)) for o in others),
        "raw_grounded_mismatch": sum(
            int(np.sum(o.raw_grounded != ref.raw_grounded)) for o in others
        ),
        "affected_mismatch": sum(int(np.sum(o.affected != ref.affected)) for o in others),
        "sums_equal": best_sums_equal
        and all(np.array_equal(S.block_sums(o, rows, 1).sum(0), sums_jax) for o in others),
    }
    if (
        any(row[f"{k}_mismatch"] for k in ("m", "raw_grounded", "affected"))
        or not row["sums_equal"]
    ):
        raise AssertionError(
            f"simulation kernel: implementations disagree on the same draws: {row}"
        )
    return row


def _evals(n: int, n_budgets: int) -> float:
    return float(n) * n_budgets * 4


def frontier_bytes_per_query(n_slots: int) -> int:
    """Bytes the frontier formulation must move per query, each written once and read once: the
    candidate records (4 actions x ``n_slots`` x length and score, float32) and the frontier table
    (5 float32 thresholds per action, 2 x 4 int32 success values, the fidelities and ``a_t``, 3 + 1
    float32, one flag); the budget reading adds 23 (index, value) int32 steps. Independent of the
    number of budgets."""
    records = 4 * n_slots * 2 * 4
    table = 5 * 4 * 4 + 2 * 4 * 4 + 4 * 4 + 1
    steps = 23 * 2 * 4
    return 2 * (records + table) + steps


def _max_z(a: dict, b: dict) -> float:
    da, db = np.asarray(a["delta"]), np.asarray(b["delta"])
    se = np.hypot(np.asarray(a["delta_se"]), np.asarray(b["delta_se"]))
    ok = se > 0
    return float(np.max(np.abs(da - db)[ok] / se[ok])) if ok.any() else 0.0


def _four(spec: dict, numpy: bool, progress, label: str) -> dict:
    """The five implementations on one spec, each in a fresh process, one after the other."""
    out = {"jax": run_worker("sim_jax", spec)}
    if progress:
        progress(f"{label}: JAX frontier done")
    out["jax_pb"] = run_worker("sim_jax", {**spec, "method": "per-budget"})
    for name, method in (("np_best", "best"), ("np", None), ("np_pb", "per-budget")):
        if numpy:
            sp = spec if method is None else {**spec, "method": method}
            out[name] = run_worker("sim_numpy", sp, unset=BLAS_OVERRIDES)
    return out


def _slots(scenario: str) -> int:
    """Records a query of ``scenario`` draws: its evidence (``k_max``) and distractors."""
    from sim import kernel as K
    from sim import load_scenario

    st, _ = K.split(load_scenario(scenario))
    return st.k_max + st.n_distractors


def _row(n: int, r: dict, limits, slots: int) -> dict:
    j = r["jax"]
    nb = j["n_budgets"]
    row = {
        "queries": int(n),
        "budgets": nb,
        "jax_s": j["seconds"],
        "jax_us_per_query": j["seconds"] / n * 1e6,
        "jax_compile_s": j["compile_s"],
        "jax_pb_s": r["jax_pb"]["seconds"],
        "jax_mevals_per_s": _evals(n, nb) / j["seconds"] / 1e6,
        "jax_cpu_per_wall": j["cpu_per_wall"],
        "jax_rss_peak_mib": j["rss_peak_mib"],
        "jax_rss_growth_mib": j["rss_peak_mib"] - j["rss_base_mib"],
        "bytes_per_query": frontier_bytes_per_query(slots),
        "jax_same_totals_as_per_budget": j["delta_total"] == r["jax_pb"]["delta_total"],
    }
    if limits is not None:
        row["jax_fraction_of_bandwidth"] = (
            frontier_bytes_per_query(slots) * n / j["seconds"] / 1e9 / limits.bandwidth_gbs
        )
    if "np" in r:
        p, q, best = r["np"], r["np_pb"], r["np_best"]
        row.update(
            {
                "numpy_best_s": best["seconds"],
                "numpy_best_cpu_per_wall": best["cpu_per_wall"],
                "speedup_vs_best_numpy": best["seconds"] / j["seconds"],
                "max_abs_z_delta_best": _max_z(j, best),
                "numpy_s": p["seconds"],
                "numpy_pb_s": q["seconds"],
                "numpy_blas": p.get("blas"),
                "numpy_rss_peak_mib": p["rss_peak_mib"],
                "numpy_cpu_per_wall": p["cpu_per_wall"],
                "speedup": p["seconds"] / j["seconds"],
                "speedup_vs_numpy_pb": q["seconds"] / j["seconds"],
                "speedup_vs_jax_pb": r["jax_pb"]["seconds"] / j["seconds"],
                "max_abs_z_delta": _max_z(j, p),
            }
        )
    return row


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
    """Time the simulation end to end at each number of queries in ``sizes`` (one process each).

    Four implementations: ``sim.simulate`` (JAX, evidence frontier), the kernel's per-budget path
    (JAX, the kernel before the frontier), the numpy frontier formulation (the best a numpy user
    would write: ``speedup`` is against it) and the numpy per-budget kernel.

    Args:
      seed: root key / generator seed.
      sizes: numbers of queries.
      scenario: preset or TOML path.
      numpy_max: largest size at which the numpy kernels run (``None``: all).
      repeats: timed runs per subprocess (best kept); sizes of 10^6 and more always run once.
      limits: ``MachineLimits`` for the achieved fraction of memory bandwidth.
      progress: callable taking a message, or ``None``.
    """
    slots = _slots(scenario)
    rows = []
    for n in sizes:
        spec = {
            "scenario": scenario,
            "n": int(n),
            "seed": seed,
            "repeats": repeats if n < 10**6 else 1,
        }
        if progress:
            progress(f"sim: {n} queries")
        numpy = numpy_max is None or n <= numpy_max
        rows.append(_row(n, _four(spec, numpy, progress, f"sim {n}"), limits, slots))
    return rows


def bench_budgets(
    seed: int,
    n: int,
    budget_counts,
    *,
    scenario: str = "locomo-like",
    repeats: int = 1,
    limits=None,
    progress=None,
) -> list[dict]:
    """Cost against the number of budgets at a fixed number of queries (all four implementations);
    ``growth`` is each row's JAX time per query over the first row's."""
    slots = _slots(scenario)
    rows = []
    for nb in budget_counts:
        spec = {
            "scenario": scenario,
            "n": int(n),
            "seed": seed,
            "n_budgets": int(nb),
            "repeats": repeats,
        }
        if progress:
            progress(f"sim: {nb} budgets")
        row = _row(n, _four(spec, True, progress, f"budgets {nb}"), limits, slots)
        row["growth"] = row["jax_s"] / rows[0]["jax_s"] if rows else 1.0
        rows.append(row)
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


def interleaved_sim(
    seed: int, n: int, *, scenario: str = "locomo-like", rounds: int = 5, progress=None
) -> dict:
    """JAX ``sim.simulate`` against the best numpy (``sim.numpy_kernel``, the CPU default: on its
    default threads and on one) and the numpy frontier, in this one process, alternated (A, B, C,
    D, A, ...) ``rounds`` times after one warm-up each: the medians, CPU seconds per wall second,
    the load average, and the ratios. On a shared machine a load change then hits all three alike (the subprocess rows
    of ``bench_sim`` run one after the other)."""
    import statistics

    import jax

    from sim import load_scenario, simulate
    from sim import numpy_kernel as NK
    from tests._references import sim_numpy as S

    sc = load_scenario(scenario)
    b = np.asarray(sc.budgets, np.float64)
    key = jax.random.key(seed)
    n_blocks = min(1024, 1 << max(0, int(np.ceil(np.log2(n)))))
    fns = {
        "jax": lambda: simulate(key, sc, n, b, progress=False, backend="jax"),
        "numpy_best": lambda: simulate(key, sc, n, b, progress=False, backend="numpy"),
        "numpy_best_1thread": lambda: NK.simulate_block_sums(
            key, sc, n, b, n_blocks=n_blocks, threads=1
        ),
        "numpy_frontier": lambda: S.simulate_numpy(seed, sc, n, b),
    }
    say = (lambda r: progress(f"sim interleaved: round {r + 1} of {rounds}")) if progress else None
    times, cpu = alternate(fns, rounds, each_round=say)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "queries": int(n),
        "budgets": int(b.size),
        "rounds": rounds,
        "loadavg": list(os.getloadavg()),
        **{f"{k}_cpu_per_wall": sum(cpu[k]) / sum(times[k]) for k in fns},
        "speedup_vs_best_numpy_1thread": med["numpy_best_1thread"] / med["jax"],
        **{f"{k}_median_s": v for k, v in med.items()},
        **{f"{k}_us_per_query": v / n * 1e6 for k, v in med.items()},
        "speedup_vs_best_numpy": med["numpy_best"] / med["jax"],
        "speedup_vs_numpy_frontier": med["numpy_frontier"] / med["jax"],
        "best_numpy_vs_numpy_frontier": med["numpy_frontier"] / med["numpy_best"],
    }


def _draw_words(st, pr, n: int = 8) -> dict:
    """Threefry words the JAX kernel's draws generate per query, read off the jaxpr of ``n``
    queries (``query_keys`` and ``draw_query``): ``random_bits`` (its size times bits / 32),
    ``random_fold_in`` and ``random_split`` (one Threefry block, 2 words, per key made). Each
    ``random_gamma`` is a rejection loop whose trips depend on the batch; its words are not
    counted (so ``generated`` is a lower bound), its draws are listed."""
    import math

    import jax
    import jax.numpy as jnp

    from sim import kernel as K

    def f(root, idx):
        return jax.vmap(lambda k: K.draw_query(k, st, pr))(K.query_keys(root, idx))

    jp = jax.make_jaxpr(f)(jax.random.key(0), jnp.arange(n, dtype=jnp.int32))
    words = {"bits": 0, "keys": 0}
    gammas = 0

    def walk(j):
        nonlocal gammas
        for e in j.eqns:
            name = e.primitive.name
            size = sum(math.prod(v.aval.shape) for v in e.outvars)
            if name == "random_bits":
                v = e.outvars[0].aval
                words["bits"] += math.prod(v.shape) * max(1, v.dtype.itemsize // 4)
            elif name in ("random_fold_in", "random_split"):
                words["keys"] += 2 * size
            elif name == "random_gamma":
                gammas += size
            for p in e.params.values():
                for s in p if isinstance(p, (list, tuple)) else [p]:
                    inner = getattr(s, "jaxpr", s)
                    if hasattr(inner, "eqns"):
                        walk(inner)

    walk(jp.jaxpr)
    return {
        "bits_words": words["bits"] / n,
        "key_words": words["keys"] / n,
        "gamma_draws": gammas / n,
    }


def words_needed(npr, st) -> float:
    """The uint32 words a query's draws need at least (expected over the query mix): 1 for the type,
    one per record length and per retriever score (the cluster's records and the distractors),
    and 2 per gamma of the redundancy's beta where it is used (one normal and one uniform per
    Marsaglia-Tsang trial, which accepts almost always)."""
    w = np.asarray(npr.weights)
    rec = np.asarray(npr.records, np.float64)
    used = (np.asarray(npr.redundancy) > 0) & (rec > 1)
    return float(1 + 2 * (w @ rec + st.n_distractors) + 4 * (w @ used))


def _alternated_medians(fns: dict, rounds: int) -> dict[str, float]:
    """Each of ``fns`` once (warm-up), then ``rounds`` rounds of all of them in turn: the median
    wall seconds of each (a load change hits every one alike)."""
    import statistics

    return {k: statistics.median(v) for k, v in alternate(fns, rounds)[0].items()}


def bench_words(seed: int, n: int, *, scenario: str = "locomo-like", rounds: int = 3) -> dict:
    """Issue 25 item 2: the JAX kernel's draws against their floor. Words generated per query (a
    lower bound from the jaxpr, ``_draw_words``) against the words needed (``words_needed``), and
    the kernel's time per query against the Threefry floor: ``jax.random.bits`` making exactly the
    needed words for ``n`` queries in one ``jit``, timed alternately with the kernel in this
    process (medians)."""

    import jax
    import jax.numpy as jnp

    from sim import kernel as K
    from sim import load_scenario, simulate
    from sim import numpy_kernel as NK

    sc = load_scenario(scenario)
    st, pr = K.split(sc)
    _, npr = NK.params_of(sc)
    need = words_needed(npr, st)
    got = _draw_words(st, pr)
    generated = got["bits_words"] + got["key_words"]
    per = int(np.ceil(need))
    chunk = 65536
    floor = jax.jit(lambda k: jax.random.bits(k, (chunk, per), jnp.uint32).sum(dtype=jnp.uint32))
    key = jax.random.key(seed)

    def floor_run():
        for i in range(0, n, chunk):
            floor(jax.random.fold_in(key, i)).block_until_ready()

    b = np.asarray(sc.budgets, np.float64)
    fns = {
        "kernel": lambda: simulate(key, sc, n, b, progress=False, backend="jax"),
        "floor": floor_run,
    }
    med = _alternated_medians(fns, rounds)
    return {
        "queries": int(n),
        "words_needed_per_query": need,
        "words_generated_per_query_lower_bound": generated,
        "words_from_random_bits": got["bits_words"],
        "words_from_key_derivation": got["key_words"],
        "gamma_loops_per_query": got["gamma_draws"],
        "generated_over_needed": generated / need,
        "kernel_us_per_query": med["kernel"] / n * 1e6,
        "threefry_floor_us_per_query": med["floor"] / n * 1e6,
        "kernel_over_floor": med["kernel"] / med["floor"],
    }


def bench_numpy_floor(seed: int, n: int, *, scenario: str = "locomo-like", rounds: int = 5) -> dict:
    """Issue 34: the numpy kernel's time per query against its draw floor, on one thread, in
    this process, the stages, the stages they replaced and the floor alternated each round
    (medians).

    The floor is ``rng.standard_normal((2 (K + D), n), float32)`` on the kernel's own generator
    (``chunk_rng``, SFC64): one float32 normal per record slot for its length and one for its
    score, the draws a ``lognormal`` query cannot do without. The stages are the kernel's
    (`sim.numpy_kernel.simulate_block_sums` on one chunk): ``draws`` (``draw_columns``),
    ``frontier`` (``frontier_events``: the closed-form frontier and the budget positions) and
    ``sums`` (``histogram_of_events`` at the scenario's budgets); their shares are the profile.

    The kernel draws fewer normals than that floor holds (``draw_columns`` skips the lengths no
    threshold reads): ``normals_drawn_per_query`` counts them (one per evidence record's length
    and score, one per distractor's score, one per distractor length drawn; ``lognormal``
    lengths), and ``kernel_over_drawn_normals`` is the kernel against the floor scaled to them,
    the stricter ratio.

    The stages this kernel replaced (issue 34) are no longer timed; their figures are in the
    CHANGELOG."""

    from sim import kernel as K
    from sim import load_scenario
    from sim import numpy_kernel as NK

    sc = load_scenario(scenario)
    st, pr = NK.params_of(sc)
    key = K.key_of_seed(seed)
    b = np.asarray(sc.budgets, np.float32)
    table = NK.bucket_table(b)
    n = int(min(n, NK.CHUNK))
    n_blocks = min(1024, n)
    slots = 2 * (st.k_max + st.n_distractors)
    state: dict = {}

    def floor():
        NK.chunk_rng(key, 0).standard_normal((slots, n), np.float32)

    def draws():
        state["cols"] = NK.draw_columns(NK.chunk_rng(key, 0), n, st, pr)

    def frontier():
        state["events"] = NK.frontier_events(state["cols"], pr, b, table)

    def sums():
        NK.histogram_of_events(state["events"], b.size, 0, n_blocks)

    fns = {
        "floor": floor,
        "draws": draws,
        "frontier": frontier,
        "sums": sums,
    }
    med = _alternated_medians(fns, rounds)
    kernel = med["draws"] + med["frontier"] + med["sums"]
    us = lambda k: med[k] / n * 1e6  # noqa: E731
    c = state["cols"]
    drawn = (2 * np.isfinite(c.ev_score).sum() + c.dis_score.size + (c.dis_len > 0).sum()) / n
    return {
        "queries": n,
        "budgets": int(b.size),
        "rounds": rounds,
        "loadavg": list(os.getloadavg()),
        "normals_per_query": slots,
        "kernel_us_per_query": kernel / n * 1e6,
        "normal_floor_us_per_query": us("floor"),
        "kernel_over_floor": kernel / med["floor"],
        "normals_drawn_per_query": float(drawn),
        "kernel_over_drawn_normals": kernel / (med["floor"] * drawn / slots),
        "stage_us_per_query": {k: us(k) for k in ("draws", "frontier", "sums")},
        "stage_share": {k: med[k] / kernel for k in ("draws", "frontier", "sums")},
        "draws_over_floor": med["draws"] / med["floor"],
    }
