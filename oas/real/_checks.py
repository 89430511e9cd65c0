"""Boundary validation for real data: one place for the messages that name file, record and field.

References: MODEL §9 (dataset fields).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from retcon.errors import InputError, Spell


def read_json(path: str | Path, what: str) -> Any:
    """Parse a JSON file or raise ``InputError`` naming the file, line and column."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} file {str(path)!r} does not exist or is not a file.")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(
            f"{what} file {str(path)!r} is not valid JSON: {e.msg} at line {e.lineno}, "
            f"column {e.colno}."
        ) from None
    except UnicodeDecodeError as e:
        raise InputError(
            f"{what} file {str(path)!r} is not UTF-8 text: {e.reason} at byte {e.start}."
        ) from None
    except RecursionError:
        raise InputError(f"{what} file {str(path)!r}: JSON nested too deeply to read.") from None


def require(obj: Any, field: str, where: str, kind: type | tuple[type, ...] | None = None) -> Any:
    """``obj[field]``, or ``InputError`` saying ``where`` lacks it or holds the wrong kind."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object; got {type(obj).__name__}.")
    if field not in obj:
        raise InputError(f"{where}: missing field {field!r}.")
    value = obj[field]
    if kind is not None and not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InputError(
            f"{where}: field {field!r} must be {_article(names)}; got {type(value).__name__}."
        )
    return value


def expect_list(obj: Any, where: str) -> list:
    if not isinstance(obj, list):
        raise InputError(f"{where}: expected a JSON list; got {type(obj).__name__}.")
    return obj


def check_budgets(budgets, spell: Spell) -> tuple[int, ...]:
    """Budgets as sorted distinct positive ints, or ``InputError`` naming ``spell``'s budgets."""
    out = []
    for b in budgets:
        try:
            v = int(b)
        except (TypeError, ValueError):
            raise InputError(
                f"{spell.lead('budgets')} must be positive integers (tokens); got {b!r}."
            ) from None
        if v <= 0 or v != float(b):
            raise InputError(
                f"{spell.lead('budgets')} must be positive integers (tokens); got {b!r}."
            )
        out.append(v)
    if not out:
        raise InputError(f"{spell.lead('budgets')} must name at least one budget; got none.")
    return tuple(sorted(set(out)))


def _article(names: str) -> str:
    return ("an " if names[:1] in "aeiou" else "a ") + names
