"""Theory of the retain-or-consolidate decision: Propositions 1-2 of docs/model.md, exactly.

The single-cluster model (docs/model.md §6) in sympy, derived from the reader's three outcomes,
with numpy and JAX twins for sim/, the §6.6 closed forms derived by sympy, and a bracketing
numeric crossover for any length distribution (parametric or an empirical sample).

Symbol table (code name <-> docs/model.md symbol):

============================  ==================  ==============================================
code                          model               meaning
============================  ==================  ==============================================
``budget``, ``budgets``       ``B``               tokens available for memory in the context
``compress_ratio``            ``rho_o``           ``len(g_o(C)) / len(C)``, in (0, 1)
``fidelity``                  ``phi_o``           support of the generated record relative to raw
``acc_raw``                   ``a``               reader accuracy with the raw evidence
``acc_guess``                 ``g``               reader accuracy with no evidence
``kappa``                     ``kappa_o``         ``(a - g) / (a phi - g)``
``dist`` (`LengthDist`)       ``F``               law of the cluster's raw length ``L``
``tail_exponent``             ``k``               ``F(x) ~ c x^k`` as ``x -> 0``
``delta``                     ``dU_o(B)``         ``U_B(o) - U_B(ret)``
``coverage``                  ``C_o(B)``          gain where the raw evidence does not fit
``replacement``               ``R_o(B)``          change where it does (raw-grounded queries)
``crossover_budget``          ``B*_o``            root of ``dU_o``
``elasticity``                ``e(x)``            ``x f(x) / F(x)``
============================  ==================  ==============================================

Python API:
  make_length_dist(name, **params), empirical_lengths(sample) -> LengthDist
  DIST_PARAMS (family -> parameters), DIST_SCALE_PARAM (family -> its unit parameter),
    check_dist_params(name, params, *, spell), sample_lengths(key, family, p1, p2, shape): the one
    table of length families, its validation and its JAX sampler (sim's scenarios use them)
  delta_curve(dist, budgets, *, compress_ratio, fidelity, acc_raw, acc_guess) -> Decomposition
  crossover(dist, *, compress_ratio, fidelity, acc_raw, acc_guess) -> Crossover
  identify(key, structure, budget, slot, outcomes, groups) -> Identified: the §2 reader
    (g, a_t, phi_{o,t}) fitted to paired data by maximum likelihood, grouped-bootstrap CIs;
    out_of_fold / compare_crossovers / single_cluster_crossover: the fitted model's dU(B) and
    crossover budget on held-out groups vs the data's
  grid_crossover(budgets, delta) -> GridCrossover: the crossover of a curve sampled on a budget
    grid (simulated or measured); the one estimator sim, oas.real and paper_checks use
  kappa(fidelity, acc_raw, acc_guess); loose_budget_limit(*, ...); tight_budget_condition(dist, *, ...)
  closed_form_crossover(dist, *, ...); elasticity_nonincreasing(dist)
  decompose_numpy / decompose_jax (from CDF values), delta_curve_jax (from a jax CDF)
  theory.symbolic: sympy `dU`, `C`, `R` in an undefined F and the checks of §4-6 (`identity_residual`, ...);
  theory.closed_forms: the §6.6 derivations (`point_mass_crossover`, `uniform_crossover`, ...)

Bad input raises `retcon.errors.InputError` (a ValueError) naming the option as the CLI spells it.
References: docs/model.md §4-6.
"""

from typing import TYPE_CHECKING

from retcon.lazy import lazy_exports

if TYPE_CHECKING:
    from theory import _closed_forms as closed_forms
    from theory import _symbolic as symbolic
    from theory._checks import DIST_PARAMS as DIST_PARAMS
    from theory._checks import DIST_SCALE_PARAM as DIST_SCALE_PARAM
    from theory._checks import check_dist_params as check_dist_params
    from theory._crossover import REASON_NO_LOSS as REASON_NO_LOSS
    from theory._crossover import REASON_USELESS as REASON_USELESS
    from theory._crossover import REASON_WEAK as REASON_WEAK
    from theory._crossover import Crossover as Crossover
    from theory._crossover import TightBudget as TightBudget
    from theory._crossover import crossover as crossover
    from theory._crossover import delta_curve as delta_curve
    from theory._crossover import elasticity_nonincreasing as elasticity_nonincreasing
    from theory._crossover import kappa as kappa
    from theory._crossover import loose_budget_limit as loose_budget_limit
    from theory._crossover import scan_budgets as scan_budgets
    from theory._crossover import tight_budget_condition as tight_budget_condition
    from theory._dists import LengthDist as LengthDist
    from theory._dists import empirical_lengths as empirical_lengths
    from theory._dists import make_length_dist as make_length_dist
    from theory._formulas import closed_form_crossover as closed_form_crossover
    from theory._formulas import reader_success as reader_success
    from theory._grid import CrossoverInterval as CrossoverInterval
    from theory._grid import GridCrossover as GridCrossover
    from theory._grid import crossover_interval as crossover_interval
    from theory._grid import crossover_replicates as crossover_replicates
    from theory._grid import crossover_status as crossover_status
    from theory._grid import format_crossover as format_crossover
    from theory._grid import grid_crossover as grid_crossover
    from theory._grid import sign_changes as sign_changes
    from theory._identify import Identified as Identified
    from theory._identify import ReaderParams as ReaderParams
    from theory._identify import Structure as Structure
    from theory._identify import identify as identify
    from theory._identify import support_fractions as support_fractions
    from theory._predict import CurveComparison as CurveComparison
    from theory._predict import OutOfFold as OutOfFold
    from theory._predict import compare_crossovers as compare_crossovers
    from theory._predict import fold_of_groups as fold_of_groups
    from theory._predict import out_of_fold as out_of_fold
    from theory._predict import predict_success as predict_success
    from theory._predict import single_cluster_crossover as single_cluster_crossover
    from theory._sampling import sample_lengths as sample_lengths
    from theory._twins import Decomposition as Decomposition
    from theory._twins import decompose_jax as decompose_jax
    from theory._twins import decompose_numpy as decompose_numpy
    from theory._twins import delta_curve_jax as delta_curve_jax

