"""End-to-end protocol: retrieval, the query-type classifier, the pair option, LOCO policies."""

import json
from pathlib import Path

import jax
import numpy as np
import pytest

from oas.real._classifier import cross_fit_types, fit_type_classifier, hashed_ngrams
from oas.real._endtoend import crossover_ci, loco_policies
from oas.real._retrieval import evidence_recall, rank_units, retrieve
from oas.real._run import PairJob, protocol_digest
from tests._fakes import FakeServer, send

FIX = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def conv():
    from oas.real import load_locomo

    return load_locomo(FIX / "locomo_tiny.json").conversations[0]


def _two_conversations(tmp_path: Path) -> Path:
    data = json.loads((FIX / "locomo_tiny.json").read_text())
    second = json.loads(json.dumps(data[0]))
    second["sample_id"] = "tiny-2"
    path = tmp_path / "two.json"
    path.write_text(json.dumps(data + [second]))
    return path


def test_bm25_retriever_ranks_the_evidence_session_first(conv):
    # MODEL §2: records are packed in retriever order; the Oslo marathon finish is in session 2.
    from oas.real import Query

    q = Query(
        "q",
        conv.conversation_id,
        "When did Bo finish the Oslo marathon?",
        "",
        "temporal",
        ("D2:1",),
    )
    cluster = retrieve(q, conv, "session", top_k=1)
    assert [r.session_id for r in cluster] == ["S2"]
    assert evidence_recall(q, cluster) == 1.0
    both = retrieve(q, conv, "session", top_k=5)
    assert [r.session_id for r in both] == ["S2", "S1"]  # fewer units than top_k: all, ranked


def test_retrieve_turns_and_recall_counts_turns(conv):
    q = next(q for q in conv.queries if "cat" in q.text and "name" in q.text)
    top = retrieve(q, conv, "turn", top_k=2)
    assert len(top) == 2 and all(r.record_id.startswith("D") for r in top)
    assert 0.0 <= evidence_recall(q, top) <= 1.0
    assert evidence_recall(q, []) == 0.0


def test_embedding_retriever_uses_the_embedder(conv):
    from oas import HashedTfidf
    from oas.real._instances import render, session_records

    units = session_records(conv)
    emb = HashedTfidf().fit([render(u) for u in units])
    order = rank_units("Oslo marathon four hours finished", units, "embedding", emb)
    assert sorted(order) == list(range(len(units)))
    assert units[order[0]].session_id == "S2"


def test_bad_retriever_and_top_k_are_input_errors(conv):
    from retcon.errors import InputError

    q = conv.queries[0]
    with pytest.raises(InputError, match="^retrieve: retriever must be one of"):
        retrieve(q, conv, retriever="grep")
    with pytest.raises(InputError, match="^retrieve: top_k must be a positive integer"):
        retrieve(q, conv, top_k=0)


def test_classifier_learns_separable_types_conversation_disjoint():
    words = {"a": "when did", "b": "why would", "c": "what is the name of"}
    texts, labels, groups = [], [], []
    for g in range(3):
        for i in range(6):
            for lab, stem in words.items():
                texts.append(f"{stem} thing{g}{i} happen")
                labels.append(lab)
                groups.append(f"c{g}")
    fit = cross_fit_types(texts, labels, groups, ("a", "b", "c"))
    assert fit.accuracy == 1.0
    assert fit.confusion.sum() == len(texts)
    assert np.all(np.diag(fit.confusion) == 18)
    assert fit.n_groups == 3


def test_classifier_is_deterministic_and_refuses_one_group():
    from retcon.errors import InputError

    x = hashed_ngrams(["when did it", "why would it"])
    m1 = fit_type_classifier(x, [0, 1], ("a", "b"), steps=50)
    m2 = fit_type_classifier(x, [0, 1], ("a", "b"), steps=50)
    np.testing.assert_array_equal(m1.W, m2.W)
    assert list(m1.predict(x)) == [0, 1]
    with pytest.raises(InputError, match="at least 2 conversations"):
        cross_fit_types(["a b", "c d"], ["a", "b"], ["g", "g"], ("a", "b"))


