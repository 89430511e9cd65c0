"""oas.real: text, BM25, embeddings, loaders, packing, operators, readers, instances (MODEL §1-2, §8-9)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import oas
from oas import HashedTfidf, content_tokens, normalize, real
from oas.real import (
    DatasetOperators,
    ExtractiveOperators,
    LexicalReader,
    PairConfig,
    RegexTokenizer,
    SentenceReader,
    bm25_scores,
    lexical_correct,
    load_locomo,
    load_longmemeval,
    make_operators,
    make_reader,
)
from oas.real._bm25 import bm25_order
from oas.real._instances import cluster_of, order_records, pack_texts, render
from oas.real._lexical import answer_recall
from oas.real._locomo import parse_ids
from oas.real._pair import ConversationContext, query_rows
from retcon.errors import InputError
from tests._data import needs_locomo

FIX = Path(__file__).resolve().parents[1] / "fixtures"
TOK = RegexTokenizer()


def test_public_names_import():
    for name in real.__all__:
        assert getattr(real, name) is not None, name


# --- text -------------------------------------------------------------------------------------


def test_normalize_and_content_tokens_keep_months_numbers_negations():
    assert normalize("The Cat's  toy, (a ball)!") == "cat s toy ball"
    assert content_tokens("7 May 2023") == ["7", "may", "2023"]
    assert content_tokens("No") == ["no"]
    assert content_tokens("It is") == ["it", "is"]  # all stop words: fall back to every token
    assert content_tokens("the") == []  # articles are dropped by normalize
    assert content_tokens(2022) == ["2022"]


_text = st.text(alphabet=st.sampled_from(list("ab Cd,.!?'9\n")), max_size=60)


@given(_text, st.integers(0, 40))
def test_truncate_is_a_prefix_with_exactly_min_n_tokens(text, n):
    """MODEL §2 (cut packing): a cut record is a prefix holding min(n, len) tokens."""
    cut = TOK.truncate(text, n)
    assert text.startswith(cut)
    assert TOK.count(cut) == min(n, TOK.count(text))


@given(_text, st.integers(-1, 40), st.sampled_from(["regex", "alnum"]))
def test_truncate_count_is_truncate_and_count(text, n, name):
    """MODEL §2 (cut packing): counting while cutting gives the cut and its count as cutting then
    counting does."""
    tok = real.make_tokenizer(name)
    cut = tok.truncate(text, n)
    assert tok.truncate_count(text, n) == (cut, tok.count(cut))


def test_regex_tokenizer_counts_words_and_punctuation():
    assert TOK.count("I'm 5!") == 5
    assert TOK.truncate("Hello, world again", 2) == "Hello,"


# --- BM25 -------------------------------------------------------------------------------------


def test_bm25_matches_hand_computed_scores():
    docs = ["cat cat dog", "dog bird", "fish"]
    # query terms {cat, dog}; N=3, |d|=(3,2,1), avgdl=2, k1=1.5, b=0.75
    idf_cat = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))  # ln(1 + 2.5/1.5)
    idf_dog = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))  # ln(1 + 1.5/2.5)
    norm0 = 1.5 * (1 - 0.75 + 0.75 * 3 / 2)  # 1.6875
    norm1 = 1.5 * (1 - 0.75 + 0.75 * 2 / 2)  # 1.5
    s0 = idf_cat * 2 * 2.5 / (2 + norm0) + idf_dog * 1 * 2.5 / (1 + norm0)
    s1 = idf_dog * 1 * 2.5 / (1 + norm1)
    got = bm25_scores("cat and the dog?", docs)
    np.testing.assert_allclose(got, [s0, s1, 0.0], rtol=1e-12)
    assert bm25_order("cat dog", docs) == [0, 1, 2]


def _bm25_reference(query, documents, k1=1.5, b=0.75):
    """MODEL §2's BM25 written out term by term, tokenising every document afresh (no cache)."""
    from oas.real._text import match_terms

    docs = [match_terms(d) if d.strip() else [] for d in documents]
    n = len(docs)
    lengths = np.array([len(d) for d in docs], dtype=np.float64)
    avgdl = float(lengths.mean()) if n and lengths.sum() > 0 else 1.0
    df = Counter(t for d in docs for t in set(d))
    out = np.zeros(n)
    for i, d in enumerate(docs):
        tf = Counter(d)
        norm = k1 * (1.0 - b + b * lengths[i] / avgdl)
        for t in dict.fromkeys(match_terms(query)):
            if tf.get(t, 0):
                idf = math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))
                out[i] += idf * tf[t] * (k1 + 1.0) / (tf[t] + norm)
    return out


