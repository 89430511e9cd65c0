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

from benchmarks._bootstrap_bench import bench_bootstrap, bootstrap_loop
from benchmarks._machine import MachineLimits, machine_info, machine_limits
from benchmarks._oas_bench import bench_oas, sklearn_grid
from benchmarks._oas_bench import check_agreement as check_oas_agreement
from benchmarks._profile import profile_sim
from benchmarks._report import render, targets
from benchmarks._run import BENCHMARKS, BenchConfig, quick_config, run_bench
from benchmarks._sim_bench import bench_budgets, bench_scaleout, bench_sim
from benchmarks._sim_bench import check_agreement as check_sim_agreement
from benchmarks._sim_numpy import simulate_numpy

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
