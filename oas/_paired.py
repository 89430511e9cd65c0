"""Paired data: one row per instance z = (q, C, B) with the outcomes of all four actions.

The format (columns, encodings, validation rules, resumable writing) is documented in
``docs/paired-data.md``. Reading validates every row and raises ``InputError`` naming the file,
the 1-based line (CSV: the header is line 1) and the field; nothing is dropped silently.
Plain numpy: no JAX import on this path. The seams: file formats and row validation
(``oas._paired_format``), rows to arrays and features (``oas._paired_features``), resumable
writing (``oas._paired_writer``); this module holds the public read and write functions.

References: MODEL §8 (paired data, features).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from oas._checks import FEATURE_NAMES, LENGTH_COLUMN, OUTCOME_COLUMNS
from oas._paired_columns import (
    paired_columns,
    read_jsonl_columns,
    valid_columns,
    write_jsonl_columns,
)
from oas._paired_features import EmbedFn, PairedData, assemble, import_pandas
from oas._paired_format import (
    csv_cell,
    format_of,
    iter_raw_rows,
    jsonable_row,
    ordered_row,
    plain_value,
    validated_rows,
)
from retcon.errors import InputError, check_choice
from retcon.output import atomic_write
from retcon.vocab import VOCABULARIES
from theory import PACKINGS

__all__ = ["PairedData", "paired_from_rows", "paired_rows", "read_paired", "write_paired"]


@overload
def read_paired(
    path,
    *,
    packing: str = ...,
    embed: EmbedFn | None = ...,
    vocabulary: str | None = ...,
    outcomes: bool = ...,
    as_frame: Literal[False] = ...,
) -> PairedData: ...
@overload
def read_paired(
    path,
    *,
    packing: str = ...,
    embed: EmbedFn | None = ...,
    vocabulary: str | None = ...,
    outcomes: bool = ...,
    as_frame: Literal[True],
) -> Any: ...  # a pandas.DataFrame (pandas is optional)
def read_paired(
    path,
    *,
    packing: str = "prefix",
    embed: EmbedFn | None = None,
    vocabulary: str | None = None,
    outcomes: bool = True,
    as_frame: bool = False,
) -> PairedData | Any:
    """Read and validate a paired-data file; compute the features of rows that give raw fields.

    Args:
      path: a ``.jsonl``/``.ndjson``, ``.csv`` or ``.parquet`` file (docs/paired-data.md).
      packing: packing for feature 3 of raw-field rows: ``"prefix"`` (default), ``"skip"``, ``"cut"``.
      embed: turns a list of k texts into a ``(k, D)`` array, for rows that give ``texts``; default
        ``oas._embed.embed_texts`` (hashed TF-IDF, no download).
      vocabulary: require this query-type vocabulary (``"locomo"``/``"longmemeval"``); default: the
        first row's.
      outcomes: if False (input to ``retcon predict``), the ``y_*`` columns may be absent; their
        values are then NaN.
      as_frame: if True, return ``PairedData.to_pandas()`` of the data (a ``pandas.DataFrame``,
        the same validation first); pandas is optional (the extra ``pandas``).

    Returns:
      ``PairedData`` in file order, or its ``pandas.DataFrame`` with ``as_frame``.

    Raises:
      InputError: missing or unknown columns, NaN, outcomes outside [0, 1], unknown query types or
        two vocabularies in one file, duplicate ``instance_id``, non-positive budgets, malformed
        raw fields; the message names the file, the line and the field.
      ImportError: ``as_frame`` without pandas installed (checked before the file is read).

    References: MODEL §8.
    """
    if as_frame:
        import_pandas("read_paired(..., as_frame=True)")
    check_choice("packing", packing, PACKINGS)
    if vocabulary is not None:
        check_choice("vocabulary", vocabulary, tuple(VOCABULARIES))
    data = None
    if Path(path).suffix.lower() in (".jsonl", ".ndjson") and Path(path).is_file():
        data = read_jsonl_columns(path, vocabulary, outcomes=outcomes)  # None: the row path
    if data is None:
        rows = validated_rows(
            path, iter_raw_rows(path, outcomes=outcomes), vocabulary, outcomes=outcomes
        )
        if not rows:
            raise InputError(f"{path}: no rows; expected at least one paired-data row.")
        data = assemble(rows, path, packing=packing, embed=embed)
    return data.to_pandas() if as_frame else data


def row_ids(data: PairedData, i: int) -> dict:
    """The id columns of row ``i`` as plain strings: ``instance_id``, ``query_id``, ``group_id``
    (the first columns of a paired-data row and of a ``retcon predict`` decision)."""
    return {
        "instance_id": str(data.instance_id[i]),
        "query_id": str(data.query_id[i]),
        "group_id": str(data.group_id[i]),
    }


def paired_rows(data: PairedData) -> list[dict]:
    """``PairedData`` as row dicts with the 11 features by name (the canonical column order);
    ``cluster_tokens`` is written when every row has it."""
    lengths = data.cluster_tokens
    if lengths is not None and not np.all(np.isfinite(lengths)):
        lengths = None
    rows = []
    for i in range(data.n):
        row = {**row_ids(data, i), "query_type": str(data.query_type[i])}
        row["budget"] = float(data.budget[i])
        row.update({c: float(data.outcomes[i, a]) for a, c in enumerate(OUTCOME_COLUMNS)})
        row.update({c: float(data.features[i, j]) for j, c in enumerate(FEATURE_NAMES)})
        if lengths is not None:
            row[LENGTH_COLUMN] = float(lengths[i])
        row.update({c: plain_value(v[i]) for c, v in data.meta.items()})
        rows.append(row)
    return rows


def write_paired(path, data: PairedData | Iterable[dict]) -> Path:
    """Validate and write paired data atomically (``retcon.output.atomic_write``).

    Args:
      path: target; the format comes from the suffix (``.jsonl``, ``.csv``, ``.parquet``).
      data: ``PairedData`` (written with the 11 features by name) or row dicts (validated, then
        written as given: features by name or raw fields).

    Returns:
      the path written.

    References: docs/paired-data.md.
    """
    fmt = format_of(path)
    if isinstance(data, PairedData) and fmt == "jsonl":
        return write_paired_chunks(path, (data,))  # by columns; anything wrong: the row path
    rows = (
        paired_rows(data) if isinstance(data, PairedData) else [jsonable_row(dict(r)) for r in data]
    )
    if not rows:
        raise InputError(f"write_paired: no rows to write to {path}.")
    validated_rows(
        f"write_paired({Path(path).name}) row", ((i, r, False) for i, r in enumerate(rows, 1))
    )
    rows = [ordered_row(r) for r in rows]
    if fmt == "jsonl":
        text = "".join(json.dumps(r, allow_nan=False) + "\n" for r in rows)
        return atomic_write(path, lambda f: f.write(text))
    if fmt == "csv":
        columns = list(rows[0])
        for i, r in enumerate(rows, 1):
            if list(r) != columns:
                raise InputError(
                    f"write_paired: row {i} has columns {sorted(r)}; CSV needs the same columns "
                    f"in every row ({sorted(columns)})."
                )
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([csv_cell(r[c]) for c in columns])
        return atomic_write(path, lambda f: f.write(buf.getvalue()))
    import pyarrow as pa  # pyright: ignore[reportMissingImports]  # extra 'parquet'
    import pyarrow.parquet as pq  # pyright: ignore[reportMissingImports]

    table = pa.Table.from_pylist(rows)
    return atomic_write(path, lambda f: pq.write_table(table, f), binary=True)


def write_paired_chunks(path, chunks: Iterable[PairedData]) -> Path:
    """Write consecutive ``PairedData`` chunks as one JSONL file, atomically: the bytes
    ``write_paired`` writes for their concatenation, one chunk's columns in memory at a time.

    Each chunk is validated by columns; a chunk that fails goes through the row validator, whose
    message names the row's number in the whole file.

    Raises:
      InputError: ``path`` is not ``.jsonl``, no rows, or a row fails validation.

    References: docs/paired-data.md.
    """
    if format_of(path) != "jsonl":
        raise InputError(f"write_paired_chunks: {path} must be a .jsonl file.")
    name = Path(path).name

    def write(f) -> None:
        offset = 0
        for data in chunks:
            if not data.n:
                continue
            columns = paired_columns(data)
            if valid_columns(columns, f"write_paired({name})"):
                write_jsonl_columns(f, columns)
            else:
                rows = paired_rows(data)
                validated_rows(
                    f"write_paired({name}) row",
                    ((offset + i, r, False) for i, r in enumerate(rows, 1)),
                )
                f.write("".join(json.dumps(ordered_row(r), allow_nan=False) + "\n" for r in rows))
            offset += data.n
        if not offset:
            raise InputError(f"write_paired: no rows to write to {path}.")

    return atomic_write(path, write)


def paired_from_rows(rows: Iterable[dict], *, source: str = "rows") -> PairedData:
    """Validate row dicts in the paired-data format (as ``oas.real.query_rows`` makes them) and
    stack them into ``PairedData``; errors name ``source`` and the 1-based row number."""
    valid = validated_rows(source, ((i + 1, r, False) for i, r in enumerate(rows)))
    if not valid:
        raise InputError(f"{source}: no rows; expected at least one paired-data row.")
    return assemble(valid, source)
