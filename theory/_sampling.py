"""JAX draws from the length families of ``DIST_PARAMS``: the one sampler of theory and sim.

A family's parameters come as ``(p1, p2)`` in ``DIST_PARAMS`` order (``p2`` unused by one-parameter
families) and may be traced arrays, so sim's kernel draws every query type with one compiled
function. Each draw is ``unit parameter * standard variate``, so scaling the unit parameter
(``DIST_SCALE_PARAM``) scales every length exactly (docs/model.md §6.5).

References: docs/model.md §6 (``L ~ F``), §6.5 (scaling).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def sample_lengths(key: jax.Array, family: str, p1, p2, shape: tuple[int, ...]) -> jax.Array:
    """Lengths in tokens (> 0) from ``family`` with parameters ``(p1, p2)``.

    Args:
      key: JAX PRNG key.
      family: a name of ``DIST_PARAMS`` (static).
      p1, p2: the family's parameters in ``DIST_PARAMS`` order (scalars, may be traced).
      shape: output shape.

    Returns:
      float32 array of ``shape``: ``point`` ``length``; ``uniform`` on ``(0, max]``; ``exponential``
      ``mean * E``; ``gamma`` ``scale * Gamma(shape)``; ``lognormal`` ``scale * exp(sigma Z)``;
      ``weibull`` ``scale * E^(1/shape)`` (``E`` standard exponential, ``Z`` standard normal).
    """
    if family == "point":
        x = jnp.full(shape, p1, jnp.float32)
    elif family == "uniform":
        x = p1 * (1.0 - jax.random.uniform(key, shape))
    elif family == "exponential":
        x = p1 * jax.random.exponential(key, shape)
    elif family == "gamma":
        x = p2 * jax.random.gamma(key, p1, shape)
    elif family == "lognormal":
        x = p2 * jnp.exp(p1 * jax.random.normal(key, shape))
    elif family == "weibull":
        x = p2 * jax.random.exponential(key, shape) ** (1.0 / p1)
    else:
        raise ValueError(f"sample_lengths: unknown family {family!r}")
    return jnp.maximum(x, 1e-30)
