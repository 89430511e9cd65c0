"""``retcon crossover --lengths FILE``: read a sample of raw cluster lengths (docs/model.md §6.7).

The file holds one number per line, a JSON list of numbers, or (``--lengths-column NAME``) a CSV
column. Nothing here imports numpy, JAX or matplotlib: the file is checked before any of them.
"""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

from retcon.errors import InputError


def _number(value, where: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"{where}: expected a length in tokens (a number); got {value!r}."
        ) from None
    if not (math.isfinite(x) and x > 0):
        raise InputError(f"{where}: expected a length in (0, inf) tokens; got {value!r}.")
    return x


def read_lengths(path: str | os.PathLike[str], column: str | None = None) -> list[float]:
    """The positive lengths in ``path``: one per line, a JSON list, or the CSV column ``column``.

    Raises ``InputError`` naming the file (and line or row) on anything else.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"--lengths {path}: no such file.") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"--lengths {path}: cannot read it as UTF-8 text ({e}).") from None
    if column is not None:
        reader = csv.DictReader(text.splitlines())
        if reader.fieldnames is None or column not in reader.fieldnames:
            raise InputError(
                f"--lengths {path}: expected a CSV header with column {column!r} "
                f"(--lengths-column); got columns {list(reader.fieldnames or [])}."
            )
        out = [
            _number(row[column], f"--lengths {path} row {i} column {column!r}")
            for i, row in enumerate(reader, start=2)
        ]
    elif text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"--lengths {path}: expected a JSON list of numbers; {e}.") from None
        if not isinstance(data, list) or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) for v in data
        ):
            raise InputError(
                f"--lengths {path}: expected a JSON list of numbers; got {text[:40]!r}."
            )
        out = [_number(v, f"--lengths {path} item {i}") for i, v in enumerate(data)]
    else:
        out = [
            _number(line.strip(), f"--lengths {path} line {i}")
            for i, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        ]
    if not out:
        raise InputError(f"--lengths {path}: expected at least one length; got none.")
    return out
