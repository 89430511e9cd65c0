"""The kernel's draws: the scenario split into static structure and numeric parameters, and
one query's random draw (type, evidence cluster, distractors, retriever scores, cluster
redundancy) from its own key (``query_keys``: one per global query index).

References: MODEL §1-§2.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from retcon.vocab import OPERATORS
from sim._scenario import Scenario
from theory import DIST_PARAMS, sample_lengths

REDUNDANCY_CONCENTRATION = 20.0  # r_c ~ Beta(r * 20, (1 - r) * 20): mean r, sd ~ sqrt(r(1-r)/21)
N_OPS = len(OPERATORS)
MISS_STREAM = 1  # fold_in(query key, MISS_STREAM): the retriever's misses, apart from the 6 splits
FAMILIES = tuple(DIST_PARAMS)  # length families and their order: theory's one table


class KernelStructure(NamedTuple):
    """The static (shape-setting) part of a scenario; one compilation per distinct value."""

    families: tuple[str, ...]  # record-length family per vocabulary slot
    k_max: int
    n_distractors: int
    packing: str
    misses: bool = False  # retriever recall below 1: draw which evidence records are found


class Params(NamedTuple):
    """The numeric part of a scenario as arrays over vocabulary slots (4) and operators (3)."""

    log_weights: jax.Array  # (4,) log query-mix weights; -inf for absent types
    records: jax.Array  # (4,) int32 records per cluster
    redundancy: jax.Array  # (4,) mean cross-record redundancy r
    len_p1: jax.Array  # (4,) first length parameter (length/max/mean/shape/sigma)
    len_p2: jax.Array  # (4,) second length parameter (scale) or 0
    acc_raw: jax.Array  # (4,) a_t
    acc_guess: jax.Array  # () g
    compress: jax.Array  # (3,) rho per operator
    fidelity: jax.Array  # (3, 4) phi per operator and type
    noise: jax.Array  # () retriever noise
    recall: jax.Array  # () retriever recall: P(an evidence record is found)


class Draw(NamedTuple):
    """One query's random draw (shapes for one query; ``vmap`` adds the query axis)."""

    query_type: jax.Array  # () int32 slot in the vocabulary
    ev_len: jax.Array  # (K,) evidence record lengths, 0 on padding
    ev_mask: jax.Array  # (K,) bool, True on the cluster's records
    ev_score: jax.Array  # (K,) retriever scores, -inf on padding
    dis_len: jax.Array  # (D,) distractor lengths
    dis_score: jax.Array  # (D,) distractor scores
    redundancy: jax.Array  # () the cluster's own redundancy r_c
    retrieved: (
        jax.Array
    )  # (K,) bool, the cluster's records the retriever finds (ev_mask at recall 1)
    intact: jax.Array | None = None  # () bool, every record found; None when recall is 1 (static)


def split(scenario: Scenario) -> tuple[KernelStructure, Params]:
    """Split a scenario into its static structure and its numeric parameters (vocabulary slots)."""
    vocab = scenario.query_types
    by_name = {t.name: t for t in scenario.types}
    fam, w, rec, red, p1, p2, acc, phi = [], [], [], [], [], [], [], []
    for name in vocab:
        t = by_name.get(name)
        if t is None:
            fam.append("point")
            w.append(-np.inf)
            rec.append(1)
            red.append(0.0)
            p1.append(1.0)
            p2.append(0.0)
            acc.append(1.0)
            phi.append((1.0,) * N_OPS)
            continue
        # a listed type keeps its family even at weight 0, so reweighting never recompiles
        fam.append(t.length.dist)
        w.append(math.log(t.weight) if t.weight > 0 else -np.inf)
        rec.append(t.records)
        red.append(t.redundancy)
        a, b = t.length.pair
        p1.append(a)
        p2.append(b)
        acc.append(t.acc_raw)
        phi.append(t.fidelity)
    st = KernelStructure(
        tuple(fam),
        scenario.k_max,
        scenario.retriever.distractors,
        scenario.packing,
        scenario.retriever.recall < 1.0,
    )
    f32 = partial(jnp.asarray, dtype=jnp.float32)
    pr = Params(
        log_weights=f32(w),
        records=jnp.asarray(rec, jnp.int32),
        redundancy=f32(red),
        len_p1=f32(p1),
        len_p2=f32(p2),
        acc_raw=f32(acc),
        acc_guess=f32(scenario.acc_guess),
        compress=f32([o.compress_ratio for o in scenario.operators]),
        fidelity=f32(np.asarray(phi, dtype=np.float32).T),
        noise=f32(scenario.retriever.noise),
        recall=f32(scenario.retriever.recall),
    )
    return st, pr


