"""The simulation kernel of ``sim`` as a numpy user writes it first, for the benchmark only.

What a user would write without JAX: the same draws (query type, evidence cluster, distractors,
retriever scores, cluster redundancy), the same candidate records per action, packing in rank order
under every budget, the reader of MODEL §2 on the grid ``2**-24`` and the same 17 integer sums per
bootstrap block, all as whole-array numpy operations over a chunk of queries (float32, like the
kernel). ``evaluate`` takes draws as arrays, so it can be fed the very draws the JAX kernel made;
``draw`` makes its own with ``numpy.random.Generator`` for the timed end-to-end run.

The best numpy (a sorting network, the frontier in closed form, an event histogram) is not here:
it is ``sim.numpy_kernel``, the CPU default of ``sim.simulate``; this module is the former anchor
(argsort of every action's candidates) and the per-budget reference, kept as benchmark rows.

A REFERENCE COPY of MODEL §2's packing and reader, the third beside ``sim/kernel/_reader.py`` (JAX)
and its numpy twin in the same file (the table at the top of ``sim/kernel/__init__.py``). It stays in
the bench, not in ``tests/``, because ``retcon bench`` ships to users and times it as the baseline a
competent numpy user writes first; it is never on a path that computes a reported number. A change to
the reader there must be made here too: tests/retcon/test_benchmarks.py pins this copy to the kernel
(``test_best_numpy_equals_per_budget_packing``: the numpy kernel equals ``evaluate`` bit for bit on
shared draws; ``test_numpy_kernel_equals_jax_kernel_on_shared_draws``, slow tier: the JAX kernel
equals it on the JAX kernel's draws, every packing mode).

References: MODEL §2 (packing, reader), §3 (``G_B``, ``H_B``), §4 (coverage / replacement);
``sim/kernel/`` (the kernel this mirrors).
"""

from __future__ import annotations

import numpy as np

from sim import numpy_kernel as NK
from sim.numpy_kernel import NpDraw, NpOutcome, NpParams

__all__ = ["NpDraw", "NpOutcome", "NpParams"]

GRID = np.float32(2**24)
REDUNDANCY_CONCENTRATION = 20.0
N_COLS = 17


def params_of(scenario):
    """``(structure, NpParams)`` of a scenario (``sim.numpy_kernel.params_of``: the kernel's numbers).

    Raises:
      InputError: the scenario's ``retriever.recall`` is below 1 (this benchmark kernel draws
        every evidence record; the retriever's misses live in ``sim.kernel`` only).
    """
    from retcon.errors import InputError

    if scenario.retriever.recall < 1.0:
        raise InputError(
            "the benchmark's numpy kernel does not model retriever misses: retriever.recall must "
            f"be 1 for it; got {scenario.retriever.recall:g} (scenario {scenario.name!r})."
        )
    return NK.params_of(scenario)


def _lengths(rng: np.random.Generator, families, t: np.ndarray, pr: NpParams, k: int) -> np.ndarray:
    """``(n, k)`` record lengths: each query's type picks its family and parameters."""
    n = t.shape[0]
    p1, p2 = pr.len_p1[t][:, None], pr.len_p2[t][:, None]
    out = np.empty((n, k), np.float32)
    fam = np.asarray(families)[t]
    for f in sorted(set(families)):
        sel = fam == f
        if not sel.any():
            continue
        a, b, shape = p1[sel], p2[sel], (int(sel.sum()), k)
        if f == "point":
            x = np.broadcast_to(a, shape)
        elif f == "uniform":
            x = a * (1.0 - rng.random(shape, np.float32))
        elif f == "exponential":
            x = a * rng.standard_exponential(shape, np.float32)
        elif f == "gamma":
            x = b * rng.standard_gamma(np.broadcast_to(a, shape)).astype(np.float32)
        elif f == "lognormal":
            x = b * np.exp(a * rng.standard_normal(shape, np.float32))
        elif f == "weibull":
            x = b * rng.standard_exponential(shape, np.float32) ** (1.0 / a)
        else:  # pragma: no cover - the scenario rejects other families
            raise ValueError(f)
        out[sel] = np.maximum(x, np.float32(1e-30))
    return out


