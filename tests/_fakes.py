"""The fake HTTP endpoints of the tests, on 127.0.0.1: ``FakeLLMServer``, the one fake
OpenAI-compatible LLM server (service time, scripted failures, in-flight gates; the tests of the
client pool and ``benchmarks.llm_throughput`` use it), and ``FakeServer``, a loopback server that
records every request and answers it with a function, with on it the scripted chat endpoint
(``ScriptedChat``) that the reader and command-line tests talk to."""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion_body(content: Any) -> bytes:
    """A minimal chat-completions response body carrying ``content``."""
    return json.dumps(
        {
            "id": "fake",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
    ).encode()


def default_reply(body: dict) -> str:
    """A short deterministic reply: a function of the last message only."""
    text = str(body["messages"][-1]["content"])
    return "note " + hashlib.sha256(text.encode()).hexdigest()[:8]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        self.disable_nagle_algorithm = self.server.no_delay  # type: ignore[attr-defined]
        super().setup()
        self.server._track(self.connection, True)  # type: ignore[attr-defined]

    def finish(self):
        try:
            super().finish()
        finally:
            self.server._track(self.connection, False)  # type: ignore[attr-defined]

    def do_GET(self):
        data = json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode()
        self._send(200, data)

    def do_POST(self):
        srv: FakeLLMServer = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        step = srv._enter(body)
        try:
            if srv.service_time > 0:
                time.sleep(srv.service_time)
            srv._gate_wait()
            delay = srv.delay(body) if srv.delay is not None else 0.0
            if delay > 0:
                time.sleep(delay)
            kind = step[0]
            if kind == "ok":
                self._send(200, completion_body(srv.reply(body)))
            elif kind == "garbage":
                self._send(200, step[1])
            else:
                extra = {"Retry-After": str(step[1])} if step[1] is not None else {}
                self._send(int(kind), b'{"error": "scripted failure"}', extra)
        finally:
            srv._leave()

    def _send(self, status: int, data: bytes, extra: dict | None = None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class FakeLLMServer(ThreadingHTTPServer):
    """A scripted OpenAI-compatible chat server on ``127.0.0.1`` (a free port), in a thread.

    Use as a context manager; ``base_url`` is ``http://127.0.0.1:PORT/v1``.

    Args:
      service_time: seconds each request takes before it is answered.
      reply: ``body -> str``, the assistant text (default ``default_reply``).
      delay: ``body -> seconds`` of extra delay per request (e.g. to shuffle completion order).
      gate: hold each request until this many are in the server at once (or ``gate_timeout``
        passed): makes "N in flight" observable without timing assumptions.
      no_delay: ``TCP_NODELAY`` on the served connections, as uvicorn and nginx set it (default
        off, as ``http.server`` leaves it: the headers and the body go out in two writes, so a
        client on a kept connection that delays its ACK waits tens of milliseconds per answer).

    Attributes:
      script: steps used one per request, before the default: ``("ok",)``, ``("garbage", bytes)``,
        or ``(status, retry_after_or_None)`` such as ``(429, 2)`` or ``(500, None)``.
      requests: the request bodies in arrival order; ``max_in_flight``: the most seen at once;
      ``first_at``, ``last_at``: ``time.monotonic()`` of the first arrival and the last answer;
      ``connections``: client connections accepted (HTTP/1.1 keep-alive: one serves many).
    """

    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self,
        service_time: float = 0.0,
        *,
        reply: Callable[[dict], str] | None = None,
        delay: Callable[[dict], float] | None = None,
        gate: int = 0,
        gate_timeout: float = 10.0,
        no_delay: bool = False,
    ):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.service_time = float(service_time)
        self.reply = reply or default_reply
        self.delay = delay
        self.gate, self.gate_timeout = int(gate), float(gate_timeout)
        self.no_delay = bool(no_delay)
        self.script: list[tuple] = []
        self.requests: list[dict] = []
        self.in_flight = self.max_in_flight = 0
        self.first_at = self.last_at = float("nan")  # first arrival, last answer (monotonic s)
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._open: set = set()  # the client connections being served (keep-alive)
        self.connections = 0  # client connections accepted

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def _enter(self, body: dict) -> tuple:
        with self._cond:
            if not self.requests:
                self.first_at = time.monotonic()
            self.requests.append(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._cond.notify_all()
            return self.script.pop(0) if self.script else ("ok",)

    def _gate_wait(self) -> None:
        if self.gate <= 1:
            return
        with self._cond:
            self._cond.wait_for(lambda: self.max_in_flight >= self.gate, timeout=self.gate_timeout)

    def _leave(self) -> None:
        with self._cond:
            self.in_flight -= 1
            self.last_at = time.monotonic()

    def _track(self, sock, live: bool) -> None:
        with self._cond:
            if live:
                self._open.add(sock)
                self.connections += 1
            else:
                self._open.discard(sock)

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client hung up (a closed keep-alive connection): not a server fault
        super().handle_error(request, client_address)

    def drop_connections(self) -> int:
        """Close every client connection now (as a server restart or an idle timeout does), keep
        listening; returns how many were open."""
        with self._cond:
            socks = list(self._open)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        return len(socks)

    def start(self) -> FakeLLMServer:
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering and close the port, as a killed server does: new connections are
        refused and the open ones (keep-alive) are dropped."""
        if self._thread is not None:
            self.shutdown()
            self._thread = None
        self.server_close()
        self.drop_connections()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def chat_body(text: str) -> bytes:
    """A minimal chat-completion answer whose message is ``text``."""
    return json.dumps({"choices": [{"message": {"content": text}}]}).encode()


def send(h: BaseHTTPRequestHandler, body: bytes = b"", status: int = 200, **headers: str) -> None:
    """Answer the request ``h`` with ``status`` and ``body`` (JSON unless ``Content_Type`` says
    otherwise; extra headers with ``_`` for ``-``)."""
    h.send_response(status)
    fields = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    fields.update({k.replace("_", "-"): v for k, v in headers.items()})
    for k, v in fields.items():
        h.send_header(k, v)
    h.end_headers()
    if body:
        h.wfile.write(body)


class FakeServer:
    """A loopback HTTP server; ``reply(handler)`` answers each GET or POST (the request's body is
    read first, as ``handler.body``).

    Attributes:
      seen: each request's headers, names in lower case.
      requests: each request as ``(method, path, body bytes)``.
      port, base_url: where it listens (``base_url`` ends in ``/v1``).
    """

    def __init__(self, reply: Callable[[Any], None]):
        self.seen: list[dict[str, str]] = []
        self.requests: list[tuple[str, str, bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            body = b""

            def log_message(self, *args):  # keep pytest output clean
                pass

            def _handle(self):
                n = int(self.headers.get("Content-Length") or 0)
                self.body = self.rfile.read(n) if n else b""
                outer.seen.append({k.lower(): v for k, v in self.headers.items()})
                outer.requests.append((self.command, self.path, self.body))
                reply(self)

            do_POST = _handle
            do_GET = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class ScriptedChat(FakeServer):
    """An OpenAI-compatible chat endpoint. Each POST takes the next step of ``script`` (then
    ``default``): a function of the request's JSON body giving the reply's text, ``("ok",
    text)``, ``("garbage", raw bytes)`` (status 200) or ``(status, _)`` (an error status with a
    small JSON error body).

    Attributes:
      posts: each request as ``{"path", "body" (parsed JSON), "auth" (the Authorization header)}``.
    """

    def __init__(self, default: Callable[[dict], str]):
        self.posts: list[dict] = []
        self.script: list = []
        self.default = default
        super().__init__(self._reply)

    def _reply(self, h) -> None:
        body = json.loads(h.body)
        self.posts.append({"path": h.path, "body": body, "auth": h.headers.get("Authorization")})
        step = self.script.pop(0) if self.script else self.default
        kind, payload = step if isinstance(step, tuple) else ("ok", step(body))
        payload: Any
        if kind == "ok":
            send(h, completion_body(payload))
        elif kind == "garbage":
            send(h, payload)
        else:
            send(h, b'{"error": "boom"}', status=kind)


def echo_first_line(body: dict) -> str:
    """The reply of a chat stub that echoes the first line of the last message (200 chars)."""
    return body["messages"][-1]["content"].strip().splitlines()[0][:200]
