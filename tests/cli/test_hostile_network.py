"""Hostile endpoints (issue 35 items 1, 8, 10): redirects never carry the key across origins, and
oversized answers are refused. Loopback servers on 127.0.0.1 only."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from oas.real.llm._config import EndpointConfig
from oas.real.llm._http import EndpointPool
from retcon.errors import InputError
from tests._fakes import FakeServer, chat_body, send

KEY = "sk-test-secret"


OK_BODY = chat_body("fine")


def _ok(h, body=OK_BODY):
    send(h, body)


def _redirect_to(url, code=302):
    def reply(h):
        h.send_response(code)
        h.send_header("Location", url)
        h.send_header("Content-Length", "0")
        h.end_headers()

    return reply


def _pool(port, tmp_path, **kw):
    cfg = EndpointConfig(
        base_url=f"http://127.0.0.1:{port}/v1",
        model="m",
        api_key=KEY,
        cache_dir=tmp_path,
        max_retries=0,
        backoff=0.0,
        **kw,
    )
    return EndpointPool(cfg, sleep=lambda s: None)


BODY = json.dumps({"model": "m", "messages": []}).encode()


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_redirect_refused_by_default_and_other_server_sees_nothing(tmp_path, code):
    with FakeServer(_ok) as other:
        target = f"http://127.0.0.1:{other.port}/v1/chat/completions"
        with FakeServer(_redirect_to(target, code)) as first, pytest.raises(InputError) as ei:
            _pool(first.port, tmp_path).send(BODY)
    msg = str(ei.value)
    assert "\n" not in msg
    assert f"127.0.0.1:{first.port}" in msg and f"127.0.0.1:{other.port}" in msg
    assert "redirect" in msg
    assert other.seen == []  # not even a request without the key
    assert first.seen and first.seen[0].get("authorization") == f"Bearer {KEY}"


def test_follow_redirects_drops_key_across_origins(tmp_path):
    with FakeServer(_ok) as other:
        target = f"http://127.0.0.1:{other.port}/v1/chat/completions"
        with FakeServer(_redirect_to(target, 302)) as first:
            pool = _pool(first.port, tmp_path, follow_redirects=True)
            text, _ = pool.send(BODY)
    assert text == "fine"
    assert len(other.seen) == 1
    assert "authorization" not in other.seen[0]
    assert KEY not in json.dumps(other.seen)


def test_follow_redirects_keeps_key_on_same_origin(tmp_path):
    def reply(h):
        if h.path.endswith("/moved"):
            _ok(h)
        else:
            _redirect_to("/v1/moved", 302)(h)

    with FakeServer(reply) as srv:
        text, _ = _pool(srv.port, tmp_path, follow_redirects=True).send(BODY)
    assert text == "fine"
    assert len(srv.seen) == 2
    assert srv.seen[1].get("authorization") == f"Bearer {KEY}"


def test_oversized_answer_refused_naming_endpoint(tmp_path):
    big = chat_body("x" * (2 << 20))
    with FakeServer(lambda h: _ok(h, big)) as srv, pytest.raises(InputError) as ei:
        _pool(srv.port, tmp_path).send(BODY)
    msg = str(ei.value)
    assert "\n" not in msg
    assert f"127.0.0.1:{srv.port}" in msg and "cap" in msg
    assert list(tmp_path.rglob("*")) == []  # nothing cached


def test_response_cap_configurable(tmp_path):
    body = chat_body("y" * 5000)
    with FakeServer(lambda h: _ok(h, body)) as srv:
        with pytest.raises(InputError, match="cap"):
            _pool(srv.port, tmp_path, max_response_bytes=1000).send(BODY)
        text, _ = _pool(srv.port, tmp_path, max_response_bytes=len(body)).send(BODY)
    assert text == "y" * 5000


@pytest.mark.parametrize("timeout", [float("inf"), 1e12, float("nan"), 0.0, -1.0])
def test_timeout_out_of_range_refused(tmp_path, timeout):
    with pytest.raises(InputError, match=r"timeout must be in \(0, 86400\]"):
        EndpointConfig(base_url="http://127.0.0.1:1/v1", model="m", timeout=timeout)


@pytest.mark.parametrize("cap", [0, -1, True, 1.5, 1 << 40])
def test_response_cap_validated(cap):
    with pytest.raises(InputError, match="max_response_bytes"):
        EndpointConfig(base_url="http://127.0.0.1:1/v1", model="m", max_response_bytes=cap)


def test_cli_redirect_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    """Through ``resolve_endpoint`` as the CLI builds it: the flag off refuses, on drops the key."""
    from oas.real.llm._config import resolve_endpoint

    monkeypatch.delenv("RETCON_LLM_MAX_RESPONSE_BYTES", raising=False)
    with FakeServer(_ok) as other:
        target = f"http://127.0.0.1:{other.port}/v1/chat/completions"
        with FakeServer(_redirect_to(target)) as first:
            url = f"http://127.0.0.1:{first.port}/v1"
            off = resolve_endpoint(url, "m", KEY, tmp_path, follow_redirects=None, max_retries=0)
            assert off.follow_redirects is False
            with pytest.raises(InputError, match="redirect"):
                EndpointPool(off, sleep=lambda s: None).send(BODY)
            on = resolve_endpoint(url, "m", KEY, tmp_path, follow_redirects=True, max_retries=0)
            assert EndpointPool(on, sleep=lambda s: None).send(BODY)[0] == "fine"
    assert len(other.seen) == 1 and "authorization" not in other.seen[0]


def test_env_response_cap(tmp_path, monkeypatch):
    from oas.real.llm._config import resolve_endpoint

    monkeypatch.setenv("RETCON_LLM_MAX_RESPONSE_BYTES", "2048")
    cfg = resolve_endpoint("http://127.0.0.1:1/v1", "m", "", tmp_path)
    assert cfg.max_response_bytes == 2048
    monkeypatch.setenv("RETCON_LLM_MAX_RESPONSE_BYTES", "lots")
    with pytest.raises(InputError, match="RETCON_LLM_MAX_RESPONSE_BYTES"):
        resolve_endpoint("http://127.0.0.1:1/v1", "m", "", tmp_path)


@pytest.mark.parametrize(
    ("length", "budget", "rho"),
    [
        (-1.0, 100.0, 0.5),
        (0.0, 0.0, 0.5),
        (1e-300, 1e300, 0.5),
        (1.0, 100.0, 1e-300),
        (float("nan"), 1.0, 0.5),
        (1.0, float("inf"), 0.5),
    ],
)
def test_point_mass_crossover_time_refuses_out_of_range(length, budget, rho):
    """Issue 35 item 6: no hang, no ZeroDivisionError/OverflowError; a named InputError."""
    from theory import point_mass_crossover_time

    with pytest.raises(InputError, match="point_mass_crossover_time"):
        point_mass_crossover_time(
            length, budget, compress_ratio=rho, fidelity=0.8, age_law="uniform"
        )


@pytest.mark.parametrize("value", ["0", "-3", "inf", "1e12", "nan", "soon"])
def test_env_timeout_error_names_variable(tmp_path, monkeypatch, value):
    from oas.real.llm._config import resolve_endpoint

    monkeypatch.setenv("RETCON_LLM_TIMEOUT", value)
    with pytest.raises(InputError, match=r"RETCON_LLM_TIMEOUT must be seconds in \(0, 86400\]"):
        resolve_endpoint("http://127.0.0.1:1/v1", "m", "", tmp_path)


@pytest.mark.parametrize("value", ["0", "-1"])
def test_max_processes_zero_refused(monkeypatch, value):
    from sim._multiprocess import check_processes

    monkeypatch.setenv("RETCON_MAX_PROCESSES", value)
    with pytest.raises(InputError, match=r"RETCON_MAX_PROCESSES must be an integer >= 1"):
        check_processes("--processes", 1)


def test_scenario_toml_50000_levels_one_line(tmp_path):
    """Issue 35 item 5: deep nesting is refused in one line, as the JSON readers do."""
    from sim._scenario import read_scenario_toml

    p = tmp_path / "deep.toml"
    p.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(InputError, match="nested too deeply") as ei:
        read_scenario_toml(str(p), {}, "unknown")
    assert "\n" not in str(ei.value) and "deep.toml" in str(ei.value)


@pytest.mark.parametrize("name", ["crossover_curves", "phase_diagram"])
def test_experiment_toml_50000_levels_one_line(tmp_path, capsys, name):
    """The experiments' config reader refuses depth as the scenario readers do: through a
    script's own command line, exit 2 and one line naming the file."""
    import importlib

    p = tmp_path / "deep.toml"
    p.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    script = importlib.import_module(f"experiments.{name}")
    rc = script.main(["--config", str(p), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert len(err) == 1 and "nested too deeply" in err[0] and "deep.toml" in err[0], err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("cfg", "got"), [({}, "no such field"), ({"hidden_size": "384"}, "'384'")])
def test_dense_config_hidden_size_checked(tmp_path, cfg, got):
    """Issue 35 item 10: a missing or string ``hidden_size`` names the file and the field."""
    from oas.real._dense import _config_int

    with pytest.raises(InputError) as ei:
        _config_int(cfg, "hidden_size", tmp_path / "config.json")
    msg = str(ei.value)
    assert "config.json" in msg and "'hidden_size'" in msg and got in msg and "\n" not in msg
    assert _config_int({"hidden_size": 384}, "hidden_size", tmp_path / "config.json") == 384


@pytest.mark.parametrize("code", [307, 308])
def test_follow_redirects_resends_a_307_post_within_its_origin(tmp_path, code):
    """With --llm-follow-redirects a 307/308 (the same POST again) is resent, body and key, on the
    same scheme, host and port."""

    def reply(h):
        if h.path.endswith("/moved"):
            _ok(h)
        else:
            _redirect_to("/v1/moved", code)(h)

    with FakeServer(reply) as srv:
        text, _ = _pool(srv.port, tmp_path, follow_redirects=True).send(BODY)
    assert text == "fine"
    assert srv.requests == [
        ("POST", "/v1/chat/completions", BODY),
        ("POST", "/v1/moved", BODY),
    ]
    assert srv.seen[1].get("authorization") == f"Bearer {KEY}"


@pytest.mark.parametrize("code", [307, 308])
def test_follow_redirects_refuses_a_307_post_to_another_port(tmp_path, code):
    """A 307/308 to another origin is refused in one line naming both addresses: neither the key
    nor the body goes there."""
    with FakeServer(_ok) as other:
        target = f"http://127.0.0.1:{other.port}/v1/chat/completions"
        with FakeServer(_redirect_to(target, code)) as first, pytest.raises(InputError) as ei:
            _pool(first.port, tmp_path, follow_redirects=True).send(BODY)
    msg = str(ei.value)
    assert "\n" not in msg
    assert f"HTTP {code} redirect from http://127.0.0.1:{first.port}/v1" in msg
    assert f"to {target} refused" in msg and "same scheme, host and port" in msg
    assert other.requests == [] and other.seen == []
    assert len(first.requests) == 1


def test_follow_redirects_refuses_a_307_post_to_another_host_name(tmp_path):
    """The same port under another host name is another origin: the POST is not resent."""

    def reply(h):
        port = h.server.server_address[1]
        _redirect_to(f"http://localhost:{port}/v1/moved", 307)(h)

    with FakeServer(reply) as srv, pytest.raises(InputError, match="refused") as ei:
        _pool(srv.port, tmp_path, follow_redirects=True).send(BODY)
    assert f"localhost:{srv.port}/v1/moved" in str(ei.value)
    assert [p for _, p, _ in srv.requests] == ["/v1/chat/completions"]


# ---- a real command against a redirecting loopback server ----------------------------------------

LLM_ENV = (
    "RETCON_LLM_BASE_URL",
    "RETCON_LLM_MODEL",
    "RETCON_LLM_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "RETCON_LLM_MAX_RESPONSE_BYTES",
    "RETCON_LLM_TIMEOUT",
)


@pytest.mark.parametrize(
    ("code", "flags"),
    [(302, []), (308, []), (307, ["--llm-follow-redirects"]), (308, ["--llm-follow-redirects"])],
)
@pytest.mark.parametrize("key_from", ["--llm-api-key", "RETCON_LLM_API_KEY"])
def test_pair_locomo_against_a_redirecting_server(
    tmp_path, capsys, monkeypatch, code, flags, key_from
):
    """``retcon pair locomo --operators llm`` on the tiny LoCoMo fixture, its endpoint answering
    a redirect to a second loopback server: exit 2, one line naming both addresses, nothing
    written (no pairs, no cache entry), and the second server sees no request, so no key."""
    from tests._cli import run_cli

    for v in LLM_ENV:
        monkeypatch.delenv(v, raising=False)
    data = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_tiny.json"
    out, cache = tmp_path / "p.jsonl", tmp_path / "cache"
    with FakeServer(_ok) as other:
        target = f"http://127.0.0.1:{other.port}/v1/chat/completions"
        with FakeServer(_redirect_to(target, code)) as first:
            url = f"http://127.0.0.1:{first.port}/v1"
            key = ["--llm-api-key", KEY]
            if key_from == "RETCON_LLM_API_KEY":
                monkeypatch.setenv("RETCON_LLM_BASE_URL", url)
                monkeypatch.setenv("RETCON_LLM_API_KEY", KEY)
                key = []
            argv = ["pair", "locomo", "--data", str(data), "--operators", "llm", "--limit", "1"]
            argv += ["--budgets", "64", "--no-progress", "--output", str(out)]
            argv += ["--llm-base-url", url, "--llm-model", "m", "--llm-cache", str(cache)]
            rc, stdout, err = run_cli([*argv, *key, *flags], capsys)
    lines = err.strip().splitlines()
    assert rc == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err and stdout == ""
    assert f"HTTP {code} redirect from {url}/chat/completions to {target} refused" in lines[0]
    assert first.seen and first.seen[0].get("authorization") == f"Bearer {KEY}"
    assert other.seen == [] and other.requests == []
    assert not out.exists()
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []  # no pairs, no cache entry


# ---- timeline locomo --llm-cache, checked before any work ----------------------------------------


def _damage(kind: str, tmp_path):
    """A ``--llm-cache`` that cannot serve: ``(the path to pass, words the line must hold)``."""
    c = tmp_path / "cache"
    if kind == "a file":
        c.write_text("x")
        return c, ["--llm-cache", "is a file; expected a folder"]
    if kind == "under a file":
        c.write_text("x")
        return c / "sub", ["--llm-cache", "is a file, so no folder can be made under it"]
    if kind == "unwritable":
        return Path("/proc/retcon-cache"), ["--llm-cache", "/proc", "cannot write"]
    c.mkdir()
    if kind == "journal a file":
        (c / "journal").write_text("x")
        return c, ["journal", "should be the folder", "got a file"]
    if kind == "journal entry a folder":
        (c / "journal" / "1-ab.jsonl").mkdir(parents=True)
        return c, ["1-ab.jsonl", "should be a journal file", "got a folder"]
    assert kind == "shard a file"
    (c / "ab").write_text("x")
    return c, ["ab", "should be a folder of cache entries", "got a file"]


@pytest.mark.parametrize(
    "kind",
    [
        "a file",
        "under a file",
        "unwritable",
        "journal a file",
        "journal entry a folder",
        "shard a file",
    ],
)
def test_timeline_locomo_llm_cache_is_checked_before_any_work(kind, tmp_path, capsys, monkeypatch):
    """``timeline locomo --llm-cache`` that is a file, cannot be written or holds a damaged
    journal or shard: exit 2, one line naming it, before the data are read or a call is made."""
    from tests._cli import run_cli

    if kind == "unwritable" and os.access("/proc", os.W_OK) and not Path("/proc").is_mount():
        pytest.skip("/proc is writable here")
    for v in LLM_ENV:
        monkeypatch.delenv(v, raising=False)
    data = tmp_path / "locomo10.json"
    data.write_text("not read")  # the check comes before the data are read
    cache, words = _damage(kind, tmp_path)
    with FakeServer(_ok) as srv:
        url = f"http://127.0.0.1:{srv.port}/v1"
        argv = ["timeline", "locomo", "--data", str(data), "--passes", "2"]
        argv += ["--llm-base-url", url, "--llm-model", "m", "--llm-cache", str(cache)]
        rc, out, err = run_cli(argv, capsys)
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert "Traceback" not in err and out == ""
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert srv.requests == []


def test_a_damaged_cache_is_refused_when_the_client_is_made(tmp_path):
    """The library's own check (``ChatClient``): the message names the folder and the part."""
    from oas.real.llm._client import ChatClient

    (tmp_path / "journal").write_text("x")
    cfg = EndpointConfig(base_url="http://127.0.0.1:1/v1", model="m", cache_dir=tmp_path)
    with pytest.raises(InputError) as ei:
        ChatClient(cfg)
    msg = str(ei.value)
    assert "\n" not in msg and str(tmp_path / "journal") in msg and "got a file" in msg
    (tmp_path / "journal").unlink()
    (tmp_path / "journal").mkdir()
    (tmp_path / "ab").mkdir()
    ChatClient(cfg).close()  # a sound cache is taken as it is


@pytest.mark.parametrize("where", ["loop", "file"])
def test_a_followed_redirect_that_urllib_refuses_says_why(tmp_path, where):
    """Issue 48 item 5: with --llm-follow-redirects, a redirect loop or a redirect to ``file:``
    failed with a bare ``HTTP 302: ``; the message now names the redirect and urllib's reason."""
    # the loop: the endpoint's own address again, until urllib's loop check stops it
    target = {"loop": "/v1/chat/completions", "file": "file:///etc/passwd"}[where]
    with FakeServer(_redirect_to(target)) as srv, pytest.raises(InputError) as ei:
        _pool(srv.port, tmp_path, follow_redirects=True).send(BODY)
    msg = str(ei.value)
    assert "\n" not in msg and "HTTP 302 redirect from" in msg and "not followed: " in msg
    assert ("infinite loop" in msg) if where == "loop" else ("file" in msg)
