"""The cache's group-committed durability (``oas.real.llm._cache.CacheJournal``, issue 34): one
``fsync`` per group of answers, an answer durable before the caller can write its row, and a
killed run's journal replayed so the rerun resumes instead of asking again. Nothing is timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from oas.real import ChatClient, resolve_endpoint
from oas.real.llm._cache import (
    JOURNAL_DIR,
    CacheJournal,
    cache_key,
    read_entry,
    recover_journals,
    write_entry,
)
from tests._fakes import FakeLLMServer, default_reply

REPO = Path(__file__).resolve().parents[2]
PARAMS = {"temperature": 0.0}


def _msgs(i):
    return [{"role": "user", "content": f"question {i}"}]


def _entry(i):
    return {"model": "m", "messages": _msgs(i), "params": PARAMS, "response": f"answer {i}"}


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*.json") if JOURNAL_DIR not in p.parts)


def test_put_then_close_leaves_the_entry_files_of_write_entry(tmp_path):
    j = CacheJournal(tmp_path / "a")
    keys = [cache_key("m", _msgs(i), PARAMS) for i in range(3)]
    for i, k in enumerate(keys):
        j.put(k, _entry(i))
    assert j.path is not None and j.path.exists()
    j.close()
    assert not (tmp_path / "a" / JOURNAL_DIR).exists() or not any(
        (tmp_path / "a" / JOURNAL_DIR).iterdir()
    )
    for i, k in enumerate(keys):  # the same bytes as the per-answer writer
        write_entry(tmp_path / "b", k, _entry(i))
        rel = Path(k[:2]) / f"{k}.json"
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
        assert read_entry(tmp_path / "a", k) == f"answer {i}"
    with pytest.raises(RuntimeError):
        j.put(keys[0], _entry(0))


def test_one_fsync_serves_the_answers_that_arrive_during_it(tmp_path, monkeypatch):
    """While the first fsync runs, two more answers arrive; one more fsync covers both."""
    j = CacheJournal(tmp_path)
    j.put(cache_key("m", _msgs(99), PARAMS), _entry(99))  # journal open, its folder synced
    real = os.fsync
    journal_fd = j._fd
    entered, release = threading.Event(), threading.Event()
    calls = []

    def fsync(fd):
        if fd == journal_fd:
            calls.append(fd)
            if len(calls) == 1:
                entered.set()
                assert release.wait(10)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    done = []
    first = threading.Thread(target=lambda: done.append(j.put("k0" * 32, _entry(0))))
    first.start()
    assert entered.wait(10)  # the first group's fsync is running
    others = [
        threading.Thread(target=lambda i=i: done.append(j.put(f"k{i}" * 32, _entry(i))))
        for i in (1, 2)
    ]
    for t in others:
        t.start()
    # both lines are appended before the first sync ends (they wait on it, not on the disk)
    for _ in range(10_000):
        if j._written == 4:
            break
        threading.Event().wait(0.001)
    assert j._written == 4
    assert len(done) == 0
    release.set()
    for t in [first, *others]:
        t.join(10)
    assert len(done) == 3
    assert len(calls) == 2  # 3 answers, 2 syncs: the second covered answers 1 and 2
    j.close()


def test_failed_sync_returns_no_answer(tmp_path, monkeypatch):
    """An injected failure after the write and before the sync: ``complete`` raises, so the
    caller has no text to write a row with, and the rerun asks again and caches it."""
    with FakeLLMServer() as srv:
        cfg = resolve_endpoint([srv.base_url], "fake", "", tmp_path / "c", concurrency=1)
        client = ChatClient(cfg)
        real = os.fsync

        def broken(fd):
            raise OSError(5, "injected I/O error")

        monkeypatch.setattr(os, "fsync", broken)
        with pytest.raises(OSError, match="injected"):
            client.complete(_msgs(0), **PARAMS)
        monkeypatch.setattr(os, "fsync", real)
        assert client.complete(_msgs(0), **PARAMS) == default_reply({"messages": _msgs(0)})
        assert len(srv.requests) == 2
        client.close()
        assert read_entry(tmp_path / "c", cache_key("fake", _msgs(0), PARAMS)) is not None


_CHILD = textwrap.dedent(
    """
    import json, os, sys
    from oas.real import ChatClient, resolve_endpoint
    url, cache, rows, stop = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    client = ChatClient(resolve_endpoint([url], "fake", "", cache, concurrency=1))
    with open(rows, "a", encoding="utf-8") as out:
        for i in range(20):
            msgs = [{"role": "user", "content": f"question {i}"}]
            text = client.complete(msgs, temperature=0.0)
            out.write(json.dumps({"i": i, "text": text}) + "\\n")
            out.flush()
            os.fsync(out.fileno())
            if i + 1 == stop:
                os._exit(9)  # killed: no close, no finaliser, no atexit
    client.close()
    """
)


def _child(url, cache, rows, stop):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", _CHILD, url, str(cache), str(rows), str(stop)],
        cwd=REPO,
        env=env,
        timeout=120,
        check=False,
    ).returncode


def test_killed_run_every_row_has_its_answer_and_rerun_resumes(tmp_path):
    cache, rows = tmp_path / "cache", tmp_path / "rows.jsonl"
    with FakeLLMServer() as srv:
        assert _child(srv.base_url, cache, rows, 12) == 9
        assert len(srv.requests) == 12
        written = [json.loads(x) for x in rows.read_text().splitlines()]
        assert [r["i"] for r in written] == list(range(12))
        journals = list((cache / JOURNAL_DIR).glob("*.jsonl"))
        assert len(journals) == 1  # the killed writer's, not removed
        # The worst a power cut can do to what was not synced: the entry files are gone.
        for p in _entries(cache):
            p.unlink()
        # every written row's answer is in the durable journal ...
        lines = [json.loads(x) for x in journals[0].read_text().splitlines()]
        by_key = {r["key"]: r["response"] for r in lines}
        for r in written:
            assert by_key[cache_key("fake", _msgs(r["i"]), PARAMS)] == r["text"]
        # ... and the rerun replays it, then asks only for the 8 answers never given
        srv.requests.clear()
        rows.unlink()
        assert _child(srv.base_url, cache, rows, 0) == 0
        assert len(srv.requests) == 8
        asked = {b["messages"][0]["content"] for b in srv.requests}
        assert asked == {f"question {i}" for i in range(12, 20)}
        again = [json.loads(x) for x in rows.read_text().splitlines()]
        assert again[:12] == written
    assert not list((cache / JOURNAL_DIR).glob("*.jsonl"))  # replayed, then the run closed
    assert len(_entries(cache)) == 20


def test_recovery_skips_a_torn_line_and_a_live_writer(tmp_path):
    live = CacheJournal(tmp_path)
    live.put(cache_key("m", _msgs(1), PARAMS), _entry(1))
    assert recover_journals(tmp_path) == 0  # locked by its live writer: left alone
    assert live.path is not None and live.path.exists()
    dead = tmp_path / JOURNAL_DIR / "1-dead.jsonl"
    k2 = cache_key("m", _msgs(2), PARAMS)
    good = json.dumps({"key": k2, "format": 1, **_entry(2)})
    dead.write_text(good + "\n" + good[: len(good) // 2])  # the last write cut short
    assert recover_journals(tmp_path) == 1
    assert read_entry(tmp_path, k2) == "answer 2"
    assert not dead.exists() and live.path.exists()
    live.close()
