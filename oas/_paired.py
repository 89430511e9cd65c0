"""Paired data: one row per instance z = (q, C, B) with the outcomes of all four actions.

The format (columns, encodings, validation rules, resumable writing) is documented in
``docs/paired-data.md``. Reading validates every row and raises ``InputError`` naming the file,
the 1-based line (CSV: the header is line 1) and the field; nothing is dropped silently.
Plain numpy: no JAX import on this path.

References: MODEL §8 (paired data, features).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from oas._checks import (
    FEATURE_NAMES,
    ID_COLUMNS,
    KNOWN_COLUMNS,
    LENGTH_COLUMN,
    META_PREFIX,
    OUTCOME_COLUMNS,
    RAW_COLUMNS,
    REQUIRED_COLUMNS,
    Row,
    check_columns,
    validate_row,
    vocabulary_name,
)
from oas._features import compute_features_batch
from retcon.errors import InputError, check_choice, decode_utf8
from retcon.output import atomic_write, open_nofollow, refuse_symlink
from retcon.vocab import ACTIONS, VOCABULARIES
from sim import PACKINGS

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}
Embedder = Callable[[list[str]], Any]


class PairedData(NamedTuple):
    """Validated paired data of n instances; every array's first axis is the instance.

    Attributes:
      instance_id, query_id, group_id: shape ``(n,)`` str; ``group_id`` is the unit of
        independence (conversation or user): splits and bootstraps never cut a group.
      query_type: shape ``(n,)`` str, types of the one vocabulary ``vocabulary``.
      budget: shape ``(n,)`` float64, tokens.
      outcomes: shape ``(n, 4)`` float64 in [0, 1], columns in ``retcon.vocab.ACTIONS`` order.
      features: shape ``(n, 11)`` float64, columns in ``FEATURE_NAMES`` order (MODEL §8).
      vocabulary: ``"locomo"`` or ``"longmemeval"`` (``retcon.vocab.VOCABULARIES``).
      meta: extra ``meta_*`` columns, each a ``(n,)`` object array, carried through unchanged.
      cluster_tokens: shape ``(n,)`` float64, ``len(C)``: the raw tokens of the instance's cluster,
        as stored (column ``cluster_tokens``, or the sum of ``cluster_lengths``); NaN where the
        source does not give it; ``None`` for data built without it. Never rebuilt from features.
    """

    instance_id: np.ndarray
    query_id: np.ndarray
    group_id: np.ndarray
    query_type: np.ndarray
    budget: np.ndarray
    outcomes: np.ndarray
    features: np.ndarray
    vocabulary: str
    meta: dict = {}  # noqa: RUF012 - a NamedTuple default, never mutated
    cluster_tokens: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.budget.shape[0])

    @property
    def raw_grounded(self) -> np.ndarray:
        """shape ``(n,)`` float: 1.0 where retention packs all of ``C`` whole (``q in G_B``,
        MODEL §3: ``len(C) <= B`` for a cluster packed alone, under every packing), 0.0 where not,
        NaN where ``cluster_tokens`` is unknown."""
        if self.cluster_tokens is None:
            return np.full(self.n, np.nan)
        c = np.asarray(self.cluster_tokens, dtype=np.float64)
        # an empty retrieved cluster (len(C) = 0, a retrieval miss) grounds nothing
        grounded = (c > 0) & (c <= self.budget)
        return np.where(np.isfinite(c), grounded.astype(np.float64), np.nan)

    @property
    def query_type_slot(self) -> np.ndarray:
        """shape ``(n,)`` int: each query type's index in ``VOCABULARIES[vocabulary]``."""
        vocab = VOCABULARIES[self.vocabulary]
        return np.array([vocab.index(t) for t in self.query_type], dtype=np.int64)

    def take(self, index) -> PairedData:
        """The rows ``index`` (an int array or a bool mask), in that order."""
        index = np.asarray(index)
        return PairedData(
            self.instance_id[index],
            self.query_id[index],
            self.group_id[index],
            self.query_type[index],
            self.budget[index],
            self.outcomes[index],
            self.features[index],
            self.vocabulary,
            {k: v[index] for k, v in self.meta.items()},
            None if self.cluster_tokens is None else self.cluster_tokens[index],
        )


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
                try:
                    row = json.loads(text)
                except json.JSONDecodeError as e:
                    raise InputError(
                        f"{path}:{line}: not valid JSON ({e.msg} at column {e.colno})."
                    ) from None
                except RecursionError:
                    raise InputError(
                        f"{path}:{line}: JSON nested too deeply; a row is one flat object."
                    ) from None
                yield line, row, False
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


def _default_embedder() -> Embedder:
    from oas.real import embed_texts  # on first use: rows with features never need oas.real

    return embed_texts


