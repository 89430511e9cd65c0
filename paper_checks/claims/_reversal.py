"""Claims 1-4, the budget-dependent reversal: its sign (1), the tight-budget gain (2), loose-budget
retention (3) and the second answer model (4). Each measures the per-group arrays, then asks
its rule's one home, ``paper_checks.rules._reversal``, for the verdict (``claims._base.graded``)
and for that same rule's operating characteristics.

References: MODEL §6-7; docs/paper-checks.md "Claims and how each verdict is computed".
"""

from __future__ import annotations

import numpy as np

from paper_checks._config import other_design
from paper_checks._curves import chance_outcomes
from paper_checks._types import ClaimResult, Estimate, SourceCurves
from paper_checks.claims._base import (
    admission_check,
    admission_text,
    attempt,
    claim_result,
    curve_details,
    data_label,
    distinct_curves,
    graded,
    main_reader,
    needs,
    real_missing,
    reversal_grades,
    sim_sources,
    skipped_result,
    source_budgets,
)
from paper_checks.claims._sources import DataMissing, DependencyMissing, Workspace
from paper_checks.rules._crossover_coverage import continuous_interval
from paper_checks.rules._requirements import Needs, gate
from paper_checks.rules._reversal import (
    PAPER_LOOSE_MARGIN,
    PAPER_TIGHT_GAIN,
    loose_oc,
    loose_verdict,
    reversal_oc,
    reversal_verdict,
    tight_gain_oc,
    tight_gain_verdict,
)
from retcon.vocab import ACTIONS, OPERATORS

# ---- claim 1 ---------------------------------------------------------------------------------------


@needs("1", Needs(min_budgets=2, cells="ends"))
def check_sign_reversal(ws: Workspace) -> ClaimResult:
    """Claim 1: "consolidation gains under tight budgets, loses under loose ones".

    The primary contrast, stated before data: for every distinct consolidation operator, the
    gain ``dU`` at the design's tightest budget above 0 and at its loosest below 0, max-T
    sign-flip over the operators' cells (``rules._reversal.reversal_verdict``; identical
    operators count once). Real unit: LoCoMo under the main reader (when admissible). Shown: the
    sim presets' grades (band rule) and the exact model's crossovers. Headline: the crossover
    budget of the best-reversing operator.

    References: MODEL §6.1-6.3.
    """
    skipped: dict = {}
    reader = main_reader(ws)
    theory = attempt(ws.theory_curves, "theory", skipped)
    sims = sim_sources(ws, skipped)
    real = attempt(lambda: ws.real_curves(reader), ws.unit(reader), skipped)
    chk, bad = admission_check(ws, reader, skipped) if real is not None else (None, None)
    grades, inconclusive, data = {}, {}, {}
    if real is not None:
        if bad:
            inconclusive[real.name] = bad
        else:
            grades[real.name] = reversal_grades(real)
            data[real.name] = distinct_curves(real)[1]
    sim_grades = {s.name: reversal_grades(s) for s in sims}
    verdict = graded(
        ws,
        "1",
        reversal_verdict,
        source_budgets(real) if real is not None else (),
        data,
        missing=real_missing(skipped),
        inconclusive=inconclusive,
    )
    measured, op_h, head = Estimate.missing(), "-", real
    if head is not None:
        op_h = _best_reversing(head)
        measured = head.operators[op_h].crossover

    def line(s, g, tag):
        return (
            f"{s.name}{tag}: {sum(v == 2 for v in g.values())}/{len(g)} operators reverse "
            f"(B*: {', '.join(f'{o} {s.operators[o].crossover.fmt()}' for o in g)})"
        )

    parts = [line(real, reversal_grades(real), " [graded]")] if real is not None else []
    parts += [line(s, sim_grades[s.name], " [sim, shown]") for s in sims]
    if theory is not None:
        parts.append(
            "theory B* [shown]: "
            + ", ".join(f"{o} {c.crossover.fmt()}" for o, c in theory.operators.items())
        )
    covers = None
    if head is not None and measured.defined:
        wide = continuous_interval(source_budgets(head), measured)
        covers = {
            "grid_truth": measured,
            "continuous": wide,
            "note": "grid_truth: the interval covers the root of the population dU interpolated "
            "on the data's grid; continuous: widened to the grid's brackets, it covers the "
            "continuous B* wherever dU has one sign change between those grid budgets "
            "(paper_checks.rules._crossover_coverage; docs/statistics.md)",
        }
        parts.append(
            f"{op_h} B* interval for the grid truth {measured.fmt()}, for the continuous B* "
            f"{wide.fmt()}"
        )
    if chk is not None:
        parts.append("reader check: " + admission_text(reader, chk))
    if real is not None and not ws.config.paired:
        parts.append(other_design(ws.config.design))
    details = {
        "crossover_covers": covers,
        "grades": grades,
        "sim_grades": sim_grades,
        "admissibility": {reader: chk},
        "curves": {s.name: curve_details(s) for s in ([real] if real else []) + sims},
        "theory": None if theory is None else curve_details(theory),
    }
    return claim_result(
        "1",
        verdict,
        measured=measured,
        data=data_label(([real] if real else []) + sims, skipped),
        details=details,
        headline=f"crossover budget (tokens) of {op_h} on {getattr(head, 'name', '-')}",
        summary="; ".join(parts) or "-",
        skipped=skipped,
        oc=reversal_oc(
            ws.key("oc:1"),
            source_budgets(real),
            {real.name: distinct_curves(real)[1]},
            operators={real.name: distinct_curves(real)[0]},
            n_datasets=ws.config.oc_datasets,
        )
        if real is not None and data
        else None,
    )


