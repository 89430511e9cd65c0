"""The one error type for bad input, so the CLI can tell it from a bug.

Every validator in the package raises ``InputError`` (a ``ValueError``) with one line that names
the function, option, file, row or field, what was expected and what came, e.g.
``ScenarioConfig.compress_ratio must be in (0, 1); got 1.3.`` The CLI prints that line and exits
with status 2; anything else is a bug and keeps its traceback.
"""

import math


class InputError(ValueError):
    """Bad input from a user: a one-line message naming where, what was expected, and what came."""


def check_range(
    name: str,
    value: float,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = True,
    high_open: bool = True,
) -> float:
    """Return ``float(value)`` or raise ``InputError`` naming ``name``, the range and the value.

    Args:
      name: how the user knows the quantity (``--compress-ratio``, ``ScenarioConfig.budget``).
      value: the given value.
      low, high: bounds; ``None`` means unbounded on that side.
      low_open, high_open: whether the bound itself is excluded.
    """
    lo_br = "(" if (low is None or low_open) else "["
    hi_br = ")" if (high is None or high_open) else "]"
    rng = f"{lo_br}{'-inf' if low is None else _fmt(low)}, {'inf' if high is None else _fmt(high)}{hi_br}"
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number in {rng}; got {value!r}.") from None
    bad = math.isnan(x)
    if low is not None:
        bad |= x <= low if low_open else x < low
    if high is not None:
        bad |= x >= high if high_open else x > high
    if bad:
        raise InputError(f"{name} must be in {rng}; got {_fmt(value)}.")
    return x


def _fmt(v) -> str:
    return repr(v) if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)
