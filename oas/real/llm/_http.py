"""The HTTP transport and pool for OpenAI-compatible endpoints: one retry policy for chat and
embeddings.

Only the standard library (``http.client``, ``urllib`` + ``json``), so it works against any endpoint a user
runs (llama.cpp's server, vLLM, Ollama's OpenAI route, a hosted API) without an SDK. The config
is ``oas.real.llm._config``; the cache-fronted chat client is ``oas.real.llm._client``; the
embeddings client ``oas.real.llm._embed`` sends through the same ``EndpointPool``.

Concurrency (``EndpointPool``): at most ``concurrency`` requests are in flight at once, over one or
several endpoints serving the same model. Each request goes to the ready endpoint with the fewest
requests in flight (then the fewest sent). Identical requests in flight at once are sent once
(``_join``, used by the cache-fronted clients).

Failures: connection errors, timeouts, HTTP 5xx, 408, 429 and garbage (a body that is not JSON or
lacks what the route expects: ``choices[0].message.content`` for chat, ``data[i].embedding`` for
embeddings) are retried, at most ``max_retries`` times per call, on whichever endpoint is ready. A
failure cools its endpoint for ``backoff * 2**(i-1)`` seconds (``i`` its consecutive failures, no
jitter, capped at ``max_backoff``), or for the server's ``Retry-After``; requests in flight when it
failed do not count again. An endpoint whose failures reach ``max_retries + 1`` in a row (429s
aside) is taken out of the rotation with a warning while another is left; the last one is never
removed. When the tries are used up, ``LLMEndpointError`` (an ``InputError``, so the CLI prints one
line) names the endpoint (credentials redacted) and the last failure. Other 4xx answers (bad model
name, prompt longer than the context) fail at once.

Redirects (``_RedirectHandler``, replacing urllib's default, which replays the POST and its
``Authorization`` header to any ``Location``): none is followed unless
``EndpointConfig.follow_redirects``; a 3xx fails at once naming both addresses. When followed, the
key is dropped on a hop that changes scheme, host or port, and a 307/308 (which resends the POST
and its body) is followed only within the origin, refused naming both addresses otherwise. A body longer than
``EndpointConfig.max_response_bytes`` (1 MiB by default) fails at once and is never cached; an
error body is read up to the same cap.

Connections (``_Connections``): with redirects off and no proxy set for the endpoint, requests go
over ``http.client`` keep-alive connections, each used by one request at a time and put back for
the next (at most ``concurrency`` idle per endpoint), so a run opens about one connection per
worker thread rather than one per call. A server that answers ``Connection: close``, a body not
read to its end, or any failure closes the connection. A kept connection the server dropped while
idle (reset, or closed before the status line) is reconnected and the request sent once more on
a fresh connection; that resend is not a try. With ``follow_redirects`` or a proxy (``*_proxy``
environment variables), each request goes through ``urllib`` as before.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import json
import logging
import math
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, NamedTuple

from oas.real.llm._config import EndpointConfig, redact_url
from oas.real.llm._config import origin as _origin
from retcon.errors import InputError

_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504}) | frozenset(range(505, 600))
MAX_RETRY_AFTER = 300.0  # seconds: a longer Retry-After is cut to this
_log = logging.getLogger(__name__)


class LLMEndpointError(InputError):
    """The endpoint stayed down or kept answering garbage after the bounded retries."""


class Route(NamedTuple):
    """What one kind of request posts to and reads back.

    Attributes:
      path: appended to each base URL (``chat/completions``, ``embeddings``).
      parse: the answer from a response body, or ``None`` when the body is garbage (retried).
      expects: what a good body holds, for the error message.
    """

    path: str
    parse: Callable[[bytes], Any]
    expects: str


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
        self.url = url  # the full request URL
        self.name = redact_url(url)  # what messages, logs and sidecars show
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
    text: Any  # the parsed answer, or None after a failure
    failure: str  # what went wrong, for the error message
    retry_after: float | None
    fatal: bool  # a 4xx that retrying cannot fix
    counts: bool  # counts towards taking the endpoint out (429 does not)


class EndpointPool:
    """Endpoints serving one model, a bound on requests in flight, per-endpoint backoff.

    ``send(body)`` sends one request body (JSON bytes) to the route and returns the parsed answer
    (the assistant text for chat) and the number of HTTP requests it took. Thread-safe; share one
    pool between the callers of a run (operators and reader) so ``concurrency`` bounds them
    together.

    Args:
      config: the endpoints (``base_urls``), ``api_key``, ``timeout``, ``max_retries``, ``backoff``,
        ``max_backoff`` and ``concurrency``.
      route: what the requests post to and read back (default ``CHAT``).
      sleep: called with the seconds to wait before a retry (default ``time.sleep``; tests).
      clock: monotonic seconds (default ``time.monotonic``).
    """

    def __init__(
        self, config: EndpointConfig, *, route: Route | None = None, sleep=None, clock=None
    ):
        self.config = config
        self.route = route if route is not None else CHAT
        # late-bound, so a patched time.sleep is seen
        self._sleep = sleep if sleep is not None else (lambda s: time.sleep(s))  # noqa: PLW0108
        self._clock = clock if clock is not None else time.monotonic
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._eps = [_EndpointState(f"{u}/{self.route.path}") for u in config.base_urls]
        self._calls = self._hits = self._errors = self._in_flight = 0
        self._joined: dict[str, Future] = {}
        self._closed = False
        self._conns = _Connections(config)
        weakref.finalize(self, self._conns.close)

    @property
    def endpoints(self) -> list[dict]:
        """Per endpoint: ``url``, ``sent``, ``ok``, ``errors``, ``removed``."""
        with self._lock:
            return [
                {
                    "url": e.name,
                    "sent": e.sent,
                    "ok": e.ok,
                    "errors": e.errors,
                    "removed": e.removed,
                }
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
        self._conns.close()

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
                    ep.name,
                    ep.streak,
                    a.failure,
                    len(others),
                )
            return ep.ready_at

    def send(self, body: bytes) -> tuple[Any, int]:
        """The answer for one request ``body`` and the HTTP requests it took.

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
                    a = _try(ep.url, body, cfg, self.route, self._conns)
                except BaseException:
                    self._done(ep, sent_at, _Attempt(None, "interrupted", None, True, False))
                    raise
            set_at = self._done(ep, sent_at, a)
            if a.text is not None:
                return a.text, attempt + 1
            where = ep.name if len(self._eps) > 1 else ""
            last = f"{where + ': ' if where else ''}{a.failure}"
            if a.fatal:
                raise LLMEndpointError(
                    f"LLM endpoint {ep.name} refused the request (model {cfg.model!r}); {a.failure}"
                )
            failed = ep
        names = ", ".join(e.name for e in self._eps)
        raise LLMEndpointError(
            f"LLM endpoint{'s' if len(self._eps) > 1 else ''} {names} failed after {tries} tries; "
            f"last failure: {last}"
        )


