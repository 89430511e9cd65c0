"""Simulated paired data: instances from ``sim``, Bernoulli outcomes for all four actions.

Each instance z = (q, C, B) is drawn once by ``sim.simulate_instances``; its four success
probabilities p_a(z) (MODEL §2 reader under each action's context) give the four outcomes of the
same draw, so the data are paired. By default the four outcomes share one uniform
u(z) ~ U(0, 1): y_a = 1{u < p_a} (common random numbers: a question the reader gets right with a
worse context it also gets right with a better one, so harm 1{y_o < y_ret} happens only when
p_o < p_ret). ``coupling="independent"`` draws four independent uniforms instead.

The router sees what an end-to-end system would: the cluster the retriever returned (the
instances' ``record_mask``) and the type the classifier predicted (``predicted_type``), which is
the row's ``query_type`` and features 8-11; the gold type stays in ``meta_gold_type``.

References: MODEL §2 (reader), §8 (paired data).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import numpy as np

from oas._features import compute_features_batch
from oas._paired import PairedData
from oas._retrieval_features import (
    RECALL_TARGET_COLUMN,
    RETRIEVAL_META_COLUMNS,
    sim_retrieval_features,
)
from oas._structure import STRUCTURE_COLUMN, structures_from_arrays
from retcon.errors import check_choice
from retcon.vocab import VOCABULARIES
from theory import check_packing

if TYPE_CHECKING:
    from collections.abc import Iterator

    from numpy.typing import ArrayLike

    import sim

COUPLINGS = ("shared", "independent")


def paired_from_instances(
    key: jax.Array,
    instances,
    *,
    vocabulary: str = "locomo",
    packing: str = "prefix",
    coupling: str = "shared",
    prefix: str = "sim",
    structure_packing: str | None = None,
) -> PairedData:
    """Turn simulated instances into ``PairedData`` with Bernoulli outcomes drawn with ``key``.

    Args:
      key: JAX PRNG key for the outcome draws.
      instances: an object with ``budget (n,)``, ``query_type (n,)`` slot, ``group (n,)``,
        ``record_lengths (n, K)``, ``record_mask (n, K)``, ``session_ids (n, K)``,
        ``embeddings (n, K, D)`` and ``success_prob (n, 4)`` in ``ACTIONS`` order
        (``sim.Instances``); an optional ``query_id (n,)`` ties instances of one query, and an
        optional ``predicted_type (n,)`` slot is the type the router sees (features 8-11 and the
        ``query_type`` column), the gold ``query_type`` then going to ``meta_gold_type``.
      vocabulary: query-type vocabulary of the slots.
      packing: packing for feature 3 (MODEL §2).
      coupling: ``"shared"`` (one uniform per instance) or ``"independent"``.
      prefix: prefix of the generated ids.
      structure_packing: the packing the instances were simulated with, recorded in the
        ``evidence_structure`` column (default ``packing``).

    Returns:
      ``PairedData``.

    References: MODEL §8.
    """
    check_choice("coupling", coupling, COUPLINGS)
    check_choice("vocabulary", vocabulary, VOCABULARIES)
    check_packing("packing", packing)
    u = _uniforms(key, np.shape(instances.success_prob)[0], coupling)
    return _paired_rows(
        instances,
        u,
        0,
        vocabulary=vocabulary,
        packing=packing,
        prefix=prefix,
        structure_packing=structure_packing,
    )


def _uniforms(key: jax.Array, n: int, coupling: str) -> np.ndarray:
    """The ``(n, 1)`` (shared) or ``(n, 4)`` (independent) outcome uniforms of the whole draw."""
    return np.asarray(
        jax.random.uniform(key, (n, 1) if coupling == "shared" else (n, 4)), dtype=np.float64
    )


def _paired_rows(
    instances,
    u: np.ndarray,
    offset: int,
    *,
    vocabulary: str,
    packing: str,
    prefix: str,
    structure_packing: str | None,
) -> PairedData:
    """``PairedData`` of ``instances`` (rows ``offset`` onwards of the draw) given their uniforms
    ``u``; every column is a function of its own row and its index ``offset + i`` only, so the
    rows of a draw can be built a slice at a time (``paired_chunks``)."""
    p = np.asarray(instances.success_prob, dtype=np.float64)
    n = p.shape[0]
    outcomes = (u < p).astype(np.float64)
    gold = np.asarray(instances.query_type).astype(np.int64)
    predicted = getattr(instances, "predicted_type", None)
    slot = gold if predicted is None else np.asarray(predicted).astype(np.int64)
    features = compute_features_batch(
        instances.budget,
        instances.record_lengths,
        instances.record_mask,
        instances.session_ids,
        instances.embeddings,
        slot,
        packing,
    )
    vocab = VOCABULARIES[vocabulary]
    meta = {
        f"meta_p_{a}": p[:, j].astype(object)
        for j, a in enumerate(("ret", "merge", "abstract", "rewrite"))
    }
    if predicted is not None:
        meta["meta_gold_type"] = np.asarray([vocab[s] for s in gold], dtype=object)
    ev_score = getattr(instances, "evidence_scores", None)
    dis_score = getattr(instances, "distractor_scores", None)
    if ev_score is not None and dis_score is not None:
        # post-retrieval features 12-14 and the calibration target (docs/oas.md)
        extra, found = sim_retrieval_features(ev_score, instances.record_mask, dis_score)
        for j, col in enumerate(RETRIEVAL_META_COLUMNS):
            meta[col] = extra[:, j].astype(object)
        ev_mask = getattr(instances, "evidence_mask", None)
        total = np.asarray(instances.record_mask if ev_mask is None else ev_mask, bool).sum(1)
        meta[RECALL_TARGET_COLUMN] = (found.sum(axis=1) / np.maximum(total, 1)).astype(object)
    ctx_len = getattr(instances, "context_lengths", None)
    if ctx_len is not None:
        ctx_ev = np.asarray(instances.context_evidence, bool)
        full = getattr(instances, "evidence_mask", None)
        if full is not None:
            # retriever recall < 1: a query missing any evidence record has support 0 under every
            # action (MODEL §2), written as no evidence flag under any action (a retrieval miss,
            # docs/paired-data.md), so the structure predicts what the outcomes were drawn from
            found = np.asarray(instances.record_mask, bool)
            intact = np.all(found == np.asarray(full, bool), axis=-1)
            ctx_ev = ctx_ev & intact[:, None, None]
        meta[STRUCTURE_COLUMN] = structures_from_arrays(
            ctx_len, ctx_ev, structure_packing or packing
        )
    query = getattr(instances, "query_id", None)
    query_id = np.asarray(
        [f"{prefix}-q{int(v)}" for v in np.asarray(query)]
        if query is not None
        else [f"{prefix}-q{i}" for i in range(offset, offset + n)],
        dtype=object,
    )
    return PairedData(
        instance_id=np.asarray([f"{prefix}-{i}" for i in range(offset, offset + n)], dtype=object),
        query_id=query_id,
        group_id=np.asarray(
            [f"{prefix}-g{int(g)}" for g in np.asarray(instances.group)], dtype=object
        ),
        query_type=np.asarray([vocab[s] for s in slot], dtype=object),
        budget=np.asarray(instances.budget, dtype=np.float64),
        outcomes=outcomes,
        features=features,
        vocabulary=vocabulary,
        meta=meta,
        cluster_tokens=np.where(
            np.asarray(instances.record_mask, bool),
            np.asarray(instances.record_lengths, dtype=np.float64),
            0.0,
        ).sum(axis=1),
    )


def simulate_paired(
    key: jax.Array,
    scenario: str | sim.Scenario,
    n_instances: int,
    budgets: ArrayLike | None = None,
    *,
    packing: str | None = None,
    coupling: str = "shared",
) -> PairedData:
    """Paired data from a ``sim`` scenario (a preset name or a scenario config).

    Args:
      key: root JAX key; split at once into the instance draw and the outcome draw.
      scenario: a name of ``sim.PRESETS`` or a ``sim.Scenario``.
      n_instances: number of instances.
      budgets: optional budget grid passed to ``sim.simulate_instances``.
      packing: packing for feature 3; default the scenario's own.
      coupling: see ``paired_from_instances``.

    Returns:
      ``PairedData``; ``meta_p_<action>`` columns keep the true success probabilities.

    References: MODEL §8.
    """
    (data,) = simulate_paired_chunks(
        key, scenario, n_instances, budgets, packing=packing, coupling=coupling, rows=None
    )
    return data


#: Rows per ``PairedData`` that ``simulate_paired_chunks`` yields by default: the Python objects
#: of a chunk (ids, meta cells, ``evidence_structure`` dicts) take a few MiB.
CHUNK_ROWS = 2048


def simulate_paired_chunks(
    key: jax.Array,
    scenario: str | sim.Scenario,
    n_instances: int,
    budgets: ArrayLike | None = None,
    *,
    packing: str | None = None,
    coupling: str = "shared",
    rows: int | None = CHUNK_ROWS,
) -> Iterator[PairedData]:
    """``simulate_paired``'s rows as consecutive ``PairedData`` of at most ``rows`` rows each
    (``None``: one), in order; their concatenation is ``simulate_paired``'s result, value for value.

    The draw is made once (the instances and the outcome uniforms of all ``n_instances`` rows);
    only the rows' columns (ids, features, meta cells, structures) are built a chunk at a time, so
    a writer that takes the chunks in turn holds one chunk's Python objects at a time.

    References: MODEL §8.
    """
    import sim

    k_inst, k_out = jax.random.split(key)
    config = sim.load_scenario(scenario) if isinstance(scenario, str) else scenario
    instances = sim.simulate_instances(k_inst, config, int(n_instances), budgets=budgets)
    packing = packing or config.packing
    check_choice("coupling", coupling, COUPLINGS)
    check_choice("vocabulary", config.vocabulary, VOCABULARIES)
    check_packing("packing", packing)
    n = instances.success_prob.shape[0]
    u = _uniforms(k_out, n, coupling)
    step = n if rows is None else max(int(rows), 1)
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        part = instances._replace(
            **{f: v[lo:hi] for f, v in zip(instances._fields, instances) if v is not None}
        )
        yield _paired_rows(
            part,
            u[lo:hi],
            lo,
            vocabulary=config.vocabulary,
            packing=packing,
            prefix="sim",
            structure_packing=config.packing,
        )