@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("abcs xyzing")), max_size=30), min_size=1, max_size=8
    ),
    st.text(alphabet=st.sampled_from(list("abcs xyzing")), max_size=20),
    st.sampled_from([(1.5, 0.75), (1.2, 0.75), (0.0, 1.0)]),
)
def test_bm25_with_cached_terms_equals_the_fresh_formula_bit_for_bit(docs, query, params):
    """MODEL §2: the per-text term cache changes no score, also on a second call over the same
    (repeated) documents; the returned array is the caller's own."""
    k1, b = params
    docs = docs + docs[:2]  # repeated documents hit the cache within one call
    want = _bm25_reference(query, docs, k1, b)
    first = bm25_scores(query, docs, k1=k1, b=b)
    np.testing.assert_array_equal(first, want)
    first[:] = -1.0
    np.testing.assert_array_equal(bm25_scores(query, docs, k1=k1, b=b), want)


def test_sentence_and_topk_readers_share_read_only_scores():
    """MODEL §9: the readers' BM25 sentence scores are kept per (question, context), read only,
    and give the answers of fresh scores."""
    from oas.real._readers import _sentence_scores
    from oas.real._text import split_sentences

    context = "Caroline went hiking. Melanie paints. Caroline painted a lake sunrise. Rain."
    question = "What did Caroline paint?"
    sentences = split_sentences(context)
    got = _sentence_scores(question, context)
    np.testing.assert_array_equal(got, bm25_scores(question, sentences))
    assert _sentence_scores(question, context) is got
    with pytest.raises(ValueError):
        got[0] = 1.0
    assert SentenceReader().answer(question, context) == "Caroline painted a lake sunrise."
    assert make_reader("topk", k=1).answer(question, context) == "Caroline painted a lake sunrise."


@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("abc xyz")), max_size=20), min_size=1, max_size=6
    )
)
def test_bm25_order_is_a_permutation_by_decreasing_score(docs):
    order = bm25_order("ab xy", docs)
    assert sorted(order) == list(range(len(docs)))
    s = bm25_scores("ab xy", docs)
    assert all(s[order[i]] >= s[order[i + 1]] for i in range(len(docs) - 1))
    assert np.all(s >= 0)


# --- embeddings -------------------------------------------------------------------------------


def test_hashed_tfidf_is_deterministic_unit_norm_and_cosine_one_for_equal_texts():
    e = HashedTfidf(dim=256).fit(["a cat sat", "a dog ran", "cat food"])
    x = e.embed(["cat sat", "cat sat", "dog ran", ""])
    np.testing.assert_allclose(np.linalg.norm(x[:3], axis=1), 1.0)
    assert np.all(x[3] == 0)
    assert x[0] @ x[1] == pytest.approx(1.0)
    np.testing.assert_array_equal(
        x,
        HashedTfidf(dim=256)
        .fit(["a cat sat", "a dog ran", "cat food"])
        .embed(["cat sat", "cat sat", "dog ran", ""]),
    )
    assert oas.embed_texts(["a b", "c"]).shape == (2, 2048)


# --- LoCoMo loader ----------------------------------------------------------------------------


def test_parse_ids_policy():
    valid = {"D8:6", "D9:17", "D11:26", "D30:5", "D1:1"}
    assert parse_ids("D1:1", valid) == (["D1:1"], False, [])
    assert parse_ids("D8:6; D9:17", valid) == (["D8:6", "D9:17"], True, [])
    assert parse_ids("D:11:26", valid) == (["D11:26"], True, [])
    assert parse_ids("D30:05", valid) == (["D30:5"], True, [])
    assert parse_ids("D", valid) == ([], False, ["D"])
    assert parse_ids(["D1:1", "D4:36"], valid) == (["D1:1"], False, ["D4:36"])


