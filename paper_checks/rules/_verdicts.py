"""Verdict functions: pure maps from measured numbers and intervals to a verdict.

Each claim's check measures, then calls the verdict function of this module; no verdict is
written by hand anywhere else. The rules, stated once (``RULES`` is printed in REPORT.md):

* Simulation shows the mechanism; real data decides. Only real-data units are graded: a sim
  preset is the model itself with parameters chosen to show the effect, so it is reported beside
  the verdict and never graded.
* Each real unit gets a grade: ``2`` the claim holds with its interval clear of the boundary,
  ``1`` it holds on the point estimate only (or in part), ``0`` it does not hold. A unit that was
  measured but cannot decide (a reader that breaks the model's premise, two operators that are the
  same text, an interval too wide for the test) is not graded: it is named with its reason.
* ``combine``: PASS when every grade is 2; FAIL when every grade is 0; PARTIAL otherwise (and when
  a real unit the claim needs was not measured); INCONCLUSIVE when real data was measured but no
  unit could be graded; SKIPPED when no real data was measured at all (data absent).
* A claim that states a number is graded twice per unit: direction and magnitude
  (``grade_magnitude``), in the units the paper states.

References: MODEL §6 (sign reversal, crossover, scale equivariance), §7 (operator ranking),
§8 (OAS, calibration, MLP control).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from paper_checks._types import FAIL, INCONCLUSIVE, PARTIAL, PASS, SKIPPED, Estimate, Verdict
from retcon.inference import group_t_pvalue, holm

SIGNIFICANT, POINT, NO = 2, 1, 0

RULES = (
    "Simulation shows the mechanism; real data decides: a verdict comes from real-data units "
    "only (sim presets are reported beside it, never graded).",
    "Unit grades: 2 = holds with the 95% interval clear of the boundary; 1 = holds on the point "
    "estimate only, or in part; 0 = does not hold. A unit measured but unable to decide (reader "
    "breaking the model's premise, identical operators, interval too wide for its test) is named "
    "with its reason and not graded.",
    "PASS: every graded unit 2. FAIL: every graded unit 0. PARTIAL: otherwise, or a needed real "
    "unit not measured. INCONCLUSIVE: real data measured, no unit gradable. SKIPPED: no real data "
    "(absent).",
    "A claim that states a number is graded twice: direction, and magnitude against the paper's "
    "figure, an equivalence rule with the band from half the paper's low figure to twice its high "
    "one (2: our 95% interval inside the band; 0: it misses the band; 1: it straddles an edge). "
    "Figures are absolute accuracy points (fraction of questions).",
    "Reader admissibility (crossover claims 1, 4, 5): a reader enters only if its accuracy with "
    "raw evidence is non-decreasing in B: no pair of budgets B < B' whose paired bootstrap "
    "interval of U_B(ret) - U_B'(ret) lies above 0 (family-wise 95%: Bonferroni over the pairs).",
    "Few-groups protocol (docs/statistics.md): every statistic is computed per conversation; a "
    "mean has a Student-t interval on G - 1 df; a crossover's interval is the percentile interval "
    "of a wild cluster bootstrap with Webb's weights (a resample without a root counts as 0 or "
    "inf; an interval reaching 0 or inf is unbounded and not graded on its point).",
    "Claims 1 and 4 (reversal): per operator and budget, one-sided t-tests of dU > 0 and dU < 0 "
    "over the per-conversation curves, each at 5% / (K (m - 1)) for K distinct operators and m "
    "budgets, which bounds a false reversal by 5% whatever the curves; a reader reverses (2) when "
    "some operator has a significant gain at a budget below a significant loss; 0 when no "
    "operator's point curve reverses; 1 otherwise. Claim 4 needs every admissible second reader.",
    "Claim 5: B* per evidence-length stratum (wild cluster bootstrap), the slope of log B* on "
    "log L with its interval (no resample dropped: a rootless one is 0 or inf). Relative pressure "
    "governs (2) when the 90% interval lies inside the band [0.5, 1.5] (equivalence at 5%); "
    "direction only (1) when the 95% interval is above 0 but not inside the band; 0 when the 95% "
    "interval misses the band; too wide otherwise (not graded).",
    "Operating characteristics: every graded claim's rule is run on synthetic data sets drawn "
    "with LoCoMo's per-conversation spread at its group count, in null worlds (the claim false, "
    "at its boundary), a true world at the paper's effect and a half-size world (claims 6, 7, 9: "
    "the data's effect turned to the claim's side, no paper figure being mapped). Which reading "
    "stands is the acceptance rule at the top of this report (paper_checks.rules._acceptance).",
    "Claims 7-9 on real data: leave-one-conversation-out (each conversation is the test set once; "
    "fit and calibration on the others); per-conversation estimates combined by their mean with a "
    "Student-t interval on G - 1 degrees of freedom (coverage checked by simulation with 10 "
    "groups in the tests).",
    "Claim 8: two one-sided tests with margin m = half of claim 7's measured OAS gain (an MLP that "
    "adds half of what OAS adds is a reliable improvement): equivalent (2) when the 90% "
    "t-interval of acc(mlp) - acc(oas) lies in (-m, m); 1 when it lies below m but not above -m "
    "(MLP worse); 0 when the 95% interval lies above 0 (MLP reliably better); not graded otherwise; "
    "INCONCLUSIVE when claim 7 measures no positive gain.",
    "Claim 9: graded only at alphas where calibration binds (it changes some choice of oas).",
)


def combine(
    grades: Mapping[str, int],
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Verdict from real-data unit grades (module docstring).

    Args:
      grades: ``{unit: 0 | 1 | 2}`` of the real-data units that could be graded.
      missing: real units the claim needs but that could not be measured (data absent, a
        dependency missing): a claim that holds everywhere it was measured but has missing units
        is PARTIAL, never PASS.
      inconclusive: ``{unit: reason}`` real units measured but unable to decide; with no grade at
        all they make the claim INCONCLUSIVE (not SKIPPED).
    """
    inconclusive = dict(inconclusive or {})
    note = f"; not measured: {', '.join(missing)}" if missing else ""
    if inconclusive:
        note += "; not graded: " + "; ".join(f"{k} ({v})" for k, v in inconclusive.items())
    if not grades:
        if inconclusive:
            return Verdict(INCONCLUSIVE, f"no real-data unit could decide{note}")
        return Verdict(SKIPPED, f"no real data measured{note}")
    vals = list(grades.values())
    listing = ", ".join(f"{k}={_GRADE_WORD[g]}" for k, g in grades.items())
    if all(g == SIGNIFICANT for g in vals):
        if missing:
            return Verdict(PARTIAL, f"holds with CI clear where measured ({listing}){note}")
        return Verdict(PASS, f"holds with CI clear in every real unit ({listing}){note}")
    if all(g == NO for g in vals):
        return Verdict(FAIL, f"does not hold in any real unit ({listing}){note}")
    return Verdict(PARTIAL, f"holds in part ({listing}){note}")


