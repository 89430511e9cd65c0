"""The checked LLM judge (``--llm-judge llm``, oas.real.llm._judge): the false-acceptance probe on
decoy answers, its Wilson interval, the LLM-vs-lexical agreement table, the flag above the
threshold, and a rerun that sends nothing new. The endpoint is the project's scriptable fake
(``tests._fakes.FakeLLMServer``); LoCoMo is the real file (docs/llm.md)."""

from __future__ import annotations

import json
import math
import re

import pytest

from oas.real import PairJob, run_pair_job
from oas.real._types import Conversation, Query
from oas.real.llm._backend import LLMReader
from oas.real.llm._client import resolve_endpoint
from oas.real.llm._judge import judge_agreement, judge_probe, other_gold_decoys, wilson_interval
from retcon.cli import main
from retcon.errors import InputError
from tests._data import LOCOMO_PATH, needs_locomo
from tests._fakes import FakeLLMServer

_JUDGE = re.compile(r"Correct answer: (.*)\nResponse: (.*)\n", re.S)


def _reply(judge: str):
    """A fake model: answers "unknown", writes the topical decoy "zebra crossing at dawn", and
    judges by ``judge``: "all" says yes to everything, "exact" yes only to the gold answer."""

    def reply(body: dict) -> str:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You grade"):
            if judge == "all":
                return "Yes."
            m = _JUDGE.search(user)
            assert m is not None, user
            return "yes" if m.group(1).strip() == m.group(2).strip() else "no"
        if system.startswith("You write wrong answers"):
            return "zebra crossing at dawn"
        return "unknown"

    return reply


def _job(srv, tmp_path, **kw) -> PairJob:
    return PairJob(
        dataset="locomo",
        data=str(LOCOMO_PATH),
        out=str(tmp_path / "pairs.jsonl"),
        reader="llm",
        llm_judge="llm",
        budgets=(64, 256),
        first=6,
        llm={"base_url": [srv.base_url], "model": "fake", "cache_dir": str(tmp_path / "cache")},
        **kw,
    )


# ------------------------------------------------------------------------------------------ units
def test_wilson_interval_known_values():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-4)
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    with pytest.raises(InputError, match="0 <= k <= n"):
        wilson_interval(3, 2)


def test_agreement_table_counts_and_kappa():
    llm = [1, 1, 0, 0, 1, 0]
    lex = [1, 0, 0, 0, 1, 1]
    a = judge_agreement(llm, lex)
    assert a.n == 6 and a.table == {"yes": {"yes": 2, "no": 1}, "no": {"yes": 1, "no": 2}}
    assert a.agreement == pytest.approx(4 / 6)
    assert a.kappa == pytest.approx((4 / 6 - 0.5) / 0.5)
    with pytest.raises(InputError, match="6 LLM verdicts but 5 lexical"):
        judge_agreement(llm, lex[:5])
    with pytest.raises(InputError, match="0 or 1"):
        judge_agreement([0.5], [1])


def _q(qid, conv, qtype, answer):
    return Query(qid, conv, f"question {qid}?", answer, qtype, ())


def test_other_gold_decoys_same_conversation_and_type_and_not_the_gold():
    c1, c2 = Conversation("c1", ()), Conversation("c2", ())
    qs = [
        (c1, _q("a", "c1", "single-hop", "Paris")),
        (c1, _q("b", "c1", "temporal", "7 May 2023")),
        (c1, _q("c", "c1", "single-hop", "in Paris")),  # the lexical rule matches "Paris"
        (c1, _q("d", "c1", "single-hop", "Rome")),
        (c2, _q("e", "c2", "temporal", "2022")),
    ]
    got = {q.query_id: d for q, d in other_gold_decoys(qs)}
    # a skips c ("in Paris" contains its gold); b and e have no peer of their type and conversation
    assert got == {"a": "Rome", "c": "Rome", "d": "Paris"}


def test_probe_refuses_a_lexical_judge(tmp_path):
    with FakeLLMServer(reply=_reply("all")) as srv:
        reader = LLMReader(
            resolve_endpoint(srv.base_url, "fake", cache_dir=tmp_path), judge="lexical"
        )
        with pytest.raises(InputError, match="judge='llm'"):
            judge_probe(reader, [])


def test_a_topical_decoy_that_matches_the_gold_is_left_out(tmp_path):
    c = Conversation("c1", ())
    pairs = [(c, _q("a", "c1", "single-hop", "zebra crossing"))]
    with FakeLLMServer(reply=_reply("all")) as srv:
        reader = LLMReader(resolve_endpoint(srv.base_url, "fake", cache_dir=tmp_path), judge="llm")
        probe = judge_probe(reader, pairs)
    assert probe.n_invalid == 1 and probe.n_decoys == 0 and not probe.flagged
    assert "INCONCLUSIVE" in probe.line()


