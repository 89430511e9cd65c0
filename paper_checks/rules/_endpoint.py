"""A candidate rule for claims 1 and 4 with more power at the paper's effect (issue 30 item 3):
a one-sided test at the two budgets the claim names, not a Bonferroni over the whole grid.

Not wired into the verdicts yet: ``_verdicts.reversal_test`` still decides claims 1 and 4. This
module is the measured alternative (tests/paper_checks/test_paper_checks_power.py; docs/statistics.md §6).

Rule: an operator reverses when its per-conversation ``dU`` is significantly above 0 at the
tightest budget *and* significantly below 0 at the loosest, each one-sided t-test at level
``alpha / K`` for ``K`` operators. Within an operator this is an intersection-union test (both
must reject; Berger 1982), so it needs no correction between the two budgets; over operators it
is a Bonferroni. If no operator reverses anywhere on the grid, then for each operator the gain
at the tightest budget or the loss at the loosest is false, so a false reversal has probability
at most ``alpha`` whatever the curves.
"""

from __future__ import annotations

import numpy as np

from retcon.inference import group_t_pvalue


def endpoint_reversal(budgets, group_delta, *, alpha: float = 0.05) -> bool:
    """Claims 1 and 4 by the endpoint rule (module docstring).

    Args:
      budgets: ``(m,)`` budgets (any order); group_delta: ``(G, K, m)`` per-group ``dU``.
      alpha: the family-wise error of a false reversal.

    Returns:
      True when some operator reverses significantly.
    """
    order = np.argsort(np.asarray(budgets, float))
    d = np.asarray(group_delta, float)[..., order]
    K = d.shape[1]
    p_gain = np.nan_to_num(group_t_pvalue(d[:, :, 0], alternative="greater"), nan=1.0)
    p_loss = np.nan_to_num(group_t_pvalue(d[:, :, -1], alternative="less"), nan=1.0)
    return bool(np.any((p_gain <= alpha / K) & (p_loss <= alpha / K)))
