"""Beyond the paper: memory over time (MODEL §10; issue 21 item 6). Reported, never graded.

Four statements, each answered YES / NO / UNDECIDED from intervals:

1. *Utility under repeated consolidation is an inverted U in the number of passes* (simulation,
   ``locomo-stream``, every unit passed ``k`` times at the last session). Per operator and budget,
   YES when the best ``k*`` is interior and the interval of ``U(k*)`` lies above both ``U(0)``'s and
   ``U(K)``'s (marginal 95% intervals, so the rule is conservative); the statement is YES when some
   cell is YES, NO when every cell's best ``k`` is an end point with the other end point's
   interval below, else UNDECIDED.
2. *The loss per pass is geometric* (H10; LoCoMo survival of the answer against passes,
   ``oas.real.survival_report``): NO when an alternative law wins the leave-one-conversation-out
   comparison for a majority of the pass chains, YES when geometric is not rejected for every
   chain, else UNDECIDED; UNDECIDED without the data. Measured error rates of the per-chain rule
   (docs/over-time.md; G = 10, 60 synthetic runs each): a geometric world called non-geometric
   0/60, a levels-off world detected 53/60. The simulation cannot answer it: it assumes H10.
3. and 4. *The budget-aware policy beats overflow* / *beats retain-all* (simulation): per operator
   and budget, the paired per-stream difference of the time-averaged utility, ``mean +- 1.96 SE``
   over i.i.d. streams; YES when some cell lies above 0 and none below, NO when some lies below and
   none above, else UNDECIDED. The error rates of rules 1, 3 and 4 are not measured (they inherit
   the coverage of a normal interval over i.i.d. streams).
"""

from __future__ import annotations

import math

import numpy as np

from retcon.vocab import OPERATORS

QUERIES = 512
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


def beats(r, policy: str, baseline: str, budgets) -> dict:
    """Statements 3-4 from `sim.simulate_timeline`'s per-query outcomes (paired by stream)."""
    cells, pos, neg = [], 0, 0
    for op in OPERATORS:
        i = r.rows.index((policy, op))
        j = r.rows.index((baseline, None if baseline == "retain-all" else op))
        d = (r.outcome[:, i] - r.outcome[:, j]).mean(-1)  # (Q, nB): time-averaged
        mean, se = d.mean(0), d.std(0, ddof=1) / math.sqrt(d.shape[0])
        for bi, b in enumerate(budgets):
            lo, hi = mean[bi] - Z * se[bi], mean[bi] + Z * se[bi]
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


def geometric(conversations, passes: int = 4) -> dict:
    """Statement 2 from LoCoMo survival per pass chain (``oas.real.survival_report``)."""
    from oas.real import survival, survival_report

    verdicts = {}
    for first in ("dataset", "extractive"):
        for op in OPERATORS:
            rep = survival_report(survival(conversations, op, passes, first))
            verdicts[f"{first}/{op}"] = rep["verdict"]
    rejected = sum(v not in ("geometric (not rejected)", "undecided") for v in verdicts.values())
    kept = sum(v == "geometric (not rejected)" for v in verdicts.values())
    if rejected * 2 > len(verdicts):
        answer = "NO"
    elif kept == len(verdicts):
        answer = "YES"
    else:
        answer = "UNDECIDED"
    return {"answer": answer, "verdicts": verdicts}


def overtime_section(conversations=None, *, queries: int = QUERIES, seed: int = 0) -> dict:
    """The four statements; ``conversations`` (LoCoMo) may be ``None`` (statement 2 UNDECIDED)."""
    import sim

    ss = sim.load_stream("locomo-stream")
    r = sim.simulate_timeline(ss, queries=queries, seed=seed)
    summary = sim.summarize_timeline(ss, r, policies=sim.TIMELINE_POLICIES, resamples=0, seed=seed)
    geo = (
        geometric(conversations)
        if conversations is not None
        else {"answer": "UNDECIDED", "verdicts": {}, "skipped": "no LoCoMo data"}
    )
    return {
        "scenario": ss.name,
        "queries": queries,
        "inverted_u": inverted_u(summary),
        "geometric_loss": geo,
        "budget_aware_beats_overflow": beats(r, "budget-aware", "overflow", r.budgets),
        "budget_aware_beats_retain_all": beats(r, "budget-aware", "retain-all", r.budgets),
    }


STATEMENTS = (
    ("inverted_u", "Utility under repeated consolidation is an inverted U in the number of passes"),
    ("geometric_loss", "The loss per pass is geometric (H10)"),
    ("budget_aware_beats_overflow", "The budget-aware policy beats `overflow`"),
    ("budget_aware_beats_retain_all", "The budget-aware policy beats `retain-all`"),
)


def overtime_markdown(section: dict) -> str:
    """The REPORT.md section (rules and error rates: this module's docstring, docs/over-time.md)."""
    lines = [
        "## Beyond the paper: memory over time",
        "",
        f"Simulation: `{section['scenario']}`, {section['queries']} streams; LoCoMo: answer "
        "survival against passes. Rules and their error rates: docs/over-time.md. Not graded.",
        "",
        "| statement | answer | evidence |",
        "| --- | --- | --- |",
    ]
    for key, text in STATEMENTS:
        s = section[key]
        if key == "inverted_u":
            ev = f"{sum(c['inverted_u'] for c in s['cells'])} of {len(s['cells'])} operator x budget cells"
        elif key == "geometric_loss":
            ev = s.get("skipped") or ", ".join(f"{k}: {v}" for k, v in s["verdicts"].items())
        else:
            ev = (
                f"{sum(c['lower'] > 0 for c in s['cells'])} cells above 0, "
                f"{sum(c['upper'] < 0 for c in s['cells'])} below, of {len(s['cells'])}"
            )
        lines.append(f"| {text} | {s['answer']} | {ev} |")
    return "\n".join(lines) + "\n"


def locomo_or_none(data):
    """LoCoMo's conversations (``paper_checks._sources.locomo_path``'s file), ``None`` when absent."""
    from oas.real import load_locomo
    from paper_checks._sources import DataMissing, locomo_path

    try:
        return load_locomo(locomo_path(data)).conversations
    except DataMissing:
        return None


def append_overtime(out_dir, conversations=None, **kwargs) -> dict:
    """Write ``over_time.json`` and append the section to ``REPORT.md`` under ``out_dir``."""
    from paper_checks._report import append_section

    section = overtime_section(conversations, **kwargs)
    append_section(out_dir, "over_time.json", section, overtime_markdown(section))
    return section


__all__ = ["append_overtime", "locomo_or_none", "overtime_markdown", "overtime_section"]
