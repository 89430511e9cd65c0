"""The answer rules of the simulation statements of ``paper-checks --over-time`` (MODEL §10):
the inverted U in passes (`inverted_u`) and a policy beating a baseline (`beats`), each cell's
interval at the normal quantile ``z``.

Shared by the section (`paper_checks.studies._timeline`) and the error rates of these rules
(`paper_checks.studies._timeline_oc`), below both so neither imports the other at run time.

References: docs/timeline.md ("Beyond the paper in `retcon paper-checks --over-time`").
"""

from __future__ import annotations

import math

import numpy as np

from retcon.vocab import OPERATORS

Z = 1.959963984540054


def _answer(pos: int, neg: int) -> str:
    if pos and not neg:
        return "YES"
    if neg and not pos:
        return "NO"
    return "UNDECIDED"


def inverted_u(summary: dict) -> dict:
    """Statement 1 from `sim.summarize_timeline`'s ``by_generation`` rows."""
    cells, yes, mono = [], 0, 0
    for row in summary["by_generation"]:
        u, lo, hi = (np.asarray(row[k], float) for k in ("utility", "lower", "upper"))
        k = int(np.argmax(u))
        interior = 0 < k < u.size - 1 and lo[k] > hi[0] and lo[k] > hi[-1]
        end = k in (0, u.size - 1) and hi[u.size - 1 - k] < lo[k]
        yes += bool(interior)
        mono += bool(end)
        cells.append(
            {
                "operator": row["operator"],
                "budget": row["budget"],
                "best_k": k,
                "inverted_u": bool(interior),
            }
        )
    answer = "YES" if yes else ("NO" if mono == len(cells) else "UNDECIDED")
    return {"answer": answer, "cells": cells}


def beats(r, policy: str, baseline: str, budgets, *, z: float = Z) -> dict:
    """Statements 3-4 from `sim.simulate_timeline`'s per-query outcomes (paired by stream);
    ``z``: each cell's normal quantile (`paper_checks.studies._timeline_oc.cell_z`)."""
    cells, pos, neg = [], 0, 0
    for op in OPERATORS:
        i = r.rows.index((policy, op))
        j = r.rows.index((baseline, None if baseline == "retain-all" else op))
        d = (r.outcome[:, i] - r.outcome[:, j]).mean(-1)  # (Q, nB): time-averaged
        mean, se = d.mean(0), d.std(0, ddof=1) / math.sqrt(d.shape[0])
        for bi, b in enumerate(budgets):
            lo, hi = mean[bi] - z * se[bi], mean[bi] + z * se[bi]
            pos += lo > 0
            neg += hi < 0
            cells.append(
                {
                    "operator": op,
                    "budget": float(b),
                    "difference": float(mean[bi]),
                    "lower": float(lo),
                    "upper": float(hi),
                }
            )
    return {"answer": _answer(pos, neg), "cells": cells}


__all__ = ["Z", "beats", "inverted_u"]
