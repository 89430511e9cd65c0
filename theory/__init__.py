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
  octave_grid(low, high, per_octave): a geometric budget grid in whole tokens;
    grid_bias(dist, budgets, *, ...) -> GridBias: the grid estimator's crossover against the exact one
  kappa(fidelity, acc_raw, acc_guess); loose_budget_limit(*, ...); tight_budget_condition(dist, *, ...)
  closed_form_crossover(dist, *, ...); elasticity_nonincreasing(dist)
  decompose_numpy / decompose_jax (from CDF values), delta_curve_jax (from a jax CDF)
  theory.symbolic: sympy `dU`, `C`, `R` in an undefined F and the checks of §4-6 (`identity_residual`, ...);
  theory.closed_forms: the §6.6 derivations (`point_mass_crossover`, `uniform_crossover`, ...)
  Memory over time (§10): generation_utility(dist, budgets, generations, *, ...) -> U(B, k);
    best_generation / closed_form_best_generation -> BestGeneration (k*); stream_curve(dist,
    budgets, horizon, *, age_law, ...) -> StreamCurve; crossover_time -> CrossoverTime (t*_o(B));
    point_mass_crossover_time; sum_cdf (law of n session lengths); first_positive_time;
    theory.overtime_symbolic: the sympy derivations of §10

Bad input raises `retcon.errors.InputError` (a ValueError) naming the option as the CLI spells it.
References: docs/model.md §4-6, §10.
"""

from typing import TYPE_CHECKING

from retcon.lazy import lazy_exports

if TYPE_CHECKING:
    from theory import _closed_forms as closed_forms
    from theory import _overtime_symbolic as overtime_symbolic
    from theory import _symbolic as symbolic
    from theory._checks import DIST_PARAMS as DIST_PARAMS
    from theory._checks import DIST_SCALE_PARAM as DIST_SCALE_PARAM
    from theory._checks import check_dist_params as check_dist_params
    from theory._crossover import REASON_NO_LOSS as REASON_NO_LOSS
    from theory._crossover import REASON_USELESS as REASON_USELESS
    from theory._crossover import REASON_WEAK as REASON_WEAK
    from theory._crossover import Crossover as Crossover
    from theory._crossover import GridBias as GridBias
    from theory._crossover import TightBudget as TightBudget
    from theory._crossover import crossover as crossover
    from theory._crossover import delta_curve as delta_curve
    from theory._crossover import elasticity_nonincreasing as elasticity_nonincreasing
    from theory._crossover import grid_bias as grid_bias
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
    from theory._grid import octave_grid as octave_grid
    from theory._grid import sign_changes as sign_changes
    from theory._overtime import AGE_LAWS as AGE_LAWS
    from theory._overtime import SUM_FAMILIES as SUM_FAMILIES
    from theory._overtime import BestGeneration as BestGeneration
    from theory._overtime import CrossoverTime as CrossoverTime
    from theory._overtime import StreamCurve as StreamCurve
    from theory._overtime import best_generation as best_generation
    from theory._overtime import closed_form_best_generation as closed_form_best_generation
    from theory._overtime import crossover_time as crossover_time
    from theory._overtime import first_positive_time as first_positive_time
    from theory._overtime import generation_utility as generation_utility
    from theory._overtime import point_mass_crossover_time as point_mass_crossover_time
    from theory._overtime import stream_curve as stream_curve
    from theory._overtime import sum_cdf as sum_cdf
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
    "GridBias": "theory._crossover",
    "grid_bias": "theory._crossover",
    "octave_grid": "theory._grid",
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
    "AGE_LAWS": "theory._overtime",
    "BestGeneration": "theory._overtime",
    "CrossoverTime": "theory._overtime",
    "StreamCurve": "theory._overtime",
    "SUM_FAMILIES": "theory._overtime",
    "best_generation": "theory._overtime",
    "closed_form_best_generation": "theory._overtime",
    "crossover_time": "theory._overtime",
    "first_positive_time": "theory._overtime",
    "generation_utility": "theory._overtime",
    "point_mass_crossover_time": "theory._overtime",
    "stream_curve": "theory._overtime",
    "sum_cdf": "theory._overtime",
    "Decomposition": "theory._twins",
    "decompose_jax": "theory._twins",
    "decompose_numpy": "theory._twins",
    "delta_curve_jax": "theory._twins",
}
_MODULES = {
    "symbolic": "theory._symbolic",
    "closed_forms": "theory._closed_forms",
    "overtime_symbolic": "theory._overtime_symbolic",
}

__getattr__, __dir__ = lazy_exports("theory", _EXPORTS, _MODULES)


__all__ = [
    "AGE_LAWS",
    "DIST_PARAMS",
    "DIST_SCALE_PARAM",
    "PACKINGS",
    "REASON_NO_LOSS",
    "REASON_USELESS",
    "REASON_WEAK",
    "SUM_FAMILIES",
    "BestGeneration",
    "Crossover",
    "CrossoverInterval",
    "CrossoverTime",
    "Decomposition",
    "GridBias",
    "GridCrossover",
    "LengthDist",
    "StreamCurve",
    "TightBudget",
    "best_generation",
    "check_dist_params",
    "check_packing",
    "closed_form_best_generation",
    "closed_form_crossover",
    "closed_forms",
    "crossover",
    "crossover_interval",
    "crossover_replicates",
    "crossover_status",
    "crossover_time",
    "cumsum_in_order",
    "decompose_jax",
    "decompose_numpy",
    "delta_curve",
    "delta_curve_jax",
    "elasticity_nonincreasing",
    "empirical_lengths",
    "first_positive_time",
    "format_crossover",
    "generation_utility",
    "grid_bias",
    "grid_crossover",
    "kappa",
    "loose_budget_limit",
    "make_length_dist",
    "octave_grid",
    "overtime_symbolic",
    "pack",
    "pack_one",
    "pack_reference",
    "point_mass_crossover_time",
    "reader_success",
    "sample_lengths",
    "scan_budgets",
    "sign_changes",
    "stream_curve",
    "sum_cdf",
    "symbolic",
    "tight_budget_condition",
]
