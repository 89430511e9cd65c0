"""Paired-data files: the formats (JSONL, CSV, Parquet), reading raw rows and validating them.

Row dicts to and from files; no arrays and no features here (``oas._paired_features`` stacks
validated rows into ``PairedData``). The format is documented in ``docs/paired-data.md``.

References: MODEL §8 (paired data).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from oas._checks import (
    KNOWN_COLUMNS,
    Row,
    check_columns,
    unique_keys,
    validate_row,
    vocabulary_name,
)
from retcon.errors import InputError, decode_utf8, parse_json
from retcon.vocab import VOCABULARIES

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}


def format_of(path) -> str:
    """``"jsonl"``, ``"csv"`` or ``"parquet"`` from the file's suffix; raise on anything else."""
    suffix = Path(str(path).removesuffix(".partial")).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(
            f"{path}: unknown paired-data format {suffix or '(no suffix)'!r}; expected one of "
            f"{sorted(FORMATS)}."
        )
    fmt = FORMATS[suffix]
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401  # pyright: ignore[reportMissingImports]  # extra 'parquet'
        except ImportError:
            raise InputError(
                f"{path}: Parquet needs pyarrow; install it (pip install 'retcon[parquet]') "
                f"or use .jsonl / .csv."
            ) from None
    return fmt


def iter_raw_rows(path, *, outcomes: bool = True) -> Iterator[tuple[int, dict, bool]]:
    """Yield ``(line, row_dict, columns_checked)`` from a JSONL, CSV or Parquet file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such paired-data file.")
    fmt = format_of(path)
    if fmt == "jsonl":
        with open(path, "rb") as f:
            for line, raw in enumerate(f, 1):
                text = decode_utf8(raw, str(path), line).removesuffix("\n")
                if not text.strip():
                    continue
                yield line, _json_row(text, f"{path}:{line}"), False
    elif fmt == "csv":
        decode_utf8(path.read_bytes(), str(path))  # name the line of a non-UTF-8 byte
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames is None:
                raise InputError(f"{path}:1: empty CSV file; expected a header row.")
            check_columns(reader.fieldnames, path, 1, outcomes=outcomes)
            for row in reader:
                if None in row:
                    raise InputError(
                        f"{path}:{reader.line_num}: the row has more cells than the header's "
                        f"{len(reader.fieldnames)}."
                    )
                missing = [k for k, v in row.items() if v is None]
                if missing:
                    raise InputError(
                        f"{path}:{reader.line_num}: field {missing[0]!r} is missing (the row "
                        f"has fewer cells than the header)."
                    )
                yield reader.line_num, row, True
    else:
        import pyarrow.parquet as pq  # pyright: ignore[reportMissingImports]  # extra 'parquet'

        for i, row in enumerate(pq.read_table(path).to_pylist(), 1):
            yield i, row, False


def _json_row(text: str, place: str) -> dict:
    """One JSONL row, refusing a key given twice (`oas._checks.unique_keys`); text that is not
    JSON gets `retcon.errors.parse_json`'s message."""
    try:
        return json.loads(text, object_pairs_hook=unique_keys(place))
    except (json.JSONDecodeError, RecursionError):
        return parse_json(text, place, lines=False, hint="; a row is one flat object")


def validated_rows(path, raw_rows, vocabulary=None, *, outcomes: bool = True) -> list[Row]:
    """Validate ``(line, row, columns_checked)`` triples of `iter_raw_rows` (a CSV row, whose
    columns the header checked, has text cells; `oas._checks.validate_row`)."""
    rows: list[Row] = []
    seen: dict[str, int] = {}
    vocab_line = None
    for line, raw, checked in raw_rows:
        row = validate_row(
            raw, path, line, columns_checked=checked, outcomes=outcomes, text=checked
        )
        if row.instance_id in seen:
            raise InputError(
                f"{path}:{line}: field 'instance_id': duplicate {row.instance_id!r} "
                f"(first on line {seen[row.instance_id]}); ids must be unique."
            )
        seen[row.instance_id] = line
        name = vocabulary_name(row.query_type)
        if vocabulary is None:
            vocabulary, vocab_line = name, line
        elif name != vocabulary:
            origin = f"line {vocab_line}" if vocab_line else "the caller"
            raise InputError(
                f"{path}:{line}: field 'query_type': {row.query_type!r} is a {name} type but "
                f"{origin} set vocabulary {vocabulary!r}; one file holds one vocabulary "
                f"({list(VOCABULARIES[vocabulary])})."
            )
        rows.append(row)
    return rows


def plain_value(v):
    return v.item() if isinstance(v, np.generic) else v


def ordered_row(row: dict) -> dict:
    known = [c for c in KNOWN_COLUMNS if c in row]
    return {
        **{c: row[c] for c in known},
        **{c: row[c] for c in sorted(row) if c not in KNOWN_COLUMNS},
    }


def jsonable_row(row: dict) -> dict:
    out = {}
    for k, v in row.items():
        if isinstance(v, np.ndarray):
            v = v.tolist()
        elif isinstance(v, np.generic):
            v = v.item()
        elif isinstance(v, tuple):
            v = list(v)
        out[k] = v
    return out


def csv_cell(v) -> str:
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)
