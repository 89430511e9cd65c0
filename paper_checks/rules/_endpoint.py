"""The reversal rule of claims 1 and 4: the primary contrast, tested by an exact max-T sign-flip.

The primary contrast, stated before data (docs/statistics.md, "Each claim's primary contrast"):
for every distinct consolidation operator ``k``, the gain ``dU_k`` at the design's tightest
budget above 0 and ``dU_k`` at its loosest budget below 0. An operator reverses (grade 2) when
both its cells reject; the ``2K`` one-sided cells are tested together by the single-step max-T
sign-flip test over the per-conversation values (``retcon.inference.max_t_sign_flip``: all
``2**G`` sign patterns for ``G <= 16``), which keeps the family-wise error <= ``alpha`` whatever
the cells' correlation and counts identical operators once (their cells move together).

False reversal: if no operator reverses, each operator has a true-null cell (its tight gain is
not positive or its loose loss is not negative), and a grade 2 needs that cell to reject, which
happens with probability <= ``alpha`` over all operators together (strong control of the max-T
test). Within an operator both cells must reject (an intersection-union test, Berger 1982), so
no correction is spent between the two budgets.

References: MODEL §6.1-6.3; Westfall & Young (1993); Berger (1982), Technometrics 24(4).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from retcon.inference import max_t_sign_flip

#: Family-wise error of a false reversal.
ALPHA = 0.05
#: The grades of ``_verdicts`` (2 significant, 1 on the points only, 0 does not hold).
SIGNIFICANT, POINT, NO = 2, 1, 0


class EndpointTest(NamedTuple):
    """Claims 1 and 4 on one reader's per-group curves.

    Fields: ``gain`` ``(K,)`` max-T adjusted p-values of ``dU_k > 0`` at the tightest budget;
    ``loss`` ``(K,)`` of ``dU_k < 0`` at the loosest; ``grades`` ``(K,)``: 2 when both reject at
    ``alpha``, 1 when the mean curve is above 0 at the tightest and below 0 at the loosest
    without both rejecting, 0 otherwise; ``point`` ``(K, m)`` the mean curves (budgets in the
    given order); ``exact``: every sign pattern enumerated.
    """

    gain: np.ndarray
    loss: np.ndarray
    grades: np.ndarray
    point: np.ndarray
    exact: bool


def endpoint_test(budgets, group_delta, *, alpha: float = ALPHA) -> EndpointTest:
    """The reversal rule (module docstring) on ``(G, K, m)`` per-group ``dU`` (NaN: no data).

    Args:
      budgets: ``(m,)`` budgets, any order (the tightest and loosest are found here), ``m >= 2``.
      group_delta: ``(G, K, m)`` per-group ``dU_k(b)`` of the distinct operators.
      alpha: the family-wise error of a false reversal.

    Returns:
      ``EndpointTest``.
    """
    b = np.asarray(budgets, float)
    d = np.asarray(group_delta, float)
    lo, hi = int(np.argmin(b)), int(np.argmax(b))
    K = d.shape[1]
    cells = np.concatenate([d[:, :, lo], d[:, :, hi]], axis=1)  # (G, 2K)
    test = max_t_sign_flip(cells, np.r_[np.ones(K), -np.ones(K)])
    p = np.nan_to_num(test.adjusted, nan=1.0)
    gain, loss = p[:K], p[K:]
    with np.errstate(invalid="ignore"):
        point = np.nanmean(d, axis=0)
    sig = (gain <= alpha) & (loss <= alpha)
    pts = (point[:, lo] > 0) & (point[:, hi] < 0)
    grades = np.where(sig, SIGNIFICANT, np.where(pts, POINT, NO)).astype(int)
    return EndpointTest(gain, loss, grades, point, test.exact)


def endpoint_reversal(budgets, group_delta, *, alpha: float = ALPHA) -> bool:
    """True when some operator reverses significantly (``endpoint_test``'s grade 2)."""
    return bool((endpoint_test(budgets, group_delta, alpha=alpha).grades == SIGNIFICANT).any())
