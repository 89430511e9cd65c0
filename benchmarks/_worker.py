"""One measurement in a fresh Python, so that its peak resident memory is its own.

``python -m benchmarks._worker TASK 'JSON'`` prints one JSON object as its last stdout line.
Tasks: ``sim_jax`` (``sim.simulate`` end to end, chunked and sharded over the visible JAX
devices), ``sim_numpy`` (``tests._references.sim_numpy.simulate_numpy``) and ``numpy_floor``
(``bench_numpy_floor``, JAX-free). The first two report the best wall
time over ``repeats`` runs after one warm-up run that compiles (JAX) or faults in (numpy) the
chunk shape, the process CPU time per wall second of that run (how many cores it kept busy),
the resident set before and after (high-water mark), and the per-operator ``dU``
with its standard error, so the two can be compared statistically as well.
"""

from __future__ import annotations

import json
import sys
import time


def _budgets(spec, scenario):
    import numpy as np

    if spec.get("n_budgets"):
        return np.geomspace(8.0, 1024.0, int(spec["n_budgets"]))
    return np.asarray(scenario.budgets, dtype=np.float64)


def _summary(sums, counts, n):
    from sim import block_se, exact_mean
    from sim import kernel as K

    total = sums.sum(0)
    return {
        "delta": exact_mean(total[:, K.COLS_D], n).T.tolist(),
        "delta_se": block_se(sums[..., K.COLS_D], counts).T.tolist(),
        "delta_total": int(total[:, K.COLS_D].sum()),
    }


def _kernel_per_budget(key, sc, n, b):
    """The kernel's per-budget path (every record packed again under every budget), chunked like
    ``sim.simulate`` on one device: the simulation kernel as it was before the frontier."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from sim import kernel as K

    st, pr = K.split(sc)
    b32 = jnp.asarray(b, jnp.float32)
    n_blocks = min(1024, 1 << max(0, int(np.ceil(np.log2(max(n, 1))))))
    chunk = n_blocks * max(1, min(65536 // n_blocks, -(-n // n_blocks)))
    sums = counts = None
    for start in range(0, n, chunk):
        idx = np.arange(start, start + chunk)
        s, c = K.chunk_block_sums(
            key,
            jnp.asarray(idx, jnp.int32),
            jnp.asarray(idx < n),
            b32,
            pr,
            st=st,
            n_blocks=n_blocks,
            method="per-budget",
        )
        s, c = np.asarray(jax.block_until_ready(s), np.int64), np.asarray(c, np.int64)
        sums = s if sums is None else sums + s
        counts = c if counts is None else counts + c
    return sums, counts


def _best_of(fn, repeats: int) -> tuple:
    """``fn()`` ``repeats`` times once the peak resident set is reset: the last result, the best
    wall seconds, the CPU seconds of that run and the resident MiB before the first."""
    from benchmarks._timing import reset_rss_peak, rss_now_mib

    reset_rss_peak()
    base = rss_now_mib()
    best, res, cpu = float("inf"), None, 0.0
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        res = fn()
        wall = time.perf_counter() - t0
        if wall < best:
            best, cpu = wall, time.process_time() - c0
    assert res is not None, "repeats must be >= 1"
    return res, best, cpu, base


def sim_jax(spec: dict) -> dict:
    import jax

    from benchmarks._timing import rss_now_mib, rss_peak_mib
    from sim import SimResult, load_scenario, simulate

    sc = load_scenario(spec["scenario"])
    b = _budgets(spec, sc)
    key = jax.random.key(spec["seed"])
    n = int(spec["n"])
    per_budget = spec.get("method") == "per-budget"

    def run(m):
        if per_budget:
            return _kernel_per_budget(key, sc, m, b)
        return simulate(key, sc, m, b, progress=False, backend="jax")

    t0 = time.perf_counter()
    run(min(n, int(spec.get("warm_n", 65536))))  # compile
    compile_s = time.perf_counter() - t0
    res, best, cpu, base = _best_of(lambda: run(n), int(spec.get("repeats", 1)))
    common = {
        "seconds": best,
        "cpu_per_wall": cpu / best,
        "compile_s": compile_s,
        "rss_base_mib": base,
        "rss_peak_mib": rss_peak_mib(),
        "n_budgets": int(b.size),
    }
    if not isinstance(res, SimResult):  # the per-budget kernel's (block sums, counts)
        return {**common, "devices": 1, **_summary(res[0], res[1], n)}
    return {
        **common,
        "rss_end_mib": rss_now_mib(),
        "devices": len(jax.devices()),
        "delta": res.delta.tolist(),
        "delta_se": res.delta_se.tolist(),
        "delta_total": int(res.block_delta.sum()),
    }


def sim_numpy(spec: dict) -> dict:
    import jax

    from benchmarks._timing import rss_now_mib, rss_peak_mib
    from sim import load_scenario
    from sim import numpy_kernel as NK
    from tests._references import sim_numpy as S

    sc = load_scenario(spec["scenario"])
    b = _budgets(spec, sc)
    n = int(spec["n"])
    chunk = int(spec.get("chunk", 8192))
    method = spec.get("method", "frontier")
    if method == "best":
        chunk = int(spec.get("chunk", 65536))

    def simulate_numpy(seed, sc, n, b, *, chunk, method):
        if method == "best":  # the kernel of sim.simulate's numpy backend
            return NK.simulate_block_sums(jax.random.key(seed), sc, n, b, n_blocks=1024)
        return S.simulate_numpy(seed, sc, n, b, chunk=chunk, method=method)

    simulate_numpy(spec["seed"] + 1, sc, min(n, chunk), b, chunk=chunk, method=method)  # warm-up
    out, best, cpu, base = _best_of(
        lambda: simulate_numpy(spec["seed"], sc, n, b, chunk=chunk, method=method),
        int(spec.get("repeats", 1)),
    )
    return {
        "seconds": best,
        "cpu_per_wall": cpu / best,
        "rss_base_mib": base,
        "rss_peak_mib": rss_peak_mib(),
        "rss_end_mib": rss_now_mib(),
        "n_budgets": int(b.size),
        "blas": _blas(),
        **_summary(out[0], out[1], n),
    }


def _blas() -> str:
    """The BLAS numpy runs here and the kernel it picked (threadpoolctl), e.g. ``openblas Haswell``."""
    try:
        from threadpoolctl import threadpool_info

        for lib in threadpool_info():
            if lib.get("user_api") == "blas":
                return f"{lib.get('internal_api')} {lib.get('architecture')} ({lib.get('num_threads')} threads)"
    except Exception:  # report only
        pass
    return "unknown"


def numpy_floor(spec: dict) -> dict:
    """``benchmarks._sim_bench.bench_numpy_floor`` in a process of its own, which never loads
    JAX (``jax_loaded``): nothing the bench's JAX rows left behind (imports, threads, allocator
    state) shares the one-thread timings of the kernel and its floor."""
    from benchmarks._sim_bench import bench_numpy_floor

    row = bench_numpy_floor(
        spec["seed"], spec["n"], scenario=spec["scenario"], rounds=spec["rounds"]
    )
    return {**row, "jax_loaded": "jax" in sys.modules}


TASKS = {"sim_jax": sim_jax, "sim_numpy": sim_numpy, "numpy_floor": numpy_floor}


def main(argv: list[str]) -> int:
    task, spec = argv[0], json.loads(argv[1])
    print(json.dumps(TASKS[task](spec)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
