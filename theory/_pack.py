"""Context packing under a token budget in JAX: the kernel of the rule in ``theory._packing``.

The rule and the mode names (``PACKINGS``) live in ``theory._packing`` with its numpy reference
``pack_reference``; this is the jit-compiled form the simulation runs (``pack_one`` is the kernel
of one ordered list, for callers that ``vmap`` it themselves inside their own ``jit``). The result is the number of
tokens kept of each record, so a record is present in full exactly when ``kept == length``.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from retcon.errors import InputError
from theory._packing import check_packing

UNROLL_MAX = 32  # running sums over at most this many records are unrolled


def cumsum_in_order(x: jax.Array) -> jax.Array:
    """Running sums over the last (small, static) axis, each strictly left to right.

    ``total[i] = ((x[0] + x[1]) + ...) + x[i]``: an unrolled loop, so the rounding never depends on
    how XLA lays out the batch around it (a query's numbers stay the same in any batch size).
    """
    n = x.shape[-1]
    if n > UNROLL_MAX:  # long axes (the stress test's pooled memories): the same order, as a loop
        _, out = jax.lax.scan(
            lambda c, v: (c + v, c + v), jnp.zeros_like(x[..., 0]), jnp.moveaxis(x, -1, 0)
        )
        return jnp.moveaxis(out, 0, -1)
    parts = [x[..., 0]]
    for j in range(1, n):
        parts.append(parts[-1] + x[..., j])
    return jnp.stack(parts, axis=-1)


def pack_one(lengths: jax.Array, budget: jax.Array, mode: str) -> jax.Array:
    """Tokens kept per record for one ordered list of records ``(K,)`` and one budget ``()``.

    The traceable kernel of ``pack`` (no validation, no dtype cast): ``mode`` must be one of
    ``PACKINGS``. References: MODEL §2 (packing modes).
    """
    if mode == "skip":

        def step(remaining, length):
            fits = length <= remaining
            return jnp.where(fits, remaining - length, remaining), jnp.where(fits, length, 0.0)

        _, kept = jax.lax.scan(step, budget.astype(lengths.dtype), lengths)
        return kept
    total = cumsum_in_order(lengths)
    if mode == "prefix":
        # cumsum is non-decreasing, so cumsum <= B keeps exactly the records before the first misfit.
        return jnp.where(total <= budget, lengths, jnp.zeros_like(lengths))
    before = jnp.concatenate([jnp.zeros((1,), lengths.dtype), total[:-1]])
    return jnp.where(total <= budget, lengths, jnp.clip(budget - before, 0.0, lengths))


@partial(jax.jit, static_argnames=("mode",))
def _pack_jit(lengths, budget, mode):
    return jnp.vectorize(partial(pack_one, mode=mode), signature="(k),()->(k)")(lengths, budget)


def pack(lengths, budget, mode: str = "prefix") -> jax.Array:
    """Tokens kept of each record when records are packed in order under a token budget.

    Args:
      lengths: ``(..., K)`` record lengths in tokens (> 0; 0 marks padding), in retriever order.
      budget: scalar or ``(...)`` budget in tokens, broadcast against ``lengths[..., 0]``.
      mode: ``"prefix"`` (stop at the first misfit), ``"skip"`` (skip misfits, keep trying) or
        ``"cut"`` (truncate the first misfit to the remaining budget, then stop).

    Returns:
      ``(..., K)`` tokens kept per record (float32): ``lengths`` where the record fits, 0 where it
      is left out, a partial count for the record ``cut`` truncates.

    References:
      MODEL §2 (packing modes), §6.7 (``skip`` makes the raw-grounded region non-nested).
    """
    check_packing("pack: mode", mode)
    lengths = jnp.asarray(lengths, jnp.float32)
    budget = jnp.asarray(budget, jnp.float32)
    if lengths.ndim == 0:
        raise InputError("pack: lengths must have a record axis (shape (..., K)); got a scalar.")
    return _pack_jit(lengths, budget, mode)
