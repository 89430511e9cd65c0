"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (``--embedder openai:MODEL``).

``POST {base_url}/embeddings`` with ``{"model": MODEL, "input": [texts]}``; the response's
``data[i].embedding`` (ordered by ``data[i].index``) are L2-normalized. ``base_url`` is the API root
that ends in ``/v1`` (as for chat). Each distinct text is sent once per embedder: results are kept
in memory, and requests carry at most ``batch`` texts.

Address: ``base_url`` argument, else ``$RETCON_EMBED_BASE_URL``, else ``$RETCON_LLM_BASE_URL`` (first
URL), else ``$OPENAI_BASE_URL``; key: ``$RETCON_EMBED_API_KEY``, else ``$RETCON_LLM_API_KEY``, else
``$OPENAI_API_KEY`` (none sent when empty).

References: MODEL §8 (features 6, 7 use record embeddings).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence

import numpy as np

from retcon.errors import InputError


class OpenAIEmbedder:
    """Neural embeddings from an OpenAI-compatible endpoint (module docstring).

    Args:
      model: the model name the endpoint serves.
      base_url: API root (``http://host:port/v1``); ``None`` reads the environment.
      api_key: bearer token; ``None`` reads the environment.
      batch: texts per request (>= 1).
      timeout: seconds per request.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        batch: int = 64,
        timeout: float = 120.0,
    ):
        env = os.environ
        url = (
            base_url
            or env.get("RETCON_EMBED_BASE_URL")
            or (env.get("RETCON_LLM_BASE_URL") or "").replace(",", " ").split(" ")[0]
            or env.get("OPENAI_BASE_URL")
        )
        if not model:
            raise InputError("--embedder openai:MODEL needs a model name; got none.")
        if not url:
            raise InputError(
                "--embedder openai:MODEL needs an endpoint: set RETCON_EMBED_BASE_URL (or "
                "RETCON_LLM_BASE_URL / OPENAI_BASE_URL) to the API root, e.g. http://host:8000/v1."
            )
        if int(batch) < 1:
            raise InputError(f"OpenAIEmbedder.batch must be >= 1; got {batch!r}.")
        self.model = model
        self.base_url = url.rstrip("/")
        self.api_key = (
            api_key
            if api_key is not None
            else env.get("RETCON_EMBED_API_KEY")
            or env.get("RETCON_LLM_API_KEY")
            or env.get("OPENAI_API_KEY")
            or ""
        )
        self.batch = int(batch)
        self.timeout = float(timeout)
        self.name = f"openai:{model}"
        self._cache: dict[str, np.ndarray] = {}

    def fit(self, corpus: Sequence[str]) -> OpenAIEmbedder:
        return self

    def _request(self, texts: list[str]) -> list[np.ndarray]:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(
            f"{self.base_url}/embeddings", data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                payload = json.loads(resp.read().decode("utf-8"))
        except (urllib.error.URLError, OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
            raise InputError(
                f"--embedder {self.name}: request to {self.base_url}/embeddings failed: {e}."
            ) from None
        try:
            items = sorted(payload["data"], key=lambda d: d.get("index", 0))
            vecs = [np.asarray(d["embedding"], dtype=np.float64) for d in items]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(
                f"--embedder {self.name}: {self.base_url}/embeddings answered without "
                f"data[i].embedding lists."
            ) from None
        if len(vecs) != len(texts):
            raise InputError(
                f"--embedder {self.name}: sent {len(texts)} texts, got {len(vecs)} embeddings."
            )
        return vecs

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for i in range(0, len(todo), self.batch):
            chunk = todo[i : i + self.batch]
            for t, v in zip(chunk, self._request(chunk)):
                n = float(np.linalg.norm(v))
                self._cache[t] = v / n if n > 0 else v
        if not texts:
            return np.zeros((0, 1))
        return np.stack([self._cache[t] for t in texts])
