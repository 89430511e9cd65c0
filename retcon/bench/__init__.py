"""Benchmarks: the JAX code against what a user would write instead, on this machine.

``run_bench(seed, BenchConfig(...))`` runs them all (``retcon bench`` from the shell); each piece
is callable on its own: ``bench_sim`` (``sim.simulate`` vs the numpy kernel ``simulate_numpy``,
checked bit-equal on shared draws by ``check_sim_agreement``), ``bench_budgets``,
``bench_scaleout`` (forced host devices), ``profile_sim``, ``bench_oas`` (``oas.fit_ridge`` vs its
numpy backend, multi-target ``Ridge`` and ``GridSearchCV``, checked by ``check_oas_agreement``),
``bench_bootstrap`` (the JAX function vs numpy's same algorithm and ``bootstrap_loop``), and ``machine_limits`` (bandwidth, matmul throughput). See
docs/performance.md.

References: MODEL §2-§4 (simulation), §8 (ridge grid, bootstrap CIs).
"""

from typing import TYPE_CHECKING

from retcon.lazy import lazy_exports

if TYPE_CHECKING:
    from retcon.bench._bootstrap_bench import bench_bootstrap as bench_bootstrap
    from retcon.bench._bootstrap_bench import bootstrap_loop as bootstrap_loop
    from retcon.bench._machine import MachineLimits as MachineLimits
    from retcon.bench._machine import machine_info as machine_info
    from retcon.bench._machine import machine_limits as machine_limits
    from retcon.bench._oas_bench import bench_oas as bench_oas
    from retcon.bench._oas_bench import check_agreement as check_oas_agreement
    from retcon.bench._oas_bench import sklearn_grid as sklearn_grid
    from retcon.bench._profile import profile_sim as profile_sim
    from retcon.bench._report import render as render
    from retcon.bench._report import targets as targets
    from retcon.bench._run import BENCHMARKS as BENCHMARKS
    from retcon.bench._run import BenchConfig as BenchConfig
    from retcon.bench._run import quick_config as quick_config
    from retcon.bench._run import run_bench as run_bench
    from retcon.bench._sim_bench import bench_budgets as bench_budgets
    from retcon.bench._sim_bench import bench_scaleout as bench_scaleout
    from retcon.bench._sim_bench import bench_sim as bench_sim
    from retcon.bench._sim_bench import check_agreement as check_sim_agreement
    from retcon.bench._sim_numpy import simulate_numpy as simulate_numpy

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

__all__ = [
    "BENCHMARKS",
    "BenchConfig",
    "MachineLimits",
    "bench_bootstrap",
    "bench_budgets",
    "bench_oas",
    "bench_scaleout",
    "bench_sim",
    "bootstrap_loop",
    "check_oas_agreement",
    "check_sim_agreement",
    "machine_info",
    "machine_limits",
    "profile_sim",
    "quick_config",
    "render",
    "run_bench",
    "simulate_numpy",
    "sklearn_grid",
    "targets",
]
