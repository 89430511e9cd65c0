"""What the claim functions share: the claims' texts, the result and skip builders, the ``needs``
decorator and the readers' admission check (``paper_checks.claims._all`` lists the claims).

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
from typing import TypeVar

import numpy as np

from paper_checks._types import (
    INCONCLUSIVE,
    NOT_TESTABLE,
    SKIPPED,
    ClaimResult,
    Estimate,
    SourceCurves,
    Verdict,
)
from paper_checks.claims._sources import DataMissing, DependencyMissing, Workspace
from paper_checks.operating import OperatingCharacteristics
from paper_checks.rules._acceptance import accept
from paper_checks.rules._gates import identical_actions
from paper_checks.rules._grades import admissible
from paper_checks.rules._requirements import Needs, gate, unmet
from paper_checks.rules._reversal import endpoint_test, grade_reversal
from retcon.vocab import ACTIONS

_T = TypeVar("_T")

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


def attempt(get: Callable, label: str, skipped: dict):
    """``get()``, or ``None`` with the reason in ``skipped[label]`` when data (LoCoMo) or an optional
    dependency (an endpoint) is missing. Nothing else is caught: our own packages are ordinary
    imports of ``paper_checks.claims._sources``, so a renamed function fails at import, not here."""
    try:
        return get()
    except (DataMissing, DependencyMissing) as e:
        skipped[label] = str(e)
        return None


def real_missing(skipped: dict) -> list[str]:
    """The skipped units that are real data (the verdict's missing units). The chance-corrected
    unit of claims 2-3 is optional: it needs the ``meta_chance_<action>`` columns, which LoCoMo
    paired here always has and a ``--paired`` file may lack (named, not counted as missing)."""
    return [
        k for k in skipped if not k.startswith(("sim:", "theory")) and not k.endswith(":chance")
    ]


def claim_result(
    cid: str,
    verdict,
    *,
    measured: Estimate,
    data: str,
    details: dict,
    headline: str,
    summary: str,
    skipped: dict,
    oc: OperatingCharacteristics | None = None,
) -> ClaimResult:
    """Claim ``cid``'s result: the headline estimate ``measured`` as its value and interval (the
    interval None unless both ends are finite), the verdict after its rule's error rates."""
    verdict, oc_info = with_oc(verdict, oc)
    value = measured.point if measured.defined else None
    bounded = measured.defined and np.isfinite(measured.lower) and np.isfinite(measured.upper)
    ci = (measured.lower, measured.upper) if bounded else None
    details = {
        **details,
        **oc_info,
        "headline": headline,
        "summary": summary,
        "reason": verdict.reason,
        "skipped": skipped,
    }
    return ClaimResult(
        cid, CLAIMS[cid], value, ci, PAPER_FIGURES[cid], data, verdict.verdict, details
    )


def graded(ws: Workspace, cid: str, rule: Callable[..., _T], *args, **kwargs) -> _T:
    """Claim ``cid``'s verdict: ``rule(*args, **kwargs)``, the rule's one home in
    ``paper_checks.rules`` (the same function its ``*_oc`` simulates), recorded on the workspace
    (``ws.graded[cid] = (rule, args, kwargs)``) so that the rule can be run again on the very
    per-group arrays the claim graded (tests/paper_checks/test_one_path.py)."""
    ws.graded[cid] = (rule, args, kwargs)
    return rule(*args, **kwargs)


def with_oc(verdict: Verdict, oc: OperatingCharacteristics | None) -> tuple[Verdict, dict]:
    """The verdict with its rule's measured error rates, after the acceptance rule per direction
    (``paper_checks.rules._acceptance``), naming what the rule read when its reading does not stand."""
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


def unmeasured_result(cid: str, data: str, verdict: str, details: dict) -> ClaimResult:
    """Claim ``cid`` with no measured value (SKIPPED, or INCONCLUSIVE for an unmet need)."""
    return ClaimResult(cid, CLAIMS[cid], None, None, PAPER_FIGURES[cid], data, verdict, details)


def skipped_result(cid: str, reason: str, skipped: dict) -> ClaimResult:
    details = {"reason": reason, "skipped": skipped, "summary": reason, "headline": "-"}
    return unmeasured_result(cid, "-", SKIPPED, details)


