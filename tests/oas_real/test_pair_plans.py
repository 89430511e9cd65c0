"""The LoCoMo pairing's reader-independent part built once and shared by the readers (issue 34).

``oas.real.prepare_query_rows`` packs, counts and computes the features of a query once;
``score_query_rows`` adds a reader's outcomes. The rows must be those ``query_rows`` gives with
a fresh conversation context per reader (the code path before the split), and the workspace's
three offline readers must share one plan per question.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import paper_checks as pc
from oas.real import (
    ConversationContext,
    PairConfig,
    load_locomo,
    make_embedder,
    make_operators,
    make_reader,
    make_tokenizer,
    prepare_query_rows,
    query_rows,
    score_query_rows,
)
from paper_checks.claims import _sources
from retcon.errors import InputError
from retcon.vocab import OFFLINE_READERS
from tests._data import LOCOMO_PATH, needs_locomo


def _queries(conv, n):
    return list(conv.queries)[:n]


@needs_locomo
@pytest.mark.parametrize("design", ["ours", "paper"])
def test_one_plan_scored_by_each_reader_gives_query_rows(design):
    conv = load_locomo(LOCOMO_PATH).conversations[1]
    if design == "paper":
        cfg = PairConfig(budgets=(64, 512, 4096), design="paper", packing="skip")
        tok = make_tokenizer("alnum")
    else:
        cfg = PairConfig(budgets=(32, 181, 1024, 8192))
        tok = make_tokenizer("regex")
    ops = make_operators("dataset")
    shared = ConversationContext(conv, cfg.granularity, make_embedder())
    queries = _queries(conv, 4)
    plans = [
        prepare_query_rows(q, shared, operators=ops, config=cfg, tokenizer=tok) for q in queries
    ]
    for name in OFFLINE_READERS:
        reader = make_reader(name)
        fresh = ConversationContext(conv, cfg.granularity, make_embedder())
        for q, plan in zip(queries, plans):
            want = query_rows(q, fresh, operators=ops, reader=reader, config=cfg, tokenizer=tok)
            got = score_query_rows(plan, q, reader)
            assert got == want
            assert [list(r) for r in got] == [list(r) for r in want]  # column order too
            # a decoy answer reuses the plan: the plan does not read the answer
            decoy = dataclasses.replace(q, answer="zebra crossing at dawn")
            assert score_query_rows(plan, decoy, reader) == query_rows(
                decoy, fresh, operators=ops, reader=reader, config=cfg, tokenizer=tok
            )


@needs_locomo
def test_the_plan_honours_skip_ids_and_is_not_changed_by_scoring():
    conv = load_locomo(LOCOMO_PATH).conversations[0]
    q = conv.queries[0]
    cfg = PairConfig(budgets=(64, 256, 1024))
    ctx = ConversationContext(conv, cfg.granularity, make_embedder())
    ops, tok = make_operators("dataset"), make_tokenizer("regex")
    plan = prepare_query_rows(
        q, ctx, operators=ops, config=cfg, tokenizer=tok, skip_ids={f"{q.query_id}@256"}
    )
    assert [h["budget"] for h in plan.heads] == [64, 1024]
    rows = score_query_rows(plan, q, make_reader("lexical"))
    rows[0]["y_ret"] = -1.0
    assert "y_ret" not in plan.heads[0] and "y_ret" not in plan.tails[0]
    done = {f"{q.query_id}@{b}" for b in cfg.budgets}
    empty = prepare_query_rows(q, ctx, operators=ops, config=cfg, tokenizer=tok, skip_ids=done)
    assert empty.heads == () and score_query_rows(empty, q, make_reader("lexical")) == []


@needs_locomo
def test_a_plan_scored_for_another_query_is_an_input_error():
    conv = load_locomo(LOCOMO_PATH).conversations[0]
    q, other = conv.queries[0], conv.queries[1]
    cfg = PairConfig(budgets=(64,))
    ctx = ConversationContext(conv, cfg.granularity, make_embedder())
    plan = prepare_query_rows(
        q, ctx, operators=make_operators("dataset"), config=cfg, tokenizer=make_tokenizer("regex")
    )
    with pytest.raises(InputError, match=f"plan is of query {q.query_id!r}"):
        score_query_rows(plan, other, make_reader("lexical"))


def _assert_same(a, b, where):
    """Two values of a ``PairedData`` field equal in value and dtype (arrays, mappings, scalars)."""
    if isinstance(a, dict) or isinstance(b, dict):
        assert isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            _assert_same(a[k], b[k], (*where, k))
    elif a is None or b is None or isinstance(a, str):
        assert a == b, where
    else:
        x, y = np.asarray(a), np.asarray(b)
        assert x.dtype == y.dtype and x.shape == y.shape, where
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), where


@needs_locomo
@pytest.mark.slow
def test_workspace_readers_share_one_plan_per_question(monkeypatch):
    calls = []
    real = _sources.prepare_query_rows

    def counting(q, *a, **kw):
        calls.append(q.query_id)
        return real(q, *a, **kw)

    monkeypatch.setattr(_sources, "prepare_query_rows", counting)
    cfg = pc.CheckConfig(data=str(LOCOMO_PATH), locomo_limit=20, budgets=(64, 512, 2048))
    ws = pc.Workspace(cfg, seed=0)
    shared = {r: ws.locomo_paired(r) for r in cfg.readers}
    assert len(calls) == len(set(calls)) == 20  # 2 per conversation, once for all readers
    assert ws._locomo_plans == {}  # every reader has its data: the plans are dropped

    # the same data as each reader paired on its own (no plan shared), the chance rate included
    for r in cfg.readers:
        alone = _sources._locomo_paired(cfg, r, chance=r == cfg.readers[0])
        for field, a in shared[r]._asdict().items():
            _assert_same(a, getattr(alone, field), (r, field))
    assert pc.stage_timings(ws)[0][0] == f"locomo:{cfg.readers[0]}"
