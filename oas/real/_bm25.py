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
    docs = [match_terms(d) if d.strip() else [] for d in documents]
    n = len(docs)
    lengths = np.array([len(d) for d in docs], dtype=np.float64)
    avgdl = float(lengths.mean()) if n and lengths.sum() > 0 else 1.0
    df = Counter(t for d in docs for t in set(d))
    terms = list(dict.fromkeys(match_terms(query)))
    out = np.zeros(n)
    for i, d in enumerate(docs):
        tf = Counter(d)
        norm = k1 * (1.0 - b + b * lengths[i] / avgdl)
        for t in terms:
            f = tf.get(t, 0)
            if f:
                idf = math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))
                out[i] += idf * f * (k1 + 1.0) / (f + norm)
    return out


def bm25_order(query: str, documents: Sequence[str], **kwargs) -> list[int]:
    """Indices of ``documents`` by decreasing BM25 score; ties keep the given (chronological) order."""
    scores = bm25_scores(query, documents, **kwargs)
    return sorted(range(len(documents)), key=lambda i: (-scores[i], i))
