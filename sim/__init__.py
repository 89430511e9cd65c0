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

from retcon.lazy import lazy_exports

# Public name -> private module, loaded on first use so `retcon --help` does not import JAX.
_EXPORTS = {
    "Crossover": "sim._crossover",
    "bootstrap_crossover": "sim._crossover",
    "curve_crossings": "sim._crossover",
    "simulated_crossover": "sim._crossover",
    "Instances": "sim._instances",
    "simulate_instances": "sim._instances",
    "pack": "sim._pack",
    "DEFAULT_PRESET": "sim._scenario",
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
    "StressResult": "sim._stress",
    "stress": "sim._stress",
}

# The kernel as a module (draws, evidence frontier, per-budget reading, block sums): for the
# benchmarks and checks that drive it below ``simulate``.
_MODULES = {"kernel": "sim._kernel"}

__getattr__, __dir__ = lazy_exports("sim", _EXPORTS, _MODULES)

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - a list, built from the table
__all__ += ["kernel"]
