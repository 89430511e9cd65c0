"""The LLM throughput benchmark's side-by-side comparison with plain urllib (docs/performance.md).

No timing is asserted: the rows must carry both rates, their ratio, and the same texts from both
paths (the benchmark checks that itself and raises otherwise).
"""

from __future__ import annotations

import math

from benchmarks.llm_throughput import bench_client_vs_urllib, urllib_calls
from tests._fakes import FakeLLMServer


def test_urllib_baseline_returns_the_servers_texts():
    with FakeLLMServer() as srv:
        prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(5)]
        got = urllib_calls(srv.base_url, "fake", prompts, 2, temperature=0.0)
        assert got == [srv.reply({"messages": p}) for p in prompts]
        assert len(srv.requests) == 5


def test_client_vs_urllib_rows_interleaved():
    with FakeLLMServer(0.001) as srv:
        rows = bench_client_vs_urllib(
            srv.base_url, "fake", (1, 3), calls=6, rounds=2, service_time=0.001
        )
        # 2 rounds x 2 concurrencies x (client + urllib) x 6 calls, each a real request
        assert len(srv.requests) == 2 * 2 * 2 * 6
    assert [r.concurrency for r in rows] == [1, 3]
    for r in rows:
        assert len(r.client_rounds) == len(r.urllib_rounds) == 2
        assert r.client > 0 and r.urllib > 0
        assert math.isclose(r.ratio, r.client / r.urllib)
        assert math.isclose(r.ideal, r.concurrency / 0.001)
