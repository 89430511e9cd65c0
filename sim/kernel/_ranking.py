"""The kernel's ranking and packing: candidate records per action, records put in rank order
(sorting network or score comparison), packing in rank order under every budget (the per-budget
reference) and the evidence frontier (once per query, ``prefix`` and ``cut``).

Below the JAX functions, the numpy twin of the rank order (``rank_order``: the same sorting network
on whole rows of queries, bit for bit the stable order). The table in ``sim/kernel/__init__.py``
names the test that pins each pair.

References: MODEL §2 (packing), §3 (``G_B``, ``H_B``).
"""

from __future__ import annotations

from functools import cache, partial
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sim.kernel._draws import Draw, Params

if TYPE_CHECKING:
    import jax
    import jax.numpy as jnp
else:
    from sim.kernel._jax import jax, jnp


def sum_in_order(x: jax.Array) -> jax.Array:
    """Sum over the last (small, static) axis strictly left to right: ``((x0 + x1) + x2) + ...``.

    ``jnp.sum`` leaves the order to XLA, which picks it by the shape of the whole batch (on CPU
    it may add the halves, ``(x0 + x2) + x1``, in one batch size and not in another), so a query's
    numbers would depend on how many queries run with it. An unrolled loop fixes the order.
    """
    out = x[..., 0]
    for j in range(1, x.shape[-1]):
        out = out + x[..., j]
    return out


def prod_in_order(x: jax.Array) -> jax.Array:
    """Product over the last (small, static) axis strictly left to right (see ``sum_in_order``)."""
    out = x[..., 0]
    for j in range(1, x.shape[-1]):
        out = out * x[..., j]
    return out


def candidate_records(d: Draw, pr: Params) -> tuple[jax.Array, jax.Array]:
    """Candidate records under each action: lengths and scores, ``(4, K + D)`` each, ACTIONS order.

    Slots ``0..K-1`` hold the cluster's records (raw, generated or padding), slots ``K..`` the
    distractors, identical under every action. Only the records the retriever found are
    candidates: a missed one has length 0 (and score ``-inf``) under every action, and the
    operators consolidate the found records only.
    """
    K = d.ev_len.shape[0]
    ev_len = d.ev_len if d.intact is None else jnp.where(d.retrieved, d.ev_len, 0.0)
    total = sum_in_order(ev_len)
    gen_len = pr.compress[:2] * (1.0 - d.redundancy) * total  # merge, abstract: cross-note
    gen_score = jnp.max(d.ev_score)  # at its best constituent's rank
    pad_len = jnp.zeros((K - 1,), jnp.float32)
    pad_score = jnp.full((K - 1,), -jnp.inf, jnp.float32)

    def cross_note(i):
        return (
            jnp.concatenate([gen_len[i : i + 1], pad_len, d.dis_len]),
            jnp.concatenate([gen_score[None], pad_score, d.dis_score]),
        )

    raw = (jnp.concatenate([ev_len, d.dis_len]), jnp.concatenate([d.ev_score, d.dis_score]))
    merge, abstract = cross_note(0), cross_note(1)
    rewrite = (jnp.concatenate([ev_len * pr.compress[2], d.dis_len]), raw[1])  # local: keeps r
    lengths = jnp.stack([raw[0], merge[0], abstract[0], rewrite[0]])
    scores = jnp.stack([raw[1], merge[1], abstract[1], rewrite[1]])
    return lengths, scores


