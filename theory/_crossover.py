"""Numbers from the single-cluster model: ``kappa``, the limits, ``dU`` curves and the crossover.

The crossover is found by bracketing: ``dU`` is evaluated on a scan of budgets built from the
quantiles ``Q(p)`` of ``F`` and their images ``rho Q(p)`` (where ``F(B)`` and ``F(B/rho)`` change),
plus a log-spaced grid between them; every sign change of ``dU`` on the scan brackets a root that
bisection refines to the float resolution. One ``+ -> -`` change is a unique crossover (docs/model.md
§6.4); several are reported as ``multiple``; none, with the condition that failed, as ``none``.
References: docs/model.md §6.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from retcon.errors import Spell
from theory import _formulas
from theory._checks import (
    check_budgets,
    check_finite,
    check_int,
    check_model,
    check_range,
    check_reader,
)
from theory._dists import LengthDist, check_dist
from theory._grid import STATUS_UNIQUE, crossover_status, grid_crossover
from theory._twins import Decomposition, decompose_numpy

#: The reasons `crossover` gives when there is no crossover (docs/model.md §6).
REASON_USELESS = "a*phi <= g"  # the generated record is no better than guessing: ret wins
REASON_NO_LOSS = "phi >= 1"  # no detail lost: consolidation never loses
REASON_WEAK = "compression too weak"  # tight-budget condition rho^(-k) > kappa fails (§6.3)
#: The most grid points a scan may ask for (``n_log``, ``n``): a bound on the work of one call.
_MAX_GRID = 1_000_000


class Crossover(NamedTuple):
    """The crossover budget ``B*_o`` of the single-cluster model.

    Attributes:
      crossover_budget: ``B*`` in tokens (``dU > 0`` below, ``< 0`` above); for ``multiple``, the
        largest ``+ -> -`` root; ``None`` when there is none.
      status: ``unique``, ``none`` or ``multiple``.
      bracket: ``(lo, hi)`` budgets of the scan that bracket the root (``unique``), the smallest
        and largest root (``multiple``), or ``None``.
      reason: ``None`` for ``unique``; else which condition failed (``a*phi <= g``,
        ``phi >= 1``, ``compression too weak``) or how many sign changes were found.
      kappa: ``(a - g) / (a phi - g)`` (``inf`` when ``a phi <= g``).

    References: docs/model.md §6.3, §6.4.
    """

    crossover_budget: float | None
    status: str
    bracket: tuple[float, float] | None
    reason: str | None
    kappa: float


class TightBudget(NamedTuple):
    """The tight-budget condition ``rho^(-k) > kappa`` and its two sides.

    Attributes:
      holds: whether ``dU > 0`` for all small budgets.
      value: ``rho^(-k)`` (``inf`` when ``F`` vanishes faster than any power at 0).
      kappa: ``(a - g) / (a phi - g)``.
      tail_exponent: ``k`` in ``F(x) ~ c x^k`` near 0.
      limit_ratio: ``lim_{B -> 0} dU(B) / F(B) = (a phi - g) rho^(-k) - (a - g)``.

    References: docs/model.md §6.3.
    """

    holds: bool
    value: float
    kappa: float
    tail_exponent: float
    limit_ratio: float


def _phi_eff(phi: float, a: float) -> float:
    # The reader's accuracy with the generated record is min(a phi, 1) (docs/model.md §2).
    return min(phi, 1.0 / a)


def kappa(fidelity, acc_raw, acc_guess) -> float:
    """``kappa_o = (a - g) / (a phi - g)``: the fidelity loss that compression has to beat.

    Args:
      fidelity: ``phi >= 0``. acc_raw: ``a`` in ``(g, 1]``. acc_guess: ``g`` in ``[0, 1)``.

    Returns:
      ``kappa`` (``> 1`` when ``g < a phi < a``); ``inf`` when ``a phi <= g``.

    References: docs/model.md §6.
    """
    phi, a, g = check_reader(fidelity, acc_raw, acc_guess, Spell("kappa"))
    phi_e = _phi_eff(phi, a)
    return math.inf if a * phi_e - g <= 0 else float(_formulas.kappa(phi_e, a, g))


def loose_budget_limit(*, fidelity, acc_raw, acc_guess) -> float:
    """``lim_{B -> inf} dU_o(B) = -a (1 - phi)``: retention wins at loose budgets when ``phi < 1``.

    Args:
      fidelity, acc_raw, acc_guess: ``phi``, ``a``, ``g`` (``g`` does not enter the limit).

    Returns:
      The limit, in accuracy units.

    References: docs/model.md §6.2.
    """
    phi, a, g = check_reader(fidelity, acc_raw, acc_guess, Spell("loose_budget_limit"))
    return float(_formulas.loose_limit(_phi_eff(phi, a), a, g))


def tight_budget_condition(
    dist: LengthDist | float, *, compress_ratio, fidelity, acc_raw, acc_guess
) -> TightBudget:
    """Whether consolidation wins at every small budget: ``rho^(-k) > kappa``.

    Args:
      dist: the length distribution (its ``tail_exponent`` ``k``), or ``k`` itself.
      compress_ratio, fidelity, acc_raw, acc_guess: ``rho``, ``phi``, ``a``, ``g``.

    Returns:
      TightBudget(holds, value=rho^(-k), kappa, tail_exponent=k, limit_ratio).

    References: docs/model.md §6.3.
    """
    rho, phi, a, g = check_model(
        compress_ratio, fidelity, acc_raw, acc_guess, Spell("tight_budget_condition")
    )
    if isinstance(dist, LengthDist):
        k = dist.tail_exponent
    else:
        k = check_range(
            Spell("tight_budget_condition").lead("dist"), dist, 0.0, None, low_open=False
        )
    kap = kappa(phi, a, g)
    # rho^(-k) past the float range (a subnormal rho, a large k) is +inf: the condition holds then.
    try:
        value = math.inf if math.isinf(k) else rho ** (-k)
    except OverflowError:
        value = math.inf
    phi_e = _phi_eff(phi, a)
    if math.isinf(value):
        ratio = math.inf if a * phi_e > g else (-math.inf if a * phi_e < g else -(a - g))
    else:
        ratio = float(_formulas.tight_ratio(rho, k, phi_e, a, g))
    return TightBudget(
        holds=bool(value > kap),
        value=float(value),
        kappa=float(kap),
        tail_exponent=float(k),
        limit_ratio=float(ratio),
    )


def delta_curve(
    dist: LengthDist, budgets, *, compress_ratio, fidelity, acc_raw, acc_guess
) -> Decomposition[np.ndarray]:
    """``dU_o(B)``, ``C_o(B)``, ``R_o(B)`` of the single-cluster model on a grid of budgets.

    ``dU = (a phi - g) F(B/rho) - (a - g) F(B)``, ``C = (a phi - g)(F(B/rho) - F(B))``,
    ``R = -a (1 - phi) F(B)`` (`theory._formulas.decompose`, checked against the sympy derivation).

    Args:
      dist: law of the cluster's raw length.
      budgets: budgets in tokens, positive, any shape.
      compress_ratio, fidelity, acc_raw, acc_guess: ``rho`` in (0, 1), ``phi >= 0``,
        ``0 <= g < a <= 1``.

    Returns:
      Decomposition(delta, coverage, replacement): float64 arrays, shape of ``budgets``.

    References: docs/model.md §4, §6.1.
    """
    rho, phi, a, g = check_model(compress_ratio, fidelity, acc_raw, acc_guess, Spell("delta_curve"))
    check_dist(dist, Spell("delta_curve"))
    b = check_budgets(budgets, Spell("delta_curve"))
    return decompose_numpy(dist.cdf(b), dist.cdf(b / rho), fidelity=phi, acc_raw=a, acc_guess=g)


def _sorted_unique(values) -> np.ndarray:
    """The distinct values of ``values``, sorted (flattened), as ``np.unique`` returns them.

    ``np.unique`` imports ``numpy.ma`` on its first call (about 10 ms of ``retcon crossover``'s
    start-up); sorting and dropping repeats needs none of it.
    """
    x = np.sort(np.asarray(values, dtype=np.float64), axis=None)
    return x[np.concatenate(([True], x[1:] != x[:-1]))] if x.size else x


#: Smallest budget `scan_budgets` returns (tokens); far below any budget a reader sees, and far
#: enough above the subnormal range that ``1e-13`` times it is still a normal float.
_SCAN_FLOOR = 1e-280


def scan_budgets(dist: LengthDist, compress_ratio: float, *, n_log: int = 400) -> np.ndarray:
    """The increasing budgets on which `crossover` looks for sign changes of ``dU`` (tokens).

    ``Q(p)`` and ``rho Q(p)`` for ``p`` dense in both tails and the body (down to ``p = 1e-300``,
    where a lognormal's crossover can hide when ``rho`` is close to 1), and ``n_log``
    log-spaced budgets from ``rho Q(1e-300) / 2`` to ``2 Q(1 - 1e-12)``. For an empirical sample,
    every observed length and its ``rho`` multiple. Nothing below ``_SCAN_FLOOR`` (1e-280 tokens).
    """
    spell = Spell("scan_budgets")
    check_dist(dist, spell)
    compress_ratio = check_model(compress_ratio, 0.5, 1.0, 0.0, spell).compress_ratio
    n_log = check_int(spell.lead("n_log"), n_log, 1, _MAX_GRID)
    if dist.name == "empirical":
        q = _sorted_unique(dist.observed())
    else:
        p = np.concatenate(
            [
                np.logspace(-300, -13, 288),
                np.logspace(-12, -1, 111),
                np.linspace(0.1, 0.9, 81)[1:-1],
                1.0 - np.logspace(-1, -12, 111),
            ]
        )
        q = _sorted_unique(dist.ppf(p))
    # Budgets below _SCAN_FLOOR are dropped: quantiles of a shape < 1 gamma or Weibull reach
    # subnormal floats there, where a root finder's tolerance ``1e-13 * hi`` rounds to 0.
    q = q[np.isfinite(q) & (q >= _SCAN_FLOOR)]
    if q.size == 0:
        q = np.array([_SCAN_FLOOR])
    lo, hi = max(compress_ratio * q.min() / 2.0, _SCAN_FLOOR), 2.0 * q.max()
    pts = np.concatenate([q, compress_ratio * q, np.geomspace(lo, hi, n_log)])
    return _sorted_unique(pts[pts >= _SCAN_FLOOR])


def _bisect(f: Callable[[float], float], lo: float, hi: float) -> float:
    """A root of ``f`` in ``[lo, hi]`` where ``f(lo)`` and ``f(hi)`` have opposite signs (``lo > 0``).

    Halves the bracket at its geometric mean while ``hi / lo > 4`` (the scan's brackets can span
    many decades near ``_SCAN_FLOOR``), then at its midpoint, until the two ends are neighbouring
    floats or ``f`` is exactly 0. Returns the end where ``|f|`` is smaller (the lower one on a
    tie): for a step CDF (point mass, empirical sample) ``dU`` jumps over 0 and both ends sit at
    the jump. Deterministic; at most about 70 evaluations of ``f``.
    """
    f_lo, f_hi = f(lo), f(hi)
    if f_lo == 0.0:
        return lo
    if f_hi == 0.0:
        return hi
    positive_low = f_lo > 0.0
    while True:
        mid = math.sqrt(lo) * math.sqrt(hi) if hi > 4.0 * lo else lo + (hi - lo) / 2.0
        if not lo < mid < hi:
            break
        f_mid = f(mid)
        if f_mid == 0.0:
            return mid
        if (f_mid > 0.0) == positive_low:
            lo, f_lo = mid, f_mid
        else:
            hi, f_hi = mid, f_mid
    return lo if abs(f_lo) <= abs(f_hi) else hi


def crossover(
    dist: LengthDist, *, compress_ratio: float, fidelity: float, acc_raw: float, acc_guess: float
) -> Crossover:
    """The crossover budget ``B*_o``: consolidation wins below it, retention above.

    Args:
      dist: law of the cluster's raw length (any `LengthDist`, including an empirical sample).
      compress_ratio, fidelity, acc_raw, acc_guess: ``rho`` in (0, 1), ``phi >= 0``,
        ``0 <= g < a <= 1``.

    Returns:
      Crossover(crossover_budget, status, bracket, reason, kappa).

    References: docs/model.md §6.3 (when a crossover exists), §6.4 (uniqueness), §6.6 (closed forms).
    """
    rho, phi, a, g = check_model(compress_ratio, fidelity, acc_raw, acc_guess, Spell("crossover"))
    check_dist(dist, Spell("crossover"))
    kap = kappa(phi, a, g)
    phi_e = _phi_eff(phi, a)
    if a * phi_e <= g:  # dU = (a phi - g) F(B/rho) - (a - g) F(B) <= 0 everywhere
        return Crossover(None, "none", None, REASON_USELESS, kap)
    if phi_e >= 1.0:  # dU >= (a - g)(F(B/rho) - F(B)) >= 0 everywhere
        return Crossover(None, "none", None, REASON_NO_LOSS, kap)

    def delta(b):
        return float(
            decompose_numpy(
                dist.cdf(b), dist.cdf(b / rho), fidelity=phi, acc_raw=a, acc_guess=g
            ).delta
        )

    pts = scan_budgets(dist, rho)
    f_b, f_s = dist.cdf(pts), dist.cdf(pts / rho)
    d = decompose_numpy(f_b, f_s, fidelity=phi, acc_raw=a, acc_guess=g).delta
    # Values within rounding of the two terms' size count as zero (flat stretches, exact ties).
    size = (a * phi_e - g) * f_s + (a - g) * f_b
    sign = np.where(np.abs(d) <= 1e-12 * size, 0, np.sign(d))
    idx = np.flatnonzero(sign)
    changes = [(i, j) for i, j in zip(idx[:-1], idx[1:]) if sign[i] != sign[j]]
    if not changes:
        tight = tight_budget_condition(
            dist, compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g
        )
        reason = (
            REASON_WEAK
            if not tight.holds
            else (
                "dU < 0 on the whole scan: the crossover lies below the budgets where F(B) >= 1e-300"
            )
        )
        return Crossover(None, "none", None, reason, kap)
    roots = []
    for i, j in changes:
        lo, hi = float(pts[i]), float(pts[j])
        root = _bisect(delta, lo, hi)
        roots.append((root, sign[i] > 0, (lo, hi)))
    status = crossover_status([-1 if is_down else 1 for _, is_down, _ in roots])
    if status == STATUS_UNIQUE:
        root, _, bracket = roots[0]
        return Crossover(float(root), status, bracket, None, kap)
    down = [r for r, is_down, _ in roots if is_down]
    return Crossover(
        float(down[-1]) if down else None,
        status,
        (float(roots[0][0]), float(roots[-1][0])),
        f"dU changes sign {len(roots)} times on the scan; crossover_budget is the largest "
        "+ -> - root",
        kap,
    )


def elasticity_nonincreasing(dist: LengthDist, *, n: int = 400, rtol: float = 1e-9) -> bool:
    """Numeric check that ``e(x) = x f(x) / F(x)`` is non-increasing on a quantile grid of ``F``.

    A sufficient condition for a unique crossover (docs/model.md §6.4). Returns ``False`` for
    distributions without a density (point mass, empirical sample).

    Args:
      dist: the length distribution.
      n: grid size (quantiles ``p`` from ``1e-9`` to ``1 - 1e-9``, log-dense in both tails).
      rtol: tolerance relative to ``max e`` for rounding.
    """
    spell = Spell("elasticity_nonincreasing")
    check_dist(dist, spell, needs=("continuous", "ppf", "elasticity"))
    n = check_int(spell.lead("n"), n, 4, _MAX_GRID)
    rtol = check_finite(spell.lead("rtol"), rtol, 0.0, low_open=False)
    if not dist.continuous:
        return False
    p = np.concatenate(
        [
            np.logspace(-9, -1, n // 4),
            np.linspace(0.1, 0.9, n // 2)[1:-1],
            1.0 - np.logspace(-1, -9, n // 4),
        ]
    )
    xs = _sorted_unique(dist.ppf(p))
    e = dist.elasticity(xs)
    return bool(np.all(np.diff(e) <= rtol * np.max(np.abs(e))))


class GridBias(NamedTuple):
    """The crossover read off a budget grid against the continuous ``B*`` of the same model.

    Attributes:
      grid_budget: ``theory.grid_crossover`` of the exact ``dU`` sampled on the grid (NaN: none).
      exact_budget: ``crossover(...).crossover_budget`` (NaN: none).
      relative: ``grid_budget / exact_budget - 1`` (NaN when either is missing).
    """

    grid_budget: float
    exact_budget: float
    relative: float


def grid_bias(
    dist: LengthDist, budgets, *, compress_ratio, fidelity, acc_raw, acc_guess
) -> GridBias:
    """How far the grid estimator's crossover lies from the continuous one, without noise.

    The single-cluster model gives ``B*`` exactly (``crossover``); sampling its ``dU`` on
    ``budgets`` and interpolating the sign change in ``log B`` (``grid_crossover``, MODEL §6.4)
    gives what a data set on that grid estimates at infinite sample size. Their ratio is the
    grid's own bias, which no amount of data removes.

    Args:
      dist: law of the raw length; budgets: ``(m,)`` increasing budgets (tokens).
      compress_ratio, fidelity, acc_raw, acc_guess: the §6 model.

    Returns:
      ``GridBias``.

    References: docs/model.md §6.1, §6.4.
    """

    kw = dict(
        compress_ratio=compress_ratio, fidelity=fidelity, acc_raw=acc_raw, acc_guess=acc_guess
    )
    exact = crossover(dist, **kw).crossover_budget
    b = check_budgets(budgets, Spell("grid_bias"))
    grid = float(grid_crossover(b, delta_curve(dist, b, **kw).delta).crossover_budget)
    ex = math.nan if exact is None else float(exact)
    rel = grid / ex - 1.0 if np.isfinite(grid) and np.isfinite(ex) else math.nan
    return GridBias(grid, ex, rel)
