"""Boundary checks for ``sim``: every bad scenario value becomes one ``InputError`` line.

Messages name the TOML key (``operators.merge.compress_ratio``), what was expected and what came,
so the same text serves a dataclass built in Python and a scenario file (the loader prefixes the
file name). References: MODEL §1-§2 (the ranges).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from retcon.errors import InputError, check_choice, check_range

_TOML_TYPE = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    dict: "a table",
    list: "an array",
}


def type_name(value: Any) -> str:
    """How TOML calls the type of ``value`` (``a string``, ``a table``...)."""
    for t, name in _TOML_TYPE.items():
        if type(value) is t:
            return name
    return type(value).__name__


#: The largest magnitude a scenario number may have: the kernels compute in float32 (largest
#: 3.4e38) and multiply and add lengths, budgets and fidelities over many queries; 1e30 leaves
#: eight orders of magnitude for that (a length scale of 1e38 overflowed, 1e30 did not).
KERNEL_MAX = 1e30


def number(
    key: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``float(value)`` when it is a real number inside the interval; else ``InputError`` naming ``key``.

    Stricter than ``retcon.errors.check_range`` on type (a TOML string or bool is a wrong type,
    not a number to convert) and on infinity; the range check itself is shared.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        lo = "(" if (low is None or low_open) else "["
        hi = ")" if (high is None or high_open) else "]"
        rng = f"{lo}{'-inf' if low is None else f'{low:g}'}, {'inf' if high is None else f'{high:g}'}{hi}"
        raise InputError(f"{key} must be a number in {rng}; got {type_name(value)} ({value!r}).")
    if not math.isfinite(float(value)):  # an unbounded side still excludes infinity
        if low is None:
            low, low_open = -math.inf, True
        if high is None:
            high, high_open = math.inf, True
    elif abs(float(value)) > KERNEL_MAX and (low is None or high is None):
        # an unbounded side is still bounded by what the float32 kernels hold (issue 48)
        lo = f"{low:g}" if low is not None else f"{-KERNEL_MAX:g}"
        hi = f"{high:g}" if high is not None else f"{KERNEL_MAX:g}"
        raise InputError(
            f"{key} must be a number in [{lo}, {hi}], the range the float32 simulation kernels "
            f"hold with room for their sums and products; got {value!r}."
        )
    return check_range(key, value, low, high, low_open=low_open, high_open=high_open)


def integer(key: str, value: Any, low: int, high: int) -> int:
    """``int(value)`` when it is an integer in ``[low, high]``; else ``InputError`` naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(
            f"{key} must be an integer in [{low}, {high}]; got {type_name(value)} ({value!r})."
        )
    if not low <= value <= high:
        raise InputError(f"{key} must be an integer in [{low}, {high}]; got {value}.")
    return int(value)


def choice(key: str, value: Any, options: Iterable[str]) -> str:
    """``value`` when it is one of ``options``; else ``InputError`` naming ``key``."""
    return check_choice(key, value, options)


def table(
    key: str, value: Any, allowed: Iterable[str], required: Iterable[str] = ()
) -> Mapping[str, Any]:
    """``value`` when it is a table whose keys are all in ``allowed`` and hold ``required``."""
    allowed = tuple(allowed)
    if not isinstance(value, Mapping):
        raise InputError(f"{key} must be a table; got {type_name(value)} ({value!r}).")
    for k in value:
        if k not in allowed:
            where = f"{key}.{k}" if key else k
            raise InputError(f"unknown key {where!r}; expected one of {list(allowed)}.")
    for k in required:
        if k not in value:
            where = f"{key}.{k}" if key else k
            raise InputError(f"missing key {where!r}; it is required.")
    return value