def test_locomo_tiny_fixture_loads_with_policy():
    (conv,) = (loaded := load_locomo(FIX / "locomo_tiny.json")).conversations
    rep = loaded.report
    assert [q.query_type for q in conv.queries] == [
        "single-hop",
        "multi-hop",
        "temporal",
        "open-domain",
    ]
    assert rep.n_excluded == 1 and rep.n_no_evidence == 1 and rep.n_evidence_repaired == 1
    assert rep.n_evidence_dropped == 1 and "qa 5" in rep.dropped[0]
    assert conv.queries[3].evidence_ids == ("D1:3", "D2:2")
    assert conv.queries[2].answer == "2023"
    s1 = conv.sessions[0]
    assert s1.date == "1:00 pm on 3 May, 2023" and s1.records[0].date == s1.date
    assert (
        s1.records[2].text
        == "Ann: Good luck. Miso loves tuna. [shares a photo: a photo of a grey cat]"
    )
    assert ("Miso the cat loves tuna.", ("D1:3",)) in s1.observations
    with_adv = load_locomo(FIX / "locomo_tiny.json", include_adversarial=True)
    assert "adversarial" in [q.query_type for q in with_adv.conversations[0].queries]


def test_locomo_strict_names_conversation_question_and_field():
    with pytest.raises(InputError, match=r"conversation 0 \(tiny-1\) qa 3: field 'evidence'"):
        load_locomo(FIX / "locomo_tiny.json", strict=True)


def test_locomo_malformed_fixture_names_the_record():
    with pytest.raises(
        InputError,
        match=r"locomo_malformed.json: conversation 0 \(bad-1\) qa 1: missing field 'answer'",
    ):
        load_locomo(FIX / "locomo_malformed.json")


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d[0].pop("qa"), r"conversation 0 \(tiny-1\): missing field 'qa'"),
        (lambda d: d[0]["qa"][1].pop("question"), r"qa 1: missing field 'question'"),
        (
            lambda d: d[0]["qa"][0].update(category=9),
            r"qa 0: field 'category' must be in 1..5; got 9",
        ),
        (
            lambda d: d[0]["conversation"]["session_2"][1].pop("dia_id"),
            r"session_2 turn 1: missing field 'dia_id'",
        ),
        (
            lambda d: d[0]["conversation"].pop("session_2_date_time"),
            r"missing field 'session_2_date_time'",
        ),
        (
            lambda d: d[0]["qa"][0].update(evidence="D1:1"),
            r"qa 0: field 'evidence' must be a list; got str",
        ),
    ],
)
def test_locomo_malformed_fields(tmp_path, mutate, message):
    with pytest.raises(InputError, match=message):
        _load_mutated(load_locomo, "locomo_tiny.json", mutate, tmp_path)


def _load_mutated(load, fixture: str, mutate, tmp_path):
    """``load`` of the fixture file ``fixture`` after ``mutate`` edited its parsed JSON."""
    data = json.loads((FIX / fixture).read_text())
    mutate(data)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    return load(p)


def test_invalid_json_names_file_and_line(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text('[{"sample_id": "x",\n "qa": [}]')
    with pytest.raises(InputError, match=r"broken.json' is not valid JSON: .* line 2"):
        load_locomo(p)
    with pytest.raises(InputError, match=r"does not exist"):
        load_locomo(tmp_path / "absent.json")


# --- LongMemEval loader -----------------------------------------------------------------------


def test_longmemeval_fixture():
    loaded = load_longmemeval(FIX / "longmemeval_tiny.json")
    convs = loaded.conversations
    assert loaded.report.n_excluded == 1 and len(convs) == 3
    q = [c.queries[0] for c in convs]
    assert [x.query_type for x in q] == ["single-session", "multi-session", "temporal-reasoning"]
    assert q[0].evidence_ids == ("s-a:1",)
    # s-c has no has_answer mark: all its turns are evidence
    assert q[1].evidence_ids == ("s-b:1", "s-c:1", "s-c:2") and q[1].answer == "3"
    assert convs[1].sessions[1].records[0].date == "2023/08/15 (Tue) 07:30"
    assert (
        len(load_longmemeval(FIX / "longmemeval_tiny.json", include_abstention=True).conversations)
        == 4
    )


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda d: d[1].update(question_type="multi"),
            r"instance 1 \(lme-ms-1\): field 'question_type'",
        ),
        (
            lambda d: d[1]["haystack_dates"].pop(),
            r"instance 1 \(lme-ms-1\): .* equal lengths; got 2, 2, 1",
        ),
        (
            lambda d: d[0].update(answer_session_ids=["s-z"]),
            r"instance 0 \(lme-ssu-1\): field 'answer_session_ids' names no",
        ),
        (
            lambda d: d[2]["haystack_sessions"][0][0].pop("content"),
            r"haystack_sessions\[0\]\[0\]': missing field 'content'",
        ),
    ],
)
def test_longmemeval_malformed(tmp_path, mutate, message):
    with pytest.raises(InputError, match=message):
        _load_mutated(load_longmemeval, "longmemeval_tiny.json", mutate, tmp_path)


