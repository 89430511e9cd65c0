"""The paper's published effects as the true worlds of the verdict rules (MODEL §11).

A rule's power is a property of the rule at a *stated* effect, fixed before the data are seen:
the paper's published gains over retention, Table 4 (LoCoMo, n = 75, budgets 16-128) for
LoCoMo-sized data and Table 3 (LongMemEval, budgets 32-256) for LongMemEval-sized data. Power at
the data's own observed effect is a function of the p-value and adds nothing (Hoenig & Heisey
2001), so no rule's true world is built from the data's effect.

The paper's four budgets are placed on the data's grid by their position in ``log B``: the
tightest paper budget at the data's tightest, the loosest at its loosest, linear interpolation
in between (``on_grid``). The half-size world halves every gain and loss.

Claims 6-9 take the effects stated in docs/statistics.md ("The stated effects of claims 6-9"),
each from MODEL §11: Table 4's operator differences and Table 7's per-type spread (claim 6),
Table 8 at the stressed budgets (claim 7), Table 11 (claim 8), Table 2's harm cut and Table 8's
bounded cost (claim 9).
"""

from __future__ import annotations

import numpy as np

from paper_checks._published import (
    OPERATORS,
    TABLE_2,
    TABLE_3,
    TABLE_3_BUDGETS,
    TABLE_4,
    TABLE_4_BUDGETS,
    TABLE_8,
    TABLE_8_BUDGETS,
)

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


# ---- the stated effects of claims 6-9 (docs/statistics.md, "The stated effects of claims 6-9") --

#: Claim 6, ``U(o) - U(rewrite)``: per operator the mean over Table 4's budgets of
#: ``(o - ret) - (rewrite - ret)`` (LoCoMo, the data's size).
CROSS_NOTE_BEATS = {
    op: float(np.mean(np.subtract(TABLE4[op], TABLE4["rewrite"]))) for op in ("abstract", "merge")
}

#: MODEL §11, Table 7: gain over retention at 256 tokens by query type (abstract, merge,
#: rewrite). Not in ``paper_checks._published``; tests/paper_checks/test_effects.py checks it
#: against MODEL.md's text.
TABLE7 = {
    "single-session": (0.037, -0.037, -0.037),
    "multi-session": (0.051, 0.179, -0.077),
    "temporal": (-0.154, -0.051, 0.051),
    "knowledge-update": (-0.125, -0.233, -0.142),
}

#: Claim 6, ``U(merge) - U(abstract)`` per condition: the mean size of Table 7's per-type
#: ``merge - abstract`` (two types each way).
CROSS_NOTE_CONDITION = float(np.mean([abs(m - a) for a, m, _ in TABLE7.values()]))


def cross_note_effects(beats, conds) -> dict[str, float]:
    """Claim 6's true world: ``{"b:" + unit: CROSS_NOTE_BEATS[op]}`` (the unit's last ``:`` part
    names the operator; another name gets abstract's) and ``{"c:" + unit: +-CROSS_NOTE_CONDITION}``
    with the signs taking turns in name order, never in the data's."""
    out = {
        f"b:{k}": CROSS_NOTE_BEATS.get(k.rsplit(":", 1)[-1], CROSS_NOTE_BEATS["abstract"])
        for k in beats
    }
    for i, k in enumerate(sorted(conds)):
        out[f"c:{k}"] = CROSS_NOTE_CONDITION * (1.0 if i % 2 == 0 else -1.0)
    return out


#: Claim 7, ``acc(oas) - acc(best-fixed)`` on budget-stressed rows: Table 8's direct OAS minus
#: its training-selected fixed operator, mean at 32 and 64 (nearly every question stressed).
ROUTER_GAIN_BUDGETS = (32, 64)
ROUTER_GAIN = float(
    np.mean(
        [
            TABLE_8["direct OAS", b].accuracy
            - TABLE_8["training-selected fixed operator", b].accuracy
            for b in ROUTER_GAIN_BUDGETS
        ]
    )
)

#: MODEL §11, Table 11: MLP - ridge accuracy at 32 / 64 / 128 / 256 (point values; not in
#: ``paper_checks._published``, checked against MODEL.md by tests/paper_checks/test_effects.py).
TABLE11 = (-0.016, -0.013, 0.004, -0.037)

#: Claim 8, ``acc(mlp) - acc(oas)``: Table 11's mean.
MLP_MINUS_RIDGE = float(np.mean(TABLE11))

#: Claim 9, the harm cut as a share of the uncalibrated router's harm rate: Table 2's harmful
#: choices, direct against calibrated OAS, summed over the four budgets (39 -> 7).
HARM_CUT = 1.0 - sum(TABLE_2["calibrated", b].harmed or 0 for b in TABLE_8_BUDGETS) / sum(
    TABLE_2["direct", b].harmed or 0 for b in TABLE_8_BUDGETS
)

#: Claim 9, the accuracy cost: Table 8's direct minus calibrated OAS at the budgets where the
#: paper's cost is within the claim's 3-point bound (128 and 256; at 32 and 64 it is 5.8 and 21.5).
HARM_COST_BUDGETS = (128, 256)
HARM_COST = float(
    np.mean(
        [
            TABLE_8["direct OAS", b].accuracy - TABLE_8["calibrated OAS", b].accuracy
            for b in HARM_COST_BUDGETS
        ]
    )
)
