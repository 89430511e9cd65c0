"""Paper checks: the paper's claims, one function each, measured with CIs and given a computed verdict.

``run_checks`` measures every claim (theory, sim, OAS, LoCoMo) and ``write_run`` writes
``REPORT.md``, ``report.json`` and the figures; ``retcon paper-checks`` does both. Each claim's
verdict comes from a pure verdict function (``verdict_*``) of the measured real-data numbers
(``RULES``: simulation shows the mechanism, real data decides), so the logic is tested on
constructed numbers where the claim holds, fails, holds in part, or cannot be decided. Each rule's
error rates at the data's group count (false PASS, power, false FAIL) come from the public module
``paper_checks.operating``.

References: MODEL §3-9; docs/paper-checks.md.
"""

from typing import TYPE_CHECKING

from retcon.lazy import lazy_exports

if TYPE_CHECKING:
    from paper_checks._claims import CHECKS as CHECKS
    from paper_checks._claims import CLAIMS as CLAIMS
    from paper_checks._claims import PAPER_FIGURES as PAPER_FIGURES
    from paper_checks._claims import check_cross_note as check_cross_note
    from paper_checks._claims import check_crossover_scaling as check_crossover_scaling
    from paper_checks._claims import check_harm_calibration as check_harm_calibration
    from paper_checks._claims import check_loose_retention as check_loose_retention
    from paper_checks._claims import check_mlp_control as check_mlp_control
    from paper_checks._claims import check_router_gain as check_router_gain
    from paper_checks._claims import check_second_reader as check_second_reader
    from paper_checks._claims import check_sign_reversal as check_sign_reversal
    from paper_checks._claims import check_tight_gain as check_tight_gain
    from paper_checks._claims import crc_bound_check as crc_bound_check
    from paper_checks._config import CheckConfig as CheckConfig
    from paper_checks._config import TheoryModel as TheoryModel
    from paper_checks._curves import bounded as bounded
    from paper_checks._curves import chance_outcomes as chance_outcomes
    from paper_checks._curves import crossover_estimate as crossover_estimate
    from paper_checks._curves import curves_from_outcomes as curves_from_outcomes
    from paper_checks._curves import curves_from_paired as curves_from_paired
    from paper_checks._curves import evidence_length as evidence_length
    from paper_checks._curves import mean_difference as mean_difference
    from paper_checks._curves import raw_accuracy_check as raw_accuracy_check
    from paper_checks._curves import raw_grounded as raw_grounded
    from paper_checks._endtoend import append_end_to_end as append_end_to_end
    from paper_checks._endtoend import end_to_end_markdown as end_to_end_markdown
    from paper_checks._endtoend import end_to_end_section as end_to_end_section
    from paper_checks._endtoend import end_to_end_verdicts as end_to_end_verdicts
    from paper_checks._experiments import EXPERIMENTS as EXPERIMENTS
    from paper_checks._loco import LocoEval as LocoEval
    from paper_checks._loco import loco_evaluate as loco_evaluate
    from paper_checks._loco import t_interval as t_interval
    from paper_checks._oc import OC_TABLE as OC_TABLE
    from paper_checks._oc import (
        rule_operating_characteristics as rule_operating_characteristics,
    )
    from paper_checks._paired import PairedSource as PairedSource
    from paper_checks._paired import load_paired_source as load_paired_source
    from paper_checks._report import render_markdown as render_markdown
    from paper_checks._report import report_json as report_json
    from paper_checks._report import write_report as write_report
    from paper_checks._requirements import Needs as Needs
    from paper_checks._run import run_checks as run_checks
    from paper_checks._run import write_run as write_run
    from paper_checks._scaling import identical_operators as identical_operators
    from paper_checks._scaling import slope_estimate as slope_estimate
    from paper_checks._scaling import stratified_crossovers as stratified_crossovers
    from paper_checks._sources import DataMissing as DataMissing
    from paper_checks._sources import DependencyMissing as DependencyMissing
    from paper_checks._sources import Workspace as Workspace
    from paper_checks._sources import locomo_path as locomo_path
    from paper_checks._sources import stable_id as stable_id
    from paper_checks._types import FAIL as FAIL
    from paper_checks._types import INCONCLUSIVE as INCONCLUSIVE
    from paper_checks._types import PARTIAL as PARTIAL
    from paper_checks._types import PASS as PASS
    from paper_checks._types import SKIPPED as SKIPPED
    from paper_checks._types import VERDICTS as VERDICTS
    from paper_checks._types import ClaimResult as ClaimResult
    from paper_checks._types import Estimate as Estimate
    from paper_checks._types import OperatorCurve as OperatorCurve
    from paper_checks._types import SourceCurves as SourceCurves
    from paper_checks._types import Verdict as Verdict
    from paper_checks._verdicts import RULES as RULES
    from paper_checks._verdicts import admissible as admissible
    from paper_checks._verdicts import combine as combine
    from paper_checks._verdicts import grade_equivalence as grade_equivalence
    from paper_checks._verdicts import grade_magnitude as grade_magnitude
    from paper_checks._verdicts import grade_positive as grade_positive
    from paper_checks._verdicts import grade_reversal as grade_reversal
    from paper_checks._verdicts import grade_slope as grade_slope
    from paper_checks._verdicts import reversal_test as reversal_test
    from paper_checks._verdicts import verdict_cross_note as verdict_cross_note
    from paper_checks._verdicts import verdict_crossover_scaling as verdict_crossover_scaling
    from paper_checks._verdicts import verdict_harm_calibration as verdict_harm_calibration
    from paper_checks._verdicts import verdict_loose_retention as verdict_loose_retention
    from paper_checks._verdicts import (
        verdict_no_reliable_improvement as verdict_no_reliable_improvement,
    )
    from paper_checks._verdicts import verdict_router_gain as verdict_router_gain
    from paper_checks._verdicts import verdict_sign_reversal as verdict_sign_reversal
    from paper_checks._verdicts import verdict_tight_gain as verdict_tight_gain

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
    "identical_operators": "paper_checks._scaling",
    "slope_estimate": "paper_checks._scaling",
    "stratified_crossovers": "paper_checks._scaling",
    "CheckConfig": "paper_checks._config",
    "append_end_to_end": "paper_checks._endtoend",
    "end_to_end_markdown": "paper_checks._endtoend",
    "end_to_end_section": "paper_checks._endtoend",
    "end_to_end_verdicts": "paper_checks._endtoend",
    "EXPERIMENTS": "paper_checks._experiments",
    "TheoryModel": "paper_checks._config",
    "bounded": "paper_checks._curves",
    "chance_outcomes": "paper_checks._curves",
    "crossover_estimate": "paper_checks._curves",
    "curves_from_outcomes": "paper_checks._curves",
    "curves_from_paired": "paper_checks._curves",
    "evidence_length": "paper_checks._curves",
    "mean_difference": "paper_checks._curves",
    "raw_accuracy_check": "paper_checks._curves",
    "raw_grounded": "paper_checks._curves",
    "LocoEval": "paper_checks._loco",
    "loco_evaluate": "paper_checks._loco",
    "t_interval": "paper_checks._loco",
    "OC_TABLE": "paper_checks._oc",
    "rule_operating_characteristics": "paper_checks._oc",
    "PairedSource": "paper_checks._paired",
    "load_paired_source": "paper_checks._paired",
    "report_json": "paper_checks._report",
    "Needs": "paper_checks._requirements",
    "render_markdown": "paper_checks._report",
    "write_report": "paper_checks._report",
    "run_checks": "paper_checks._run",
    "write_run": "paper_checks._run",
    "DataMissing": "paper_checks._sources",
    "DependencyMissing": "paper_checks._sources",
    "Workspace": "paper_checks._sources",
    "locomo_path": "paper_checks._sources",
    "stable_id": "paper_checks._sources",
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
    "reversal_test": "paper_checks._verdicts",
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

