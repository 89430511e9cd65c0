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
  PACKINGS, check_packing(name, mode), pack_reference(lengths, budget, mode) (numpy, the one
    reference), pack(lengths, budget, mode) (its JAX kernel; pack_one for one list inside a
    caller's jit/vmap), cumsum_in_order(x): the packing of MODEL §2, used by sim, oas and real data
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
    from theory._pack import cumsum_in_order as cumsum_in_order
    from theory._pack import pack as pack
    from theory._pack import pack_one as pack_one
    from theory._packing import PACKINGS as PACKINGS
    from theory._packing import check_packing as check_packing
    from theory._packing import pack_reference as pack_reference
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
    "cumsum_in_order": "theory._pack",
    "pack": "theory._pack",
    "pack_one": "theory._pack",
    "PACKINGS": "theory._packing",
    "check_packing": "theory._packing",
    "pack_reference": "theory._packing",
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
    "PACKINGS",
    "REASON_NO_LOSS",
    "REASON_USELESS",
    "REASON_WEAK",
    "Crossover",
    "CrossoverInterval",
    "Decomposition",
    "GridCrossover",
    "LengthDist",
    "TightBudget",
    "check_dist_params",
    "check_packing",
    "closed_form_crossover",
    "closed_forms",
    "crossover",
    "crossover_interval",
    "crossover_replicates",
    "crossover_status",
    "cumsum_in_order",
    "decompose_jax",
    "decompose_numpy",
    "delta_curve",
    "delta_curve_jax",
    "elasticity_nonincreasing",
    "empirical_lengths",
    "format_crossover",
    "grid_crossover",
    "kappa",
    "loose_budget_limit",
    "make_length_dist",
    "pack",
    "pack_one",
    "pack_reference",
    "reader_success",
    "sample_lengths",
    "scan_budgets",
    "sign_changes",
    "symbolic",
    "tight_budget_condition",
]
