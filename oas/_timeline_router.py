"""A router over time (MODEL §10; issue 21 item 5): at each consolidation point, decide which units
to consolidate, if any, by the utility the model predicts.

After session ``t`` arrives the memory holds ``n = t`` units (oldest first, 0-based ``s``) with
generations ``k_s``. Passes follow ``overflow``'s order (the unit with the fewest passes, oldest
first; summaries of summaries once every unit is passed; at most ``K`` passes a unit), so a state
is its level counts ``c_l`` (``l = 1..K``: the number of oldest units with at least ``l`` passes,
as in ``sim``'s ``overflow_levels``). The router does not fix a cap; it chooses how far to go along
that order. The candidates are every state reachable from the current one: for a level ``i``
(0-based) and a count ``x`` with ``c_i <= x <= n``, levels below ``i`` complete (``c_j = n``,
``j < i``), ``c_i = x``, deeper levels unchanged; ``x = c_i`` at the lowest level is "do nothing".

Each candidate is scored by the predicted utility of a query at time ``t`` (§10's ``U_{B,t}`` for
the stream as it stands, ages uniform over the ``n`` units, prefix packing most recent first):

    U_hat = g + (1 / n) sum_s v(k_s) 1{ predicted length of units s..n-1 <= B }

with ``v(k) = E[p | the evidence's unit in context after k passes] - g`` (§2's reader:
``reader_success(phi^k) - g`` under H10) and the predicted lengths ``pred[s, k_s, k]`` of unit
``s`` after ``k`` passes when it now has ``k_s`` (H10: ``rho^k L_s``; on real text, the observed
length times fitted per-pass ratios). The router takes the best candidate, the fewest passes among
those within ``TIE`` of the best (so it never passes a unit for nothing). Passes are irreversible
and the rule is myopic: it optimises the queries of the current session, and decides again at the
next one.

Scoring is exact and costs ``O(K T log T)`` per session, not ``O(K T^2)``: for candidate
``(i, x)`` the newest units ``x..n-1`` sit at generation ``i``; the older ones ``0..x-1`` at
``i + 1 + #{j > i : s < c_j}``, which does not depend on ``x``. With running totals of both
length profiles, the fitting frontier is one binary search per candidate.

References: MODEL §10 (stream, generations, policies), §2 (reader, prefix packing), §6.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from retcon.errors import InputError

#: The policy name of the router in timeline reports.
ROUTER_POLICY = "router"
#: Candidates whose predicted utility is within this (relative to ``1 + |best|``, in units of
#: ``n U_hat``) of the best count as tied; the fewest passes wins.
TIE = 1e-5


@dataclass(frozen=True)
class TimelineRouter:
    """Parameters of the router over time for one operator.

    Attributes:
      value: ``(K + 1,)`` ``v(k)``, the predicted gain in success over a guess when the
        evidence's unit is in context after ``k`` passes (finite).
      ratio: ``(K,)`` predicted length ratio of pass ``k`` (after / before), in ``(0, 1]``...
        any positive number is accepted (a pass that lengthens is the data's business).
      guess: ``g``, the predicted success when the evidence is out of context (for reports).
    """

    value: np.ndarray
    ratio: np.ndarray
    guess: float = 0.0

    def __post_init__(self):
        v = np.asarray(self.value, np.float64)
        r = np.asarray(self.ratio, np.float64)
        if v.ndim != 1 or v.size < 2 or not np.isfinite(v).all():
            raise InputError(
                f"TimelineRouter.value must be K + 1 >= 2 finite numbers; got {self.value!r:.80}."
            )
        if r.shape != (v.size - 1,) or not np.all(np.isfinite(r) & (r > 0)):
            raise InputError(
                f"TimelineRouter.ratio must be K = {v.size - 1} positive numbers; "
                f"got {self.ratio!r:.80}."
            )
        if not np.isfinite(self.guess):
            raise InputError(f"TimelineRouter.guess must be finite; got {self.guess!r}.")
        object.__setattr__(self, "value", v)
        object.__setattr__(self, "ratio", r)
        object.__setattr__(self, "guess", float(self.guess))

    @property
    def max_generation(self) -> int:
        return int(self.value.size - 1)

    def to_json(self) -> dict:
        return {"value": self.value.tolist(), "ratio": self.ratio.tolist(), "guess": self.guess}


def predicted_lengths(current, ratio) -> np.ndarray:
    """``(T, K + 1, K + 1)`` table ``pred[s, k0, k]``: unit ``s``'s predicted length after ``k``
    passes when it now has ``k0``: ``current[s, k0]`` times the ratios of passes ``k0 + 1 .. k``
    (``k >= k0``; entries ``k < k0`` are ``current[s, k]``, never read).

    Args:
      current: ``(T, K + 1)`` the length a unit has at each generation once it is there (the
        observed one on real text; ``rho^k L_s`` under H10).
      ratio: ``(K,)`` per-pass length ratios.
    """
    cur = np.asarray(current, np.float64)
    r = np.asarray(ratio, np.float64)
    K = r.size
    if cur.ndim != 2 or cur.shape[1] != K + 1:
        raise InputError(
            f"predicted_lengths: current must have shape (T, {K + 1}); got {cur.shape}."
        )
    logs = np.concatenate([[0.0], np.cumsum(np.log(r))])  # log prod of ratios 1..k
    k0 = np.arange(K + 1)[:, None]
    k = np.arange(K + 1)[None, :]
    factor = np.where(k >= k0, np.exp(logs[k] - logs[k0]), np.nan)  # (K+1, K+1)
    pred = cur[:, :, None] * factor[None]
    return np.where(np.isnan(pred), cur[:, None, :], pred)


def _generations(c, n, T):
    """``k_s = #{l : s < c_l}`` for ``s < n`` (0 beyond), shape ``(T,)``."""
    s = jnp.arange(T)
    return jnp.where(s < n, jnp.sum(s[:, None] < c[None, :], axis=-1), 0)


def router_step(pred, value, budget, c, n):
    """The router's choice at one session: new level counts ``(K,)`` (module docstring).

    Args:
      pred: ``(T, K + 1, K + 1)`` `predicted_lengths`. value: ``(K + 1,)`` ``v(k)``.
      budget: ``B``. c: ``(K,)`` current level counts (non-increasing, ``<= n``). n: units present.
    """
    T = pred.shape[0]
    K = c.shape[0]
    s = jnp.arange(T)
    present = s < n
    k_now = _generations(c, n, T)
    table = jnp.take_along_axis(pred, k_now[:, None, None], axis=1)[:, 0, :]  # (T, K + 1)
    table = jnp.where(present[:, None], table, 0.0)
    below = (s[None, :] < c[:, None]).astype(jnp.int32)  # (K, T): s < c_j
    deep = jnp.cumsum(below[::-1], axis=0)[::-1] - below  # sum_{j > i} (s < c_j)
    levels = jnp.arange(K)[:, None]
    g_old = jnp.minimum(levels + 1 + deep, K)  # (K, T) generation of units older than x
    band = table[:, :K].T  # (K, T): unit s at generation i
    old = jnp.take_along_axis(table.T, g_old, axis=0)  # (K, T)
    old = jnp.where(present[None], old, 0.0)
    v_old = jnp.where(present[None], value[g_old], 0.0)
    zero = jnp.zeros((K, 1), table.dtype)
    Pb = jnp.concatenate([zero, jnp.cumsum(band, axis=1)], axis=1)  # (K, T + 1)
    Q = jnp.concatenate([zero, jnp.cumsum(old, axis=1)], axis=1)
    V = jnp.concatenate([zero, jnp.cumsum(v_old, axis=1)], axis=1)
    x = jnp.arange(T + 1)[None, :]
    Pn = Pb[:, n][:, None]  # (K, 1)
    s_band = Pn - Pb  # (K, T + 1): tokens of units x..n-1 at generation i
    thr = s_band + Q - budget
    y = jax.vmap(lambda q, t: jnp.searchsorted(q, t, side="left", method="compare_all"))(Q, thr)
    y = jnp.minimum(y, x)
    dt = value.dtype
    fit_all = (n - x).astype(dt) * value[:K, None] + V - jnp.take_along_axis(V, y, 1)
    f = jax.vmap(lambda p, t: jnp.searchsorted(p, t, side="left", method="compare_all"))(
        Pb, (Pn - budget)[:, 0]
    )
    partial_band = (n - f).astype(dt)[:, None] * value[:K, None]
    score = jnp.where(s_band <= budget, fit_all, partial_band)
    valid = (x >= c[:, None]) & (x <= n)
    score = jnp.where(valid, score, -jnp.inf)
    flat = score.reshape(-1)
    best = jnp.max(flat)
    pick = jnp.argmax(flat >= best - TIE * (1.0 + jnp.abs(best)))
    i, xi = pick // (T + 1), pick % (T + 1)
    j = jnp.arange(K)
    return jnp.where(j < i, n, jnp.where(j == i, xi, c)).astype(jnp.int32)


def router_levels(pred, value, budget) -> jax.Array:
    """``(T, K)`` level counts of the router along a stream (``lax.scan`` over sessions).

    ``pred[s]`` is unit ``s``'s `predicted_lengths` table; session ``t`` (0-based) adds unit ``t``
    raw, then the router chooses (`router_step`). Row ``t`` is the memory the queries of session
    ``t + 1`` see. MODEL §10.
    """
    T = pred.shape[0]
    K = value.shape[0] - 1

    def step(c, t):
        c = router_step(pred, value, budget, c, t + 1)
        return c, c

    _, out = jax.lax.scan(step, jnp.zeros((K,), jnp.int32), jnp.arange(T, dtype=jnp.int32))
    return out


_router_levels_jit = jax.jit(router_levels)


def route_stream(current, router: TimelineRouter, budget: float) -> np.ndarray:
    """``(T, T)`` generations ``k[t, s]`` the router leaves on one stream of observed lengths.

    Args:
      current: ``(T, K + 1)`` each unit's length at each generation once there (observed).
      router: the fitted parameters. budget: ``B`` in tokens.

    The router sees the observed length of a unit at its current generation and predicts later
    ones with ``router.ratio`` (`predicted_lengths`); it never reads a later pass's output before
    choosing it. MODEL §10.
    """
    pred = predicted_lengths(current, router.ratio)
    T = pred.shape[0]
    levels = _router_levels_jit(
        jnp.asarray(pred, jnp.float32),
        jnp.asarray(router.value, jnp.float32),
        jnp.float32(budget),
    )
    s = np.arange(T)
    lv = np.asarray(levels)
    gens = (s[None, :, None] < lv[:, None, :]).sum(-1)
    return np.where(s[None, :] <= np.arange(T)[:, None], gens, 0).astype(np.int32)


# --------------------------------------------------------------------------- simulation


def scenario_router(ss, op_index: int) -> TimelineRouter:
    """The router with a stream scenario's own parameters for operator ``op_index``: H10's
    ``rho`` per pass and ``v(k) = sum_t w_t (reader_success(phi_t^k, a_t, g) - g)`` over the query
    types' mix (weights normalised). MODEL §10, §2."""
    import theory

    sc, st = ss.scenario, ss.stream
    K = st.max_generation
    w = np.array([t.weight for t in sc.types], np.float64)
    w = w / w.sum()
    ks = np.arange(K + 1, dtype=np.float64)
    g = float(sc.acc_guess)
    v = np.zeros(K + 1)
    for wt, t in zip(w, sc.types):
        phi = float(t.fidelity[op_index])
        v += wt * (np.asarray(theory.reader_success(phi**ks, t.acc_raw, g)) - g)
    rho = float(sc.operators[op_index].compress_ratio)
    return TimelineRouter(v, np.full(K, rho), g)


def _stream_outcome(key, budgets, values, powers, st, pr):
    """One stream: ``(n_ops, nB, T)`` quantized successes of the router (prefix and cut packing
    on level counts; skip on the dense generations)."""
    import sim

    T = st.sessions
    lengths, qtype, n_units = sim.draw_stream(key, st, pr)
    P = sim.prefix_sums(lengths)
    K = values.shape[1] - 1
    outs = []
    for op in range(values.shape[0]):
        # H10: a unit's length after k passes is rho^k L_s, whatever it has now
        pred = jnp.broadcast_to(
            (lengths[:, None] * powers[op][None, :])[:, None, :], (T, K + 1, K + 1)
        )
        lv = jax.vmap(lambda b, v=values[op], p=pred: router_levels(p, v, b))(budgets)
        if st.packing == "skip":
            gens = sim.generations_from_levels(lv, T)
            m, _ = sim.evidence_outcome(lengths, gens, n_units, qtype, op, budgets, st, pr)
        else:
            m, _ = sim.evidence_levels(P, lengths, lv, n_units, qtype, op, budgets, st, pr)
        outs.append(m)
    return jnp.stack(outs)


@partial(jax.jit, static_argnames=("st",))
def _router_chunk(root, idx, budgets, values, powers, pr, *, st):
    keys = jax.vmap(lambda i: jax.random.fold_in(root, i))(idx)
    return jax.vmap(lambda k: _stream_outcome(k, budgets, values, powers, st, pr))(keys)


CHUNK = 256


def simulate_router_timeline(ss, routers, *, budgets, queries: int, seed: int = 0) -> np.ndarray:
    """``(Q, n_ops, nB, T)`` success probabilities of the router on ``sim.simulate_timeline``'s
    streams: the same seed gives the same draws (stream ``i`` uses ``fold_in(key(seed), i)``, as
    the timeline kernel does), so differences against its rows are paired per stream.

    Args:
      ss: stream scenario (``sim.load_stream``). routers: one `TimelineRouter` per operator
        (``OPERATORS`` order), each with ``K = ss.stream.max_generation``.
      budgets: ``(nB,)`` tokens. queries: streams. seed: JAX seed.

    References: MODEL §10.
    """
    import sim
    from sim.kernel import GRID

    K = ss.stream.max_generation
    for r in routers:
        if r.max_generation != K:
            raise InputError(
                f"simulate_router_timeline: routers must have K = max_generation = {K}; "
                f"got {r.max_generation}."
            )
    st, pr = sim.stream_params(ss, ("retain-all",))
    values = jnp.asarray(np.stack([r.value for r in routers]), jnp.float32)
    powers = np.stack([np.concatenate([[1.0], np.cumprod(r.ratio)]) for r in routers])
    powers = jnp.asarray(powers, jnp.float32)
    bj = jnp.asarray(np.asarray(budgets, np.float64), jnp.float32)
    root = jax.random.key(seed)
    outs = []
    for start in range(0, queries, CHUNK):
        idx = jnp.arange(start, start + CHUNK, dtype=jnp.uint32)
        o = _router_chunk(root, idx, bj, values, powers, pr, st=st)
        outs.append(np.asarray(o)[: min(CHUNK, queries - start)])
    return np.concatenate(outs).astype(np.float64) / GRID


def simulated_router_gains(
    router_outcome,
    result,
    *,
    baselines=("retain-all", "overflow", "periodic", "budget-aware", "tiered"),
    level: float = 0.95,
) -> list[dict]:
    """The router's time-averaged utility minus each baseline's, paired per simulated stream.

    Args:
      router_outcome: ``(Q, n_ops, nB, T)`` from `simulate_router_timeline` (same seed and
        streams as ``result``). result: ``sim.TimelineResult``. baselines: policies in its rows.

    Returns:
      One dict per operator, budget and baseline: ``gain`` and its interval ``mean +- z SE`` over
      the i.i.d. streams (streams are independent draws, so the normal interval is the plain
      one). MODEL §10.
    """
    import scipy.stats as sst

    from retcon.vocab import OPERATORS

    z = float(sst.norm.ppf(0.5 + level / 2))
    q = router_outcome.shape[0]
    mine = router_outcome.mean(-1)  # (Q, n_ops, nB)
    out = []
    for oi, op in enumerate(OPERATORS):
        for policy in baselines:
            key = (policy, None if policy == "retain-all" else op)
            if key not in result.rows:
                continue
            d = mine[:, oi] - result.outcome[:, result.rows.index(key)].mean(-1)  # (Q, nB)
            mean, se = d.mean(0), d.std(0, ddof=1) / np.sqrt(q)
            for bi, b in enumerate(result.budgets):
                out.append(
                    {
                        "operator": op,
                        "budget": float(b),
                        "baseline": policy,
                        "gain": float(mean[bi]),
                        "lower": float(mean[bi] - z * se[bi]),
                        "upper": float(mean[bi] + z * se[bi]),
                    }
                )
    return out


__all__ = [
    "ROUTER_POLICY",
    "TimelineRouter",
    "predicted_lengths",
    "route_stream",
    "router_levels",
    "router_step",
    "scenario_router",
    "simulate_router_timeline",
    "simulated_router_gains",
]
