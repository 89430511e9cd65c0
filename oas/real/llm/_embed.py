"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (``--embedder openai:MODEL``).

``POST {base_url}/embeddings`` with ``{"model": MODEL, "input": [texts]}``; the response's
``data[i].embedding`` (ordered by ``data[i].index``) are L2-normalized. ``base_url`` is the API root
that ends in ``/v1`` (as for chat). Requests go through the chat client's transport
(``oas.real.llm._http.EndpointPool``: the same retries on 5xx, 408, 429, timeouts and garbage, the
same backoff) and its on-disk cache (``oas.real.llm._cache``, one entry per text), so a 503
mid-run is retried and a rerun sends nothing. Each distinct text is sent once; requests carry at
most ``batch`` texts.

Address: ``base_url`` argument, else ``$RETCON_EMBED_BASE_URL``, else ``$RETCON_LLM_BASE_URL`` (first
URL), else ``$OPENAI_BASE_URL``; checked (http/https) when the embedder is made, before any work.
Key: the ``api_key`` argument, else ``$RETCON_EMBED_API_KEY`` / ``$RETCON_LLM_API_KEY`` /
``$OPENAI_API_KEY``, each only to the hosts it is bound to (``oas.real.llm._config``; none sent
when empty).

References: MODEL §8 (features 6, 7 use record embeddings); docs/llm.md.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence

import numpy as np

from oas.real.llm._cache import embedding_key, read_entry, write_entry
from oas.real.llm._config import resolve_endpoint
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
      model: the model name the endpoint serves.
      base_url: API root (``http://host:port/v1``); ``None`` reads the environment.
      api_key: bearer token; ``None`` reads the environment (bound keys only).
      batch: texts per request (>= 1).
      timeout: seconds per request.
      cache_dir: the on-disk cache (default ``$RETCON_CACHE_DIR/llm`` or the user cache dir).
      max_retries: retries after the first try, as for chat.
      sleep: called with the seconds to wait before a retry (tests).
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        batch: int = 64,
        timeout: float = 120.0,
        cache_dir: str | os.PathLike | None = None,
        max_retries: int = 4,
        sleep=None,
    ):
        # the address, key and model: arguments, else the environment (resolve_endpoint)
        config = resolve_endpoint(
            base_url,
            model,
            api_key,
            cache_dir,
            kind="embeddings",
            timeout=float(timeout),
            max_retries=max_retries,
            concurrency=1,
        )
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise InputError(f"OpenAIEmbedder.batch must be an integer >= 1; got {batch!r}.")
        self.model = model
        self.base_url = config.base_url
        self.batch = batch
        self.name = f"openai:{model}"
        self.config = config
        self.pool = EndpointPool(self.config, route=EMBEDDINGS, sleep=sleep)
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
