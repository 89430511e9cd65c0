"""One function per claim of the paper: measure, then ask the verdict (``_verdicts.RULES``).

Every ``check_*`` takes a ``Workspace`` (the run's memoized sources) and returns a ``ClaimResult``.
Real data (LoCoMo) decides; simulation presets and the exact model are measured and shown beside
the verdict as the mechanism, never graded. A real source that cannot be measured (LoCoMo absent,
a package not available) is named in ``details["skipped"]`` and passed to the verdict as a missing
unit; one measured but unable to decide is passed as not graded, with its reason.

References: MODEL §3-9.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from oas import length_strata
from paper_checks import _verdicts as V
from paper_checks import operating as O
from paper_checks import rules as R
from paper_checks._acceptance import accept
from paper_checks._curves import (
    bounded,
    chance_outcomes,
    evidence_length,
    raw_grounded,
    t_estimate,
)
from paper_checks._loco import calibrated_name, t_interval
from paper_checks._requirements import Needs, unmet
from paper_checks._scaling import identical_operators, stratified_group_curves
from paper_checks._sources import DataMissing, DependencyMissing, Workspace
from paper_checks._types import (
    INCONCLUSIVE,
    SKIPPED,
    ClaimResult,
    Estimate,
    SourceCurves,
    Verdict,
)
from retcon.inference import group_means
from retcon.vocab import ACTIONS, OPERATORS

CLAIMS = {
    "1": "Consolidation gains under tight budgets and loses under loose ones: the sign of "
    "U(consolidate) - U(retain) reverses with the budget (simulation and LoCoMo).",
    "2": "Under tight budgets consolidation improves absolute accuracy (up to 48% on LongMemEval).",
    "3": "Under loose budgets retention beats every consolidation operator (by 8-11%).",
    "4": "A second answer model reproduces the budget-dependent reversal.",
    "5": "The crossover comes at a smaller absolute budget for shorter evidence, and B*/L is roughly "
    "constant: relative budget pressure governs.",
    "6": "Cross-note abstract and merge beat local rewrite when compression is necessary, and neither "
    "dominates the other.",
    "7": "OAS improves the when-which decision under budget-stressed conditions over the best fixed "
    "policy (the paper's full-history variant did not beat the best fixed policy).",
    "8": "An MLP utility model does not reliably improve over ridge.",
    "9": "Harm calibration lowers the harm rate at a bounded cost in accuracy.",
}

PAPER_FIGURES = {
    "1": "reversal on LoCoMo and LongMemEval",
    "2": "up to +48 points (LongMemEval)",
    "3": "retention ahead by 8-11 points",
    "4": "reversal reproduced",
    "5": "LoCoMo crosses earlier than LongMemEval",
    "6": "-",
    "7": "gain where budget-stressed; none for full history",
    "8": "no reliable gain",
    "9": "lower harm, bounded cost",
}


def _try(get: Callable, label: str, skipped: dict):
    """``get()``, or ``None`` with the reason in ``skipped[label]`` when data (LoCoMo) or an optional
    dependency (an endpoint) is missing. Nothing else is caught: our own packages are ordinary
    imports of ``paper_checks._sources``, so a renamed function fails at import, not here."""
    try:
        return get()
    except (DataMissing, DependencyMissing) as e:
        skipped[label] = str(e)
        return None


def _real_missing(skipped: dict) -> list[str]:
    """The skipped units that are real data (the verdict's missing units). The chance-corrected
    unit of claims 2-3 is optional: it needs the ``meta_chance_<action>`` columns, which LoCoMo
    paired here always has and a ``--paired`` file may lack (named, not counted as missing)."""
    return [
        k for k in skipped if not k.startswith(("sim:", "theory")) and not k.endswith(":chance")
    ]


def _result(
    cid: str,
    verdict,
    *,
    measured=None,
    ci=None,
    data: str,
    details: dict,
    headline: str,
    summary: str,
    skipped: dict,
    oc: O.OperatingCharacteristics | None = None,
) -> ClaimResult:
    verdict, oc_info = _with_oc(verdict, oc)
    details = {**details, **oc_info}
    if isinstance(measured, Estimate):
        est = measured
        measured = est.point if est.defined else None
        ci = (
            (est.lower, est.upper)
            if est.defined and np.isfinite(est.lower) and np.isfinite(est.upper)
            else None
        )
    details = {
        **details,
        "headline": headline,
        "summary": summary,
        "reason": verdict.reason,
        "skipped": skipped,
    }
    return ClaimResult(
        cid, CLAIMS[cid], measured, ci, PAPER_FIGURES[cid], data, verdict.verdict, details
    )


def _with_oc(verdict: Verdict, oc: O.OperatingCharacteristics | None) -> tuple[Verdict, dict]:
    """The verdict with its rule's measured error rates, after the acceptance rule per direction
    (``paper_checks._acceptance``), naming what the rule read when its reading does not stand."""
    if oc is None:
        return verdict, {}
    info = {
        "false_pass_rate": oc.false_pass_rate,
        "false_partial_rate": oc.false_partial_rate,
        "power": oc.power,
        "power_paper_effect": oc.power,
        "power_half_effect": oc.power_half,
        "false_fail_rate": oc.false_fail_rate,
        "operating_characteristics": {
            **oc._asdict(),
            "method": f"simulated at G={oc.n_groups}, {oc.n_datasets} data sets per world",
        },
    }
    out = accept(verdict, oc)
    if out.verdict != verdict.verdict:
        info["rule_verdict"] = verdict.verdict
    return out, info


def _skipped_result(cid: str, reason: str, skipped: dict) -> ClaimResult:
    return ClaimResult(
        cid,
        CLAIMS[cid],
        None,
        None,
        PAPER_FIGURES[cid],
        "-",
        SKIPPED,
        {"reason": reason, "skipped": skipped, "summary": reason, "headline": "-"},
    )


def needs(cid: str, spec: Needs) -> Callable:
    """Decorator: claim ``cid`` needs ``spec`` of its real data (``paper_checks._requirements``).

    Before the claim is measured, each real unit it grades is checked; any unmet need gives
    INCONCLUSIVE naming the missing column (or groups, budgets), never a crash or a silent skip.
    Real data that are absent are left to the claim (SKIPPED with the reason).
    """

    def wrap(check: Callable[[Workspace], ClaimResult]) -> Callable[[Workspace], ClaimResult]:
        @functools.wraps(check)
        def checked(ws: Workspace) -> ClaimResult:
            readers = list(ws.config.readers)
            gaps = []
            for r in readers[:1] if spec.readers == "main" else readers[1:]:
                try:
                    paired = ws.real_paired(r)
                except (DataMissing, DependencyMissing):
                    continue
                gaps += unmet(paired, spec, ws.unit(r))
            if not gaps:
                return check(ws)
            reason = "; ".join(gaps)
            return ClaimResult(
                cid,
                CLAIMS[cid],
                None,
                None,
                PAPER_FIGURES[cid],
                ws.real_label(readers[0]),
                INCONCLUSIVE,
                {
                    "reason": reason,
                    "unmet": gaps,
                    "summary": reason,
                    "headline": "-",
                    "skipped": {},
                },
            )

        checked.needs = spec  # type: ignore[attr-defined]
        return checked

    return wrap


def _main_reader(ws: Workspace) -> str:
    return ws.config.readers[0]


def _sim_sources(ws: Workspace, skipped: dict) -> list[SourceCurves]:
    out = []
    for scen in ws.config.scenarios:
        s = _try(lambda scen=scen: ws.sim_curves(scen), f"sim:{scen}", skipped)
        if s is not None:
            out.append(s)
    return out


def _data_label(sources, skipped) -> str:
    parts = [s.data for s in sources] + [f"{k}: skipped" for k in skipped]
    return "; ".join(parts) if parts else "-"


def _curve_details(s: SourceCurves) -> dict:
    return {
        op: {
            "crossover_budget": c.crossover,
            "status": c.status,
            "budgets": c.budgets,
            "delta": c.delta,
            "lower": c.lower,
            "upper": c.upper,
        }
        for op, c in s.operators.items()
    }


def _reversal_grades(s: SourceCurves) -> dict:
    """Per operator: ``reversal_test`` on the per-group curves (real sources; identical operators
    are tested once, under the first name), the band rule for sources without groups (shown)."""
    if s.group_delta is None:
        return {
            op: V.grade_reversal(c.budgets, c.delta, c.lower, c.upper)
            for op, c in s.operators.items()
        }
    ops, d = _distinct(s)
    budgets = next(iter(s.operators.values())).budgets
    g = V.reversal_test(budgets, d).grades
    return {op: int(x) for op, x in zip(ops, g)}


def _budgets(s: SourceCurves) -> np.ndarray:
    return next(iter(s.operators.values())).budgets


def _distinct(s: SourceCurves) -> tuple[list[str], np.ndarray]:
    """Operators whose per-group curves differ from every earlier one's, and their curves."""
    names = list(s.operators)
    d = np.asarray(s.group_delta, float)
    keep = [
        k for k in range(len(names)) if not any(np.array_equal(d[:, k], d[:, j]) for j in range(k))
    ]
    return [names[k] for k in keep], d[:, keep]


def _admission(ws: Workspace, reader: str, skipped: dict) -> tuple[dict | None, str | None]:
    """``(check, reason)``: the raw-accuracy check of ``reader`` and, when it is inadmissible, why."""
    chk = _try(lambda: ws.admissibility(reader), ws.unit(reader), skipped)
    if chk is None:
        return None, None
    if V.admissible(chk["max_drop"]):
        return chk, None
    b0, b1 = chk["at"]
    return chk, (
        f"inadmissible reader: accuracy with raw evidence falls from B={b0:.0f} to B={b1:.0f} "
        f"by {chk['max_drop'].fmt(100, 1)} points (family-wise 95% CI above 0), against the "
        "model's premise"
    )


def _admission_text(reader: str, chk: dict | None) -> str:
    if chk is None:
        return f"{reader}: not measured"
    acc = ", ".join(f"{b:.0f}:{a:.3f}" for b, a in zip(chk["budgets"], chk["accuracy"]))
    ok = "admissible" if V.admissible(chk["max_drop"]) else "INADMISSIBLE"
    at = "" if chk["at"] is None else f" (B={chk['at'][0]:.0f}->{chk['at'][1]:.0f})"
    return f"{reader}: {ok}, largest drop {chk['max_drop'].fmt(100, 1)} pts{at}; U(ret) by B {acc}"


# ---- claim 1 ---------------------------------------------------------------------------------------


@needs("1", Needs(min_budgets=2))
def check_sign_reversal(ws: Workspace) -> ClaimResult:
    """Claim 1: "consolidation gains under tight budgets, loses under loose ones".

    Real unit: LoCoMo under the main reader (when admissible), graded by ``grade_reversal`` of
    the best operator's ``dU(B)`` with its pointwise 95% band. Shown: the sim presets' grades and
    the exact model's crossovers. Headline: the crossover budget of the best-reversing operator.

    References: MODEL §6.1-6.3.
    """
    skipped: dict = {}
    reader = _main_reader(ws)
    theory = _try(ws.theory_curves, "theory", skipped)
    sims = _sim_sources(ws, skipped)
    real = _try(lambda: ws.real_curves(reader), ws.unit(reader), skipped)
    chk, bad = _admission(ws, reader, skipped) if real is not None else (None, None)
    grades, inconclusive = {}, {}
    if real is not None:
        if bad:
            inconclusive[real.name] = bad
        else:
            grades[real.name] = _reversal_grades(real)
    sim_grades = {s.name: _reversal_grades(s) for s in sims}
    verdict = V.verdict_sign_reversal(
        grades, missing=_real_missing(skipped), inconclusive=inconclusive
    )
    measured, op_h, head = Estimate.missing(), "-", real
    if head is not None:
        g = _reversal_grades(head)
        op_h = max(g, key=lambda o: (g[o], head.operators[o].crossover.defined))
        measured = head.operators[op_h].crossover

    def line(s, g, tag):
        return (
            f"{s.name}{tag}: {sum(v == 2 for v in g.values())}/{len(g)} operators reverse "
            f"(B*: {', '.join(f'{o} {s.operators[o].crossover.fmt()}' for o in g)})"
        )

    parts = [line(real, _reversal_grades(real), " [graded]")] if real is not None else []
    parts += [line(s, sim_grades[s.name], " [sim, shown]") for s in sims]
    if theory is not None:
        parts.append(
            "theory B* [shown]: "
            + ", ".join(f"{o} {c.crossover.fmt()}" for o, c in theory.operators.items())
        )
    if chk is not None:
        parts.append("reader check: " + _admission_text(reader, chk))
    details = {
        "grades": grades,
        "sim_grades": sim_grades,
        "admissibility": {reader: chk},
        "curves": {s.name: _curve_details(s) for s in ([real] if real else []) + sims},
        "theory": None if theory is None else _curve_details(theory),
    }
    return _result(
        "1",
        verdict,
        measured=measured,
        data=_data_label(([real] if real else []) + sims, skipped),
        details=details,
        headline=f"crossover budget (tokens) of {op_h} on {getattr(head, 'name', '-')}",
        summary="; ".join(parts) or "-",
        skipped=skipped,
        oc=R.reversal_oc(
            ws.key("oc:1"),
            _budgets(real),
            {real.name: _distinct(real)[1]},
            operators={real.name: _distinct(real)[0]},
            n_datasets=ws.config.oc_datasets,
        )
        if real is not None and grades
        else None,
    )


# ---- claims 2, 3 -----------------------------------------------------------------------------------


def _at(c, i) -> Estimate:
    return Estimate(float(c.delta[i]), float(c.lower[i]), float(c.upper[i]))


def _real_pair(ws: Workspace, skipped: dict) -> list[SourceCurves]:
    """The main reader's LoCoMo curves, raw and chance-corrected (the units of claims 2-3)."""
    reader = _main_reader(ws)
    out = []
    raw = _try(lambda: ws.real_curves(reader), ws.unit(reader), skipped)
    if raw is not None:
        out.append(raw)
        corr = _try(
            lambda: ws.real_curves(reader, corrected=True), ws.unit(reader) + ":chance", skipped
        )
        if corr is not None:
            out.append(corr)
    return out


def _chance_table(ws: Workspace) -> dict | None:
    """``{action: {budget: chance rate}}`` and the raw accuracy beside it, main reader."""
    try:
        paired = ws.real_paired(_main_reader(ws))
    except (DataMissing, DependencyMissing):
        return None
    chance = chance_outcomes(paired)
    if chance is None:
        return None
    y = np.asarray(paired.outcomes, float)
    b = np.asarray(paired.budget, float)
    out = {"chance": {}, "accuracy": {}}
    for k, a in enumerate(ACTIONS):
        out["chance"][a] = {f"{bb:g}": float(chance[b == bb, k].mean()) for bb in np.unique(b)}
        out["accuracy"][a] = {f"{bb:g}": float(y[b == bb, k].mean()) for bb in np.unique(b)}
    return out


def _ret_accuracy(ws: Workspace, corrected: bool) -> dict:
    paired = ws.real_paired(_main_reader(ws))
    y = np.asarray(paired.outcomes, float)[:, 0]
    chance = chance_outcomes(paired) if corrected else None
    if chance is not None:
        y = y - chance[:, 0]
    b = np.asarray(paired.budget, float)
    return {float(bb): float(y[b == bb].mean()) for bb in np.unique(b)}


@needs("2", Needs())
def check_tight_gain(ws: Workspace) -> ClaimResult:
    """Claim 2: "under tight budgets consolidation improves absolute accuracy (paper: up to 48% on
    LongMemEval)", read as up to 48 absolute accuracy points.

    Real units: LoCoMo under the main reader, raw and chance-corrected (outcome minus the same
    context's score against another question's answer). Per unit and operator ``max_B dU_o(B)``
    with the band at that budget (selected on the same data: an optimistic interval); graded for
    direction (> 0) and magnitude (against 0.48). The relative gain ``dU / U(ret)`` at that budget
    is shown. Sim presets shown. Headline: the largest raw gain on LoCoMo, fraction of questions.

    References: MODEL §6.3.
    """
    skipped: dict = {}
    reals = _real_pair(ws, skipped)
    sims = _sim_sources(ws, skipped)
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
    tight = {s.name: s.group_delta for s in reals if s.group_delta is not None}
    verdict = R.tight_gain_verdict(tight, missing=_real_missing(skipped))
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
    summary += f"; paper: +{100 * V.PAPER_TIGHT_GAIN[0]:.0f} points (absolute)"
    return _result(
        "2",
        verdict,
        measured=measured,
        data=_data_label(reals + sims, skipped),
        details={
            "max_gain": gains,
            "at_budget": where,
            "relative_gain": rel,
            "paper_points": V.PAPER_TIGHT_GAIN,
            "chance": _chance_table(ws),
        },
        headline=f"largest dU (fraction of questions) of {op_h} on {getattr(head, 'name', '-')}",
        summary=summary or "-",
        skipped=skipped,
        oc=R.tight_gain_oc(ws.key("oc:2"), tight, n_datasets=ws.config.oc_datasets)
        if tight
        else None,
    )


@needs("3", Needs())
def check_loose_retention(ws: Workspace) -> ClaimResult:
    """Claim 3: "under loose budgets retention beats every consolidation operator (paper: by 8-11%)",
    read as 8-11 absolute accuracy points.

    Real units: LoCoMo under the main reader, raw and chance-corrected. Per unit and operator the
    margin ``U(ret) - U(o)`` at the loosest budget with its band; graded for direction (every
    margin > 0) and magnitude (every margin against 0.08-0.11). Sim presets shown. Headline: the
    smallest raw margin on LoCoMo.

    References: MODEL §6.2.
    """
    skipped: dict = {}
    reals = _real_pair(ws, skipped)
    sims = _sim_sources(ws, skipped)
    margins = {}
    for s in reals + sims:
        margins[s.name] = {}
        for op, c in s.operators.items():
            e = _at(c, len(c.budgets) - 1)
            margins[s.name][op] = Estimate(-e.point, -e.upper, -e.lower)
    loose_g = {s.name: -s.group_delta[:, :, -1] for s in reals if s.group_delta is not None}
    verdict = R.loose_verdict(loose_g, list(OPERATORS), missing=_real_missing(skipped))
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
        f"; paper: {100 * V.PAPER_LOOSE_MARGIN[0]:.0f}-{100 * V.PAPER_LOOSE_MARGIN[1]:.0f} "
        "points (absolute)"
    )
    return _result(
        "3",
        verdict,
        measured=measured,
        data=_data_label(reals + sims, skipped),
        details={"margin": margins, "paper_points": V.PAPER_LOOSE_MARGIN, "chance": chance},
        headline=f"smallest U(ret) - U(o) at the loosest budget ({op_h}, {getattr(head, 'name', '-')})",
        summary=summary or "-",
        skipped=skipped,
        oc=R.loose_oc(ws.key("oc:3"), loose_g, list(OPERATORS), n_datasets=ws.config.oc_datasets)
        if loose_g
        else None,
    )