# --- clusters, packing ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    return load_locomo(FIX / "locomo_tiny.json").conversations[0]


def test_cluster_granularity(tiny):
    q = tiny.queries[1]  # evidence D1:2, D2:1
    assert [r.record_id for r in cluster_of(q, tiny, "turn")] == ["D1:2", "D2:1"]
    sessions = cluster_of(q, tiny, "session")
    assert [r.record_id for r in sessions] == ["S1", "S2"]
    assert (
        sessions[1].source_ids == ("D2:1", "D2:2")
        and sessions[1].date == "9:30 am on 20 June, 2023"
    )
    assert render(sessions[1]).startswith("[9:30 am on 20 June, 2023] Bo: I finished")
    with pytest.raises(InputError, match="^cluster_of: granularity must be one of"):
        cluster_of(q, tiny, "word")


_lengths = st.lists(st.integers(1, 30), min_size=1, max_size=6)


@given(_lengths, st.integers(1, 120), st.sampled_from(["prefix", "skip", "cut"]))
def test_pack_agrees_with_the_feature_budget_fit_fraction(lengths, budget, packing):
    """MODEL §2 + §8 feature 3: packed tokens = f_B * len(C) under the same packing; <= B."""
    from oas._features import budget_fit_fraction

    texts = [" ".join(f"w{i}" for i in range(n)) for n in lengths]
    p = pack_texts(texts, lengths, budget, packing, TOK)
    assert p.tokens <= budget
    assert p.tokens == TOK.count(p.context)
    f = budget_fit_fraction(np.array([budget]), np.array([lengths]), packing=packing)[0]
    assert p.tokens == pytest.approx(f * sum(lengths))


@given(_lengths, st.integers(1, 120))
def test_cut_extends_prefix(lengths, budget):
    """MODEL §2: cut = prefix plus a truncated next record."""
    texts = [" ".join(f"w{i}" for i in range(n)) for n in lengths]
    prefix = pack_texts(texts, lengths, budget, "prefix", TOK).context
    cut = pack_texts(texts, lengths, budget, "cut", TOK).context
    assert cut.startswith(prefix)


# --- operators --------------------------------------------------------------------------------


def test_dataset_operators_construction(tiny):
    ops = DatasetOperators()
    q = tiny.queries[1]
    turns = cluster_of(q, tiny, "turn")
    rw = ops.rewrite(turns, tiny)
    assert [r.text for r in rw] == [
        "Bo is training for a marathon in Oslo.",
        "Bo finished the Oslo marathon in four hours. Bo is training for a marathon in Oslo.",
    ]
    assert [r.generated_by for r in rw] == ["rewrite", "rewrite"] and rw[
        1
    ].date == "9:30 am on 20 June, 2023"
    (merged,) = ops.merge(turns, tiny)
    # the duplicate fact of D2:1 is dropped; two sessions: dated groups
    assert merged.text == (
        "[1:00 pm on 3 May, 2023] Bo is training for a marathon in Oslo.\n"
        "[9:30 am on 20 June, 2023] Bo finished the Oslo marathon in four hours."
    )
    assert merged.date == "" and merged.source_ids == ("D1:2", "D2:1")
    (abstract,) = ops.abstract(turns, tiny)
    assert abstract.text.count("On 3 May 2023") == 1 and "On 20 June 2023" in abstract.text
    (one,) = ops.abstract(cluster_of(tiny.queries[0], tiny, "session"), tiny)
    assert one.date == "1:00 pm on 3 May, 2023" and one.text.startswith("On 3 May 2023")


def test_dataset_operators_refuse_data_without_generations():
    conv = load_longmemeval(FIX / "longmemeval_tiny.json").conversations[0]
    with pytest.raises(InputError, match="--operators dataset needs"):
        DatasetOperators().merge(cluster_of(conv.queries[0], conv), conv)


