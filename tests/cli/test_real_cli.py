"""`retcon data fetch|path` and `retcon pair locomo|longmemeval`: cache, checksums, resume, atomicity."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from oas.real import fetch
from oas.real._fetch import DATASETS
from retcon.cli import main
from retcon.errors import InputError
from tests._cli import error_lines, run_cli
from tests._data import needs_locomo
from tests._fakes import FakeServer, ScriptedChat, echo_first_line, send

FIX = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def payload(tmp_path):
    src = tmp_path / "src" / "locomo10.json"
    src.parent.mkdir()
    src.write_bytes(b'[{"tiny": true}]\n')
    return src, hashlib.sha256(src.read_bytes()).hexdigest()


def test_fetch_file_url_checks_sha_and_caches(tmp_path, monkeypatch, payload):
    src, sha = payload
    cache = tmp_path / "cache"
    monkeypatch.setenv("RETCON_DATA_DIR", str(cache))
    got = fetch("locomo", url=src.as_uri(), sha256=sha)
    assert got.downloaded and got.path == cache / "locomo10.json"
    assert got.path.read_bytes() == src.read_bytes()
    again = fetch("locomo", url=src.as_uri(), sha256=sha)
    assert not again.downloaded
    assert sorted(p.name for p in cache.iterdir()) == ["locomo10.json"]


def test_fetch_wrong_checksum_leaves_nothing(tmp_path, monkeypatch, payload):
    src, _ = payload
    cache = tmp_path / "cache"
    monkeypatch.setenv("RETCON_DATA_DIR", str(cache))
    with pytest.raises(InputError, match="does not match the pinned"):
        fetch("locomo", url=src.as_uri(), sha256="0" * 64)
    assert list(cache.iterdir()) == []
    with pytest.raises(InputError, match="failed"):
        fetch("locomo", url=(tmp_path / "absent.json").as_uri(), sha256="0" * 64)
    assert list(cache.iterdir()) == []


def test_fetch_over_local_http_and_cli(tmp_path, monkeypatch, payload, capsys):
    src, sha = payload

    def reply(h):  # the file at its name, else 404
        if h.path == "/locomo10.json":
            send(h, src.read_bytes(), Content_Type="application/octet-stream")
        else:
            send(h, b"", status=404)

    with FakeServer(reply) as server:
        url = f"http://127.0.0.1:{server.port}/locomo10.json"
        monkeypatch.setenv("RETCON_DATA_DIR", str(tmp_path / "cache"))
        assert main(["data", "fetch", "locomo", "--url", url, "--sha256", sha, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["downloaded"] and Path(out["path"]).read_bytes() == src.read_bytes()
        assert main(["data", "fetch", "locomo", "--url", url, "--sha256", sha]) == 0
        assert "already in the cache" in capsys.readouterr().out
        # a checksum the server's file does not have: exit 2, one line, no stray temporary file
        assert main(["data", "fetch", "locomo", "--url", url, "--sha256", "f" * 64]) == 2
        assert "does not match" in capsys.readouterr().err
        assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["locomo10.json"]


@needs_locomo
def test_data_path_reports_the_shared_copy(capsys):
    assert main(["data", "path", "locomo", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["sha256_ok"] and info["path"].endswith("locomo10.json")
    assert DATASETS["locomo"]["sha256"].startswith("79fa87e9")


def _rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


@needs_locomo
def test_pair_locomo_resumes_and_is_readable_by_oas(tmp_path, capsys):
    from oas import read_paired

    out = tmp_path / "paired.jsonl"
    args = [
        "pair",
        "locomo",
        "--output",
        str(out),
        "--budgets",
        "32,256,2048",
        "--no-progress",
        "--json",
    ]
    assert main(args + ["--first", "6"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["n_rows"] == 18 and first["n_written"] == 18 and first["load"]["n_excluded"] == 446
    assert not Path(f"{out}.partial").exists()
    # a crash mid-run leaves a partial file whose last line is cut: simulate it, then resume
    text = out.read_text()
    Path(f"{out}.partial").write_text(text + text.splitlines()[0][:25])
    out.unlink()
    assert main(args + ["--first", "8"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["n_resumed"] == 18 and second["n_written"] == 6 and second["n_rows"] == 24
    rows = _rows(out)
    assert [r["instance_id"] for r in rows[:18]] == [
        r["instance_id"] for r in _rows_from_text(text)
    ]
    assert main(args + ["--first", "8"]) == 0  # finished file: nothing to do
    assert json.loads(capsys.readouterr().out)["n_written"] == 0
    data = read_paired(out)
    assert data.n == 24 and data.vocabulary == "locomo" and set(data.group_id) == {"conv-26"}
    # changing the protocol on the same file is refused
    assert main(args + ["--first", "8", "--reader", "sentence"]) == 2
    assert "was written with reader='lexical'" in capsys.readouterr().err


@needs_locomo
def test_pair_locomo_limit_spreads_over_conversations(tmp_path, capsys):
    """Issue 36 item 4: ``--limit N`` takes the first ceil(N / G) questions of each of the G
    conversations (as paper-checks --limit); ``--first N`` the first N of the file. A file
    written by one selection is resumed by a selection that holds it, refused by one that does
    not; ``--no-structure`` leaves evidence_structure out, and identify refuses such a file."""
    out = tmp_path / "paired.jsonl"
    args = ["pair", "locomo", "--output", str(out), "--budgets", "32,2048", "-q", "--json"]
    assert main([*args, "--limit", "15"]) == 0
    rep = json.loads(capsys.readouterr().out)
    rows = _rows(out)
    per_group: dict[str, set] = {}
    for r in rows:
        per_group.setdefault(r["group_id"], set()).add(r["query_id"])
    assert rep["n_groups"] == len(per_group) == 10 and rep["n_queries"] == 20
    assert {len(q) for q in per_group.values()} == {2}
    assert "evidence_structure" in rows[0]
    # a selection that holds the file's questions resumes it: 3 per conversation
    assert main([*args, "--limit", "25"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["n_resumed"] == 40 and rep["n_written"] == 20 and rep["n_queries"] == 30
    # --first 3 does not select the other conversations' rows: refused, in one line
    assert main([*args, "--first", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not select" in err and "--first" in err
    assert main([*args, "--first", "3", "--limit", "3"]) == 2
    assert "give one of them" in capsys.readouterr().err
    lean = tmp_path / "lean.jsonl"
    argv = ["pair", "locomo", "--output", str(lean), "--budgets", "32,2048", "-q", "--json"]
    assert main([*argv, "--first", "3", "--no-structure"]) == 0
    capsys.readouterr()
    lean_rows = _rows(lean)
    assert len(lean_rows) == 6 and all("evidence_structure" not in r for r in lean_rows)
    assert [r["instance_id"] for r in lean_rows[:4]] == [r["instance_id"] for r in rows[:4]]
    assert main(["identify", "--data", str(lean)]) == 2
    (err,) = error_lines(capsys.readouterr().err)
    assert "evidence_structure" in err and str(lean) in err


def _rows_from_text(text):
    return [json.loads(line) for line in text.splitlines()]


def test_pair_longmemeval_fixture_extractive_and_sentence(tmp_path, capsys):
    out = tmp_path / "lme.csv"
    assert (
        main(
            [
                "pair",
                "longmemeval",
                "--data",
                str(FIX / "longmemeval_tiny.json"),
                "--output",
                str(out),
                "--reader",
                "sentence",
                "--order",
                "bm25",
                "--granularity",
                "turn",
                "--budgets",
                "16 4096",
                "--no-progress",
                "--json",
            ]
        )
        == 0
    )
    s = json.loads(capsys.readouterr().out)
    assert s["n_rows"] == 6 and s["load"]["n_excluded"] == 1 and s["n_groups"] == 3
    from oas import read_paired

    assert read_paired(out).vocabulary == "longmemeval"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["pair", "longmemeval", "--output", "x.jsonl"], "needs --data PATH"),
        (
            [
                "pair",
                "longmemeval",
                "--data",
                str(FIX / "longmemeval_tiny.json"),
                "--operators",
                "dataset",
                "--output",
                "x.jsonl",
            ],
            "LongMemEval has none",
        ),
        (
            ["pair", "locomo", "--data", str(FIX / "locomo_malformed.json"), "--output", "x.jsonl"],
            r"conversation 0 \(bad-1\) qa 1: missing field 'answer'",
        ),
        (
            [
                "pair",
                "locomo",
                "--data",
                str(FIX / "locomo_tiny.json"),
                "--strict",
                "--output",
                "x.jsonl",
            ],
            r"qa 3: field 'evidence'",
        ),
        (
            ["pair", "locomo", "--budgets", "32,abc", "--output", "x.jsonl"],
            "--budgets: expected budgets in tokens \\(integers\\) .*; got 'abc'",
        ),
        (["pair", "locomo", "--output", "x.parquet"], "--output must end in .jsonl or .csv"),
    ],
)
def test_pair_bad_input_exits_2_with_one_line(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    status, _, err = run_cli(argv, capsys)  # argparse refuses some at parse time (SystemExit)
    assert status == 2
    err = "\n".join(error_lines(err))  # after the line saying what pair will do (issue 36)
    assert len(err.splitlines()) == 1
    import re

    assert re.search(message, err), err
    assert not (tmp_path / "x.jsonl").exists()


def test_pair_locomo_absent_from_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RETCON_DATA_DIR", str(tmp_path))
    assert main(["pair", "locomo", "--output", str(tmp_path / "p.jsonl")]) == 2
    assert "retcon data fetch locomo" in capsys.readouterr().err


@needs_locomo
def test_pair_llm_backend_wiring_and_cache_hits_on_rerun(tmp_path, capsys, monkeypatch):
    """The CLI hands --llm-* options to oas.real.llm._backend; a rerun into a new file costs no request."""
    with ScriptedChat(echo_first_line) as server:  # echoes the last message's first line
        monkeypatch.setenv("RETCON_LLM_MODEL", "stub-model")
        base = [
            "pair",
            "locomo",
            "--operators",
            "llm",
            "--reader",
            "llm",
            "--first",
            "2",
            "--budgets",
            "64,2048",
            "--llm-base-url",
            server.base_url,
            "--llm-cache",
            str(tmp_path / "cache"),
            "--no-progress",
            "--json",
        ]
        assert main(base + ["--output", str(tmp_path / "a.jsonl")]) == 0
        first = json.loads(capsys.readouterr().out)
        assert first["n_rows"] == 4 and first["llm_calls"]["operators"]["requests"] > 0
        sent = len(server.posts)
        assert main(base + ["--output", str(tmp_path / "b.jsonl")]) == 0
        second = json.loads(capsys.readouterr().out)
        assert len(server.posts) == sent
        assert (
            second["llm_calls"]["operators"]["requests"] == 0
            and second["llm_calls"]["reader"]["requests"] == 0
        )
        assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()


def _choices(argv_prefix, option):
    """The ``choices`` that ``retcon <argv_prefix> --help`` offers for ``option``."""
    import argparse

    from retcon.cli import build_parser

    parser = build_parser()
    for word in argv_prefix:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return list(next(a for a in parser._actions if option in a.option_strings).choices)


@pytest.mark.parametrize("dataset", ["locomo", "longmemeval"])
def test_every_offered_reader_is_accepted(dataset):
    """The --reader choices in --help are the one vocabulary, and PairJob accepts each of them
    (the `--reader topk` offered-then-refused bug of issue 22)."""
    from oas.real._run import PairJob
    from retcon.vocab import LLM_JUDGES, READERS

    offered = _choices(["pair", dataset], "--reader")
    assert offered == list(READERS)
    assert _choices(["pair", dataset], "--llm-judge") == list(LLM_JUDGES)
    ops = "dataset" if dataset == "locomo" else "extractive"
    for reader in offered:
        assert PairJob(dataset, "x.jsonl", operators=ops, reader=reader).reader == reader


def test_pair_topk_reader_runs(tmp_path, capsys):
    """`retcon pair locomo --reader topk` runs end to end and records its reader."""
    out = tmp_path / "topk.jsonl"
    argv = ["pair", "locomo", "--data", str(FIX / "locomo_tiny.json"), "--output", str(out)]
    argv += ["--reader", "topk", "--budgets", "32", "--first", "1", "--no-progress", "--json"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["protocol"]["reader"] == "topk" and summary["n_rows"] == 1
