"""Resumable writing of paired data: rows appended to ``<path>.partial``, picked up after a crash.

References: docs/paired-data.md (resumable writing).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

from oas._checks import check_columns, validate_row, vocabulary_name
from oas._paired import read_paired
from oas._paired_features import Embedder
from oas._paired_format import (
    csv_cell,
    format_of,
    iter_raw_rows,
    jsonable_row,
    ordered_row,
    validated_rows,
)
from retcon.errors import InputError, check_choice, decode_utf8, parse_json
from retcon.output import open_nofollow, refuse_symlink
from sim import PACKINGS


def existing_ids(path) -> set[str]:
    """The ``instance_id``s already in ``path`` or its ``<path>.partial`` (for resuming writers).

    A truncated last line of the partial file (a crash mid-write) is ignored here and removed by
    the next ``PairedWriter``.
    """
    ids: set[str] = set()
    final = Path(path)
    if final.is_file():
        ids.update(str(raw.get("instance_id")) for _, raw, _ in iter_raw_rows(final))
    partial = Path(f"{path}.partial")
    if partial.is_file():
        for _, raw, _ in _partial_rows(partial):
            ids.add(str(raw.get("instance_id")))
    return ids


def _partial_rows(partial: Path) -> Iterator[tuple[int, dict, bool]]:
    """Rows of a partial JSONL/CSV file, without a trailing line cut off by a crash."""
    text = decode_utf8(partial.read_bytes(), str(partial))
    complete = text[: text.rfind("\n") + 1] if not text.endswith("\n") else text
    fmt = format_of(partial)
    if fmt == "jsonl":
        for line, t in enumerate(complete.splitlines(), 1):
            if t.strip():
                row = parse_json(
                    t, f"{partial}:{line}", lines=False, hint="; a row is one flat object"
                )
                yield line, row, False
    else:
        reader = csv.DictReader(io.StringIO(complete))
        if reader.fieldnames is not None:
            check_columns(reader.fieldnames, partial, 1)
        for row in reader:
            yield reader.line_num, row, True


class PairedWriter:
    """Append validated rows to ``<path>.partial`` (flushed per row); ``finalize`` renames it.

    A writer that is interrupted leaves the partial file; a new ``PairedWriter(path)`` picks it
    up (dropping a truncated last line), so ``writer.ids`` / ``existing_ids(path)`` tell a resumed
    run which instances are done. JSONL and CSV only (Parquet cannot append).

    Example::

        with PairedWriter("paired.jsonl") as w:
            for row in rows:
                if row["instance_id"] not in w.ids:
                    w.write(row)
            w.finalize()

    References: docs/paired-data.md (resumable writing).
    """

    def __init__(self, path, *, packing: str = "prefix"):
        self.path = Path(path)
        self.partial = Path(f"{path}.partial")
        self.format = format_of(self.path)
        if self.format == "parquet":
            raise InputError(
                f"{path}: PairedWriter appends rows and cannot write Parquet; use .jsonl or .csv "
                f"and convert with write_paired."
            )
        check_choice("packing", packing, PACKINGS)
        self.packing = packing
        self.ids: dict[str, int] = {}
        self.vocabulary: str | None = None
        self.columns: list[str] | None = None
        self._line = 0
        refuse_symlink(str(self.path), self.partial, "partial rows")
        if self.partial.is_file():
            text = self.partial.read_text(encoding="utf-8")
            if text and not text.endswith("\n"):  # a crash cut the last row: drop it, keep the rest
                with open(self.partial, "r+", encoding="utf-8") as f:
                    f.truncate(len(text[: text.rfind("\n") + 1].encode("utf-8")))
            rows = validated_rows(self.partial, _partial_rows(self.partial))
            for r in rows:
                self.ids[r.instance_id] = r.line
            if rows:
                self.vocabulary = vocabulary_name(rows[0].query_type)
                self._line = rows[-1].line
            if self.format == "csv" and self.partial.stat().st_size:
                with open(self.partial, encoding="utf-8", newline="") as f:
                    self.columns = next(csv.reader(f))
                self._line = max(self._line, 1)
        self.partial.parent.mkdir(parents=True, exist_ok=True)
        # Open for the writer's lifetime; close() and __exit__ close it.
        fd = open_nofollow(str(self.path), self.partial, os.O_WRONLY | os.O_APPEND, "partial rows")
        self._file = open(fd, "a", encoding="utf-8", newline="")  # noqa: SIM115

    def __enter__(self) -> PairedWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __contains__(self, instance_id) -> bool:
        return str(instance_id) in self.ids

    def write(self, row: dict) -> None:
        """Validate ``row`` (docs/paired-data.md) and append it; flushed before returning."""
        if self._file.closed:
            raise InputError(f"{self.partial}: the writer is closed.")
        row = ordered_row(jsonable_row(dict(row)))
        line = self._line + 1 if not (self.format == "csv" and self.columns is None) else 2
        r = validate_row(row, self.partial, line)
        if r.instance_id in self.ids:
            raise InputError(
                f"{self.partial}:{line}: field 'instance_id': duplicate {r.instance_id!r} "
                f"(first on line {self.ids[r.instance_id]}); ids must be unique."
            )
        name = vocabulary_name(r.query_type)
        if self.vocabulary is not None and name != self.vocabulary:
            raise InputError(
                f"{self.partial}:{line}: field 'query_type': {r.query_type!r} is a {name} type; "
                f"this file holds vocabulary {self.vocabulary!r}."
            )
        try:
            if self.format == "jsonl":
                self._file.write(json.dumps(row, allow_nan=False) + "\n")
            else:
                w = csv.writer(self._file, lineterminator="\n")
                if self.columns is None:
                    self.columns = list(row)
                    w.writerow(self.columns)
                elif sorted(row) != sorted(self.columns):
                    raise InputError(
                        f"{self.partial}:{line}: the row has columns {sorted(row)}; this CSV file "
                        f"has {sorted(self.columns)}."
                    )
                w.writerow([csv_cell(row[c]) for c in self.columns])
            self._file.flush()
        except OSError as e:  # disk full...: name the file; a rerun drops the cut-off line
            raise OSError(e.errno, e.strerror or str(e), str(self.partial)) from e
        self.vocabulary = name
        self.ids[r.instance_id] = line
        self._line = line

    def close(self) -> None:
        if not self._file.closed:
            try:
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError as e:
                raise OSError(e.errno, e.strerror or str(e), str(self.partial)) from e
            finally:
                try:
                    self._file.close()
                except OSError:  # the flush above already failed and said why
                    pass

    def finalize(self, *, embed: Embedder | None = None) -> Path:
        """Close, validate the whole partial file with ``read_paired``, rename it to ``path``."""
        self.close()
        if not self.ids:
            raise InputError(f"{self.partial}: no rows written; nothing to finalize.")
        read_paired(self.partial, packing=self.packing, embed=embed)
        os.replace(self.partial, self.path)
        return self.path