class _RedirectRefused(Exception):
    """A 3xx answer that is not followed: carries both addresses and why, for the error message."""

    def __init__(self, code: int, src: str, dst: str, why: str = ""):
        super().__init__(code, src, dst, why)
        self.code, self.src, self.dst, self.why = code, src, dst, why


class _RedirectHandler(urllib.request.HTTPRedirectHandler):
    """Refuse every redirect (``follow=False``), or follow it but drop ``Authorization`` on a hop
    that changes scheme, host or port. Replaces urllib's default handler, which replays the
    request headers, key included, to any ``Location``.

    A 301/302/303 of a POST becomes a GET without the body (urllib's rule). A 307/308 of a POST
    asks for the same POST again: it is resent, body and key, only within its origin; to another
    origin it is refused naming both addresses (the prompt is not sent there either)."""

    def __init__(self, follow: bool):
        self.follow = follow

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if not self.follow:
            raise _RedirectRefused(code, req.full_url, newurl)
        same = _origin(newurl) == _origin(req.full_url)
        if code in (307, 308) and req.get_method() == "POST":
            if not same:
                raise _RedirectRefused(code, req.full_url, newurl, _CROSS_ORIGIN_RESEND)
            return urllib.request.Request(
                newurl,
                data=req.data,
                headers=dict(req.headers),
                origin_req_host=req.origin_req_host,
                unverifiable=True,
                method="POST",
            )
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and not same:
            new.remove_header("Authorization")
        return new


_NOT_FOLLOWED = (
    "redirects are not followed; --llm-follow-redirects follows them, without the key across "
    "origins"
)
_CROSS_ORIGIN_RESEND = (
    "a 307/308 redirect resends the request body, which --llm-follow-redirects allows only "
    "within the same scheme, host and port"
)


def _refused_redirect(code: int, src: str, dst: str, why: str = "") -> _Attempt:
    """The failure of a redirect that is not followed: both addresses, credentials redacted."""
    failure = (
        f"HTTP {code} redirect from {redact_url(src)} to {redact_url(dst)} refused "
        f"({why or _NOT_FOLLOWED})"
    )
    return _Attempt(None, failure, None, True, False)


_Origin = tuple[str, str, int | None]
_REDIRECTS = frozenset({301, 302, 303, 307, 308})  # what urllib's redirect handler acts on
_USER_AGENT = "Python-urllib/{}.{}".format(*sys.version_info[:2])  # what urllib sends
# A kept connection the server closed while it sat idle fails with one of these, before any answer.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


