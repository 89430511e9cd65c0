"""Memory over time, simulated (MODEL §10): utility per policy against time, crossover times.

The kernel is vectorised over queries x times x budgets (``vmap`` over queries; the time and budget
axes are array axes); no Python loop over sessions. One simulated query is one stream: ``T``
session lengths ``L_s`` drawn i.i.d. from the stream's law, a query type from the scenario's mix
and a uniform ``u`` that fixes the evidence's age at every time (``n_t = floor(u t) + 1`` units must
fit under the ``uniform`` age law, ``n_t = t`` under ``oldest``), so every time of a query shares
its draws (common random numbers along time).

At time ``t`` the memory holds one unit per session ``s <= t`` with generation ``k_{t,s}`` set by
the policy, of length ``rho_o^k L_s`` and support ``phi_o^k`` for the query's type (H10). Units are
packed most recent first by the one packing kernel (``theory.pack``); the reader is the kernel's
(``quantized_success`` of the support times the evidence unit's kept fraction). Policies (MODEL
§10; operator ``o`` for every pass):

* ``retain-all``: ``k = 0``.
* ``periodic``: at every ``m``-th session the raw units older than ``w`` sessions get one pass
  (``k_{t,s} = 1`` for ``s <= m floor(t/m) - w``); with ``m = 1, w = 0`` every unit is passed once
  on arrival, the policy whose crossover against ``retain-all`` theory solves (``t*_o(B)``).
* ``overflow``: after each session, while the memory exceeds the cap ``K`` tokens, pass the unit
  with the fewest passes, oldest first (summaries of summaries once every unit is passed), up to
  ``max_generation`` passes per unit.
* ``budget-aware``: ``overflow`` with the cap set to the reader's budget ``B``: consolidate only
  while the memory does not fit the context (§6's rule for a point mass: consolidate iff ``L > B``).
* ``tiered``: the raw archive stays beside the ``overflow`` memory; per query the packer takes the
  raw memory when the raw evidence fits, else the consolidated one.

Also: the utility against the generation ``k`` (every unit passed ``k`` times) at the last session.

References: MODEL §10, §2; docs/timeline.md.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import theory
from retcon.errors import InputError, Spell, check_choice
from retcon.vocab import OPERATORS, TIMELINE_POLICIES  # §10's policies, sim.TIMELINE_POLICIES
from sim._stream import (
    TIMELINE_CHUNK,
    StreamScenario,
    bucket,
    check_queries,
    check_timeline_size,
)
from sim.kernel import GRID, kept_fraction, quantized_success
from theory import SUM_FAMILIES, cumsum_in_order, pack, sample_lengths

MAX_BY_GENERATION = 6  # utility against k for k = 0 .. this
CHUNK = TIMELINE_CHUNK  # queries per compiled call (sim._stream sizes it before any work)
MIN_SESSIONS = 8  # the smallest compiled time axis (`bucket`): every T <= 8 shares one trace


class StreamStatic(NamedTuple):
    """Static (compile-time) structure of a stream run."""

    sessions: int
    family: str
    packing: str
    age: str
    policies: tuple[str, ...]
    period: int
    window: int
    max_generation: int
    n_generations: int


class StreamParams(NamedTuple):
    """Numeric parameters (float32 jax arrays)."""

    len_p1: jax.Array
    len_p2: jax.Array
    log_weights: jax.Array  # (n_types,)
    acc_raw: jax.Array  # (n_types,)
    acc_guess: jax.Array
    compress: jax.Array  # (3,)
    fidelity: jax.Array  # (3, n_types)
    cap: jax.Array


def stream_params(ss: StreamScenario, policies) -> tuple[StreamStatic, StreamParams]:
    """Split a stream scenario into static structure and numeric parameters."""
    sc, st = ss.scenario, ss.stream
    f32 = partial(jnp.asarray, dtype=jnp.float32)
    p1, p2 = st.session_length.pair
    static = StreamStatic(
        st.sessions,
        st.session_length.dist,
        sc.packing,
        st.age,
        tuple(policies),
        st.period,
        st.window,
        st.max_generation,
        MAX_BY_GENERATION + 1,
    )
    weights = [t.weight for t in sc.types]
    params = StreamParams(
        len_p1=f32(p1),
        len_p2=f32(p2),
        log_weights=f32([math.log(w) if w > 0 else -np.inf for w in weights]),
        acc_raw=f32([t.acc_raw for t in sc.types]),
        acc_guess=f32(sc.acc_guess),
        compress=f32([o.compress_ratio for o in sc.operators]),
        fidelity=f32(np.asarray([t.fidelity for t in sc.types], np.float32).T),
        cap=f32(st.cap),
    )
    return static, params


def periodic_generations(sessions: int, period: int, window: int) -> np.ndarray:
    """``(T, T)`` generations of ``periodic(m, w)``: ``k[t-1, s-1] = 1`` iff ``s <= m floor(t/m) - w``."""
    t = np.arange(1, sessions + 1)[:, None]
    s = np.arange(1, sessions + 1)[None, :]
    return ((s <= period * (t // period) - window) & (s <= t)).astype(np.int32)


def prefix_sums(lengths) -> jax.Array:
    """``(T + 1,)`` running totals ``P[i] = L_0 + ... + L_{i-1}`` (``P[0] = 0``), left to right."""
    return jnp.concatenate([jnp.zeros((1,), lengths.dtype), cumsum_in_order(lengths)])


def generations_from_levels(levels, sessions: int) -> jax.Array:
    """Dense generations ``(..., T, T)`` from level counts ``(..., T, n_levels)``.

    ``levels[t, l - 1]`` is the number of units (oldest first) with at least ``l`` passes at time
    ``t`` (0-based); unit ``s`` then has ``k_{t,s} = #{l : s < levels[t, l - 1]}`` passes, and
    units after ``t`` are absent (``k = 0``). MODEL §10.
    """
    s = jnp.arange(sessions)
    return jnp.sum(s[:, None] < levels[..., None, :], axis=-1).astype(jnp.int32)


def pass_end(P, start, excess, power, rho, n) -> jax.Array:
    """One step of `overflow_levels`: the end (exclusive) of the run of units from ``start``, oldest
    first, that one more pass each brings to ``excess`` tokens saved or, if they cannot, to ``n``.

    ``P`` is `prefix_sums` of the lengths and ``power`` is ``rho^l`` for the level ``l`` of the
    units from ``start`` on. The saving of units ``start..e-1`` is
    ``power (1 - rho) (P[e] - P[start])``; the end is the first ``e`` whose saving reaches the
    excess. The step passes at least unit ``start`` (``start < n`` and ``excess > 0`` when it is
    called): in float32, ``P[start] + excess / (power (1 - rho))`` rounds to ``P[start]`` when the
    excess is below half a unit in the last place of ``P[start]``, and without that floor the
    level would not move and the loop would never end. MODEL §10 (``overflow``)."""
    threshold = P[start] + excess / (power * (1.0 - rho))
    end = jnp.searchsorted(P, threshold, side="left")
    return jnp.clip(end, start + 1, n).astype(jnp.int32)


def overflow_levels(lengths, rho, cap, max_generation: int) -> jax.Array:
    """``(T, max_generation)`` level counts of ``overflow(K)`` along time (``lax.scan`` over sessions).

    After session ``t`` arrives, while the memory (sessions ``<= t``) exceeds ``cap`` tokens, the
    unit with the fewest passes, oldest first, gets one more pass (``rho`` per pass), until every
    unit has ``max_generation`` passes. MODEL §10 (``overflow``).

    Under this rule a unit never has fewer passes than a younger one, so the memory at time ``t``
    is described by ``c_l``, the number of units (a prefix, oldest first) with at least ``l``
    passes, ``l = 1..max_generation``: row ``t`` of the result (`generations_from_levels` gives
    the dense ``k_{t,s}``). Sizes come from the running totals of the lengths (`prefix_sums`), so a
    step costs ``O(max_generation^2 + log T)``, not ``O(T)``: the scan is linear in ``T``.

    Passes are applied a level at a time: among the units with the fewest passes, the oldest ones
    whose running saving (oldest first) still falls short of the excess are passed together, which
    is the one-at-a-time rule's result (a binary search on the running totals); a level that
    cannot close the gap is passed whole and the loop goes on with the next.
    """
    T = lengths.shape[0]
    K = max_generation
    P = prefix_sums(lengths)
    powers = jnp.power(rho, jnp.arange(K + 1, dtype=jnp.float32))

    def step(c, t):
        n = t + 1  # units present

        def size(c):
            edges = jnp.concatenate([n[None], c, jnp.zeros((1,), jnp.int32)])
            return jnp.sum(powers * (P[edges[:-1]] - P[edges[1:]]))

        def lowest(c):  # the fewest passes among present units: the levels every unit has reached
            return jnp.sum(c >= n)

        def cond(c):
            return (size(c) > cap) & (lowest(c) < K)

        def body(c):
            low = lowest(c)
            start = c[low]  # oldest unit with exactly `low` passes
            return c.at[low].set(pass_end(P, start, size(c) - cap, powers[low], rho, n))

        c = jax.lax.while_loop(cond, body, c)
        return c, c

    _, out = jax.lax.scan(step, jnp.zeros((K,), jnp.int32), jnp.arange(T, dtype=jnp.int32))
    return out


def overflow_generations(lengths, rho, cap, max_generation: int) -> jax.Array:
    """``(T, T)`` generations of ``overflow(K)`` along time: `overflow_levels` made dense.
    MODEL §10 (``overflow``)."""
    return generations_from_levels(
        overflow_levels(lengths, rho, cap, max_generation), lengths.shape[0]
    )


def periodic_levels(sessions: int, period: int, window: int) -> np.ndarray:
    """``(T, 1)`` level counts of ``periodic(m, w)``: ``c_1 = clip(m floor(t/m) - w, 0, t)``."""
    t = np.arange(1, sessions + 1)
    return np.clip(period * (t // period) - window, 0, t).astype(np.int32)[:, None]


def _newest_first(T: int) -> tuple[np.ndarray, np.ndarray]:
    """``idx[t, j] = t - j`` (the unit at rank ``j`` at time ``t``, 0-based) and its validity."""
    t = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return np.clip(t - j, 0, T - 1), (t - j) >= 0


def evidence_outcome(
    lengths, gens, n_units, qtype, op: int, budgets, st: StreamStatic, pr, times=None
):
    """Quantized success ``(nB, Tsel)`` of the query's evidence at each budget and time.

    Args:
      lengths: ``(T,)`` session lengths. gens: ``(nB or 1, Tsel, T)`` generations per time row.
      n_units: ``(Tsel,)`` units that must fit (the evidence is the ``n``-th most recent).
      qtype: the query type. op: operator index (ignored where every ``k`` is 0).
      budgets: ``(nB,)``. times: ``(Tsel,)`` 0-based time of each row (may be traced).

    Rows of ``gens`` are the times ``times`` (default the last ``Tsel`` sessions,
    ``T - Tsel + 1 .. T``).
    """
    T = st.sessions
    tsel = gens.shape[-2]
    if times is None:
        idx, valid = _newest_first(T)
        idx, valid = idx[T - tsel :], valid[T - tsel :]
    else:  # the rows of `_newest_first` at the given times
        ago = times[:, None] - jnp.arange(T)[None, :]
        idx, valid = jnp.clip(ago, 0, T - 1), ago >= 0
    g_ord = jnp.take_along_axis(gens, jnp.broadcast_to(idx, gens.shape), axis=-1)
    unit = lengths[idx] * jnp.power(pr.compress[op], g_ord.astype(jnp.float32))
    unit = jnp.where(valid, unit, jnp.zeros((), unit.dtype))
    unit = jnp.broadcast_to(unit, (budgets.shape[0],) + unit.shape[-2:])
    kept = pack(unit, budgets[:, None], st.packing)  # (nB, Tsel, T)
    j = (n_units - 1)[None, :, None]
    kept_e = jnp.take_along_axis(kept, jnp.broadcast_to(j, kept.shape[:2] + (1,)), -1)[..., 0]
    len_e = jnp.take_along_axis(unit, jnp.broadcast_to(j, unit.shape[:2] + (1,)), -1)[..., 0]
    gen_e = jnp.take_along_axis(
        jnp.broadcast_to(g_ord, unit.shape), jnp.broadcast_to(j, unit.shape[:2] + (1,)), -1
    )[..., 0]
    phi = jnp.power(pr.fidelity[op, qtype], gen_e.astype(jnp.float32))
    support = phi * kept_fraction(kept_e, len_e)
    return quantized_success(support, pr.acc_raw[qtype], pr.acc_guess), kept_e >= len_e


def evidence_levels(
    P, lengths, levels, n_units, qtype, op: int, budgets, st: StreamStatic, pr, times=None
):
    """`evidence_outcome` from level counts, ``O(n_levels)`` per time instead of ``O(T)``.

    Args:
      P: `prefix_sums` of ``lengths`` ``(T + 1,)``. lengths: ``(T,)``.
      levels: ``(nB or 1, Tsel, n_levels)`` level counts per time row (`overflow_levels`).
      n_units: ``(Tsel,)``; qtype, op, budgets, times: as `evidence_outcome`.

    With ``prefix`` and ``cut`` packing, most recent first, the evidence (the ``n``-th most recent
    unit, ``s_e = t - n + 1``) keeps its tokens by the total of the newer units alone:
    ``kept = L_e`` if ``before + L_e <= B``, else 0 (``prefix``) or ``clip(B - before, 0, L_e)``
    (``cut``), where ``before = sum_l rho^l (mass of sessions s_e + 1 .. t with exactly l
    passes)``, read off the running totals ``P``. The same numbers as packing every unit, up to
    float32 rounding of ``before`` (another summation order: a unit at the budget's edge can
    differ). ``skip`` packing depends on every unit's fit and keeps `evidence_outcome`. MODEL §10.
    """
    T = st.sessions
    tsel = levels.shape[-2]
    n_lev = levels.shape[-1]
    t = jnp.arange(T - tsel, T, dtype=jnp.int32) if times is None else times  # 0-based, per row
    rho = pr.compress[op]
    powers = jnp.power(rho, jnp.arange(n_lev + 1, dtype=jnp.float32))
    s_e = t - (n_units - 1)  # the evidence unit, 0-based
    edges = jnp.concatenate(
        [
            jnp.broadcast_to((t + 1)[:, None], levels.shape[:-1] + (1,)),
            levels,
            jnp.zeros(levels.shape[:-1] + (1,), jnp.int32),
        ],
        axis=-1,
    )  # (.., Tsel, n_lev + 2), non-increasing
    lo, hi = (s_e + 1)[:, None], (t + 1)[:, None]
    e = jnp.clip(edges, lo, hi)
    before = jnp.sum(powers * (P[e[..., :-1]] - P[e[..., 1:]]), axis=-1)  # (.., Tsel)
    gen_e = jnp.sum(s_e[:, None] < levels, axis=-1).astype(jnp.int32)
    len_e = lengths[s_e] * jnp.power(rho, gen_e.astype(jnp.float32))
    b = budgets[:, None]
    total = before + len_e
    if st.packing == "prefix":
        kept_e = jnp.where(total <= b, len_e, jnp.zeros((), len_e.dtype))
    else:  # cut
        kept_e = jnp.where(total <= b, len_e, jnp.clip(b - before, 0.0, len_e))
    phi = jnp.power(pr.fidelity[op, qtype], gen_e.astype(jnp.float32))
    support = phi * kept_fraction(kept_e, len_e)
    return quantized_success(support, pr.acc_raw[qtype], pr.acc_guess), kept_e >= len_e


def _last_session(st: StreamStatic, sessions):
    """The stream's last session ``T`` (``st.sessions``, or the traced ``sessions`` of a stream
    padded to ``st.sessions``) and the 0-based time row ``(1,)`` where it is read."""
    T = st.sessions if sessions is None else sessions
    return T, jnp.reshape(jnp.asarray(T, jnp.int32) - 1, (1,))


def query_timeline(key, budgets, st: StreamStatic, pr: StreamParams, sessions=None):
    """One stream: ``(rows, nB, T)`` quantized successes and ``(n_ops, K + 1, nB)`` by generation.

    Rows: ``retain-all``, then for each operator (``OPERATORS`` order) each consolidating policy of
    ``st.policies``. ``prefix`` and ``cut`` packing run on level counts (`evidence_levels`,
    `overflow_levels`): the cost per stream is linear in ``T``; ``skip`` runs
    `query_timeline_dense` (``O(T^2)``). MODEL §10.

    ``sessions``: the stream's ``T`` (may be traced) when ``st.sessions`` is a padded size: every
    time row ``t < T`` depends on the sessions ``<= t`` alone (the draws of a longer stream begin
    with those of a shorter one), so rows up to ``T`` are the unpadded numbers and the rest are
    dropped by the caller; ``by_generation`` is read at session ``T``.
    """
    if st.packing == "skip":
        return query_timeline_dense(key, budgets, st, pr, sessions)
    T = st.sessions
    last, last_row = _last_session(st, sessions)
    lengths, qtype, n_units = draw_stream(key, st, pr)
    n_last = n_units[last_row]
    P = prefix_sums(lengths)

    def outcome(levels, op, n=n_units, times=None):
        return evidence_levels(P, lengths, levels, n, qtype, op, budgets, st, pr, times)

    m_ret, fits_raw = outcome(jnp.zeros((1, T, 0), jnp.int32), 0)
    periodic = jnp.asarray(periodic_levels(T, st.period, st.window))[None]

    def overflow(rho, cap):
        return overflow_levels(lengths, rho, cap, st.max_generation)

    rows = [
        m_ret,
        *_policy_rows(
            st, pr, budgets, lambda lv, op: outcome(lv, op)[0], periodic, overflow, fits_raw, m_ret
        ),
    ]
    by_gen = []
    for op in range(len(OPERATORS)):
        n_lev = st.n_generations - 1
        ks = jnp.arange(st.n_generations, dtype=jnp.int32)
        # every unit passed k times at the last session: c_l = T for l <= k
        fixed = jnp.where(jnp.arange(1, n_lev + 1)[None, :] <= ks[:, None], last, 0)
        m_k = jax.vmap(lambda c, op=op: outcome(c[None, None, :], op, n_last, last_row)[0][:, 0])(
            fixed.astype(jnp.int32)
        )
        by_gen.append(m_k)
    return jnp.stack(rows), jnp.stack(by_gen)


def _policy_rows(st, pr, budgets, outcome, periodic, overflow, fits_raw, m_ret):
    """Each operator's rows (``OPERATORS`` order), one per consolidating policy (MODEL §10).

    ``outcome(marks, op)``: the ``(nB, T)`` successes of a marking (levels or generations, leading
    axis 1 or ``nB``); ``periodic``: the periodic marking; ``overflow(rho, cap)``: the overflow
    marking at compression ``rho`` under ``cap``. Shared by `query_timeline` (levels) and
    `query_timeline_dense` (generations); ``tiered`` keeps ``m_ret`` where raw fits.
    """
    rows = []
    for op in range(len(OPERATORS)):
        rho, over = pr.compress[op], None
        for policy in st.policies:
            if policy == "retain-all":
                continue
            if policy == "periodic":
                m = outcome(periodic, op)
            elif policy in ("overflow", "tiered"):
                if over is None:
                    over = outcome(overflow(rho, pr.cap)[None], op)
                m = over if policy == "overflow" else jnp.where(fits_raw, m_ret, over)
            else:  # budget-aware: the cap is the budget
                m = outcome(jax.vmap(lambda b, rho=rho: overflow(rho, b))(budgets), op)
            rows.append(m)
    return rows


def draw_stream(key, st: StreamStatic, pr: StreamParams):
    """A stream's draws: session lengths ``(T,)``, query type, units that must fit ``(T,)``."""
    T = st.sessions
    k_len, k_type, k_age = jax.random.split(key, 3)
    lengths = sample_lengths(k_len, st.family, pr.len_p1, pr.len_p2, (T,)).astype(jnp.float32)
    qtype = jax.random.categorical(k_type, pr.log_weights)
    u = jax.random.uniform(k_age, dtype=jnp.float32)
    t = jnp.arange(1, T + 1)
    if st.age == "uniform":
        n_units = jnp.minimum(jnp.floor(u * t.astype(jnp.float32)).astype(jnp.int32) + 1, t)
    else:
        n_units = t
    return lengths, qtype, n_units