@needs_locomo
def test_extractive_operators_are_deterministic_local_and_compress():
    """MODEL §1: rewrite is local (k in, k out); merge and abstract give one record; rho < 1."""
    conv = load_locomo(real.cached_path("locomo")).conversations[0]
    ops = ExtractiveOperators()
    for q in conv.queries[:15]:
        c = cluster_of(q, conv, "session")
        raw = sum(TOK.count(r.text) for r in c)
        rw, mg, ab = ops.rewrite(c, conv), ops.merge(c, conv), ops.abstract(c, conv)
        assert len(rw) == len(c) and len(mg) == 1 and len(ab) == 1
        for out in (rw, mg, ab):
            assert 0 < sum(TOK.count(r.text) for r in out) < raw
        assert [r.text for r in rw] == [r.text for r in ExtractiveOperators().rewrite(c, conv)]
    with pytest.raises(InputError, match="rewrite_ratio"):
        ExtractiveOperators(rewrite_ratio=0)


def test_make_operators_and_reader_registry():
    assert (
        make_operators("dataset").name == "dataset"
        and make_operators("extractive").name == "extractive"
    )
    assert (
        make_reader("lexical").name == "lexical"
        and make_reader("sentence", threshold=1.0).threshold == 1.0
    )
    with pytest.raises(InputError, match="^make_operators: name must be one of"):
        make_operators("gpt")
    with pytest.raises(InputError, match="^make_reader: name must be one of"):
        make_reader("oracle")
    assert isinstance(make_operators("dataset"), real.OperatorBackend)
    assert isinstance(make_reader("sentence"), real.Reader)


def test_topk_reader_reads_the_k_best_sentences():
    """MODEL §9: ``topk`` applies the lexical rule to the k sentences that best match the question;
    the answer outside them is not read, inside them it is."""
    q = real.Query("q", "c", "When did Anna go to Paris?", "May 2020", "single-hop", ())
    ctx = (
        "Anna likes cats. The trip to Paris happened in May 2020. Anna went to Paris by train. "
        "Anna and Paris, Paris and Anna."
    )
    r3, r4 = make_reader("topk", k=3), make_reader("topk", k=4)
    assert r3.name == "topk" and isinstance(r3, real.Reader)
    assert r3.score(q, ctx) == 0.0  # the answer's sentence is the 4th best match
    assert r4.score(q, ctx) == 1.0
    assert r4.score(q, "") == 0.0
    assert r3.answer(q.text, ctx).startswith("Anna likes cats. Anna went")  # context order
    with pytest.raises(InputError, match="TopKReader.k"):
        make_reader("topk", k=0)


# --- readers ----------------------------------------------------------------------------------


def _q(answer, text="q?"):
    return real.Query("x", "c", text, answer, "single-hop", ("D1:1",))


def test_lexical_reader():
    assert lexical_correct("7 May 2023", "[1 pm on 7 May, 2023] Ann: hi")
    assert not lexical_correct("7 May 2023", "on 8 May, 2023")
    assert lexical_correct("The beach!", "we went to beach")
    assert LexicalReader().score(_q("Miso"), "") == 0.0
    assert LexicalReader().score(_q("Miso"), "my cat MISO") == 1.0


def test_sentence_reader_picks_best_sentence_and_applies_threshold():
    ctx = "Ann likes tea. Bo ran the Oslo marathon in four hours. Ann has a cat."
    r = SentenceReader()
    assert r.answer("How long was Bo's marathon?", ctx) == "Bo ran the Oslo marathon in four hours."
    assert r.score(_q("four hours", "How long was Bo's marathon?"), ctx) == 1.0
    assert (
        r.score(_q("four hours in Berlin", "How long was Bo's marathon?"), ctx) == 1.0
    )  # recall 2/3
    assert (
        r.score(_q("five hours in Berlin", "How long was Bo's marathon?"), ctx) == 0.0
    )  # recall 1/3
    assert (
        SentenceReader(threshold=1.0).score(
            _q("four hours in Berlin", "How long was Bo's marathon?"), ctx
        )
        == 0.0
    )
    # the answer is elsewhere in the context: lexical finds it, the sentence reader does not
    assert r.score(_q("tea", "How long was Bo's marathon?"), ctx) == 0.0
    assert answer_recall("four hours", "four days") == 0.5


# --- instances and crossover ------------------------------------------------------------------


