"""A small OpenAI-compatible chat client with a content-addressed on-disk cache and bounded retries.

Only the standard library (``urllib.request`` + ``json``): the ``llm`` operator backend and reader
(``oas.real._llm``) must work against any endpoint a user runs (llama.cpp's server, vLLM, Ollama's
OpenAI route, a hosted API) without an SDK.

Cache (MODEL §9, "a rerun costs nothing and an interrupted run resumes"): the key is the sha256 of
the canonical JSON of ``(model, messages, parameters)``; the base URL and the key are left out, so the
same model served elsewhere reuses the cache. One file per entry, written atomically
(``retcon.output``) right after its response, so an interrupted run keeps every finished call. Only a
well-formed response is ever written.

Failures: connection errors, timeouts, HTTP 5xx, 408, 429 and garbage (a body that is not JSON or
has no ``choices[0].message.content`` string) are retried with exponential backoff
``backoff * 2**i`` seconds (no jitter, so runs are reproducible), at most ``max_retries`` times; then
``LLMEndpointError`` (an ``InputError``, so the CLI prints one line) names the endpoint and the last
failure. Other 4xx answers (bad model name, prompt longer than the context) fail at once.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from retcon.cache import user_cache_dir
from retcon.errors import InputError
from retcon.output import write_json_atomic

# Bump when the entry layout or the key's contents change, so old entries are never misread.
CACHE_FORMAT = 1
_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504}) | frozenset(range(505, 600))


class LLMEndpointError(InputError):
    """The endpoint stayed down or kept answering garbage after the bounded retries."""


class CallStats(NamedTuple):
    """Counters of one client: cache ``hits`` and ``misses``, HTTP ``requests`` sent, ``retries``."""

    hits: int
    misses: int
    requests: int
    retries: int


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to call the chat endpoint; checks itself.

    Attributes:
      base_url: the OpenAI-compatible root, e.g. ``http://127.0.0.1:8080/v1``; requests go to
        ``{base_url}/chat/completions``.
      model: the model name sent with every request; part of the cache key.
      api_key: sent as ``Authorization: Bearer ...`` when not empty; never part of the cache key.
      cache_dir: the directory of the content-addressed cache.
      timeout: seconds to wait for one HTTP response.
      max_retries: retries after the first try (``max_retries + 1`` tries in all).
      backoff: seconds before the first retry; doubles each retry, capped at ``max_backoff``.
    """

    base_url: str
    model: str
    api_key: str = ""
    cache_dir: Path = field(default_factory=lambda: default_cache_dir())  # noqa: PLW0108 - defined below
    timeout: float = 300.0
    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 8.0

    def __post_init__(self):
        if not self.base_url.startswith(("http://", "https://")):
            raise InputError(
                f"LLM base URL must start with http:// or https://; got {self.base_url!r}."
            )
        if not self.model:
            raise InputError("LLM model name must not be empty.")
        if not (self.timeout > 0):
            raise InputError(f"LLM timeout must be > 0 seconds; got {self.timeout!r}.")
        if not (isinstance(self.max_retries, int) and self.max_retries >= 0):
            raise InputError(f"LLM max_retries must be an integer >= 0; got {self.max_retries!r}.")
        if not (self.backoff >= 0 and self.max_backoff >= 0):
            raise InputError(f"LLM backoff must be >= 0 seconds; got {self.backoff!r}.")

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"


def default_cache_dir() -> Path:
    """``$RETCON_CACHE_DIR/llm``, else ``llm`` in the user cache directory (``~/.cache/retcon/llm``
    on Linux)."""
    root = os.environ.get("RETCON_CACHE_DIR")
    return (Path(root).expanduser() if root else user_cache_dir()) / "llm"


def resolve_endpoint(
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    **kwargs: Any,
) -> EndpointConfig:
    """Build an ``EndpointConfig`` from arguments, else the environment.

    Environment: ``RETCON_LLM_BASE_URL`` (else ``OPENAI_BASE_URL``), ``RETCON_LLM_MODEL``,
    ``RETCON_LLM_API_KEY`` (else ``OPENAI_API_KEY``); the cache from ``default_cache_dir``.

    Raises:
      InputError: no base URL or no model configured, or a bad setting.
    """
    env = os.environ
    base_url = base_url or env.get("RETCON_LLM_BASE_URL") or env.get("OPENAI_BASE_URL")
    model = model or env.get("RETCON_LLM_MODEL")
    api_key = (
        api_key
        if api_key is not None
        else (env.get("RETCON_LLM_API_KEY") or env.get("OPENAI_API_KEY") or "")
    )
    if not base_url:
        raise InputError(
            "no LLM endpoint configured: pass --llm-base-url (e.g. http://127.0.0.1:8080/v1) "
            "or set RETCON_LLM_BASE_URL (or OPENAI_BASE_URL)."
        )
    if not model:
        raise InputError("no LLM model configured: pass --llm-model or set RETCON_LLM_MODEL.")
    base_url = base_url.strip().rstrip("/")
    if base_url.endswith("/chat/completions"):
        base_url = base_url[: -len("/chat/completions")]
    return EndpointConfig(
        base_url=base_url,
        model=model,
        api_key=api_key,
        cache_dir=Path(cache_dir).expanduser() if cache_dir else default_cache_dir(),
        **kwargs,
    )


