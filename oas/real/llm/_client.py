"""The chat client: an OpenAI-compatible ``chat/completions`` call through the on-disk cache.

The LLM client in three parts, along its seams: ``oas.real.llm._config`` (where and how to call:
``EndpointConfig``, ``resolve_endpoint``, key binding, URL checks), ``oas.real.llm._http`` (the
transport and pool: ``EndpointPool``, the one retry policy, ``LLMEndpointError``) and
``oas.real.llm._cache`` (the content-addressed cache). ``ChatClient`` here joins them: the cache
first, then an identical call already in flight, then the pool. The embeddings client
(``oas.real.llm._embed``) uses the same three parts.

References: docs/llm.md.
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from pathlib import Path
from typing import Any, NamedTuple

from oas.real.llm._cache import (
    CACHE_FORMAT,
    CacheJournal,
    cache_key,
    check_cache_dir,
    entry_path,
    read_entry,
    recover_journals,
)
from oas.real.llm._config import (
    DEFAULT_CONCURRENCY,
    EndpointConfig,
    default_cache_dir,
    resolve_endpoint,
    split_urls,
)
from oas.real.llm._http import (
    MAX_RETRY_AFTER,
    EndpointPool,
    LLMEndpointError,
    PoolProgress,
    retry_after_seconds,
)


class CallStats(NamedTuple):
    """Counters of one client: cache ``hits`` and ``misses``, HTTP ``requests`` sent, ``retries``."""

    hits: int
    misses: int
    requests: int
    retries: int


class ChatClient:
    """Send chat requests through the cache; count hits, misses, requests and retries.

    ``complete(messages, **params)`` returns the assistant message's text; thread-safe. ``sleep`` is
    injectable so tests need not wait through the backoff. ``pool`` shares the endpoints and the
    bound on requests in flight with other clients (default: a pool of this client's own).

    A fetched answer is returned only once it is durable in the cache (``CacheJournal.put``: one
    ``fsync`` per group of answers), so a row written from it never outlives its answer. The first
    client of a cache folder in a process replays the journals that killed runs left there
    (``recover_journals``). ``close()`` (also at exit, or when the client is collected) syncs the
    entry files and removes this client's journal.
    """

    def __init__(self, config: EndpointConfig, *, sleep=None, pool: EndpointPool | None = None):
        self.config = config
        self.pool = pool if pool is not None else EndpointPool(config, sleep=sleep)
        self._lock = threading.Lock()
        self._hits = self._misses = self._requests = self._retries = 0
        check_cache_dir(config.cache_dir)
        _recover_once(config.cache_dir)
        self._journal = CacheJournal(config.cache_dir)
        self._finalizer = weakref.finalize(self, self._journal.close)

    def close(self) -> None:
        """Sync this client's cache entries and remove its journal; a later miss then raises."""
        self._finalizer()

    @property
    def stats(self) -> CallStats:
        with self._lock:
            return CallStats(self._hits, self._misses, self._requests, self._retries)

    def entry_path(self, key: str) -> Path:
        return entry_path(self.config.cache_dir, key)

    def _hit(self) -> None:
        with self._lock:
            self._hits += 1
        self.pool._count_hit()

    def complete(self, messages: list[dict], **params: Any) -> str:
        """The assistant text for ``messages``: from the cache, else from the endpoint (then cached).

        An identical call already in flight (another thread) is joined, not sent again.

        Args:
          messages: OpenAI chat messages, ``[{"role": ..., "content": ...}, ...]``.
          **params: request parameters (``temperature``, ``max_tokens``, ``seed``...); part of the key.

        Raises:
          LLMEndpointError: the endpoint failed ``max_retries + 1`` times, or refused the request.
        """
        key = cache_key(self.config.model, messages, params)
        cached = read_entry(self.config.cache_dir, key)
        if cached is not None:
            self._hit()
            return cached
        fut, owner = self.pool._join(key)
        if not owner:
            text = fut.result()
            self._hit()
            return text
        try:
            cached = read_entry(self.config.cache_dir, key)  # written meanwhile by a caller
            if cached is not None:
                self._hit()
                fut.set_result(cached)
                return cached
            with self._lock:
                self._misses += 1
            body = json.dumps({"model": self.config.model, "messages": messages, **params})
            try:
                text, n = self.pool.send(body.encode("utf-8"))
            except LLMEndpointError as e:
                with self._lock:
                    self._requests += _tries_of(e)
                    self._retries += max(0, _tries_of(e) - 1)
                raise
            with self._lock:
                self._requests += n
                self._retries += n - 1
            self._journal.put(
                key,
                {
                    "model": self.config.model,
                    "messages": messages,
                    "params": params,
                    "response": text,
                },
            )
            fut.set_result(text)
            return text
        except BaseException as e:
            if not fut.done():
                fut.set_exception(e)
            raise
        finally:
            self.pool._unjoin(key)


_recovered: set[str] = set()
_recovered_lock = threading.Lock()


def _recover_once(cache_dir) -> None:
    """``recover_journals`` for ``cache_dir``, once per process."""
    name = str(Path(cache_dir).resolve())
    with _recovered_lock:
        if name in _recovered:
            return
        _recovered.add(name)
    recover_journals(cache_dir)


def _tries_of(e: LLMEndpointError) -> int:
    m = re.search(r"failed after (\d+) tries", str(e))
    return int(m.group(1)) if m else 1


__all__ = [
    "CACHE_FORMAT",
    "DEFAULT_CONCURRENCY",
    "MAX_RETRY_AFTER",
    "CallStats",
    "ChatClient",
    "EndpointConfig",
    "EndpointPool",
    "LLMEndpointError",
    "PoolProgress",
    "cache_key",
    "default_cache_dir",
    "resolve_endpoint",
    "retry_after_seconds",
    "split_urls",
]