_GRADE_WORD = {SIGNIFICANT: "significant", POINT: "point-only", NO: "no"}


def grade_positive(e: Estimate) -> int:
    """2 if the interval lies above 0, 1 if only the point does, 0 otherwise (NaN: 0)."""
    if not e.defined:
        return NO
    if e.lower > 0:
        return SIGNIFICANT
    return POINT if e.point > 0 else NO


def grade_magnitude(e: Estimate, target: tuple[float, float]) -> int:
    """Magnitude against the paper's figure ``target = (low, high)`` (a point: ``low == high``), an
    equivalence rule with the band ``[low / 2, 2 high]`` (within a factor 2 of the paper).

    2 when the 95% interval ``[lower, upper]`` lies strictly inside the band (two one-sided
    tests at 2.5%); 0 when it misses the band (entirely below or above); 1 otherwise (the interval
    straddles an edge); 0 when undefined.
    """
    lo, hi = float(target[0]) / 2, 2 * float(target[1])
    if not e.defined:
        return NO
    if lo < e.lower and e.upper < hi:
        return SIGNIFICANT
    if e.upper < lo or e.lower > hi:
        return NO
    return POINT


def grade_reversal(budgets, delta, lower, upper) -> int:
    """Grade a sign reversal of ``dU`` over increasing budgets (MODEL §6.1-6.3).

    2 if some budget has its interval above 0 and a larger budget has its interval below 0;
    1 if that holds for the point estimates only; 0 otherwise.
    """
    b = np.asarray(budgets, float)
    order = np.argsort(b)
    d, lo, hi = (np.asarray(x, float)[order] for x in (delta, lower, upper))
    if _reverses(lo > 0, hi < 0):
        return SIGNIFICANT
    if _reverses(d > 0, d < 0):
        return POINT
    return NO