def _rank_totals(lengths: jax.Array, scores: jax.Array, with_before: bool = True):
    """Each record's rank and its running totals in rank order, computed without sorting.

    A record's rank is the number of records ranked before it (higher score, or an equal score in
    an earlier slot: the stable order), a comparison of the ``N`` scores with each other; the
    running sums of the lengths in rank order are taken once per action (strictly left to right,
    as ``theory.pack`` does), and read back per record by a one-hot selection, which is exact.

    Returns ``(rank, total, before)``, each ``(A, N)``: ``total`` is the running sum through the
    record, ``before`` the running sum of the records ranked before it (the record is whole under
    ``prefix`` and ``cut`` exactly when ``total <= B``).
    """
    n = lengths.shape[-1]
    slot = jnp.arange(n)
    s_i, s_j = scores[..., :, None], scores[..., None, :]
    # zeros compare equal (as in jnp.argsort), ties go by slot: the stable order
    ahead = (s_j > s_i) | ((s_j == s_i) & (slot[None, :] < slot[:, None]))  # (A, i, j)
    one = jnp.ones((n,), lengths.dtype)
    # full float32 precision: a GPU or TPU would otherwise round the operands of a float32
    # contraction (TF32 / bfloat16 passes), and the one-hot selections below would not be exact
    dot = partial(jnp.einsum, precision=jax.lax.Precision.HIGHEST)
    rank = dot("aij,j->ai", ahead.astype(lengths.dtype), one)  # (A, N) small integers
    at = (rank[..., :, None] == slot.astype(lengths.dtype)).astype(
        lengths.dtype
    )  # (A, i, r) one-hot
    # products with a one-hot matrix have one nonzero term (x * 1), the rest exact zeros: the
    # sums are exact in any order, so these contractions are gathers, bit for bit
    ranked = dot("air,ai->ar", at, lengths)  # (A, r)
    from theory import cumsum_in_order  # JAX: imported when the JAX path runs

    running = cumsum_in_order(ranked)  # (A, r)
    total = dot("air,ar->ai", at, running)  # (A, i)
    if not with_before:  # prefix packing never reads it
        return rank, total, jnp.full_like(total, -jnp.inf)
    before_r = jnp.concatenate([jnp.zeros_like(running[..., :1]), running[..., :-1]], axis=-1)
    before = dot("air,ar->ai", at, before_r)  # (A, i)
    return rank, total, before


def pack_in_rank_order(
    lengths: jax.Array, scores: jax.Array, budgets: jax.Array, mode: str
) -> jax.Array:
    """Tokens kept per candidate record ``(nB, A, N)``, records packed in score order (stable).

    The per-budget reference path: every record is packed again under every budget. ``prefix``
    and ``cut`` need no sort (ranks and running totals from ``_rank_totals``); only the comparison
    with each budget is done per budget, in the records' own order. The result is bit for bit the
    one of sorting, packing the sorted list with ``theory.pack`` and unsorting. ``skip`` carries the
    budget left from record to record, so it sorts, scans and unsorts.

    Args:
      lengths: ``(A, N)`` candidate lengths per action (0 on padding).
      scores: ``(A, N)`` retriever scores (-inf on padding).
      budgets: ``(nB,)`` budgets in tokens.
      mode: packing mode (MODEL §2).

    References:
      MODEL §2 (packing modes).
    """
    if mode == "skip":
        from theory import pack_one  # JAX: imported when the JAX path runs

        order = jnp.argsort(-scores, axis=-1, stable=True)
        inverse = jnp.argsort(order, axis=-1)
        ranked = jnp.take_along_axis(lengths, order, axis=-1)
        kept = jax.vmap(lambda b: jax.vmap(lambda l: pack_one(l, b, mode))(ranked))(budgets)
        return jnp.take_along_axis(kept, jnp.broadcast_to(inverse, kept.shape), axis=-1)
    _, total, before = _rank_totals(lengths, scores, with_before=mode == "cut")
    fits = total[None] <= budgets[:, None, None]  # (nB, A, N)
    zero = jnp.zeros((), lengths.dtype)
    if mode == "prefix":
        return jnp.where(fits, lengths[None], zero)
    b = budgets[:, None, None]
    return jnp.where(fits, lengths[None], jnp.clip(b - before[None], 0.0, lengths[None]))


class Frontier(NamedTuple):
    """One query's evidence frontier under ``prefix`` or ``cut`` packing, per action ``(4,)``.

    Everything the per-budget outcomes depend on, computed once per query (MODEL §2-§3):

    Attributes:
      last_total: the smallest budget at which the action's last-ranked evidence unit of positive
        length is whole (its running total; every earlier unit is whole by then); ``-inf`` when the
        action has none.
      last_before: the running total before that unit (``cut`` keeps ``B - last_before`` of it).
      last_len: its length (0 when there is none).
      first_total, first_before: over the records ranked at or after the first evidence unit that
        have positive length, the least running total and the least running total before the
        record: some such record is in the context exactly when ``B >= first_total`` (or, under
        ``cut``, ``B > first_before``), which is when the context differs from one without the
        cluster (``H_B``).
    """

    last_total: jax.Array
    last_before: jax.Array
    last_len: jax.Array
    first_total: jax.Array
    first_before: jax.Array


NETWORK_MAX = 32  # candidate lists up to this long are ranked by a sorting network


