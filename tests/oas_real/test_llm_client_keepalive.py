"""Connection reuse in ``oas.real.llm._http`` (issue 34): keep-alive connections, one per request in
flight, reconnected when the server drops them, and urllib's behaviour kept where it matters
(proxies, redirects, the size cap). Loopback servers on 127.0.0.1 only; nothing is timed."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from oas.real.llm._config import EndpointConfig
from oas.real.llm._http import EndpointPool, LLMEndpointError
from tests._fakes import FakeLLMServer, default_reply


def _pool(url, tmp_path, **kw) -> EndpointPool:
    kw = {"max_retries": 0, "backoff": 0.0, **kw}
    cfg = EndpointConfig(base_url=url, model="m", api_key="", cache_dir=tmp_path, **kw)
    return EndpointPool(cfg, sleep=lambda s: None)


def _body(i) -> bytes:
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": f"q{i}"}]}).encode()


def _reply(i) -> str:
    return default_reply({"messages": [{"role": "user", "content": f"q{i}"}]})


def test_one_connection_serves_a_serial_run(tmp_path):
    with FakeLLMServer() as srv:
        pool = _pool(srv.base_url, tmp_path, concurrency=1)
        got = [pool.send(_body(i)) for i in range(6)]
        assert got == [(_reply(i), 1) for i in range(6)]
        assert len(srv.requests) == 6
        assert srv.connections == 1
        pool.close()


def test_connections_bounded_by_requests_in_flight(tmp_path):
    with FakeLLMServer(0.002) as srv:
        pool = _pool(srv.base_url, tmp_path, concurrency=3)
        with ThreadPoolExecutor(max_workers=6) as ex:  # more threads than slots
            got = list(ex.map(lambda i: pool.send(_body(i))[0], range(30)))
        assert got == [_reply(i) for i in range(30)]
        assert 1 <= srv.connections <= 3
        pool.close()


def test_dropped_connection_is_reconnected_without_a_retry(tmp_path):
    with FakeLLMServer() as srv:
        pool = _pool(srv.base_url, tmp_path, concurrency=1)  # max_retries=0: no retry allowed
        assert pool.send(_body(0)) == (_reply(0), 1)
        assert srv.drop_connections() == 1  # the server closes the idle kept connection
        assert pool.send(_body(1)) == (_reply(1), 1)
        assert srv.connections == 2
        assert [e["errors"] for e in pool.endpoints] == [0]


def test_stopped_server_fails_after_the_bounded_tries(tmp_path):
    srv = FakeLLMServer().start()
    pool = _pool(srv.base_url, tmp_path, max_retries=1)
    assert pool.send(_body(0))[0] == _reply(0)
    srv.stop()  # kept connection dropped, port closed: the resend and both tries fail
    with pytest.raises(LLMEndpointError, match="failed after 2 tries"):
        pool.send(_body(1))


def test_proxy_from_environment_still_used(tmp_path, monkeypatch):
    """A ``*_proxy`` variable sends the request where urllib would: to the proxy (down here)."""
    with FakeLLMServer() as srv:
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # discard port: refused
        with pytest.raises(LLMEndpointError):
            _pool(srv.base_url, tmp_path).send(_body(0))
        assert srv.requests == []
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        assert _pool(srv.base_url, tmp_path).send(_body(0))[0] == _reply(0)


def test_oversized_answer_closes_the_connection(tmp_path):
    with FakeLLMServer(reply=lambda body: "x" * 5000) as srv:
        pool = _pool(srv.base_url, tmp_path, max_response_bytes=1000, concurrency=1)
        for _ in range(2):
            with pytest.raises(LLMEndpointError, match="cap"):
                pool.send(_body(0))
        assert srv.connections == 2  # the unread body is never left on a kept connection


def test_error_answers_keep_the_connection_and_retry(tmp_path):
    with FakeLLMServer() as srv:
        srv.script = [(503, None), (429, 0), ("garbage", b"{}")]
        pool = _pool(srv.base_url, tmp_path, max_retries=3, concurrency=1)
        assert pool.send(_body(0)) == (_reply(0), 4)
        assert srv.connections == 1


def test_threads_share_the_pool_safely(tmp_path):
    """Many threads, one pool, answers in the right place (no connection crosses two requests)."""
    with FakeLLMServer(
        delay=lambda body: 0.003 * (int(body["messages"][0]["content"][1:]) % 3)
    ) as srv:
        pool = _pool(srv.base_url, tmp_path, concurrency=4)
        out: dict[int, str] = {}
        lock = threading.Lock()

        def work(i):
            text, _ = pool.send(_body(i))
            with lock:
                out[i] = text

        threads = [threading.Thread(target=work, args=(i,)) for i in range(24)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert out == {i: _reply(i) for i in range(24)}
