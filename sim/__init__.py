"""JAX Monte Carlo of retain vs consolidate under a token budget (MODEL §2-§7).

``load_scenario`` reads a preset or a TOML scenario; ``simulate`` runs the kernel (``jit``,
``vmap`` over queries and budgets, the query axis sharded over every JAX device, chunked so memory
stays bounded) and returns ``U``, ``dU``, coverage and replacement per operator and budget with
standard errors, ``dU = C + R`` exact; ``simulated_crossover`` finds the crossover budget with a
bootstrap CI; ``stress`` breaks Assumption 1 in shared memories; ``simulate_instances`` makes
paired data for the OAS router. The packing of MODEL §2 (``PACKINGS``, ``check_packing``,
``pack_reference``, ``pack``) lives in ``theory``.

References: MODEL §2 (reader, packing), §3-§4 (regions, Proposition 1), §5 (Assumption 1),
§6 (single-cluster model), §7 (operator ranking), §8 (paired instances), §10 (memory over time:
``load_stream``, ``simulate_timeline``, ``summarize_timeline``; docs/timeline.md). See
docs/simulation.md.
"""

from retcon.lazy import attach_stub

# Every public name is declared once, in __init__.pyi, and loads on first use.
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
