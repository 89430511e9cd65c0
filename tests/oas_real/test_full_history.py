"""The paper's full-history design (``--design paper --protocol end-to-end``; MODEL §11 "Full-history
stress test", §2 packing and token count): the BM25 candidate list against a reference written
here, rank-order ``skip`` packing of retention, and the rows on a slice of real LoCoMo and on the
generated LongMemEval fixture."""

import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from oas.real import (
    ConversationContext,
    PairConfig,
    load_locomo,
    make_embedder,
    make_operators,
    prepare_query_rows,
)
from oas.real._full_history import full_history_candidates
from oas.real._instances import render
from oas.real._run import PairJob
from oas.real._text import AlnumTokenizer, match_terms
from oas.real._types import Conversation, Query, Record, Session
from retcon.errors import InputError
from tests._cli import run_cli
from tests._data import LOCOMO_PATH, needs_locomo

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def _alnum(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9]+", text))  # MODEL §2: the paper's token count


def _reference(question: str, turns: list[Record]) -> list[str]:
    """BM25 (k1 1.2, b 0.75, Lucene idf) over every rendered turn, top 20 by score (ties in
    chronological order), then kept in rank order while the summed count stays <= 2048."""
    docs = [match_terms(render(t)) for t in turns]
    n, avgdl = len(docs), sum(map(len, docs)) / len(docs)
    df = Counter(w for d in docs for w in set(d))
    score = []
    for d in docs:
        tf, s = Counter(d), 0.0
        for w in dict.fromkeys(match_terms(question)):
            if tf[w]:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf[w] * 2.2 / (tf[w] + 1.2 * (0.25 + 0.75 * len(d) / avgdl))
        score.append(s)
    ranked = sorted(range(n), key=lambda i: (-score[i], i))[:20]
    kept, used = [], 0
    for i in ranked:
        c = _alnum(render(turns[i]))
        if used + c <= 2048:
            kept.append(turns[i].record_id)
            used += c
    return kept


def test_candidates_cap_skips_a_turn_that_does_not_fit_and_goes_on():
    """A long turn ranked first but over the 2,048-token cap is passed over; the ones after it
    that fit are kept, in rank order (MODEL §11, our reading of "greedily capped")."""
    long_text = "apple " * 2100
    recs = (
        Record("t0", "s0", "", "pear plum"),
        Record("t1", "s0", "", "apple " + long_text),
        Record("t2", "s0", "", "apple banana"),
        Record("t3", "s0", "", "apple"),
    )
    conv = Conversation("c", (Session("s0", "", recs),))
    q = Query("q", "c", "apple?", "x", "single-hop", ("t2",))
    got = [r.record_id for r in full_history_candidates(q, conv)]
    assert got == _reference(q.text, list(recs))
    assert sorted(got) == ["t0", "t2", "t3"] and got[-1] == "t0"  # t0 shares no term: last


def _paper_e2e(budgets=(16, 32, 64, 128)):
    return PairConfig(
        budgets,
        granularity="turn",
        packing="skip",
        protocol="end-to-end",
        design="paper",
    )


@needs_locomo
def test_full_history_rows_on_real_locomo_match_the_reference():
    """Two questions of each of two LoCoMo conversations: the rows' candidate list is the
    reference's (rank order, top 20, 2,048 cap) and retention's context is that list packed in
    rank order with ``skip`` (MODEL §2, §11)."""
    convs = load_locomo(LOCOMO_PATH).conversations[:2]
    tok, ops, cfg = AlnumTokenizer(), make_operators("dataset"), _paper_e2e()
    assert cfg.full_history
    n = 0
    for conv in convs:
        ctx = ConversationContext(conv, "turn", make_embedder())
        turns = [r for s in conv.sessions for r in s.records]
        by_id = {r.record_id: r for r in turns}
        for q in conv.queries[:2]:
            plan = prepare_query_rows(q, ctx, operators=ops, config=cfg, tokenizer=tok)
            ref = _reference(q.text, turns)
            assert 1 <= len(ref) <= 20
            for head, packed, tail in zip(plan.heads, plan.contexts, plan.tails):
                assert tail["meta_retrieved_ids"].split(",") == ref
                assert tail["meta_candidates"] == "full-history"
                assert tail["cluster_tokens"] == sum(_alnum(render(by_id[i])) for i in ref) <= 2048
                # skip packing in rank order, written out here
                parts, used = [], 0
                for i in ref:
                    c = _alnum(render(by_id[i]))
                    if used + c <= head["budget"]:
                        parts.append(render(by_id[i]))
                        used += c
                assert packed["ret"] == "\n\n".join(parts)
                for op in ("merge", "abstract", "rewrite"):  # capped at the budget
                    assert _alnum(packed[op]) <= head["budget"]
                n += 1
    assert n == 16


def test_pair_job_full_history_sets_the_papers_retriever_and_refuses_others(tmp_path):
    out = str(tmp_path / "p.jsonl")
    job = PairJob("locomo", out, design="paper", pair_protocol="end-to-end")
    assert (job.retriever, job.top_k, job.packing) == ("bm25", 20, "skip")
    assert job.protocol()["candidates"] == "full-history"
    oracle = PairJob("locomo", out, design="paper")
    assert "candidates" not in oracle.protocol() and oracle.top_k is None
    with pytest.raises(InputError, match="full-history.*top_k=20; got top_k=5"):
        PairJob("locomo", out, design="paper", pair_protocol="end-to-end", top_k=5)
    with pytest.raises(InputError, match="retriever='bm25'; got retriever='embedding'"):
        PairJob("locomo", out, design="paper", pair_protocol="end-to-end", retriever="embedding")


def test_pair_longmemeval_fixture_through_the_full_history_design(tmp_path, capsys):
    """The generated LongMemEval fixture through the full-history design: the paper's budgets,
    every row tagged, candidates from the haystack's turns within the cap (MODEL §11)."""
    out = tmp_path / "lme.jsonl"
    rc, stdout, err = run_cli(
        [
        "pair", "longmemeval", "--design", "paper", "--protocol", "end-to-end",
        "--type-source", "gold", "--operators", "extractive", "--limit", "8",
        "--data", str(FIX / "longmemeval_paper.json"), "--output", str(out), "--json", "--no-progress",
        ],
        capsys,
    )  # fmt: skip
    assert rc == 0, err
    summary = json.loads(stdout)
    assert summary["budgets"] == [32.0, 64.0, 128.0, 256.0]
    assert summary["protocol"]["candidates"] == "full-history"
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 32 and {r["meta_candidates"] for r in rows} == {"full-history"}
    assert all(1 <= len(r["meta_retrieved_ids"].split(",")) <= 20 for r in rows)
    assert all(r["cluster_tokens"] <= 2048 for r in rows)
