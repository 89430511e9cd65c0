"""Boundary checks of the oas package: one paired-data row, options of the public functions.

Every message names the file, the 1-based line (the header counts as line 1 in CSV) and the field,
what was expected and what came, so a user can fix the row; nothing is dropped silently.

References: MODEL §8 (paired data), docs/paired-data.md (the format).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple

import numpy as np

from oas._features import FEATURE_NAMES
from oas._structure import STRUCTURE_COLUMN, check_structure
from retcon.errors import InputError
from retcon.vocab import ACTIONS, LOCOMO_TYPES, LONGMEMEVAL_TYPES, VOCABULARIES

ID_COLUMNS = ("instance_id", "query_id", "group_id")
OUTCOME_COLUMNS = tuple(f"y_{a}" for a in ACTIONS)
REQUIRED_COLUMNS = ID_COLUMNS + ("query_type", "budget") + OUTCOME_COLUMNS
RAW_COLUMNS = ("cluster_lengths", "session_ids", "embeddings", "texts")
#: ``len(C)``: the cluster's raw tokens, stored per row (optional; derived from cluster_lengths).
LENGTH_COLUMN = "cluster_tokens"
META_PREFIX = "meta_"
OPTIONAL_COLUMNS = (STRUCTURE_COLUMN,)  # carried in PairedData.meta under its own name
KNOWN_COLUMNS = REQUIRED_COLUMNS + FEATURE_NAMES + RAW_COLUMNS + (LENGTH_COLUMN,) + OPTIONAL_COLUMNS
ALL_TYPES = tuple(LOCOMO_TYPES) + tuple(LONGMEMEVAL_TYPES)


class Row(NamedTuple):
    """One validated paired-data row; exactly one of ``features`` and ``lengths`` is set."""

    instance_id: str
    query_id: str
    group_id: str
    query_type: str
    budget: float
    outcomes: tuple[float, float, float, float]
    features: np.ndarray | None  # (11,)
    lengths: np.ndarray | None  # (k,)
    session_ids: tuple[str, ...] | None
    embeddings: np.ndarray | None  # (k, D)
    texts: tuple[str, ...] | None
    meta: dict[str, Any]
    line: int
    cluster_tokens: float = math.nan  # len(C) in tokens; NaN when the row does not give it


def where(path, line: int) -> str:
    return f"{path}:{line}"


class DuplicateKeyError(InputError):
    """A JSON object gives one key twice (`unique_keys`); ``key`` is that key."""

    def __init__(self, message: str, key: str):
        super().__init__(message)
        self.key = key


def unique_keys(place: str):
    """A ``json`` ``object_pairs_hook`` that refuses a key given twice in one object.

    Python's ``json`` keeps the last of duplicate keys without a word, so ``{"y_ret": 1,
    "y_ret": 0}`` would silently mean 0; a file that says two things is refused instead.
    ``place``: the file or ``file:line`` the text came from, first in the message.
    """

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise DuplicateKeyError(
                    f"{place}: duplicate key {key!r} in one object; JSON would keep only the "
                    f"last value, so the file is ambiguous. Give each key once.",
                    key,
                )
            out[key] = value
        return out

    return hook


# A number as a CSV cell spells it: JSON's number grammar (what `csv_cell` writes), plus the
# ``nan``/``inf`` words refused below with their own message. float() alone would also take
# ``1_0`` (10), padded or ``infinity`` cells that no JSON row could hold.
_CSV_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|[+-]?(?i:nan|inf)")


def check_columns(columns, path, line: int, *, outcomes: bool = True) -> None:
    """Raise on a missing required column, an unknown column, or a mix of features and raw fields.

    With ``outcomes=False`` (prediction input) the four ``y_*`` columns may be absent, all together.
    """
    cols = list(columns)
    required = REQUIRED_COLUMNS
    if not outcomes and not any(c in cols for c in OUTCOME_COLUMNS):
        required = tuple(c for c in REQUIRED_COLUMNS if c not in OUTCOME_COLUMNS)
    for c in required:
        if c not in cols:
            raise InputError(
                f"{where(path, line)}: missing column {c!r}; a paired-data row needs "
                f"{list(REQUIRED_COLUMNS)} (see docs/paired-data.md)."
            )
    for c in cols:
        if c not in KNOWN_COLUMNS and not c.startswith(META_PREFIX):
            raise InputError(
                f"{where(path, line)}: unknown column {c!r}; expected the columns of "
                f"docs/paired-data.md or an extra column named '{META_PREFIX}*'."
            )
    has_feat = [c for c in FEATURE_NAMES if c in cols]
    has_raw = [c for c in RAW_COLUMNS if c in cols]
    if has_feat and has_raw:
        raise InputError(
            f"{where(path, line)}: columns give both features ({has_feat[0]!r}) and raw fields "
            f"({has_raw[0]!r}); give either all 11 features or the raw fields."
        )
    if has_feat:
        missing = [c for c in FEATURE_NAMES if c not in cols]
        if missing:
            raise InputError(
                f"{where(path, line)}: missing column {missing[0]!r}; a row with features "
                f"needs all 11: {list(FEATURE_NAMES)}."
            )
        return
    if not has_raw:
        raise InputError(
            f"{where(path, line)}: missing column 'cluster_lengths'; give either all 11 "
            f"features {list(FEATURE_NAMES)} or the raw fields cluster_lengths, "
            f"session_ids and embeddings (or texts)."
        )
    for c in ("cluster_lengths", "session_ids"):
        if c not in cols:
            raise InputError(
                f"{where(path, line)}: missing column {c!r}; raw fields need cluster_lengths, "
                f"session_ids and embeddings (or texts)."
            )
    if "embeddings" in cols and "texts" in cols:
        raise InputError(
            f"{where(path, line)}: columns give both 'embeddings' and 'texts'; give one."
        )
    if "embeddings" not in cols and "texts" not in cols:
        raise InputError(
            f"{where(path, line)}: missing column 'embeddings'; raw fields need "
            f"embeddings (or texts)."
        )


def _id(value, path, line, field) -> str:
    if (
        isinstance(value, bool)
        or not isinstance(value, (str, int))
        or (isinstance(value, str) and not value.strip())
    ):
        raise InputError(
            f"{where(path, line)}: field {field!r} must be a non-empty string or integer; got {value!r}."
        )
    return str(value)


# Largest |feature|: its square must stay finite in float32, where the router standardizes them.
FEATURE_LIMIT = 1e12


def _number(value, path, line, field, text_cells: bool = False) -> float:
    if isinstance(value, str):
        if not text_cells:
            raise InputError(
                f"{where(path, line)}: field {field!r} must be a number; got the string "
                f"{value[:40]!r} (write numbers without quotes; only CSV cells are text)."
            )
        if not _CSV_NUMBER.fullmatch(value):
            raise InputError(
                f"{where(path, line)}: field {field!r} must be a number; got {value[:40]!r}."
            )
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where(path, line)}: field {field!r} must be a number; got {value!r}.")
    x = float(value)
    if math.isnan(x):
        raise InputError(f"{where(path, line)}: field {field!r} is NaN; expected a finite number.")
    if math.isinf(x):
        raise InputError(f"{where(path, line)}: field {field!r} is {x}; expected a finite number.")
    return x


def _list(value, path, line, field) -> list:
    if isinstance(value, str):  # CSV cells hold lists as JSON
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise InputError(
                f"{where(path, line)}: field {field!r} must be a JSON list; got {value[:40]!r}."
            ) from None
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{where(path, line)}: field {field!r} must be a list; got {value!r}.")
    return list(value)


def validate_row(
    raw: dict,
    path,
    line: int,
    *,
    columns_checked: bool = False,
    outcomes: bool = True,
    text: bool = False,
) -> Row:
    """Check one row (a dict from JSONL, CSV or Parquet) and return it typed.

    ``text``: the row's cells are text (a CSV row), so a number is read from its spelling (JSON's
    number grammar); in JSONL and Parquet a number given as a string (``"1"``) is refused.
    Either way ``"1"`` never means a different thing in one format than in another.

    Raises:
      InputError: naming ``path:line``, the field, what was expected and what came.

    References: MODEL §8; docs/paired-data.md.
    """
    if not isinstance(raw, dict):
        raise InputError(
            f"{where(path, line)}: a row must be a JSON object; got {type(raw).__name__}."
        )
    if not columns_checked:
        check_columns(raw.keys(), path, line, outcomes=outcomes)
    ids = [_id(raw[c], path, line, c) for c in ID_COLUMNS]
    qt = raw["query_type"]
    if not isinstance(qt, str) or qt not in ALL_TYPES:
        raise InputError(
            f"{where(path, line)}: field 'query_type' must be one of locomo={list(LOCOMO_TYPES)} "
            f"or longmemeval={list(LONGMEMEVAL_TYPES)}; got {qt!r}."
        )
    budget = _number(raw["budget"], path, line, "budget", text)
    if budget <= 0:
        raise InputError(f"{where(path, line)}: field 'budget' must be > 0 tokens; got {budget:g}.")
    ys = []
    for c in OUTCOME_COLUMNS:
        if c not in raw:  # allowed only without outcomes (check_columns)
            ys.append(float("nan"))
            continue
        y = _number(raw[c], path, line, c, text)
        if not 0.0 <= y <= 1.0:
            raise InputError(f"{where(path, line)}: field {c!r} must be in [0, 1]; got {y:g}.")
        ys.append(y)
    meta = {c: v for c, v in raw.items() if c.startswith(META_PREFIX)}
    if STRUCTURE_COLUMN in raw:
        cell = raw[STRUCTURE_COLUMN]
        if text and isinstance(cell, str):  # a CSV cell holds the object as JSON
            try:
                cell = json.loads(cell, object_pairs_hook=unique_keys(where(path, line)))
            except (json.JSONDecodeError, RecursionError):
                cell = raw[STRUCTURE_COLUMN]  # check_structure names what is wrong
        meta[STRUCTURE_COLUMN] = check_structure(cell, path, line)
    features = lengths = sessions = emb = texts = None
    if FEATURE_NAMES[0] in raw:
        features = np.array([_number(raw[c], path, line, c, text) for c in FEATURE_NAMES])
        big = np.flatnonzero(np.abs(features) > FEATURE_LIMIT)
        if big.size:
            c = FEATURE_NAMES[big[0]]
            raise InputError(
                f"{where(path, line)}: field {c!r} must be within +-{FEATURE_LIMIT:g} (features are "
                f"standardized in float32); got {features[big[0]]:g}."
            )
        onehot = features[7:]
        slot = _slot(qt)
        if not np.array_equal(onehot, np.eye(4)[slot]):
            raise InputError(
                f"{where(path, line)}: fields query_type_0..3 must be the one-hot of query_type "
                f"{qt!r} (slot {slot}); got {onehot.tolist()}."
            )
    else:
        lens = _list(raw["cluster_lengths"], path, line, "cluster_lengths")
        if not lens:
            raise InputError(
                f"{where(path, line)}: field 'cluster_lengths' is empty; expected at least one record."
            )
        lengths = np.array([_number(v, path, line, "cluster_lengths") for v in lens])
        if np.any(lengths <= 0):
            raise InputError(
                f"{where(path, line)}: field 'cluster_lengths' must hold token lengths > 0; "
                f"got {lengths[lengths <= 0][0]:g}."
            )
        k = len(lengths)
        sess = _list(raw["session_ids"], path, line, "session_ids")
        if len(sess) != k:
            raise InputError(
                f"{where(path, line)}: field 'session_ids' has {len(sess)} entries; expected {k} "
                f"(one per cluster_lengths entry)."
            )
        sessions = tuple(_id(s, path, line, "session_ids") for s in sess)
        if "embeddings" in raw:
            rows = _list(raw["embeddings"], path, line, "embeddings")
            if len(rows) != k:
                raise InputError(
                    f"{where(path, line)}: field 'embeddings' has {len(rows)} vectors; expected {k}."
                )
            vecs = [_list(r, path, line, "embeddings") for r in rows]
            dims = {len(v) for v in vecs}
            if len(dims) != 1 or 0 in dims:
                raise InputError(
                    f"{where(path, line)}: field 'embeddings' must hold {k} vectors of one "
                    f"non-zero length; got lengths {sorted(dims)}."
                )
            emb = np.array([[_number(x, path, line, "embeddings") for x in v] for v in vecs])
        else:
            tx = _list(raw["texts"], path, line, "texts")
            if len(tx) != k or not all(isinstance(t, str) for t in tx):
                raise InputError(
                    f"{where(path, line)}: field 'texts' must hold {k} strings; got {tx!r:.80}."
                )
            texts = tuple(tx)
    if LENGTH_COLUMN in raw:
        cluster_tokens = _number(raw[LENGTH_COLUMN], path, line, LENGTH_COLUMN, text)
    elif lengths is not None:
        cluster_tokens = float(lengths.sum())
    elif "meta_cluster_tokens" in raw:  # files written before the column was part of the format
        cluster_tokens = _number(
            raw["meta_cluster_tokens"], path, line, "meta_cluster_tokens", text
        )
    else:
        cluster_tokens = math.nan
    # 0: the retriever returned no record of the query's cluster (docs/paired-data.md)
    if not cluster_tokens >= 0 and not math.isnan(cluster_tokens):
        raise InputError(
            f"{where(path, line)}: field {LENGTH_COLUMN!r} must be >= 0 tokens; got {cluster_tokens:g}."
        )
    return Row(
        instance_id=ids[0],
        query_id=ids[1],
        group_id=ids[2],
        query_type=qt,
        budget=budget,
        outcomes=(ys[0], ys[1], ys[2], ys[3]),
        features=features,
        lengths=lengths,
        session_ids=sessions,
        embeddings=emb,
        texts=texts,
        meta=meta,
        line=line,
        cluster_tokens=cluster_tokens,
    )


def _slot(query_type: str) -> int:
    for vocab in VOCABULARIES.values():
        if query_type in vocab:
            return vocab.index(query_type)
    raise InputError(f"unknown query type {query_type!r}.")


def vocabulary_name(query_type: str) -> str:
    for name, vocab in VOCABULARIES.items():
        if query_type in vocab:
            return name
    raise InputError(f"unknown query type {query_type!r}.")