def draw(rng: np.random.Generator, n: int, st, pr: NpParams) -> NpDraw:
    """Draw ``n`` queries like ``sim.kernel.draw_query`` does, with a numpy Generator."""
    K, D = st.k_max, st.n_distractors
    t = rng.choice(4, size=n, p=pr.weights)
    ev = _lengths(rng, st.families, t, pr, K)
    mask = np.arange(K)[None, :] < pr.records[t][:, None]
    ev = np.where(mask, ev, np.float32(0))
    dis = _lengths(rng, st.families, t, pr, D) if D else np.zeros((n, 0), np.float32)
    # oracle order is noise 0: scores exactly 1 (evidence) and 0 (distractors)
    ev_score = (1.0 + pr.noise * rng.standard_normal((n, K), np.float32)).astype(np.float32)
    dis_score = (pr.noise * rng.standard_normal((n, D), np.float32)).astype(np.float32)
    ev_score = np.where(mask, ev_score, np.float32(-np.inf))
    r = pr.redundancy[t]
    c = REDUNDANCY_CONCENTRATION
    r_c = rng.beta(np.maximum(r * c, 1e-3), np.maximum((1.0 - r) * c, 1e-3)).astype(np.float32)
    r_c = np.where((r > 0) & (pr.records[t] > 1), r_c, np.float32(0))
    return NpDraw(t, ev, mask, ev_score, dis, dis_score, r_c)


def _in_order(x: np.ndarray, op) -> np.ndarray:
    """Reduce the last axis strictly left to right, ``((x0 op x1) op x2) ...``, the fixed order the
    kernel uses (``sim.kernel.sum_in_order`` / ``prod_in_order``) so that results match bit for bit."""
    if x.shape[-1] == 0:
        return np.full(x.shape[:-1], 0 if op is np.add else 1, x.dtype)
    out = x[..., 0]
    for j in range(1, x.shape[-1]):
        out = op(out, x[..., j])
    return out


def _pack(ranked: np.ndarray, budgets: np.ndarray, mode: str) -> np.ndarray:
    """Tokens kept ``(n, nB, 4, N)`` of records in rank order ``(n, 4, N)`` under each budget."""
    b = budgets[None, :, None, None]
    if mode == "skip":
        remaining = np.broadcast_to(
            b[..., 0], ranked.shape[:1] + budgets.shape + ranked.shape[1:2]
        ).copy()
        kept = np.zeros(ranked.shape[:1] + budgets.shape + ranked.shape[1:], np.float32)
        for j in range(ranked.shape[-1]):
            length = ranked[:, None, :, j]
            fits = length <= remaining
            kept[..., j] = np.where(fits, length, np.float32(0))
            remaining = np.where(fits, remaining - length, remaining)
        return kept
    total = np.cumsum(ranked, axis=-1)[:, None]
    r = ranked[:, None]
    if mode == "prefix":
        return np.where(total <= b, r, np.float32(0))
    before = np.concatenate(
        [np.zeros_like(total[..., :1]), total[..., :-1]], axis=-1
    )  # exclusive cumsum
    return np.where(total <= b, r, np.clip(b - before, np.float32(0), r))


def evaluate(d: NpDraw, budgets: np.ndarray, pr: NpParams, mode: str) -> NpOutcome:
    """Candidates per action, packing in rank order, reader on the ``2**-24`` grid, ``G_B``, ``H_B``.

    Args:
      d: draws for ``n`` queries.
      budgets: ``(nB,)`` float32 tokens.
      pr: parameters.
      mode: packing mode.
    """
    K = d.ev_len.shape[1]
    f32 = np.float32
    lengths, scores = _candidates(d, pr)
    order = np.argsort(-scores, axis=-1, kind="stable")
    inverse = np.argsort(order, axis=-1, kind="stable")
    ranked = np.take_along_axis(lengths, order, axis=-1)
    kept_ranked = _pack(ranked, budgets.astype(f32), mode)  # (n, nB, 4, N)
    kept = np.take_along_axis(
        kept_ranked, np.broadcast_to(inverse[:, None], kept_ranked.shape), axis=-1
    )
    lk = lengths[:, None, :, :K]
    k_ev = kept[..., :K]
    # XLA on CPU divides through a reciprocal (x * (1 / y)); do the same so cut fractions match
    f_ev = np.where(
        k_ev >= lk, f32(1), k_ev * (f32(1) / np.where(lk > 0, lk, f32(1)))
    )  # (n, nB, 4, K)
    phi = pr.fidelity[:, d.query_type].T  # (n, 3)
    s = np.stack(
        [
            _in_order(f_ev[:, :, 0], np.multiply),
            phi[:, None, 0] * f_ev[:, :, 1, 0],
            phi[:, None, 1] * f_ev[:, :, 2, 0],
            phi[:, None, 2] * _in_order(f_ev[:, :, 3], np.multiply),
        ],
        axis=-1,
    )
    g, a = pr.acc_guess, pr.acc_raw[d.query_type][:, None, None]
    # XLA contracts g + (a - g) * s to one fused multiply-add on CPU; emulate it (the float64
    # product of two float32 is exact, then one rounding to float32) so that m matches bit for bit
    fma = (np.float64(g) + (a - g).astype(np.float64) * s.astype(np.float64)).astype(f32)
    p = np.clip(fma, f32(0), f32(1))
    m = np.round(p * GRID).astype(np.int32)
    grounded = np.all(kept[:, :, 0, :K] == lengths[:, None, 0, :K], axis=-1)
    cluster_ret = np.any(kept[:, :, 0, :K] > 0, axis=-1, keepdims=True)
    cluster_op = np.any(kept[:, :, 1:, :K] > 0, axis=-1)
    others = np.any(kept[:, :, 1:, K:] != kept[:, :, :1, K:], axis=-1)
    affected = np.logical_or(np.logical_or(cluster_ret, cluster_op), others)
    return NpOutcome(m, grounded, affected)


