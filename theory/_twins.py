"""numpy and JAX ``dU``, ``C``, ``R`` from CDF values, for sim/ and the CLI.

The sympy expressions of `theory.symbolic.decomposition` are affine in the two CDF values
``F(B)`` and ``F(B/rho)``; `theory._formulas.decompose` writes them out once as arithmetic, which
runs elementwise on numpy and jax arrays alike (tests check it against the derivation). The
reader's accuracy with the generated record is ``min(a phi, 1)`` (docs/model.md §2 clips the
reader at 1), so ``phi`` enters as ``min(phi, 1/a)``.
References: docs/model.md §4, §6.1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

import numpy as np

from theory._formulas import decompose

if TYPE_CHECKING:
    import jax

ArrayT = TypeVar("ArrayT")  # numpy or jax arrays


class Decomposition(NamedTuple, Generic[ArrayT]):
    """``dU = C + R`` on a grid of budgets (arrays of one shape; accuracy units).

    Attributes:
      delta: ``dU_o(B) = U_B(o) - U_B(ret)``.
      coverage: ``C_o(B)``, the gain on queries whose raw evidence does not fit.
      replacement: ``R_o(B)``, the change on raw-grounded queries.

    References: docs/model.md §4, §6.1.
    """

    delta: ArrayT
    coverage: ArrayT
    replacement: ArrayT


def decompose_numpy(
    f_b, f_b_over_rho, *, fidelity, acc_raw, acc_guess
) -> Decomposition[np.ndarray]:
    """``dU``, ``C``, ``R`` from CDF values, in float64 numpy.

    Args:
      f_b: ``F(B)``, array of any shape.
      f_b_over_rho: ``F(B / rho)``, same shape.
      fidelity, acc_raw, acc_guess: ``phi``, ``a``, ``g`` (scalars or broadcastable arrays).

    Returns:
      Decomposition of float64 arrays with the broadcast shape.

    References: docs/model.md §6.1.
    """
    f_b = np.asarray(f_b, dtype=np.float64)
    f_s = np.asarray(f_b_over_rho, dtype=np.float64)
    a_ = np.asarray(acc_raw, dtype=np.float64)
    phi_eff = np.minimum(np.asarray(fidelity, dtype=np.float64), 1.0 / a_)
    out = decompose(f_b, f_s, phi_eff, a_, np.asarray(acc_guess, dtype=np.float64))
    shape = np.broadcast_shapes(f_b.shape, f_s.shape, phi_eff.shape, np.shape(acc_guess))
    return Decomposition(
        *(np.broadcast_to(np.asarray(o, dtype=np.float64), shape).copy() for o in out)
    )


def decompose_jax(f_b, f_b_over_rho, *, fidelity, acc_raw, acc_guess) -> Decomposition[jax.Array]:
    """``dU``, ``C``, ``R`` from CDF values as jax arrays; jit- and vmap-safe (no value checks).

    Args: as `decompose_numpy`. Returns: Decomposition of jax arrays (broadcast shape).
    References: docs/model.md §6.1.
    """
    import jax.numpy as jnp

    f_b, f_s = jnp.asarray(f_b), jnp.asarray(f_b_over_rho)
    phi_eff = jnp.minimum(fidelity, 1.0 / jnp.asarray(acc_raw))
    out = decompose(f_b, f_s, phi_eff, acc_raw, acc_guess)
    shape = jnp.broadcast_shapes(f_b.shape, f_s.shape, jnp.shape(phi_eff), jnp.shape(acc_guess))
    return Decomposition(*(jnp.broadcast_to(jnp.asarray(o, dtype=f_b.dtype), shape) for o in out))


def delta_curve_jax(
    cdf: Callable, budgets, *, compress_ratio, fidelity, acc_raw, acc_guess
) -> Decomposition[jax.Array]:
    """`decompose_jax` at ``F(B)`` and ``F(B / rho)`` for a jax-traceable CDF ``cdf``.

    Args:
      cdf: jax-traceable ``F``, elementwise on token lengths.
      budgets: array of budgets in tokens, any shape.
      compress_ratio, fidelity, acc_raw, acc_guess: ``rho``, ``phi``, ``a``, ``g``.

    Returns:
      Decomposition of jax arrays, shape of ``budgets``.

    References: docs/model.md §6.1.
    """
    import jax.numpy as jnp

    budgets = jnp.asarray(budgets)
    return decompose_jax(
        cdf(budgets),
        cdf(budgets / compress_ratio),
        fidelity=fidelity,
        acc_raw=acc_raw,
        acc_guess=acc_guess,
    )
