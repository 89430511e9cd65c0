"""Paper checks: the paper's claims, one function each, measured with CIs and given a computed verdict.

``run_checks`` measures every claim (theory, sim, OAS, LoCoMo) and ``write_run`` writes
``REPORT.md``, ``report.json`` and the figures; ``retcon paper-checks`` does both. Each claim's
verdict comes from a pure verdict function (``verdict_*``) of the measured numbers, so the
logic is tested on constructed numbers where the claim holds and where it fails.

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
    "length_classes": "paper_checks._claims",
    "CheckConfig": "paper_checks._config",
    "TheoryModel": "paper_checks._config",
    "PairedTable": "paper_checks._curves",
    "band_crossover": "paper_checks._curves",
    "crossover_from_curve": "paper_checks._curves",
    "curves_from_table": "paper_checks._curves",
    "make_table": "paper_checks._curves",
    "mean_difference": "paper_checks._curves",
    "PolicyEval": "paper_checks._policies",
    "policy_difference": "paper_checks._policies",
    "policy_eval_from_choices": "paper_checks._policies",
    "render_markdown": "paper_checks._report",
    "write_report": "paper_checks._report",
    "run_checks": "paper_checks._run",
    "write_run": "paper_checks._run",
    "DataMissing": "paper_checks._sources",
    "DependencyMissing": "paper_checks._sources",
    "Workspace": "paper_checks._sources",
    "locomo_path": "paper_checks._sources",
    "table_from_paired": "paper_checks._sources",
    "ClaimResult": "paper_checks._types",
    "Estimate": "paper_checks._types",
    "FAIL": "paper_checks._types",
    "OperatorCurve": "paper_checks._types",
    "PARTIAL": "paper_checks._types",
    "PASS": "paper_checks._types",
    "SKIPPED": "paper_checks._types",
    "SourceCurves": "paper_checks._types",
    "VERDICTS": "paper_checks._types",
    "Verdict": "paper_checks._types",
    "combine": "paper_checks._verdicts",
    "grade_order": "paper_checks._verdicts",
    "grade_positive": "paper_checks._verdicts",
    "grade_reversal": "paper_checks._verdicts",
    "relative_spread": "paper_checks._verdicts",
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
