"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (``--embedder openai:MODEL``).

``POST {base_url}/embeddings`` with ``{"model": MODEL, "input": [texts]}``; the response's
``data[i].embedding`` (ordered by ``data[i].index``) are L2-normalized. ``base_url`` is the API root
that ends in ``/v1`` (as for chat). Requests go through the chat client's transport
(``oas.real.llm._http.EndpointPool``: the same retries on 5xx, 408, 429, timeouts and garbage, the
same backoff) and its on-disk cache (``oas.real.llm._cache``, one entry per text), so a 503
mid-run is retried and a rerun sends nothing. Each distinct text is sent once; requests carry at
most ``batch`` texts.

The endpoint is one ``EndpointConfig`` (``resolve_endpoint(..., kind="embeddings")``). Address:
``$RETCON_EMBED_BASE_URL``, else ``$RETCON_LLM_BASE_URL`` (first URL), else ``$OPENAI_BASE_URL``;
checked (http/https) when the embedder is made, before any work. Key: ``$RETCON_EMBED_API_KEY`` /
``$RETCON_LLM_API_KEY`` / ``$OPENAI_API_KEY``, each only to the hosts it is bound to
(``oas.real.llm._config``; none sent when empty).

References: MODEL §8 (features 6, 7 use record embeddings); docs/llm.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np

from oas.real.llm._cache import embedding_key, read_entry, write_entry
from oas.real.llm._config import EndpointConfig
from oas.real.llm._http import EndpointPool, Route
from retcon.errors import InputError


def parse_embeddings(raw: bytes) -> list[list[float]] | None:
    """The ``data[i].embedding`` lists of an embeddings body in ``index`` order, or ``None`` when
    the body is malformed (retried as garbage)."""
    try:
        payload = json.loads(raw.decode("utf-8"))
        items = sorted(payload["data"], key=lambda d: d.get("index", 0))
        vecs = [list(d["embedding"]) for d in items]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        return None
    for v in vecs:
        if not v or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v
        ):
            return None
    return vecs


EMBEDDINGS = Route("embeddings", parse_embeddings, "data[i].embedding lists of numbers")


class OpenAIEmbedder:
    """Neural embeddings from an OpenAI-compatible endpoint (module docstring).

    Args:
      config: the endpoint (``resolve_endpoint(model=MODEL, kind="embeddings")``): address, key,
        model, cache folder, timeout and retries, checked there.
      batch: texts per request (>= 1).
      sleep: called with the seconds to wait before a retry (tests).
    """

    def __init__(self, config: EndpointConfig, *, batch: int = 64, sleep=None):
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise InputError(f"OpenAIEmbedder.batch must be an integer >= 1; got {batch!r}.")
        self.model = config.model
        self.base_url = config.base_url
        self.batch = batch
        self.name = f"openai:{config.model}"
        self.config = config
        self.pool = EndpointPool(config, route=EMBEDDINGS, sleep=sleep)
        self._memo: dict[str, np.ndarray] = {}

    @property
    def api_key(self) -> str:
        return self.config.api_key

    def fit(self, corpus: Sequence[str]) -> OpenAIEmbedder:
        return self

    def _request(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        vecs, _ = self.pool.send(body)
        if len(vecs) != len(texts):
            raise InputError(
                f"--embedder {self.name}: sent {len(texts)} texts, got {len(vecs)} embeddings."
            )
        return vecs

    def _keep(self, text: str, v) -> None:
        v = np.asarray(v, dtype=np.float64)
        n = float(np.linalg.norm(v))
        self._memo[text] = v / n if n > 0 else v

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        cache = self.config.cache_dir
        todo = []
        for t in dict.fromkeys(t for t in texts if t not in self._memo):
            hit = read_entry(cache, embedding_key(self.model, t), "embedding")
            if hit is None:
                todo.append(t)
            else:
                self._keep(t, hit)
        for i in range(0, len(todo), self.batch):
            chunk = todo[i : i + self.batch]
            for t, v in zip(chunk, self._request(chunk)):
                entry = {"kind": "embeddings", "model": self.model, "input": t, "embedding": v}
                write_entry(cache, embedding_key(self.model, t), entry)
                self._keep(t, v)
        if not texts:
            return np.zeros((0, 1))
        return np.stack([self._memo[t] for t in texts])