def query_timeline_dense(key, budgets, st: StreamStatic, pr: StreamParams, sessions=None):
    """One stream: ``(rows, nB, T)`` quantized successes and ``(n_ops, K + 1, nB)`` by generation.

    Rows: ``retain-all``, then for each operator (``OPERATORS`` order) each consolidating policy of
    ``st.policies``. Every time row packs the whole memory (``O(T^2)`` per stream): the
    direct form of MODEL §10, run for ``skip`` packing and as `query_timeline`'s reference.
    ``sessions``: as `query_timeline` (units after a row's time are absent, so padding is too).
    """
    T = st.sessions
    _, last_row = _last_session(st, sessions)
    lengths, qtype, n_units = draw_stream(key, st, pr)
    n_last = n_units[last_row]
    zeros = jnp.zeros((1, T, T), jnp.int32)
    m_ret, fits_raw = evidence_outcome(lengths, zeros, n_units, qtype, 0, budgets, st, pr)
    periodic = jnp.asarray(periodic_generations(T, st.period, st.window))[None]

    def outcome(gens, op):
        return evidence_outcome(lengths, gens, n_units, qtype, op, budgets, st, pr)[0]

    def overflow(rho, cap):
        return overflow_generations(lengths, rho, cap, st.max_generation)

    rows = [m_ret, *_policy_rows(st, pr, budgets, outcome, periodic, overflow, fits_raw, m_ret)]
    by_gen = []
    for op in range(len(OPERATORS)):
        ks = jnp.arange(st.n_generations, dtype=jnp.int32)[:, None, None, None]
        fixed = jnp.broadcast_to(ks, (st.n_generations, 1, 1, T))
        m_k = jax.vmap(
            lambda g, op=op: evidence_outcome(
                lengths, g, n_last, qtype, op, budgets, st, pr, last_row
            )[0][:, 0]
        )(fixed)
        by_gen.append(m_k)
    return jnp.stack(rows), jnp.stack(by_gen)


