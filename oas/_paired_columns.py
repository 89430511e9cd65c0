"""Paired-data JSONL read by columns: the fast path of ``oas.read_paired`` (issue 47).

The file is parsed once (one decoder, duplicate keys refused as ``oas._checks.unique_keys``
does), and the checks of ``oas._checks.validate_row`` for rows that give the 11 features run once
per column in numpy: types, finiteness, ranges, the one-hot of the query type, unique ids, one
vocabulary, the ``evidence_structure`` cells (``oas._structure.check_structure``).

The path is conservative and has no messages of its own: it returns ``None`` on anything wrong
(text that is not JSON, a duplicate key, a bad value) and on anything it does not handle (rows
with raw fields, rows whose columns differ, a column it does not know, a value the row path would
convert, such as an integer token length); ``read_paired`` then runs the row path, which names
the first bad file, line and field as it always has. So it accepts only what the row path
accepts, returns the same ``PairedData``, and a column added to the format later goes through
the row path until it is added to ``FAST_COLUMNS`` here.

References: MODEL §8 (paired data), docs/paired-data.md.
"""

from __future__ import annotations

import json
from itertools import chain

import numpy as np

from oas._checks import (
    ALL_TYPES,
    FEATURE_LIMIT,
    FEATURE_NAMES,
    ID_COLUMNS,
    LENGTH_COLUMN,
    META_PREFIX,
    OUTCOME_COLUMNS,
    REQUIRED_COLUMNS,
    check_columns,
    vocabulary_name,
)
from oas._paired_features import PairedData, object_column
from oas._paired_format import ordered_row, plain_value
from oas._structure import STRUCTURE_COLUMN
from retcon.errors import InputError
from retcon.vocab import ACTIONS, VOCABULARIES
from theory import PACKINGS

#: The columns this path validates; any other (besides ``meta_*``) sends the file to the row path.
FAST_COLUMNS = frozenset((*REQUIRED_COLUMNS, *FEATURE_NAMES, LENGTH_COLUMN, STRUCTURE_COLUMN))
_STRUCTURE_KEYS = ["packing", "lengths", "evidence"]
_ACTION_KEYS = list(ACTIONS)


class _Duplicate(ValueError):
    """A JSON object gives one key twice (the row path names it)."""