# Public name -> private module. Loaded on first use (PEP 562) so that `retcon --help`, which
# imports theory.cli, does not pay for sympy and scipy.
_EXPORTS = {
    "DIST_PARAMS": "theory._checks",
    "DIST_SCALE_PARAM": "theory._checks",
    "check_dist_params": "theory._checks",
    "sample_lengths": "theory._sampling",
    "closed_form_crossover": "theory._formulas",
    "reader_success": "theory._formulas",
    "REASON_NO_LOSS": "theory._crossover",
    "REASON_USELESS": "theory._crossover",
    "REASON_WEAK": "theory._crossover",
    "Crossover": "theory._crossover",
    "TightBudget": "theory._crossover",
    "crossover": "theory._crossover",
    "delta_curve": "theory._crossover",
    "elasticity_nonincreasing": "theory._crossover",
    "kappa": "theory._crossover",
    "loose_budget_limit": "theory._crossover",
    "scan_budgets": "theory._crossover",
    "tight_budget_condition": "theory._crossover",
    "LengthDist": "theory._dists",
    "Identified": "theory._identify",
    "ReaderParams": "theory._identify",
    "Structure": "theory._identify",
    "identify": "theory._identify",
    "support_fractions": "theory._identify",
    "CurveComparison": "theory._predict",
    "OutOfFold": "theory._predict",
    "compare_crossovers": "theory._predict",
    "fold_of_groups": "theory._predict",
    "out_of_fold": "theory._predict",
    "predict_success": "theory._predict",
    "single_cluster_crossover": "theory._predict",
    "CrossoverInterval": "theory._grid",
    "GridCrossover": "theory._grid",
    "crossover_interval": "theory._grid",
    "crossover_replicates": "theory._grid",
    "crossover_status": "theory._grid",
    "format_crossover": "theory._grid",
    "grid_crossover": "theory._grid",
    "sign_changes": "theory._grid",
    "empirical_lengths": "theory._dists",
    "make_length_dist": "theory._dists",
    "Decomposition": "theory._twins",
    "decompose_jax": "theory._twins",
    "decompose_numpy": "theory._twins",
    "delta_curve_jax": "theory._twins",
}
_MODULES = {"symbolic": "theory._symbolic", "closed_forms": "theory._closed_forms"}

__getattr__, __dir__ = lazy_exports("theory", _EXPORTS, _MODULES)


__all__ = [
    "DIST_PARAMS",
    "DIST_SCALE_PARAM",
    "REASON_NO_LOSS",
    "REASON_USELESS",
    "REASON_WEAK",
    "Crossover",
    "CrossoverInterval",
    "CurveComparison",
    "Decomposition",
    "GridCrossover",
    "Identified",
    "LengthDist",
    "OutOfFold",
    "ReaderParams",
    "Structure",
    "TightBudget",
    "check_dist_params",
    "closed_form_crossover",
    "closed_forms",
    "compare_crossovers",
    "crossover",
    "crossover_interval",
    "crossover_replicates",
    "crossover_status",
    "decompose_jax",
    "decompose_numpy",
    "delta_curve",
    "delta_curve_jax",
    "elasticity_nonincreasing",
    "empirical_lengths",
    "fold_of_groups",
    "format_crossover",
    "grid_crossover",
    "identify",
    "kappa",
    "loose_budget_limit",
    "make_length_dist",
    "out_of_fold",
    "predict_success",
    "reader_success",
    "sample_lengths",
    "scan_budgets",
    "sign_changes",
    "single_cluster_crossover",
    "support_fractions",
    "symbolic",
    "tight_budget_condition",
]