# ---- claims 2, 3 -----------------------------------------------------------------------------------


def _at(c, i) -> Estimate:
    """``dU`` of curve ``c`` at its ``i``-th budget (``-1``: the loosest) with its band."""
    return Estimate(float(c.delta[i]), float(c.lower[i]), float(c.upper[i]))


def _best_reversing(s: SourceCurves) -> str:
    """The operator of ``s`` that reverses best: the highest grade, then a defined crossover."""
    g = reversal_grades(s)
    return max(g, key=lambda o: (g[o], s.operators[o].crossover.defined))


def _real_pair(ws: Workspace, skipped: dict) -> list[SourceCurves]:
    """The main reader's LoCoMo curves, raw and chance-corrected (the units of claims 2-3)."""
    reader = main_reader(ws)
    out = []
    raw = attempt(lambda: ws.real_curves(reader), ws.unit(reader), skipped)
    if raw is not None:
        out.append(raw)
        corr = attempt(
            lambda: ws.real_curves(reader, corrected=True), ws.unit(reader) + ":chance", skipped
        )
        if corr is not None:
            out.append(corr)
    return out


def same_groups(ws: Workspace, units: dict, skipped: dict) -> dict:
    """The units whose per-group arrays cover as many groups as the first (the raw unit); a
    chance-corrected unit that lost a group (its only question had no decoy answer) is named in
    ``skipped`` and left out of the rule and its simulation alike."""
    if not units:
        return units
    g0 = next(iter(units.values())).shape[0]
    out = {}
    for k, v in units.items():
        if v.shape[0] == g0:
            out[k] = v
        else:
            skipped[ws.unit(main_reader(ws)) + ":chance"] = (
                f"{k}: {v.shape[0]} of {g0} groups have a chance rate (a group whose questions "
                "have no other answer to score against); not graded"
            )
    return out