def _candidates(d: NpDraw, pr: NpParams):
    """Candidate lengths and scores ``(n, 4, N)`` per action (``sim``'s ``candidate_records``)."""
    n, K = d.ev_len.shape
    f32 = np.float32
    total = _in_order(d.ev_len, np.add)
    gen_len = pr.compress[None, :2] * (f32(1) - d.redundancy[:, None]) * total[:, None]  # (n, 2)
    gen_score = d.ev_score.max(-1)
    N = K + d.dis_len.shape[1]
    lengths = np.zeros((n, 4, N), f32)
    scores = np.full((n, 4, N), -np.inf, f32)
    lengths[:, 0, :K], scores[:, 0, :K] = d.ev_len, d.ev_score
    lengths[:, 1:3, 0], scores[:, 1:3, 0] = gen_len, gen_score[:, None]
    lengths[:, 3, :K], scores[:, 3, :K] = d.ev_len * pr.compress[2], d.ev_score
    lengths[:, :, K:], scores[:, :, K:] = d.dis_len[:, None], d.dis_score[:, None]
    return lengths, scores


def evaluate_frontier(d: NpDraw, budgets: np.ndarray, pr: NpParams, mode: str) -> NpOutcome:
    """``evaluate`` as a numpy user who knows the model would write it: the frontier formulation.

    Per query and action, packing is done once, not once per budget: sort the records by score,
    take the running totals, and keep the evidence frontier (the running total at which the
    last-ranked evidence unit is whole, the total before it, its length, and the least running
    total / total-before over the records from the first evidence unit on). Each budget is then
    compared with these scalars (``prefix``: ``m`` is one of two values per action; ``cut``: only
    the last unit's kept tokens are computed per budget). ``skip`` is not nested in the budget
    (MODEL §6.7) and falls back to ``evaluate``. Bit for bit ``evaluate``'s result.
    """
    if mode == "skip":
        return evaluate(d, budgets, pr, mode)
    K = d.ev_len.shape[1]
    f32 = np.float32
    lengths, scores = _candidates(d, pr)
    N = lengths.shape[-1]
    order = np.argsort(-scores, axis=-1, kind="stable")
    ranked = np.take_along_axis(lengths, order, axis=-1)
    total_r = np.cumsum(ranked, axis=-1)  # (n, 4, N) in rank order
    before_r = np.concatenate([np.zeros_like(total_r[..., :1]), total_r[..., :-1]], axis=-1)
    ev_r = (order < K) & (ranked > 0)  # evidence units of positive length, in rank order
    # last evidence unit: the highest rank holding one
    last = N - 1 - np.argmax(ev_r[..., ::-1], axis=-1)  # (n, 4)
    has = ev_r.any(-1)
    pick = lambda x: np.take_along_axis(x, last[..., None], axis=-1)[..., 0]  # noqa: E731
    last_total = np.where(has, pick(total_r), f32(-np.inf))
    last_before = np.where(has, pick(before_r), f32(-np.inf))
    last_len = np.where(has, pick(ranked), f32(0))
    # records from the first evidence unit on (rank order), of positive length
    first_ev = np.argmax(order < K, axis=-1)  # (n, 4); every action has an evidence slot
    beyond = (np.arange(N) >= first_ev[..., None]) & (ranked > 0)
    first_total = np.where(beyond, total_r, f32(np.inf)).min(-1)
    first_before = np.where(beyond, before_r, f32(np.inf)).min(-1)
    phi = pr.fidelity[:, d.query_type].T[:, None]  # (n, 1, 3)
    a = pr.acc_raw[d.query_type][:, None, None]
    g = pr.acc_guess

    def reader(kept, length):
        # the kernel's arithmetic: whole -> 1, else kept * (1 / length); one FMA; round to 2**-24
        frac = np.where(
            kept >= length, f32(1), kept * (f32(1) / np.where(length > 0, length, f32(1)))
        )
        s = np.concatenate([frac[..., :1], phi * frac[..., 1:]], axis=-1)
        fma = (np.float64(g) + (a - g).astype(np.float64) * s.astype(np.float64)).astype(f32)
        return np.round(np.clip(fma, f32(0), f32(1)) * GRID).astype(np.int32)

    b = budgets.astype(f32)[None, :, None]  # (1, nB, 1)
    fits = last_total[:, None] <= b  # (n, nB, 4)
    if mode == "prefix":
        two = np.stack([last_len, np.zeros_like(last_len)], axis=1)  # (n, 2, 4): whole, absent
        m2 = reader(two, np.broadcast_to(last_len[:, None], two.shape))
        m = np.where(fits, m2[:, :1], m2[:, 1:])
        grounded = fits[..., 0] | (last_len[:, None, 0] == 0)
        some = first_total[:, None] <= b
    else:
        length = np.broadcast_to(last_len[:, None], fits.shape)
        kept = np.where(fits, length, np.clip(b - last_before[:, None], f32(0), length))
        m = reader(kept, length)
        grounded = kept[..., 0] == length[..., 0]
        some = (first_total[:, None] <= b) | (b > first_before[:, None])
    return NpOutcome(m, grounded, some[..., :1] | some[..., 1:])


