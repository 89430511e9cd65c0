"""The one fake HTTP endpoint of the tests: a loopback server on 127.0.0.1 that records every
request and answers it with a function, and on it the scripted OpenAI-compatible chat endpoint
(``ScriptedChat``) that the LLM client, reader and command-line tests talk to."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.llm_throughput import completion_body


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
