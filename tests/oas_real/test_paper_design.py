"""``--design paper`` (MODEL §2, §8, §11): the alphanumeric count, cheapest-first packing, the
record cap, the sample, and features 3 and 6 against references written here from MODEL §8."""

import json
import re

import numpy as np
import pytest

from oas import real
from oas._features import compute_features
from oas.real._paper_design import cap_records, cheapest_first
from oas.real._run import PairJob
from oas.real._text import AlnumTokenizer
from retcon.errors import InputError
from tests._cli import run_cli
from tests._data import LOCOMO_PATH, needs_locomo


def test_alnum_count_and_truncate():
    tok = AlnumTokenizer()
    assert tok.count("I'm 5! [8 May, 2023] don't-stop") == 9  # I m 5 8 May 2023 don t stop
    assert tok.count("...  !") == 0
    assert tok.truncate("Hello, big world!", 2) == "Hello, big"
    assert tok.truncate("Hello, big world!", 9) == "Hello, big world!"
    assert tok.truncate("Hello", 0) == ""
    for n in range(6):
        assert tok.count(tok.truncate("a b,c; d e f", n)) == min(n, 6)


def test_cheapest_first_sorts_by_length_ties_in_given_order():
    texts, lengths, recs = cheapest_first(["a", "b", "c", "d"], [5, 2, 5, 2], [0, 1, 2, 3])
    assert lengths == [2, 2, 5, 5] and recs == [1, 3, 0, 2] and texts == ["b", "d", "a", "c"]


def test_cap_records_keeps_the_first_budget_tokens():
    tok = AlnumTokenizer()
    texts, lengths = cap_records(["one two three four", "five"], 3, tok)
    assert texts == ["one two three", "five"] and lengths == [3, 1]


def test_pair_job_design_paper_sets_the_papers_options_and_refuses_others(tmp_path):
    job = PairJob(dataset="locomo", out=str(tmp_path / "p.jsonl"), design="paper")
    assert (job.granularity, job.packing, job.tokenizer) == ("turn", "skip", "alnum")
    assert job.budgets == (16, 32, 64, 128) and job.protocol()["design"] == "paper"
    ours = PairJob(dataset="locomo", out=str(tmp_path / "p.jsonl"))
    assert "design" not in ours.protocol()  # earlier runs' digests are unchanged
    with pytest.raises(
        InputError, match=r"design: 'paper' sets packing='skip'; got packing='prefix'"
    ):
        PairJob(dataset="locomo", out=str(tmp_path / "p.jsonl"), design="paper", packing="prefix")
    with pytest.raises(InputError, match="PairJob.design must be one of"):
        PairJob(dataset="locomo", out=str(tmp_path / "p.jsonl"), design="theirs")


def _unit(v):
    v = np.asarray(v, float)
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def reference_fit_share(budget, lengths):
    """MODEL §8 feature 3, by hand: walk the records shortest first (ties in the given order),
    take each whole record that still fits, count the records taken."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    used = taken = 0
    for i in order:
        if used + lengths[i] <= budget:
            used += lengths[i]
            taken += 1
    return taken / len(lengths)


def reference_spread(embeddings):
    """MODEL §8 feature 6, by hand: mean over records of the squared distance to the mean."""
    us = [_unit(e) for e in embeddings]
    mean = [sum(u[d] for u in us) / len(us) for d in range(len(us[0]))]
    return sum(sum((u[d] - mean[d]) ** 2 for d in range(len(mean))) for u in us) / len(us)


def test_paper_features_on_a_small_cluster():
    lengths, emb = [7, 3, 5, 3], np.array([[1.0, 0], [0, 2.0], [1, 1], [3.0, 0]])
    for budget in (2, 3, 6, 8, 11, 18):
        f = compute_features(budget, lengths, ["s1"] * 4, emb, 0, definitions="paper")
        assert f[2] == pytest.approx(reference_fit_share(budget, lengths))
        assert f[5] == pytest.approx(reference_spread(emb))
    ours = compute_features(8, lengths, ["s1"] * 4, emb, 0, definitions="ours")
    assert ours[2] != pytest.approx(reference_fit_share(8, lengths))  # tokens, prefix: 7/18
    # the paper's definitions are the default (MODEL §8): no argument gives the paper's features
    default = compute_features(8, lengths, ["s1"] * 4, emb, 0)
    assert (
        default.tolist()
        == compute_features(8, lengths, ["s1"] * 4, emb, 0, "prefix", "paper").tolist()
    )
    with pytest.raises(InputError, match="definitions must be one of"):
        compute_features(8, lengths, ["s1"] * 4, emb, 0, definitions="theirs")


def _corpus(conv):
    from oas.real._instances import turn_records

    return turn_records(conv)


def _check_rows_against_model(rows, convs):
    """Features 3 and 6 of each row recomputed from MODEL §8 on the row's real evidence turns."""
    from oas.real import make_embedder
    from oas.real._instances import cluster_of, render

    alnum = re.compile(r"[A-Za-z0-9]+")
    for r in rows:
        conv = convs[r["group_id"]]
        q = next(q for q in conv.queries if q.query_id == r["query_id"])
        turns = cluster_of(q, conv, "turn")
        lengths = [len(alnum.findall(render(t))) for t in turns]  # the paper's token count
        assert r["budget_fit_fraction"] == pytest.approx(reference_fit_share(r["budget"], lengths))
        emb = make_embedder().fit([t.text for t in _corpus(conv)]).embed([t.text for t in turns])
        assert r["embedding_inconsistency"] == pytest.approx(reference_spread(np.asarray(emb)))
    assert any(0 < r["budget_fit_fraction"] < 1 for r in rows)  # the feature is not trivial here
    assert any(r["embedding_inconsistency"] > 0.05 for r in rows)


