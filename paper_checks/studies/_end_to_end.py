"""Beyond the paper: end to end. Does budget-aware selection survive retrieval and a type classifier?

The paper evaluates OAS only with the gold evidence and the gold query type. This section pairs the
same LoCoMo questions three ways (docs/end-to-end.md): ``oracle`` (gold evidence, gold type, the
workspace's main-reader paired data), ``e2e-gold-type`` (the cluster retrieved by BM25, gold type)
and ``e2e`` (retrieved cluster, the type predicted by the conversation-disjoint classifier). Each
run is scored by ``oas.real.paired_report`` (leave-one-conversation-out OAS and best-fixed,
grouped-bootstrap crossover intervals) and set side by side (``oas.real.side_by_side``). The
statements below are answered YES, NO or UNDECIDED from 95% intervals; no claim of the paper is
at stake, so none enters the claim table.

The last statement, "a router beats best-fixed end to end", is answered from the deployable
routers of ``oas.real.loco_deployable`` on the ``e2e`` run: the ``deployable`` policy (feature
group, MODEL §8's eleven plus the post-retrieval features 12-15, and margin over best-fixed, both
chosen inside the training folds, never on the held-out conversation), its 95% t interval over the
conversations (``retcon.inference.group_t_interval``), beside the oracle protocol's OAS gain and
the oracle selector's headroom. The rule's error rates were measured in synthetic worlds of LoCoMo's
end-to-end shape (``paper_checks.studies._router_oc.router_rule_characteristics``; ``ROUTER_RULE_OC``); an answer whose
error rate at the data's group count misses its target (false YES or false NO above 5%), or was
not measured there, reads UNDECIDED with the reason.

References: MODEL §6 (crossover), §8 (OAS, best fixed policy), §9 (LoCoMo).
"""

from __future__ import annotations

import math

import numpy as np

from oas.real import (
    gap_split,
    load_locomo,
    loco_deployable,
    locomo_retrieval_features,
    paired_report,
    side_by_side,
)
from paper_checks.claims._sources import DataMissing, DependencyMissing, locomo_path
from paper_checks.report._report import append_section
from paper_checks.studies._router_oc import ROUTER_RULE_OC, router_verdict
from retcon.vocab import OPERATORS
from theory import format_crossover

YES, NO, UNDECIDED = "YES", "NO", "UNDECIDED"
ANSWERS = (YES, NO, UNDECIDED)

RUNS = (
    ("oracle", "gold evidence, gold type"),
    ("e2e-gold-type", "BM25 top-4 sessions, gold type"),
    ("e2e", "BM25 top-4 sessions, predicted type"),
)


def _above_zero(lo, hi) -> str:
    """YES when the interval lies above 0, NO when below, UNDECIDED when it covers 0 or is missing."""
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return UNDECIDED
    if lo > 0:
        return YES
    if hi < 0:
        return NO
    return UNDECIDED


def _gain(results: dict, run: str, policy: str) -> tuple[float, float, float]:
    g = results[run]["policies"]["gain"][policy]
    return g["point"][-1], g["lower"][-1], g["upper"][-1]


def _fmt_gain(p, lo, hi) -> str:
    return f"{p:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def _fmt_cross(c: dict) -> str:

    text = format_crossover(
        c.get("crossover_budget"), c.get("lower"), c.get("upper"), c.get("status", "none")
    )
    return f"{text} (p={c.get('p_crossover', 0.0):.2f})"


def _crossover_moves_later(oracle: dict, e2e: dict) -> str:
    """YES when the end-to-end interval lies wholly above the oracle's, NO when wholly below (an
    end beyond the grid, ``0`` or ``inf``, compares as such)."""
    bounds = [oracle.get(k) for k in ("crossover_budget", "lower", "upper")]
    bounds += [e2e.get(k) for k in ("crossover_budget", "lower", "upper")]
    if any(b is None for b in bounds):
        return UNDECIDED
    if e2e["lower"] > oracle["upper"]:
        return YES
    if e2e["upper"] < oracle["lower"]:
        return NO
    return UNDECIDED


