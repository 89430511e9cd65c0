"""Simulated paired data for the OAS router: one row per (query, budget) instance (MODEL §8).

Each simulated query is crossed with the budget grid; a row carries what the router's features are
computed from (budget, record lengths, session ids, record embeddings, query type, a conversation
id for grouped splits) and the reader's success probability under each of the four actions. The
OAS side draws Bernoulli outcomes from ``success_prob``.

Record embeddings are synthetic: each cluster has a random unit direction ``u``; record ``i`` is
``normalize(sqrt(c) u + sqrt(1 - c) z_i)`` with ``z_i`` an independent unit vector and
``c = 0.25 + 0.7 r_c``, so the pairwise cosine similarity within a cluster rises with the cluster's
redundancy ``r_c`` (features 6-7 of MODEL §8 carry signal about how much merge/abstract compress).
Session ids: in the ``locomo`` vocabulary a cluster's next record starts a new session with
probability 1/2 (turns of one session or several); in ``longmemeval`` every record is a session.

End-to-end knobs (the scenario's ``retriever.recall`` and ``classifier``): the row's cluster is
what the retriever returned (``record_mask`` holds the found records only, so the router's features
never see a missed record), and ``predicted_type`` is the type the classifier predicts, drawn per
query from the confusion matrix's row of the gold ``query_type``. The features read the predicted
type, as in the LoCoMo end-to-end protocol (docs/end-to-end.md).

References: MODEL §8 (instances, features, paired outcomes), §2 (reader).
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from retcon.errors import InputError
from sim import kernel as K
from sim._scenario import Scenario, as_scenario
from sim._simulate import _check_budgets, _queries_jit

EMBEDDING_DIM = 16
QUERIES_PER_GROUP = 8
TYPE_STREAM = 2  # fold_in(key, TYPE_STREAM): the classifier's draws, apart from the key's split


class Instances(NamedTuple):
    """Paired instances; ``n`` rows, ``K`` record slots, ``D`` embedding dimensions.

    Attributes:
      budget: ``(n,)`` tokens.
      query_type: ``(n,)`` int slot in ``scenario.query_types``: the gold type (the reader's).
      group: ``(n,)`` int synthetic conversation id (8 queries per conversation).
      query_id: ``(n,)`` int the simulated query (each query appears once per budget).
      record_lengths: ``(n, K)`` tokens of the cluster's records the retriever found (0 on padding
        and on missed records).
      record_mask: ``(n, K)`` bool, the found records (all of the cluster's at recall 1).
      session_ids: ``(n, K)`` int (-1 on padding).
      embeddings: ``(n, K, D)`` float32 unit vectors (0 on padding).
      success_prob: ``(n, 4)`` reader success probability per action, ACTIONS order.
      context_lengths: ``(n, 4, K + D)`` every action's candidate records (evidence, generated
        records, distractors) in retriever order, 0 on padding; ``None`` when not recorded.
      context_evidence: ``(n, 4, K + D)`` bool, the records that carry the evidence (raw units for
        ``ret``, the generated record(s) for an operator).
      predicted_type: ``(n,)`` int slot the type classifier predicts (``query_type`` when the
        classifier is perfect); ``None`` when not recorded.
      evidence_mask: ``(n, K)`` bool, all of the cluster's records, found or missed; ``None``
        when not recorded.
      evidence_scores: ``(n, K)`` the retriever's noisy scores of the cluster's records
        (``-inf`` on padding and on missed records); ``None`` when not recorded.
      distractor_scores: ``(n, D)`` the retriever's scores of the distractors (the candidates it
        leaves out of the cluster); ``None`` when not recorded. With ``evidence_scores`` they
        give the post-retrieval features (``oas`` features 12-15, docs/oas.md).
    """

    budget: np.ndarray
    query_type: np.ndarray
    group: np.ndarray
    query_id: np.ndarray
    record_lengths: np.ndarray
    record_mask: np.ndarray
    session_ids: np.ndarray
    embeddings: np.ndarray
    success_prob: np.ndarray
    context_lengths: np.ndarray | None = None
    context_evidence: np.ndarray | None = None
    predicted_type: np.ndarray | None = None
    evidence_mask: np.ndarray | None = None
    evidence_scores: np.ndarray | None = None
    distractor_scores: np.ndarray | None = None


def _ranked_context(d: K.Draw, pr: K.Params):
    """Every action's candidate records in retriever order (the kernel's stable score order):
    lengths ``(4, K + D)`` and evidence flags ``(4, K + D)`` (MODEL §2)."""
    lengths, scores = K.candidate_records(d, pr)
    n_ev = d.ev_len.shape[0]
    slot = jnp.arange(lengths.shape[-1])
    ev = jnp.stack(
        [
            (slot < n_ev) & jnp.concatenate([d.retrieved, jnp.zeros_like(d.dis_len, bool)]),
            slot == 0,
            slot == 0,
            (slot < n_ev) & jnp.concatenate([d.retrieved, jnp.zeros_like(d.dis_len, bool)]),
        ]
    )
    order = jnp.argsort(-scores, axis=-1, stable=True)
    ranked = jnp.take_along_axis(lengths, order, axis=-1)
    return ranked, jnp.take_along_axis(ev, order, axis=-1) & (ranked > 0)


def _record_extras(key, mask, r_c, longmemeval: bool):
    """Session ids ``(K,)`` and embeddings ``(K, D)`` for one cluster."""
    k_new, k_dir, k_rec = jax.random.split(key, 3)
    Kx = mask.shape[0]
    new = jax.random.bernoulli(k_new, 0.5, (Kx,)) if not longmemeval else jnp.ones((Kx,), bool)
    new = new.at[0].set(False)
    sessions = jnp.where(mask, jnp.cumsum(new.astype(jnp.int32)), -1)

    def unit(x):
        return x / jnp.linalg.norm(x, axis=-1, keepdims=True)

    u = unit(jax.random.normal(k_dir, (EMBEDDING_DIM,)))
    z = unit(jax.random.normal(k_rec, (Kx, EMBEDDING_DIM)))
    c = 0.25 + 0.7 * r_c
    e = unit(jnp.sqrt(c) * u[None] + jnp.sqrt(1.0 - c) * z)
    return sessions, jnp.where(mask[:, None], e, 0.0)


@partial(jax.jit, static_argnames=("longmemeval",))
def _extras_jit(keys, mask, redundancy, *, longmemeval: bool):
    """`_record_extras` of every query, compiled once per shape (not once per call)."""
    return jax.vmap(lambda k, m, r: _record_extras(k, m, r, longmemeval))(keys, mask, redundancy)


@jax.jit
def _ranked_jit(draws: K.Draw, pr: K.Params):
    """`_ranked_context` of every query, compiled once per shape (not once per call)."""
    return jax.vmap(lambda d: _ranked_context(d, pr))(draws)


def predict_types(key: jax.Array, gold: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    """The classifier's predicted type slot per query, from the confusion row of its gold type.

    Query ``i`` draws one uniform ``u`` from ``fold_in(key, i)`` and reads the inverse CDF of its
    row with the correct type first: ``u < P[t, t]`` keeps ``t``, else ``u - P[t, t]`` walks the
    other types in slot order. So the same key gives nested errors: a classifier with a lower
    diagonal mistypes a superset of the questions.

    Args:
      key: JAX key.
      gold: ``(n,)`` int gold type slots.
      confusion: ``(4, 4)`` row-stochastic (gold x predicted).

    Returns:
      ``(n,)`` int64 predicted slots.

    References: MODEL §8 (features 8-11).
    """
    gold = np.asarray(gold, dtype=np.int64)
    n = gold.shape[0]
    keys = K.query_keys(key, jnp.arange(n, dtype=jnp.int32))
    u = np.asarray(jax.vmap(lambda k: jax.random.uniform(k, ()))(keys), dtype=np.float64)
    P = np.asarray(confusion, dtype=np.float64)
    nt = P.shape[0]
    order = np.stack([np.concatenate([[t], np.delete(np.arange(nt), t)]) for t in range(nt)])
    cdf = np.cumsum(np.take_along_axis(P, order, axis=1), axis=1)  # (4, 4), correct type first
    cdf[:, -1] = np.inf  # rounding of the row sum never leaves u unassigned
    pos = (u[:, None] >= cdf[gold]).sum(axis=1)
    return order[gold, pos]


def simulate_instances(
    key: jax.Array, scenario: Scenario | str, n_instances: int, budgets=None
) -> Instances:
    """Draw ``n_instances`` (query, budget) rows of simulated paired data.

    Args:
      key: JAX PRNG key; split at once into the query draws and the record extras.
      scenario: the scenario (query mix, operators, reader, retriever, packing).
      n_instances: rows wanted; ``ceil(n_instances / nB)`` queries are crossed with the ``nB``
        budgets (query-major order) and the last rows are cut to ``n_instances``.
      budgets: ``(nB,)`` budgets (default the scenario's grid).

    Returns:
      ``Instances`` (numpy arrays). The cluster is the retrieved one (``scenario.retriever.recall``)
      and ``predicted_type`` is drawn from ``scenario.classifier`` with ``fold_in(key,
      TYPE_STREAM)`` (so the other draws are those of the perfect classifier).

    References:
      MODEL §8.
    """
    if (
        isinstance(n_instances, bool)
        or not isinstance(n_instances, (int, np.integer))
        or not 1 <= n_instances < 2**31
    ):
        raise InputError(
            f"simulate_instances: n_instances must be an integer in [1, 2**31); got {n_instances!r}."
        )
    scenario = as_scenario(scenario)
    b = _check_budgets(budgets, scenario)
    nb = b.size
    n_q = math.ceil(int(n_instances) / nb)
    k_sim, k_extra = jax.random.split(key)
    st, pr = K.split(scenario)
    draws, out = _queries_jit(
        k_sim, jnp.arange(n_q, dtype=jnp.int32), jnp.asarray(b, jnp.float32), pr, st=st
    )
    longmemeval = scenario.vocabulary == "longmemeval"
    sessions, emb = _extras_jit(
        K.query_keys(k_extra, jnp.arange(n_q, dtype=jnp.int32)),
        draws.ev_mask,
        draws.redundancy,
        longmemeval=longmemeval,
    )
    ctx_len, ctx_ev = _ranked_jit(draws, pr)
    rows = np.arange(int(n_instances))
    q, j = rows // nb, rows % nb
    p = np.asarray(out.m).astype(np.float64) / K.GRID
    gold = np.asarray(draws.query_type).astype(np.int64)
    if scenario.classifier.perfect:
        predicted = gold
    else:
        predicted = predict_types(
            jax.random.fold_in(key, TYPE_STREAM), gold, scenario.classifier.matrix()
        )
    found = np.asarray(draws.retrieved)  # the cluster the retriever returned
    ev_len, emb = np.asarray(draws.ev_len), np.asarray(emb)
    return Instances(
        budget=b[j],
        query_type=np.asarray(draws.query_type)[q].astype(np.int64),
        group=(q // QUERIES_PER_GROUP).astype(np.int64),
        query_id=q.astype(np.int64),
        record_lengths=np.where(found, ev_len, np.zeros((), ev_len.dtype))[q],
        record_mask=found[q],
        session_ids=np.where(found, np.asarray(sessions), -1)[q].astype(np.int64),
        embeddings=np.where(found[..., None], emb, np.zeros((), emb.dtype))[q],
        success_prob=p[q, j],
        context_lengths=np.asarray(ctx_len)[q],
        context_evidence=np.asarray(ctx_ev)[q],
        predicted_type=predicted[q],
        evidence_mask=np.asarray(draws.ev_mask)[q],
        evidence_scores=np.asarray(draws.ev_score)[q],
        distractor_scores=np.asarray(draws.dis_score)[q],
    )