def test_protocol_digest_oracle_unchanged_end_to_end_distinct(tmp_path):
    oracle = PairJob("locomo", str(tmp_path / "o.jsonl"))
    assert "protocol" not in oracle.protocol()  # earlier oracle files keep resuming
    e2e = PairJob("locomo", str(tmp_path / "o.jsonl"), pair_protocol="end-to-end")
    gold = PairJob(
        "locomo", str(tmp_path / "o.jsonl"), pair_protocol="end-to-end", type_source="gold"
    )
    digests = {protocol_digest(j.protocol()) for j in (oracle, e2e, gold)}
    assert len(digests) == 3


def test_pair_end_to_end_rows_and_resume_refusal(tmp_path):
    from oas import read_paired
    from oas.real import run_pair_job
    from retcon.errors import InputError

    data = _two_conversations(tmp_path)
    out = tmp_path / "e2e.jsonl"
    job = PairJob(
        "locomo",
        str(out),
        data=str(data),
        budgets=(16, 64, 256),
        pair_protocol="end-to-end",
        top_k=1,
    )
    summary = run_pair_job(job, progress=False)
    assert summary["type_classifier"]["n_groups"] == 2
    rec = summary["retrieval_recall"]
    assert rec["packed"] == sorted(rec["packed"])  # more budget packs more retrieved units
    assert 0.0 <= rec["cluster"] <= 1.0
    paired = read_paired(out)
    r = np.asarray(paired.meta["meta_retrieval_recall"], dtype=float)
    assert np.all((r >= 0) & (r <= 1))
    assert set(paired.meta["meta_gold_type"]) <= {
        "single-hop",
        "multi-hop",
        "temporal",
        "open-domain",
    }
    oracle = PairJob("locomo", str(out), data=str(data), budgets=(16, 64, 256))
    with pytest.raises(InputError, match=r"^PairJob\.out .* choose a new out\.$"):
        run_pair_job(oracle, progress=False)


@pytest.mark.slow
def test_loco_policies_oracle_dominates():
    from oas import simulate_paired

    data = simulate_paired(jax.random.PRNGKey(0), "locomo-like", 240)
    data = data._replace(group_id=np.array([f"g{i % 6}" for i in range(data.n)]))
    out = loco_policies(jax.random.PRNGKey(1), data)
    acc = out["accuracy"]
    assert acc["oracle"]["point"][-1] >= acc["oas"]["point"][-1] - 1e-12
    assert acc["oracle"]["point"][-1] >= acc["best-fixed"]["point"][-1] - 1e-12
    g = out["gain"]["oas"]
    assert g["lower"][-1] <= g["point"][-1] <= g["upper"][-1]
    cx = crossover_ci(jax.random.PRNGKey(2), data, n_resamples=50)
    assert set(cx) == {"merge", "abstract", "rewrite"}


def test_query_rows_use_the_predicted_type_and_retrieved_cluster(conv):
    # MODEL §8: features 8-11 are the one-hot of the type the router is given.
    from oas import HashedTfidf
    from oas.real import DatasetOperators, PairConfig, make_reader, make_tokenizer
    from oas.real._pair import ConversationContext, query_rows

    q = conv.queries[0]
    wrong = next(t for t in ("single-hop", "multi-hop", "temporal") if t != q.query_type)
    config = PairConfig(
        (16, 512), protocol="end-to-end", top_k=1, predicted_types={q.query_id: wrong}
    )
    ctx = ConversationContext(conv, "session", HashedTfidf())
    rows = query_rows(
        q,
        ctx,
        operators=DatasetOperators(),
        reader=make_reader("lexical"),
        config=config,
        tokenizer=make_tokenizer("regex"),
    )
    slot = ("single-hop", "multi-hop", "temporal", "open-domain").index(wrong)
    for row in rows:
        assert row["query_type"] == wrong and row["meta_gold_type"] == q.query_type
        assert row[f"query_type_{slot}"] == 1.0
        assert len(row["meta_retrieved_ids"].split(",")) == 1
    assert rows[0]["meta_retrieval_recall"] <= rows[1]["meta_retrieval_recall"]


