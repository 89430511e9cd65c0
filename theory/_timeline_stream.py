"""Utility against the number of passes along a stream (MODEL §10), for any per-pass chain.

`theory.stream_curve` compares raw memory with one pass of ``o`` on every unit. This module
gives the same stream quantity for a unit passed ``k`` times, with the pass chain given as two
arrays instead of H10's powers, so that one formula serves both H10 (``support[k] = phi^k``,
``ratio[k] = rho^k``) and a chain measured pass by pass on real text (``support[k] = S_k``, the
share of answers surviving ``k`` passes; ``ratio[k] = R_k``, the length after ``k`` passes over
the raw length), whose loss may level off (docs/timeline.md).

At time ``t`` with every unit passed ``k`` times, a query about the session of age ``n - 1`` is
answered from its unit iff the ``n`` most recent units fit: ``R_k S_n <= B`` (prefix packing,
most recent first). So

    U_t(B, k) = g + (a - g) S_k sum_n w_t(n) F_n(B / R_k),

the single-cluster ``U(B, k)`` of `theory.generation_utility` with ``F`` replaced by the age-law
mixture of the ``n``-session laws ``F_n`` (`theory.sum_cdf`). ``k = 0, 1`` with H10's chain
recovers `theory.stream_curve`'s ``u_ret`` and ``u_op``. The best number of passes ``k*_t(B)`` is
the smallest maximiser over the chain; it does not depend on ``a`` or ``g`` (for ``a > g``).

References: docs/model.md §10; docs/timeline.md ("Prediction over time").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from retcon.errors import InputError, Spell
from theory import _timeline_formulas as OF
from theory._checks import check_budgets, check_finite, check_int, check_numbers, check_reader
from theory._dists import LengthDist, check_dist
from theory._timeline import _MAX_IRWIN_HALL, _MAX_SUM, _age_weights, check_age_law, sum_cdf

#: The most passes `h10_chain` builds: a bound on the work of one call.
_MAX_PASSES = 100_000


def _check_chain(support, ratio, spell: Spell) -> tuple[np.ndarray, np.ndarray]:
    s = check_numbers(spell.lead("support"), support)
    r = check_numbers(spell.lead("ratio"), ratio)
    if s.ndim != 1 or s.size == 0 or r.shape != s.shape:
        raise InputError(
            f"{spell.lead('support')} and ratio must be 1-D arrays of the same length >= 1 "
            f"(entry k: after k passes); got shapes {s.shape} and {r.shape}."
        )
    if not (np.isfinite(s).all() and (s >= 0).all() and (s <= 1).all()):
        raise InputError(f"{spell.lead('support')} must lie in [0, 1]; got {s.tolist()}.")
    if not (np.isfinite(r).all() and (r > 0).all()):
        raise InputError(f"{spell.lead('ratio')} must be positive and finite; got {r.tolist()}.")
    return s, r


def h10_chain(compress_ratio: float, fidelity: float, passes: int):
    """H10's chain ``(support, ratio) = (phi^k, rho^k)`` for ``k = 0 .. passes``. MODEL §10."""
    spell = Spell("h10_chain")
    rho = check_finite(spell.lead("compress_ratio"), compress_ratio, 0.0)
    phi = check_finite(spell.lead("fidelity"), fidelity, 0.0, low_open=False)
    k = np.arange(check_int(spell.lead("passes"), passes, 0, _MAX_PASSES) + 1, dtype=np.float64)
    with np.errstate(over="ignore"):
        support, ratio = phi**k, rho**k
    for arg, chain in (("fidelity", support), ("compress_ratio", ratio)):
        if not np.isfinite(chain).all():
            raise InputError(
                f"{spell.lead(arg)} to the power passes ({passes}) overflows a float; "
                f"got {arg}={chain[1]:g}."
            )
    return support, ratio


def stream_generation_utility(
    dist: LengthDist,
    budgets,
    time: int,
    *,
    support,
    ratio,
    age_law: str = "uniform",
    acc_raw: float = 1.0,
    acc_guess: float = 0.0,
) -> np.ndarray:
    """``U_t(B, k)`` at session ``t`` with every unit passed ``k`` times (module docstring).

    Args:
      dist: session-length law (a family of ``theory.SUM_FAMILIES``).
      budgets: ``(m,)`` budgets in tokens. time: the session ``t >= 1``.
      support, ratio: ``(n,)`` the chain after ``k = 0 .. n - 1`` passes (`h10_chain` for H10).
      age_law: ``uniform`` or ``oldest`` (`theory.stream_curve`).
      acc_raw, acc_guess: ``a`` and ``g`` of §2's reader.

    Returns:
      ``(m, n)`` utilities.

    References: docs/model.md §10.
    """
    spell = Spell("stream_generation_utility")
    check_dist(dist, spell)
    s, r = _check_chain(support, ratio, spell)
    check_age_law(age_law, spell)
    cap = _MAX_IRWIN_HALL if dist.name == "uniform" else _MAX_SUM
    check_int(spell.lead("time"), time, 1, cap)
    _, a, g = check_reader(1.0, acc_raw, acc_guess, spell)
    b = check_budgets(budgets, spell).reshape(-1)
    n = np.arange(1, int(time) + 1)
    w = _age_weights(age_law, int(time))[-1]  # (t,) the age law at time t
    fit = sum_cdf(dist, n[None, None, :], b[:, None, None] / r[None, :, None]) @ w  # (m, n)
    return OF.generation_utility(fit, s[None, :], 1, a, g)


class StreamBestGeneration(NamedTuple):
    """The best number of passes at one session, per budget.

    Attributes:
      best_generation: ``(m,)`` the smallest maximiser ``k*`` over the chain.
      utility: ``(m, n)`` ``U_t(B, k)`` for ``k = 0 .. n - 1``.
    """

    best_generation: np.ndarray
    utility: np.ndarray


def stream_best_generation(
    dist: LengthDist, budgets, time: int, *, support, ratio, age_law: str = "uniform"
) -> StreamBestGeneration:
    """``k*_t(B)``: the number of passes of every unit that maximises `stream_generation_utility`.

    Independent of the reader's ``a > g``, so it is evaluated with ``a = 1, g = 0``.
    References: docs/model.md §10.
    """
    u = stream_generation_utility(
        dist, budgets, time, support=support, ratio=ratio, age_law=age_law
    )
    # relative tolerance: utilities equal up to rounding tie, and the smaller k wins
    top = u.max(axis=1, keepdims=True)
    best = np.argmax(u >= top - 1e-12 * np.maximum(top, 1e-300), axis=1)
    return StreamBestGeneration(best.astype(np.int64), u)
