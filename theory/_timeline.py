"""Memory over time in the single-cluster model (MODEL §10): ``U(B, k)``, ``k*`` and ``t*_o(B)``.

Two questions, both in §6's single-cluster model extended by §10 under the compounding hypothesis
H10 (a unit after ``k`` passes of ``o`` has length ``rho^k L`` and support ``phi^k``; §2's
parametrization, so the reader gives ``g + (a - g) phi^k`` with the unit in context, ``g``
without):

* Generations. ``U(B, k) = g + (a - g) phi^k F(B / rho^k)``. ``d/dk ln(U - g) = ln phi +
  ln(1/rho) e(B / rho^k)`` with §6.4's elasticity ``e``; when ``e`` is non-increasing (uniform,
  exponential, gamma and Weibull with shape ``<= 1``...) ``ln(U - g)`` is concave in ``k``: an
  inverted U whose integer maximiser ``k*`` is the floor or the ceiling of the real stationary
  point ``k_c``, where ``e(B / rho^{k_c}) = ln(1/phi) / ln(1/rho)``. ``k*`` depends on ``B / L``
  only (scale). Closed forms: point mass, uniform, exponential (`closed_form_best_generation`).
* Crossover time. A stream of sessions with i.i.d. lengths ``L_s ~ F``; the memory at time ``t``
  holds one unit per session; the context is packed most recent unit first with prefix packing, so
  a query about the session of age ``n - 1`` is answered from its unit iff the ``n`` most recent
  units fit: ``S_n = L_t + ... + L_{t-n+1} <= B`` raw, ``rho S_n <= B`` after one pass of ``o`` on
  every unit. With ``F_n`` the law of ``S_n`` and ``w_t(n)`` the age law,
  ``dU_t(B) = (a - g) sum_n w_t(n) (phi F_n(B / rho) - F_n(B))``; the crossover time ``t*_o(B)``
  is the first ``t`` with ``dU_t(B) > 0``. It depends on ``B / L`` (scale), on ``phi`` and
  ``rho``, not on ``a`` or ``g``. Age laws: ``uniform`` (every stored session equally likely)
  and ``oldest`` (the query needs the first session, so the whole memory: §6's ``B*`` along
  time with ``L = Lambda_t``).

References: docs/model.md §10, §6; docs/timeline.md.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from retcon.errors import InputError, Spell, check_choice
from theory import _timeline_formulas as OF
from theory._checks import _short, check_budgets, check_int, check_model, check_numbers
from theory._dists import LengthDist, check_dist

#: How the age of a query's evidence is drawn at time ``t`` (module docstring).
AGE_LAWS = ("uniform", "oldest")
#: Families with a closed-form law of the sum of ``n`` lengths (`sum_cdf`).
SUM_FAMILIES = ("point", "uniform", "exponential", "gamma")
#: The most lengths `sum_cdf` sums (and so the longest horizon of `stream_curve`): a bound on the
#: work of one call. The uniform's Irwin-Hall sum runs in high precision, about 3 s at 2000.
_MAX_SUM = 100_000
_MAX_IRWIN_HALL = 2000
#: The most passes `best_generation` evaluates (``max_generation``).
_MAX_PASSES = 100_000


def check_age_law(age_law, spell: Spell) -> str:
    """``age_law`` when it is one of `AGE_LAWS`; else `InputError` naming the argument."""
    if not isinstance(age_law, str):
        raise InputError(
            f"{spell.lead('age_law')} must be one of {', '.join(AGE_LAWS)}; got {_short(age_law)}."
        )
    return check_choice(spell.lead("age_law"), age_law, AGE_LAWS)


def _check_timeline(dist, compress_ratio, fidelity, acc_raw, acc_guess, spell: Spell):
    check_dist(dist, spell)
    m = check_model(compress_ratio, fidelity, acc_raw, acc_guess, spell)
    if not 0.0 < m.fidelity < 1.0:
        raise InputError(
            f"{spell.lead('fidelity')} must be in (0, 1) for repeated passes (a pass that loses "
            f"nothing is never worse); got {m.fidelity:g}."
        )
    return m


def _check_generations(generations, spell: Spell) -> np.ndarray:
    arr = np.asarray(generations)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise InputError(
            f"{spell.lead('generations')} must be a non-empty 1-D list of integers >= 0; "
            f"got {generations!r}."
        )
    if (arr < 0).any():
        raise InputError(f"{spell.lead('generations')} must be >= 0; got {int(arr.min())}.")
    return arr.astype(np.int64)


def generation_utility(
    dist: LengthDist, budgets, generations, *, compress_ratio, fidelity, acc_raw, acc_guess
) -> np.ndarray:
    """``U(B, k)`` of a query whose evidence went through ``k`` passes (H10, single cluster).

    Args:
      dist: law of the cluster's raw length ``L`` (tokens).
      budgets: ``(m,)`` budgets in tokens. generations: ``(n,)`` integers ``k >= 0``.
      compress_ratio, fidelity, acc_raw, acc_guess: ``rho``, ``phi`` (per pass, in (0, 1)), ``a``, ``g``.

    Returns:
      ``(m, n)`` utilities.

    References: docs/model.md §10.
    """
    m = _check_timeline(
        dist, compress_ratio, fidelity, acc_raw, acc_guess, Spell("generation_utility")
    )
    b = check_budgets(budgets, Spell("generation_utility")).reshape(-1)
    ks = _check_generations(generations, Spell("generation_utility"))
    fit = dist.cdf(b[:, None] / m.compress_ratio ** ks[None, :].astype(np.float64))
    return OF.generation_utility(fit, m.fidelity, ks[None, :], m.acc_raw, m.acc_guess)


class BestGeneration(NamedTuple):
    """The best number of passes per budget.

    Attributes:
      best_generation: ``(m,)`` integer ``k*`` (the smallest maximiser).
      stationary: ``(m,)`` real ``k_c`` of the closed form (NaN where it has none or is ``<= 0``).
      utility: ``(m,)`` ``U(B, k*)``.
    """

    best_generation: np.ndarray
    stationary: np.ndarray
    utility: np.ndarray


def best_generation(
    dist: LengthDist,
    budgets,
    *,
    compress_ratio,
    fidelity,
    acc_raw,
    acc_guess,
    max_generation: int = 64,
) -> BestGeneration:
    """``k*(B)`` by evaluating ``U(B, k)`` for ``k = 0 .. max_generation`` (the definition).

    References: docs/model.md §10.
    """
    check_int(Spell("best_generation").lead("max_generation"), max_generation, 0, _MAX_PASSES)
    ks = np.arange(max_generation + 1)
    u = generation_utility(
        dist,
        budgets,
        ks,
        compress_ratio=compress_ratio,
        fidelity=fidelity,
        acc_raw=acc_raw,
        acc_guess=acc_guess,
    )
    best = np.argmax(u, axis=1)
    return BestGeneration(best, np.full(best.shape, np.nan), u[np.arange(best.size), best])


def closed_form_best_generation(
    dist: LengthDist, budgets, *, compress_ratio, fidelity, acc_raw, acc_guess
) -> BestGeneration:
    """``k*(B)`` from the closed forms of `theory.timeline_symbolic` (point, uniform, exponential).

    ``k_c`` is the real stationary point (the kink for the uniform law, the first fit for the
    point mass); ``k*`` is the better of ``floor(k_c)`` and ``ceil(k_c)`` (``ln(U - g)`` is concave
    in ``k`` for these laws), ``0`` when ``k_c <= 0`` or when ``U`` falls from the first pass on
    (``phi <= rho`` for the uniform and exponential laws).

    Raises:
      InputError: another family (use `best_generation`).

    References: docs/model.md §10.
    """
    m = _check_timeline(
        dist, compress_ratio, fidelity, acc_raw, acc_guess, Spell("closed_form_best_generation")
    )
    b = check_budgets(budgets, Spell("closed_form_best_generation")).reshape(-1)
    rho, phi = m.compress_ratio, m.fidelity
    p = dist.params
    if dist.name == "point":
        k_c = OF.fit_generation(p["length"], b, rho)
        k = np.maximum(np.ceil(k_c), 0.0).astype(np.int64)

        def fits(kk):  # the comparison dist.cdf makes, so float edges agree with the definition
            return b / rho ** kk.astype(np.float64) >= p["length"]

        k = np.where((k > 0) & fits(np.maximum(k - 1, 0)), k - 1, k)
        k = np.where(fits(k), k, k + 1)
    elif dist.name in ("uniform", "exponential"):
        if phi <= rho:
            k_c = np.full(b.shape, np.nan)
            k = np.zeros(b.shape, np.int64)
        else:
            if dist.name == "uniform":
                k_c = OF.fit_generation(p["max"], b, rho)
            else:
                k_c = OF.exponential_best_generation(p["mean"], b, phi, rho)
            lo = np.maximum(np.floor(k_c), 0.0).astype(np.int64)
            hi = np.maximum(np.ceil(k_c), 0.0).astype(np.int64)

            def u_at(kk):
                return OF.generation_utility(
                    dist.cdf(b / rho ** kk.astype(np.float64)), phi, kk, m.acc_raw, m.acc_guess
                )

            k = np.where(u_at(hi) > u_at(lo), hi, lo)
    else:
        raise InputError(
            f"closed_form_best_generation: no closed form for the {dist.name} law "
            "(point, uniform, exponential); use best_generation."
        )
    k_c = np.where(k_c > 0, k_c, np.nan)
    u = OF.generation_utility(
        dist.cdf(b / rho ** k.astype(np.float64)), phi, k, m.acc_raw, m.acc_guess
    )
    return BestGeneration(k, np.asarray(k_c, np.float64), u)


def sum_cdf(dist: LengthDist, n, x) -> np.ndarray:
    """``F_n(x) = P(L_1 + ... + L_n <= x)`` for i.i.d. lengths of ``dist`` (broadcast ``n``, ``x``).

    Point mass ``n l <= x``; exponential and gamma: a gamma law of shape ``n`` (``n`` times the
    shape); uniform: the Irwin-Hall law, summed exactly in high precision (``mpmath``).

    Raises:
      InputError: a family without a closed-form sum law (``SUM_FAMILIES``).

    References: docs/model.md §10.
    """
    spell = Spell("sum_cdf")
    check_dist(dist, spell)
    nf = check_numbers(spell.lead("n"), n)
    cap = _MAX_IRWIN_HALL if dist.name == "uniform" else _MAX_SUM
    bad = ~((nf == np.round(nf)) & (nf >= 1) & (nf <= cap))
    if bad.any():
        raise InputError(
            f"{spell.lead('n')} must be integers in [1, {cap}] for {dist.name} lengths; "
            f"got {nf[bad].flat[0]:g}."
        )
    xx = check_numbers(spell.lead("x"), x)
    if np.isnan(xx).any():
        raise InputError(f"{spell.lead('x')} must be numbers (tokens), not NaN; got nan.")
    try:
        nn, xx = np.broadcast_arrays(nf.astype(np.int64), xx)
    except ValueError:
        raise InputError(
            f"{spell.lead('n')} and x must broadcast together; got shapes {nf.shape} and {xx.shape}."
        ) from None
    p = dist.params
    if dist.name == "point":
        return (nn * p["length"] <= xx).astype(np.float64)
    if dist.name in ("exponential", "gamma"):
        import scipy.special as sc

        shape = 1.0 if dist.name == "exponential" else p["shape"]
        scale = p["mean"] if dist.name == "exponential" else p["scale"]
        return np.asarray(sc.gammainc(nn * shape, np.maximum(xx, 0.0) / scale), np.float64)
    if dist.name == "uniform":
        import mpmath

        out = np.empty(xx.shape, np.float64)
        for idx in np.ndindex(xx.shape):
            out[idx] = _irwin_hall_cdf(int(nn[idx]), xx[idx] / p["max"], mpmath)
        return out
    raise InputError(
        f"sum_cdf: the {dist.name} law has no closed-form sum; use one of {', '.join(SUM_FAMILIES)}."
    )


def _irwin_hall_cdf(n: int, z: float, mpmath) -> float:
    """``P(U_1 + ... + U_n <= z)`` for standard uniforms: ``sum_j (-1)^j C(n, j) (z - j)^n / n!``."""
    if z <= 0:
        return 0.0
    if z >= n:
        return 1.0
    with mpmath.workdps(30 + 2 * n):
        zz = mpmath.mpf(z)
        total = mpmath.fsum(
            (-1) ** j * mpmath.binomial(n, j) * (zz - j) ** n for j in range(math.floor(z) + 1)
        )
        return float(total / mpmath.factorial(n))


class StreamCurve(NamedTuple):
    """Utilities along time at each budget (shape ``(m, T)``: budgets x times ``1..T``).

    Attributes:
      times: ``(T,)`` sessions ``1..T``.
      u_ret, u_op: ``U_{B,t}`` under ``retain-all`` and with every unit passed once through ``o``.
      delta: ``u_op - u_ret``.
    """

    times: np.ndarray
    u_ret: np.ndarray
    u_op: np.ndarray
    delta: np.ndarray


def _age_weights(age_law: str, horizon: int) -> np.ndarray:
    """``w[t - 1, n - 1] = P(n units must fit | time t)``, shape ``(T, T)``."""
    t = np.arange(1, horizon + 1)[:, None]
    n = np.arange(1, horizon + 1)[None, :]
    if age_law == "uniform":
        return np.where(n <= t, 1.0 / t, 0.0)
    return (n == t).astype(np.float64)


def stream_curve(
    dist: LengthDist,
    budgets,
    horizon: int,
    *,
    age_law: str = "uniform",
    compress_ratio,
    fidelity,
    acc_raw,
    acc_guess,
) -> StreamCurve:
    """``U_{B,t}`` of ``retain-all`` and of one pass of ``o`` on every unit, ``t = 1 .. horizon``.

    Args:
      dist: session-length law (a family of ``SUM_FAMILIES``).
      budgets: ``(m,)`` budgets in tokens. horizon: number of sessions ``T >= 1``.
      age_law: ``uniform`` or ``oldest`` (module docstring).

    Returns:
      StreamCurve with ``(m, T)`` arrays.

    References: docs/model.md §10.
    """
    m = _check_timeline(dist, compress_ratio, fidelity, acc_raw, acc_guess, Spell("stream_curve"))
    check_age_law(age_law, Spell("stream_curve"))
    cap = _MAX_IRWIN_HALL if dist.name == "uniform" else _MAX_SUM
    check_int(Spell("stream_curve").lead("horizon"), horizon, 1, cap)
    b = check_budgets(budgets, Spell("stream_curve")).reshape(-1)
    n = np.arange(1, int(horizon) + 1)
    f_raw = sum_cdf(dist, n[None, :], b[:, None])  # (m, T) over n
    f_op = sum_cdf(dist, n[None, :], b[:, None] / m.compress_ratio)
    w = _age_weights(age_law, int(horizon))  # (T, T)
    fit_raw = f_raw @ w.T  # (m, T) over t
    fit_op = f_op @ w.T
    a, g = m.acc_raw, m.acc_guess
    u_ret = OF.generation_utility(fit_raw, m.fidelity, 0, a, g)
    u_op = OF.generation_utility(fit_op, m.fidelity, 1, a, g)
    return StreamCurve(n, u_ret, u_op, u_op - u_ret)


class CrossoverTime(NamedTuple):
    """The crossover time per budget.

    Attributes:
      crossover_time: ``(m,)`` first session ``t`` with ``dU_t(B) > 0`` (float; NaN when none up
        to the horizon).
      status: ``(m,)`` ``"found"`` or ``"none"``.
    """

    crossover_time: np.ndarray
    status: np.ndarray


def first_positive_time(delta) -> np.ndarray:
    """First time ``1..T`` where ``delta[..., t - 1] > 0``; NaN where there is none. MODEL §10."""
    d = check_numbers("first_positive_time: delta", delta)
    if d.ndim < 1 or d.shape[-1] == 0:
        raise InputError(
            f"first_positive_time: delta must have a time axis (shape (..., T >= 1)); got shape {d.shape}."
        )
    pos = d > 0
    first = np.argmax(pos, axis=-1) + 1.0
    return np.where(pos.any(-1), first, np.nan)


def crossover_time(
    dist: LengthDist,
    budgets,
    *,
    age_law: str = "uniform",
    compress_ratio,
    fidelity,
    acc_raw,
    acc_guess,
    horizon: int = 1000,
) -> CrossoverTime:
    """``t*_o(B)``: the first session from which one pass of ``o`` on every unit beats ``retain-all``.

    Evaluates `stream_curve` up to ``horizon`` sessions (the definition). For the uniform age law,
    ``t dU_t / (a - g)`` is a running sum of terms that are negative, then positive, then vanish,
    so once positive ``dU_t`` stays positive. References: docs/model.md §10.
    """
    c = stream_curve(
        dist,
        budgets,
        horizon,
        age_law=age_law,
        compress_ratio=compress_ratio,
        fidelity=fidelity,
        acc_raw=acc_raw,
        acc_guess=acc_guess,
    )
    # relative tolerance: a difference at rounding level is not a crossing
    tol = 1e-12 * (np.abs(c.u_op) + np.abs(c.u_ret))
    t = first_positive_time(np.where(np.abs(c.delta) > tol, c.delta, 0.0))
    return CrossoverTime(t, np.where(np.isfinite(t), "found", "none"))


def point_mass_crossover_time(length: float, budget: float, *, compress_ratio, fidelity, age_law):
    """Closed-form ``t*_o(B)`` for sessions of fixed length ``l`` (``None`` when there is none).

    With ``n0`` the number of raw sessions that fit (``n l <= B``) and ``n1`` the number of
    consolidated ones (``n l <= B / rho``):

    * ``oldest``: ``dU_t > 0`` iff ``n0 < t <= n1``, so ``t* = n0 + 1`` when ``n0 < n1``.
    * ``uniform``: ``t dU_t / (a - g) = phi min(t, n1) - min(t, n0)``: negative up to ``n0``,
      then ``phi t - n0``, then the constant ``phi n1 - n0``; so ``t* = floor(n0 / phi) + 1`` when
      ``phi n1 > n0`` (and none otherwise).

    Depends on ``B / l``, ``rho`` and ``phi`` only. References: docs/model.md §10.
    """
    spell = Spell("point_mass_crossover_time")
    check_age_law(age_law, spell)
    for name, value in (
        ("length", length),
        ("compress_ratio", compress_ratio),
        ("fidelity", fidelity),
    ):
        if not (isinstance(value, numbers.Real) and math.isfinite(value) and float(value) > 0):
            raise InputError(
                f"{spell.lead(name)} must be a finite number > 0; got {_short(value)}."
            )
    if not (isinstance(budget, numbers.Real) and math.isfinite(budget) and float(budget) >= 0):
        raise InputError(
            f"{spell.lead('budget')} must be a finite number >= 0; got {_short(budget)}."
        )
    most = budget / length / compress_ratio
    if not most <= _MAX_SESSIONS:
        raise InputError(
            f"{spell.lead('budget')} / (length * compress_ratio) must be at most {_MAX_SESSIONS:g} "
            f"sessions; got {most!r}."
        )
    n0 = _count_fitting(length, budget)
    n1 = _count_fitting(length, budget / compress_ratio)
    if age_law == "oldest":
        return n0 + 1 if n0 < n1 else None
    if not fidelity * n1 > n0:
        return None
    t = math.floor(n0 / fidelity) + 1
    while fidelity * t <= n0:  # float edges of the division: the definition decides
        t += 1
    while t - 1 > n0 and fidelity * (t - 1) > n0:
        t -= 1
    return t


_MAX_SESSIONS = 2.0**52  # sessions that fit: beyond it the integer counts lose exactness


def _count_fitting(length: float, cap: float) -> int:
    """Largest ``n >= 0`` with ``n * length <= cap`` (the comparison `sum_cdf` makes)."""
    n = math.floor(cap / length)
    while (n + 1) * length <= cap:
        n += 1
    while n > 0 and n * length > cap:
        n -= 1
    return n
