"""The paper's nine claims, one function each (MODEL §3-9), in the families the paper groups them:
the budget-dependent reversal (claims 1-4, ``paper_checks.claims._reversal``), which operator and
which budget (5-6, ``paper_checks.claims._scaling``) and the learned router (7-9,
``paper_checks.claims._router``). What they share (texts, result builders, ``needs``) is in
``paper_checks.claims._base``.

References: MODEL §3-9; docs/paper-checks.md.
"""

from paper_checks.claims._base import CLAIMS, PAPER_FIGURES
from paper_checks.claims._reversal import (
    check_loose_retention,
    check_second_reader,
    check_sign_reversal,
    check_tight_gain,
)
from paper_checks.claims._router import (
    check_harm_calibration,
    check_mlp_control,
    check_router_gain,
    crc_bound_check,
)
from paper_checks.claims._scaling import check_cross_note, check_crossover_scaling

__all__ = [
    "CHECKS",
    "CLAIMS",
    "PAPER_FIGURES",
    "check_cross_note",
    "check_crossover_scaling",
    "check_harm_calibration",
    "check_loose_retention",
    "check_mlp_control",
    "check_router_gain",
    "check_second_reader",
    "check_sign_reversal",
    "check_tight_gain",
    "crc_bound_check",
]

CHECKS = {
    "1": check_sign_reversal,
    "2": check_tight_gain,
    "3": check_loose_retention,
    "4": check_second_reader,
    "5": check_crossover_scaling,
    "6": check_cross_note,
    "7": check_router_gain,
    "8": check_mlp_control,
    "9": check_harm_calibration,
}
