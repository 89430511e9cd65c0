"""The kernel's draws: the scenario split into static structure and numeric parameters, and
one query's random draw (type, evidence cluster, distractors, retriever scores, cluster
redundancy) from its own key (``query_keys``: one per global query index).

Below the JAX functions, their numpy twins (``sim.numpy_kernel``'s draws, record-major, numpy's
``Generator``: equal in distribution), ``split_arrays`` (``split`` without JAX) and the keys in
numpy (``key_of_seed``, ``split_key``, ``fold_in_key``: JAX's Threefry, bit for bit). The table in
``sim/kernel/__init__.py`` names the test that pins each pair.

References: MODEL §1-§2.
"""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from retcon.bootstrap import key_words
from retcon.vocab import OPERATORS
from sim._scenario import Scenario
from theory import DIST_PARAMS

if TYPE_CHECKING:
    import jax
    import jax.numpy as jnp
else:
    from sim.kernel._jax import jax, jnp

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
    st, values = split_arrays(scenario)
    return st, Params(*(jnp.asarray(v) for v in values))


def split_arrays(scenario: Scenario) -> tuple[KernelStructure, tuple[np.ndarray, ...]]:
    """``split`` in numpy, without JAX: the structure and the fields of ``Params`` in their order,
    as numpy arrays of the same dtypes (float32, ``records`` int32) and the same numbers."""
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
    f32 = partial(np.asarray, dtype=np.float32)
    values = dict(
        log_weights=f32(w),
        records=np.asarray(rec, np.int32),
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
    return st, tuple(values[f] for f in Params._fields)


def _lengths_of_type(key, t, st: KernelStructure, pr: Params, n: int) -> jax.Array:
    """``n`` record lengths of query type ``t``: one draw per distinct family, then select."""
    from theory import sample_lengths  # JAX: imported when the JAX path runs

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


# ---- numpy twin (sim.numpy_kernel's draws): the same distributions, record-major, drawn
# by numpy's Generator; pinned in distribution by tests/sim/test_sim_numpy_kernel.py ----


class NpParams(NamedTuple):
    """``sim.kernel.Params`` as numpy arrays (vocabulary slots 4, operators 3)."""

    weights: np.ndarray  # (4,) query-mix probabilities
    records: np.ndarray  # (4,) int
    redundancy: np.ndarray  # (4,)
    len_p1: np.ndarray  # (4,)
    len_p2: np.ndarray  # (4,)
    acc_raw: np.ndarray  # (4,)
    acc_guess: np.float32
    compress: np.ndarray  # (3,)
    fidelity: np.ndarray  # (3, 4)
    noise: np.float32


class NpDraw(NamedTuple):
    """Draws for ``n`` queries: ``query_type (n,)``, ``ev_len, ev_mask, ev_score (n, K)``,
    ``dis_len, dis_score (n, D)``, ``redundancy (n,)`` (query-major, the kernel's ``Draw``)."""

    query_type: np.ndarray
    ev_len: np.ndarray
    ev_mask: np.ndarray
    ev_score: np.ndarray
    dis_len: np.ndarray
    dis_score: np.ndarray
    redundancy: np.ndarray


class Columns(NamedTuple):
    """Draws for ``n`` queries, record-major: ``ev_len, ev_score (K, n)`` (padding: length 0, score
    ``-inf``), ``dis_len, dis_score (D, n)``, ``query_type, redundancy (n,)``."""

    query_type: np.ndarray
    ev_len: np.ndarray
    ev_score: np.ndarray
    dis_len: np.ndarray
    dis_score: np.ndarray
    redundancy: np.ndarray


def params_of(scenario):
    """``(structure, NpParams)`` of a scenario, from the kernel's own split (same numbers)."""
    st, values = split_arrays(scenario)
    v = dict(zip(Params._fields, values))
    lw = np.asarray(v["log_weights"], np.float64)
    w = np.exp(lw - lw[np.isfinite(lw)].max())
    f32 = lambda x: np.asarray(x, np.float32)  # noqa: E731
    return st, NpParams(
        w / w.sum(),
        np.asarray(v["records"]),
        f32(v["redundancy"]),
        f32(v["len_p1"]),
        f32(v["len_p2"]),
        f32(v["acc_raw"]),
        np.float32(v["acc_guess"]),
        f32(v["compress"]),
        f32(v["fidelity"]),
        np.float32(v["noise"]),
    )


def chunk_rng(key, chunk_index: int) -> np.random.Generator:
    """The ``Generator`` of one chunk: SFC64 (the fastest of numpy's bit generators for the normal
    draws that dominate) seeded with the key's words (``retcon.bootstrap.key_words``: a JAX key or
    its words, ``key_of_seed``) and the chunk's index."""
    ss = np.random.SeedSequence(key_words(key), spawn_key=(int(chunk_index),))
    return np.random.Generator(np.random.SFC64(ss))


def record_lengths(
    rng: np.random.Generator, families, t: np.ndarray, pr: NpParams, k: int
) -> np.ndarray:
    """``(k, n)`` record lengths (``theory.sample_lengths`` in numpy): the type picks the family
    and its parameters; lengths are at least ``1e-30``."""
    n = t.shape[0]
    fam = sorted(set(families))
    if len(fam) == 1 and np.ptp(pr.len_p1) == 0 and np.ptp(pr.len_p2) == 0:
        p1, p2 = pr.len_p1[0], pr.len_p2[0]  # one law for every type: scalars, no gather
    else:
        p1, p2 = pr.len_p1[t], pr.len_p2[t]
    out = np.empty((k, n), np.float32) if len(fam) > 1 else None
    for f in fam:
        if len(fam) == 1:
            sel, a, b, m = slice(None), p1, p2, n
        else:
            sel = np.flatnonzero(np.asarray([families[i] == f for i in range(4)])[t])
            if not sel.size:
                continue
            a, b, m = p1[sel], p2[sel], sel.size
        if f == "point":
            x = np.broadcast_to(a, (k, m)).astype(np.float32)
        elif f == "uniform":
            x = a * (np.float32(1) - rng.random((k, m), np.float32))
        elif f == "exponential":
            x = a * rng.standard_exponential((k, m), np.float32)
        elif f == "gamma":
            x = b * rng.standard_gamma(np.broadcast_to(a, (k, m))).astype(np.float32)
        elif f == "lognormal":
            x = rng.standard_normal((k, m), np.float32)
            x *= a
            np.exp(x, out=x)
            x *= b
        elif f == "weibull":
            x = b * rng.standard_exponential((k, m), np.float32) ** (np.float32(1) / a)
        else:  # pragma: no cover - the scenario rejects other families
            raise ValueError(f)
        if out is None:  # one family: its draws are the lengths
            out = np.asarray(x, np.float32)
            if out is x and not out.flags.writeable:
                out = out.copy()
        else:
            out[:, sel] = x
    assert out is not None
    np.maximum(out, np.float32(1e-30), out=out)
    return out


def query_types(rng: np.random.Generator, n: int, weights: np.ndarray) -> np.ndarray:
    """``rng.choice(len(weights), size=n, p=weights)``, the same int64 values from the same
    uniforms (numpy's own steps: the normalized cumulative weights, one ``rng.random(n)``, the
    count of cumulative weights at or below each uniform), without ``choice``'s checks and its
    binary search: a comparison per type."""
    cdf = np.asarray(weights, np.float64).cumsum()
    cdf /= cdf[-1]
    u = rng.random(n)
    t = np.zeros(n, np.int64)
    for w in cdf[:-1]:  # the last is 1, above every uniform
        t += u >= w
    return t


class ClusterTotals(NamedTuple):
    """The cluster's sums over its slots, ``(n,)`` each (float32, slot order): ``total`` (raw),
    ``total_rw`` (under ``rewrite``), ``gen (2, n)`` (the ``merge`` / ``abstract`` record) and
    ``odd``, the queries outside the frontier's closed form (``frontier_closed_form``)."""

    total: np.ndarray
    total_rw: np.ndarray
    gen: np.ndarray
    odd: np.ndarray


def cluster_totals(ev: np.ndarray, redundancy: np.ndarray, compress: np.ndarray) -> ClusterTotals:
    """The cluster's totals from ``ev (K, n)`` (record-major lengths, 0 where no record) and the
    cluster's redundancy ``(n,)``. ``odd``: an action without an evidence unit of positive length
    (no record, or a rewritten length that rounds to 0 where the raw one does not) or an empty
    generated record; there ``frontier_closed_form`` defers to the ranked frontier, which reads
    every distractor (MODEL §2, prefix packing)."""
    f32 = np.float32
    K = ev.shape[0]
    pos = ev > 0
    total = ev[0].copy()
    for j in range(1, K):
        total += ev[j]
    rho = compress[2]
    total_rw = ev[0] * rho
    odd = pos[0] != (total_rw > 0)
    for j in range(1, K):
        rw = ev[j] * rho
        total_rw += rw
        odd |= pos[j] != (rw > 0)
    gen = (compress[:2, None] * (f32(1) - redundancy)[None]) * total[None]  # (2, n)
    odd |= ~pos.any(0) | ~(gen > 0).all(0)
    return ClusterTotals(total, total_rw, gen, odd)


def _outside_closed_form(ev: np.ndarray, r_c: np.ndarray, compress: np.ndarray) -> np.ndarray:
    """``cluster_totals(ev, r_c, compress).odd`` for the draws of ``draw_columns`` (every record
    at least ``1e-30`` tokens, ``r_c <= 1``). With every compression ratio at least ``1e-6`` that
    is the cluster whose redundancy rounds to 1: a rewritten record keeps at least ``1e-36``
    tokens, and below ``r_c = 1`` the generated record at least ``1e-6 * 2**-24 * 1e-30``, above
    float32's least subnormal. Smaller ratios ask ``cluster_totals``."""
    if compress.min() >= 1e-6:
        return r_c >= 1
    return cluster_totals(ev, r_c, compress).odd


def draw_columns(rng: np.random.Generator, n: int, st, pr: NpParams) -> Columns:
    """Draw ``n`` queries as ``sim.kernel.draw_query`` does (same distributions), record-major.

    Only the draws that the frontier reads are made; the rest are left at their neutral value
    (length 0, score ``-inf``), which is equal in distribution for every output of the kernel:

    - a length and a score for each of the cluster's records (the ``records`` of its type, not
      ``k_max`` slots);
    - a score for every distractor, and a length only for those scored above the cluster's least
      evidence score (the ``through`` distractors of ``frontier_closed_form``): the others rank
      after the cluster's last unit, where neither packing threshold reads them. A query outside
      the closed form (``cluster_totals``' ``odd``) gets every distractor's length. Lengths are
      independent of the scores, so the lengths drawn for the distractors that the scores select
      have the law of the lengths that the full draw gives them.

    The cluster's redundancy ``r_c ~ Beta(r c, (1 - r) c)`` is drawn only for the queries whose
    cluster has more than one record and ``r > 0``; the others have ``r_c = 0`` (MODEL §1).
    Stream order: type, evidence lengths, evidence scores, distractor scores, redundancy,
    distractor lengths.
    """
    K, D = st.k_max, st.n_distractors
    f32 = np.float32
    t = query_types(rng, n, pr.weights)
    k = pr.records[t]
    # the queries with a record in slot j (every query has one in slot 0: records >= 1)
    at = [np.flatnonzero(k > j) for j in range(1, K)]
    cut = np.cumsum([n] + [a.size for a in at])
    ev = np.zeros((K, n), f32)
    ev_score = np.full((K, n), -np.inf, f32)
    lengths = record_lengths(rng, st.families, np.concatenate([t] + [t[a] for a in at]), pr, 1)[0]
    scores = rng.standard_normal(cut[-1], f32)
    scores *= pr.noise
    scores += f32(1)
    for out, x in ((ev, lengths), (ev_score, scores)):
        out[0] = x[:n]
        for j, a in enumerate(at, 1):
            out[j, a] = x[cut[j - 1] : cut[j]]
    dis_score = rng.standard_normal((D, n), f32)
    dis_score *= pr.noise
    r_c = np.zeros(n, f32)
    c = REDUNDANCY_CONCENTRATION
    for i in np.flatnonzero((pr.redundancy > 0) & (pr.records > 1)):  # one draw per query type
        used = np.flatnonzero(t == i)
        r = float(pr.redundancy[i])
        r_c[used] = rng.beta(max(r * c, 1e-3), max((1.0 - r) * c, 1e-3), used.size)
    dis = np.zeros((D, n), f32)
    if D:
        low = scores[:n].copy()  # the least evidence score
        for j, a in enumerate(at, 1):
            low[a] = np.minimum(low[a], scores[cut[j - 1] : cut[j]])
        read = dis_score > low
        read |= _outside_closed_form(ev, r_c, pr.compress)
        cells = np.flatnonzero(read)  # distractor j of query i at j * n + i
        dis.ravel()[cells] = record_lengths(rng, st.families, t[cells % n], pr, 1)[0]
    return Columns(t, ev, ev_score, dis, dis_score, r_c)


def draw_of_columns(c: Columns) -> NpDraw:
    """Record-major ``Columns`` as query-major draws (the per-budget references read these)."""
    return NpDraw(
        c.query_type,
        np.ascontiguousarray(c.ev_len.T),
        np.ascontiguousarray(np.isfinite(c.ev_score).T),
        np.ascontiguousarray(c.ev_score.T),
        np.ascontiguousarray(c.dis_len.T),
        np.ascontiguousarray(c.dis_score.T),
        c.redundancy,
    )


def columns_of(d: NpDraw) -> Columns:
    """Query-major draws (the JAX kernel's ``Draw`` as numpy) as record-major ``Columns``."""
    c = lambda x: np.ascontiguousarray(np.asarray(x, np.float32).T)  # noqa: E731
    return Columns(
        np.asarray(d.query_type),
        c(d.ev_len),
        c(np.where(d.ev_mask, d.ev_score, -np.inf)),
        c(d.dis_len),
        c(d.dis_score),
        np.asarray(d.redundancy, np.float32),
    )


# Keys in numpy: JAX's default PRNG (threefry2x32, ``jax_threefry_partitionable``) for the words
# the numpy path reads, so it derives its keys from a seed without importing JAX and every number
# stays the one of the JAX key (tests/sim/test_sim_kernel.py pins them bit for bit over many seeds).

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(key, x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Threefry-2x32 hash (20 rounds; Salmon et al. 2011) of the counter pairs ``(x0, x1)``
    under the key words ``key = (k0, k1)``, as JAX's ``threefry2x32_p`` computes it."""
    k0, k1 = (np.uint32(int(k)) for k in key)
    ks = (k0, k1, np.uint32(k0 ^ k1 ^ np.uint32(0x1BD11BDA)))
    with np.errstate(over="ignore"):
        x0 = np.asarray(x0, np.uint32) + ks[0]
        x1 = np.asarray(x1, np.uint32) + ks[1]
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x0 = x0 + x1
                x1 = (x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))
                x1 = x1 ^ x0
            x0 = x0 + ks[(i + 1) % 3]
            x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x0, x1


def key_of_seed(seed: int) -> np.ndarray:
    """``jax.random.key_data(jax.random.key(seed))`` in numpy: ``(2,)`` uint32 words ``[0, seed mod
    2**32]`` (JAX with 64-bit types off, the project's setting, keeps the seed's low 32 bits)."""
    return np.asarray([0, int(seed) & 0xFFFFFFFF], np.uint32)


def split_key(key, num: int = 2) -> np.ndarray:
    """``jax.random.split`` on key words: ``(num, 2)`` uint32, key ``i`` the hash of the counter
    ``(0, i)``."""
    y0, y1 = threefry2x32(key_words(key), np.zeros(num, np.uint32), np.arange(num, dtype=np.uint32))
    return np.stack([y0, y1], axis=1)


def fold_in_key(key, data: int) -> np.ndarray:
    """``jax.random.fold_in`` on key words: ``(2,)`` uint32, the hash of the counter ``(0, data)``."""
    y0, y1 = threefry2x32(key_words(key), np.zeros(1, np.uint32), np.asarray([data], np.uint32))
    return np.concatenate([y0, y1])
