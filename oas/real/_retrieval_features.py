"""Post-retrieval features 12-14 of LoCoMo end-to-end rows (docs/oas.md, docs/end-to-end.md).

The retriever of ``retcon pair ... --protocol end-to-end`` is run again for each question: its
scores over the conversation's units, the ``top_k`` units it keeps (the cluster ``C``, in rank
order, ties chronological) and which units share a content word (``content_tokens``: stop words
removed) with the question go through ``oas.retrieval_features_batch``, the one implementation
``sim`` uses with its noisy scores. Nothing here reads the gold evidence.

References: MODEL §8 (features), docs/oas.md ("Post-retrieval features").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from oas import RETRIEVAL_META_COLUMNS, retrieval_features_batch
from oas.real._instances import render
from oas.real._retrieval import DEFAULT_TOP_K, memory_units, unit_scores
from oas.real._text import content_tokens
from oas.real._types import Conversation, Record
from retcon.errors import InputError


def unit_retrieval_features(
    question: str,
    units: Sequence[Record],
    top_k: int,
    retriever: str = "bm25",
    embedder=None,
    *,
    unit_words: Sequence[frozenset] | None = None,
) -> np.ndarray:
    """Features 12-14 (score margin, score mass, overlap count) of one question's retrieval.

    Args:
      question: the question text.
      units: the memory units the retriever ranks.
      top_k: units kept in the cluster (>= 1).
      retriever: ``"bm25"`` or ``"embedding"`` (with a fitted ``embedder``).
      unit_words: the units' content words (``unit_content_words(units)``), when the caller
        keeps them across the questions of a conversation; computed here otherwise.

    Returns:
      shape ``(3,)`` float64.
    """
    if not units:
        raise InputError("unit_retrieval_features: no memory units to retrieve from.")
    scores = unit_scores(question, units, retriever, embedder)
    order = sorted(range(len(units)), key=lambda i: (-float(scores[i]), i))
    kept = np.zeros(len(units), bool)
    kept[order[: max(1, int(top_k))]] = True
    words = set(content_tokens(question))
    sets = unit_content_words(units) if unit_words is None else unit_words
    overlap = np.asarray([bool(words & w) for w in sets])
    valid = np.ones(len(units), bool)
    return retrieval_features_batch(scores[None], valid[None], kept[None], overlap[None])[0]


def unit_content_words(units: Sequence[Record]) -> list[frozenset]:
    """Each unit's content words as the overlap count reads them (rendered with its date)."""
    return [frozenset(content_tokens(render(u))) for u in units]


def locomo_retrieval_features(
    data,
    conversations: Sequence[Conversation],
    *,
    granularity: str = "session",
    retriever: str = "bm25",
    top_k: int | None = None,
    embedder=None,
) -> np.ndarray:
    """Features 12-14 for every row of end-to-end paired data, computed once per question.

    Rows that carry them (``oas.RETRIEVAL_META_COLUMNS``, written by ``retcon pair --protocol
    end-to-end``) keep their stored values; the others (files paired before the columns existed)
    are computed from the texts with the given retrieval settings.

    Args:
      data: ``oas.PairedData`` whose ``query_id`` values are the conversations' question ids.
      conversations: the loaded conversations (``oas.real.load_locomo``).
      granularity, retriever, top_k, embedder: the pairing run's retrieval settings; the
        embedder is fitted on each conversation's units (``embedder.fit``), as the pairing run
        fits it (``ConversationContext``).

    Returns:
      ``(n, 3)`` float64 in ``RETRIEVAL_META_COLUMNS`` order.
    """
    k = DEFAULT_TOP_K.get(granularity, 4) if top_k is None else int(top_k)
    by_id = {}
    words: dict[str, list[frozenset]] = {}
    for conv in conversations:
        units = memory_units(conv, granularity)
        fitted = embedder.fit([u.text for u in units]) if embedder is not None else None
        for q in conv.queries:
            by_id[q.query_id] = (q.text, units, conv.conversation_id, fitted)

    cache: dict[str, np.ndarray] = {}
    out = np.zeros((data.n, 3))
    stored = [data.meta.get(c) for c in RETRIEVAL_META_COLUMNS]
    for i, qid in enumerate(np.asarray(data.query_id).astype(str)):
        if all(col is not None and col[i] is not None for col in stored):
            out[i] = [float(col[i]) for col in stored]  # pyright: ignore[reportOptionalSubscript]
            continue
        if qid not in cache:
            if qid not in by_id:
                raise InputError(
                    f"locomo_retrieval_features: row {i}: query_id {qid!r} is not a question of "
                    "the given conversations."
                )
            text, units, cid, fitted = by_id[qid]
            if cid not in words:
                words[cid] = unit_content_words(units)
            cache[qid] = unit_retrieval_features(
                text, units, k, retriever, fitted, unit_words=words[cid]
            )
        out[i] = cache[qid]
    return out
