"""The public names of ``paper_checks``, each declared once (read by type checkers and by
``retcon.lazy.attach_stub`` at run time; the package docstring is in ``__init__.py``)."""

from ._config import CheckConfig as CheckConfig
from ._config import TheoryModel as TheoryModel
from ._run import append_sections as append_sections
from ._run import design_workspaces as design_workspaces
from ._run import run_checks as run_checks
from ._run import side_by_side as side_by_side
from ._run import stage_timings as stage_timings
from ._run import write_run as write_run
from ._types import VERDICTS as VERDICTS
from ._types import ClaimResult as ClaimResult
from ._types import Estimate as Estimate
from ._types import SourceCurves as SourceCurves
from ._types import Verdict as Verdict
from .claims._all import CHECKS as CHECKS
from .claims._all import CLAIMS as CLAIMS
from .claims._all import check_cross_note as check_cross_note
from .claims._all import check_crossover_scaling as check_crossover_scaling
from .claims._all import check_harm_calibration as check_harm_calibration
from .claims._all import check_loose_retention as check_loose_retention
from .claims._all import check_mlp_control as check_mlp_control
from .claims._all import check_router_gain as check_router_gain
from .claims._all import check_second_reader as check_second_reader
from .claims._all import check_sign_reversal as check_sign_reversal
from .claims._all import check_tight_gain as check_tight_gain
from .claims._sources import DataMissing as DataMissing
from .claims._sources import DependencyMissing as DependencyMissing
from .claims._sources import Workspace as Workspace
from .claims._sources import llm_configured as llm_configured
from .claims._sources import locomo_path as locomo_path
from .report._designs import crossover_lines as crossover_lines
from .report._designs import designs_text as designs_text
from .report._designs import write_designs as write_designs
from .report._report import format_claims as format_claims
from .report._report import report_json as report_json
from .studies.scripts._run_experiment import run_experiment as run_experiment