@partial(jax.jit, static_argnames=("st",))
def _chunk(root, idx, budgets, pr: StreamParams, sessions, *, st: StreamStatic):
    """`query_timeline` of the streams ``idx``; ``st.sessions`` and ``budgets`` padded to their
    `bucket`, ``sessions`` the live ``T`` (traced: another ``T`` in the bucket reuses the trace)."""
    keys = jax.vmap(lambda i: jax.random.fold_in(root, i))(idx)
    return jax.vmap(lambda k: query_timeline(k, budgets, st, pr, sessions))(keys)


class TimelineResult(NamedTuple):
    """Per-query outcomes of a timeline run (probabilities, float64 numpy).

    Attributes:
      times: ``(T,)`` sessions 1..T. budgets: ``(nB,)``.
      rows: row labels ``(policy, operator)``; ``retain-all`` has operator ``None``.
      outcome: ``(Q, rows, nB, T)`` success probability of each query.
      by_generation: ``(Q, n_ops, K + 1, nB)`` at the last session, every unit passed ``k`` times.
    """

    times: np.ndarray
    budgets: np.ndarray
    rows: tuple[tuple[str, str | None], ...]
    outcome: np.ndarray
    by_generation: np.ndarray


def simulate_timeline(
    ss: StreamScenario, *, policies=TIMELINE_POLICIES, budgets=None, queries=None, seed: int = 0
) -> TimelineResult:
    """Simulate every policy and operator of ``ss`` (module docstring). MODEL §10.

    Args:
      ss: stream scenario (``sim.load_stream``).
      policies: subset of ``TIMELINE_POLICIES``; ``retain-all`` (the baseline) and ``periodic`` (which
        defines the crossover time) are always simulated.
      budgets: budgets in tokens (default: the scenario's grid). queries: default the scenario's.
      seed: JAX seed; the same seed gives the same bytes.
    """
    spell = Spell("simulate_timeline", cli={"policies": "--policy"})
    for p in policies:
        check_choice(spell.lead("policies"), p, TIMELINE_POLICIES)
    # retain-all is the baseline and periodic defines each operator's crossover time: always run
    pol = tuple(
        p for p in TIMELINE_POLICIES if p in set(policies) or p in ("retain-all", "periodic")
    )
    b = np.asarray(ss.scenario.budgets if budgets is None else budgets, np.float64)
    if b.ndim != 1 or b.size == 0 or not np.all(np.isfinite(b)) or not np.all(b > 0):
        raise InputError(
            f"{spell.lead('budgets')} must be positive numbers (tokens); got {b.tolist()}."
        )
    if np.any(np.diff(b) <= 0):
        raise InputError(f"{spell.lead('budgets')} must be strictly increasing; got {b.tolist()}.")
    q = check_queries(ss.scenario.queries if queries is None else queries, spell)
    check_timeline_size(ss, None if budgets is None else b, queries)  # before any allocation
    st, pr = stream_params(ss, pol)
    T, nb = st.sessions, b.size
    # compiled at bucketed sizes (the padding rows and budgets are dropped): one trace per bucket
    padded = st._replace(sessions=max(MIN_SESSIONS, bucket(T)))
    b_pad = np.concatenate([b, np.repeat(b[-1:], bucket(nb) - nb)])
    root = jax.random.key(seed)
    bj = jnp.asarray(b_pad, jnp.float32)
    live = jnp.int32(T)
    outs, gens = [], []
    for start in range(0, q, CHUNK):
        idx = jnp.arange(start, start + CHUNK, dtype=jnp.uint32)
        o, g = _chunk(root, idx, bj, pr, live, st=padded)
        n = min(CHUNK, q - start)
        outs.append(np.asarray(o)[:n, :, :nb, :T])
        gens.append(np.asarray(g)[:n, ..., :nb])
    rows: list[tuple[str, str | None]] = [("retain-all", None)]
    for op in OPERATORS:
        rows += [(p, op) for p in pol if p != "retain-all"]
    outcome = np.concatenate(outs).astype(np.float64) / GRID
    by_gen = np.concatenate(gens).astype(np.float64) / GRID
    return TimelineResult(
        np.arange(1, st.sessions + 1, dtype=np.float64), b, tuple(rows), outcome, by_gen
    )