#: Family-wise error of the multiple-test rules (Holm) and one-sided level of each test.
ALPHA = 0.05


class ReversalTest(NamedTuple):
    """Adjusted one-sided p-values of a reader's per-conversation ``dU`` curves.

    Fields: ``gain`` and ``loss`` ``(K, m)`` p-values of ``dU_k(b) > 0`` and ``< 0``, multiplied by
    ``K (m - 1)`` and capped at 1 (``reversal_test``; a gain at the loosest budget and a loss at
    the tightest cannot be part of a reversal: their entries are 1); ``grades`` ``(K,)`` per
    operator; ``point`` ``(K, m)`` the mean curves.
    """

    gain: np.ndarray
    loss: np.ndarray
    grades: np.ndarray
    point: np.ndarray


def reversal_test(budgets, group_delta, *, alpha: float = ALPHA) -> ReversalTest:
    """Claims 1 and 4: does some operator's ``dU`` reverse from gain to loss as B grows?

    One-sided t-tests over the per-group curves (``retcon.inference.group_t_pvalue``): ``dU > 0``
    at every budget but the loosest, ``dU < 0`` at every budget but the tightest, each at level
    ``alpha / (K (m - 1))``. An operator reverses (grade 2) when some significant gain lies at a
    smaller budget than some significant loss.

    Family-wise error: if no operator truly reverses, each operator ``k`` has a first budget
    ``i*`` with ``dU > 0`` (or none); every gain test before ``i*`` and every loss test after it is
    a true null, and a grade 2 needs one of them to reject. Those are at most ``m - 1`` tests per
    operator, ``K (m - 1)`` in all, so a false reversal has probability at most ``alpha`` (union
    bound), whatever the curves; tests/paper_checks/test_paper_checks_operating.py measures it in the null world.

    Args:
      budgets: ``(m,)`` budgets (any order; sorted here).
      group_delta: ``(G, K, m)`` per-group ``dU_k(b)`` (NaN: no data).
      alpha: the family-wise error of a false reversal.

    Returns:
      ``ReversalTest``; grade 2 as above, 0 when the mean curve has no positive point before a
      negative one, 1 otherwise.

    References: MODEL §6.1-6.3; docs/statistics.md (Bonferroni over the relevant family).
    """
    b = np.asarray(budgets, float)
    order = np.argsort(b)
    d = np.asarray(group_delta, float)[..., order]
    G, K, m = d.shape
    flat = d.reshape(G, K * m)
    scale = K * max(m - 1, 1)
    p_gain = np.minimum(1.0, scale * group_t_pvalue(flat, alternative="greater").reshape(K, m))
    p_loss = np.minimum(1.0, scale * group_t_pvalue(flat, alternative="less").reshape(K, m))
    p_gain[:, -1] = 1.0  # a gain at the loosest budget has no larger budget to lose at
    p_loss[:, 0] = 1.0  # a loss at the tightest has no smaller budget to gain at
    p_gain, p_loss = np.nan_to_num(p_gain, nan=1.0), np.nan_to_num(p_loss, nan=1.0)
    with np.errstate(invalid="ignore"):
        point = np.nanmean(d, axis=0)
        grades = np.array(
            [
                SIGNIFICANT
                if _reverses(p_gain[k] <= alpha, p_loss[k] <= alpha)
                else POINT
                if _reverses(point[k] > 0, point[k] < 0)
                else NO
                for k in range(K)
            ],
            dtype=int,
        )
    inv = np.argsort(order)
    return ReversalTest(p_gain[:, inv], p_loss[:, inv], grades, point[:, inv])


def _reverses(pos, neg) -> bool:
    first_pos = np.flatnonzero(pos)
    last_neg = np.flatnonzero(neg)
    return bool(first_pos.size and last_neg.size and first_pos[0] < last_neg[-1])


def tight_gain_test(group_delta, *, alpha: float = ALPHA):
    """Claim 2's direction over a reader's operators and budgets: Holm over the ``K m`` one-sided
    t-tests of ``dU > 0``. Returns ``(grade, (k, j))``: 2 when some test rejects, 1 when some mean
    is positive, 0 otherwise; ``(k, j)`` the operator and budget of the largest mean gain."""
    d = np.asarray(group_delta, float)
    G, K, m = d.shape
    p = holm(group_t_pvalue(d.reshape(G, K * m), alternative="greater"))
    with np.errstate(invalid="ignore"):
        point = np.nanmean(d, axis=0).reshape(-1)
    k, j = divmod(int(np.nanargmax(point)), m)
    grade = SIGNIFICANT if np.nanmin(p) <= alpha else POINT if np.nanmax(point) > 0 else NO
    return grade, (k, j)