__all__ = [
    "CHECKS",
    "CLAIMS",
    "EXPERIMENTS",
    "FAIL",
    "INCONCLUSIVE",
    "OC_TABLE",
    "PAPER_FIGURES",
    "PARTIAL",
    "PASS",
    "RULES",
    "SKIPPED",
    "VERDICTS",
    "CheckConfig",
    "ClaimResult",
    "DataMissing",
    "DependencyMissing",
    "Estimate",
    "LocoEval",
    "Needs",
    "OperatorCurve",
    "PairedSource",
    "SourceCurves",
    "TheoryModel",
    "Verdict",
    "Workspace",
    "admissible",
    "append_end_to_end",
    "bounded",
    "chance_outcomes",
    "check_cross_note",
    "check_crossover_scaling",
    "check_harm_calibration",
    "check_loose_retention",
    "check_mlp_control",
    "check_router_gain",
    "check_second_reader",
    "check_sign_reversal",
    "check_tight_gain",
    "combine",
    "crc_bound_check",
    "crossover_estimate",
    "curves_from_outcomes",
    "curves_from_paired",
    "end_to_end_markdown",
    "end_to_end_section",
    "end_to_end_verdicts",
    "evidence_length",
    "grade_equivalence",
    "grade_magnitude",
    "grade_positive",
    "grade_reversal",
    "grade_slope",
    "identical_operators",
    "load_paired_source",
    "loco_evaluate",
    "locomo_path",
    "mean_difference",
    "raw_accuracy_check",
    "raw_grounded",
    "render_markdown",
    "report_json",
    "reversal_test",
    "rule_operating_characteristics",
    "run_checks",
    "slope_estimate",
    "stable_id",
    "stratified_crossovers",
    "t_interval",
    "verdict_cross_note",
    "verdict_crossover_scaling",
    "verdict_harm_calibration",
    "verdict_loose_retention",
    "verdict_no_reliable_improvement",
    "verdict_router_gain",
    "verdict_sign_reversal",
    "verdict_tight_gain",
    "write_report",
    "write_run",
]