def _theory_applies(ss: StreamScenario) -> str | None:
    """``None`` when theory's ``t*_o(B)`` covers the scenario, else the reason it does not."""

    sc, st = ss.scenario, ss.stream
    if len([t for t in sc.types if t.weight > 0]) != 1:
        return "more than one query type"
    if sc.packing != "prefix":
        return f"packing {sc.packing} (theory: prefix)"
    if st.session_length.dist not in SUM_FAMILIES:
        return f"session lengths {st.session_length.dist} (theory: {', '.join(SUM_FAMILIES)})"
    if (st.period, st.window) != (1, 0):
        return "periodic policy with period != 1 or window != 0 (theory: every unit passed once)"
    try:  # theory's law of the sum of T lengths has its own cap on T (uniform: Irwin-Hall's)
        dist = theory.make_length_dist(st.session_length.dist, **dict(st.session_length.params))
        theory.sum_cdf(dist, st.sessions, 0.0)
    except InputError as e:
        return f"{st.sessions} sessions past theory's sum law ({e})"
    return None


def theory_crossover(ss: StreamScenario, op_index: int, budgets, times) -> dict:
    """Theory's ``t*_o(B)`` for operator ``op_index`` at each budget, on the simulation's time grid.

    Returns ``{"crossover_time": (nB,) root of -dU_t interpolated as the simulation's (log t),
    "first_win": (nB,) first session with dU_t > 0}``. MODEL §10.
    """

    sc, st = ss.scenario, ss.stream
    (t0,) = [t for t in sc.types if t.weight > 0]
    dist = theory.make_length_dist(st.session_length.dist, **dict(st.session_length.params))
    curve = theory.stream_curve(
        dist,
        budgets,
        st.sessions,
        age_law=st.age,
        compress_ratio=sc.operators[op_index].compress_ratio,
        fidelity=t0.fidelity[op_index],
        acc_raw=t0.acc_raw,
        acc_guess=sc.acc_guess,
    )
    d = curve.delta
    tol = 1e-12 * (np.abs(curve.u_op) + np.abs(curve.u_ret))
    d = np.where(np.abs(d) > tol, d, 0.0)
    return {
        "crossover_time": theory.grid_crossover(times, -d).crossover_budget,
        "first_win": theory.first_positive_time(d),
    }


