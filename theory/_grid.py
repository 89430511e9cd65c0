"""The crossover of a ``dU(B)`` curve sampled on a budget grid: the one estimator every command uses.

Definition (docs/model.md §6.4, "crossover of a sampled curve"). Given budgets
``b_1 < ... < b_m`` and values ``d_1, ..., d_m`` of ``dU_o``:

* values that are not finite (a budget with no data) and exact zeros (a budget where both actions
  give the same outcome, e.g. nothing fits under either) are passed over: a sign change is a pair
  of consecutive *nonzero* values of opposite sign;
* each sign change between ``b_i`` and ``b_j`` has one root, interpolated linearly in ``log B``:
  ``log B = log b_i + (log b_j - log b_i) d_i / (d_i - d_j)``; its direction is ``down``
  (``+ -> -``: consolidation stops paying off) or ``up`` (``- -> +``);
* status, the same rule as ``theory.crossover`` for the continuous model: ``none`` without sign
  change; ``unique`` when there is exactly one and it is ``down`` (``dU > 0`` below it and ``< 0``
  above, Proposition 2.4); ``multiple`` otherwise;
* ``crossover_budget`` is the largest ``down`` root: the budget above which consolidation never
  wins again on the grid. It is what ``theory.crossover`` reports for ``multiple`` too, so a curve
  sampled from the exact model gives the same number (up to interpolation) as the exact root.

References: docs/model.md §6.4 (uniqueness), §6.7 (what makes it non-unique).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from retcon.errors import InputError
from theory._checks import _short, check_numbers, check_range

#: The largest budget `octave_grid` builds (tokens, an exact int64 and float64 count) and the most
#: budgets it returns: bounds on one call.
_MAX_TOKENS = float(2**53)
_MAX_GRID = 1_000_000

#: Status names, shared with ``theory.crossover``.
STATUS_NONE, STATUS_UNIQUE, STATUS_MULTIPLE = "none", "unique", "multiple"


class GridCrossover(NamedTuple):
    """Crossover of curves sampled on one budget grid (leading axes ``...`` are curves).

    Attributes:
      crossover_budget: ``(...)`` the largest ``+ -> -`` root in tokens; NaN when there is none.
      status: ``(...)`` ``"none"``, ``"unique"`` or ``"multiple"`` (str array).
      n_sign_changes: ``(...)`` number of sign changes (both directions).
      roots: ``(..., m - 1)`` the root of the sign change that ends at budget ``j + 1`` (it lies
        between the previous nonzero value's budget and ``b_{j+1}``), NaN where none ends there.
      direction: ``(..., m - 1)`` ``-1`` for a ``+ -> -`` change ending there, ``+1`` for
        ``- -> +``, ``0`` for none.
    """

    crossover_budget: np.ndarray
    status: np.ndarray
    n_sign_changes: np.ndarray
    roots: np.ndarray
    direction: np.ndarray


def crossover_status(directions) -> str:
    """Status of a curve from the directions of its sign changes, in budget order.

    Args:
      directions: sequence of ``-1`` (``+ -> -``) and ``+1`` (``- -> +``).

    Returns:
      ``"none"``, ``"unique"`` or ``"multiple"`` (module docstring).
    """
    d = list(directions)
    if not d:
        return STATUS_NONE
    if len(d) == 1 and d[0] < 0:
        return STATUS_UNIQUE
    return STATUS_MULTIPLE


def sign_changes(values) -> list[tuple[int, int, int]]:
    """Sign changes of a 1-D sequence over its nonzero finite entries.

    Args:
      values: ``(m,)`` numbers; zeros and non-finite entries are passed over.

    Returns:
      ``[(i, j, direction)]``: consecutive nonzero finite entries ``i < j`` of opposite sign, with
      ``direction`` ``-1`` for ``+ -> -`` and ``+1`` for ``- -> +``.
    """
    v = check_numbers("sign_changes: values", values)
    if v.ndim != 1:
        raise InputError(f"sign_changes: values must be 1-D; got shape {v.shape}.")
    idx = np.flatnonzero(np.isfinite(v) & (v != 0))
    s = np.sign(v[idx])
    return [
        (int(idx[k]), int(idx[k + 1]), int(s[k + 1]))
        for k in range(len(idx) - 1)
        if s[k] != s[k + 1]
    ]


def grid_crossover(budgets, delta) -> GridCrossover:
    """The crossover budget of ``dU(B)`` curves sampled on a budget grid (module docstring).

    Vectorized over leading axes, so a bootstrap passes all its resampled curves at once.

    Args:
      budgets: ``(m,)`` strictly increasing budgets in tokens (> 0).
      delta: ``(..., m)`` values of ``dU_o`` at those budgets; NaN marks a budget without data.

    Returns:
      ``GridCrossover`` with leading shape ``delta.shape[:-1]``.

    References: docs/model.md §6.4.
    """
    b = check_numbers("grid_crossover: budgets", budgets)
    d = check_numbers("grid_crossover: delta", delta)
    if b.ndim != 1 or b.size < 1:
        raise InputError(f"grid_crossover: budgets must be 1-D and non-empty; got shape {b.shape}.")
    if not (np.all(np.isfinite(b)) and np.all(b > 0) and np.all(np.diff(b) > 0)):
        raise InputError(
            f"grid_crossover: budgets must be positive, finite and strictly increasing; got {b.tolist()}."
        )
    if d.ndim < 1 or d.shape[-1] != b.size:
        raise InputError(
            f"grid_crossover: delta must have last axis of length {b.size} (one value per "
            f"budget); got shape {d.shape}."
        )
    m = b.size
    s = np.where(np.isfinite(d), np.sign(np.nan_to_num(d)), 0.0)
    pos = np.broadcast_to(np.arange(m), d.shape)
    # index of the last nonzero finite value at or before each position (-1 when none)
    last_nz = np.maximum.accumulate(np.where(s != 0, pos, -1), axis=-1)
    prev = np.concatenate([np.full(d.shape[:-1] + (1,), -1), last_nz[..., :-1]], axis=-1)
    prev_c = np.clip(prev, 0, None)
    prev_s = np.take_along_axis(s, prev_c, axis=-1)
    change = (s != 0) & (prev >= 0) & (prev_s != s)
    logb = np.log(b)
    di = np.take_along_axis(np.nan_to_num(d), prev_c, axis=-1)
    dj = np.nan_to_num(d)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        span = logb - logb[prev_c]
        step = span * di / (di - dj)
        # span * di can pass the float range when |dU| is huge (the fuzz found 1.3e305); the
        # weight di / (di - dj) is in [0, 1] there, so take it first (elsewhere the order above
        # is kept, bit for bit).
        step = np.where(np.isinf(span * di), span * (di / (di - dj)), step)
        root = np.exp(logb[prev_c] + step)
    roots = np.where(change, root, np.nan)[..., 1:]
    direction = np.where(change, s.astype(np.int8), 0)[..., 1:]
    n = change.sum(-1)
    if m == 1:  # a single budget has no sign change
        nan = np.full(d.shape[:-1], np.nan)
        return GridCrossover(nan, np.full(d.shape[:-1], STATUS_NONE), n, roots, direction)
    down = direction < 0
    last_down = (m - 2) - np.argmax(down[..., ::-1], axis=-1)
    b_star = np.where(
        down.any(-1), np.take_along_axis(roots, last_down[..., None], -1)[..., 0], np.nan
    )
    first = np.take_along_axis(direction, np.argmax(direction != 0, axis=-1)[..., None], -1)
    status = np.where(
        n == 0,
        STATUS_NONE,
        np.where((n == 1) & (first[..., 0] < 0), STATUS_UNIQUE, STATUS_MULTIPLE),
    )
    return GridCrossover(np.asarray(b_star, np.float64), status, n, roots, direction)


class CrossoverInterval(NamedTuple):
    """A sampled curve's crossover with a percentile interval over resampled curves.

    Attributes (leading shape ``...``, one per curve):
      crossover_budget: ``grid_crossover`` of the point curve; NaN when it has no ``+ -> -`` root.
      status: the point curve's status (``"none"``, ``"unique"``, ``"multiple"``).
      lower, upper: the interval's ends in tokens; ``0`` (below the grid) and ``inf`` (above it)
        mark an unbounded end; NaN when the point curve has no crossover.
      found_share: the share of resampled curves that have a ``+ -> -`` root on the grid.
    """

    crossover_budget: np.ndarray
    status: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    found_share: np.ndarray

    def entry(self, i) -> dict:
        """Curve ``i``'s crossover as JSON-ready floats, keyed ``crossover_time``, ``lower``,
        ``upper``, ``status``, ``found_share`` (the crossover is a time on a timeline's grid)."""
        return {
            "crossover_time": float(self.crossover_budget[i]),
            "lower": float(self.lower[i]),
            "upper": float(self.upper[i]),
            "status": str(self.status[i]),
            "found_share": float(self.found_share[i]),
        }


def crossover_replicates(budgets, replicates) -> np.ndarray:
    """``grid_crossover`` of every resampled curve, with the curves that have no root placed.

    A resampled ``dU`` curve without a ``+ -> -`` root on the grid crosses outside it: below the
    smallest budget (``0``) when it is nowhere positive, above the largest (``inf``) otherwise
    (consolidation still ahead somewhere at the loosest budgets it wins). Dropping those curves
    instead would narrow the interval towards the grid's middle.

    Args:
      budgets: ``(m,)`` strictly increasing budgets.
      replicates: ``(..., m)`` resampled curves (NaN marks a budget without data).

    Returns:
      ``(...)`` crossover budgets in tokens, in ``[0, inf]``.

    References: docs/model.md §6.4.
    """
    reps = np.asarray(replicates, dtype=np.float64)
    return _place_rootless(reps, grid_crossover(budgets, reps).crossover_budget)


def _place_rootless(reps: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """``roots`` with each NaN (a curve without a ``+ -> -`` root) put at 0 or inf."""
    never_pos = ~np.any(np.nan_to_num(reps, nan=-1.0) > 0, axis=-1)
    return np.where(np.isfinite(roots), roots, np.where(never_pos, 0.0, np.inf))


def crossover_interval(budgets, point, replicates, *, level: float = 0.95) -> CrossoverInterval:
    """The crossover of ``point`` with a percentile interval from resampled curves: the one rule.

    The interval's ends are order statistics of ``crossover_replicates`` (``lower`` rounds down,
    ``higher`` up, so an end is always a resampled crossover, ``0`` or ``inf``), widened to hold
    the point. Every command that reports a crossover interval (simulation, paper checks, real
    data, the identified reader's prediction) calls this function.

    Args:
      budgets: ``(m,)`` strictly increasing budgets.
      point: ``(..., m)`` the curves themselves.
      replicates: ``(R, ..., m)`` resampled curves (the bootstrap axis first); ``R`` may be 0.
      level: two-sided coverage, in (0, 1).

    Returns:
      ``CrossoverInterval`` of leading shape ``...``.

    References: docs/model.md §6.4; Efron & Tibshirani (1993), ch. 13 (percentile interval).
    """
    check_range("crossover_interval: level", level, 0, 1)
    p = grid_crossover(budgets, point)
    b_star = np.asarray(p.crossover_budget, dtype=np.float64)
    reps = np.asarray(replicates, dtype=np.float64)
    if reps.ndim != b_star.ndim + 2 or reps.shape[1:] != np.shape(point):
        raise InputError(
            f"crossover_interval: replicates must have shape (R, *{np.shape(point)}); "
            f"got {reps.shape}."
        )
    nan = np.full(b_star.shape, np.nan)
    if reps.shape[0] == 0:
        return CrossoverInterval(b_star, p.status, nan, nan.copy(), nan.copy())
    roots = grid_crossover(budgets, reps).crossover_budget  # (R, ...), NaN without a root
    r = _place_rootless(reps, roots)
    alpha = (1.0 - level) / 2.0
    lo = np.quantile(r, alpha, axis=0, method="lower")
    hi = np.quantile(r, 1.0 - alpha, axis=0, method="higher")
    defined = np.isfinite(b_star)
    lower = np.where(defined, np.minimum(lo, np.where(defined, b_star, 0.0)), np.nan)
    upper = np.where(defined, np.maximum(hi, np.where(defined, b_star, 0.0)), np.nan)
    found = np.isfinite(roots).mean(axis=0)
    return CrossoverInterval(b_star, p.status, lower, upper, np.asarray(found, dtype=np.float64))


def octave_grid(low: float, high: float, per_octave: int) -> tuple[int, ...]:
    """A geometric budget grid in whole tokens: ``per_octave`` budgets per doubling.

    Args:
      low, high: the smallest and largest budget (tokens, ``0 < low < high``); ``high / low``
        should be a power of 2 so that both ends are on the grid.
      per_octave: budgets per factor 2 (``>= 1``): ``low * 2 ** (k / per_octave)``, rounded.

    Returns:
      the budgets, strictly increasing integers (rounding duplicates dropped).

    References: docs/model.md §6.4 (the crossover of a sampled curve is interpolated in ``log B``;
    its bias against the continuous ``B*`` falls with the square of the spacing).
    """
    low = check_range("octave_grid: low", low, 0.0, _MAX_TOKENS)
    high = check_range("octave_grid: high", high, 0.0, _MAX_TOKENS, high_open=False)
    if not low < high:
        raise InputError(f"octave_grid: need 0 < low < high; got low={low:g}, high={high:g}.")
    if (
        isinstance(per_octave, bool)
        or not isinstance(per_octave, (int, float, np.integer, np.floating))
        or not np.isfinite(per_octave)
        or int(per_octave) != per_octave
        or per_octave < 1
    ):
        raise InputError(
            f"octave_grid: per_octave must be an integer >= 1; got {_short(per_octave)}."
        )
    steps = np.log2(high / low) * per_octave if high / low < np.inf else np.inf
    if not steps < _MAX_GRID:
        raise InputError(
            f"octave_grid: per_octave ({per_octave}) from low={low:g} to high={high:g} asks for "
            f"{steps + 1:.3g} budgets; at most {_MAX_GRID} are built."
        )
    n = int(np.floor(steps + 1e-9))
    b = np.round(low * 2.0 ** (np.arange(n + 1) / per_octave)).astype(np.int64)
    return tuple(int(x) for x in np.unique(b))


def format_crossover(budget, lower=None, upper=None, status: str = "none") -> str:
    """``"528 [466, 615]"`` for tables; ``"none (<status>)"`` without a crossover; an end beyond
    the grid reads ``0`` or ``inf``; a missing interval is left out."""
    if budget is None or not np.isfinite(budget):
        return f"none ({status})"
    if lower is None or upper is None or np.isnan(lower) or np.isnan(upper):
        return f"{budget:.0f}"
    return f"{budget:.0f} [{lower:.0f}, {upper:.0f}]"