@cache
def sorting_network(n: int) -> tuple[tuple[int, int], ...]:
    """Batcher's odd-even merge sort for ``n`` inputs: compare-exchange pairs ``(a, b)``, ``a < b``.

    Built for the next power of two and pruned: inputs past ``n`` count as ranked last, so a pair
    that reaches one never exchanges and is dropped (11 inputs: 38 pairs). After the pairs run in
    order, position ``a`` holds a record ranked before position ``b`` for every ``a < b``.
    """
    size = 1
    while size < n:
        size *= 2
    pairs = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            for j in range(k % p, size - k, 2 * k):
                for i in range(min(k, size - j - k)):
                    a, b = i + j, i + j + k
                    if a // (2 * p) == b // (2 * p) and b < n:
                        pairs.append((a, b))
            k //= 2
        p *= 2
    return tuple(pairs)


def _rank_order(lengths: jax.Array, scores: jax.Array):
    """The records in rank order (higher score first, equal scores by slot: the stable order of
    ``jnp.argsort(-scores, stable=True)``) through a sorting network: compare-exchange steps on
    whole rows, no sort, gather or contraction.

    Args:
      lengths, scores: ``(A, N)``.

    Returns:
      ``(length, score, slot)`` in rank order: lists of ``N`` arrays ``(A,)`` (``slot`` int32).
      Lists, not stacked arrays: XLA then fuses the network into its consumers' loops without
      materializing the record axis (stacked, each slot's consumer recomputed the whole network).
    """
    n = lengths.shape[-1]
    ln = [lengths[..., i] for i in range(n)]
    sc = [scores[..., i] for i in range(n)]
    sl = [jnp.full(scores.shape[:-1], i, jnp.int32) for i in range(n)]
    for a, b in sorting_network(n):
        # b ranks before a: higher score, or an equal score (zeros compare equal) in an earlier slot
        swap = (sc[b] > sc[a]) | ((sc[b] == sc[a]) & (sl[b] < sl[a]))
        for x in (ln, sc, sl):
            x[a], x[b] = jnp.where(swap, x[b], x[a]), jnp.where(swap, x[a], x[b])
    return ln, sc, sl


def evidence_frontier(lengths: jax.Array, scores: jax.Array, k: int, mode: str) -> Frontier:
    """The evidence frontier of one query from its candidate records ``(4, K + D)`` (slots ``< k``
    hold the cluster's units). Maxima and minima only: exact in any order.

    Why it is enough (``prefix`` and ``cut``): running totals do not decrease along the rank, so
    when the last evidence unit is whole every unit is, and when any unit before it is not whole
    the last one keeps nothing; the product of the units' supports is therefore the last unit's
    own support, bit for bit (products with exact ones, or with a zero). The records ranked before
    the first evidence unit are the same distractors in the same order under every action (the
    generated record takes its best constituent's score and the earliest slot), so their packing
    is identical, and the contexts differ (``H_B``) exactly when some record from the first
    evidence unit on is kept (partly) under ``ret`` or the operator.

    Lists of up to ``NETWORK_MAX`` records are put in rank order by a sorting network and walked
    once in that order: the running total (left to right, as ``cumsum_in_order``), the last
    evidence unit met, the least total from the first evidence unit on. Longer lists rank each
    record by comparison (``_rank_totals``). Both give the same bits. Under ``prefix``
    ``last_before`` and ``first_before`` are not used and are left at ``-inf`` and ``inf``.
    """
    n = lengths.shape[-1]
    inf = jnp.asarray(jnp.inf, lengths.dtype)
    is_ev = jnp.arange(n) < k
    top = jnp.max(jnp.where(is_ev, scores, -inf), axis=-1)
    if n > NETWORK_MAX:
        return _frontier_by_rank(lengths, scores, top[..., None], k, mode)
    ln, sc, sl = _rank_order(lengths, scores)
    no = jnp.full(lengths.shape[:-1], inf)
    last_total, last_before, last_len = -no, -no, jnp.zeros_like(no)
    first_total, first_before = no, no
    before = jnp.zeros_like(no)
    for i in range(n):
        total = ln[i] if i == 0 else before + ln[i]
        positive = ln[i] > 0
        ev = (sl[i] < k) & positive
        # a distractor ties with the top evidence score ranks after it (higher slot)
        beyond = positive & ((sl[i] < k) | (sc[i] <= top))
        last_total = jnp.where(ev, total, last_total)  # the last evidence unit met
        last_len = jnp.where(ev, ln[i], last_len)
        first_total = jnp.minimum(first_total, jnp.where(beyond, total, inf))
        if mode == "cut":
            last_before = jnp.where(ev, before, last_before)
            first_before = jnp.minimum(first_before, jnp.where(beyond, before, inf))
        before = total
    return Frontier(last_total, last_before, last_len, first_total, first_before)


