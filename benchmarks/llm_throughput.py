"""LLM client throughput: calls per second against the number of requests in flight.

``tests._fakes.FakeLLMServer`` (the tests' one fake LLM server, which this benchmark imports: run
it from a clone) is an OpenAI-compatible chat server on 127.0.0.1 (standard library only) with a
fixed service time per request and scripted failures (429 with ``Retry-After``, 5xx, malformed
bodies); it serves any number of requests at once, so with service time ``s`` and ``N`` requests
in flight the ideal rate is ``N / s`` calls per second. ``bench_llm_throughput`` measures what
``oas.real``'s endpoint pool gets out of it (or out of real servers) at several concurrencies.

Run ``python -m benchmarks.llm_throughput`` (``--help`` for options); docs/performance.md holds
the measured table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from functools import partial
from typing import NamedTuple

from tests._fakes import FakeLLMServer


class ThroughputPoint(NamedTuple):
    """One measurement: ``calls`` answered in ``seconds`` with ``concurrency`` in flight."""

    concurrency: int
    calls: int
    seconds: float
    calls_per_s: float


def bench_llm_throughput(
    base_urls: Sequence[str],
    model: str,
    concurrencies: Sequence[int] = (1, 2, 4, 8),
    *,
    calls: int = 64,
    max_tokens: int = 8,
    cache_dir=None,
    tag: str = "",
) -> list[ThroughputPoint]:
    """Calls per second of ``ChatClient`` over ``base_urls`` at each concurrency.

    Each point sends ``calls`` distinct prompts from ``concurrency`` threads through one client (one
    pool bounded at ``concurrency``), into an empty cache, so every call is a real request.

    Returns:
      one ``ThroughputPoint`` per concurrency.
    """
    import tempfile

    out = []
    params = {"temperature": 0.0, "max_tokens": max_tokens}
    with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
        for n in concurrencies:
            prompts = [
                [{"role": "user", "content": f"Say a number. {tag} c{n} #{i}"}]
                for i in range(calls)
            ]
            _, dt = _client_run(base_urls, model, f"{tmp}/c{n}", n, prompts, params)
            out.append(ThroughputPoint(n, calls, dt, calls / dt))
    return out


def _client_run(urls, model: str, cache: str, n: int, prompts, params: dict) -> tuple[list, float]:
    """``prompts`` sent through one ``ChatClient`` (``n`` requests in flight, a fresh cache at
    ``cache``) from ``n`` threads: the texts and the seconds, the client's ``close`` included.
    Every call must have been a request."""
    from concurrent.futures import ThreadPoolExecutor

    from oas.real import ChatClient, resolve_endpoint

    client = ChatClient(resolve_endpoint(list(urls), model, "", cache, concurrency=n))
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=n) as ex:
        got = list(ex.map(partial(client.complete, **params), prompts))
    close = getattr(client, "close", None)
    if close is not None:
        close()
    dt = time.perf_counter() - t0
    if client.stats.requests != len(prompts):
        raise RuntimeError(f"client sent {client.stats.requests} of {len(prompts)} requests")
    return got, dt


class ClientVsUrllib(NamedTuple):
    """One concurrency of ``bench_client_vs_urllib``: the median calls/s of ``ChatClient``
    (``client``, into an empty cache) and of plain urllib (``urllib``), their ``ratio`` (client /
    urllib), the per-round rates (``client_rounds``, ``urllib_rounds``) and the ``ideal`` rate
    (``concurrency / service_time`` on the fake server; ``nan`` when unknown)."""

    concurrency: int
    calls: int
    client: float
    urllib: float
    ratio: float
    ideal: float
    client_rounds: tuple[float, ...]
    urllib_rounds: tuple[float, ...]


def urllib_calls(url: str, model: str, prompts: Sequence[list[dict]], n: int, **params) -> list:
    """What a competent user writes without the package: a ``ThreadPoolExecutor`` of ``n``
    workers, one ``urllib.request.urlopen`` per prompt, JSON in and out, no cache, no retry."""
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    target = f"{url.rstrip('/')}/chat/completions"

    def call(messages: list[dict]) -> str:
        body = json.dumps({"model": model, "messages": messages, **params}).encode()
        req = urllib.request.Request(
            target, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read())["choices"][0]["message"]["content"]

    with ThreadPoolExecutor(max_workers=n) as ex:
        return list(ex.map(call, prompts))


def bench_client_vs_urllib(
    base_url: str,
    model: str,
    concurrencies: Sequence[int] = (1, 8, 16),
    *,
    calls: int = 96,
    rounds: int = 3,
    max_tokens: int = 8,
    service_time: float = float("nan"),
) -> list[ClientVsUrllib]:
    """``ChatClient`` against plain urllib (``urllib_calls``) on one server, interleaved.

    Each round runs, for each concurrency in turn, the client (a fresh empty cache, so every call
    is a request; the time includes the client's ``close``) and then urllib, on distinct prompts,
    so both see the same machine load. The medians over ``rounds`` are reported; both must return
    the same texts for the same prompts (checked).
    """
    import statistics
    import tempfile

    rates: dict[tuple[int, str], list[float]] = {}
    params = {"temperature": 0.0, "max_tokens": max_tokens}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for n in concurrencies:
                prompts = [
                    [{"role": "user", "content": f"Say a number. r{r} c{n} #{i}"}]
                    for i in range(calls)
                ]
                got, dt = _client_run([base_url], model, f"{tmp}/r{r}c{n}", n, prompts, params)
                rates.setdefault((n, "client"), []).append(calls / dt)
                t0 = time.perf_counter()
                plain = urllib_calls(base_url, model, prompts, n, **params)
                dt = time.perf_counter() - t0
                rates.setdefault((n, "urllib"), []).append(calls / dt)
                if plain != got:
                    raise RuntimeError("the client and urllib returned different texts")
    out = []
    for n in concurrencies:
        c, u = rates[(n, "client")], rates[(n, "urllib")]
        cm, um = statistics.median(c), statistics.median(u)
        ideal = n / service_time if service_time > 0 else float("nan")
        out.append(ClientVsUrllib(n, calls, cm, um, cm / um, ideal, tuple(c), tuple(u)))
    return out


def bench_pair_throughput(
    data,
    concurrencies: Sequence[int] = (1, 2, 4, 8),
    *,
    service_time: float = 0.1,
    limit: int = 8,
    budgets: Sequence[int] = (32, 256),
) -> list[ThroughputPoint]:
    """Calls per second of a whole ``retcon pair locomo --operators llm --reader llm`` run on the
    fake server (fresh cache each time): the client pool plus the per-question work around it.
    ``seconds`` spans the first request to the last answer (loading the data, JAX's start and the
    summary's bootstrap come before and after).

    Args:
      data: the LoCoMo file.
      limit: questions per run; budgets: the ``--budgets``.
    """
    import tempfile

    from oas.real import PairJob, run_pair_job

    out = []
    for n in concurrencies:
        with FakeLLMServer(service_time) as srv, tempfile.TemporaryDirectory() as tmp:
            job = PairJob(
                dataset="locomo",
                data=str(data),
                out=f"{tmp}/p.jsonl",
                operators="llm",
                reader="llm",
                budgets=tuple(budgets),
                first=limit,
                llm={
                    "base_url": [srv.base_url],
                    "model": "fake",
                    "cache_dir": f"{tmp}/cache",
                    "concurrency": n,
                },
            )
            run_pair_job(job, progress=False)
            dt = srv.last_at - srv.first_at
            out.append(ThroughputPoint(n, len(srv.requests), dt, len(srv.requests) / dt))
    return out


@contextlib.contextmanager
def _served(service_time: float, no_delay: bool = False):
    """The fake server in a child process (so it does not share this process's GIL)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.llm_throughput", "--serve"]
        + ["--service-time", str(service_time)]
        + (["--server-no-delay"] if no_delay else []),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.llm_throughput",
        description="LLM calls per second against requests in flight: on the fake server "
        "(fixed service time, ideal N / s) or on the servers given with --base-url.",
    )
    p.add_argument("--base-url", action="append", default=None, help="real server(s) instead")
    p.add_argument("--model", default="fake")
    p.add_argument("--service-time", type=float, default=0.1, help="fake server, seconds")
    p.add_argument("--calls", type=int, default=64)
    p.add_argument("--max-tokens", type=int, default=8)
    p.add_argument("--concurrency", default=None, help="default 1,2,4,8 (--vs-urllib: 1,8,16)")
    p.add_argument(
        "--pair",
        metavar="LOCOMO_JSON",
        default=None,
        help="time whole `retcon pair locomo` runs (--calls questions each) on the fake server",
    )
    p.add_argument(
        "--serve",
        action="store_true",
        help="only run the fake server: print its base URL, serve until killed",
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="run the fake server in this process (default: a child process, own GIL)",
    )
    p.add_argument(
        "--vs-urllib",
        action="store_true",
        help="the client against plain urllib (a thread pool of urlopen calls), interleaved, "
        "on the fake server (default concurrencies 1,8,16)",
    )
    p.add_argument("--rounds", type=int, default=3, help="--vs-urllib: interleaved rounds")
    p.add_argument(
        "--server-no-delay",
        action="store_true",
        help="the fake server sets TCP_NODELAY (as uvicorn and nginx do); default off",
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.serve:
        with FakeLLMServer(args.service_time, no_delay=args.server_no_delay) as srv:
            print(srv.base_url, flush=True)
            threading.Event().wait()
        return 0
    conc_arg = args.concurrency or ("1,8,16" if args.vs_urllib else "1,2,4,8")
    conc = [int(x) for x in conc_arg.split(",")]
    if args.vs_urllib:
        return _main_vs_urllib(args, conc)
    ideal = None if args.base_url and not args.pair else 1.0 / args.service_time
    if args.pair:
        points = bench_pair_throughput(
            args.pair, conc, service_time=args.service_time, limit=args.calls
        )
    else:
        with _servers(args, in_process=args.in_process) as urls:
            points = bench_llm_throughput(
                urls, args.model, conc, calls=args.calls, max_tokens=args.max_tokens
            )
    if args.json:
        print(json.dumps([p._asdict() for p in points]))
        return 0
    base = points[0].calls_per_s
    print("in flight | calls | seconds | calls/s | speed-up" + (" | ideal" if ideal else ""))
    for pt in points:
        row = f"{pt.concurrency:9d} | {pt.calls:5d} | {pt.seconds:7.2f} | {pt.calls_per_s:7.1f} | {pt.calls_per_s / base:7.2f}x"
        if ideal:
            row += f" | {ideal * pt.concurrency:.1f}"
        print(row)
    sys.stdout.flush()
    return 0


@contextlib.contextmanager
def _servers(args, *, in_process: bool = False, no_delay: bool = False):
    """The base URLs to time: ``--base-url``'s, else the fake server's (in this process with
    ``in_process``, else in a child process, ``_served``)."""
    if args.base_url:
        yield list(args.base_url)
    elif in_process:
        with FakeLLMServer(args.service_time) as srv:
            yield [srv.base_url]
    else:
        with _served(args.service_time, no_delay) as url:
            yield [url]


def _main_vs_urllib(args, conc: list[int]) -> int:
    with _servers(args, no_delay=args.server_no_delay) as urls:
        rows = bench_client_vs_urllib(
            urls[0],
            args.model,
            conc,
            calls=args.calls,
            rounds=args.rounds,
            max_tokens=args.max_tokens,
            service_time=float("nan") if args.base_url else args.service_time,
        )
    if args.json:
        print(json.dumps([r._asdict() for r in rows]))
        return 0
    print(f"median of {args.rounds} interleaved rounds, {args.calls} calls each")
    print(
        "in flight | client calls/s | urllib calls/s | client/urllib | client/ideal | urllib/ideal"
    )
    for r in rows:
        print(
            f"{r.concurrency:9d} | {r.client:14.1f} | {r.urllib:14.1f} | {r.ratio:13.2f} | "
            f"{r.client / r.ideal:12.2f} | {r.urllib / r.ideal:12.2f}"
        )
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