@pytest.mark.slow
def test_locomo_end_to_end_recall_and_classifier(tmp_path):
    # MODEL §9: the 4-way types; the classifier is scored on conversations it never saw.
    from oas.real import cached_path, run_pair_job

    if not cached_path("locomo").is_file():
        pytest.skip("LoCoMo not in the data cache")
    job = PairJob(
        "locomo",
        str(tmp_path / "e2e.jsonl"),
        budgets=(64, 2048),
        first=60,
        pair_protocol="end-to-end",
    )
    s = run_pair_job(job, progress=False)
    tc = s["type_classifier"]
    assert tc["n_groups"] == 10
    assert 0.5 < tc["accuracy"] <= 1.0  # measured 0.770 on all 1,536 questions; chance is ~0.55
    conf = np.asarray(tc["confusion"])
    assert conf.sum() == 1536
    rec = s["retrieval_recall"]
    assert 0.0 < rec["packed"][0] <= rec["packed"][1] <= rec["cluster"] <= 1.0


def test_openai_embedder_against_a_local_endpoint(conv, tmp_path, monkeypatch):
    from oas.real import make_embedder

    monkeypatch.setenv("RETCON_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("oas.real.llm._http.time.sleep", lambda s: None)  # no backoff wait here
    seen = []
    fail = [1]  # the first request answers 503: retried through the chat client's transport

    def reply(h):
        body = json.loads(h.body)
        if fail and fail.pop():
            send(h, status=503)
            return
        seen.append((h.path, body["model"], len(body["input"])))
        data = [
            {"index": i, "embedding": [float("four" in t.lower()), 1.0, float(len(t) % 3)]}
            for i, t in enumerate(body["input"])
        ]
        send(h, json.dumps({"data": data[::-1]}).encode())  # any order: sorted by index

    import os

    with FakeServer(reply) as srv:
        old = os.environ.get("RETCON_EMBED_BASE_URL")
        os.environ["RETCON_EMBED_BASE_URL"] = srv.base_url
        try:
            emb = make_embedder("openai:tiny-embed")
        finally:
            if old is None:
                del os.environ["RETCON_EMBED_BASE_URL"]
            else:
                os.environ["RETCON_EMBED_BASE_URL"] = old
        e = emb.embed(["Oslo run", "cat", "Oslo run"])
        assert e.shape == (3, 3)
        np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0)
        np.testing.assert_array_equal(e[0], e[2])
        assert seen == [("/v1/embeddings", "tiny-embed", 2)]  # duplicates sent once
        emb.embed(["cat"])
        assert len(seen) == 1  # cached
        assert emb.pool.endpoints[0]["errors"] == 1 and not fail  # the 503 was retried
        again = type(emb)(emb.config)  # the same endpoint config
        np.testing.assert_array_equal(again.embed(["Oslo run", "cat"]), e[:2])
        assert len(seen) == 1  # a new embedder (a rerun) reads the on-disk cache
        from oas.real import Query

        q = Query("q", conv.conversation_id, "four hours", "", "temporal", ("D2:1",))
        top = retrieve(q, conv, "session", top_k=1, retriever="embedding", embedder=emb)
        assert top[0].session_id == "S2"


def test_retrieval_recall_summary_and_gap_split():
    from types import SimpleNamespace

    from oas.real import gap_split, predict_conversation_types
    from oas.real._endtoend import retrieval_recall_summary
    from retcon.errors import InputError

    rows = SimpleNamespace(
        budget=np.array([32, 64, 32, 64]),
        query_id=np.array(["a", "a", "b", "b"]),
        meta={
            "meta_retrieval_recall": np.array([0.0, 0.5, 1.0, 1.0], dtype=object),
            "meta_retrieval_recall_cluster": np.array([0.5, 0.5, 1.0, 1.0], dtype=object),
        },
    )
    assert retrieval_recall_summary(rows) == {
        "budgets": [32.0, 64.0],
        "packed": [0.5, 0.75],
        "cluster": 0.75,
    }
    assert retrieval_recall_summary(SimpleNamespace(meta={})) is None  # the oracle protocol

    def run(gain, acc):
        return {
            "policies": {"gain": {"oas": {"point": [gain]}}, "accuracy": {"oas": {"point": [acc]}}}
        }

    res = {
        "oracle": run(0.014, 0.395),
        "e2e-gold-type": run(-0.011, 0.322),
        "e2e": run(-0.007, 0.326),
    }
    gap = gap_split(res)
    assert gap["gain_lost_to_retrieval"] == pytest.approx(0.025)
    assert gap["gain_lost_to_type"] == pytest.approx(-0.004)
    assert gap["accuracy_lost_to_retrieval"] == pytest.approx(0.073)
    assert gap_split({"oracle": res["oracle"]}) == {}
    with pytest.raises(InputError, match="no questions"):
        predict_conversation_types([])