def cache_key(model: str, messages: list[dict], params: dict) -> str:
    """sha256 of the canonical JSON of ``(format, model, messages, params)``: same request, same key."""
    payload = {"format": CACHE_FORMAT, "model": model, "messages": messages, "params": params}
    canon = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


class ChatClient:
    """Send chat requests through the cache; count hits, misses, requests and retries.

    ``complete(messages, **params)`` returns the assistant message's text. ``sleep`` is injectable so
    tests need not wait through the backoff.
    """

    def __init__(self, config: EndpointConfig, *, sleep=None):
        self.config = config
        self._sleep = sleep if sleep is not None else time.sleep
        self._hits = self._misses = self._requests = self._retries = 0

    @property
    def stats(self) -> CallStats:
        return CallStats(self._hits, self._misses, self._requests, self._retries)

    def entry_path(self, key: str) -> Path:
        return Path(self.config.cache_dir) / key[:2] / f"{key}.json"

    def complete(self, messages: list[dict], **params: Any) -> str:
        """The assistant text for ``messages``: from the cache, else from the endpoint (then cached).

        Args:
          messages: OpenAI chat messages, ``[{"role": ..., "content": ...}, ...]``.
          **params: request parameters (``temperature``, ``max_tokens``, ``seed``...); part of the key.

        Raises:
          LLMEndpointError: the endpoint failed ``max_retries + 1`` times, or refused the request.
        """
        key = cache_key(self.config.model, messages, params)
        path = self.entry_path(key)
        cached = _read_entry(path, key)
        if cached is not None:
            self._hits += 1
            return cached
        self._misses += 1
        text = self._request(messages, params)
        write_json_atomic(
            path,
            {
                "key": key,
                "format": CACHE_FORMAT,
                "model": self.config.model,
                "messages": messages,
                "params": params,
                "response": text,
            },
        )
        return text

    def _request(self, messages: list[dict], params: dict) -> str:
        cfg = self.config
        body = json.dumps({"model": cfg.model, "messages": messages, **params}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if cfg.api_key:
            headers["Authorization"] = f"Bearer {cfg.api_key}"
        last = "no attempt"
        tries = cfg.max_retries + 1
        for attempt in range(tries):
            if attempt:
                self._retries += 1
                self._sleep(min(cfg.max_backoff, cfg.backoff * 2 ** (attempt - 1)))
            self._requests += 1
            req = urllib.request.Request(cfg.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=cfg.timeout) as resp:
                    raw = resp.read()
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}: {_snippet(_safe_read(e))}"
                if e.code in _RETRY_STATUS:
                    continue
                raise LLMEndpointError(
                    f"LLM endpoint {cfg.url} refused the request (model {cfg.model!r}); {last}"
                ) from None
            except (
                urllib.error.URLError,
                http.client.HTTPException,
                ConnectionError,
                TimeoutError,
                OSError,
            ) as e:
                last = _snippet(f"{type(e).__name__}: {getattr(e, 'reason', e)}")
                continue
            text = _parse_content(raw)
            if text is None:
                last = f"garbage response (no choices[0].message.content): {_snippet(raw.decode('utf-8', 'replace'))}"
                continue
            return text
        raise LLMEndpointError(
            f"LLM endpoint {cfg.url} failed after {tries} tries; last failure: {last}"
        )


def _parse_content(raw: bytes) -> str | None:
    """The assistant text of a chat-completions body, or ``None`` when the body is malformed."""
    try:
        obj = json.loads(raw.decode("utf-8"))
        content = obj["choices"][0]["message"]["content"]
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError):
        return None
    return content if isinstance(content, str) else None


def _read_entry(path: Path, key: str) -> str | None:
    """A cached response, or ``None`` when absent or unreadable (then it is fetched and rewritten)."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return None
    if (
        not isinstance(entry, dict)
        or entry.get("key") != key
        or not isinstance(entry.get("response"), str)
    ):
        return None
    return entry["response"]


def _safe_read(e: urllib.error.HTTPError) -> str:
    try:
        return e.read().decode("utf-8", "replace")
    except Exception:
        return ""


def _snippet(text: str, n: int = 200) -> str:
    """One line, at most ``n`` characters, for an error message."""
    one = " ".join(str(text).split())
    return one if len(one) <= n else one[: n - 3] + "..."