@needs_locomo
def test_paper_design_rows_features_on_real_locomo():
    conv = real.load_locomo(LOCOMO_PATH).conversations[0]
    config = real.PairConfig(budgets=(16, 32, 64, 128), granularity="turn", packing="skip")
    config = real.PairConfig(**{**config.__dict__, "design": "paper"})
    ctx = real.ConversationContext(conv, "turn", real.make_embedder())
    tok, ops, reader = AlnumTokenizer(), real.make_operators("dataset"), real.make_reader("lexical")
    rows = []
    for q in conv.queries[:8]:
        rows += real.query_rows(q, ctx, operators=ops, reader=reader, config=config, tokenizer=tok)
    assert len(rows) == 32 and {r["meta_design"] for r in rows} == {"paper"}
    _check_rows_against_model(rows, {conv.conversation_id: conv})


@pytest.mark.slow
@needs_locomo
def test_pair_locomo_design_paper_cli_on_real_data(tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    argv = ["-q", "pair", "locomo", "--design", "paper", "--data", str(LOCOMO_PATH)]
    argv += ["--output", str(out), "--first", "12", "--json", "--no-progress"]
    rc, stdout, _ = run_cli(argv, capsys)
    assert rc == 0, stdout
    summary = json.loads(stdout)
    assert (
        summary["budgets"] == [16.0, 32.0, 64.0, 128.0] and summary["protocol"]["design"] == "paper"
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 48 and {r["meta_design"] for r in rows} == {"paper"}
    _check_rows_against_model(
        rows, {c.conversation_id: c for c in real.load_locomo(LOCOMO_PATH).conversations}
    )


def test_design_overlay_is_the_papers_settings_and_nothing_for_ours():
    """MODEL §11: the paper's design sets granularity, packing, token count and the data set's
    budgets, and end to end the full-history retrieval; ours sets nothing. ``retcon pair`` and
    ``retcon paper-checks`` both read this one overlay."""
    from oas.real import PAPER_BUDGETS, PAPER_SETTINGS, PairConfig, design_overlay

    assert design_overlay("ours", "locomo", "end-to-end") == {}
    paper = design_overlay("paper", "longmemeval")
    assert paper == {**PAPER_SETTINGS, "budgets": PAPER_BUDGETS["longmemeval"]}
    e2e = design_overlay("paper", "locomo", "end-to-end")
    assert list(e2e)[-2:] == ["retriever", "top_k"] and e2e["retriever"] == "bm25"
    fields = {k: v for k, v in e2e.items() if k != "tokenizer"}
    pc = PairConfig(protocol="end-to-end", design="paper", **fields)
    assert pc.full_history and pc.budgets == (16, 32, 64, 128) and pc.granularity == "turn"