def _lengths_of_type(key, t, st: KernelStructure, pr: Params, n: int) -> jax.Array:
    """``n`` record lengths of query type ``t``: one draw per distinct family, then select."""
    families = sorted(set(st.families), key=FAMILIES.index)
    if len(families) == 1:
        return sample_lengths(
            jax.random.fold_in(key, FAMILIES.index(families[0])),
            families[0],
            pr.len_p1[t],
            pr.len_p2[t],
            (n,),
        )
    draws = jnp.stack(
        [
            sample_lengths(
                jax.random.fold_in(key, FAMILIES.index(f)), f, pr.len_p1[t], pr.len_p2[t], (n,)
            )
            for f in families
        ]
    )
    fam_of_type = jnp.asarray([families.index(f) for f in st.families], jnp.int32)
    return draws[fam_of_type[t]]


def draw_query(key: jax.Array, st: KernelStructure, pr: Params) -> Draw:
    """Draw one query: type, evidence cluster, distractors, retriever scores (MODEL §1-§2).

    With ``st.misses`` each cluster record is found with probability ``pr.recall``, from a key
    folded in apart (``MISS_STREAM``), so every other draw is the one of recall 1; a missed record
    gets score ``-inf`` (it is not a candidate) and ``candidate_records`` gives it length 0. The
    uniforms are shared across recall values: a lower recall misses a superset of the records.
    """
    k_type, k_len, k_dis, k_ev_noise, k_dis_noise, k_red = jax.random.split(key, 6)
    K, D = st.k_max, st.n_distractors
    t = jax.random.categorical(k_type, pr.log_weights).astype(jnp.int32)
    ev = _lengths_of_type(k_len, t, st, pr, K)
    mask = jnp.arange(K) < pr.records[t]
    ev = jnp.where(mask, ev, 0.0)
    dis = _lengths_of_type(k_dis, t, st, pr, D) if D else jnp.zeros((0,), jnp.float32)
    # oracle order is noise 0: scores exactly 1 (evidence) and 0 (distractors), ties kept in order
    ev_score = 1.0 + pr.noise * jax.random.normal(k_ev_noise, (K,))
    dis_score = pr.noise * jax.random.normal(k_dis_noise, (D,))
    ev_score = jnp.where(mask, ev_score, -jnp.inf)
    r_c = cluster_redundancy(k_red, pr.redundancy[t], pr.records[t])
    retrieved, intact = mask, None
    if st.misses:
        u = jax.random.uniform(jax.random.fold_in(key, MISS_STREAM), (K,))
        retrieved = mask & (u < pr.recall)
        intact = jnp.all(retrieved == mask)
        ev_score = jnp.where(retrieved, ev_score, -jnp.inf)
    return Draw(
        t,
        ev,
        mask,
        ev_score,
        dis,
        dis_score.astype(jnp.float32),
        r_c.astype(jnp.float32),
        retrieved,
        intact,
    )


UNUSED_BETA = 10.0  # Beta(10, 10): the parameter of a draw the kernel discards (high acceptance)


def cluster_redundancy(key: jax.Array, r: jax.Array, records: jax.Array) -> jax.Array:
    """The cluster's own redundancy ``r_c ~ Beta(r c, (1 - r) c)`` (``c`` the concentration), 0 for
    a single record or ``r = 0`` (MODEL §1).

    The draw is discarded where ``r_c`` is 0; there it is drawn with ``Beta(10, 10)`` instead of
    the used parameters. Each element of a batched beta depends only on its own key and
    parameters, so every used value is unchanged, but a batched gamma draw rejects until its last
    element accepts, and ``r = 0`` (parameters clipped to ``1e-3``) is the worst acceptance there
    is: every query paid for the single-hop queries' discarded draws.
    """
    c = REDUNDANCY_CONCENTRATION
    used = (r > 0) & (records > 1)
    a = jnp.where(used, jnp.maximum(r * c, 1e-3), UNUSED_BETA)
    b = jnp.where(used, jnp.maximum((1.0 - r) * c, 1e-3), UNUSED_BETA)
    return jnp.where(used, jax.random.beta(key, a, b), 0.0)


def query_keys(root: jax.Array, idx: jax.Array) -> jax.Array:
    """One key per query from its global index, so chunking and sharding never shift a draw."""
    return jax.vmap(lambda i: jax.random.fold_in(root, i))(idx)
