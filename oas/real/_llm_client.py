"""A small OpenAI-compatible chat client with a content-addressed on-disk cache and bounded retries.

Only the standard library (``urllib.request`` + ``json``): the ``llm`` operator backend and reader
(``oas.real._llm``) must work against any endpoint a user runs (llama.cpp's server, vLLM, Ollama's
OpenAI route, a hosted API) without an SDK.

Cache (MODEL §9, "a rerun costs nothing and an interrupted run resumes"): the key is the sha256 of
the canonical JSON of ``(model, messages, parameters)``; the base URL and the key are left out, so the
same model served elsewhere reuses the cache. One file per entry, written atomically
(``retcon.output``) right after its response, so an interrupted run keeps every finished call. Only a
well-formed response is ever written.

Several callers may share the cache at once, threads of one run or separate processes: an entry is
written to a temporary file beside it and renamed over (``os.replace``), so a reader sees a whole
entry or none, and two writers of one key write the same response.

Concurrency (``EndpointPool``): at most ``concurrency`` requests are in flight at once, over one or
several endpoints serving the same model. Each request goes to the ready endpoint with the fewest
requests in flight (then the fewest sent). Identical requests in flight at once are sent once.

Failures: connection errors, timeouts, HTTP 5xx, 408, 429 and garbage (a body that is not JSON or
has no ``choices[0].message.content`` string) are retried, at most ``max_retries`` times per call,
on whichever endpoint is ready. A failure cools its endpoint for ``backoff * 2**(i-1)`` seconds
(``i`` its consecutive failures, no jitter, capped at ``max_backoff``), or for the server's
``Retry-After``; requests in flight when it failed do not count again. An endpoint whose failures
reach ``max_retries + 1`` in a row (429s aside) is taken out of the rotation with a warning while
another is left; the last one is never removed. When the tries are used up, ``LLMEndpointError``
(an ``InputError``, so the CLI prints one line) names the endpoint and the last failure. Other 4xx
answers (bad model name, prompt longer than the context) fail at once.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import json
import logging
import math
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from retcon.cache import user_cache_dir
from retcon.errors import InputError
from retcon.output import write_json_atomic

# Bump when the entry layout or the key's contents change, so old entries are never misread.
CACHE_FORMAT = 1
_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504}) | frozenset(range(505, 600))
DEFAULT_CONCURRENCY = 8
MAX_RETRY_AFTER = 300.0  # seconds: a longer Retry-After is cut to this
_log = logging.getLogger(__name__)


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
      base_urls: every endpoint serving ``model`` (default ``(base_url,)``); ``base_url`` is the
        first.
      concurrency: the most requests in flight at once, over all endpoints.
    """

    base_url: str
    model: str
    api_key: str = ""
    cache_dir: Path = field(default_factory=lambda: default_cache_dir())  # noqa: PLW0108 (defined below)
    timeout: float = 300.0
    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 8.0
    base_urls: tuple[str, ...] = ()
    concurrency: int = DEFAULT_CONCURRENCY

    def __post_init__(self):
        urls = tuple(self.base_urls) or (self.base_url,)
        object.__setattr__(self, "base_urls", urls)
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise InputError(f"LLM base URL must start with http:// or https://; got {url!r}.")
        if len(set(urls)) != len(urls):
            raise InputError(f"LLM base URLs must be distinct; got {list(urls)}.")
        if (
            isinstance(self.concurrency, bool)
            or not isinstance(self.concurrency, int)
            or self.concurrency < 1
        ):
            raise InputError(f"LLM concurrency must be an integer >= 1; got {self.concurrency!r}.")
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

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(f"{u}/chat/completions" for u in self.base_urls)


def default_cache_dir() -> Path:
    """``$RETCON_CACHE_DIR/llm``, else ``llm`` in the user cache directory (``~/.cache/retcon/llm``
    on Linux)."""
    root = os.environ.get("RETCON_CACHE_DIR")
    return (Path(root).expanduser() if root else user_cache_dir()) / "llm"