def theory_by_generation(ss: StreamScenario, op_index: int, budgets, passes: int) -> np.ndarray:
    """Theory's ``U_T(B, k)`` at the last session with every unit passed ``k = 0..passes`` times
    (`theory.stream_generation_utility` on H10's chain of operator ``op_index``), ``(nB, K + 1)``;
    the exact value of `summarize_timeline`'s ``by_generation`` where theory applies. MODEL §10."""

    sc, st = ss.scenario, ss.stream
    (t0,) = [t for t in sc.types if t.weight > 0]
    dist = theory.make_length_dist(st.session_length.dist, **dict(st.session_length.params))
    support, ratio = theory.h10_chain(
        sc.operators[op_index].compress_ratio, t0.fidelity[op_index], passes
    )
    return theory.stream_generation_utility(
        dist, budgets, st.sessions, support=support, ratio=ratio, age_law=st.age,
        acc_raw=t0.acc_raw, acc_guess=sc.acc_guess,
    )  # fmt: skip


def summarize_timeline(
    ss: StreamScenario,
    r: TimelineResult,
    *,
    policies,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict:
    """The report of `simulate_timeline`: utility per policy against time with CIs, each
    operator's crossover time with its interval, the utility against the generation ``k``.

    Intervals: utility, ``mean +- z SE`` over queries (i.i.d. streams); crossover time, the
    percentile interval of `theory.crossover_interval` over query-bootstrap resamples of the
    ``periodic - retain-all`` curve along time (``dU_t`` negated, so the ``- -> +`` change is the
    rule's ``+ -> -`` root, interpolated in ``log t``). MODEL §10.
    """
    import scipy.stats as sst

    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 0:
        lead = Spell("summarize_timeline").lead("resamples")
        raise InputError(f"{lead} must be an integer >= 0; got {resamples!r}.")
    z = float(sst.norm.ppf(0.5 + level / 2))
    q = r.outcome.shape[0]
    mean = r.outcome.mean(0)
    se = r.outcome.std(0, ddof=1) / math.sqrt(q)
    utility = []
    for i, (policy, op) in enumerate(r.rows):
        if policy not in policies and policy != "retain-all":
            continue
        for j, b in enumerate(r.budgets):
            utility.append(
                {
                    "policy": policy,
                    "operator": op,
                    "budget": float(b),
                    "utility": mean[i, j],
                    "lower": mean[i, j] - z * se[i, j],
                    "upper": mean[i, j] + z * se[i, j],
                }
            )
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(q, np.full(q, 1.0 / q), size=resamples).astype(np.float64) / q
    why_not = _theory_applies(ss)
    crossover = []
    for oi, op in enumerate(OPERATORS):
        row = r.rows.index(("periodic", op))
        d = r.outcome[:, row] - r.outcome[:, 0]  # (Q, nB, T)
        point = d.mean(0)
        reps = (weights @ d.reshape(q, -1)).reshape((resamples,) + point.shape)
        ci = theory.crossover_interval(r.times, -point, -reps, level=level)
        first = theory.first_positive_time(point)
        th = None if why_not else theory_crossover(ss, oi, r.budgets, r.times)
        for j, b in enumerate(r.budgets):
            entry = {"operator": op, "budget": float(b), **ci.entry(j)}
            entry["first_win"] = float(first[j])
            if th is not None:
                t_star = float(th["crossover_time"][j])
                entry["theory_crossover_time"] = t_star
                entry["theory_first_win"] = float(th["first_win"][j])
                entry["contains_theory"] = (
                    bool(ci.lower[j] <= t_star <= ci.upper[j]) if math.isfinite(t_star) else None
                )
            crossover.append(entry)
    g_mean = r.by_generation.mean(0)  # (n_ops, K + 1, nB)
    g_se = r.by_generation.std(0, ddof=1) / math.sqrt(q)
    by_generation = []
    for oi, op in enumerate(OPERATORS):
        th = None if why_not else theory_by_generation(ss, oi, r.budgets, g_mean.shape[1] - 1)
        for j, b in enumerate(r.budgets):
            u = g_mean[oi, :, j]
            row = {
                "operator": op,
                "budget": float(b),
                "generations": list(range(u.size)),
                "utility": u,
                "lower": u - z * g_se[oi, :, j],
                "upper": u + z * g_se[oi, :, j],
                "best_generation": int(np.argmax(u)),
            }
            if th is not None:  # a cell without spread holds theory when it matches to 1e-6
                row["theory_utility"] = th[j]
                row["contains_theory"] = [
                    bool(lo - 1e-6 <= t <= hi + 1e-6)
                    for lo, t, hi in zip(row["lower"], th[j], row["upper"])
                ]
            by_generation.append(row)
    st = ss.stream
    return {
        "scenario": ss.name,
        "sessions": st.sessions,
        "session_length": st.session_length.to_dict(),
        "age": st.age,
        "policy_params": {
            "cap": st.cap,
            "period": st.period,
            "window": st.window,
            "max_generation": st.max_generation,
        },
        "queries": q,
        "budgets": r.budgets,
        "times": r.times,
        "level": level,
        "resamples": resamples,
        "crossover_policy": "periodic",
        "theory": "applies" if why_not is None else f"does not apply: {why_not}",
        "utility": utility,
        "crossover": crossover,
        "by_generation": by_generation,
    }
