"""BM25 relevance order (Robertson & Zaragoza 2009, the Lucene idf variant), for ``--order bm25``.

For a query with distinct terms ``t`` and documents ``d`` of a corpus of ``N`` documents:

    score(q, d) = sum_t idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))

with ``n_t`` the number of documents holding ``t``, ``|d|`` the document's length in terms and
``avgdl`` the mean length. The ``1 +`` inside the log keeps idf positive for terms in most documents,
which matters because the corpus here is a cluster of a few records. Terms are
``match_terms``: normalized content tokens (stop words dropped), lightly stemmed.

References: MODEL §2 (records are packed in retriever order).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from oas.real._text import match_terms


def bm25_scores(
    query: str, documents: Sequence[str], *, k1: float = 1.5, b: float = 0.75
) -> np.ndarray:
    """BM25 score of each document for ``query``, with corpus statistics from ``documents``.

    Args:
      query: the question text.
      documents: the texts to rank (also the corpus for idf and avgdl); at least one.
      k1: term-frequency saturation (>= 0).
      b: length normalization in [0, 1].

    Returns:
      shape ``(len(documents),)`` float64 scores (0 for a document sharing no term).
    """
    docs = [_terms(d) for d in documents]
    n = len(docs)
    lengths = np.array([len(d[0]) for d in docs], dtype=np.float64)
    avgdl = float(lengths.mean()) if n and lengths.sum() > 0 else 1.0
    df = Counter(t for d in docs for t in d[1])
    terms = list(dict.fromkeys(match_terms(query)))
    # idf per query term, computed once (the same float for every document); a term no document
    # holds never scores, so it is left out
    idf = {t: math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms if df[t]}
    out = np.zeros(n)
    for i, (d, tf) in enumerate(docs):
        if not d:
            continue
        norm = k1 * (1.0 - b + b * float(lengths[i]) / avgdl)
        s = 0.0
        for t in terms:
            f = tf.get(t, 0)
            if f:
                s += idf[t] * f * (k1 + 1.0) / (f + norm)
        out[i] = s
    return out


@lru_cache(maxsize=1 << 16)
def _terms(text: str) -> tuple[tuple[str, ...], dict[str, int]]:
    """``match_terms`` of one document and their counts, kept: readers and retrievers score the
    same sentences and units again for every question, budget and action. Read only."""
    d = tuple(match_terms(text)) if text.strip() else ()
    return d, dict(Counter(d))


def bm25_order(query: str, documents: Sequence[str], **kwargs) -> list[int]:
    """Indices of ``documents`` by decreasing BM25 score; ties keep the given (chronological) order."""
    scores = bm25_scores(query, documents, **kwargs)
    return sorted(range(len(documents)), key=lambda i: (-scores[i], i))
