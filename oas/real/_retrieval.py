"""End-to-end instances: the cluster is what a retriever finds, not the gold evidence.

Protocol (``retcon pair ... --protocol end-to-end``; the oracle-evidence protocol of
``oas.real._instances`` stays the default): for a question ``q`` the retriever ranks every unit of
the conversation's memory (its sessions, or its turns with ``granularity="turn"``), each rendered
as the reader sees it (``"[<date>] <text>"``), and the cluster ``C`` is the ``top_k`` best units in
rank order. ``ret`` packs them raw in that order; each operator makes its consolidated form of the
same units (query-agnostic, MODEL §1). Retrievers:

* ``bm25`` (default): ``oas.real.bm25_scores`` with the conversation's units as the corpus.
* ``embedding``: cosine between the question's and each unit's embedding under the run's
  ``Embedder`` (fitted on the conversation's units), so any embedder of ``--embedder`` serves.

Ties keep chronological order. Retrieval recall of a set of units is the share of the question's
gold evidence turns that lie in them; the paired rows record it for the units that pack under each
budget (``meta_retrieval_recall``) and for the whole cluster (``meta_retrieval_recall_cluster``).

References: MODEL §1-2 (cluster, packing in retriever order), §8 (features from ``C``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from oas.real._bm25 import bm25_scores
from oas.real._instances import render, session_records, turn_records
from oas.real._types import Conversation, Query, Record
from retcon.errors import InputError

PROTOCOLS = ("oracle", "end-to-end")
RETRIEVERS = ("bm25", "embedding")
TYPE_SOURCES = ("predicted", "gold")
DEFAULT_TOP_K = {"session": 4, "turn": 40}


def memory_units(conversation: Conversation, granularity: str) -> list[Record]:
    """Every unit a retriever can return: the sessions, or the turns, in chronological order."""
    if granularity == "session":
        return session_records(conversation)
    if granularity == "turn":
        return turn_records(conversation)
    raise InputError(f"--granularity must be 'session' or 'turn'; got {granularity!r}.")


def rank_units(
    question: str, units: Sequence[Record], retriever: str = "bm25", embedder=None
) -> list[int]:
    """Indices of ``units`` by decreasing relevance to ``question``; ties keep the given order.

    Args:
      question: the question text.
      units: the memory units (rendered with their dates for scoring).
      retriever: ``"bm25"`` or ``"embedding"``.
      embedder: an ``Embedder`` already fitted on the units' texts (``"embedding"`` only).

    Returns:
      a permutation of ``range(len(units))``.
    """
    scores = unit_scores(question, units, retriever, embedder)
    return sorted(range(len(units)), key=lambda i: (-float(scores[i]), i))


def unit_scores(
    question: str, units: Sequence[Record], retriever: str = "bm25", embedder=None
) -> np.ndarray:
    """The retriever's score of each unit (rendered ``"[<date>] <text>"``) for ``question``.

    Returns:
      shape ``(len(units),)`` float64: BM25 over the units as corpus, or the embedding dot product.
    """
    texts = [render(u) for u in units]
    if retriever == "bm25":
        return np.asarray(bm25_scores(question, texts), dtype=np.float64)
    if retriever == "embedding":
        if embedder is None:
            raise InputError("rank_units: retriever 'embedding' needs an embedder; got None.")
        e = np.asarray(embedder.embed(texts), dtype=np.float64)
        q = np.asarray(embedder.embed([question]), dtype=np.float64)[0]
        return e @ q
    raise InputError(f"--retriever must be one of {list(RETRIEVERS)}; got {retriever!r}.")


def retrieve(
    query: Query,
    conversation: Conversation,
    granularity: str = "session",
    *,
    top_k: int | None = None,
    retriever: str = "bm25",
    embedder=None,
) -> list[Record]:
    """The end-to-end cluster of ``query``: the ``top_k`` best units of the memory, in rank order.

    Args:
      query: a question of ``conversation`` (only its text is used).
      conversation: the memory.
      granularity: ``"session"`` or ``"turn"``.
      top_k: units kept (>= 1); ``None`` takes ``DEFAULT_TOP_K[granularity]``.
      retriever: ``"bm25"`` or ``"embedding"``.
      embedder: fitted ``Embedder`` for ``"embedding"``.

    Returns:
      at most ``top_k`` records (fewer when the memory is smaller).

    References: MODEL §1 (cluster), §2 (retriever order).
    """
    k = DEFAULT_TOP_K.get(granularity, 4) if top_k is None else int(top_k)
    if k < 1:
        raise InputError(f"--top-k must be a positive integer; got {top_k!r}.")
    units = memory_units(conversation, granularity)
    if not units:
        raise InputError(
            f"conversation {conversation.conversation_id}: no memory to retrieve from."
        )
    order = rank_units(query.text, units, retriever, embedder)
    return [units[i] for i in order[:k]]


def evidence_recall(query: Query, records: Sequence[Record]) -> float:
    """Share of ``query``'s gold evidence turns that lie in ``records`` (1.0 with no evidence)."""
    ev = set(query.evidence_ids)
    if not ev:
        return 1.0
    found = {i for r in records for i in (r.source_ids or (r.record_id,))}
    return len(ev & found) / len(ev)
