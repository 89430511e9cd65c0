"""JAX Monte Carlo of retain vs consolidate under a token budget (MODEL §2-§7).

``load_scenario`` reads a preset or a TOML scenario; ``simulate`` runs the kernel (``jit``,
``vmap`` over queries and budgets, the query axis sharded over every JAX device, chunked so memory
stays bounded) and returns ``U``, ``dU``, coverage and replacement per operator and budget with
standard errors, ``dU = C + R`` exact; ``simulated_crossover`` finds the crossover budget with a
bootstrap CI; ``stress`` breaks Assumption 1 in shared memories; ``simulate_instances`` makes
paired data for the OAS router. ``PACKINGS``, ``check_packing``, ``pack_reference`` and ``pack``
are the packing of MODEL §2, which lives in ``theory`` (re-exported here for existing users).

References: MODEL §2 (reader, packing), §3-§4 (regions, Proposition 1), §5 (Assumption 1),
§6 (single-cluster model), §7 (operator ranking), §8 (paired instances), §10 (memory over time:
``load_stream``, ``simulate_timeline``, ``summarize_timeline``; docs/over-time.md). See
docs/simulation.md.
"""

from typing import TYPE_CHECKING

from retcon.lazy import lazy_exports

if TYPE_CHECKING:
    from sim import _kernel as kernel
    from sim._crossover import Crossover as Crossover
    from sim._crossover import bootstrap_crossover as bootstrap_crossover
    from sim._crossover import simulated_crossover as simulated_crossover
    from sim._instances import Instances as Instances
    from sim._instances import simulate_instances as simulate_instances
    from sim._scenario import DEFAULT_PRESET as DEFAULT_PRESET
    from sim._scenario import PRESETS as PRESETS
    from sim._scenario import ClassifierConfig as ClassifierConfig
    from sim._scenario import LengthConfig as LengthConfig
    from sim._scenario import OperatorConfig as OperatorConfig
    from sim._scenario import QueryTypeConfig as QueryTypeConfig
    from sim._scenario import RetrieverConfig as RetrieverConfig
    from sim._scenario import Scenario as Scenario
    from sim._scenario import load_scenario as load_scenario
    from sim._scenario import scenario_from_dict as scenario_from_dict
    from sim._simulate import QueryArrays as QueryArrays
    from sim._simulate import SimResult as SimResult
    from sim._simulate import block_se as block_se
    from sim._simulate import exact_mean as exact_mean
    from sim._simulate import simulate as simulate
    from sim._simulate import simulate_queries as simulate_queries
    from sim._stream import STREAM_PRESETS as STREAM_PRESETS
    from sim._stream import StreamConfig as StreamConfig
    from sim._stream import StreamScenario as StreamScenario
    from sim._stream import load_stream as load_stream
    from sim._stream import stream_from_dict as stream_from_dict
    from sim._stress import SpilloverSummary as SpilloverSummary
    from sim._stress import StressResult as StressResult
    from sim._stress import spillover_summary as spillover_summary
    from sim._stress import stress as stress
    from sim._timeline import POLICIES as POLICIES
    from sim._timeline import TimelineResult as TimelineResult
    from sim._timeline import draw_stream as draw_stream
    from sim._timeline import overflow_generations as overflow_generations
    from sim._timeline import periodic_generations as periodic_generations
    from sim._timeline import query_timeline as query_timeline
    from sim._timeline import query_timeline_dense as query_timeline_dense
    from sim._timeline import simulate_timeline as simulate_timeline
    from sim._timeline import stream_params as stream_params
    from sim._timeline import summarize_timeline as summarize_timeline
    from theory import PACKINGS as PACKINGS
    from theory import check_packing as check_packing
    from theory import pack as pack
    from theory import pack_reference as pack_reference

# Public name -> private module, loaded on first use so `retcon --help` does not import JAX.
_EXPORTS = {
    "Crossover": "sim._crossover",
    "bootstrap_crossover": "sim._crossover",
    "simulated_crossover": "sim._crossover",
    "Instances": "sim._instances",
    "simulate_instances": "sim._instances",
    "DEFAULT_PRESET": "sim._scenario",
    "ClassifierConfig": "sim._scenario",
    "LengthConfig": "sim._scenario",
    "OperatorConfig": "sim._scenario",
    "PRESETS": "sim._scenario",
    "QueryTypeConfig": "sim._scenario",
    "RetrieverConfig": "sim._scenario",
    "Scenario": "sim._scenario",
    "load_scenario": "sim._scenario",
    "scenario_from_dict": "sim._scenario",
    "QueryArrays": "sim._simulate",
    "SimResult": "sim._simulate",
    "simulate": "sim._simulate",
    "simulate_queries": "sim._simulate",
    "block_se": "sim._simulate",
    "exact_mean": "sim._simulate",
    "StressResult": "sim._stress",
    "SpilloverSummary": "sim._stress",
    "spillover_summary": "sim._stress",
    "stress": "sim._stress",
    "STREAM_PRESETS": "sim._stream",
    "StreamConfig": "sim._stream",
    "StreamScenario": "sim._stream",
    "load_stream": "sim._stream",
    "stream_from_dict": "sim._stream",
    "POLICIES": "sim._timeline",
    "TimelineResult": "sim._timeline",
    "draw_stream": "sim._timeline",
    "query_timeline": "sim._timeline",
    "query_timeline_dense": "sim._timeline",
    "stream_params": "sim._timeline",
    "overflow_generations": "sim._timeline",
    "periodic_generations": "sim._timeline",
    "simulate_timeline": "sim._timeline",
    "summarize_timeline": "sim._timeline",
    # MODEL §2 packing lives in theory; re-exported here for existing users of sim.pack & co.
    "PACKINGS": "theory",
    "check_packing": "theory",
    "pack": "theory",
    "pack_reference": "theory",
}

# The kernel's stages (draws, packing, reader), for white-box benchmarks and checks.
_MODULES = {"kernel": "sim._kernel"}

__getattr__, __dir__ = lazy_exports("sim", _EXPORTS, _MODULES)

__all__ = [
    "DEFAULT_PRESET",
    "PACKINGS",
    "POLICIES",
    "PRESETS",
    "STREAM_PRESETS",
    "ClassifierConfig",
    "Crossover",
    "Instances",
    "LengthConfig",
    "OperatorConfig",
    "QueryArrays",
    "QueryTypeConfig",
    "RetrieverConfig",
    "Scenario",
    "SimResult",
    "SpilloverSummary",
    "StreamConfig",
    "StreamScenario",
    "StressResult",
    "TimelineResult",
    "block_se",
    "bootstrap_crossover",
    "check_packing",
    "draw_stream",
    "exact_mean",
    "kernel",
    "load_scenario",
    "load_stream",
    "overflow_generations",
    "pack",
    "pack_reference",
    "periodic_generations",
    "query_timeline",
    "query_timeline_dense",
    "scenario_from_dict",
    "simulate",
    "simulate_instances",
    "simulate_queries",
    "simulate_timeline",
    "simulated_crossover",
    "spillover_summary",
    "stream_from_dict",
    "stream_params",
    "stress",
    "summarize_timeline",
]