def _pairs(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Duplicate
    return out


def read_jsonl_columns(path, vocabulary: str | None, *, outcomes: bool) -> PairedData | None:
    """A JSONL paired-data file as ``PairedData``, or ``None`` for the row path to read.

    Args:
      path: an existing ``.jsonl``/``.ndjson`` file.
      vocabulary: the required query-type vocabulary, or ``None`` for the first row's.
      outcomes: as ``read_paired``: if False the four ``y_*`` columns may be absent (NaN).

    Returns:
      the same ``PairedData`` as the row path (``validated_rows`` then ``assemble``), or ``None``.
    """
    decode = json.JSONDecoder(object_pairs_hook=_pairs).decode
    columns: dict[str, list] = {}
    keys = None
    with open(path, "rb") as f:
        # a few MiB of lines at a time: the rows' dicts never all live at once, only the columns
        while chunk := f.readlines(1 << 22):
            try:
                rows = [decode(t) for b in chunk if (t := b.decode("utf-8")).strip()]
            except (ValueError, RecursionError):  # not UTF-8, not JSON, a duplicate key
                return None
            if not rows:
                continue
            if keys is None:
                if type(rows[0]) is not dict:
                    return None
                keys = rows[0].keys()
                columns = {c: [] for c in keys}
            if set(map(type, rows)) != {dict} or not all(map(keys.__eq__, map(dict.keys, rows))):
                return None
            for c, values in columns.items():
                values.extend([r[c] for r in rows])
    if not columns:
        return None
    try:
        return _validated(path, columns, vocabulary, outcomes)
    except (InputError, TypeError, ValueError, OverflowError, KeyError):
        return None


def _validated(path, columns: dict[str, list], vocabulary: str | None, outcomes: bool):
    """``PairedData`` from the file's columns (every row gives the same keys), or ``None``."""
    keys = columns.keys()
    check_columns(list(keys), path, 1, outcomes=outcomes)  # raises: the row path names the line
    if FEATURE_NAMES[0] not in keys or any(
        c not in FAST_COLUMNS and not c.startswith(META_PREFIX) for c in keys
    ):
        return None
    n = len(columns["budget"])
    column = columns.__getitem__
    ids = [_ids(column(c)) for c in ID_COLUMNS]
    qt = column("query_type")
    kinds = set(qt)
    if not kinds <= set(ALL_TYPES) or any(type(t) is not str for t in kinds):
        return None
    names = {vocabulary_name(t) for t in kinds}
    vocabulary = vocabulary or vocabulary_name(qt[0])
    if names != {vocabulary} or len(set(ids[0])) != n:
        return None
    budget = _numbers(column("budget"))
    if not (budget > 0).all():
        return None
    if OUTCOME_COLUMNS[0] in keys:
        y = np.column_stack([_numbers(column(c)) for c in OUTCOME_COLUMNS])
        if not ((y >= 0) & (y <= 1)).all():
            return None
    else:
        y = np.full((n, len(OUTCOME_COLUMNS)), np.nan)
    x = np.column_stack([_numbers(column(c)) for c in FEATURE_NAMES])
    slot = {t: i for i, t in enumerate(VOCABULARIES[vocabulary])}
    onehot = np.eye(4)[np.array([slot[t] for t in qt])]
    if not (np.abs(x) <= FEATURE_LIMIT).all() or not np.array_equal(x[:, 7:], onehot):
        return None
    if LENGTH_COLUMN in keys:
        tokens = _numbers(column(LENGTH_COLUMN))
    elif "meta_cluster_tokens" in keys:  # files written before the column was in the format
        tokens = _numbers(column("meta_cluster_tokens"))
    else:
        tokens = np.full(n, np.nan)
    if not (np.isnan(tokens) | (tokens >= 0)).all():
        return None
    meta = {}
    for c in sorted(c for c in keys if c.startswith(META_PREFIX) or c == STRUCTURE_COLUMN):
        cells = column(c)
        if c == STRUCTURE_COLUMN and not _structures_clean(cells):
            return None
        meta[c] = object_column(cells)
    return PairedData(
        instance_id=np.asarray(ids[0], dtype=object),
        query_id=np.asarray(ids[1], dtype=object),
        group_id=np.asarray(ids[2], dtype=object),
        query_type=np.asarray(qt, dtype=object),
        budget=budget,
        outcomes=np.ascontiguousarray(y),
        features=np.ascontiguousarray(x),
        vocabulary=vocabulary,
        meta=meta,
        cluster_tokens=tokens,
    )


def paired_columns(data: PairedData) -> dict[str, list]:
    """``PairedData`` as the columns of the paired-data format, in its column order
    (``ordered_row``), each a list of plain Python values: what ``oas.paired_rows`` puts in each
    row, without building the rows."""

    def floats(x) -> list:
        return np.asarray(x, dtype=np.float64).tolist()

    def strings(x) -> list[str]:
        return [str(v) for v in np.asarray(x).tolist()]

    columns = {c: strings(getattr(data, c)) for c in ID_COLUMNS}
    columns["query_type"] = strings(data.query_type)
    columns["budget"] = floats(data.budget)
    y, x = np.asarray(data.outcomes), np.asarray(data.features)
    columns.update({c: floats(y[:, a]) for a, c in enumerate(OUTCOME_COLUMNS)})
    columns.update({c: floats(x[:, j]) for j, c in enumerate(FEATURE_NAMES)})
    tokens = data.cluster_tokens
    if tokens is not None and np.all(np.isfinite(tokens)):
        columns[LENGTH_COLUMN] = floats(tokens)
    for c, v in data.meta.items():
        columns[c] = [plain_value(cell) for cell in v]
    return {c: columns[c] for c in ordered_row(dict.fromkeys(columns))}


def write_jsonl_columns(f, columns: dict[str, list], *, chunk: int = 4096) -> None:
    """Write the rows of ``columns`` to the text file ``f`` as JSONL, ``chunk`` rows at a time:
    the bytes of ``json.dumps(row, allow_nan=False)`` per row, one encoder for all."""
    encode = json.JSONEncoder(allow_nan=False).encode
    names = list(columns)
    values = list(columns.values())
    n = len(values[0]) if values else 0
    for start in range(0, n, chunk):
        cells = zip(*(v[start : start + chunk] for v in values))
        f.write("".join([encode(dict(zip(names, row))) + "\n" for row in cells]))


def valid_columns(columns: dict[str, list], source: str) -> bool:
    """True if the columns pass every row check (``_validated``); False: let the row path name
    the first bad row."""
    try:
        return _validated(source, columns, None, True) is not None
    except (InputError, TypeError, ValueError, OverflowError, KeyError):
        return False


def _ids(values: list) -> list[str]:
    """Non-empty strings or integers (not booleans), as strings; ``ValueError`` otherwise."""
    types = set(map(type, values))
    if not types <= {str, int}:
        raise ValueError
    if int in types:
        values = [v if type(v) is str else str(v) for v in values]
    if not all(map(str.strip, values)):
        raise ValueError
    return values


def _numbers(values: list) -> np.ndarray:
    """JSON numbers (not booleans, not strings) as finite float64; ``ValueError`` otherwise."""
    if not set(map(type, values)) <= {float, int}:
        raise ValueError
    out = np.array(values, dtype=np.float64)
    if not np.isfinite(out).all():
        raise ValueError
    return out


def _structures_clean(cells: list) -> bool:
    """True if every ``evidence_structure`` cell passes ``check_structure`` and equals its clean
    form already: keys in order, float token lengths > 0, int 0/1 flags, a retrieval miss flagged
    under no action. False sends the file to the row path (which converts or refuses)."""
    if set(map(type, cells)) != {dict} or any(list(c) != _STRUCTURE_KEYS for c in cells):
        return False
    if not {c["packing"] for c in cells} <= set(PACKINGS):
        return False
    for part in ("lengths", "evidence"):
        parts = [c[part] for c in cells]
        if set(map(type, parts)) != {dict} or any(list(d) != _ACTION_KEYS for d in parts):
            return False
    hits = {}
    for a in ACTIONS:
        lengths = [c["lengths"][a] for c in cells]
        flags = [c["evidence"][a] for c in cells]
        if set(map(type, lengths)) != {list} or set(map(type, flags)) != {list}:
            return False
        if list(map(len, lengths)) != list(map(len, flags)):
            return False
        flat = list(chain.from_iterable(lengths))
        if not set(map(type, flat)) <= {float}:
            return False
        x = np.array(flat, dtype=np.float64)
        if not ((x > 0) & (x < np.inf)).all():
            return False
        bits = list(chain.from_iterable(flags))
        if not set(map(type, bits)) <= {int} or not set(bits) <= {0, 1}:
            return False
        hits[a] = np.fromiter(map(any, flags), dtype=bool, count=len(cells))
    # a retrieval miss (no flag under ret) flags nothing under any action
    others = np.logical_or.reduce([hits[a] for a in ACTIONS[1:]])
    return not (others & ~hits["ret"]).any()