def _chance_table(ws: Workspace) -> dict | None:
    """``{action: {budget: chance rate}}`` and the raw accuracy beside it, main reader."""
    try:
        paired = ws.real_paired(main_reader(ws))
    except (DataMissing, DependencyMissing):
        return None
    chance = chance_outcomes(paired)
    if chance is None:
        return None
    y = np.asarray(paired.outcomes, float)
    b = np.asarray(paired.budget, float)
    out = {"chance": {}, "accuracy": {}}
    for k, a in enumerate(ACTIONS):
        out["chance"][a] = {f"{bb:g}": float(np.nanmean(chance[b == bb, k])) for bb in np.unique(b)}
        out["accuracy"][a] = {f"{bb:g}": float(y[b == bb, k].mean()) for bb in np.unique(b)}
    return out


def _ret_accuracy(ws: Workspace, corrected: bool) -> dict:
    paired = ws.real_paired(main_reader(ws))
    y = np.asarray(paired.outcomes, float)[:, 0]
    chance = chance_outcomes(paired) if corrected else None
    if chance is not None:
        y = y - chance[:, 0]
    b = np.asarray(paired.budget, float)
    return {float(bb): float(np.nanmean(y[b == bb])) for bb in np.unique(b)}


@needs("2", Needs())
def check_tight_gain(ws: Workspace) -> ClaimResult:
    """Claim 2: "under tight budgets consolidation improves absolute accuracy (paper: up to 48% on
    LongMemEval)", read as up to 48 absolute accuracy points.

    Real units: LoCoMo under the main reader, raw and chance-corrected (outcome minus the same
    context's score against another question's answer). Per unit and operator ``max_B dU_o(B)``
    with the band at that budget (selected on the same data: an optimistic interval). The
    primary contrast, stated before data: every distinct operator's gain at every budget, max-T
    sign-flip over those cells for the direction, and the largest mean gain's 95% interval
    against the paper's 48 points: it holds when the direction is established and the interval
    reaches 48 points, it does not when the interval lies below them
    (``rules._reversal.tight_gain_verdict``). The relative gain ``dU / U(ret)`` at that budget
    is shown. Sim presets shown. Headline: the largest raw gain on LoCoMo, fraction of questions.

    References: MODEL §6.3.
    """
    skipped: dict = {}
    reals = _real_pair(ws, skipped)
    sims = sim_sources(ws, skipped)
    gains, where, rel = {}, {}, {}
    for s in reals + sims:
        gains[s.name], where[s.name], rel[s.name] = {}, {}, {}
        for op, c in s.operators.items():
            i = int(np.nanargmax(c.delta))
            gains[s.name][op], where[s.name][op] = _at(c, i), float(c.budgets[i])
        if s.kind == "real":
            u_ret = _ret_accuracy(ws, corrected="chance" in s.name)
            for op in s.operators:
                base = u_ret.get(where[s.name][op], float("nan"))
                rel[s.name][op] = gains[s.name][op].point / base if base > 0 else float("nan")
    tight = same_groups(
        ws, {s.name: s.group_delta for s in reals if s.group_delta is not None}, skipped
    )
    verdict = graded(ws, "2", tight_gain_verdict, tight, missing=real_missing(skipped))
    measured, op_h, head = Estimate.missing(), "-", (reals or [None])[0]
    if head is not None:
        op_h = max(gains[head.name], key=lambda o: gains[head.name][o].point)
        measured = gains[head.name][op_h]

    def fmt_rel(src, o):
        r = rel.get(src, {}).get(o)
        return "" if r is None or not np.isfinite(r) else f" ({100 * r:+.0f}% relative)"

    summary = "; ".join(
        f"{src}{' [graded]' if any(s.name == src for s in reals) else ' [sim, shown]'}: "
        + ", ".join(
            f"{o} {e.fmt(100, 1)} pts at B={where[src][o]:.0f}{fmt_rel(src, o)}"
            for o, e in ops.items()
        )
        for src, ops in gains.items()
    )
    summary += f"; paper: +{100 * PAPER_TIGHT_GAIN[0]:.0f} points (absolute)"
    return claim_result(
        "2",
        verdict,
        measured=measured,
        data=data_label(reals + sims, skipped),
        details={
            "max_gain": gains,
            "at_budget": where,
            "relative_gain": rel,
            "paper_points": PAPER_TIGHT_GAIN,
            "chance": _chance_table(ws),
        },
        headline=f"largest dU (fraction of questions) of {op_h} on {getattr(head, 'name', '-')}",
        summary=summary or "-",
        skipped=skipped,
        oc=tight_gain_oc(ws.key("oc:2"), tight, n_datasets=ws.config.oc_datasets)
        if tight
        else None,
    )


