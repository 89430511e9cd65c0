"""Hashed TF-IDF embeddings of record texts, for OAS features 6-7 (cluster inconsistency, mean
pairwise cosine); no model download.

Each content token (``oas._text.content_tokens``) is hashed (BLAKE2b, stable across processes,
unlike Python's ``hash``) into one of ``dim`` buckets with a sign bit; a text's vector is
``sum_t (1 + ln tf(t)) * idf(t) * sign(t) e_bucket(t)``, L2-normalized, with the smoothed idf
``ln((1 + N) / (1 + n_t)) + 1`` over a corpus given by ``fit`` (the conversation's raw records).
``oas.read_paired`` uses ``embed_texts`` for rows that give texts; ``oas.real`` adds neural and
HTTP embedders on top.

References: MODEL §8 (features 6, 7).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from oas._text import content_tokens
from retcon.errors import InputError


def _bucket(token: str, dim: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
    return (h >> 1) % dim, (1.0 if h & 1 else -1.0)


class HashedTfidf:
    """Hashed TF-IDF embeddings (default; no download).

    Args:
      dim: number of hash buckets (> 0).
    """

    def __init__(self, dim: int = 2048):
        if int(dim) <= 0:
            raise InputError(f"HashedTfidf.dim must be a positive integer; got {dim!r}.")
        self.dim = int(dim)
        self.name = f"hashed-tfidf:{self.dim}"
        self._n = 0
        self._df: Counter = Counter()

    def fit(self, corpus: Sequence[str]) -> HashedTfidf:
        out = HashedTfidf(self.dim)
        out._n = len(corpus)
        out._df = Counter(t for text in corpus for t in set(content_tokens(text)))
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        e = np.zeros((len(texts), self.dim))
        for i, text in enumerate(texts):
            for t, f in Counter(content_tokens(text)).items():
                j, sign = _bucket(t, self.dim)
                idf = math.log((1 + self._n) / (1 + self._df.get(t, 0))) + 1.0
                e[i, j] += sign * (1.0 + math.log(f)) * idf
        norm = np.linalg.norm(e, axis=1, keepdims=True)
        return np.where(norm > 0, e / np.where(norm > 0, norm, 1.0), 0.0)


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """Default embeddings of a cluster's texts, shape ``(len(texts), 2048)``: hashed TF-IDF fitted on
    the texts themselves (used by ``oas.read_paired`` for rows that give ``texts``).

    References: MODEL §8 (features 6, 7).
    """
    texts = list(texts)
    return HashedTfidf().fit(texts).embed(texts)