def _no_delay(conn: http.client.HTTPConnection) -> None:
    """Turn Nagle's algorithm off on ``conn``'s socket: ``http.client`` sends the headers and the
    body in two writes, and on a kept connection the second would wait for the server's delayed
    acknowledgement of the first (tens of milliseconds per request)."""
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _quick_ack(conn: http.client.HTTPConnection) -> None:
    """Acknowledge the answer's first segment at once (Linux ``TCP_QUICKACK``; elsewhere a no-op):
    a server with Nagle's algorithm on holds the body until the headers are acknowledged, and a
    kept connection would otherwise delay that acknowledgement (tens of milliseconds)."""
    flag = getattr(socket, "TCP_QUICKACK", None)
    if flag is not None and conn.sock is not None:
        with contextlib.suppress(OSError):
            conn.sock.setsockopt(socket.IPPROTO_TCP, flag, 1)


class _HTTPConnection(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _no_delay(self)


class _HTTPSConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _no_delay(self)


class _Connections:
    """Idle keep-alive connections per endpoint origin (``(scheme, host, port)``); thread-safe.

    ``take`` hands out an idle connection (or a new one) to one request at a time; ``give`` puts it
    back after a response read to its end, keeping at most ``concurrency`` idle per origin.
    ``direct(url)`` says whether ``url`` may use them: redirects off and no proxy for it.
    """

    def __init__(self, config: EndpointConfig):
        self._timeout = config.timeout
        self._keep = config.concurrency
        self._follow = config.follow_redirects
        self._lock = threading.Lock()
        self._idle: dict[_Origin, list[http.client.HTTPConnection]] = {}
        self._direct: dict[str, bool] = {}

    def direct(self, url: str) -> bool:
        with self._lock:
            known = self._direct.get(url)
        if known is None:
            known = not self._follow and not _proxied(url)
            with self._lock:
                self._direct[url] = known
        return known

    def take(
        self, origin: _Origin, *, fresh: bool = False
    ) -> tuple[http.client.HTTPConnection, bool]:
        """A connection to ``origin`` and whether it was used before (``fresh``: always new)."""
        if not fresh:
            with self._lock:
                idle = self._idle.get(origin)
                if idle:
                    return idle.pop(), True
        scheme, host, port = origin
        cls = _HTTPSConnection if scheme == "https" else _HTTPConnection
        return cls(host, port, timeout=self._timeout), False

    def give(self, origin: _Origin, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(origin, [])
            if len(idle) < self._keep:
                idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close every idle connection (those in use close when their request ends)."""
        with self._lock:
            conns = [c for idle in self._idle.values() for c in idle]
            self._idle.clear()
        for c in conns:
            c.close()


def _proxied(url: str) -> bool:
    """Whether urllib would send ``url`` through a proxy (the ``*_proxy`` environment variables)."""
    scheme, host, _ = _origin(url)
    proxies = urllib.request.getproxies()
    return scheme in proxies and not urllib.request.proxy_bypass(
        urllib.parse.urlsplit(url).netloc or host
    )


def _try(
    url: str,
    body: bytes,
    cfg: EndpointConfig,
    route: Route,
    conns: _Connections | None = None,
) -> _Attempt:
    """One HTTP request (over a kept connection from ``conns`` where ``conns.direct(url)``, else
    through ``urllib``); never raises for a network or protocol failure."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    if conns is not None and conns.direct(url):
        return _try_kept(url, body, headers, cfg, route, conns)
    return _try_urllib(url, body, headers, cfg, route)


def _too_long(cap: int) -> _Attempt:
    failure = (
        f"response body longer than the {cap}-byte cap (max_response_bytes); "
        "nothing from it is used or cached"
    )
    return _Attempt(None, failure, None, True, False)


def _network_failure(e: BaseException) -> _Attempt:
    failure = _snippet(f"{type(e).__name__}: {getattr(e, 'reason', e)}")
    return _Attempt(None, failure, None, False, True)


def _exchange(
    conns: _Connections, origin: _Origin, target: str, body: bytes, headers: dict, cap: int
) -> tuple[int, http.client.HTTPMessage, bytes | None]:
    """POST ``body`` over a kept connection: ``(status, headers, body or None when over cap)``.

    A kept connection found dropped is replaced by a fresh one, once. The connection goes back to
    ``conns`` only when its response was read to the end and the server keeps it open.
    """
    fresh = False
    while True:
        conn, reused = conns.take(origin, fresh=fresh)
        try:
            conn.request("POST", target, body=body, headers=headers)
            _quick_ack(conn)
            resp = conn.getresponse()
        except _STALE:
            conn.close()
            if reused:
                fresh = True
                continue
            raise
        except BaseException:
            conn.close()
            raise
        break
    try:
        if resp.length is not None and resp.length > cap:
            raw = None
        else:
            got = resp.read(cap + 1) if resp.length is None else resp.read()
            raw = got if len(got) <= cap else None
    except BaseException:
        conn.close()
        raise
    if resp.isclosed() and not resp.will_close and raw is not None:
        conns.give(origin, conn)
    else:
        conn.close()
    return resp.status, resp.msg, raw


def _try_kept(
    url: str, body: bytes, headers: dict, cfg: EndpointConfig, route: Route, conns: _Connections
) -> _Attempt:
    """``_try`` over a kept ``http.client`` connection, with ``urllib``'s answers to each status:
    a 2xx is the body, a redirect is refused naming both addresses, other statuses fail with a
    snippet of their body (retried on 5xx, 408 and 429, with ``Retry-After``)."""
    parts = urllib.parse.urlsplit(url)
    origin = _origin(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    cap = cfg.max_response_bytes
    try:
        status, msg, raw = _exchange(
            conns, origin, target, body, {**headers, "User-Agent": _USER_AGENT}, cap
        )
    except (http.client.HTTPException, ConnectionError, TimeoutError, OSError) as e:
        return _network_failure(e)
    if 200 <= status < 300:
        if raw is None:
            return _too_long(cap)
        return _answer(raw, route)
    location = msg.get("location") or msg.get("uri")
    if status in _REDIRECTS and location:
        dst = urllib.parse.urljoin(url, location)
        if urllib.parse.urlsplit(dst).scheme.lower() in ("http", "https", "ftp", ""):
            return _refused_redirect(status, url, dst)
    text = "" if raw is None else raw.decode("utf-8", "replace")
    return _status_failure(status, text, msg.get("Retry-After"))


def _try_urllib(
    url: str, body: bytes, headers: dict, cfg: EndpointConfig, route: Route
) -> _Attempt:
    """``_try`` through ``urllib``: one connection per request, redirects per ``_RedirectHandler``."""
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    opener = urllib.request.build_opener(_RedirectHandler(cfg.follow_redirects))
    cap = cfg.max_response_bytes
    try:
        with opener.open(req, timeout=cfg.timeout) as resp:
            raw = resp.read(cap + 1)
        if len(raw) > cap:
            return _too_long(cap)
    except _RedirectRefused as e:
        return _refused_redirect(e.code, e.src, e.dst, e.why)
    except urllib.error.HTTPError as e:
        if e.code in _REDIRECTS:  # urllib would not follow it: a loop, or to file:, ftp:...
            why = " ".join(str(e.msg or e.reason or "no reason given").split())
            failure = f"HTTP {e.code} redirect from {redact_url(url)} not followed: {why}"
            return _Attempt(None, failure, None, True, False)
        after = e.headers.get("Retry-After") if e.headers else None
        return _status_failure(e.code, _safe_read(e, cap), after)
    except (
        urllib.error.URLError,
        http.client.HTTPException,
        ConnectionError,
        TimeoutError,
        OSError,
    ) as e:
        return _network_failure(e)
    return _answer(raw, route)


def _status_failure(status: int, text: str, retry_after: str | None) -> _Attempt:
    """The failure of a non-2xx answer (a snippet of its body): final, or retried on 5xx, 408 and
    429 after ``Retry-After`` (a 429 does not count against the endpoint's health)."""
    failure = f"HTTP {status}: {_snippet(text)}"
    if status not in _RETRY_STATUS:
        return _Attempt(None, failure, None, True, False)
    return _Attempt(None, failure, retry_after_seconds(retry_after), False, status != 429)


def _answer(raw: bytes, route: Route) -> _Attempt:
    """The parsed answer of a 2xx body within the cap, or a retried garbage failure."""
    answer = route.parse(raw)
    if answer is None:
        failure = (
            f"garbage response (no {route.expects}): {_snippet(raw.decode('utf-8', 'replace'))}"
        )
        return _Attempt(None, failure, None, False, True)
    return _Attempt(answer, "", None, False, False)


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


def parse_chat(raw: bytes) -> str | None:
    """The assistant text of a chat-completions body, or ``None`` when the body is malformed."""
    try:
        obj = json.loads(raw.decode("utf-8"))
        content = obj["choices"][0]["message"]["content"]
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError):
        return None
    return content if isinstance(content, str) else None


CHAT = Route("chat/completions", parse_chat, "choices[0].message.content")


def _safe_read(e: urllib.error.HTTPError, cap: int) -> str:
    """An error body, at most ``cap`` bytes of it."""
    try:
        return e.read(cap).decode("utf-8", "replace")
    except Exception:
        return ""


def _snippet(text: str, n: int = 200) -> str:
    """One line, at most ``n`` characters, for an error message."""
    one = " ".join(str(text).split())
    return one if len(one) <= n else one[: n - 3] + "..."
