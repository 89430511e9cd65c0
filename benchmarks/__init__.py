"""Benchmarks of issue 7: the JAX code against what a user would write instead, on this machine.

``run_bench(seed, BenchConfig(...))`` runs them all (``retcon bench`` from the shell); each piece
is callable on its own: ``bench_sim`` (``sim.simulate`` vs the numpy kernel ``simulate_numpy``,
checked bit-equal on shared draws by ``check_sim_agreement``), ``bench_budgets``,
``bench_scaleout`` (forced host devices), ``profile_sim``, ``bench_oas`` (``oas.fit_ridge`` vs
scikit-learn, checked by ``check_oas_agreement``), ``bench_bootstrap`` (vectorized vs
``bootstrap_loop``), and ``machine_limits`` (bandwidth, matmul throughput). See
docs/performance.md.

References: MODEL §2-§4 (simulation), §8 (ridge grid, bootstrap CIs).
"""

from retcon._lazy import lazy_exports

# Public name -> private module, loaded on first use so `retcon --help` does not import JAX.
_EXPORTS = {
    "bench_bootstrap": "benchmarks._bootstrap_bench",
    "bootstrap_loop": "benchmarks._bootstrap_bench",
    "MachineLimits": "benchmarks._machine",
    "machine_info": "benchmarks._machine",
    "machine_limits": "benchmarks._machine",
    "bench_oas": "benchmarks._oas_bench",
    "sklearn_grid": "benchmarks._oas_bench",
    "check_oas_agreement": "benchmarks._oas_bench:check_agreement",
    "profile_sim": "benchmarks._profile",
    "render": "benchmarks._report",
    "targets": "benchmarks._report",
    "BENCHMARKS": "benchmarks._run",
    "BenchConfig": "benchmarks._run",
    "quick_config": "benchmarks._run",
    "run_bench": "benchmarks._run",
    "bench_budgets": "benchmarks._sim_bench",
    "bench_scaleout": "benchmarks._sim_bench",
    "bench_sim": "benchmarks._sim_bench",
    "check_sim_agreement": "benchmarks._sim_bench:check_agreement",
    "simulate_numpy": "benchmarks._sim_numpy",
}

__getattr__, __dir__ = lazy_exports("benchmarks", _EXPORTS)

__all__ = sorted(_EXPORTS)