@needs("3", Needs(cells="loosest"))
def check_loose_retention(ws: Workspace) -> ClaimResult:
    """Claim 3: "under loose budgets retention beats every consolidation operator (paper: by 8-11%)",
    read as 8-11 absolute accuracy points.

    Real units: LoCoMo under the main reader, raw and chance-corrected. Per unit and operator the
    margin ``U(ret) - U(o)`` at the loosest budget with its band. The primary contrast, stated
    before data: every operator's per-conversation margin at the loosest budget, by exact
    sign-flip tests: it holds when every margin is shown above 4 points (half the paper's 8, the
    low end of 8-11; one-sided 5% per operator, an intersection-union test) and does not when
    the max-T test over the operators shows some margin below 8 points at 5%
    (``rules._reversal.loose_verdict``). Sim presets shown. Headline: the
    smallest raw margin on LoCoMo.

    References: MODEL §6.2.
    """
    skipped: dict = {}
    reals = _real_pair(ws, skipped)
    sims = sim_sources(ws, skipped)
    margins = {}
    for s in reals + sims:
        margins[s.name] = {}
        for op, c in s.operators.items():
            e = _at(c, -1)
            margins[s.name][op] = Estimate(-e.point, -e.upper, -e.lower)
    loose_g = same_groups(
        ws,
        {s.name: -s.group_delta[:, :, -1] for s in reals if s.group_delta is not None},
        skipped,
    )
    verdict = graded(
        ws, "3", loose_verdict, loose_g, list(OPERATORS), missing=real_missing(skipped)
    )
    measured, op_h, head = Estimate.missing(), "-", (reals or [None])[0]
    if head is not None:
        op_h = min(margins[head.name], key=lambda o: margins[head.name][o].point)
        measured = margins[head.name][op_h]
    summary = "; ".join(
        f"{s.name}{' [graded]' if s.kind == 'real' else ' [sim, shown]'} "
        f"(B={next(iter(s.operators.values())).budgets[-1]:.0f}): "
        + ", ".join(f"{o} {e.fmt(100, 1)} pts" for o, e in margins[s.name].items())
        for s in reals + sims
    )
    chance = _chance_table(ws)
    if chance is not None:
        loose = max(chance["chance"]["ret"], key=float)
        summary += f"; chance rate at B={loose}: " + ", ".join(
            f"{a} {chance['chance'][a][loose]:.3f}" for a in ACTIONS
        )
    summary += (
        f"; paper: {100 * PAPER_LOOSE_MARGIN[0]:.0f}-{100 * PAPER_LOOSE_MARGIN[1]:.0f} "
        "points (absolute)"
    )
    return claim_result(
        "3",
        verdict,
        measured=measured,
        data=data_label(reals + sims, skipped),
        details={"margin": margins, "paper_points": PAPER_LOOSE_MARGIN, "chance": chance},
        headline=f"smallest U(ret) - U(o) at the loosest budget ({op_h}, {getattr(head, 'name', '-')})",
        summary=summary or "-",
        skipped=skipped,
        oc=loose_oc(ws.key("oc:3"), loose_g, list(OPERATORS), n_datasets=ws.config.oc_datasets)
        if loose_g
        else None,
    )


# ---- claim 4 ---------------------------------------------------------------------------------------


SECOND_READER_NEEDS = Needs(min_budgets=2, readers="second", cells="ends")


