"""One benchmark run: the machine's limits, then each selected benchmark, all in one process tree.

References: docs/performance.md (targets), MODEL §2-§4 (simulation), §8 (ridge grid, bootstrap CIs).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from retcon.errors import InputError, Spell

BENCHMARKS = ("bootstrap", "oas", "sim", "budgets", "scaleout", "profile", "timeline", "floors")


@dataclass(frozen=True)
class BenchConfig:
    """What ``run_bench`` measures. Sizes are tuples of positive ints; ``None`` fields take defaults.

    Attributes:
      only: benchmarks to run, a subset of ``BENCHMARKS`` (the machine limits always run).
      sim_sizes: queries per simulation row; numpy runs up to ``numpy_max`` queries.
      oas_sizes: instances (over all 7 budgets) per OAS row; scikit-learn runs up to ``sklearn_max`` (None: every size).
      bootstrap_sizes: rows per bootstrap row (``max(10, rows // 50)`` groups).
      budget_counts, budget_queries: the cost-against-budgets table.
      device_counts, scaleout_queries: the forced-host-device table.
      profile_queries: queries in the profiled chunk.
      timeline_sessions, timeline_queries: the timeline kernel vs numpy, per session count.
      floors_instances: instances of the paired file the commands' floor rows run on.
      resamples: bootstrap resamples.
      repeats: interleaved repeats for the in-process timings (best kept).
      scenario: simulation preset or TOML path.
      copy_mib, matmul_n: sizes of the machine-limit measurements.
    """

    only: tuple[str, ...] = BENCHMARKS
    sim_sizes: tuple[int, ...] = (10**4, 10**5, 10**6, 10**7)
    numpy_max: int | None = 10**6
    oas_sizes: tuple[int, ...] = (10**3, 10**4, 10**5, 10**6)
    sklearn_max: int | None = None
    bootstrap_sizes: tuple[int, ...] = (10**3, 10**4, 10**5)
    budget_counts: tuple[int, ...] = (1, 8, 29, 64)
    budget_queries: int = 65536
    device_counts: tuple[int, ...] = (1, 2, 4, 8)
    scaleout_queries: int = 262144
    profile_queries: int = 65536
    timeline_sessions: tuple[int, ...] = (20, 40, 80)
    timeline_queries: int = 1024
    floors_instances: int = 20000
    resamples: int = 2000
    repeats: int = 3
    scenario: str = "locomo-like"
    copy_mib: int = 256
    matmul_n: int = 2048

    def __post_init__(self):
        bad = [b for b in self.only if b not in BENCHMARKS]
        if bad or not self.only:
            raise InputError(
                f"{Spell('BenchConfig').lead('only')} must be a non-empty subset of "
                f"{list(BENCHMARKS)}; got {list(self.only)}."
            )
        for f in (
            "sim_sizes",
            "oas_sizes",
            "bootstrap_sizes",
            "budget_counts",
            "device_counts",
            "timeline_sessions",
        ):
            v = getattr(self, f)
            if not v or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in v):
                raise InputError(f"BenchConfig.{f} must be positive integers; got {list(v)}.")
        for f in (
            "budget_queries",
            "scaleout_queries",
            "profile_queries",
            "timeline_queries",
            "resamples",
            "repeats",
            "copy_mib",
            "matmul_n",
        ):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"BenchConfig.{f} must be a positive integer; got {v!r}.")
        if min(self.oas_sizes) < 70:
            raise InputError(
                f"BenchConfig.oas_sizes must be >= 70 (10 instances per budget); got {list(self.oas_sizes)}."
            )
        if min(self.bootstrap_sizes) < 10:
            raise InputError(
                f"BenchConfig.bootstrap_sizes must be >= 10; got {list(self.bootstrap_sizes)}."
            )


QUICK = BenchConfig(
    sim_sizes=(4096,),
    numpy_max=None,
    oas_sizes=(700,),
    sklearn_max=None,
    bootstrap_sizes=(1000,),
    budget_counts=(2, 8),
    budget_queries=2048,
    device_counts=(1, 2),
    scaleout_queries=4096,
    profile_queries=2048,
    timeline_sessions=(10, 20),
    timeline_queries=128,
    floors_instances=300,
    resamples=2000,
    repeats=1,
    copy_mib=32,
    matmul_n=512,
)


def quick_config(**changes) -> BenchConfig:
    """The ``--quick`` configuration (seconds, not minutes), with ``changes`` applied."""
    return dataclasses.replace(QUICK, **changes)


def run_bench(seed: int, config: BenchConfig, *, progress=None) -> dict:
    """Run the machine-limit estimate and the selected benchmarks; return every table and the targets.

    Args:
      seed: root seed (JAX keys and the synthetic data's generators).
      config: what to run and at which sizes.
      progress: callable taking one message (e.g. printing to stderr), or ``None``.

    Returns:
      a JSON-ready dict: ``machine``, ``limits``, one list of rows per benchmark that ran,
      ``targets``.
    """
    from benchmarks import _sim_bench
    from benchmarks._machine import machine_info, machine_limits
    from benchmarks._report import targets
    from benchmarks._timing import run_worker

    say = progress or (lambda msg: None)
    result: dict = {"machine": machine_info()}
    say("machine limits")
    limits = machine_limits(copy_mib=config.copy_mib, matmul_n=config.matmul_n)
    result["limits"] = limits._asdict()
    if "bootstrap" in config.only:
        from benchmarks._bootstrap_bench import bench_bootstrap

        say("bootstrap")
        result["bootstrap"] = bench_bootstrap(
            seed,
            config.bootstrap_sizes,
            n_resamples=config.resamples,
            repeats=config.repeats,
            limits=limits,
        )
    if "oas" in config.only:
        from benchmarks._oas_bench import bench_oas

        say("OAS ridge grid")
        result["oas"] = bench_oas(
            seed,
            config.oas_sizes,
            repeats=max(1, min(config.repeats, 2)),
            sklearn_max=config.sklearn_max,
            limits=limits,
        )
    if {"sim", "budgets", "scaleout", "profile"} & set(config.only):
        say("simulation: agreement check")
        result["sim_check"] = [_sim_bench.check_sim_agreement(seed, config.scenario)]
    if "sim" in config.only:
        result["sim"] = _sim_bench.bench_sim(
            seed,
            config.sim_sizes,
            scenario=config.scenario,
            numpy_max=config.numpy_max,
            repeats=config.repeats,
            limits=limits,
            progress=say,
        )
        sizes = [n for n in config.sim_sizes if config.numpy_max is None or n <= config.numpy_max]
        if sizes:  # the three side by side in one process, alternated, medians
            result["sim_interleaved"] = [
                _sim_bench.interleaved_sim(seed, max(sizes), scenario=config.scenario, progress=say)
            ]
        say("simulation: words and the Threefry floor")
        result["sim_words"] = [
            _sim_bench.bench_words(
                seed, min(max(config.sim_sizes), 262144), scenario=config.scenario
            )
        ]
        say("simulation: the numpy kernel against its float32-normal floor")
        floor_spec = {
            "seed": seed,
            "n": min(max(config.sim_sizes), 32768),
            "scenario": config.scenario,
            "rounds": 9,
        }  # a fresh process, without what the JAX rows above left in this one
        result["sim_numpy_floor"] = [
            run_worker("numpy_floor", floor_spec, unset=_sim_bench.BLAS_OVERRIDES)
        ]
    if "budgets" in config.only:
        result["sim_budgets"] = _sim_bench.bench_budgets(
            seed,
            config.budget_queries,
            config.budget_counts,
            scenario=config.scenario,
            repeats=config.repeats,
            limits=limits,
            progress=say,
        )
    if "scaleout" in config.only:
        result["scaleout"] = _sim_bench.bench_scaleout(
            seed,
            config.scaleout_queries,
            config.device_counts,
            scenario=config.scenario,
            progress=say,
        )
    if "profile" in config.only:
        from benchmarks._profile import profile_sim

        say("simulation: stage profile")
        result["profile"] = profile_sim(seed, config.scenario, config.profile_queries)
    if "timeline" in config.only:
        from benchmarks._timeline_bench import bench_timeline

        say("timeline kernel vs numpy")
        result["timeline"] = bench_timeline(
            seed, config.timeline_sessions, queries=config.timeline_queries, repeats=config.repeats
        )
    if "floors" in config.only:
        from benchmarks._floors import bench_floors

        say("commands against their floors (pair simulate, read, evaluate, identify)")
        result["floors"] = bench_floors(seed, config.floors_instances)
        result["floor_stages"] = [s for r in result["floors"] for s in r.pop("stages")]
    result["targets"] = targets(result)
    return result
