"""Record embeddings for OAS features 6-7 (cluster inconsistency, mean pairwise cosine).

Default ``HashedTfidf`` (no model download; its home is ``oas._embed``, since ``oas.read_paired``
needs it too).
``SentenceTransformerEmbedder`` uses sentence-transformers (extra ``embeddings``), imported lazily.

References: MODEL §8 (features 6, 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from oas._embed import HashedTfidf
from retcon.errors import InputError


@runtime_checkable
class Embedder(Protocol):
    name: str

    def fit(self, corpus: Sequence[str]) -> Embedder:
        """Corpus statistics (idf); a neural embedder returns itself unchanged."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape ``(len(texts), D)`` float64 embeddings."""
        ...


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
    raise InputError(
        f"--embedder must be 'hashed-tfidf', 'sentence-transformers[:MODEL]' or 'openai:MODEL'; "
        f"got {name!r}."
    )
