"""Concurrent LLM calls over several endpoints, against the fake OpenAI-compatible server.

``tests._fakes.FakeLLMServer`` (standard library, 127.0.0.1) delays, answers 429 with
``Retry-After``, 500s and malformed bodies on script. Checked: the bound on requests in flight,
``Retry-After``, answers reaching the right caller under concurrency, an endpoint that keeps
failing taken out of the rotation, rows identical whatever the concurrency, the endpoints and the
completion order, a server killed mid-run, an interrupted run resuming with zero repeated calls,
and two processes sharing one cache.

References: MODEL §9 (real paired data: "a rerun costs nothing and an interrupted run resumes").
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from oas.real.llm._client import (
    ChatClient,
    EndpointPool,
    LLMEndpointError,
    resolve_endpoint,
    retry_after_seconds,
)
from retcon.errors import InputError
from tests._fakes import FakeLLMServer, default_reply

REPO = Path(__file__).resolve().parents[2]
OUT = "--output"  # the single-file output option of `retcon pair`


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _msg(i) -> list[dict]:
    return [{"role": "user", "content": f"question {i}"}]


def _client(urls, cache, *, sleeps=None, **kw) -> ChatClient:
    cfg = resolve_endpoint(urls, "fake", "", cache, **{"max_retries": 3, **kw})
    return ChatClient(cfg, sleep=(sleeps.append if sleeps is not None else lambda s: None))


def _entries(cache) -> list[Path]:
    return sorted(p for p in Path(cache).rglob("*.json") if not p.name.startswith("."))


# ---------------------------------------------------------------------------------- the pool
@pytest.mark.parametrize("concurrency", [2, 4])
def test_requests_in_flight_never_exceed_the_bound(tmp_path, concurrency):
    # The server holds each request until `concurrency` are inside: 12 callers, and the pool
    # reaches the bound and never passes it.
    with FakeLLMServer(gate=concurrency, gate_timeout=10.0) as srv:
        c = _client(srv.base_url, tmp_path, concurrency=concurrency)
        with ThreadPoolExecutor(12) as ex:
            got = list(ex.map(c.complete, [_msg(i) for i in range(8)]))
    assert srv.max_in_flight == concurrency
    assert got == [default_reply({"messages": _msg(i)}) for i in range(8)]
    assert c.stats.requests == 8 and c.pool.progress().calls == 8


def test_identical_calls_in_flight_are_sent_once(tmp_path):
    with FakeLLMServer(gate=2, gate_timeout=0.3) as srv:
        c = _client(srv.base_url, tmp_path, concurrency=8)
        with ThreadPoolExecutor(8) as ex:
            got = list(ex.map(c.complete, [_msg(0)] * 8))
    assert len(set(got)) == 1 and len(srv.requests) == 1
    assert c.stats.misses == 1 and c.stats.hits == 7


def test_retry_after_is_honoured(tmp_path):
    with FakeLLMServer() as srv:
        srv.script = [(429, 3), (503, None), ("ok",)]
        sleeps = []
        c = _client(srv.base_url, tmp_path, sleeps=sleeps, backoff=0.5)
        assert c.complete(_msg(1)) == default_reply({"messages": _msg(1)})
    # Retry-After: 3 replaces the backoff; then the endpoint's second cooldown doubles
    assert sleeps == [3.0, 1.0] and c.stats.retries == 2


def test_retry_after_values():
    assert retry_after_seconds("2") == 2.0 and retry_after_seconds(" 0.5 ") == 0.5
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("-4") == 0.0 and retry_after_seconds("1e9") == 300.0
    # an HTTP date 10 s after the given clock
    assert retry_after_seconds("Thu, 01 Jan 1970 00:00:10 GMT", now=0.0) == 10.0


def test_answers_reach_their_callers_through_failures(tmp_path):
    # 429s, 500s and malformed bodies interleaved with 12 concurrent calls: every caller gets the
    # answer to its own question, and only well-formed answers are cached.
    with FakeLLMServer(delay=lambda b: 0.01 * (len(b["messages"][-1]["content"]) % 3)) as srv:
        srv.script = [
            (429, 0),
            (500, None),
            ("garbage", b"not json"),
            ("ok",),
            ("garbage", b'{"choices": []}'),
            (502, None),
        ]
        c = _client(srv.base_url, tmp_path, concurrency=4, max_retries=6)
        with ThreadPoolExecutor(12) as ex:
            got = list(ex.map(c.complete, [_msg(i) for i in range(12)]))
    assert got == [default_reply({"messages": _msg(i)}) for i in range(12)]
    assert c.stats.retries == 5 and c.pool.progress().errors == 5
    entries = [json.loads(p.read_text()) for p in _entries(tmp_path)]
    assert sorted(e["response"] for e in entries) == sorted(got)


def test_calls_spread_over_endpoints_by_load(tmp_path):
    with FakeLLMServer() as a, FakeLLMServer() as b:
        c = _client([a.base_url, b.base_url], tmp_path, concurrency=1)
        for i in range(10):
            c.complete(_msg(i))
    # one at a time: the least-used endpoint takes the next call, so they alternate
    assert len(a.requests) == len(b.requests) == 5
    assert [e["ok"] for e in c.pool.endpoints] == [5, 5]


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_endpoint_that_keeps_failing_leaves_the_rotation(tmp_path):
    dead = f"http://127.0.0.1:{_free_port()}/v1"
    ticks = itertools.count(0.0, 100.0)  # a clock where every cooldown is over by the next read
    log = logging.getLogger("oas.real.llm._http")
    records = _Records()
    log.addHandler(records)
    try:
        with FakeLLMServer() as live:
            cfg = resolve_endpoint([dead, live.base_url], "fake", "", tmp_path, max_retries=2)
            pool = EndpointPool(cfg, sleep=lambda s: None, clock=lambda: next(ticks))
            c = ChatClient(cfg, pool=pool)
            got = [c.complete(_msg(i)) for i in range(12)]
    finally:
        log.removeHandler(records)
    assert got == [default_reply({"messages": _msg(i)}) for i in range(12)]
    dead_ep, live_ep = c.pool.endpoints
    assert dead_ep["removed"] and not live_ep["removed"] and live_ep["ok"] == 12
    assert dead_ep["errors"] == 3  # max_retries + 1 failures in a row, then out
    assert len(records.messages) == 1 and "taken out of the rotation" in records.messages[0]
    assert c.pool.progress().live == 1


def test_last_endpoint_is_never_removed_and_the_error_names_all(tmp_path):
    dead = [f"http://127.0.0.1:{_free_port()}/v1" for _ in range(2)]
    ticks = itertools.count(0.0, 100.0)
    cfg = resolve_endpoint(dead, "fake", "", tmp_path, max_retries=2)
    c = ChatClient(cfg, pool=EndpointPool(cfg, sleep=lambda s: None, clock=lambda: next(ticks)))
    for i in range(3):
        with pytest.raises(LLMEndpointError, match="failed after 3 tries") as e:
            c.complete(_msg(i))
        assert all(u in str(e.value) for u in dead)
    assert sum(ep["removed"] for ep in c.pool.endpoints) == 1
    assert c.stats.requests == 9
    assert _entries(tmp_path) == []


def test_urls_from_a_list_or_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RETCON_LLM_BASE_URL", "http://127.0.0.1:1/v1, http://127.0.0.1:2/v1/")
    monkeypatch.setenv("RETCON_LLM_CONCURRENCY", "3")
    cfg = resolve_endpoint(None, "m", "", tmp_path)
    assert cfg.base_urls == ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1")
    assert cfg.concurrency == 3 and cfg.base_url == "http://127.0.0.1:1/v1"
    cfg = resolve_endpoint(["http://a/v1/chat/completions", "http://b/v1"], "m", "", tmp_path)
    assert cfg.base_urls == ("http://a/v1", "http://b/v1") and cfg.concurrency == 3
    monkeypatch.setenv("RETCON_LLM_CONCURRENCY", "many")
    with pytest.raises(InputError, match="RETCON_LLM_CONCURRENCY"):
        resolve_endpoint(None, "m", "", tmp_path)
    with pytest.raises(InputError, match=r"concurrency must be an integer in \[1, 4096\]"):
        resolve_endpoint(None, "m", "", tmp_path, concurrency=0)


@pytest.mark.slow
def test_a_shared_pool_bounds_operators_and_reader_together(tmp_path):
    from oas.real.llm._backend import LLMOperators, LLMReader

    # The server holds each request until 3 are in flight or 1 s has passed: a pool that lets 3
    # through shows 3 at once, and the two a correct pool lets through meet there even when the
    # machine is busy (a 0.3 s hold let the second miss the first under load).
    with FakeLLMServer(gate=3, gate_timeout=1.0) as srv:
        pool = EndpointPool(resolve_endpoint(srv.base_url, "fake", "", tmp_path, concurrency=2))
        ops = LLMOperators(resolve_endpoint(srv.base_url, "fake", cache_dir=tmp_path), pool=pool)
        rd = LLMReader(resolve_endpoint(srv.base_url, "fake", cache_dir=tmp_path), pool=pool)
        assert ops.client.pool is rd.client.pool is pool
        with ThreadPoolExecutor(6) as ex:
            futs = [ex.submit(ops.ask, "s", f"u{i}", 8) for i in range(3)]
            futs += [ex.submit(rd.ask, "s", f"v{i}", 8) for i in range(3)]
            [f.result() for f in futs]
    assert srv.max_in_flight == 2 and pool.progress().calls == 6


# ------------------------------------------------------------------------------ retcon pair
def _locomo() -> Path:
    data = Path(os.environ.get("RETCON_DATA_DIR", "")) / "locomo10.json"
    if not data.is_file():
        pytest.skip(f"LoCoMo not found at {data}")
    return data


def _reader_reply(data: Path):
    """Answers the reader with the gold answer for half the questions (by hash), so outcomes vary;
    every other prompt gets the default reply."""
    from oas.real._locomo import load_locomo

    gold = {q.text: q.answer for c in load_locomo(data).conversations for q in c.queries}

    def reply(body):
        user = body["messages"][-1]["content"]
        if "\nQuestion: " in user:
            q = user.split("\nQuestion: ", 1)[1].split("\n", 1)[0]
            q = q.split(" (asked on ", 1)[0]
            if q in gold and int(hashlib.sha256(user.encode()).hexdigest(), 16) % 2 == 0:
                return str(gold[q])
        return default_reply(body)

    return reply


def _shuffle(body) -> float:
    """0-40 ms by content: completion order differs from submission order."""
    return (int(hashlib.sha256(json.dumps(body).encode()).hexdigest(), 16) % 5) * 0.01


def _pair_args(data, urls, cache, out, *extra) -> list[str]:
    args = ["pair", "locomo", "--data", str(data), "--operators", "llm", "--reader", "llm"]
    args += ["--first", "6", "--budgets", "32,256", "--no-progress", OUT, str(out)]
    args += ["--llm-model", "fake", "--llm-cache", str(cache), *extra]
    for u in urls if isinstance(urls, list) else [urls]:
        args += ["--llm-base-url", u]
    return args


def _pair(*args, **kw) -> int:
    from retcon.cli import main

    return main(_pair_args(*args, **kw))


def _rows(path) -> list[dict]:
    return [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]


@pytest.fixture
def fleet():
    """Two fake servers sharing a reply that depends on the request only."""
    data = _locomo()
    reply = _reader_reply(data)
    with (
        FakeLLMServer(reply=reply, delay=_shuffle) as a,
        FakeLLMServer(reply=reply, delay=_shuffle) as b,
    ):
        yield data, a, b


def test_pair_rows_identical_whatever_the_concurrency_and_endpoints(fleet, tmp_path):
    data, a, b = fleet
    assert (
        _pair(data, a.base_url, tmp_path / "c1", tmp_path / "one.jsonl", "--concurrency", "1") == 0
    )
    n_calls = len(a.requests)
    one = _rows(tmp_path / "one.jsonl")
    assert len(one) == 12 and len({r["y_ret"] for r in one} | {r["y_merge"] for r in one}) == 2
    a.requests.clear()
    assert (
        _pair(
            data,
            [a.base_url, b.base_url],
            tmp_path / "c8",
            tmp_path / "two.jsonl",
            "--concurrency",
            "8",
        )
        == 0
    )
    assert _rows(tmp_path / "two.jsonl") == one
    assert a.requests and b.requests and len(a.requests) + len(b.requests) == n_calls
    meta = json.loads(Path(f"{tmp_path / 'two.jsonl'}.meta.json").read_text())
    assert [e["ok"] for e in meta["summary"]["llm_endpoints"]] == [len(a.requests), len(b.requests)]


def test_pair_survives_a_server_killed_mid_run(fleet, tmp_path):
    data, a, b = fleet
    assert _pair(data, a.base_url, tmp_path / "ref", tmp_path / "ref.jsonl") == 0
    ref = _rows(tmp_path / "ref.jsonl")
    n_calls = len(a.requests)
    a.requests.clear()
    reply = a.reply

    killed = threading.Event()

    def dying(body):  # the first endpoint goes down after about 10 answers
        if len(a.requests) >= 10 and not killed.is_set():
            killed.set()
            threading.Thread(target=a.stop, daemon=True).start()
        return reply(body)

    a.reply = dying
    args = ("--concurrency", "4")
    assert _pair(data, [a.base_url, b.base_url], tmp_path / "c", tmp_path / "k.jsonl", *args) == 0
    assert _rows(tmp_path / "k.jsonl") == ref
    assert len(_entries(tmp_path / "c")) == len(_entries(tmp_path / "ref")) <= n_calls
    meta = json.loads(Path(f"{tmp_path / 'k.jsonl'}.meta.json").read_text())
    ep_a, ep_b = meta["summary"]["llm_endpoints"]
    # the stop starts while the 10th request is answered, and requests already in flight may die
    # with it, so the killed server's count of answers is under 10 by a timing-dependent number
    assert killed.is_set() and ep_a["ok"] > 0 and ep_a["errors"] > 0 and ep_b["ok"] > 0
    print(f"killed server: {ep_a}; live server: {ep_b}")


def test_interrupted_pair_resumes_with_zero_repeated_calls(fleet, tmp_path):
    data, a, b = fleet
    assert _pair(data, b.base_url, tmp_path / "ref", tmp_path / "ref.jsonl") == 0
    ref = _rows(tmp_path / "ref.jsonl")
    # the first run is cut short: after 25 answers the server refuses everything (a 4xx is fatal)
    a.script = [("ok",)] * 25 + [(400, None)] * 1000
    out = tmp_path / "p.jsonl"
    assert _pair(data, a.base_url, tmp_path / "c", out, "--concurrency", "4") == 2
    first = {json.dumps(r, sort_keys=True) for r in a.requests[:25]}
    assert len(_entries(tmp_path / "c")) == 25
    a.script, a.requests = [], []
    assert _pair(data, a.base_url, tmp_path / "c", out, "--concurrency", "4") == 0
    again = {json.dumps(r, sort_keys=True) for r in a.requests}
    assert not (first & again)  # nothing answered before is asked again
    assert len(again) == len(a.requests)  # and nothing twice
    assert _rows(out) == ref


@pytest.mark.slow
def test_two_processes_share_one_cache(fleet, tmp_path):
    data, a, _ = fleet
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "retcon",
                *_pair_args(data, a.base_url, cache, tmp_path / f"{i}.jsonl"),
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
    assert _rows(tmp_path / "0.jsonl") == _rows(tmp_path / "1.jsonl")
    entries = _entries(cache)
    assert not [p for p in cache.rglob(".*") if p.is_file()]  # no temporary file left behind
    distinct = {json.dumps(r, sort_keys=True) for r in a.requests}
    assert len(entries) == len(distinct)  # every answered call is cached, whole
    for p in entries:
        e = json.loads(p.read_text())
        assert p.stem == e["key"] and isinstance(e["response"], str)


def test_progress_line_and_bad_concurrency(fleet, tmp_path, capsys):
    data, a, _ = fleet
    args = _pair_args(data, a.base_url, tmp_path / "c", tmp_path / "p.jsonl", "--concurrency", "2")
    args.remove("--no-progress")
    from retcon.cli import main

    assert main(args) == 0
    err = capsys.readouterr().err
    for word in ("calls", "hits", "in flight", "errors", "6/6"):
        assert word in err, err[-500:]
    assert _pair(data, a.base_url, tmp_path / "c", tmp_path / "q.jsonl", "--concurrency", "0") == 2
    assert (
        "--concurrency must be an integer in [1, 4096] (requests in flight at once); got 0"
        in capsys.readouterr().err
    )