@needs("4", SECOND_READER_NEEDS)
def check_second_reader(ws: Workspace) -> ClaimResult:
    """Claim 4: "a second answer model reproduces the reversal".

    Every reader after the main one (``sentence``, ``topk``; ``llm`` when an endpoint is
    configured) is first checked for admissibility (raw-evidence accuracy non-decreasing in B);
    an admissible reader is a real unit graded like claim 1, an inadmissible one is named, not
    graded. SKIPPED without LoCoMo or with no second reader measured. Headline: the crossover of
    the best-reversing operator under the first admissible second reader (its dU at the loosest
    budget when it has none).

    References: MODEL §2 (premise), §6, §9 (readers).
    """
    skipped: dict = {}
    readers = list(ws.config.readers)
    checks, grades, inconclusive, sources, data = {}, {}, {}, {}, {}
    for r in readers:
        s = attempt(lambda r=r: ws.real_curves(r), ws.unit(r), skipped)
        if s is None:
            continue
        sources[r] = s
        chk, bad = admission_check(ws, r, skipped)
        checks[r] = chk
        if r == readers[0]:
            continue  # the main reader's reversal is claim 1's
        closed = gate(ws.real_paired(r), SECOND_READER_NEEDS, ws.unit(r))
        if bad:
            inconclusive[s.name] = bad
        elif not closed.testable:  # a second reader the rows cannot test: named, not graded
            inconclusive[s.name] = f"not testable: {closed.reason}"
        else:
            grades[s.name] = reversal_grades(s)
            data[s.name] = distinct_curves(s)[1]
    second = [r for r in readers[1:] if r in sources]
    if not second:
        need = (
            "a second --paired FILE (a second reader)"
            if ws.config.paired
            else "LoCoMo under a second reader"
        )
        why = "; ".join(skipped.values()) or "none given"
        return skipped_result("4", f"needs {need}: {why}", skipped)
    verdict = graded(
        ws,
        "4",
        reversal_verdict,
        source_budgets(sources[second[0]]),
        data,
        missing=[k for k in real_missing(skipped) if k != ws.unit(readers[0])],
        inconclusive=inconclusive,
    )
    pick = next((r for r in second if sources[r].name in grades), second[0])
    s2 = sources[pick]
    best = _best_reversing(s2)
    c = s2.operators[best]
    if c.crossover.defined:
        measured, headline = c.crossover, f"crossover budget of {best} under the {s2.name} reader"
    else:  # no crossover: the loosest budget's dU says on which side of 0 the curve ends
        measured = _at(c, -1)
        headline = f"no crossover; dU of {best} at the loosest budget under the {s2.name} reader"
    parts = []
    for r, s in sources.items():
        g = reversal_grades(s)
        tag = (
            " [main reader, claim 1]"
            if r == readers[0]
            else " [graded]"
            if s.name in grades
            else " [not graded]"
        )
        parts.append(
            f"{s.name}{tag}: {sum(v == 2 for v in g.values())}/{len(g)} operators reverse "
            "(dU at the tightest / loosest budget: "
            + ", ".join(
                f"{o} {_at(s.operators[o], 0).fmt(100, 1)} / "
                f"{_at(s.operators[o], -1).fmt(100, 1)} pts"
                for o in g
            )
            + ")"
        )
    parts += ["reader check: " + admission_text(r, checks.get(r)) for r in sources]
    return claim_result(
        "4",
        verdict,
        measured=measured,
        data=data_label(list(sources.values()), skipped),
        details={
            "grades": grades,
            "admissibility": checks,
            "not_graded": inconclusive,
            "curves": {s.name: curve_details(s) for s in sources.values()},
        },
        headline=headline,
        summary="; ".join(parts),
        skipped=skipped,
        oc=reversal_oc(
            ws.key("oc:4"),
            source_budgets(sources[second[0]]),
            data,
            operators={sources[r].name: distinct_curves(sources[r])[0] for r in second},
            n_datasets=ws.config.oc_datasets,
        ),
    )
