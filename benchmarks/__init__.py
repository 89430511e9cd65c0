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

from retcon.lazy import attach_stub

# Every public name is declared once, in __init__.pyi, and loads on first use.
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
