"""One script per figure of the paper checks, each with its TOML config and a JSON sidecar.

Scripts (``python -m experiments.<name> --config experiments/<name>.toml --out DIR``):
``crossover_curves``, ``coverage_replacement``, ``crossover_vs_length``, ``phase_diagram``,
``oas_vs_fixed``, ``harm_tradeoff``. Each script is
``paper_checks.run_experiment(name, __doc__, argv)``; the computations live in
``paper_checks.studies`` (beyond the paper's claims).
"""

NAMES = (
    "crossover_curves",
    "coverage_replacement",
    "crossover_vs_length",
    "phase_diagram",
    "oas_vs_fixed",
    "harm_tradeoff",
)

__all__ = ["NAMES"]
