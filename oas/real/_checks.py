"""Boundary validation for real data: one place for the messages that name file, record and field.

References: MODEL §9 (dataset fields).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oas._checks import DuplicateKeyError, unique_keys
from retcon.errors import InputError, Spell


def read_json(path: str | Path, what: str) -> Any:
    """Parse a JSON file or raise ``InputError`` naming the file, line and column."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} file {str(path)!r} does not exist or is not a file.")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f, object_pairs_hook=unique_keys(f"{what} file {str(path)!r}"))
    except DuplicateKeyError as e:
        record, line = _locate_duplicate(path.read_text(encoding="utf-8"))
        at = f": record {record} (line {line})" if record is not None else ""
        raise InputError(
            f"{what} file {str(path)!r}{at}: duplicate key {e.key!r} in one object; JSON would "
            f"keep only the last value, so the file is ambiguous. Give each key once."
        ) from None
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


def _locate_duplicate(text: str) -> tuple[int | None, int]:
    """``(record, line)`` of the first top-level list element holding a duplicate key (record
    counted from 0, as the readers' messages count them); ``(None, 1)`` when the top level is not
    a list. Runs only after `unique_keys` found a duplicate, so valid files pay nothing."""
    decoder = json.JSONDecoder(object_pairs_hook=unique_keys(""))
    start = len(text) - len(text.lstrip())
    if not text[start:].startswith("["):
        return None, 1
    pos, record = start + 1, 0
    while pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        try:
            _, pos = decoder.raw_decode(text, pos)
        except DuplicateKeyError:
            return record, text.count("\n", 0, pos) + 1
        record += 1
    return None, 1


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


def require_new_id(obj: Any, field: str, where: str, seen: set[str]) -> tuple[str, str]:
    """``obj[field]`` (a string or int) as a string not in ``seen``, which it joins, and
    ``where`` with that id appended; ``InputError`` for a missing, ill-typed or repeated id."""
    ident = str(require(obj, field, where, (str, int)))
    where = f"{where} ({ident})"
    if ident in seen:
        raise InputError(f"{where}: duplicate {field} {ident!r}.")
    seen.add(ident)
    return ident, where


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
