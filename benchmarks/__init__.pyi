"""The public names of ``benchmarks``, each declared once (read by type checkers and by
``retcon.lazy.attach_stub`` at run time; the package docstring is in ``__init__.py``)."""

from ._bootstrap_bench import bench_bootstrap as bench_bootstrap
from ._floors import bench_floors as bench_floors
from ._machine import MachineLimits as MachineLimits
from ._machine import machine_info as machine_info
from ._machine import machine_limits as machine_limits
from ._oas_bench import bench_oas as bench_oas
from ._profile import profile_sim as profile_sim
from ._report import render_report as render_report
from ._report import targets as targets
from ._run import BENCHMARKS as BENCHMARKS
from ._run import BenchConfig as BenchConfig
from ._run import quick_config as quick_config
from ._run import run_bench as run_bench
from ._sim_bench import bench_budgets as bench_budgets
from ._sim_bench import bench_scaleout as bench_scaleout
from ._sim_bench import bench_sim as bench_sim
