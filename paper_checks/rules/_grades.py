"""What every claim's rule shares: unit grades, their combination, the size decision and the
rules' text (``RULES``, printed in REPORT.md).

One home per rule (issue 46): claims 1-4 in ``paper_checks.rules._reversal``, claim 5 in
``_slope``, claim 6 in ``_cross_note``, claims 7-9 in ``_router``. Each home holds the claim's
rule as a function of per-group arrays (``(G, ...)``, one row per conversation or user) and the
``*_oc`` function that simulates that same function's false PASS, false FAIL and power; the
claim (``paper_checks.claims``) measures the arrays and calls the rule, nothing else grades.

* Simulation shows the mechanism; real data decides. Only real-data units are graded.
* Each real unit gets a grade: ``2`` the claim holds (its test rejects, its interval is clear),
  ``1`` it holds on the point estimate only (or in part), ``0`` it does not hold. A unit that
  was measured but cannot decide is not graded: it is named with its reason.
* ``combine``: PASS when every grade is 2; FAIL when every grade is 0; PARTIAL otherwise (and
  when a real unit the claim needs was not measured); INCONCLUSIVE when real data was measured
  but no unit could be graded; SKIPPED when no real data was measured at all.
* A claim about a size decides on it by two one-sided tests at 5% each (``grade_size``, the
  90% interval): it holds when its direction is established and the interval reaches the
  paper's value, it does not when the interval lies below the paper's value.
* Before any rule, the data gates (``paper_checks.rules._gates``) say whether the rows can test
  the claim at all (NOT TESTABLE otherwise).

References: MODEL §6 (sign reversal, crossover, scale equivariance), §7 (operator ranking),
§8 (OAS, calibration, MLP control).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from paper_checks._types import FAIL, INCONCLUSIVE, PARTIAL, PASS, SKIPPED, Estimate, Verdict
from paper_checks.operating import operating_characteristics

SIGNIFICANT, POINT, NO = 2, 1, 0

#: Family-wise error of every multiple-test rule and one-sided level of each test.
ALPHA = 0.05

RULES = (
    "Data gates first (paper_checks.rules._gates): an outcome without variance (a reader right on "
    "no row, or on every row, overall or in every budget the claim needs) or fewer groups than "
    "the rule needs makes the claim NOT TESTABLE, with the reason: never PASS, never FAIL. "
    "Actions with the same outcome on every row (merge and rewrite offline) are one action, "
    "counted once wherever a claim corrects for several operators.",
    "Simulation shows the mechanism; real data decides: a verdict comes from real-data units "
    "only (sim presets are reported beside it, never graded).",
    "Unit grades: 2 = holds (its test rejects at 5%, its interval clear); 1 = holds on the point "
    "estimate only, or in part; 0 = does not hold. A unit measured but unable to decide (reader "
    "breaking the model's premise, identical operators, interval too wide for its test) is named "
    "with its reason and not graded.",
    "PASS: every graded unit 2. FAIL: every graded unit 0 (claim 3: any operator's margin 0). "
    "PARTIAL: otherwise, or a needed real unit not measured. INCONCLUSIVE: real data measured, no "
    "unit gradable. SKIPPED: no real data (absent).",
    "A claim that states a size decides on it (claims 2, 7, 9), by two one-sided tests at 5% "
    "each (the 90% interval of the observed effect): 0 when its upper end lies below the paper's "
    "value (the paper's size is excluded; a false 0 at the paper's effect happens 5% of the "
    "time); 2 when its direction is established and the upper end reaches the paper's value; 1 "
    "otherwise. Claim 3 decides its size by exact sign-flip tests (its own line). Sizes are "
    "absolute accuracy points (fraction of questions).",
    "Reader admissibility (crossover claims 1, 4, 5): a reader enters only if its accuracy with "
    "raw evidence is non-decreasing in B: no pair of budgets B < B' whose paired bootstrap "
    "interval of U_B(ret) - U_B'(ret) lies above 0 (family-wise 95%: Bonferroni over the pairs).",
    "Few-groups protocol (docs/statistics.md): every statistic is computed per conversation; a "
    "mean has a Student-t interval on G - 1 df; several cells behind one decision are tested by "
    "the exact max-T sign-flip test over the per-conversation values (all 2^G sign patterns for "
    "G <= 16); a crossover's interval is the percentile interval of a wild cluster bootstrap with "
    "Webb's weights (a resample without a root counts as 0 or inf).",
    "Claims 1 and 4 (reversal), the primary contrast: per distinct operator, dU at the design's "
    "tightest budget > 0 and dU at its loosest < 0; the 2K one-sided cells are tested together "
    "by the exact max-T sign-flip test (family-wise 5%, whatever their correlation); a reader "
    "reverses (2) when some operator's two cells both reject; 1 when the mean curve is above 0 "
    "at the tightest and below at the loosest without that; 0 otherwise. Claim 4 needs every "
    "admissible second reader.",
    "Claim 2, the primary contrast: the gain of every distinct operator at every budget, max-T "
    "sign-flip over those cells for the direction; the largest mean gain's 90% interval against "
    "the paper's +48 points. Claim 3, the primary contrast: retention's margin over every "
    "operator at the loosest budget, by exact sign-flip tests on the per-conversation margins: "
    "an operator holds (2) when its one-sided test rejects a margin <= 4 points (half the "
    "paper's 8, the low end of its 8-11; the magnitude null world) at 5%; it does not (0) when "
    "the max-T test over the operators rejects a margin >= 8 points for it at 5%; 1 otherwise.",
    "Claim 5: B* per evidence-length stratum (wild cluster bootstrap), the slope of log B* on "
    "log L with its interval (no resample dropped: a rootless one is 0 or inf). Relative pressure "
    "governs (2) when the 90% interval lies inside the band [0.5, 1.5] (equivalence at 5%); "
    "direction only (1) when the 95% interval is above 0 but not inside the band; 0 when the 95% "
    "interval misses the band; too wide otherwise (not graded).",
    "Operating characteristics: every graded claim's rule (the same function that grades the "
    "data) is run on synthetic data sets drawn with the data's per-conversation spread at its "
    "group count, in null worlds (the claim false, at its boundary), a true world at the paper's "
    "effect and a half-size world. Which reading stands is the acceptance rule at the top of "
    "this report (paper_checks.rules._acceptance).",
    "Claims 7-9 on real data: leave-one-conversation-out (each conversation is the test set once; "
    "fit and calibration on the others); per-conversation estimates combined by their mean with a "
    "Student-t interval on G - 1 degrees of freedom. Claim 7: the stressed gain's interval "
    "against the paper's +5.05 points (two one-sided tests, the 90% interval).",
    "Claim 8: two one-sided tests with margin m = half of claim 7's measured OAS gain (an MLP that "
    "adds half of what OAS adds is a reliable improvement): equivalent (2) when the 90% "
    "t-interval of acc(mlp) - acc(oas) lies in (-m, m); 1 when it lies below m but not above -m "
    "(MLP worse); 0 when the 95% interval lies above 0 (MLP reliably better); not graded otherwise; "
    "INCONCLUSIVE when claim 7 measures no positive gain.",
    "Claim 9, per calibration (oas-calibrated, oas-crc): the per-conversation harm change and "
    "accuracy cost averaged over the alphas where the calibration binds; holds (2) when the harm "
    "change's 90% interval lies below 0 and reaches the paper's cut (82% of the router's harm rate) "
    "with the cost's interval within the bound; 0 when the harm is not lowered or the interval "
    "excludes the paper's cut; 1 otherwise.",
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


def admissible(max_drop: Estimate) -> bool:
    """A reader's raw-evidence accuracy is non-decreasing in B within its interval: the largest
    paired drop ``U_B(ret) - U_B'(ret)`` (``B < B'``) is not significantly above 0 (MODEL §2, the
    premise that more raw evidence never hurts)."""
    return not (max_drop.defined and max_drop.lower > 0)


#: The interval a size claim is judged by (``grade_size``): two-sided 90%, i.e. a one-sided 95%
#: bound in each direction, so each direction is a test at ``ALPHA`` (two one-sided tests).
SIZE_LEVEL = 1.0 - 2.0 * ALPHA


def grade_size(e: Estimate, paper: float, *, established: bool | None = None) -> int:
    """A claim about a size, in the paper's direction (positive; pass ``-e`` for a reduction).

    ``e`` is the effect's ``SIZE_LEVEL`` (90%) interval: each of its ends is a one-sided 95%
    bound, so each direction below is a one-sided test at 5% (two one-sided tests):

    * 0 when the upper bound lies below the paper's value (``upper < paper``): a 5%-level test
      of ``H0: effect >= paper`` rejects, so at the paper's effect a false 0 happens 5% of the
      time;
    * 2 when the direction is established (``established``; default: the lower bound lies above
      0, a 5%-level test of ``H0: effect <= 0``) and the upper bound reaches the paper's value;
    * 1 otherwise; 0 when undefined.
    """
    if not e.defined:
        return NO
    if e.upper < paper:
        return NO
    ok = e.lower > 0 if established is None else bool(established)
    return SIGNIFICANT if ok else POINT


def halved_oc(rule, data: dict, true: dict, nulls: dict, key, n_datasets: int, worlds: tuple):
    """``operating_characteristics`` of ``rule`` on ``data``'s spread, with the true world
    ``true`` and a half-size world (every mean halved); ``worlds``: the two worlds' names."""
    return operating_characteristics(
        rule,
        next(iter(data.values())).shape[0],
        group_values=data,
        true_means=true,
        null_means=nulls,
        key=key,
        n_datasets=n_datasets,
        true_world=worlds[0],
        half_means={k: v / 2 for k, v in true.items()},
        half_world=worlds[1],
    )