def end_to_end_verdicts(results: dict) -> list[dict]:
    """The section's statements with their answers, from ``paired_report`` outputs by run name.

    Args:
      results: ``{"oracle": ..., "e2e-gold-type": ..., "e2e": ...}`` (``oas.real.paired_report``).

    Returns:
      list of ``{"statement", "answer" (YES / NO / UNDECIDED), "evidence"}``:

      * OAS beats best-fixed under the oracle protocol (the gain's interval above 0);
      * the gain survives end to end with the gold type, and end to end (predicted type): YES when
        the interval is above 0, NO when it is below 0 (OAS loses to best-fixed), else UNDECIDED;
      * the oracle selector's headroom over best-fixed remains end to end (interval above 0);
      * per operator, the crossover moves later end to end: YES when the end-to-end crossover
        interval lies wholly above the oracle one, NO when wholly below, else UNDECIDED (a
        conservative test: two overlapping intervals can still differ).

    References: MODEL §6, §8.
    """
    out = []
    labels = {
        "oracle": "OAS beats best-fixed under the oracle protocol (the paper's setting)",
        "e2e-gold-type": "OAS gain over best-fixed survives retrieval (end to end, gold type)",
        "e2e": "OAS gain over best-fixed survives end to end (retrieval and predicted type)",
    }
    for run, statement in labels.items():
        p, lo, hi = _gain(results, run, "oas")
        out.append(
            {
                "statement": statement,
                "answer": _above_zero(lo, hi),
                "evidence": f"OAS - best-fixed {_fmt_gain(p, lo, hi)} ({run})",
            }
        )
    p, lo, hi = _gain(results, "e2e", "oracle")
    po, loo, hio = _gain(results, "oracle", "oracle")
    out.append(
        {
            "statement": "the oracle selector's headroom over best-fixed remains end to end",
            "answer": _above_zero(lo, hi),
            "evidence": f"max_a y_a - best-fixed: oracle {_fmt_gain(po, loo, hio)}, "
            f"e2e {_fmt_gain(p, lo, hi)}",
        }
    )
    for o in OPERATORS:
        a, b = results["oracle"]["crossover"][o], results["e2e"]["crossover"][o]
        out.append(
            {
                "statement": f"the {o} crossover moves to a larger budget end to end",
                "answer": _crossover_moves_later(a, b),
                "evidence": f"B* oracle {_fmt_cross(a)}, e2e {_fmt_cross(b)} tokens",
            }
        )
    return out


def router_statement(router: dict, results: dict) -> dict:
    """ "A router beats best-fixed end to end", answered from the ``deployable`` policy's gain.

    Args:
      router: ``oas.real.loco_deployable`` on the end-to-end rows (predicted type).
      results: the ``paired_report`` outputs by run (for the oracle protocol's OAS gain and the
        end-to-end oracle selector's headroom, printed beside it).

    Returns:
      ``{"statement", "answer", "evidence", "operating_characteristics"}``: YES when the 95% t
      interval of the deployable router's gain lies above 0, NO when below, else UNDECIDED; a YES
      (NO) becomes UNDECIDED when the rule's measured false-YES (false-NO) rate at the data's
      group count exceeds 5% or was not measured there.

    References: MODEL §8; docs/statistics.md (step 6); docs/end-to-end.md.
    """

    g = router["gain"]["deployable"]
    n_groups = len(router["groups"])
    raw = router_verdict(g["lower"], g["upper"])
    oc = ROUTER_RULE_OC.get(n_groups)  # the rule's measured error rates at G, or None
    answer, why = raw, ""
    if raw != UNDECIDED:
        if oc is None:
            answer, why = UNDECIDED, f"the rule's error rates are not measured at G = {n_groups}"
        else:
            rate, name = (
                (oc["false_yes"], "false YES") if raw == YES else (oc["false_no"], "false NO")
            )
            if rate > 0.05:
                answer, why = UNDECIDED, f"{name} {rate:.0%} > 5% at G = {n_groups}"
    plays = [
        f"{c['features']} margin {c['margin']:g}" if c["plays"] == "anchored" else c["plays"]
        for c in router.get("deployable_choices", [])
    ]
    po, loo, hio = _gain(results, "oracle", "oas")
    ph, loh, hih = _gain(results, "e2e", "oracle")
    evidence = (
        f"deployable router - best-fixed {_fmt_gain(g['point'], g['lower'], g['upper'])} "
        f"(95% t, {n_groups} conversations; chosen in the training folds: {', '.join(plays)}); "
        f"oracle protocol OAS - best-fixed {_fmt_gain(po, loo, hio)}; oracle selector headroom "
        f"end to end {_fmt_gain(ph, loh, hih)}"
    )
    if oc is not None:
        evidence += (
            f"; rule at G = {n_groups}: false YES {oc['false_yes']:.1%}, power "
            f"{oc['power']:.0%} (true gain {oc['power_gain']:+.3f}), false NO "
            f"{oc['false_no']:.1%}, coverage {oc['coverage']:.0%}"
        )
    if why:
        evidence += f"; UNDECIDED because {why} (interval alone: {raw})"
    return {
        "statement": "a router beats best-fixed end to end (the best deployable router, "
        "chosen inside the training folds)",
        "answer": answer,
        "evidence": evidence,
        "operating_characteristics": oc,
    }


def _router_run(ws, paired) -> dict:
    """``oas.real.loco_deployable`` on the end-to-end rows, features 12-14 from the texts."""
    conversations = load_locomo(locomo_path(ws.config.data)).conversations
    extra = locomo_retrieval_features(paired, conversations)
    recall = np.asarray(paired.meta["meta_retrieval_recall_cluster"], dtype=np.float64)
    return loco_deployable(ws.key("end-to-end:router"), paired, extra, recall, calibrated=False)


