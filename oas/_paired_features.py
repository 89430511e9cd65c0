"""Validated paired-data rows stacked into ``PairedData``: the 11 features of rows that give raw
fields (lengths, sessions, texts or embeddings) are computed here (MODEL §8, features 1-11).

Plain numpy: no JAX import on this path. Rows that give ``texts`` are embedded with
``oas._embed.embed_texts`` (hashed TF-IDF) unless the caller passes ``embed``.

References: MODEL §8 (paired data, features).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from oas._checks import (
    FEATURE_NAMES,
    ID_COLUMNS,
    KNOWN_COLUMNS,
    LENGTH_COLUMN,
    OUTCOME_COLUMNS,
    Row,
    vocabulary_name,
)
from oas._features import compute_features_batch
from retcon.errors import InputError
from retcon.vocab import ACTIONS, VOCABULARIES

EmbedFn = Callable[[list[str]], Any]


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

    def to_pandas(self):
        """The rows as a ``pandas.DataFrame``, one row per instance, in the paired-data format's
        columns and order (docs/paired-data.md): ``instance_id``, ``query_id``, ``group_id``,
        ``query_type``, ``budget``, ``y_<action>``, the 11 features by name, ``cluster_tokens``
        (where the data carry it; NaN where a row does not give it), then the ``meta`` columns
        (objects, unchanged). ``df[list(FEATURE_NAMES)]`` and ``df[list(OUTCOME_COLUMNS)]`` are
        the X and Y of ``oas.OASRouter``.

        Raises:
          ImportError: pandas is not installed (the extra ``pandas``).

        References: MODEL §8 (paired data, features).
        """
        pd = import_pandas("PairedData.to_pandas")
        ids = (self.instance_id, self.query_id, self.group_id)
        columns: dict[str, Any] = {c: np.asarray(v).astype(str) for c, v in zip(ID_COLUMNS, ids)}
        columns["query_type"] = np.asarray(self.query_type).astype(str)
        columns["budget"] = np.asarray(self.budget, dtype=np.float64)
        y, x = np.asarray(self.outcomes, np.float64), np.asarray(self.features, np.float64)
        columns.update({c: y[:, a] for a, c in enumerate(OUTCOME_COLUMNS)})
        columns.update({c: x[:, j] for j, c in enumerate(FEATURE_NAMES)})
        if self.cluster_tokens is not None:
            columns[LENGTH_COLUMN] = np.asarray(self.cluster_tokens, dtype=np.float64)
        known = [c for c in KNOWN_COLUMNS if c in self.meta]
        for c in known + sorted(c for c in self.meta if c not in KNOWN_COLUMNS):
            columns[c] = np.asarray(self.meta[c], dtype=object)
        return pd.DataFrame(columns, index=pd.RangeIndex(self.n))


def import_pandas(where: str):
    """``pandas``, or an ``ImportError`` naming ``where`` and the extra that installs it."""
    try:
        import pandas as pd  # pyright: ignore[reportMissingImports]  # extra 'pandas'
    except ImportError:
        raise ImportError(
            f"{where} needs pandas, which is optional; install it with "
            "pip install 'retcon[pandas]' (or pip install pandas)."
        ) from None
    return pd


def object_column(cells: list) -> np.ndarray:
    """shape ``(n,)`` object array holding ``cells`` as they are (lists stay lists)."""
    col = np.empty(len(cells), dtype=object)
    col[:] = cells
    return col


def _default_embedder() -> EmbedFn:
    from oas._embed import embed_texts

    return embed_texts


def assemble(
    rows: list[Row], path, *, packing: str = "prefix", embed: EmbedFn | None = None
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
    meta = {c: object_column([r.meta.get(c) for r in rows]) for c in meta_cols}

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
