"""Evidence-length strata: the one rule that splits paired rows by ``len(C)`` (MODEL §6.5).

Used by the magnitude report (``oas.identify_report``, strata of raw evidence length) and by the
paper checks (claim 5 and the crossover-vs-length figure, strata of ``cluster_tokens``); each
caller passes its own length per row, the rule is this one.

The rule, edges included:

* questions, not rows, are counted: the edges are the ``0, 1/k, ..., 1`` quantiles (numpy's
  default linear interpolation) of one length per question (its first row's), so a stratum holds
  about ``1/k`` of the questions whatever their number of budget rows;
* stratum ``s`` holds ``lower[s] <= L < upper[s]``: closed below, open above; the first stratum
  is also open below (``lower[0] = -inf`` would change nothing for the data the edges came from)
  and the last is unbounded above (``upper[-1] = inf``), so the longest question is in it;
* every row of a question lands in its question's stratum when the question's rows share one
  length (as ``cluster_tokens`` and raw evidence tokens do);
* a stratum left empty (tied edges, ``lower == upper``, or interpolated edges that fall between
  two questions) is dropped and the rest renumbered, so there are at most ``n_strata`` strata
  and none is empty; ``n_strata = 1`` gives one stratum of every row.

References: MODEL §6.5 (crossover against evidence length).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from retcon.errors import InputError, check_at_least


class LengthStrata(NamedTuple):
    """Strata of n rows (k <= n_strata kept strata).

    Attributes:
      stratum: shape ``(n,)`` int in ``0..k-1``.
      lower: shape ``(k,)`` inclusive lower edge in tokens (the first: the shortest question).
      upper: shape ``(k,)`` exclusive upper edge in tokens (the last: ``inf``).
      median: shape ``(k,)`` median length over the stratum's rows.
    """

    stratum: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    median: np.ndarray


def length_strata(lengths, query_id, n_strata: int) -> LengthStrata:
    """Split rows into evidence-length strata by the quantiles of their questions' lengths.

    Args:
      lengths: shape ``(n,)`` finite token lengths, one per row.
      query_id: shape ``(n,)`` question labels (one length per question is used for the edges).
      n_strata: strata wanted, >= 1.

    Returns:
      ``LengthStrata`` (see the module docstring for the edge rule).

    Raises:
      InputError: no rows, a non-finite length, or ``lengths`` and ``query_id`` of two sizes.

    References: MODEL §6.5.
    """
    n_strata = check_at_least("n_strata", n_strata, 1)
    L = np.asarray(lengths, dtype=np.float64).reshape(-1)
    qid = np.asarray(query_id).astype(str).reshape(-1)
    if L.size == 0 or L.size != qid.size:
        raise InputError(
            f"length_strata: lengths and query_id must be non-empty and of one size; got "
            f"{L.size} and {qid.size}."
        )
    if not np.all(np.isfinite(L)):
        raise InputError(
            f"length_strata: lengths must be finite; row {int(np.argmin(np.isfinite(L)))} is "
            f"{L[np.argmin(np.isfinite(L))]}."
        )
    _, first = np.unique(qid, return_index=True)
    edges = np.quantile(L[first], np.linspace(0.0, 1.0, n_strata + 1))
    edges[-1] = np.inf
    raw = np.clip(np.searchsorted(edges, L, side="right") - 1, 0, n_strata - 1)
    kept = np.unique(raw)  # tied or interpolated edges can leave a stratum empty
    stratum = np.searchsorted(kept, raw)
    median = np.array([np.median(L[stratum == k]) for k in range(kept.size)])
    return LengthStrata(stratum, edges[kept], edges[kept + 1], median)


def stratum_label(lower, upper) -> str:
    """``"L in [lo, hi)"`` in whole tokens; ``"L >= lo"`` when the upper edge is open (``None``
    or ``inf``, the last stratum)."""
    if upper is None or not np.isfinite(upper):
        return f"L >= {float(lower):.0f}"
    return f"L in [{float(lower):.0f}, {float(upper):.0f})"
