"""Test oracle: claim 1's reversal rule before issue 46 (the "before" of its power comparison).

Per operator and budget, one-sided Student-t tests of ``dU > 0`` (every budget but the loosest)
and ``dU < 0`` (every budget but the tightest) over the per-group curves, each at
``alpha / (K (m - 1))``; a reader reverses when some operator has a significant gain at a budget
below a significant loss (MODEL §6.1-6.3). Kept only so that
``tests/paper_checks/test_paper_checks_power.py`` can measure the max-T rule against it on the
same worlds.
"""

import numpy as np

from retcon.inference import group_t_pvalue


def bonferroni_grid_reversal(budgets, group_delta, *, alpha: float = 0.05) -> bool:
    """True when the old grid rule reads a significant reversal (grade 2) on ``(G, K, m)``."""
    order = np.argsort(np.asarray(budgets, float))
    d = np.asarray(group_delta, float)[..., order]
    G, K, m = d.shape
    scale = K * max(m - 1, 1)
    flat = d.reshape(G, K * m)
    p_gain = np.minimum(1.0, scale * group_t_pvalue(flat, alternative="greater").reshape(K, m))
    p_loss = np.minimum(1.0, scale * group_t_pvalue(flat, alternative="less").reshape(K, m))
    p_gain[:, -1], p_loss[:, 0] = 1.0, 1.0
    for k in range(K):
        gains = np.flatnonzero(np.nan_to_num(p_gain[k], nan=1.0) <= alpha)
        losses = np.flatnonzero(np.nan_to_num(p_loss[k], nan=1.0) <= alpha)
        if gains.size and losses.size and gains[0] < losses[-1]:
            return True
    return False
