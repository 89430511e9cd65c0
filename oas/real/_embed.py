"""Record embeddings for OAS features 6-7 (cluster inconsistency, mean pairwise cosine).

Default ``HashedTfidf``: no model download. Each content token is hashed (BLAKE2b, stable across
processes, unlike Python's ``hash``) into one of ``dim`` buckets with a sign bit; a text's vector
is ``sum_t (1 + ln tf(t)) * idf(t) * sign(t) e_bucket(t)``, L2-normalized, with the smoothed idf
``ln((1 + N) / (1 + n_t)) + 1`` over a corpus given by ``fit`` (the conversation's raw records).
``SentenceTransformerEmbedder`` uses sentence-transformers (extra ``embeddings``), imported lazily.

References: MODEL §8 (features 6, 7).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from oas.real._text import content_tokens
from retcon.errors import InputError, Spell


@runtime_checkable
class Embedder(Protocol):
    name: str

    def fit(self, corpus: Sequence[str]) -> Embedder:
        """Corpus statistics (idf); a neural embedder returns itself unchanged."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape ``(len(texts), D)`` float64 embeddings."""
        ...


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


class SentenceTransformerEmbedder:
    """Neural embeddings from sentence-transformers (extra ``embeddings``); the model must be local
    or downloadable by the user.

    Args:
      model: a sentence-transformers model name or path.
    """

    def __init__(self, model: str = "sentence-transformers/all-MiniLM-L6-v2"):
        try:
            from sentence_transformers import (  # pyright: ignore[reportMissingImports]  # extra 'embeddings'
                SentenceTransformer,
            )
        except ImportError:
            raise InputError(
                "--embedder sentence-transformers needs the optional extra 'embeddings' "
                "(pip install 'retcon[embeddings]'); got no sentence_transformers module."
            ) from None
        self._model = SentenceTransformer(model)
        self.name = f"sentence-transformers:{model}"

    def fit(self, corpus: Sequence[str]) -> SentenceTransformerEmbedder:
        return self

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(
            self._model.encode(list(texts), normalize_embeddings=True), dtype=np.float64
        )


def make_embedder(name: str = "hashed-tfidf") -> Embedder:
    """``"hashed-tfidf"`` (default), ``"sentence-transformers[:MODEL]"`` or ``"openai:MODEL"`` (an
    OpenAI-compatible ``/v1/embeddings`` endpoint, ``oas.real._embed_http``)."""
    if name == "hashed-tfidf":
        return HashedTfidf()
    if name == "sentence-transformers" or name.startswith("sentence-transformers:"):
        model = name.partition(":")[2]
        return SentenceTransformerEmbedder(model) if model else SentenceTransformerEmbedder()
    if name.startswith("openai:"):
        from oas.real._embed_http import OpenAIEmbedder

        return OpenAIEmbedder(name.partition(":")[2])
    spell = Spell("make_embedder", py={"embedder": "name"})
    raise InputError(
        f"{spell.lead('embedder')} must be 'hashed-tfidf', 'sentence-transformers[:MODEL]' or "
        f"'openai:MODEL'; got {name!r}."
    )


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """Default embeddings of a cluster's texts, shape ``(len(texts), 2048)``: hashed TF-IDF fitted on
    the texts themselves (used by ``oas.read_paired`` for rows that give ``texts``).

    References: MODEL §8 (features 6, 7).
    """
    texts = list(texts)
    return HashedTfidf().fit(texts).embed(texts)