def test_query_rows_on_fixture(tiny):
    ctx = ConversationContext(tiny, "session", HashedTfidf())
    cfg = PairConfig(budgets=(8, 4096))
    kw = dict(operators=DatasetOperators(), reader=LexicalReader(), config=cfg, tokenizer=TOK)
    rows = query_rows(tiny.queries[1], ctx, **kw)
    assert [r["instance_id"] for r in rows] == ["tiny-1/q1@8", "tiny-1/q1@4096"]
    loose = rows[1]
    assert loose["group_id"] == "tiny-1" and loose["query_type"] == "multi-hop"
    assert (loose["y_ret"], loose["y_merge"], loose["y_abstract"], loose["y_rewrite"]) == (
        1.0,
        1.0,
        0.0,
        1.0,
    )
    assert (
        loose["constituent_count"] == 2
        and loose["session_count"] == 2
        and loose["query_type_1"] == 1.0
    )
    assert loose["budget_fit_fraction"] == 1.0 and rows[0]["budget_fit_fraction"] < 1.0
    assert query_rows(tiny.queries[1], ctx, **kw, skip_ids={"tiny-1/q1@8", "tiny-1/q1@4096"}) == []


@pytest.mark.parametrize(
    "kw,python,cli",
    [
        ({"out": "p.txt"}, "PairJob.out must end in .jsonl", "--output must end in .jsonl"),
        ({"reader": "oracle"}, "PairJob.reader must be one of", "--reader must be one of"),
        ({"budgets": (0,)}, "PairJob.budgets must be positive", "--budgets must be positive"),
        ({"top_k": 0}, "PairJob.top_k must be an integer in", "--top-k must be an integer in"),
        ({"pair_protocol": "x"}, "PairJob.pair_protocol must be", "--protocol must be"),
    ],
)
def test_pair_job_errors_speak_python_from_python_and_cli_in_the_cli(kw, python, cli):
    """One check, two spellings: a Python caller reads its field names, the CLI its options."""
    from oas.real import PairJob
    from retcon.errors import cli_spelling

    job = {"dataset": "locomo", "out": "p.jsonl", **kw}
    with pytest.raises(InputError) as err:
        PairJob(**job)
    assert str(err.value).startswith(python) and "--" not in str(err.value)
    with cli_spelling(), pytest.raises(InputError) as err:
        PairJob(**job)
    assert str(err.value).startswith(cli)


def test_pair_config_validates():
    with pytest.raises(InputError, match=r"^PairConfig\.budgets must be positive integers"):
        PairConfig(budgets=(0, 32))
    with pytest.raises(InputError, match="PairConfig.packing must be one of"):
        PairConfig(packing="greedy")
    assert PairConfig(budgets=(64, 32, 64)).budgets == (32, 64)


def test_bm25_order_ranks_the_matching_session_first(tiny):
    q = tiny.queries[1]  # "Where did Bo run a marathon?"; both sessions mention the marathon
    texts = [render(r) for r in cluster_of(q, tiny, "session")]
    assert order_records(texts, "Who finished the marathon in four hours?", "bm25") == [1, 0]
    assert order_records(texts, q.text, "chronological") == [0, 1]
    with pytest.raises(InputError, match="^order_records: order must be one of"):
        order_records(texts, q.text, "random")


@needs_locomo
def test_dataset_merge_is_never_longer_than_rewrite_on_locomo():
    """MODEL §7: merge drops cross-record redundancy that rewrite (local) must keep, so
    len(merge(C)) <= len(rewrite(C)) (merge dates each session once, rewrite each record)."""
    conv = load_locomo(real.cached_path("locomo")).conversations[1]
    ops = DatasetOperators()
    for q in conv.queries:
        c = cluster_of(q, conv, "turn")
        rw = sum(TOK.count(render(r)) for r in ops.rewrite(c, conv))
        mg = sum(TOK.count(render(r)) for r in ops.merge(c, conv))
        assert mg <= rw, q.query_id


def test_generated_record_is_built_one_way():
    """Every operator backend builds a generated record's provenance with generated_record
    (MODEL §1): id action(ids), raw source ids once each, the first source's session and date."""
    from oas.real._types import Record, generated_record

    a = Record("D1:1", "S1", "1 May", "x", ("D1:1",))
    b = Record("S2", "S2", "2 May", "y", ("D2:1", "D2:2"))
    m = generated_record("merge", [a, b, a], "xy")
    assert m.record_id == "merge(D1:1,S2,D1:1)" and m.generated_by == "merge"
    assert m.source_ids == ("D1:1", "D2:1", "D2:2") and (m.session_id, m.date) == ("S1", "1 May")
    r = generated_record("rewrite", [Record("t", "S3", "", "z")], "z", date="3 May")
    assert r.source_ids == ("t",) and r.date == "3 May"
    with pytest.raises(InputError, match="at least one source"):
        generated_record("abstract", [], "")
