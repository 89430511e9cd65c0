"""Benchmarks: the JAX code against what a user would write instead, on this machine.

``run_bench(seed, BenchConfig(...))`` runs them all (``retcon bench`` from the shell); each piece
is callable on its own: ``bench_sim`` (``sim.simulate`` vs the numpy kernel ``simulate_numpy``,
checked bit-equal on shared draws by ``check_sim_agreement``), ``bench_budgets``,
``bench_scaleout`` (forced host devices), ``profile_sim``, ``bench_oas`` (``oas.fit_ridge`` vs
scikit-learn, checked by ``check_oas_agreement``), ``bench_bootstrap`` (vectorized vs
``bootstrap_loop``), and ``machine_limits`` (bandwidth, matmul throughput). See
docs/performance.md.

References: MODEL §2-§4 (simulation), §8 (ridge grid, bootstrap CIs).
"""

from retcon.lazy import lazy_exports

# Public name -> private module, loaded on first use so `retcon --help` does not import JAX.
_EXPORTS = {
    "bench_bootstrap": "retcon.bench._bootstrap_bench",
    "bootstrap_loop": "retcon.bench._bootstrap_bench",
    "MachineLimits": "retcon.bench._machine",
    "machine_info": "retcon.bench._machine",
    "machine_limits": "retcon.bench._machine",
    "bench_oas": "retcon.bench._oas_bench",
    "sklearn_grid": "retcon.bench._oas_bench",
    "check_oas_agreement": "retcon.bench._oas_bench:check_agreement",
    "profile_sim": "retcon.bench._profile",
    "render": "retcon.bench._report",
    "targets": "retcon.bench._report",
    "BENCHMARKS": "retcon.bench._run",
    "BenchConfig": "retcon.bench._run",
    "quick_config": "retcon.bench._run",
    "run_bench": "retcon.bench._run",
    "bench_budgets": "retcon.bench._sim_bench",
    "bench_scaleout": "retcon.bench._sim_bench",
    "bench_sim": "retcon.bench._sim_bench",
    "check_sim_agreement": "retcon.bench._sim_bench:check_agreement",
    "simulate_numpy": "retcon.bench._sim_numpy",
}

__getattr__, __dir__ = lazy_exports("retcon.bench", _EXPORTS)

__all__ = sorted(_EXPORTS)