def read_paired(
    path,
    *,
    packing: str = "prefix",
    embed: Embedder | None = None,
    vocabulary: str | None = None,
    outcomes: bool = True,
) -> PairedData:
    """Read and validate a paired-data file; compute the features of rows that give raw fields.

    Args:
      path: a ``.jsonl``/``.ndjson``, ``.csv`` or ``.parquet`` file (docs/paired-data.md).
      packing: packing for feature 3 of raw-field rows: ``"prefix"`` (default), ``"skip"``, ``"cut"``.
      embed: turns a list of k texts into a ``(k, D)`` array, for rows that give ``texts``; default
        ``oas.real.embed_texts`` when that exists.
      vocabulary: require this query-type vocabulary (``"locomo"``/``"longmemeval"``); default: the
        first row's.
      outcomes: if False (input to ``retcon predict``), the ``y_*`` columns may be absent; their
        values are then NaN.

    Returns:
      ``PairedData`` in file order.

    Raises:
      InputError: missing or unknown columns, NaN, outcomes outside [0, 1], unknown query types or
        two vocabularies in one file, duplicate ``instance_id``, non-positive budgets, malformed
        raw fields; the message names the file, the line and the field.

    References: MODEL §8.
    """
    check_choice("packing", packing, PACKINGS)
    if vocabulary is not None:
        check_choice("vocabulary", vocabulary, tuple(VOCABULARIES))
    rows = _validated_rows(
        path, iter_raw_rows(path, outcomes=outcomes), vocabulary, outcomes=outcomes
    )
    if not rows:
        raise InputError(f"{path}: no rows; expected at least one paired-data row.")
    return assemble(rows, path, packing=packing, embed=embed)


def _validated_rows(path, raw_rows, vocabulary=None, *, outcomes: bool = True) -> list[Row]:
    rows: list[Row] = []
    seen: dict[str, int] = {}
    vocab_line = None
    for line, raw, checked in raw_rows:
        row = validate_row(raw, path, line, columns_checked=checked, outcomes=outcomes)
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


def assemble(
    rows: list[Row], path, *, packing: str = "prefix", embed: Embedder | None = None
) -> PairedData:
    """Stack validated rows into ``PairedData``; raw-field rows get their features computed."""
    n = len(rows)
    vocab_name = vocabulary_name(rows[0].query_type)
    vocab = VOCABULARIES[vocab_name]
    features = np.zeros((n, len(FEATURE_NAMES)))
    raw_idx = [i for i, r in enumerate(rows) if r.features is None]
    for i, r in enumerate(rows):
        if r.features is not None:
            features[i] = r.features
    if raw_idx:
        embs = []
        for i in raw_idx:
            r = rows[i]
            if r.embeddings is not None:
                embs.append(r.embeddings)
                continue
            embed = embed or _default_embedder()
            texts = r.texts or ()  # validated: a raw row without embeddings has texts
            e = np.asarray(embed(list(texts)), dtype=np.float64)
            if e.ndim != 2 or e.shape[0] != len(texts):
                raise InputError(
                    f"{path}:{r.line}: the embedder returned shape {e.shape}; expected "
                    f"({len(texts)}, D)."
                )
            embs.append(e)
        dims = {e.shape[1] for e in embs}
        if len(dims) != 1:
            first = next(rows[i] for i, e in zip(raw_idx, embs) if e.shape[1] != embs[0].shape[1])
            raise InputError(
                f"{path}:{first.line}: field 'embeddings' has dimension "
                f"{next(e.shape[1] for e in embs if e.shape[1] != embs[0].shape[1])}; line "
                f"{rows[raw_idx[0]].line} has {embs[0].shape[1]}; one file uses one dimension."
            )
        raw_lengths = [np.asarray(rows[i].lengths) for i in raw_idx]  # set on every raw row
        k_max = max(len(x) for x in raw_lengths)
        m = len(raw_idx)
        lengths = np.zeros((m, k_max))
        mask = np.zeros((m, k_max), bool)
        sessions = np.zeros((m, k_max), np.int64)
        emb = np.zeros((m, k_max, embs[0].shape[1]))
        for j, i in enumerate(raw_idx):
            r = rows[i]
            k = len(raw_lengths[j])
            lengths[j, :k], mask[j, :k], emb[j, :k] = raw_lengths[j], True, embs[j]
            sessions[j, :k] = np.unique(np.asarray(r.session_ids), return_inverse=True)[1].reshape(
                -1
            )
        budget = np.array([rows[i].budget for i in raw_idx])
        slot = np.array([vocab.index(rows[i].query_type) for i in raw_idx])
        features[raw_idx] = compute_features_batch(
            budget, lengths, mask, sessions, emb, slot, packing
        )
    meta_cols = sorted({c for r in rows for c in r.meta})
    meta = {}
    for c in meta_cols:
        col = np.empty(n, dtype=object)
        col[:] = [r.meta.get(c) for r in rows]
        meta[c] = col

    def strings(values):
        return np.asarray(list(values), dtype=object)

    return PairedData(
        instance_id=strings(r.instance_id for r in rows),
        query_id=strings(r.query_id for r in rows),
        group_id=strings(r.group_id for r in rows),
        query_type=strings(r.query_type for r in rows),
        budget=np.array([r.budget for r in rows], dtype=np.float64),
        outcomes=np.array([r.outcomes for r in rows], dtype=np.float64).reshape(n, len(ACTIONS)),
        features=features,
        vocabulary=vocab_name,
        meta=meta,
        cluster_tokens=np.array([r.cluster_tokens for r in rows], dtype=np.float64),
    )


