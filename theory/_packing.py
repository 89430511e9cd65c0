"""The packing rule of MODEL §2, written out record by record: the one reference.

Records arrive in retriever order and are taken while they fit under the budget:

* ``prefix``: stop at the first record that does not fit;
* ``skip``: pass over a record that does not fit and try the next;
* ``cut``: truncate the first record that does not fit to the remaining budget, then stop.

``PACKINGS`` is the one list of mode names (scenarios, ``oas`` features, real data and every CLI
``--packing`` take it from here). ``pack_reference`` is plain numpy, so the router's features and
the real-data pipeline pack without JAX; ``theory.pack`` is the JAX kernel of the same rule, tested
against it.

References: MODEL §2 (packing), §6.7 (``skip`` makes the raw-grounded region non-nested).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from retcon.errors import InputError, check_choice

if TYPE_CHECKING:  # numpy loads in pack_reference: the CLIs take PACKINGS at start-up
    import numpy as np

#: Packing modes, in the order documented in MODEL §2.
PACKINGS = ("prefix", "skip", "cut")


def check_packing(name: str, value: str) -> str:
    """``value`` when it is a packing mode, else ``InputError`` naming ``name`` (an argument or option)."""
    return check_choice(name, value, PACKINGS)


def pack_reference(lengths, budget, mode: str = "prefix") -> np.ndarray:
    """Tokens kept of each record when records are packed in order under a token budget.

    Args:
      lengths: ``(..., K)`` record lengths in tokens (>= 0; 0 marks padding), in retriever order.
      budget: scalar or ``(...)`` budget in tokens, broadcast against ``lengths[..., 0]``.
      mode: ``"prefix"``, ``"skip"`` or ``"cut"`` (module docstring).

    Returns:
      ``(..., K)`` float64 tokens kept per record: the length where the record is packed whole, 0
      where it is left out, the remaining budget for the record ``cut`` truncates.

    References: MODEL §2 (packing).
    """
    check_packing("pack_reference: mode", mode)
    import numpy as np

    x = np.asarray(lengths, dtype=np.float64)
    if x.ndim == 0:
        raise InputError(
            "pack_reference: lengths must have a record axis (shape (..., K)); got a scalar."
        )
    if x.ndim == 1 and np.ndim(budget) == 0:  # one record list: the same steps on Python floats
        return _pack_one(x.tolist(), float(budget), mode)  # (numpy's per-call cost dominates)
    remaining = np.broadcast_to(np.asarray(budget, dtype=np.float64), x.shape[:-1]).copy()
    packing = np.ones(x.shape[:-1], bool)  # False once prefix / cut have stopped
    kept = np.zeros_like(x)
    for k in range(x.shape[-1]):
        length = x[..., k]
        fits = packing & (length <= remaining)
        take = np.where(fits, length, 0.0)
        if mode == "cut":
            take = np.where(packing & ~fits, np.maximum(remaining, 0.0), take)
        kept[..., k] = take
        remaining = remaining - take
        if mode != "skip":
            packing = fits
    return kept


def _pack_one(lengths: list[float], remaining: float, mode: str):
    """``pack_reference`` of one record list: the loop above on Python floats (IEEE doubles, so
    the same values bit for bit)."""
    import numpy as np

    packing = True
    kept = []
    for length in lengths:
        fits = packing and length <= remaining
        take = length if fits else 0.0
        if mode == "cut" and packing and not fits:
            take = max(remaining, 0.0)
        kept.append(take)
        remaining = remaining - take
        if mode != "skip":
            packing = fits
    return np.array(kept, dtype=np.float64)
