"""``retcon llm check`` against the tests' fake endpoint (tests/_fakes.py): an honest server
passes and its seed probe says so, a server that ignores the seed is named, an endpoint that
cannot answer fails (exit 1), and ``pair`` refuses it in one line before any work."""

import hashlib
import json
import re

import pytest

from oas.real import check_endpoint, estimate_run, resolve_endpoint
from tests._cli import run_cli
from tests._data import LOCOMO_PATH, needs_locomo
from tests._fakes import FakeServer, completion_body, send


def server(*, honours_seed=True, answers=True, models=("m",), max_words=5000, ctx_meta=None):
    """A fake OpenAI-compatible endpoint: ``GET /v1/models`` and ``POST /v1/chat/completions``.
    An honest one answers a request as a function of its content and seed; one that ignores the
    seed samples anew at temperature > 0 (a counter); prompts over ``max_words`` words get 400."""
    count = [0]

    def reply(h):
        if h.command == "GET":
            entries = [
                {"id": m, **({"max_model_len": ctx_meta} if ctx_meta else {})} for m in models
            ]
            return send(h, json.dumps({"object": "list", "data": entries}).encode())
        if not answers:
            return send(h, b'{"error": "down"}', status=500)
        body = json.loads(h.body)
        text = body["messages"][-1]["content"]
        if len(text.split()) > max_words:
            return send(h, b'{"error": "context length exceeded"}', status=400)
        count[0] += 1
        sampled = body.get("temperature", 0) > 0
        key = f"{text}|{body.get('seed')}" + (
            f"|{count[0]}" if sampled and not honours_seed else ""
        )
        send(h, completion_body(hashlib.sha256(key.encode()).hexdigest()[:8]))

    return FakeServer(reply)


def config(srv, tmp_path, model="m"):
    return resolve_endpoint(srv.base_url, model, "", tmp_path / "cache")


def test_honest_server_passes_with_seed_latency_and_context(tmp_path):
    with server() as srv:
        c = check_endpoint(config(srv, tmp_path), max_context=16384)
    assert c.ok and c.answered and c.listed and c.models == ["m"]
    assert c.deterministic is True and c.seed_honoured is True and c.notes == []
    assert c.latency_s is not None and c.latency_s >= 0
    # doubling prompts 1024 .. 4096 words pass, 8192 exceeds the 5000-word limit
    assert (c.context_tokens, c.context_source) == (4096, "probe")
    assert c.calls == 1 + 4 + 4  # one-token chat, seed probes, 1024 2048 4096 and the refused 8192


def test_context_from_models_metadata_sends_no_probe(tmp_path):
    with server(ctx_meta=32768) as srv:
        c = check_endpoint(config(srv, tmp_path), seed=False)
        posts = [r for r in srv.requests if r[0] == "POST"]
    assert (c.context_tokens, c.context_source) == (32768, "models") and len(posts) == 1


def test_server_ignoring_the_seed_is_named(tmp_path, capsys):
    with server(honours_seed=False) as srv:
        c = check_endpoint(config(srv, tmp_path), context=False)
        rc, out, err = run_cli(
            ["llm", "check", "--llm-base-url", srv.base_url, "--llm-model", "m", "--llm-cache",
             str(tmp_path / "c"), "--max-context", "1024", "--data", str(LOCOMO_PATH)],
            capsys,
        )  # fmt: skip
    assert c.ok and c.deterministic is True and c.seed_honoured is False
    assert any("the seed is ignored" in n for n in c.notes)
    assert rc == 0, err
    assert "seed honoured (temperature 1, same seed, same answer): NO" in out
    assert "note: the seed is ignored" in out


def test_endpoint_that_cannot_answer_fails_exit_1(tmp_path, capsys):
    with server(answers=False) as srv:
        rc, out, _ = run_cli(
            ["llm", "check", "--llm-base-url", srv.base_url, "--llm-model", "m", "--llm-cache",
             str(tmp_path / "c"), "--json"],
            capsys,
        )  # fmt: skip
    res = json.loads(out)
    assert rc == 1 and res["check"]["ok"] is False and res["check"]["answered"] is False
    assert "does not answer a one-token chat" in res["check"]["problems"][0]


def test_model_not_served_fails(tmp_path):
    with server(models=("other",)) as srv:
        c = check_endpoint(config(srv, tmp_path), seed=False, context=False)
    assert not c.ok and c.listed is False and "'m' is not among the models" in c.problems[0]


def test_estimate_counts_calls():
    e = estimate_run([1, 3, 2], 4, realisations=3, llm_judge=True, concurrency=2, latency_s=0.5)
    assert e.operator_calls == (3 + 5 + 4) * 3
    assert e.reader_calls == 3 * 4 * 4 * 3 and e.judge_calls == e.reader_calls
    assert e.calls == e.operator_calls + 2 * e.reader_calls
    assert e.seconds == pytest.approx(e.calls * 0.5 / 2)


@needs_locomo
def test_check_prints_the_paper_plan(tmp_path, capsys):
    with server(ctx_meta=8192) as srv:
        rc, out, err = run_cli(
            ["llm", "check", "--llm-base-url", srv.base_url, "--llm-model", "m", "--llm-cache",
             str(tmp_path / "c"), "--realisations", "3", "--data", str(LOCOMO_PATH)],
            capsys,
        )  # fmt: skip
    assert rc == 0, err
    assert out.startswith(f"endpoint {srv.base_url} model m: passes")
    m = re.search(
        r"planned run: (\d+) questions x 4 budgets x 3 realisation\(s\): at most (\d+) calls", out
    )
    assert m and int(m.group(1)) == 75


@needs_locomo
def test_pair_refuses_an_endpoint_that_fails_the_probe_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("RETCON_LLM_CHECK", raising=False)
    with server(answers=False) as srv:
        rc, _out, err = run_cli(
            ["pair", "locomo", "--data", str(LOCOMO_PATH), "--operators", "llm", "--first", "1",
             "--budgets", "64", "--llm-base-url", srv.base_url, "--llm-model", "m",
             "--llm-cache", str(tmp_path / "c"), "--output", str(tmp_path / "p.jsonl")],
            capsys,
        )  # fmt: skip
        posts = [r for r in srv.requests if r[0] == "POST"]
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, lines
    assert "fails the endpoint check" in lines[0] and "retcon llm check" in lines[0]
    assert len(posts) == 1  # the probe's one-token chat, nothing more
    assert not (tmp_path / "p.jsonl").exists()
