"""``retcon pair --realisations R`` (MODEL §11: three label realisations, averaged within question
before inference): R reruns of every LLM label with distinct cache keys, averaged per row; offline
backends refuse R > 1; R = 1 writes what a run without the option writes."""

from __future__ import annotations

import json
import re

import pytest

from oas.real import PairJob
from oas.real._run import average_realisations
from retcon.cli import main
from retcon.errors import InputError
from tests._data import LOCOMO_PATH, needs_locomo
from tests._fakes import FakeLLMServer

_QUESTION = re.compile(r"\n\nQuestion: (.*?)(?: \(asked on [^)]*\))?\n", re.S)


def _replier():
    """Realisation 0 (seed 0) answers "unknown"; realisation 1 (seed 1) answers the gold answer
    (looked up here from the question), which the lexical judge counts correct."""
    from oas.real import load_locomo

    gold = {
        q.text.strip(): str(q.answer)
        for c in load_locomo(LOCOMO_PATH).conversations
        for q in c.queries
    }

    def reply(body: dict) -> str:
        system = body["messages"][0]["content"]
        if system.startswith("You grade"):  # the LLM judge: yes to everything
            return "yes"
        if system.startswith("You write wrong answers"):  # the judge probe's decoy
            return "zebra crossing at dawn"
        m = _QUESTION.search(body["messages"][-1]["content"])
        assert m is not None
        return "unknown" if body.get("seed", 0) == 0 else gold[m.group(1).strip()]

    return reply


def _pair(tmp_path, srv, name: str, *extra: str) -> tuple[dict, list[dict]]:
    out = tmp_path / f"{name}.jsonl"
    args = ["pair", "locomo", "--data", str(LOCOMO_PATH), "--reader", "llm", "--first", "2"]
    args += ["--budgets", "64,256", "--output", str(out), "--no-progress", "--json", "-q"]
    args += ["--llm-base-url", srv.base_url, "--llm-model", "fake"]
    args += ["--llm-cache", str(tmp_path / f"cache-{name}"), *extra]
    assert main(args) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return json.loads(out.with_name(out.name + ".meta.json").read_text()), rows


@needs_locomo
def test_two_realisations_make_two_distinct_calls_per_label_and_average(tmp_path, capsys):
    with FakeLLMServer(reply=_replier()) as srv:
        _, one = _pair(tmp_path, srv, "one")
        n_one = len(srv.requests)
        _, two = _pair(tmp_path, srv, "two", "--realisations", "2")
        sent = srv.requests[n_one:]
    capsys.readouterr()
    # every label asked twice, once per seed, with the same messages: two cache keys
    by_seed = {s: [b["messages"] for b in sent if b.get("seed", 0) == s] for s in (0, 1)}
    assert len(sent) == 2 * n_one and len(by_seed[0]) == len(by_seed[1]) == n_one
    assert sorted(map(json.dumps, by_seed[0])) == sorted(map(json.dumps, by_seed[1]))
    assert len(list((tmp_path / "cache-two").rglob("*.json"))) == 2 * n_one
    assert [r["instance_id"] for r in two] == [r["instance_id"] for r in one]
    for r1, r2 in zip(one, two, strict=True):
        for a in ("ret", "merge", "abstract", "rewrite"):
            assert r2[f"meta_y_{a}_r0"] == r1[f"y_{a}"] == 0.0  # "unknown" is never right
            assert r2[f"y_{a}"] == pytest.approx((r2[f"meta_y_{a}_r0"] + r2[f"meta_y_{a}_r1"]) / 2)
            assert r2[f"meta_y_{a}_r1"] == 1.0  # the gold answer: right
            assert r2[f"y_{a}"] == 0.5
        assert r2["meta_realisations"] == 2 and "meta_realisations" not in r1


@needs_locomo
def test_one_realisation_writes_the_same_bytes(tmp_path, capsys):
    with FakeLLMServer(reply=_replier()) as srv:
        meta_a, _ = _pair(tmp_path, srv, "a")
        meta_b, _ = _pair(tmp_path, srv, "b", "--realisations", "1")
    capsys.readouterr()
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert meta_a["config"] == meta_b["config"]


def test_offline_backends_refuse_more_than_one_realisation(tmp_path, capsys):
    with pytest.raises(InputError, match="realisations=3: label realisations rerun the LLM"):
        PairJob("locomo", str(tmp_path / "p.jsonl"), realisations=3)
    args = ["pair", "locomo", "--output", str(tmp_path / "p.jsonl"), "--realisations", "2"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--realisations 2" in err and "offline and deterministic" in err
    assert len(err.strip().splitlines()) == 1


def test_average_realisations_refuses_mismatched_rows():
    a = [{"instance_id": "q@1", **{f"y_{x}": 1.0 for x in ("ret", "merge", "abstract", "rewrite")}}]
    b = [{**a[0], "instance_id": "q@2"}]
    with pytest.raises(InputError, match="rows differ"):
        average_realisations([a, b])


@needs_locomo
def test_the_judge_check_reads_the_first_realisations_verdicts(tmp_path, capsys):
    """With ``--llm-judge llm`` the agreement table needs 0/1 verdicts: it reads realisation 0's
    (``meta_y_<action>_r0``), not the averages."""
    with FakeLLMServer(reply=_replier()) as srv:
        meta, rows = _pair(tmp_path, srv, "j", "--llm-judge", "llm", "--realisations", "2")
    capsys.readouterr()
    agreement = meta["judge_check"]["agreement"]
    assert agreement["n"] == 4 * len(rows)
    # the judge says yes to all; realisation 0's lexical verdict on "unknown" is always no
    assert agreement["table"]["yes"]["no"] == agreement["n"]
    assert {r["y_ret"] for r in rows} <= {1.0}  # yes in both realisations
