"""Paper checks: the paper's claims, one function each, measured with CIs and given a computed verdict.

``run_checks`` measures every claim (theory, sim, OAS, LoCoMo) and ``write_run`` writes
``REPORT.md``, ``report.json`` and the figures; ``retcon paper-checks`` does both. Each claim's
verdict comes from a pure verdict function (``verdict_*``) of the measured real-data numbers
(``RULES``: simulation shows the mechanism, real data decides), so the logic is tested on
constructed numbers where the claim holds, fails, holds in part, or cannot be decided.

References: MODEL §3-9; docs/paper-checks.md.
"""

from retcon.lazy import lazy_exports

# Public name -> private module, loaded on first use so `retcon --help` stays light.
_EXPORTS = {
    "CHECKS": "paper_checks._claims",
    "CLAIMS": "paper_checks._claims",
    "PAPER_FIGURES": "paper_checks._claims",
    "check_cross_note": "paper_checks._claims",
    "check_crossover_scaling": "paper_checks._claims",
    "check_harm_calibration": "paper_checks._claims",
    "check_loose_retention": "paper_checks._claims",
    "check_mlp_control": "paper_checks._claims",
    "check_router_gain": "paper_checks._claims",
    "check_second_reader": "paper_checks._claims",
    "check_sign_reversal": "paper_checks._claims",
    "check_tight_gain": "paper_checks._claims",
    "crc_bound_check": "paper_checks._claims",
    "identical_operators": "paper_checks._claims",
    "length_strata": "paper_checks._claims",
    "slope_estimate": "paper_checks._claims",
    "stratified_crossovers": "paper_checks._claims",
    "CheckConfig": "paper_checks._config",
    "TheoryModel": "paper_checks._config",
    "bounded": "paper_checks._curves",
    "chance_outcomes": "paper_checks._curves",
    "crossover_estimate": "paper_checks._curves",
    "crossover_replicates": "paper_checks._curves",
    "curve_replicates": "paper_checks._curves",
    "curves_from_outcomes": "paper_checks._curves",
    "curves_from_paired": "paper_checks._curves",
    "evidence_length": "paper_checks._curves",
    "mean_difference": "paper_checks._curves",
    "raw_accuracy_check": "paper_checks._curves",
    "raw_grounded": "paper_checks._curves",
    "LocoEval": "paper_checks._loco",
    "loco_evaluate": "paper_checks._loco",
    "t_interval": "paper_checks._loco",
    "render_markdown": "paper_checks._report",
    "write_report": "paper_checks._report",
    "run_checks": "paper_checks._run",
    "write_run": "paper_checks._run",
    "DataMissing": "paper_checks._sources",
    "DependencyMissing": "paper_checks._sources",
    "Workspace": "paper_checks._sources",
    "locomo_path": "paper_checks._sources",
    "ClaimResult": "paper_checks._types",
    "Estimate": "paper_checks._types",
    "FAIL": "paper_checks._types",
    "INCONCLUSIVE": "paper_checks._types",
    "OperatorCurve": "paper_checks._types",
    "PARTIAL": "paper_checks._types",
    "PASS": "paper_checks._types",
    "SKIPPED": "paper_checks._types",
    "SourceCurves": "paper_checks._types",
    "VERDICTS": "paper_checks._types",
    "Verdict": "paper_checks._types",
    "RULES": "paper_checks._verdicts",
    "admissible": "paper_checks._verdicts",
    "combine": "paper_checks._verdicts",
    "grade_equivalence": "paper_checks._verdicts",
    "grade_magnitude": "paper_checks._verdicts",
    "grade_positive": "paper_checks._verdicts",
    "grade_reversal": "paper_checks._verdicts",
    "grade_slope": "paper_checks._verdicts",
    "verdict_cross_note": "paper_checks._verdicts",
    "verdict_crossover_scaling": "paper_checks._verdicts",
    "verdict_harm_calibration": "paper_checks._verdicts",
    "verdict_loose_retention": "paper_checks._verdicts",
    "verdict_no_reliable_improvement": "paper_checks._verdicts",
    "verdict_router_gain": "paper_checks._verdicts",
    "verdict_sign_reversal": "paper_checks._verdicts",
    "verdict_tight_gain": "paper_checks._verdicts",
}

__getattr__, __dir__ = lazy_exports("paper_checks", _EXPORTS)

__all__ = sorted(_EXPORTS)