def admissible(max_drop: Estimate) -> bool:
    """A reader's raw-evidence accuracy is non-decreasing in B within its interval: the largest
    paired drop ``U_B(ret) - U_B'(ret)`` (``B < B'``) is not significantly above 0 (MODEL §2, the
    premise that more raw evidence never hurts)."""
    return not (max_drop.defined and max_drop.lower > 0)


def verdict_sign_reversal(
    grades: Mapping[str, Mapping[str, int]],
    *,
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Claims 1 and 4: each real source reverses if its best operator does.

    Args:
      grades: ``{source: {operator: grade_reversal(...)}}``, real sources only.
    """
    return combine(
        {src: max(ops.values(), default=NO) for src, ops in grades.items()}, missing, inconclusive
    )


PAPER_TIGHT_GAIN = (0.48, 0.48)
PAPER_LOOSE_MARGIN = (0.08, 0.11)


def verdict_loose_retention(
    margins: Mapping[str, Mapping[str, Estimate]],
    *,
    paper: tuple[float, float] = PAPER_LOOSE_MARGIN,
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Claim 3, graded twice per real source: ``direction`` (retention beats every operator at
    the loosest budget, ``ret - o > 0``) and ``magnitude`` (every margin against the paper's range,
    absolute points; the worst operator's grade).

    Direction grades 2 when every margin is significantly positive, 1 when every point is positive
    or some margins are significant while none is significantly negative, 0 otherwise.

    Args:
      margins: ``{source: {operator: Estimate of U(ret) - U(o) at the loosest budget}}``.
    """
    out = {}
    for src, ops in margins.items():
        g = [grade_positive(e) for e in ops.values()]
        if not g:
            continue
        beaten = any(e.defined and e.upper < 0 for e in ops.values())
        if all(x == SIGNIFICANT for x in g):
            out[f"direction:{src}"] = SIGNIFICANT
        elif not beaten and (all(x >= POINT for x in g) or any(x == SIGNIFICANT for x in g)):
            out[f"direction:{src}"] = POINT
        else:
            out[f"direction:{src}"] = NO
        out[f"magnitude:{src}"] = min(grade_magnitude(e, paper) for e in ops.values())
    return combine(out, missing, inconclusive)


#: Claim 5's equivalence band for the slope of log B* on log L: "roughly constant B*/L" means
#: B* grows between as the square root and as the 1.5th power of the evidence length.
SLOPE_BAND = (0.5, 1.5)


def grade_slope(slope90: Estimate, slope95: Estimate | None = None, band=SLOPE_BAND) -> int | None:
    """Claim 5: grade of the slope of ``log B*`` on ``log L`` (MODEL §6.5: slope 1 when relative
    pressure governs), an equivalence rule.

    2 when the 90% interval lies inside ``band`` (two one-sided tests at 5%); 0 when the 95%
    interval misses the band (entirely below or above it); 1 when the 95% interval lies above 0
    (B* grows with L: the direction holds) but neither of the above; None otherwise or when the
    interval is unbounded on both sides.
    """
    s95 = slope90 if slope95 is None else slope95
    if not (slope90.defined and s95.defined):
        return None
    lo, hi = float(band[0]), float(band[1])
    if lo < slope90.lower and slope90.upper < hi:
        return SIGNIFICANT
    if s95.upper < lo or s95.lower > hi:
        return NO
    if s95.lower > 0:
        return POINT
    return None


def verdict_crossover_scaling(
    slopes: Mapping[str, tuple[Estimate, Estimate]],
    *,
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Claim 5: per real unit (source x operator), ``grade_slope`` of the fitted slope.

    Args:
      slopes: ``{unit: (90% Estimate, 95% Estimate) of the slope}``; units whose grade is None are
        named as not graded.
    """
    grades, undecided = {}, dict(inconclusive or {})
    for unit, (e90, e95) in slopes.items():
        g = grade_slope(e90, e95)
        if g is None:
            undecided[unit] = (
                f"slope {e95.fmt()} too wide to decide (neither inside nor outside the band "
                f"{SLOPE_BAND[0]:g}-{SLOPE_BAND[1]:g}, nor above 0)"
            )
        else:
            grades[unit] = g
    return combine(grades, missing, undecided)


def verdict_cross_note(
    beats_rewrite: Mapping[str, Estimate],
    merge_minus_abstract: Mapping[str, Estimate],
    *,
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Claim 6: merge and abstract beat rewrite under tight budgets, and neither dominates.

    Args:
      beats_rewrite: ``{unit: Estimate of U(o) - U(rewrite)}`` pooled over the real rows where
        compression is necessary, one unit per source and operator (an operator that is the same
        text as rewrite is passed in ``inconclusive`` instead).
      merge_minus_abstract: ``{condition: Estimate of U(merge) - U(abstract)}`` over conditions
        (source x query type), with family-wise intervals (the caller's Bonferroni level). Neither dominates (grade 2) when some condition favours merge and
        another abstract, both significantly; 1 when only the points disagree in sign; 0 when one
        operator is ahead in every condition.
    """
    grades = {f"beats-rewrite:{u}": grade_positive(e) for u, e in beats_rewrite.items()}
    vals = [e for e in merge_minus_abstract.values() if e.defined]
    if vals:
        merge_sig = any(e.lower > 0 for e in vals)
        abstract_sig = any(e.upper < 0 for e in vals)
        merge_pt = any(e.point > 0 for e in vals)
        abstract_pt = any(e.point < 0 for e in vals)
        grades["neither-dominates"] = (
            SIGNIFICANT if merge_sig and abstract_sig else POINT if merge_pt and abstract_pt else NO
        )
    return combine(grades, missing, inconclusive)


def verdict_router_gain(
    gains: Mapping[str, Estimate],
    *,
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Claim 7: OAS minus best fixed policy on budget-stressed instances is positive, per source."""
    return combine({k: grade_positive(e) for k, e in gains.items()}, missing, inconclusive)


def grade_equivalence(e90: Estimate, e95: Estimate, margin: float) -> int | None:
    """Claim 8 (``acc(mlp) - acc(oas)``), two one-sided tests with margin ``margin``.

    2 when the 90% interval lies inside ``(-margin, margin)`` (equivalent at the 5% level); 1 when
    it lies below ``margin`` but reaches ``-margin`` or below (the MLP is not better, possibly
    worse); 0 when the 95% interval lies above 0 (the MLP reliably better); None otherwise (the
    interval is too wide to decide).
    """
    if not (e90.defined and np.isfinite(e90.lower) and np.isfinite(e90.upper)):
        return None
    if -margin < e90.lower and e90.upper < margin:
        return SIGNIFICANT
    if e90.upper < margin:
        return POINT
    if e95.defined and e95.lower > 0:
        return NO
    return None


def verdict_no_reliable_improvement(
    tests: Mapping[str, tuple[Estimate, Estimate]],
    *,
    margin: float,
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Claim 8: "the MLP does not reliably improve over ridge", by ``grade_equivalence`` per source.

    Args:
      tests: ``{source: (90% Estimate, 95% Estimate) of acc(mlp) - acc(oas)}``.
      margin: the equivalence margin (accuracy, fraction of questions).
    """
    grades, undecided = {}, dict(inconclusive or {})
    for src, (e90, e95) in tests.items():
        g = grade_equivalence(e90, e95, margin)
        if g is None:
            undecided[src] = (
                f"90% interval {e90.fmt()} straddles the margin +-{margin:g} without the 95% "
                "interval above 0: too wide to decide"
            )
        else:
            grades[src] = g
    return combine(grades, missing, undecided)


def verdict_harm_calibration(
    harm_change: Mapping[str, Estimate],
    accuracy_cost: Mapping[str, Estimate],
    *,
    max_cost: float = 0.03,
    missing: Sequence[str] = (),
    inconclusive: Mapping[str, str] | None = None,
) -> Verdict:
    """Claim 9: calibration lowers the harm rate at an accuracy cost no larger than ``max_cost``.

    A unit (source x variant x alpha where the calibration binds) grades 2 when the harm change is
    significantly negative and the cost's interval lies within ``max_cost``; 0 when the harm rate
    is not lowered (point >= 0); 1 otherwise (harm lowered on the point only, or at a cost above
    the bound).

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
    return combine(out, missing, inconclusive)
