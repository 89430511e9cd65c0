"""A query-type classifier from the question text alone, for the end-to-end protocol.

Features: hashed word n-grams (``n = 1, 2`` by default) of the normalized question, stop words kept
(``when``, ``why``, ``would`` carry the type), each hashed (BLAKE2b, stable across processes) into
``dim`` signed buckets with weight ``1 + ln tf``, the vector L2-normalized. Model: multinomial
logistic regression ``p(t | x) = softmax(W x + b)`` minimizing the mean cross-entropy plus
``l2 / 2 * |W|^2``, fitted in JAX by full-batch Adam from zeros (deterministic: no key).

Evaluation is conversation-disjoint: ``cross_fit_types`` predicts each question's type with a model
fitted on the other conversations only (leave-one-group-out), so no question is typed by a model
that saw its conversation.

References: MODEL §8 (feature 8-11 is the type one-hot), §9 (the 4-way types).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from oas._text import normalize
from retcon.errors import InputError


def hashed_ngrams(texts: Sequence[str], *, dim: int = 4096, n: tuple[int, ...] = (1, 2)):
    """Shape ``(len(texts), dim)`` float64 hashed n-gram vectors (module docstring)."""
    if int(dim) <= 0:
        raise InputError(f"hashed_ngrams: dim must be a positive integer; got {dim!r}.")
    out = np.zeros((len(texts), dim))
    for i, text in enumerate(texts):
        toks = ["<s>", *normalize(text).split()]
        grams = Counter(" ".join(toks[j : j + k]) for k in n for j in range(len(toks) - k + 1))
        for g, f in grams.items():
            h = int.from_bytes(hashlib.blake2b(g.encode("utf-8"), digest_size=8).digest(), "little")
            out[i, (h >> 1) % dim] += (1.0 if h & 1 else -1.0) * (1.0 + np.log(f))
    norm = np.linalg.norm(out, axis=1, keepdims=True)
    return np.where(norm > 0, out / np.where(norm > 0, norm, 1.0), 0.0)


class TypeClassifier(NamedTuple):
    """A fitted multinomial logistic regression: ``W`` shape ``(C, D)``, ``b`` shape ``(C,)``."""

    W: np.ndarray
    b: np.ndarray
    classes: tuple[str, ...]

    def predict_proba(self, features) -> np.ndarray:
        z = np.asarray(features, dtype=np.float64) @ self.W.T + self.b
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, features) -> np.ndarray:
        """Class index per row."""
        return np.argmax(self.predict_proba(features), axis=1)


def fit_type_classifier(
    features,
    labels,
    classes: Sequence[str],
    *,
    l2: float = 1e-3,
    steps: int = 400,
    learning_rate: float = 0.05,
) -> TypeClassifier:
    """Fit ``softmax(W x + b)`` by full-batch Adam from zeros.

    Args:
      features: shape ``(n, D)``.
      labels: shape ``(n,)`` int class indices in ``0..len(classes)-1``.
      classes: the class names.
      l2: ridge penalty on ``W`` (>= 0).
      steps: Adam steps (>= 1).
      learning_rate: Adam step size (> 0).

    Returns:
      ``TypeClassifier``.
    """
    import jax
    import jax.numpy as jnp

    x = np.asarray(features, dtype=np.float32)
    y = np.asarray(labels, dtype=np.int64).reshape(-1)
    c = len(classes)
    if x.ndim != 2 or x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise InputError(
            f"fit_type_classifier: features must be (n, D) with n = len(labels) > 0; got "
            f"{x.shape} and {y.shape}."
        )
    if np.any((y < 0) | (y >= c)):
        raise InputError(f"fit_type_classifier: labels must be in 0..{c - 1}.")
    if l2 < 0 or steps < 1 or learning_rate <= 0:
        raise InputError("fit_type_classifier: need l2 >= 0, steps >= 1, learning_rate > 0.")
    onehot = np.eye(c, dtype=np.float32)[y]

    def loss(params):
        W, b = params
        z = x @ W.T + b
        nll = -jnp.mean(jnp.sum(onehot * jax.nn.log_softmax(z), axis=1))
        return nll + 0.5 * l2 * jnp.sum(W * W)

    grad = jax.grad(loss)
    b1, b2, eps = 0.9, 0.999, 1e-8

    def step(state, t):
        params, m, v = state
        g = grad(params)
        m = jax.tree_util.tree_map(lambda a, b: b1 * a + (1 - b1) * b, m, g)
        v = jax.tree_util.tree_map(lambda a, b: b2 * a + (1 - b2) * b * b, v, g)
        tt = t + 1.0
        params = jax.tree_util.tree_map(
            lambda p, a, s: (
                p - learning_rate * (a / (1 - b1**tt)) / (jnp.sqrt(s / (1 - b2**tt)) + eps)
            ),
            params,
            m,
            v,
        )
        return (params, m, v), None

    zeros = (jnp.zeros((c, x.shape[1]), jnp.float32), jnp.zeros((c,), jnp.float32))
    state = (zeros, zeros, zeros)
    (params, _, _), _ = jax.lax.scan(step, state, jnp.arange(steps, dtype=jnp.float32))
    W, b = params
    return TypeClassifier(np.asarray(W, np.float64), np.asarray(b, np.float64), tuple(classes))


class CrossFit(NamedTuple):
    """Conversation-disjoint predictions of the query type.

    Attributes:
      predicted: shape ``(n,)`` str, each question's type from a model not fitted on its group.
      accuracy: share of questions typed right.
      confusion: shape ``(C, C)`` int, rows = gold class, columns = predicted, ``classes`` order.
      classes: the class names.
      n_groups: groups (folds).
    """

    predicted: np.ndarray
    accuracy: float
    confusion: np.ndarray
    classes: tuple[str, ...]
    n_groups: int

    def as_json(self) -> dict:
        return {
            "accuracy": self.accuracy,
            "classes": list(self.classes),
            "confusion": self.confusion.tolist(),
            "n_groups": self.n_groups,
            "split": "leave-one-conversation-out",
        }


def cross_fit_types(
    texts: Sequence[str], labels: Sequence[str], groups: Sequence[str], classes: Sequence[str]
) -> CrossFit:
    """Leave-one-group-out predictions of ``labels`` from ``texts`` (module docstring).

    Args:
      texts: question texts.
      labels: their gold types, each in ``classes``.
      groups: their conversations; at least two distinct.
      classes: the type vocabulary.

    Returns:
      ``CrossFit``.

    References: MODEL §9 (4-way types).
    """
    classes = tuple(classes)
    bad = [t for t in labels if t not in classes]
    if bad:
        raise InputError(f"cross_fit_types: label {bad[0]!r} is not one of {list(classes)}.")
    g = np.asarray(list(groups)).astype(str)
    uniq = list(dict.fromkeys(g.tolist()))
    if len(uniq) < 2:
        raise InputError(
            f"cross_fit_types: conversation-disjoint splits need at least 2 conversations; "
            f"got {len(uniq)}."
        )
    x = hashed_ngrams(list(texts))
    y = np.array([classes.index(t) for t in labels], dtype=np.int64)
    pred = np.zeros_like(y)
    for gid in uniq:
        test = g == gid
        model = fit_type_classifier(x[~test], y[~test], classes)
        pred[test] = model.predict(x[test])
    conf = np.zeros((len(classes), len(classes)), dtype=np.int64)
    np.add.at(conf, (y, pred), 1)
    return CrossFit(
        np.array([classes[i] for i in pred], dtype=object),
        float((pred == y).mean()),
        conf,
        classes,
        len(uniq),
    )


def predict_conversation_types(conversations) -> tuple[dict[str, str], CrossFit]:
    """The conversation-disjoint predicted type of every question of ``conversations``.

    Runs ``cross_fit_types`` on all the questions (texts, gold types, conversations) in the type
    vocabulary of the first question.

    Args:
      conversations: ``oas.real.Conversation``s, at least two with questions.

    Returns:
      ``({query_id: predicted type}, CrossFit)``.

    References: MODEL §9 (4-way types).
    """
    from retcon.vocab import VOCABULARIES

    queries = [q for c in conversations for q in c.queries]
    if not queries:
        raise InputError("predict_conversation_types: the conversations hold no questions.")
    vocab = next((v for v in VOCABULARIES.values() if queries[0].query_type in v), None)
    if vocab is None:
        raise InputError(
            f"predict_conversation_types: question {queries[0].query_id} has type "
            f"{queries[0].query_type!r}, in no 4-way vocabulary {dict(VOCABULARIES)}."
        )
    fit = cross_fit_types(
        [q.text for q in queries],
        [q.query_type for q in queries],
        [q.conversation_id for q in queries],
        vocab,
    )
    return {q.query_id: str(t) for q, t in zip(queries, fit.predicted)}, fit
