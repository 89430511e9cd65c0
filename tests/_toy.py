"""A toy stand-in for ``sim.simulate_instances`` for the ``oas`` tests: the single-cluster model
of MODEL §6 in numpy, with the §2 reader from ``theory.reader_success``.

It lived in ``oas/_simulate.py``; only tests use it, so it lives with them.
"""

from __future__ import annotations

from functools import partial

import jax
import numpy as np

from oas._features import budget_fit_fraction
from theory import reader_success

# per action: compress_ratio rho_o and fidelity phi_o by query-type slot (ret: 1, 1)
_TOY_RHO = np.array([1.0, 0.45, 0.2, 0.7])
_TOY_PHI = np.array(
    [
        [1.0, 1.0, 1.0, 1.0],  # ret
        [0.9, 0.92, 0.85, 0.9],  # merge keeps detail
        [0.6, 0.9, 0.7, 0.8],  # abstract: loses single-hop detail
        [0.95, 0.9, 0.9, 0.95],
    ]
)  # rewrite (local)


@partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _toy_draws(key, n_groups, queries_per_group, max_records, dim):
    k_len, k_count, k_sess, k_type, k_topic, k_noise, k_spread = jax.random.split(key, 7)
    nq = n_groups * queries_per_group
    return (
        jax.random.randint(k_count, (nq,), 1, max_records + 1),
        jax.random.normal(k_len, (nq, max_records)),
        jax.random.randint(k_sess, (nq, max_records), 0, 3),
        jax.random.randint(k_type, (nq,), 0, 4),
        jax.random.normal(k_topic, (n_groups, dim)),
        0.3 + 1.2 * jax.random.uniform(k_spread, (nq, 1, 1)),
        jax.random.normal(k_noise, (nq, max_records, dim)),
    )


def toy_instances(
    key: jax.Array,
    n_groups: int,
    queries_per_group: int,
    budgets,
    *,
    acc_raw: float = 0.85,
    acc_guess: float = 0.1,
    max_records: int = 6,
    dim: int = 8,
):
    """A small stand-in for ``sim.simulate_instances``: the single-cluster model of MODEL §6.

    Each query has a cluster of 1..``max_records`` records (lognormal token lengths, 1-3
    sessions, embeddings around a topic vector); each (query, budget) pair is one instance. Under
    prefix packing the reader's evidence support is the fitted share of raw tokens for ``ret``
    and phi_o * 1{rho_o len(C) <= B} for an operator; p = g + (a - g) s (MODEL §2). Tight budgets
    favour the operators, loose budgets favour retention (MODEL §6): a crossover scenario.

    Args:
      key: JAX PRNG key.
      n_groups: conversations; queries_per_group: queries per conversation.
      budgets: shape ``(m,)`` budget grid, tokens.
      acc_raw, acc_guess: reader accuracies a and g.
      max_records: largest cluster size K; dim: embedding dimension D.

    Returns:
      ``sim.Instances`` with n = n_groups * queries_per_group * m rows.

    References: MODEL §2, §6.
    """
    budgets = np.asarray(budgets, dtype=np.float64)
    nq = n_groups * queries_per_group
    count, raw_len, sessions, qtype, topic, spread, noise = (
        np.asarray(v) for v in _toy_draws(key, n_groups, queries_per_group, max_records, dim)
    )
    mask = np.arange(max_records)[None, :] < count[:, None]
    lengths = np.where(mask, np.round(np.exp(3.6 + 0.7 * raw_len)) + 1, 0)
    group = np.repeat(np.arange(n_groups), queries_per_group)
    emb = topic[group][:, None, :] + spread * noise
    total = lengths.sum(axis=1)
    m = len(budgets)
    rep = lambda a: np.repeat(a, m, axis=0)  # noqa: E731 - one instance per (query, budget)
    b = np.tile(budgets, nq)
    fit = budget_fit_fraction(b, rep(lengths), packing="prefix")
    phi = _TOY_PHI[:, rep(qtype)].T  # (n, 4)
    fits_op = (_TOY_RHO[None, :] * rep(total)[:, None]) <= b[:, None]
    support = np.where(np.arange(4)[None, :] == 0, fit[:, None], phi * fits_op)
    p = reader_success(support, acc_raw, acc_guess)
    from sim import Instances

    # the contexts of MODEL §6's single-cluster model: the raw records; one generated record
    ctx_len = np.zeros((len(b), 4, max_records))
    ctx_len[:, 0] = rep(lengths)
    ctx_len[:, 1:, 0] = _TOY_RHO[None, 1:] * rep(total)[:, None]
    ctx_ev = ctx_len > 0
    return Instances(
        b,
        rep(qtype),
        rep(group),
        np.repeat(np.arange(nq), m),
        rep(lengths),
        rep(mask),
        rep(sessions),
        rep(emb),
        p,
        ctx_len,
        ctx_ev,
    )


#: The budgets of the toy paired data the ``oas`` tests share.
TOY_BUDGETS = [64, 128, 256, 512]


def toy_paired():
    """The ``oas`` tests' toy paired data: 30 groups of 8 queries at ``TOY_BUDGETS`` (keys 0, 1)."""
    from oas._simulate import paired_from_instances

    inst = toy_instances(jax.random.key(0), 30, 8, TOY_BUDGETS)
    return paired_from_instances(jax.random.key(1), inst)


def stream_toml(budgets=(500.0, 1000.0), acc_guess: float = 0.0) -> str:
    """A stream scenario's TOML without its ``[stream]`` table (MODEL §10): one query type,
    exponential lengths of mean 100, the three operators and ``acc_raw = 0.8``."""
    return f"""
vocabulary = "locomo"
budgets = {[float(b) for b in budgets]}
queries = 64
[types.single-hop]
weight = 1.0
length = {{dist = "exponential", mean = 100.0}}
[operators.merge]
compress_ratio = 0.5
fidelity = 0.9
[operators.abstract]
compress_ratio = 0.25
fidelity = 0.7
[operators.rewrite]
compress_ratio = 0.7
fidelity = 0.95
[reader]
acc_guess = {float(acc_guess)}
acc_raw = 0.8
"""
