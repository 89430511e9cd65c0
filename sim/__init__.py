"""JAX Monte Carlo of retain vs consolidate under a token budget (MODEL §2-§7).

``load_scenario`` reads a preset or a TOML scenario; ``simulate`` runs the kernel (``jit``,
``vmap`` over queries and budgets, the query axis sharded over every JAX device, chunked so memory
stays bounded) and returns ``U``, ``dU``, coverage and replacement per operator and budget with
standard errors, ``dU = C + R`` exact; ``simulated_crossover`` finds the crossover budget with a
bootstrap CI; ``stress`` breaks Assumption 1 in shared memories; ``simulate_instances`` makes
paired data for the OAS router; ``pack`` is the packing rule on its own.

References: MODEL §2 (reader, packing), §3-§4 (regions, Proposition 1), §5 (Assumption 1),
§6 (single-cluster model), §7 (operator ranking), §8 (paired instances). See docs/simulation.md.
"""

from sim._crossover import Crossover, bootstrap_crossover, curve_crossings, simulated_crossover
from sim._instances import Instances, simulate_instances
from sim._pack import pack
from sim._scenario import (DEFAULT_PRESET, PRESETS, LengthConfig, OperatorConfig, QueryTypeConfig,
                           RetrieverConfig, Scenario, load_scenario, scenario_from_dict)
from sim._simulate import QueryArrays, SimResult, simulate, simulate_queries
from sim._stress import StressResult, stress

__all__ = [
    "DEFAULT_PRESET",
    "PRESETS",
    "Crossover",
    "Instances",
    "LengthConfig",
    "OperatorConfig",
    "QueryArrays",
    "QueryTypeConfig",
    "RetrieverConfig",
    "Scenario",
    "SimResult",
    "StressResult",
    "bootstrap_crossover",
    "curve_crossings",
    "load_scenario",
    "pack",
    "scenario_from_dict",
    "simulate",
    "simulate_instances",
    "simulate_queries",
    "simulated_crossover",
    "stress",
]