# ---- claim 4 ---------------------------------------------------------------------------------------


@needs("4", Needs(min_budgets=2, readers="second"))
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
    checks, grades, inconclusive, sources = {}, {}, {}, {}
    for r in readers:
        s = _try(lambda r=r: ws.real_curves(r), ws.unit(r), skipped)
        if s is None:
            continue
        sources[r] = s
        chk, bad = _admission(ws, r, skipped)
        checks[r] = chk
        if r == readers[0]:
            continue  # the main reader's reversal is claim 1's
        if bad:
            inconclusive[s.name] = bad
        else:
            grades[s.name] = _reversal_grades(s)
    second = [r for r in readers[1:] if r in sources]
    if not second:
        need = (
            "a second --paired FILE (a second reader)"
            if ws.config.paired
            else "LoCoMo under a second reader"
        )
        why = "; ".join(skipped.values()) or "none given"
        return _skipped_result("4", f"needs {need}: {why}", skipped)
    verdict = V.verdict_sign_reversal(
        grades,
        missing=[k for k in _real_missing(skipped) if k != ws.unit(readers[0])],
        inconclusive=inconclusive,
    )
    pick = next((r for r in second if sources[r].name in grades), second[0])
    s2 = sources[pick]
    g2 = _reversal_grades(s2)
    best = max(g2, key=lambda o: (g2[o], s2.operators[o].crossover.defined))
    c = s2.operators[best]
    if c.crossover.defined:
        measured, headline = c.crossover, f"crossover budget of {best} under the {s2.name} reader"
    else:  # no crossover: the loosest budget's dU says on which side of 0 the curve ends
        measured = _at(c, len(c.budgets) - 1)
        headline = f"no crossover; dU of {best} at the loosest budget under the {s2.name} reader"
    parts = []
    for r, s in sources.items():
        g = _reversal_grades(s)
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
                f"{_at(s.operators[o], len(s.operators[o].budgets) - 1).fmt(100, 1)} pts"
                for o in g
            )
            + ")"
        )
    parts += ["reader check: " + _admission_text(r, checks.get(r)) for r in sources]
    return _result(
        "4",
        verdict,
        measured=measured,
        data=_data_label(list(sources.values()), skipped),
        details={
            "grades": grades,
            "admissibility": checks,
            "not_graded": inconclusive,
            "curves": {s.name: _curve_details(s) for s in sources.values()},
        },
        headline=headline,
        summary="; ".join(parts),
        skipped=skipped,
        oc=R.reversal_oc(
            ws.key("oc:4"),
            _budgets(sources[second[0]]),
            {
                sources[r].name: _distinct(sources[r])[1]
                for r in second
                if sources[r].name in grades
            },
            operators={sources[r].name: _distinct(sources[r])[0] for r in second},
            n_datasets=ws.config.oc_datasets,
        ),
    )


