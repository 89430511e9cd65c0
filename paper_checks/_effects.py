"""The paper's published effects as the true worlds of the verdict rules (MODEL §11).

A rule's power is a property of the rule at a *stated* effect, fixed before the data are seen:
the paper's published gains over retention, Table 4 (LoCoMo, n = 75, budgets 16-128) for
LoCoMo-sized data and Table 3 (LongMemEval, budgets 32-256) for LongMemEval-sized data. Power at
the data's own observed effect is a function of the p-value and adds nothing (Hoenig & Heisey
2001), so no rule's true world is built from the data's effect.

The paper's four budgets are placed on the data's grid by their position in ``log B``: the
tightest paper budget at the data's tightest, the loosest at its loosest, linear interpolation
in between (``on_grid``). The half-size world halves every gain and loss.
"""

from __future__ import annotations

import numpy as np

#: MODEL §11, Table 3 (LongMemEval): gain over retention at 32 / 64 / 128 / 256 tokens.
TABLE3 = {
    "abstract": (0.480, 0.333, 0.142, -0.080),
    "merge": (0.458, 0.316, 0.080, -0.107),
    "rewrite": (0.196, 0.187, 0.098, -0.084),
}
TABLE3_BUDGETS = (32.0, 64.0, 128.0, 256.0)

#: MODEL §11, Table 4 (LoCoMo, n = 75): gain over retention at 16 / 32 / 64 / 128 tokens.
TABLE4 = {
    "abstract": (0.360, 0.173, 0.000, -0.027),
    "merge": (0.347, 0.253, -0.013, -0.040),
    "rewrite": (0.133, 0.133, -0.027, 0.000),
}
TABLE4_BUDGETS = (16.0, 32.0, 64.0, 128.0)

TABLES = {"Table 3": (TABLE3, TABLE3_BUDGETS), "Table 4": (TABLE4, TABLE4_BUDGETS)}


def on_grid(curve, paper_budgets, budgets) -> np.ndarray:
    """A paper curve ``(4,)`` on the data's budgets ``(m,)`` by relative position in ``log B``
    (module docstring); budgets in any order, the result in the same order."""
    pb = np.log(np.asarray(paper_budgets, float))
    b = np.log(np.asarray(budgets, float))
    if b.size < 2 or np.ptp(b) == 0:
        return np.full(b.shape, float(np.asarray(curve, float)[0]))
    x = (b - b.min()) / np.ptp(b)
    px = (pb - pb.min()) / np.ptp(pb)
    return np.interp(x, px, np.asarray(curve, float))


def paper_curves(budgets, operators, table: str = "Table 4") -> np.ndarray:
    """``(K, m)`` the paper's ``dU`` of each named operator on the data's grid; an operator the
    paper does not name gets abstract's curve (the paper's headline operator)."""
    tab, pb = TABLES[table]
    return np.stack([on_grid(tab.get(op, tab["abstract"]), pb, budgets) for op in operators])