def block_sums(out: NpOutcome, idx: np.ndarray, n_blocks: int) -> np.ndarray:
    """The kernel's 17 integer columns summed per bootstrap block (query ``i`` in block ``i % G``).

    Returns ``(n_blocks, nB, 17)`` int64: sum of ``m`` per action (4), of ``m_o - m_ret`` (3), the
    same outside ``G_B`` (coverage, 3), count in ``G_B`` (1), in ``H_B`` (3), in both (3).
    """
    m = out.m.astype(np.int64)
    d = m[..., 1:] - m[..., :1]
    g = out.raw_grounded
    cov = np.where(g[..., None], 0, d)
    h = out.affected
    cols = np.concatenate([m, d, cov, g[..., None], h, h & g[..., None]], axis=-1).astype(np.int64)
    c = idx.shape[0]
    if (
        c % n_blocks == 0
        and c
        and idx[0] % n_blocks == 0
        and np.array_equal(idx, idx[0] + np.arange(c))
    ):
        # consecutive queries from a block boundary: row r is in block r % n_blocks, as in the kernel
        return cols.reshape(c // n_blocks, n_blocks, *cols.shape[1:]).sum(axis=0)
    sums = np.zeros((n_blocks,) + cols.shape[1:], np.int64)
    np.add.at(sums, idx % n_blocks, cols)
    return sums


def simulate_numpy(
    seed: int,
    scenario,
    n_queries: int,
    budgets,
    *,
    chunk: int = 8192,
    n_blocks: int = 1024,
    method: str = "frontier",
) -> tuple[np.ndarray, np.ndarray]:
    """End to end in numpy: draw, evaluate and reduce ``n_queries`` queries chunk by chunk.

    Memory is bounded by ``chunk`` (the per-budget method's packed array is
    ``chunk * nB * 4 * (K + D)`` float32). ``method``: ``"frontier"`` (``evaluate_frontier``) or
    ``"per-budget"`` (``evaluate``, packing again under every budget).

    Returns:
      ``(sums (n_blocks, nB, 17) int64, counts (n_blocks,) int64)``.
    """
    st, pr = params_of(scenario)
    b = np.asarray(budgets, np.float32)
    ev = evaluate_frontier if method == "frontier" else evaluate
    rng = np.random.default_rng(seed)
    total = np.zeros((n_blocks, b.size, N_COLS), np.int64)
    counts = np.zeros(n_blocks, np.int64)
    for start in range(0, n_queries, chunk):
        c = min(chunk, n_queries - start)
        idx = np.arange(start, start + c)
        total += block_sums(ev(draw(rng, c, st, pr), b, pr, st.packing), idx, n_blocks)
        np.add.at(counts, idx % n_blocks, 1)
    return total, counts