def _frontier_by_rank(lengths, scores, top, k: int, mode: str) -> Frontier:
    """``evidence_frontier`` for long candidate lists: ranks by comparison (``_rank_totals``)."""
    rank, total, before = _rank_totals(lengths, scores, with_before=mode == "cut")
    n = lengths.shape[-1]
    is_ev = jnp.arange(n) < k
    positive = lengths > 0
    ev = is_ev & positive  # (4, N)
    last_rank = jnp.max(jnp.where(ev, rank, -1.0), axis=-1, keepdims=True)
    last = ev & (rank == last_rank)
    inf = jnp.asarray(jnp.inf, lengths.dtype)
    beyond = positive & (is_ev | (scores <= top))
    return Frontier(
        last_total=jnp.max(jnp.where(last, total, -inf), axis=-1),
        last_before=jnp.max(jnp.where(last, before, -inf), axis=-1),
        last_len=jnp.max(jnp.where(last, lengths, 0.0), axis=-1),
        first_total=jnp.min(jnp.where(beyond, total, inf), axis=-1),
        first_before=jnp.min(jnp.where(beyond & (mode == "cut"), before, inf), axis=-1),
    )


# ---- numpy twin (sim.numpy_kernel's rank order): the same stable order by the same sorting
# network on whole rows of queries (tests/sim/test_sim_numpy_kernel.py) ----


def _rank_keys(scores: np.ndarray) -> tuple[np.ndarray, int]:
    """One int64 key per record whose descending order is the stable rank order: the score's
    order-preserving integer bits (``-0.0`` counts as ``0.0``, as in a float comparison), then the
    slot, earlier slots first among equal scores. Returns ``(keys (N, n), slot bits)``."""
    N = scores.shape[0]
    keys = _sortable_bits(scores).astype(np.int64)
    shift = max(1, (N - 1).bit_length())
    keys <<= shift
    keys |= (np.int64((1 << shift) - 1) - np.arange(N, dtype=np.int64))[:, None]
    return keys, shift


def _sortable_bits(x: np.ndarray) -> np.ndarray:
    """int32 whose order is the float32 order of ``x`` (``-0.0`` and ``0.0`` equal; no NaN)."""
    bits = (x + np.float32(0)).view(np.int32)  # -0.0 + 0.0 == +0.0
    flip = bits >> 31  # -1 on negative floats, 0 elsewhere
    flip &= np.int32(0x7FFFFFFF)
    bits ^= flip
    return bits


_SORT_BELOW = 1024  # queries up to which ``np.sort`` beats the network's per-row calls


def rank_order(scores: np.ndarray) -> np.ndarray:
    """``(N, n)`` slot of the record at each rank (higher score first, equal scores by slot): the
    order of a stable ``argsort(-scores, axis=0)``, by a sorting network over whole rows (for at
    most ``_SORT_BELOW`` queries, as the exact re-run of a few has them, by ``np.sort``: one key per
    record and the keys distinct, so the same order)."""
    keys, shift = _rank_keys(scores)
    if keys.shape[1] <= _SORT_BELOW:  # few queries: numpy's sort (the keys are distinct)
        out = np.negative(np.sort(np.negative(keys), axis=0))
    else:
        rows = list(keys)
        for a, b in sorting_network(len(rows)):
            hi = np.maximum(rows[a], rows[b])
            np.minimum(rows[a], rows[b], out=rows[b])
            rows[a] = hi
        out = np.stack(rows)
    out &= np.int64((1 << shift) - 1)
    np.subtract(np.int64((1 << shift) - 1), out, out=out)
    return out


def _running(x: np.ndarray, op=np.add) -> np.ndarray:
    """Running ``op`` over the rows of ``x`` ``(N, n)``, strictly in row order (row by row: numpy's
    ``accumulate`` along axis 0 walks each column separately, many times slower)."""
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        op(out[i - 1], x[i], out=out[i])
    return out