# ------------------------------------------------------------------------------------ whole runs
@needs_locomo
def test_a_judge_that_accepts_everything_is_flagged(tmp_path, capsys):
    with FakeLLMServer(reply=_reply("all")) as srv:
        summary = run_pair_job(_job(srv, tmp_path), progress=False)
    jc = summary["judge_check"]
    probe = jc["probe"]
    assert probe["flagged"] is True and probe["rate"] == 1.0
    assert probe["n_accepted"] == probe["n_decoys"] > 0
    assert probe["by_kind"]["other-gold"]["n_decoys"] > 0
    assert probe["by_kind"]["topical"]["n_decoys"] == 6  # one per question
    assert 0.0 < probe["lower"] < 1.0 and probe["upper"] == 1.0
    assert "FLAGGED" in jc["line"]
    assert "FLAGGED" in capsys.readouterr().err
    # every answer was "unknown": the lexical judge says no to all, the LLM judge yes to all
    rows = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    assert jc["agreement"]["n"] == 4 * len(rows) == 4 * 12
    assert jc["agreement"]["table"] == {"yes": {"yes": 0, "no": 48}, "no": {"yes": 0, "no": 0}}
    assert all(r["meta_lexical_ret"] == 0.0 and r["y_ret"] == 1.0 for r in rows)
    # provenance: the sidecar has the probe
    meta = json.loads((tmp_path / "pairs.jsonl.meta.json").read_text())
    assert meta["judge_check"]["probe"]["flagged"] is True


@needs_locomo
def test_an_exact_judge_has_rate_zero_and_a_rerun_sends_nothing(tmp_path, capsys):
    with FakeLLMServer(reply=_reply("exact")) as srv:
        first = run_pair_job(_job(srv, tmp_path), progress=False)
        n_sent = len(srv.requests)
        again = run_pair_job(_job(srv, tmp_path), progress=False)
        assert len(srv.requests) == n_sent  # rows and probe come from the file and the cache
    probe = first["judge_check"]["probe"]
    assert probe["rate"] == 0.0 and probe["n_accepted"] == 0 and not probe["flagged"]
    assert probe["lower"] == 0.0 and 0.0 < probe["upper"] < 0.5
    assert probe["n_decoys"] == probe["by_kind"]["other-gold"]["n_decoys"] + 6
    assert again["n_written"] == 0 and again["judge_check"] == first["judge_check"]
    # the call counts include the probe's calls: all of the first run's, none of the rerun's
    assert first["llm_calls"]["reader"]["requests"] == n_sent
    assert again["llm_calls"]["reader"]["requests"] == 0
    assert "FLAGGED" not in capsys.readouterr().err
    table = first["judge_check"]["agreement"]["table"]
    assert table["no"]["no"] == first["judge_check"]["agreement"]["n"] == 48


@needs_locomo
def test_the_threshold_is_an_option_and_the_report_says_it(tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    args = ["pair", "locomo", "--data", str(LOCOMO_PATH), "--reader", "llm", "--llm-judge", "llm"]
    args += ["--budgets", "64", "--first", "3", "--output", str(out), "--no-progress"]
    with FakeLLMServer(reply=_reply("all")) as srv:
        args += ["--llm-base-url", srv.base_url, "--llm-model", "fake"]
        args += ["--llm-cache", str(tmp_path / "cache")]
        assert main([*args, "--judge-threshold", "1"]) == 0
    cap = capsys.readouterr()
    assert "judge check: false acceptance 100.0%" in cap.out and "ok: at most" in cap.out
    assert "FLAGGED" not in cap.err
    assert "judge agreement (LLM vs lexical" in cap.out


@needs_locomo
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--judge-threshold", "1.5"], "judge-threshold"),
        (["--reader", "lexical", "--judge-threshold", "0.2"], "needs --reader llm --llm-judge llm"),
    ],
)
def test_bad_threshold_is_a_clear_error(tmp_path, capsys, extra, message):
    args = ["pair", "locomo", "--data", str(LOCOMO_PATH), "--output", str(tmp_path / "p.jsonl")]
    if "--reader" not in extra:
        args += ["--reader", "llm", "--llm-judge", "llm", "--llm-model", "fake"]
        args += ["--llm-base-url", "http://127.0.0.1:9/v1"]
    assert main([*args, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
