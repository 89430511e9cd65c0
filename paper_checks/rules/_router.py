"""Claims 7-9, the learned router: each claim's rule on per-group arrays (one value per held-out
conversation, leave-one-conversation-out) and the simulation of that same rule's error rates;
one home per rule (``paper_checks.rules._grades``).

* Claim 7 (``router_gain_verdict``): ``acc(oas) - acc(best-fixed)`` on budget-stressed rows, a
  size claim decided by two one-sided tests at 5% each (``grade_size`` on the 90% t interval):
  holds when the interval lies above 0 and reaches the paper's +5.05 points (Table 8), does not
  when it lies below them.
* Claim 8 (``equivalence_verdict``): two one-sided tests of ``acc(mlp) - acc(oas)``.
* Claim 9 (``harm_verdict``): per calibration, the harm change and accuracy cost averaged over
  the alphas where it binds; the harm cut against the paper's 82% of the router's harm rate
  (Table 2), the cost against the bound.

References: MODEL §8; docs/statistics.md ("The stated effects of claims 6-9").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from paper_checks._curves import t_estimate
from paper_checks._effects import (
    HARM_COST,
    HARM_CUT,
    MLP_MINUS_RIDGE,
    ROUTER_GAIN,
    ROUTER_GAIN_BUDGETS,
)
from paper_checks._types import Estimate, Verdict
from paper_checks.operating import N_DATASETS, operating_characteristics
from paper_checks.rules._grades import (
    NO,
    POINT,
    SIGNIFICANT,
    SIZE_LEVEL,
    combine,
    grade_size,
    halved_oc,
)


def router_gain_verdict(units: Mapping, *, missing: Sequence[str] = ()) -> Verdict:
    """Claim 7 on ``{unit: (G,)}`` per-conversation stressed gains: per unit ``grade_size`` of
    its 90% t interval (two one-sided tests at 5%) against the paper's gain
    (``_effects.ROUTER_GAIN``), combined. The primary contrast: the mean over conversations of
    ``acc(oas) - acc(best-fixed)`` on the budget-stressed rows; FAIL when its one-sided 95% upper
    bound lies below +5.05 points, PASS when its one-sided 95% lower bound lies above 0 and its
    upper bound reaches +5.05."""
    return combine(
        {k: grade_size(t_estimate(v, SIZE_LEVEL), ROUTER_GAIN) for k, v in units.items()}, missing
    )


def router_gain_oc(key, units: dict, *, n_datasets: int = N_DATASETS):
    """Claim 7's rule (``router_gain_verdict``) in a true
    world at the paper's gain over the best fixed policy (``_effects.ROUTER_GAIN``: Table 8 at the
    budget-stressed budgets) in every unit, and null worlds with one unit at 0, with the
    measured spread."""
    mu = dict.fromkeys(units, ROUTER_GAIN)
    return halved_oc(
        lambda d: router_gain_verdict(d).verdict,
        units,
        mu,
        {f"{k} at 0": {**mu, k: 0.0} for k in units},
        key,
        n_datasets,
        (
            f"the paper's gain {ROUTER_GAIN:+.4f} (Table 8, direct OAS - fixed operator at "
            f"{' and '.join(map(str, ROUTER_GAIN_BUDGETS))}), the data's spread",
            "half the paper's gain",
        ),
    )


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


def equivalence_verdict(diffs: Mapping, *, margin: float, missing: Sequence[str] = ()) -> Verdict:
    """Claim 8 on ``{source: (G,)}`` per-conversation ``acc(mlp) - acc(oas)``: its 90% and 95%
    t intervals graded by ``verdict_no_reliable_improvement``."""
    return verdict_no_reliable_improvement(
        {k: (t_estimate(v, 0.90), t_estimate(v, 0.95)) for k, v in diffs.items()},
        margin=margin,
        missing=missing,
    )


def equivalence_oc(key, diff, margin: float, *, n_datasets: int = N_DATASETS):
    """Claim 8's rule in a true world at the paper's ``acc(mlp) - acc(ridge)``
    (``_effects.MLP_MINUS_RIDGE``, Table 11's mean) and null worlds at the margin (MLP better or
    worse by ``margin``), with the measured spread. Where ``margin`` is below the paper's 1.55
    points the true world lies outside the equivalence region: the claim holds there, the rule's
    PASS (equivalence) does not, and its power is low by construction."""
    return halved_oc(
        lambda d: equivalence_verdict(d, margin=margin).verdict,
        {"d": np.asarray(diff, float)},
        {"d": MLP_MINUS_RIDGE},
        {"MLP better by the margin": {"d": margin}, "MLP worse by it": {"d": -margin}},
        key,
        n_datasets,
        (
            f"the paper's MLP - ridge {MLP_MINUS_RIDGE:+.4f} (Table 11), the data's spread",
            "half the paper's difference",
        ),
    )


def _variant(unit: str) -> str:
    """``"locomo:lexical:oas-calibrated@0.05"`` -> ``"locomo:lexical:oas-calibrated"``."""
    return unit.rsplit("@", 1)[0]


def pooled_by_variant(per_unit: Mapping) -> dict[str, np.ndarray]:
    """``{variant: (G,)}``: per conversation, the mean over a calibration's binding alphas."""
    out: dict[str, list] = {}
    for unit, v in per_unit.items():
        out.setdefault(_variant(unit), []).append(np.asarray(v, float))
    with np.errstate(invalid="ignore"):
        return {k: np.nanmean(np.stack(vs), axis=0) for k, vs in out.items()}


