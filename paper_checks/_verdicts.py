"""Verdict functions: pure maps from measured numbers and intervals to PASS / PARTIAL / FAIL.

Each claim's check measures, then calls the verdict function of this module; no verdict is
written by hand anywhere else. Every function grades each unit of evidence (a data source, an
operator, a comparison) on a three-step scale and combines the grades:

* ``2`` the claim holds with its interval clear of the boundary (significant at the CI level);
* ``1`` it holds on the point estimate only (or for part of the unit);
* ``0`` it does not hold.

``combine``: PASS when every grade is 2, FAIL when every grade is 0, PARTIAL otherwise, SKIPPED
when there is nothing to grade. The reason string names what drove the verdict.

References: MODEL §6 (sign reversal, crossover, scale equivariance), §7 (operator ranking),
§8 (OAS, calibration, MLP control).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from paper_checks._types import FAIL, PARTIAL, PASS, SKIPPED, Estimate, Verdict

SIGNIFICANT, POINT, NO = 2, 1, 0


def combine(grades: Mapping[str, int], missing: Sequence[str] = ()) -> Verdict:
    """PASS if every grade is 2, FAIL if every grade is 0, PARTIAL otherwise; SKIPPED if empty.

    ``missing`` names units the claim needs but that could not be measured (data absent, a
    dependency missing): a claim that holds everywhere it was measured but has missing units is
    PARTIAL, never PASS.
    """
    note = f"; not measured: {', '.join(missing)}" if missing else ""
    if not grades:
        return Verdict(SKIPPED, f"nothing to grade{note}")
    vals = list(grades.values())
    listing = ", ".join(f"{k}={_GRADE_WORD[g]}" for k, g in grades.items())
    if all(g == SIGNIFICANT for g in vals):
        if missing:
            return Verdict(PARTIAL, f"holds with CI clear where measured ({listing}){note}")
        return Verdict(PASS, f"holds with CI clear in every unit ({listing})")
    if all(g == NO for g in vals):
        return Verdict(FAIL, f"does not hold in any unit ({listing}){note}")
    return Verdict(PARTIAL, f"holds in part ({listing}){note}")


_GRADE_WORD = {SIGNIFICANT: "significant", POINT: "point-only", NO: "no"}


def grade_positive(e: Estimate) -> int:
    """2 if the interval lies above 0, 1 if only the point does, 0 otherwise (NaN: 0)."""
    if not e.defined:
        return NO
    if e.lower > 0:
        return SIGNIFICANT
    return POINT if e.point > 0 else NO


def grade_reversal(budgets, delta, lower, upper) -> int:
    """Grade a sign reversal of ``dU`` over increasing budgets (MODEL §6.1-6.3).

    2 if some budget has its interval above 0 and a larger budget has its interval below 0;
    1 if that holds for the point estimates only; 0 otherwise.
    """
    b = np.asarray(budgets, float)
    order = np.argsort(b)
    d, lo, hi = (np.asarray(x, float)[order] for x in (delta, lower, upper))

    def reverses(pos, neg):
        first_pos = np.flatnonzero(pos)
        last_neg = np.flatnonzero(neg)
        return first_pos.size > 0 and last_neg.size > 0 and first_pos[0] < last_neg[-1]

    if reverses(lo > 0, hi < 0):
        return SIGNIFICANT
    if reverses(d > 0, d < 0):
        return POINT
    return NO


def verdict_sign_reversal(
    grades: Mapping[str, Mapping[str, int]], *, missing: Sequence[str] = ()
) -> Verdict:
    """Claim 1 / 4: each source reverses if its best operator does; combine over sources.

    Args:
      grades: ``{source: {operator: grade_reversal(...)}}``.
    """
    return combine({src: max(ops.values(), default=NO) for src, ops in grades.items()}, missing)


def verdict_tight_gain(
    max_gains: Mapping[str, Mapping[str, Estimate]], *, missing: Sequence[str] = ()
) -> Verdict:
    """Claim 2: in each source some operator's largest gain over retention is positive.

    Args:
      max_gains: ``{source: {operator: Estimate of max_B dU_o(B)}}``.
    """
    return combine(
        {
            src: max((grade_positive(e) for e in ops.values()), default=NO)
            for src, ops in max_gains.items()
        },
        missing,
    )


def verdict_loose_retention(
    margins: Mapping[str, Mapping[str, Estimate]], *, missing: Sequence[str] = ()
) -> Verdict:
    """Claim 3: at the loosest budget retention beats every operator (``ret - o > 0``).

    A source grades 2 when every operator's margin is significantly positive, 1 when every point
    is positive or some margins are significant while none is significantly negative, 0 otherwise.

    Args:
      margins: ``{source: {operator: Estimate of U(ret) - U(o) at the loosest budget}}``.
    """
    out = {}
    for src, ops in margins.items():
        g = [grade_positive(e) for e in ops.values()]
        beaten = any(e.defined and e.upper < 0 for e in ops.values())
        if g and all(x == SIGNIFICANT for x in g):
            out[src] = SIGNIFICANT
        elif g and not beaten and (all(x >= POINT for x in g) or any(x == SIGNIFICANT for x in g)):
            out[src] = POINT
        else:
            out[src] = NO
    return combine(out, missing)


def grade_order(short: Estimate, long: Estimate) -> int | None:
    """Claim 5: 2 if ``B*_short``'s interval lies below ``B*_long``'s, 1 if the points are ordered,
    0 if not; None when either crossover is undefined (nothing to compare)."""
    if not (short.defined and long.defined):
        return None
    if short.upper < long.lower:
        return SIGNIFICANT
    return POINT if short.point < long.point else NO


def relative_spread(crossovers: Sequence[float], lengths: Sequence[float]) -> float:
    """``max / min`` of ``B*_i / L_i`` over the classes with a crossover (MODEL §6.5); NaN if < 2."""
    r = np.asarray(crossovers, float) / np.asarray(lengths, float)
    r = r[np.isfinite(r) & (r > 0)]
    return float(r.max() / r.min()) if r.size >= 2 else float("nan")


def verdict_crossover_scaling(
    orders: Mapping[str, int | None],
    spreads: Mapping[str, float],
    *,
    tolerance: float = 1.5,
    missing: Sequence[str] = (),
) -> Verdict:
    """Claim 5: shorter evidence crosses at a smaller budget; ``B* / L`` roughly constant.

    Args:
      orders: ``{comparison: grade_order(...)}``; ``None`` entries (no crossover) are left out.
      spreads: ``{source: relative_spread(...)}``; within ``tolerance`` grades 2, else 0.
      tolerance: the largest ratio between relative crossovers ``B*/L`` still called constant.
    """
    grades = {f"order:{k}": g for k, g in orders.items() if g is not None}
    for k, s in spreads.items():
        if np.isfinite(s):
            grades[f"B*/L:{k}"] = SIGNIFICANT if s <= tolerance else NO
    if not grades:
        if missing:
            return Verdict(SKIPPED, f"nothing to compare; not measured: {', '.join(missing)}")
        return Verdict(FAIL, "no length class has a crossover to compare")
    return combine(grades, missing)


def verdict_cross_note(
    beats_rewrite: Mapping[str, Mapping[str, Estimate]],
    merge_minus_abstract: Mapping[str, Estimate],
    *,
    missing: Sequence[str] = (),
) -> Verdict:
    """Claim 6: merge and abstract beat rewrite under tight budgets, and neither dominates.

    Args:
      beats_rewrite: ``{source: {"merge": Estimate of U(merge) - U(rewrite), "abstract": ...}}``
        pooled over the budgets where compression is necessary.
      merge_minus_abstract: ``{condition: Estimate of U(merge) - U(abstract)}`` over conditions
        (source x query type x tight budget). Neither dominates (grade 2) when some condition
        favours merge and another abstract, both significantly; 1 when only the points disagree
        in sign; 0 when one operator is ahead in every condition.
    """
    grades = {}
    for src, ops in beats_rewrite.items():
        g = [grade_positive(e) for e in ops.values()]
        grades[f"beats-rewrite:{src}"] = min(g) if g else NO
    vals = [e for e in merge_minus_abstract.values() if e.defined]
    if vals:
        merge_sig = any(e.lower > 0 for e in vals)
        abstract_sig = any(e.upper < 0 for e in vals)
        merge_pt = any(e.point > 0 for e in vals)
        abstract_pt = any(e.point < 0 for e in vals)
        grades["neither-dominates"] = (
            SIGNIFICANT if merge_sig and abstract_sig else POINT if merge_pt and abstract_pt else NO
        )
    return combine(grades, missing)


def verdict_router_gain(gains: Mapping[str, Estimate], *, missing: Sequence[str] = ()) -> Verdict:
    """Claim 7: OAS minus best fixed policy on budget-stressed instances is positive, per source."""
    return combine({k: grade_positive(e) for k, e in gains.items()}, missing)


def verdict_no_reliable_improvement(
    overall: Mapping[str, Estimate],
    per_budget: Mapping[str, Sequence[Estimate]],
    *,
    missing: Sequence[str] = (),
) -> Verdict:
    """Claim 8: the MLP does not reliably improve over ridge (``mlp - oas`` not significantly > 0).

    A source grades 2 when neither the overall difference nor any budget's is significantly
    positive, 1 when only some budget's is, 0 when the overall difference is.
    """
    out = {}
    for src, e in overall.items():
        if e.defined and e.lower > 0:
            out[src] = NO
        elif any(b.defined and b.lower > 0 for b in per_budget.get(src, ())):
            out[src] = POINT
        else:
            out[src] = SIGNIFICANT
    return combine(out, missing)


def verdict_harm_calibration(
    harm_change: Mapping[str, Estimate],
    accuracy_cost: Mapping[str, Estimate],
    *,
    max_cost: float = 0.03,
    missing: Sequence[str] = (),
) -> Verdict:
    """Claim 9: calibration lowers the harm rate at an accuracy cost no larger than ``max_cost``.

    A unit grades 2 when the harm change is significantly negative and the cost's interval lies
    within ``max_cost``; 0 when the harm rate is not lowered (point >= 0); 1 otherwise (harm lowered
    on the point only, or at a cost above the bound).

    Args:
      harm_change: ``{unit: Estimate of harm(calibrated) - harm(oas)}``; should be < 0.
      accuracy_cost: ``{unit: Estimate of acc(oas) - acc(calibrated)}``; should be <= max_cost.
      max_cost: the accuracy cost (absolute, fraction of questions) still called bounded.
    """
    out = {}
    for unit, dh in harm_change.items():
        harm_g = grade_positive(Estimate(-dh.point, -dh.upper, -dh.lower))
        c = accuracy_cost.get(unit, Estimate.missing())
        cost_g = (
            NO
            if not c.defined
            else SIGNIFICANT
            if c.upper <= max_cost
            else POINT
            if c.point <= max_cost
            else NO
        )
        # harm lowered but the cost over the bound: the claim holds in part
        out[unit] = NO if harm_g == NO else max(POINT, min(harm_g, cost_g))
    return combine(out, missing)