def end_to_end_section(ws, *, n_resamples: int | None = None) -> dict:
    """Pair LoCoMo three ways, score each run and answer the statements (module docstring).

    Args:
      ws: the run's ``paper_checks.Workspace`` (its config's LoCoMo subset, budgets, main reader).
      n_resamples: bootstrap replicates (default ``ws.config.n_resamples``).

    Returns:
      ``{"data", "runs" (name -> report), "table", "gap", "verdicts"}``, or ``{"skipped": reason}``
      when LoCoMo or a package it needs is absent.
    """

    n_resamples = int(n_resamples or ws.config.n_resamples)
    try:
        data = {
            "oracle": (ws.locomo_paired(ws.config.readers[0]), None),
            "e2e-gold-type": ws.locomo_end_to_end("gold"),
            "e2e": ws.locomo_end_to_end("predicted"),
        }
        label = ws.real_label(ws.config.readers[0])
    except (DataMissing, DependencyMissing) as e:
        return {"skipped": str(e)}
    results = {
        name: paired_report(
            ws.key(f"end-to-end:{name}"),
            paired,
            n_resamples=n_resamples,
            type_classifier=classifier,
        )
        for name, (paired, classifier) in data.items()
    }
    router = _router_run(ws, data["e2e"][0])
    return {
        "data": label,
        "runs": dict(RUNS),
        "n_resamples": n_resamples,
        "results": results,
        "table": side_by_side(results),
        "gap": gap_split(results),
        "router": router,
        "verdicts": [*end_to_end_verdicts(results), router_statement(router, results)],
    }


def end_to_end_markdown(section: dict) -> str:
    """The REPORT.md section: the statements with their answers, then the side-by-side table."""
    lines = [
        "## Beyond the paper: end to end",
        "",
        "The paper evaluates OAS with the gold evidence and the gold query type. Here the same "
        "LoCoMo questions are paired three ways (docs/end-to-end.md): "
        + "; ".join(f"`{n}` ({d})" for n, d in RUNS)
        + ". OAS and best-fixed are fitted leave-one-conversation-out "
        "(`oas.real.loco_policies`), gains have grouped-bootstrap 95% intervals over "
        "conversations, crossovers a grouped-bootstrap interval (`oas.real.crossover_ci`). "
        "Not graded: no claim of the paper is at stake. Each statement is answered from its "
        "95% interval: YES, NO (the interval excludes the statement), UNDECIDED.",
        "",
    ]
    if "skipped" in section:
        return "\n".join([*lines, f"Skipped: {section['skipped']}.", ""])
    lines += [
        f"Data: {section['data']}; {section['n_resamples']} bootstrap resamples.",
        "",
        "| statement | answer | evidence |",
        "| --- | --- | --- |",
    ]
    for v in section["verdicts"]:
        lines.append(f"| {v['statement']} | **{v['answer']}** | {v['evidence']} |")
    lines += ["", section["table"], ""]
    router = section.get("router")
    if router:
        lines += [
            "Deployable routers end to end (`oas.real.loco_deployable`, BM25 top 4 sessions, "
            "predicted type; every choice made inside the training folds; 95% t over "
            f"{len(router['groups'])} conversations):",
            "",
            "| policy | gain over best-fixed | share of the oracle headroom |",
            "| --- | --- | --- |",
        ]
        for name, g in router["gain"].items():
            if name == "best-fixed":
                continue
            share = router["headroom_share"].get(name)
            share_text = "-" if share is None else f"{share:+.2f}"
            lines.append(
                f"| {name} | {_fmt_gain(g['point'], g['lower'], g['upper'])} | {share_text} |"
            )
        lines.append("")
    gap = section.get("gap") or {}
    if gap:
        lines += [
            f"OAS gain over best-fixed lost to retrieval: {gap['gain_lost_to_retrieval']:+.3f}; "
            f"to type errors: {gap['gain_lost_to_type']:+.3f} (shares of questions; differences "
            "of the point estimates, no interval).",
            "",
        ]
    return "\n".join(lines)


def append_end_to_end(out_dir, ws, **kwargs) -> dict:
    """Write ``end_to_end.json`` and append the section to ``REPORT.md`` under ``out_dir``."""

    section = end_to_end_section(ws, **kwargs)
    append_section(out_dir, "end_to_end.json", section, end_to_end_markdown(section))
    return section


__all__ = [
    "ANSWERS",
    "NO",
    "UNDECIDED",
    "YES",
    "append_end_to_end",
    "end_to_end_markdown",
    "end_to_end_section",
    "end_to_end_verdicts",
    "router_statement",
]
