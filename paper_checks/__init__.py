"""Paper checks: the paper's claims, one function each, measured with CIs and given a computed verdict.

``run_checks`` measures every claim (theory, sim, OAS, LoCoMo) and ``write_run`` writes
``REPORT.md``, ``report.json`` and the figures; ``retcon paper-checks`` does both. Each claim's
verdict comes from a pure verdict function (``verdict_*``) of the measured numbers, so the
logic is tested on constructed numbers where the claim holds and where it fails.

References: MODEL §3-9; docs/paper-checks.md.
"""

from paper_checks._claims import (
    CHECKS, CLAIMS, PAPER_FIGURES, check_crossover_scaling, check_cross_note, check_harm_calibration,
    check_loose_retention, check_mlp_control, check_router_gain, check_second_reader, check_sign_reversal,
    check_tight_gain, length_classes,
)
from paper_checks._config import CheckConfig, TheoryModel
from paper_checks._curves import (
    PairedTable, band_crossover, crossover_from_curve, curves_from_table, make_table, mean_difference,
)
from paper_checks._policies import PolicyEval, policy_difference, policy_eval_from_choices
from paper_checks._report import render_markdown, write_report
from paper_checks._run import run_checks, write_run
from paper_checks._sources import DataMissing, DependencyMissing, Workspace, locomo_path, table_from_paired
from paper_checks._types import (
    FAIL, PARTIAL, PASS, SKIPPED, VERDICTS, ClaimResult, Estimate, OperatorCurve, SourceCurves, Verdict,
)
from paper_checks._verdicts import (
    combine, grade_order, grade_positive, grade_reversal, relative_spread, verdict_crossover_scaling,
    verdict_cross_note, verdict_harm_calibration, verdict_loose_retention, verdict_no_reliable_improvement,
    verdict_router_gain, verdict_sign_reversal, verdict_tight_gain,
)

__all__ = [
    "CHECKS", "CLAIMS", "PAPER_FIGURES", "check_crossover_scaling", "check_cross_note", "check_harm_calibration",
    "check_loose_retention", "check_mlp_control", "check_router_gain", "check_second_reader",
    "check_sign_reversal", "check_tight_gain", "length_classes",
    "CheckConfig", "TheoryModel",
    "PairedTable", "band_crossover", "crossover_from_curve", "curves_from_table", "make_table", "mean_difference",
    "PolicyEval", "policy_difference", "policy_eval_from_choices",
    "render_markdown", "write_report", "run_checks", "write_run",
    "DataMissing", "DependencyMissing", "Workspace", "locomo_path", "table_from_paired",
    "FAIL", "PARTIAL", "PASS", "SKIPPED", "VERDICTS", "ClaimResult", "Estimate", "OperatorCurve", "SourceCurves",
    "Verdict",
    "combine", "grade_order", "grade_positive", "grade_reversal", "relative_spread", "verdict_crossover_scaling",
    "verdict_cross_note", "verdict_harm_calibration", "verdict_loose_retention", "verdict_no_reliable_improvement",
    "verdict_router_gain", "verdict_sign_reversal", "verdict_tight_gain",
]
