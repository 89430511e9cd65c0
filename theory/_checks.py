"""Input checks for theory/: one line naming the argument, the valid range and the value.

Each check takes the `retcon.errors.Spell` of the public function it guards, so one message serves
both callers in their own words: ``crossover: compress_ratio must be in (0, 1); got 1.3.`` from
Python, ``--compress-ratio must be in (0, 1); got 1.3.`` from ``retcon crossover``.
References: docs/model.md §6 (the valid domain of the single-cluster model).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from retcon.errors import InputError, Spell
from retcon.errors import check_range as _check_range

#: The one table of length families: name -> its parameters, in the order samplers read them
#: (API keyword = CLI option without the dashes = TOML key of a sim scenario). Every parameter is
#: a number in (0, inf). Parametrisations are scipy.stats' (theory._dists module docstring).
DIST_PARAMS: dict[str, tuple[str, ...]] = {
    "point": ("length",),
    "uniform": ("max",),
    "exponential": ("mean",),
    "gamma": ("shape", "scale"),
    "lognormal": ("sigma", "scale"),
    "weibull": ("shape", "scale"),
}
#: The parameter of each family that carries the unit (tokens): scaling ``L`` by ``s`` multiplies
#: it by ``s`` and leaves the others (docs/model.md §6.5).
DIST_SCALE_PARAM: dict[str, str] = {
    "point": "length",
    "uniform": "max",
    "exponential": "mean",
    "gamma": "scale",
    "lognormal": "scale",
    "weibull": "scale",
}


class ModelParams(NamedTuple):
    """Validated scalars of the single-cluster model (docs/model.md §6)."""

    compress_ratio: float
    fidelity: float
    acc_raw: float
    acc_guess: float


def check_reader(fidelity, acc_raw, acc_guess, spell: Spell) -> tuple[float, float, float]:
    """Check ``phi >= 0``, ``0 <= g < a <= 1``; return them as floats.

    ``spell``: the `Spell` of the public function checked (names its arguments in messages).
    """
    phi = check_range(spell.lead("fidelity"), fidelity, 0.0, None, low_open=False)
    if math.isinf(phi):
        raise InputError(f"{spell.lead('fidelity')} must be finite, in [0, inf); got {phi:g}.")
    g = check_range(spell.lead("acc_guess"), acc_guess, 0.0, 1.0, low_open=False)
    a = check_range(spell.lead("acc_raw"), acc_raw, 0.0, 1.0, high_open=False)
    if not a > g:
        raise InputError(
            f"{spell.lead('acc_raw')} must be greater than {spell('acc_guess')} "
            f"({g:g}), in ({g:g}, 1]; got {a:g}."
        )
    return phi, a, g


def check_model(compress_ratio, fidelity, acc_raw, acc_guess, spell: Spell) -> ModelParams:
    """Check every scalar of the model; raise `InputError` with one line on the first bad one."""
    rho = check_range(spell.lead("compress_ratio"), compress_ratio, 0.0, 1.0)
    phi, a, g = check_reader(fidelity, acc_raw, acc_guess, spell)
    return ModelParams(rho, phi, a, g)


def check_budgets(budgets, spell: Spell) -> np.ndarray:
    """Budgets as a float64 array of finite positive token counts (any shape, at least one)."""
    try:
        arr = np.asarray(budgets, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(
            f"{spell.lead('budgets')} must be positive numbers (tokens); got {budgets!r}."
        ) from None
    if arr.size == 0:
        raise InputError(
            f"{spell.lead('budgets')} must hold at least one positive budget (tokens); got none."
        )
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        raise InputError(
            f"{spell.lead('budgets')} must be in (0, inf) tokens; got {arr[bad].flat[0]:g}."
        )
    return arr


_CHECK_DIST_SPELL = Spell("check_dist_params")


#: The gamma shapes whose CDF ``scipy.special.gammainc`` computes within [0, 1] (the fuzz).
GAMMA_SHAPES = (1e-12, 1e12)


def check_dist_params(
    name, params: dict, *, spell: Spell | Callable[[str], str] = _CHECK_DIST_SPELL
) -> tuple[str, dict[str, float]]:
    """Check a length family's name and parameters against ``DIST_PARAMS``.

    Args:
      name: the family.
      params: ``{parameter: value}``; a value of ``None`` counts as not given.
      spell: how the caller names a key (``"dist"`` or a parameter) in messages: a
        `retcon.errors.Spell` (``make_length_dist: shape`` from Python, ``--shape`` in the CLI),
        or a function of the key (a TOML key for a scenario: ``types.x.length.shape``).

    Returns:
      ``(name, {parameter: float})`` in ``DIST_PARAMS`` order.

    Raises:
      InputError: unknown family, a parameter the family does not take, a missing one, or one
        outside (0, inf).
    """
    if isinstance(spell, Spell):
        lead, inner, with_value = spell.lead, spell, spell.given
    else:
        lead = inner = spell

        def with_value(arg: str, value: object) -> str:
            return f"{spell(arg)} {value}"

    if not isinstance(name, str) or name not in DIST_PARAMS:
        raise InputError(
            f"{lead('dist')} must be one of {', '.join(DIST_PARAMS)}; got {_short(name)}."
        )
    needed = DIST_PARAMS[name]
    given = {k: v for k, v in params.items() if v is not None}
    for extra, value in given.items():
        if extra not in needed:
            takes = " and ".join(inner(p) for p in needed)
            raise InputError(
                f"{lead(extra)} does not apply to {with_value('dist', name)} "
                f"(it takes {takes}); got {_short(value)}."
            )
    out = {}
    for p in needed:
        if p not in given:
            raise InputError(
                f"{lead(p)} is required for {with_value('dist', name)}: a number in (0, inf); got nothing."
            )
        val = check_range(lead(p), given[p], 0.0, None)
        if math.isinf(val):
            raise InputError(f"{lead(p)} must be finite, in (0, inf); got {val:g}.")
        if name == "gamma" and p == "shape" and not GAMMA_SHAPES[0] <= val <= GAMMA_SHAPES[1]:
            # scipy's regularized incomplete gamma leaves [0, 1] below (1 + 2e-14 at 1e-300) and
            # answers NaN or a wrong 1 above (at 1e307): the range where the CDF is trusted
            raise InputError(
                f"{lead(p)} of the gamma law must be in [{GAMMA_SHAPES[0]:g}, "
                f"{GAMMA_SHAPES[1]:g}] (where its CDF is computed accurately); got {val:g}."
            )
        out[p] = val
    return name, out


def check_sample(sample) -> np.ndarray:
    """An empirical sample of raw lengths: a non-empty 1-d array of finite positive tokens."""
    try:
        arr = np.asarray(sample, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(
            f"empirical_lengths(sample) must be numbers (tokens); got {type(sample).__name__}."
        ) from None
    if arr.size == 0:
        raise InputError("empirical_lengths(sample) must hold at least one length; got none.")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        raise InputError(
            f"empirical_lengths(sample) lengths must be in (0, inf) tokens; got {arr[bad][0]:g}."
        )
    return arr


def check_scale(s) -> float:
    """A positive finite scale factor for `LengthDist.scaled`."""
    val = check_range("LengthDist.scaled(s)", s, 0.0, None)
    if math.isinf(val):
        raise InputError(f"LengthDist.scaled(s) must be finite, in (0, inf); got {val:g}.")
    return val


def check_finite(name: str, value, low: float | None = None, **kw) -> float:
    """`check_range` that also refuses ``inf``: a finite number in ``[low, inf)``/``(low, inf)``.

    ``name``: the argument as the message opens (``octave_grid: low``); ``kw``: ``low_open``.
    """
    val = check_range(name, value, low, None, **kw)
    if math.isinf(val):
        raise InputError(f"{name} must be a finite number; got {val:g}.")
    return val


def check_int(name: str, value, low: int, high: int) -> int:
    """An integer (not a bool) in ``[low, high]``: a count of grid points, passes or samples.

    ``high`` bounds the work a call may ask for, so that a huge count is refused in one line
    instead of allocating or looping for hours.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer in [{low}, {high}]; got {_short(value)}.")
    if not low <= value <= high:
        raise InputError(f"{name} must be an integer in [{low}, {high}]; got {value}.")
    return int(value)


def check_numbers(name: str, values) -> np.ndarray:
    """``values`` as a float64 array (any shape; NaN and inf kept for the caller to judge)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers; got {_short(values)}.") from None


def _short(value) -> str:
    """``repr(value)`` on one line, at most 60 characters (a message stays one line)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def check_range(name: str, value, low=None, high=None, **kw) -> float:
    """`retcon.errors.check_range` for one scalar: an array or list is refused in one line
    (its shape named), where ``float()`` would otherwise print a multi-line ``repr``."""
    if np.ndim(value) != 0:
        raise InputError(f"{name} must be one number; got an array of shape {np.shape(value)}.")
    return _check_range(name, value, low, high, **kw)