def split_urls(value: str | Sequence[str] | None) -> list[str]:
    """Base URLs from a string (comma- or space-separated) or a sequence of such strings, each
    stripped of trailing slashes and of a ``/chat/completions`` tail."""
    if value is None:
        return []
    pieces = [value] if isinstance(value, str) else list(value)
    out = []
    for piece in pieces:
        for url in re.split(r"[,\s]+", str(piece)):
            url = url.strip().rstrip("/")
            if url.endswith("/chat/completions"):
                url = url[: -len("/chat/completions")]
            if url and url not in out:
                out.append(url)
    return out


def resolve_endpoint(
    base_url: str | Sequence[str] | None = None,
    model: str | None = None,
    api_key: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    **kwargs: Any,
) -> EndpointConfig:
    """Build an ``EndpointConfig`` from arguments, else the environment.

    ``base_url`` may name several endpoints serving the same model: a sequence, or one string with
    the URLs separated by commas or spaces.

    Environment: ``RETCON_LLM_BASE_URL`` (else ``OPENAI_BASE_URL``; a comma-separated list for
    several endpoints), ``RETCON_LLM_MODEL``, ``RETCON_LLM_API_KEY`` (else ``OPENAI_API_KEY``),
    ``RETCON_LLM_CONCURRENCY`` (when ``concurrency`` is not given); the cache from
    ``default_cache_dir``.

    Raises:
      InputError: no base URL or no model configured, or a bad setting.
    """
    env = os.environ
    urls = split_urls(base_url) or split_urls(
        env.get("RETCON_LLM_BASE_URL") or env.get("OPENAI_BASE_URL")
    )
    model = model or env.get("RETCON_LLM_MODEL")
    api_key = (
        api_key
        if api_key is not None
        else (env.get("RETCON_LLM_API_KEY") or env.get("OPENAI_API_KEY") or "")
    )
    if not urls:
        raise InputError(
            "no LLM endpoint configured: pass --llm-base-url (e.g. http://127.0.0.1:8080/v1) "
            "or set RETCON_LLM_BASE_URL (or OPENAI_BASE_URL)."
        )
    if not model:
        raise InputError("no LLM model configured: pass --llm-model or set RETCON_LLM_MODEL.")
    if kwargs.get("concurrency") is None:
        kwargs.pop("concurrency", None)
        text = env.get("RETCON_LLM_CONCURRENCY")
        if text:
            try:
                kwargs["concurrency"] = int(text)
            except ValueError:
                raise InputError(
                    f"RETCON_LLM_CONCURRENCY must be an integer >= 1; got {text!r}."
                ) from None
    return EndpointConfig(
        base_url=urls[0],
        base_urls=tuple(urls),
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


class PoolProgress(NamedTuple):
    """Counters of an ``EndpointPool`` for a progress line: ``calls`` answered by an endpoint,
    cache ``hits`` (identical calls joined in flight included), requests ``in_flight``, failed
    tries (``errors``) and ``live`` endpoints."""

    calls: int
    hits: int
    in_flight: int
    errors: int
    live: int

    def line(self) -> str:
        return (
            f"calls {self.calls}, hits {self.hits}, in flight {self.in_flight}, "
            f"errors {self.errors}, endpoints {self.live}"
        )


class _EndpointState:
    """One endpoint's load and health; guarded by the pool's lock."""

    def __init__(self, url: str):
        self.url = url
        self.in_flight = 0
        self.sent = 0
        self.ok = 0
        self.errors = 0
        self.streak = 0  # consecutive failures, 429s aside: reaching the limit removes it
        self.level = 0  # consecutive cooldowns: the next one lasts backoff * 2**level
        self.ready_at = float("-inf")
        self.cool = 0.0
        self.last_failure = float("-inf")
        self.removed = False


class _Attempt(NamedTuple):
    text: str | None  # the answer, or None after a failure
    failure: str  # what went wrong, for the error message
    retry_after: float | None
    fatal: bool  # a 4xx that retrying cannot fix
    counts: bool  # counts towards taking the endpoint out (429 does not)


class EndpointPool:
    """Endpoints serving one model, a bound on requests in flight, per-endpoint backoff.

    ``send(body)`` sends one chat request body (JSON bytes) and returns the assistant text and the
    number of HTTP requests it took. Thread-safe; share one pool between the callers of a run
    (operators and reader) so ``concurrency`` bounds them together.

    Args:
      config: the endpoints (``base_urls``), ``api_key``, ``timeout``, ``max_retries``, ``backoff``,
        ``max_backoff`` and ``concurrency``.
      sleep: called with the seconds to wait before a retry (default ``time.sleep``; tests).
      clock: monotonic seconds (default ``time.monotonic``).
    """

    def __init__(self, config: EndpointConfig, *, sleep=None, clock=None):
        self.config = config
        # late-bound, so a patched time.sleep is seen
        self._sleep = sleep if sleep is not None else (lambda s: time.sleep(s))  # noqa: PLW0108
        self._clock = clock if clock is not None else time.monotonic
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._eps = [_EndpointState(u) for u in config.urls]
        self._calls = self._hits = self._errors = self._in_flight = 0
        self._joined: dict[str, Future] = {}
        self._closed = False

    @property
    def endpoints(self) -> list[dict]:
        """Per endpoint: ``url``, ``sent``, ``ok``, ``errors``, ``removed``."""
        with self._lock:
            return [
                {"url": e.url, "sent": e.sent, "ok": e.ok, "errors": e.errors, "removed": e.removed}
                for e in self._eps
            ]

    def progress(self) -> PoolProgress:
        with self._lock:
            live = sum(not e.removed for e in self._eps)
            return PoolProgress(self._calls, self._hits, self._in_flight, self._errors, live)

    def close(self) -> None:
        """Refuse new requests (those in flight finish): an interrupted run stops quickly."""
        with self._lock:
            self._closed = True

    def _count_hit(self) -> None:
        with self._lock:
            self._hits += 1

    def _join(self, key: str) -> tuple[Future, bool]:
        """The future of the call for ``key`` and whether this caller owns it (must fulfil it)."""
        with self._lock:
            fut = self._joined.get(key)
            if fut is not None:
                return fut, False
            fut = Future()
            self._joined[key] = fut
            return fut, True

    def _unjoin(self, key: str) -> None:
        with self._lock:
            self._joined.pop(key, None)

    def _pick(self, failed: _EndpointState | None, set_at: float) -> tuple[_EndpointState, float]:
        """The endpoint for the next try and the seconds to wait before it."""
        with self._lock:
            if self._closed:
                raise LLMEndpointError("LLM calls stopped: the run was interrupted.")
            now = self._clock()
            live = [e for e in self._eps if not e.removed]
            ready = [e for e in live if e.ready_at <= now]
            if ready:
                best = min(ready, key=lambda e: (e.in_flight, e.sent, self._eps.index(e)))
                wait = 0.0
            else:
                best = min(live, key=lambda e: (e.ready_at, e.in_flight, self._eps.index(e)))
                # The caller whose failure set this cooldown waits all of it (exact backoff).
                own = best is failed and best.ready_at == set_at
                wait = best.cool if own else max(0.0, best.ready_at - now)
            best.in_flight += 1
            best.sent += 1
            self._in_flight += 1
            return best, wait

    def _done(self, ep: _EndpointState, sent_at: float, a: _Attempt) -> float:
        """Book the outcome of one try; returns the endpoint's ``ready_at`` after it."""
        with self._lock:
            ep.in_flight -= 1
            self._in_flight -= 1
            if a.text is not None:
                ep.ok += 1
                ep.streak = ep.level = 0
                self._calls += 1
                return ep.ready_at
            ep.errors += 1
            self._errors += 1
            if a.fatal or sent_at < ep.last_failure:
                return ep.ready_at  # in flight when the endpoint last failed: already cooling
            now = self._clock()
            ep.last_failure = now
            cfg = self.config
            ep.cool = (
                a.retry_after
                if a.retry_after is not None
                else min(cfg.max_backoff, cfg.backoff * 2**ep.level)
            )
            ep.level += 1
            ep.ready_at = now + ep.cool
            if a.counts:
                ep.streak += 1
            others = [e for e in self._eps if not e.removed and e is not ep]
            if ep.streak >= cfg.max_retries + 1 and others and not ep.removed:
                ep.removed = True
                _log.warning(
                    "LLM endpoint %s failed %d times in a row (%s); taken out of the rotation, "
                    "%d endpoint(s) left.",
                    ep.url,
                    ep.streak,
                    a.failure,
                    len(others),
                )
            return ep.ready_at

    def send(self, body: bytes) -> tuple[str, int]:
        """The assistant text for one request ``body`` and the HTTP requests it took.

        Raises:
          LLMEndpointError: ``max_retries + 1`` tries failed, or an endpoint refused the request.
        """
        cfg = self.config
        tries = cfg.max_retries + 1
        last = "no attempt"
        failed: _EndpointState | None = None
        set_at = float("nan")
        for attempt in range(tries):
            ep, wait = self._pick(failed, set_at)
            if wait > 0:
                self._sleep(wait)
            with self._slots:
                sent_at = self._clock()
                try:
                    a = _try(ep.url, body, cfg)
                except BaseException:
                    self._done(ep, sent_at, _Attempt(None, "interrupted", None, True, False))
                    raise
            set_at = self._done(ep, sent_at, a)
            if a.text is not None:
                return a.text, attempt + 1
            where = ep.url if len(self._eps) > 1 else ""
            last = f"{where + ': ' if where else ''}{a.failure}"
            if a.fatal:
                raise LLMEndpointError(
                    f"LLM endpoint {ep.url} refused the request (model {cfg.model!r}); {a.failure}"
                )
            failed = ep
        names = ", ".join(cfg.urls)
        raise LLMEndpointError(
            f"LLM endpoint{'s' if len(cfg.urls) > 1 else ''} {names} failed after {tries} tries; "
            f"last failure: {last}"
        )


def _try(url: str, body: bytes, cfg: EndpointConfig) -> _Attempt:
    """One HTTP request; never raises for a network or protocol failure."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=cfg.timeout) as resp:
            raw = resp.read()
    except urllib.error.HTTPError as e:
        failure = f"HTTP {e.code}: {_snippet(_safe_read(e))}"
        if e.code not in _RETRY_STATUS:
            return _Attempt(None, failure, None, True, False)
        after = retry_after_seconds(e.headers.get("Retry-After") if e.headers else None)
        return _Attempt(None, failure, after, False, e.code != 429)
    except (
        urllib.error.URLError,
        http.client.HTTPException,
        ConnectionError,
        TimeoutError,
        OSError,
    ) as e:
        failure = _snippet(f"{type(e).__name__}: {getattr(e, 'reason', e)}")
        return _Attempt(None, failure, None, False, True)
    text = _parse_content(raw)
    if text is None:
        failure = f"garbage response (no choices[0].message.content): {_snippet(raw.decode('utf-8', 'replace'))}"
        return _Attempt(None, failure, None, False, True)
    return _Attempt(text, "", None, False, False)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (seconds or an HTTP date), within
    ``[0, MAX_RETRY_AFTER]``; ``None`` when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds):
        return None
    return min(MAX_RETRY_AFTER, max(0.0, seconds))


class ChatClient:
    """Send chat requests through the cache; count hits, misses, requests and retries.

    ``complete(messages, **params)`` returns the assistant message's text; thread-safe. ``sleep`` is
    injectable so tests need not wait through the backoff. ``pool`` shares the endpoints and the
    bound on requests in flight with other clients (default: a pool of this client's own).
    """

    def __init__(self, config: EndpointConfig, *, sleep=None, pool: EndpointPool | None = None):
        self.config = config
        self.pool = pool if pool is not None else EndpointPool(config, sleep=sleep)
        self._lock = threading.Lock()
        self._hits = self._misses = self._requests = self._retries = 0

    @property
    def stats(self) -> CallStats:
        with self._lock:
            return CallStats(self._hits, self._misses, self._requests, self._retries)

    def entry_path(self, key: str) -> Path:
        return Path(self.config.cache_dir) / key[:2] / f"{key}.json"

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
        path = self.entry_path(key)
        cached = _read_entry(path, key)
        if cached is not None:
            self._hit()
            return cached
        fut, owner = self.pool._join(key)
        if not owner:
            text = fut.result()
            self._hit()
            return text
        try:
            cached = _read_entry(path, key)  # written meanwhile by a caller that just finished
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
            fut.set_result(text)
            return text
        except BaseException as e:
            if not fut.done():
                fut.set_exception(e)
            raise
        finally:
            self.pool._unjoin(key)


def _tries_of(e: LLMEndpointError) -> int:
    m = re.search(r"failed after (\d+) tries", str(e))
    return int(m.group(1)) if m else 1


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
