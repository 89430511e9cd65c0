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
    theory.timeline_symbolic: the sympy derivations of §10

Bad input raises `retcon.errors.InputError` (a ValueError) naming the function and the argument
(`crossover: compress_ratio must be in (0, 1); got 1.3.`); inside `retcon` the same check names
the option (`--compress-ratio`), through `retcon.errors.Spell`.
References: docs/model.md §4-6, §10.
"""

from retcon.lazy import attach_stub

# Every public name is declared once, in __init__.pyi, and loads on first use.
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