def harm_verdict(
    harm: Mapping,
    cost: Mapping,
    max_cost: float,
    *,
    base_harm: float,
    missing: Sequence[str] = (),
    inconclusive=None,
) -> Verdict:
    """Claim 9 on per-conversation arrays ``{unit: (G,)}`` of the harm change
    ``harm(variant) - harm(oas)`` and the accuracy cost ``acc(oas) - acc(variant)`` at each
    binding unit (``<source>:<variant>@<alpha>``).

    Per calibration (the mean over its binding alphas, ``pooled_by_variant``): the harm cut's
    90% t interval (two one-sided tests at 5%) against the paper's ``HARM_CUT`` of ``base_harm``
    (``grade_size``), the cost's 95% interval against ``max_cost`` (2 within it, 1 on the point only, 0 above it); the unit's grade is the
    harm's, capped by the cost's but not below 1 where the harm cut holds (lowered harm at a cost
    above the bound holds in part).
    """
    paper = HARM_CUT * float(base_harm)
    h, c = pooled_by_variant(harm), pooled_by_variant(cost)
    grades = {}
    for unit, v in h.items():
        dh = t_estimate(v, SIZE_LEVEL)
        harm_g = grade_size(Estimate(-dh.point, -dh.upper, -dh.lower), paper)
        ce = t_estimate(c[unit]) if unit in c else Estimate.missing()
        cost_g = (
            NO
            if not ce.defined
            else SIGNIFICANT
            if ce.upper <= max_cost
            else POINT
            if ce.point <= max_cost
            else NO
        )
        grades[unit] = NO if harm_g == NO else max(POINT, min(harm_g, cost_g))
    return combine(grades, missing, inconclusive)


def harm_oc(
    key,
    harm_g: dict,
    cost_g: dict,
    max_cost: float,
    *,
    base_harm: float,
    n_datasets: int = N_DATASETS,
):
    """Claim 9's rule in a true world at the paper's effects: every binding unit cuts the harm
    rate by ``_effects.HARM_CUT`` (Table 2: 39 harmful choices to 7) of ``base_harm`` (the
    uncalibrated router's harm rate, a nuisance parameter of the data, not its effect) at the
    paper's bounded cost ``_effects.HARM_COST`` (Table 8 at 128 and 256); null worlds where one
    calibration's harm is unchanged at every binding alpha or its cost sits at twice the bound,
    with the measured spread."""
    bound = max_cost
    data = {f"h:{k}": v for k, v in harm_g.items()} | {f"c:{k}": v for k, v in cost_g.items()}
    true = {f"h:{k}": -HARM_CUT * float(base_harm) for k in harm_g}
    true |= {f"c:{k}": HARM_COST for k in cost_g}
    first = next(iter(harm_g))
    same = [k for k in harm_g if _variant(k) == _variant(first)]
    nulls = {
        "harm unchanged": {**true, **{f"h:{k}": 0.0 for k in same}},
        "cost at twice the bound": {**true, **{f"c:{k}": 2 * bound for k in same if k in cost_g}},
    }

    def rule(d):
        h = {k[2:]: v for k, v in d.items() if k.startswith("h:")}
        c = {k[2:]: v for k, v in d.items() if k.startswith("c:")}
        return harm_verdict(h, c, bound, base_harm=base_harm).verdict

    return operating_characteristics(
        rule,
        np.asarray(harm_g[first]).shape[0],
        group_values=data,
        true_means=true,
        null_means=nulls,
        key=key,
        n_datasets=n_datasets,
        true_world=(
            f"the paper's harm cut ({HARM_CUT:.0%} of the router's harm rate {base_harm:.4f}, "
            f"Table 2) at its bounded cost {HARM_COST:.3f} (Table 8), the data's spread"
        ),
        half_means={k: (v / 2 if k.startswith("h:") else v) for k, v in true.items()},
        half_world="half that harm cut, the same cost",
    )