# ---- claim 5 ---------------------------------------------------------------------------------------


@needs("5", Needs(columns=("cluster_tokens",), min_budgets=2))
def check_crossover_scaling(ws: Workspace) -> ClaimResult:
    """Claim 5: "the crossover comes at a smaller absolute budget for shorter evidence ... and B*
    divided by the evidence length is roughly constant (relative pressure governs)".

    Real units: LoCoMo under the main reader (when admissible), questions split into
    ``config.length_strata`` evidence-length strata; per stratum and operator ``B*`` with a
    wild-cluster-bootstrap interval; per operator the slope of ``log B*`` on ``log L`` over the
    strata with a point crossover (at least 3), graded by ``grade_slope`` (``rules.slope_verdict``)
    and its operating characteristics (``rules.slope_oc``). An operator identical to another on
    every row is one unit. Shown: ``B*/L`` per stratum, the sim presets' ``B*/L`` and the exact
    model at lengths x1 and x2 (scale equivariance: ratio 2). Headline: merge's slope.

    References: MODEL §6.5.
    """
    skipped: dict = {}
    cfg = ws.config
    reader = _main_reader(ws)
    sims = _sim_sources(ws, skipped)
    theory = [
        t
        for t in (_try(lambda s=s: ws.theory_curves(s), "theory", skipped) for s in (1.0, 2.0))
        if t is not None
    ]
    paired = _try(lambda: ws.real_paired(reader), ws.unit(reader), skipped)
    chk, bad = _admission(ws, reader, skipped) if paired is not None else (None, None)
    slopes, inconclusive, strata_rows, oc = {}, {}, {}, None
    if paired is not None:
        strata, _, _, med = length_strata(
            evidence_length(paired), paired.query_id, cfg.length_strata
        )
        budgets = np.unique(np.asarray(paired.budget, float))
        curves = stratified_group_curves(
            paired.outcomes, paired.group_id, paired.budget, strata, budgets
        )
        same = identical_operators(paired)
        units = [None if (op in same or bad) else f"{ws.unit(reader)}:{op}" for op in OPERATORS]
        if bad:
            inconclusive.update(
                {f"{ws.unit(reader)}:{op}": bad for op in OPERATORS if op not in same}
            )
        verdict, slopes, est = R.slope_verdict(
            ws.key("c5:strata"),
            curves,
            budgets,
            med,
            units,
            n_resamples=cfg.n_resamples,
            missing=_real_missing(skipped),
            inconclusive=inconclusive,
        )
        for k, op in enumerate(OPERATORS):
            strata_rows[op] = [
                {
                    "stratum": s + 1,
                    "median_length": float(med[s]),
                    "crossover": est[s][k],
                    "bounded": bounded(est[s][k]),
                    "crossover_over_length": (
                        Estimate(*(x / med[s] for x in est[s][k]))
                        if est[s][k].defined
                        else Estimate.missing()
                    ),
                }
                for s in range(len(med))
            ]
        if slopes:
            oc = R.slope_oc(
                ws.key("oc:5"),
                curves,
                budgets,
                med,
                units,
                n_datasets=max(ws.config.oc_datasets // 2, 10),
            )
    else:
        verdict = V.verdict_crossover_scaling({}, missing=_real_missing(skipped))
    sim_ratio = {
        s.name: {o: c.crossover.point / s.evidence_length for o, c in s.operators.items()}
        for s in sims
    }
    theory_ratio = (
        {
            op: theory[1].operators[op].crossover.point / theory[0].operators[op].crossover.point
            for op in theory[0].operators
        }
        if len(theory) == 2
        else {}
    )
    parts = []
    for op, rows in strata_rows.items():
        parts.append(
            f"{ws.real_tag} {op}: "
            + ", ".join(
                f"S{r['stratum']} L={r['median_length']:.0f} B*={r['crossover'].fmt()}"
                f" B*/L={r['crossover_over_length'].fmt()}{'' if r['bounded'] else ' (unbounded)'}"
                for r in rows
            )
            + (
                f"; slope {slopes[f'{ws.unit(reader)}:{op}'][1].fmt()} (90%: "
                f"{slopes[f'{ws.unit(reader)}:{op}'][0].fmt()})"
                if f"{ws.unit(reader)}:{op}" in slopes
                else ""
            )
        )
    parts += [
        f"{src} [sim, shown] B*/E[L]: " + ", ".join(f"{o} {v:.2f}" for o, v in r.items())
        for src, r in sim_ratio.items()
    ]
    if theory_ratio:
        parts.append(
            "theory [shown] B*(lengths x2) / B*(x1): "
            + ", ".join(f"{o} {v:.4f}" for o, v in theory_ratio.items())
        )
    head = slopes.get(ws.unit(reader) + ":merge", (None, Estimate.missing()))[1]
    data = "; ".join(
        (
            [ws.real_label(reader) + f", {cfg.length_strata} evidence-length strata"]
            if paired is not None
            else []
        )
        + [s.data for s in sims]
        + [f"{k}: skipped" for k in skipped]
    )
    return _result(
        "5",
        verdict,
        measured=head,
        data=data or "-",
        details={
            "slopes": slopes,
            "strata": strata_rows,
            "not_graded": inconclusive,
            "admissibility": {reader: chk},
            "sim_crossover_over_length": sim_ratio,
            "theory_scale_ratio": theory_ratio,
        },
        headline=f"slope of log B* on log L for merge on {ws.unit(reader)} (1 = relative pressure "
        "governs)",
        summary="; ".join(parts) or "-",
        skipped=skipped,
        oc=oc,
    )


# ---- claim 6 ---------------------------------------------------------------------------------------


@needs("6", Needs(columns=("cluster_tokens",)))
def check_cross_note(ws: Workspace) -> ClaimResult:
    """Claim 6: "cross-note abstract and merge beat local rewrite when compression is necessary, and
    neither dominates the other".

    Compression is necessary on rows outside the raw-grounded region (``q not in G_B``: retention
    cannot fit the whole cluster, MODEL §3). Real units (LoCoMo, main reader): ``U(o) - U(rewrite)``
    for merge and abstract over those rows; an operator with the same outcomes as rewrite on every
    row (LoCoMo's merge and rewrite are the same text) is not measurable, named, not graded;
    neither-dominates: ``U(merge) - U(abstract)`` per query type. Sim presets shown. Headline:
    ``U(abstract) - U(rewrite)`` on LoCoMo.

    References: MODEL §7.
    """
    skipped: dict = {}
    i_m, i_a, i_r = ACTIONS.index("merge"), ACTIONS.index("abstract"), ACTIONS.index("rewrite")
    tables = {}
    for scen in ws.config.scenarios:
        p = _try(lambda scen=scen: ws.sim_paired(scen), f"sim:{scen}", skipped)
        if p is not None:
            tables[f"sim:{scen}"] = p
    reader = _main_reader(ws)
    real = _try(lambda: ws.real_paired(reader), ws.unit(reader), skipped)
    if real is not None:
        tables[ws.unit(reader)] = real
    beats, conds, inconclusive, shown = {}, {}, {}, {}
    arrays_b, arrays_c = {}, {}
    for src, p in tables.items():
        y = np.asarray(p.outcomes, float)
        tight = raw_grounded(p) == 0
        is_real = not src.startswith("sim:")
        out = {}
        for op, i in (("merge", i_m), ("abstract", i_a)):
            if np.array_equal(y[:, i], y[:, i_r]):
                if is_real:
                    inconclusive[f"{src}:{op}"] = (
                        f"{op} and rewrite have identical outcomes on every row (the same text): "
                        "not measurable"
                    )
                continue
            out[op] = group_means(y[:, i] - y[:, i_r], p.group_id, tight)
        c = {}
        qt = np.asarray(p.query_type).astype(str)
        for t in np.unique(qt):
            rows = tight & (qt == t)
            if rows.sum() >= 10:
                c[f"{src}:{t}"] = group_means(y[:, i_m] - y[:, i_a], p.group_id, rows)
        if is_real:
            arrays_b.update({f"{src}:{op}": v for op, v in out.items()})
            arrays_c.update(c)
            beats.update({f"{src}:{op}": t_estimate(v) for op, v in out.items()})
            conds.update(c)
        else:
            shown[src] = {
                "beats_rewrite": {k: t_estimate(v) for k, v in out.items()},
                "merge_minus_abstract": {k: t_estimate(v) for k, v in c.items()},
            }
    conds = R.conditions(conds)
    verdict = V.verdict_cross_note(
        beats, conds, missing=_real_missing(skipped), inconclusive=inconclusive
    )
    head = ws.unit(reader) + ":abstract"
    measured = beats.get(head, Estimate.missing())
    parts = [f"{u} - rewrite {e.fmt(100, 1)} pts [graded]" for u, e in beats.items()]
    parts += [f"{u}: not measurable" for u in inconclusive]
    n_m = sum(e.lower > 0 for e in conds.values())
    n_a = sum(e.upper < 0 for e in conds.values())
    if conds:
        parts.append(
            f"merge-abstract by query type on {ws.unit(reader)}: merge ahead in {n_m}, abstract "
            f"ahead in {n_a} of {len(conds)} (CI clear)"
        )
    for src, d in shown.items():
        parts.append(
            f"{src} [sim, shown]: "
            + ", ".join(f"{o}-rewrite {e.fmt(100, 1)} pts" for o, e in d["beats_rewrite"].items())
        )
    data = "; ".join(
        [f"{k} paired, rows with q not in G_B" for k in tables] + [f"{k}: skipped" for k in skipped]
    )
    return _result(
        "6",
        verdict,
        measured=measured,
        data=data or "-",
        details={
            "beats_rewrite": beats,
            "merge_minus_abstract": conds,
            "not_graded": inconclusive,
            "sim": shown,
        },
        headline=f"U(abstract) - U(rewrite) where compression is necessary ({head})",
        summary="; ".join(parts) or "-",
        skipped=skipped,
        oc=R.cross_note_oc(ws.key("oc:6"), arrays_b, arrays_c, n_datasets=ws.config.oc_datasets)
        if arrays_b or arrays_c
        else None,
    )


# ---- claims 7-9 ------------------------------------------------------------------------------------


def _loco(ws: Workspace, skipped: dict):
    reader = _main_reader(ws)
    return reader, _try(lambda: ws.loco(reader), ws.unit(reader), skipped)


def _loco_data(ws, reader, ev, skipped) -> str:
    parts = []
    if ev is not None:
        parts.append(
            f"{ws.real_label(reader)}; leave-one-conversation-out over {len(ev.groups)} "
            "conversations, t-interval over per-conversation estimates"
        )
    return "; ".join(parts + [f"{k}: skipped" for k in skipped]) or "-"


def _router_gain_groups(ev) -> np.ndarray:
    """Per held-out conversation ``acc(oas) - acc(best-fixed)`` on budget-stressed rows."""
    return ev.per_group(ev.outcome("oas") - ev.outcome("best-fixed"), ev.grounded == 0)


@needs("7", Needs(columns=("cluster_tokens",), min_groups=4))
def check_router_gain(ws: Workspace) -> ClaimResult:
    """Claim 7: "OAS improves the when-which decision under budget-stressed conditions over the best
    fixed policy; report too where it does not".

    Budget-stressed instances: retention cannot fit the cluster (``q not in G_B``). Real unit:
    LoCoMo, leave-one-conversation-out; per held-out conversation the mean of
    ``acc(oas) - acc(best-fixed)`` over its stressed rows, combined with a t-interval. Per budget
    as well; the budgets where OAS is not ahead are listed. Headline: the stressed gain.

    References: MODEL §8.
    """
    skipped: dict = {}
    reader, ev = _loco(ws, skipped)
    gains, per_budget, not_ahead, oc = {}, {}, [], None
    src = ws.unit(reader)
    if ev is not None:
        d = ev.outcome("oas") - ev.outcome("best-fixed")
        gain_groups = _router_gain_groups(ev)
        gains[src] = t_interval(gain_groups)
        oc = R.positive_oc(ws.key("oc:7"), {src: gain_groups}, n_datasets=ws.config.oc_datasets)
        for b in np.unique(ev.budget):
            per_budget[float(b)] = t_interval(ev.per_group(d, ev.budget == b))
        not_ahead = [b for b, e in per_budget.items() if not e.point > 0]
    verdict = V.verdict_router_gain(gains, missing=_real_missing(skipped))
    summary = "; ".join(
        f"{s}: {g.fmt(100, 1)} pts on stressed instances; OAS not ahead (point <= 0) at "
        f"{len(not_ahead)}/{len(per_budget)} budgets: B = "
        + (", ".join(f"{b:.0f}" for b in not_ahead) or "none")
        for s, g in gains.items()
    )
    return _result(
        "7",
        verdict,
        measured=gains.get(src, Estimate.missing()),
        data=_loco_data(ws, reader, ev, skipped),
        details={"gain_stressed": gains, "per_budget": per_budget, "not_ahead_budgets": not_ahead},
        headline=f"acc(oas) - acc(best-fixed) on budget-stressed instances ({src})",
        summary=summary or "-",
        skipped=skipped,
        oc=oc,
    )


@needs("8", Needs(min_groups=4))
def check_mlp_control(ws: Workspace) -> ClaimResult:
    """Claim 8: "an MLP does not reliably improve over ridge", as an equivalence test.

    Real unit: LoCoMo, leave-one-conversation-out; per conversation ``acc(mlp) - acc(oas)``,
    combined with 90% and 95% t-intervals; two one-sided tests (``grade_equivalence``) with the
    margin ``config.equivalence_share`` times claim 7's measured OAS gain (INCONCLUSIVE when that
    gain is not positive). Headline: the difference with its 95% interval.

    References: MODEL §8 (capacity control).
    """
    skipped: dict = {}
    reader, ev = _loco(ws, skipped)
    src = ws.unit(reader)
    tests, oc, m, diff = {}, None, float("nan"), None
    if ev is not None:
        gain = t_interval(_router_gain_groups(ev))
        m = ws.config.equivalence_share * gain.point if gain.defined else float("nan")
        if "mlp" not in ev.chosen:
            skipped[f"{src}:mlp"] = "dependency not available: oas MLP policy"
        else:
            diff = ev.per_group(ev.outcome("mlp") - ev.outcome("oas"))
            tests[src] = (t_interval(diff, 0.90), t_interval(diff, 0.95))
    if tests and not m > 0:
        verdict = Verdict(
            INCONCLUSIVE,
            "claim 7 measures no positive OAS gain, so no margin can tie 'no reliable improvement' "
            "to it",
        )
    else:
        verdict = V.verdict_no_reliable_improvement(tests, margin=m, missing=_real_missing(skipped))
        if diff is not None:
            oc = R.equivalence_oc(ws.key("oc:8"), diff, m, n_datasets=ws.config.oc_datasets)
    summary = "; ".join(
        f"{s}: {e95.fmt(100, 1)} pts (90% interval {e90.fmt(100, 1)}); equivalence margin "
        f"+-{100 * m:.2g} pts ({ws.config.equivalence_share:g} x claim 7's OAS gain)"
        for s, (e90, e95) in tests.items()
    )
    return _result(
        "8",
        verdict,
        measured=tests[src][1] if src in tests else Estimate.missing(),
        data=_loco_data(ws, reader, ev, skipped),
        details={
            "difference_90": {k: v[0] for k, v in tests.items()},
            "difference_95": {k: v[1] for k, v in tests.items()},
            "margin": m,
            "margin_rule": f"{ws.config.equivalence_share:g} x claim 7's measured OAS gain",
        },
        headline=f"acc(mlp) - acc(oas) ({src})",
        summary=summary or "-",
        skipped=skipped,
        oc=oc,
    )


def crc_bound_check(ev, alpha: float) -> dict:
    """Conformal risk control's bound on fresh splits: ``E[harm] <= alpha`` per budget (MODEL §8).

    Each held-out conversation is a fresh calibration / test split. Returns the realized harm rate
    of ``oas-crc`` per (conversation, budget), its mean over conversations per budget (the
    quantity CRC bounds) with its standard error, the share of (conversation, budget) cells at or
    below alpha, and whether every budget's mean is at most alpha (``holds``) or at most alpha
    plus two standard errors (``holds_within_2se``: the bound is on an expectation, estimated here
    from G repeats).
    """
    name = calibrated_name("oas-crc", alpha)
    harm = ev.harm(name)
    budgets = np.unique(ev.budget)
    cells = np.stack([ev.per_group(harm, ev.budget == b) for b in budgets], axis=1)  # (G, nB)
    mean = np.nanmean(cells, axis=0)
    n = np.isfinite(cells).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.nanstd(cells, axis=0, ddof=1) / np.sqrt(n)
    se = np.nan_to_num(se)
    return {
        "alpha": alpha,
        "budgets": budgets,
        "mean_harm_per_budget": mean,
        "max_mean_harm": float(np.nanmax(mean)),
        "share_at_or_below_alpha": float(np.nanmean(cells <= alpha)),
        "se_per_budget": se,
        "holds": bool(np.all(mean <= alpha + 1e-12)),
        "holds_within_2se": bool(np.all(mean - 2 * se <= alpha + 1e-12)),
    }


@needs("9", Needs(min_groups=4))
def check_harm_calibration(ws: Workspace) -> ClaimResult:
    """Claim 9: "harm calibration lowers the harm rate at a bounded cost in accuracy".

    Real units: LoCoMo, leave-one-conversation-out, both calibrations (``oas-calibrated``: max
    accuracy s.t. harm <= alpha; ``oas-crc``: conformal risk control) at every alpha of
    ``config.alphas`` where the calibration binds (changes some choice of ``oas``; others are
    named, not graded): per conversation the harm change ``harm(variant) - harm(oas)`` and the
    accuracy cost ``acc(oas) - acc(variant)``, t-intervals; bounded cost means at most
    ``config.max_accuracy_cost``. Shown: harm against accuracy over the alpha sweep, and the CRC
    bound checked on the held-out conversations (``crc_bound_check``). Headline: the harm change
    of ``oas-calibrated`` at the largest binding alpha.

    References: MODEL §8 (calibrated variant, harm).
    """
    skipped: dict = {}
    reader, ev = _loco(ws, skipped)
    src = ws.unit(reader)
    harm, cost, inconclusive, sweep, crc = {}, {}, {}, {}, {}
    harm_g, cost_g = {}, {}
    if ev is not None:
        h_oas, a_oas = ev.harm("oas"), ev.outcome("oas")
        sweep["oas"] = {"harm": float(h_oas.mean()), "accuracy": float(a_oas.mean())}
        for var in ("oas-calibrated", "oas-crc"):
            for a in ev.alphas:
                name = calibrated_name(var, a)
                unit = f"{src}:{name}"
                sweep[name] = {
                    "harm": float(ev.harm(name).mean()),
                    "accuracy": float(ev.outcome(name).mean()),
                }
                if np.array_equal(ev.chosen[name], ev.chosen["oas"]):
                    inconclusive[unit] = "does not bind: the same choices as oas in every fold"
                    continue
                harm_g[unit] = ev.per_group(ev.harm(name) - h_oas)
                cost_g[unit] = ev.per_group(a_oas - ev.outcome(name))
                harm[unit], cost[unit] = t_interval(harm_g[unit]), t_interval(cost_g[unit])
        crc = {f"{a:g}": crc_bound_check(ev, a) for a in ev.alphas}
    verdict = R.harm_verdict(
        harm, cost, ws.config.max_accuracy_cost, _real_missing(skipped), inconclusive
    )
    cal = [u for u in harm if "oas-calibrated@" in u]
    head = max(cal, key=lambda u: float(u.rsplit("@", 1)[1]), default=next(iter(harm), None))
    parts = [
        f"{u.split(':')[-1]}: harm change {harm[u].fmt(100, 1)} pts, accuracy cost "
        f"{cost[u].fmt(100, 1)} pts"
        for u in harm
    ]
    if inconclusive:
        parts.append("not binding: " + ", ".join(u.split(":")[-1] for u in inconclusive))
    if sweep:
        parts.append(
            "harm / accuracy over the sweep: "
            + ", ".join(f"{k} {v['harm']:.3f}/{v['accuracy']:.3f}" for k, v in sweep.items())
        )
    if crc:
        parts.append(
            "CRC bound (mean held-out harm per budget <= alpha): "
            + ", ".join(
                f"alpha {k}: max {v['max_mean_harm']:.3f} "
                + (
                    "holds"
                    if v["holds"]
                    else "within 2 SE"
                    if v["holds_within_2se"]
                    else "EXCEEDED"
                )
                + ", "
                f"{100 * v['share_at_or_below_alpha']:.0f}% of cells <= alpha"
                for k, v in crc.items()
            )
        )
    return _result(
        "9",
        verdict,
        measured=harm.get(head, Estimate.missing()) if head else Estimate.missing(),
        data=_loco_data(ws, reader, ev, skipped),
        details={
            "harm_change": harm,
            "accuracy_cost": cost,
            "not_graded": inconclusive,
            "sweep": sweep,
            "crc_bound": crc,
            "max_accuracy_cost": ws.config.max_accuracy_cost,
            "alphas": list(ev.alphas) if ev is not None else list(ws.config.alphas),
        },
        oc=R.harm_oc(
            ws.key("oc:9"),
            harm_g,
            cost_g,
            ws.config.max_accuracy_cost,
            n_datasets=ws.config.oc_datasets,
        )
        if harm_g
        else None,
        headline=f"harm(calibrated) - harm(oas) ({head})",
        summary="; ".join(parts) or "-",
        skipped=skipped,
    )


CHECKS = {
    "1": check_sign_reversal,
    "2": check_tight_gain,
    "3": check_loose_retention,
    "4": check_second_reader,
    "5": check_crossover_scaling,
    "6": check_cross_note,
    "7": check_router_gain,
    "8": check_mlp_control,
    "9": check_harm_calibration,
}