def needs(cid: str, spec: Needs) -> Callable:
    """Decorator: claim ``cid`` needs ``spec`` of its real data (``paper_checks.rules._requirements``).

    Before the claim is measured, each real unit it grades passes the data gates first
    (``paper_checks.rules._gates``, via ``_requirements.gate``): too few groups, or an outcome
    without variance in every budget the claim reads, gives NOT TESTABLE with the reason (never
    FAIL, never PASS; claim 4: when every second reader is closed). Then any unmet need gives
    INCONCLUSIVE naming the missing column (or budgets), never a crash or a silent skip. Real data
    that are absent are left to the claim (SKIPPED with the reason). Actions with the same
    outcome on every row are named in ``details["same_records"]`` ("merge and rewrite are the
    same records here").
    """

    def wrap(check: Callable[[Workspace], ClaimResult]) -> Callable[[Workspace], ClaimResult]:
        @functools.wraps(check)
        def checked(ws: Workspace) -> ClaimResult:
            readers = list(ws.config.readers)
            gaps, closed, same = [], [], ""
            units = readers[:1] if spec.readers == "main" else readers[1:]
            for r in units:
                try:
                    paired = ws.real_paired(r)
                except (DataMissing, DependencyMissing):
                    continue
                g = gate(paired, spec, ws.unit(r))
                if not g.testable:
                    closed.append(g.reason)
                    continue
                same = same or identical_actions(paired.outcomes, ACTIONS).words
                gaps += unmet(paired, spec, ws.unit(r))
            if closed and len(closed) == sum(_present(ws, r) for r in units):
                details = _unmeasured_details(closed, "not_testable")
                return unmeasured_result(cid, ws.real_label(readers[0]), NOT_TESTABLE, details)
            if not gaps:
                out = check(ws)
                if same:
                    out = out._replace(details={**out.details, "same_records": same})
                return out
            details = _unmeasured_details(gaps, "unmet")
            return unmeasured_result(cid, ws.real_label(readers[0]), INCONCLUSIVE, details)

        checked.needs = spec  # type: ignore[attr-defined]
        return checked

    return wrap


def _unmeasured_details(reasons: list[str], key: str) -> dict:
    """The details of a claim stopped before it was measured: its reasons, one line."""
    reason = "; ".join(reasons)
    return {"reason": reason, key: reasons, "summary": reason, "headline": "-", "skipped": {}}


def _present(ws: Workspace, reader: str) -> bool:
    try:
        ws.real_paired(reader)
    except (DataMissing, DependencyMissing):
        return False
    return True


def main_reader(ws: Workspace) -> str:
    return ws.config.readers[0]


def sim_sources(ws: Workspace, skipped: dict) -> list[SourceCurves]:
    out = []
    for scen in ws.config.scenarios:
        s = attempt(lambda scen=scen: ws.sim_curves(scen), f"sim:{scen}", skipped)
        if s is not None:
            out.append(s)
    return out


def data_label(sources, skipped: dict, *, labels=()) -> str:
    """A claim's data column: ``labels`` (units described by the claim), each source's ``data``,
    then each skipped unit, ``; ``-joined; ``-`` when there is none."""
    parts = [*labels, *(s.data for s in sources), *(f"{k}: skipped" for k in skipped)]
    return "; ".join(parts) if parts else "-"


def curve_details(s: SourceCurves) -> dict:
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


def reversal_grades(s: SourceCurves) -> dict:
    """Per operator: ``endpoint_test`` on the per-group curves (real sources; identical operators
    are tested once, under the first name), the band rule for sources without groups (shown)."""
    if s.group_delta is None:
        return {
            op: grade_reversal(c.budgets, c.delta, c.lower, c.upper)
            for op, c in s.operators.items()
        }
    ops, d = distinct_curves(s)
    g = endpoint_test(source_budgets(s), d).grades
    return {op: int(x) for op, x in zip(ops, g)}


def source_budgets(s: SourceCurves) -> np.ndarray:
    return next(iter(s.operators.values())).budgets


def distinct_curves(s: SourceCurves) -> tuple[list[str], np.ndarray]:
    """Operators whose per-group curves differ from every earlier one's, and their curves."""
    names = list(s.operators)
    d = np.asarray(s.group_delta, float)
    keep = [
        k for k in range(len(names)) if not any(np.array_equal(d[:, k], d[:, j]) for j in range(k))
    ]
    return [names[k] for k in keep], d[:, keep]


def admission_check(ws: Workspace, reader: str, skipped: dict) -> tuple[dict | None, str | None]:
    """``(check, reason)``: the raw-accuracy check of ``reader`` and, when it is inadmissible, why."""
    chk = attempt(lambda: ws.admissibility(reader), ws.unit(reader), skipped)
    if chk is None:
        return None, None
    if admissible(chk["max_drop"]):
        return chk, None
    b0, b1 = chk["at"]
    return chk, (
        f"inadmissible reader: accuracy with raw evidence falls from B={b0:.0f} to B={b1:.0f} "
        f"by {chk['max_drop'].fmt(100, 1)} points (family-wise 95% CI above 0), against the "
        "model's premise"
    )


def admission_text(reader: str, chk: dict | None) -> str:
    if chk is None:
        return f"{reader}: not measured"
    acc = ", ".join(f"{b:.0f}:{a:.3f}" for b, a in zip(chk["budgets"], chk["accuracy"]))
    ok = "admissible" if admissible(chk["max_drop"]) else "INADMISSIBLE"
    at = "" if chk["at"] is None else f" (B={chk['at'][0]:.0f}->{chk['at'][1]:.0f})"
    return f"{reader}: {ok}, largest drop {chk['max_drop'].fmt(100, 1)} pts{at}; U(ret) by B {acc}"
