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

from paper_checks._published import OPERATORS, TABLE_3, TABLE_3_BUDGETS, TABLE_4, TABLE_4_BUDGETS

#: MODEL §11, Table 3 (LongMemEval): gain over retention at 32 / 64 / 128 / 256 tokens, read from
#: ``paper_checks._published`` (the one home of the paper's numbers).
TABLE3 = {op: tuple(TABLE_3[op, b].value for b in TABLE_3_BUDGETS) for op in OPERATORS}
TABLE3_BUDGETS = tuple(float(b) for b in TABLE_3_BUDGETS)

#: MODEL §11, Table 4 (LoCoMo, n = 75): gain over retention at 16 / 32 / 64 / 128 tokens.
TABLE4 = {op: tuple(TABLE_4[op, b].value for b in TABLE_4_BUDGETS) for op in OPERATORS}
TABLE4_BUDGETS = tuple(float(b) for b in TABLE_4_BUDGETS)

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