def paired_rows(data: PairedData) -> list[dict]:
    """``PairedData`` as row dicts with the 11 features by name (the canonical column order);
    ``cluster_tokens`` is written when every row has it."""
    lengths = data.cluster_tokens
    if lengths is not None and not np.all(np.isfinite(lengths)):
        lengths = None
    rows = []
    for i in range(data.n):
        row = {
            "instance_id": str(data.instance_id[i]),
            "query_id": str(data.query_id[i]),
            "group_id": str(data.group_id[i]),
            "query_type": str(data.query_type[i]),
            "budget": float(data.budget[i]),
        }
        row.update({c: float(data.outcomes[i, a]) for a, c in enumerate(OUTCOME_COLUMNS)})
        row.update({c: float(data.features[i, j]) for j, c in enumerate(FEATURE_NAMES)})
        if lengths is not None:
            row[LENGTH_COLUMN] = float(lengths[i])
        row.update({c: _plain(v[i]) for c, v in data.meta.items()})
        rows.append(row)
    return rows


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _ordered(row: dict) -> dict:
    known = [c for c in KNOWN_COLUMNS if c in row]
    return {
        **{c: row[c] for c in known},
        **{c: row[c] for c in sorted(row) if c not in KNOWN_COLUMNS},
    }


def _jsonable_row(row: dict) -> dict:
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


def _csv_cell(v) -> str:
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def write_paired(path, data: PairedData | Iterable[dict], *, packing: str = "prefix") -> Path:
    """Validate and write paired data atomically (``retcon.output.atomic_write``).

    Args:
      path: target; the format comes from the suffix (``.jsonl``, ``.csv``, ``.parquet``).
      data: ``PairedData`` (written with the 11 features by name) or row dicts (validated, then
        written as given: features by name or raw fields).
      packing: only used to check that raw-field rows assemble.

    Returns:
      the path written.

    References: docs/paired-data.md.
    """
    fmt = format_of(path)
    rows = (
        paired_rows(data)
        if isinstance(data, PairedData)
        else [_jsonable_row(dict(r)) for r in data]
    )
    if not rows:
        raise InputError(f"write_paired: no rows to write to {path}.")
    _validated_rows(
        f"write_paired({Path(path).name}) row", ((i, r, False) for i, r in enumerate(rows, 1))
    )
    rows = [_ordered(r) for r in rows]
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
            w.writerow([_csv_cell(r[c]) for c in columns])
        return atomic_write(path, lambda f: f.write(buf.getvalue()))
    import pyarrow as pa  # pyright: ignore[reportMissingImports]  # extra 'parquet'
    import pyarrow.parquet as pq  # pyright: ignore[reportMissingImports]

    table = pa.Table.from_pylist(rows)
    return atomic_write(path, lambda f: pq.write_table(table, f), binary=True)


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
                try:
                    row = json.loads(t)
                except json.JSONDecodeError as e:
                    raise InputError(f"{partial}:{line}: not valid JSON ({e.msg}).") from None
                except RecursionError:
                    raise InputError(f"{partial}:{line}: JSON nested too deeply.") from None
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
            rows = _validated_rows(self.partial, _partial_rows(self.partial))
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
        row = _ordered(_jsonable_row(dict(row)))
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
                w.writerow([_csv_cell(row[c]) for c in self.columns])
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


__all__ = [
    "FEATURE_NAMES",
    "ID_COLUMNS",
    "META_PREFIX",
    "OUTCOME_COLUMNS",
    "RAW_COLUMNS",
    "REQUIRED_COLUMNS",
    "PairedData",
    "PairedWriter",
    "existing_ids",
    "paired_rows",
    "read_paired",
    "write_paired",
]


def paired_from_rows(rows: Iterable[dict], *, source: str = "rows") -> PairedData:
    """Validate row dicts in the paired-data format (as ``oas.real.query_rows`` makes them) and
    stack them into ``PairedData``; errors name ``source`` and the 1-based row number."""
    valid = _validated_rows(source, ((i + 1, r, False) for i, r in enumerate(rows)))
    if not valid:
        raise InputError(f"{source}: no rows; expected at least one paired-data row.")
    return assemble(valid, source)
