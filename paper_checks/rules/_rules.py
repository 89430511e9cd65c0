"""Each claim's rule on plain per-group arrays, and its operating characteristics.

The verdict of a claim is a function of per-group values (one row per conversation or user:
``(G, ...)`` arrays), never of a data source, so that ``retcon paper-checks`` on LoCoMo and on
anyone's paired file call the same rules (docs/statistics.md). Every rule comes with a
``*_oc`` function: its false-PASS rate, power and false-FAIL rate at the data's group count ``G``
(``paper_checks.operating.operating_characteristics``), in worlds that take the data's own
between-group spread and set only the truth: null worlds where the claim is false at its
boundary, a true world at the paper's effect (MODEL §11, ``paper_checks._effects``) and a
half-size world (its PASS share is ``power_half``); claims 6-9 at the effects stated in
docs/statistics.md ("The stated effects of claims 6-9"), never at the data's own.
``paper_checks.claims._all`` measures the arrays on LoCoMo and calls these; which readings stand is
``paper_checks.rules._acceptance``.

References: MODEL §6-8; docs/paper-checks.md (the rules and the operating-characteristics table).
"""

from __future__ import annotations

import jax
import numpy as np

from paper_checks._curves import t_estimate
from paper_checks._effects import (
    CROSS_NOTE_BEATS,
    CROSS_NOTE_CONDITION,
    HARM_COST,
    HARM_CUT,
    MLP_MINUS_RIDGE,
    ROUTER_GAIN,
    ROUTER_GAIN_BUDGETS,
    cross_note_effects,
    paper_curves,
)
from paper_checks._loco import t_interval
from paper_checks._types import Verdict
from paper_checks.operating import N_DATASETS, operating_characteristics
from paper_checks.rules._slope import slope_test
from paper_checks.rules._verdicts import (
    PAPER_LOOSE_MARGIN,
    PAPER_TIGHT_GAIN,
    combine,
    grade_magnitude,
    reversal_test,
    tight_gain_test,
    verdict_cross_note,
    verdict_crossover_scaling,
    verdict_harm_calibration,
    verdict_loose_retention,
    verdict_no_reliable_improvement,
    verdict_router_gain,
)


def _halved_oc(rule, data: dict, true: dict, nulls: dict, key, n_datasets: int, worlds: tuple):
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


def reversal_verdict(budgets, data: dict, *, missing=(), inconclusive=None) -> Verdict:
    """Claims 1 and 4: every reader in ``data`` (``{reader: (G, K, m)}`` per-group ``dU`` of its
    distinct operators) graded by the best grade of its operators (``_verdicts.reversal_test``,
    whose family-wise bound covers every operator), combined over readers."""
    grades = {k: int(reversal_test(budgets, v).grades.max()) for k, v in data.items()}
    return combine(grades, missing, inconclusive)


#: The paper's table whose effects are the reversal rule's true world at LoCoMo's size (MODEL
#: §11: Table 4 for LoCoMo-sized data, Table 3 for LongMemEval-sized data).
REVERSAL_TABLE = "Table 4"


def reversal_oc(
    key,
    budgets,
    data: dict,
    *,
    operators: dict | None = None,
    table: str = REVERSAL_TABLE,
    n_datasets: int = N_DATASETS,
):
    """Operating characteristics of claims 1 and 4 (``reversal_verdict``) with the readers' own
    spread, at their group count.

    Args:
      key: JAX PRNG key; budgets: ``(m,)``; data: ``{reader: (G, K, m)}`` per-group ``dU`` of
        the distinct operators; operators: ``{reader: [K names]}`` (absent: abstract's curve for
        every operator); table: the paper's table of effects (``paper_checks._effects``);
        n_datasets: data sets per world.

    True world per reader: the paper's ``dU`` curves of ``table`` on the data's grid
    (``_effects.paper_curves``), never the data's observed curves; half-size world: every curve
    halved. Null worlds, one reader at a time (the others true): every operator equal to
    retention, the paper's gains kept with no loss, its losses kept with no gain.
    """
    if not data:
        return None

    def rule(d):
        return reversal_verdict(budgets, d).verdict

    operators = operators or {}
    true = {
        k: paper_curves(budgets, operators.get(k) or ["abstract"] * v.shape[1], table)
        for k, v in data.items()
    }
    nulls = {}
    for k in data:
        nulls[f"{k} equal to ret"] = {**true, k: np.zeros_like(true[k])}
        nulls[f"{k} gain only"] = {**true, k: np.maximum(true[k], 0.0)}
        nulls[f"{k} loss only"] = {**true, k: np.minimum(true[k], 0.0)}
    worlds = (
        f"the paper's {table} gains over retention on the data's grid, its spread",
        f"half the paper's {table} gains",
    )
    return _halved_oc(rule, data, true, nulls, key, n_datasets, worlds)


def tight_gain_verdict(tight: dict, missing=()) -> Verdict:
    """Claim 2 on per-group curves ``{source: (G, K, m)}``: direction by ``tight_gain_test``
    (Holm over operators and budgets), magnitude of the largest mean gain's t-interval against
    the paper's figure (``grade_magnitude``)."""
    grades = {}
    for src, d in tight.items():
        g, (k, j) = tight_gain_test(d)
        grades[f"direction:{src}"] = g
        grades[f"magnitude:{src}"] = grade_magnitude(t_estimate(d[:, k, j]), PAPER_TIGHT_GAIN)
    return combine(grades, missing)


def tight_gain_oc(key, tight: dict, *, n_datasets: int = N_DATASETS):
    """Claim 2's rule in a true world whose largest gain is the paper's 48 points and null worlds
    with none (direction false) or half of it (magnitude false), the curves' shape and spread
    LoCoMo's."""
    mu = {k: np.nanmean(v, axis=0) for k, v in tight.items()}

    def shifted(to):
        return {k: m - np.nanmax(m) + to for k, m in mu.items()}

    return operating_characteristics(
        lambda d: tight_gain_verdict(d).verdict,
        next(iter(tight.values())).shape[0],
        group_values=tight,
        true_means=shifted(PAPER_TIGHT_GAIN[0]),
        null_means={
            "no gain": shifted(0.0),
            "half the paper's gain": shifted(PAPER_TIGHT_GAIN[0] / 2),
        },
        key=key,
        n_datasets=n_datasets,
        true_world="the paper's largest gain (48 points), LoCoMo's curve shape and spread",
        half_means=shifted(PAPER_TIGHT_GAIN[0] / 2),
        half_world="half the paper's largest gain (24 points; also the magnitude null)",
    )


def loose_verdict(loose: dict, ops: list, missing=()) -> Verdict:
    """Claim 3 on per-group margins ``{source: (G, K)}`` (``U(ret) - U(o)`` at the loosest
    budget): ``verdict_loose_retention`` of their t-intervals."""
    return verdict_loose_retention(
        {src: {op: t_estimate(m[:, k]) for k, op in enumerate(ops)} for src, m in loose.items()},
        missing=missing,
    )


def loose_oc(key, loose: dict, ops: list, *, n_datasets: int = N_DATASETS):
    """Claim 3's rule in a true world where every margin is the paper's 9.5 points, and null
    worlds where one operator ties retention (direction false) or every margin is 4 points
    (magnitude false), with LoCoMo's spread."""
    mid = float(np.mean(PAPER_LOOSE_MARGIN))
    true = {k: np.full(v.shape[1:], mid) for k, v in loose.items()}
    tie = {k: np.where(np.arange(v.shape[1]) == 0, 0.0, mid) for k, v in loose.items()}
    low = {k: np.full(v.shape[1:], PAPER_LOOSE_MARGIN[0] / 2) for k, v in loose.items()}
    return _halved_oc(
        lambda d: loose_verdict(d, ops).verdict,
        loose,
        true,
        {"an operator ties retention": tie, "margins of 4 points": low},
        key,
        n_datasets,
        (
            "every margin at the paper's 9.5 points, LoCoMo's spread",
            "every margin at half the paper's 9.5 points",
        ),
    )


#: Wild resamples per synthetic data set in claim 5's operating characteristics (each data set
#: is a full stratified crossover bootstrap).
OC5_RESAMPLES = 200


def slope_verdict(
    key, curves, budgets, lengths, units, *, n_resamples, missing=(), inconclusive=None
):
    """Claim 5 on per-group stratified curves ``(G, S, K, m)``: ``slope_test`` per operator
    (``units[k]`` its name, None to skip), graded by ``verdict_crossover_scaling``."""
    slopes, est = slope_test(key, curves, budgets, lengths, n_resamples=n_resamples)
    graded, undecided = {}, dict(inconclusive or {})
    for k, unit in enumerate(units):
        if unit is None:
            continue
        if slopes[k] is None:
            n = sum(e[k].defined for e in est)
            undecided[unit] = f"{n} of {len(est)} strata have a crossover; the slope needs 3"
        else:
            graded[unit] = slopes[k]
    return verdict_crossover_scaling(graded, missing=missing, inconclusive=undecided), graded, est


def _steepness(mu, logb) -> np.ndarray:
    """Per operator, the median over strata of the fall of ``dU`` per doubling of B across its
    point crossover (``(S, K, m)`` curves); a linear fit over the grid where no stratum crosses.
    Negative, at least 0.005 per doubling in size."""
    S, K, _ = mu.shape
    out = np.empty(K)
    xc = logb - logb.mean()
    for k in range(K):
        falls = []
        for s in range(S):
            d = mu[s, k]
            j = np.flatnonzero((d[:-1] > 0) & (d[1:] < 0))
            if j.size:
                i = j[-1]
                falls.append((d[i + 1] - d[i]) / (logb[i + 1] - logb[i]))
        fit = np.nanmean((mu[:, k] - np.nanmean(mu[:, k], -1, keepdims=True)) @ xc / (xc @ xc))
        out[k] = np.median(falls) if falls else fit
    return -np.maximum(np.abs(np.nan_to_num(out)), 0.005)


def slope_oc(key, curves, budgets, lengths, units, *, n_datasets: int = N_DATASETS // 2):
    """Claim 5's rule in synthetic stratified worlds with LoCoMo's per-group spread: per operator
    and stratum a ``dU`` curve linear in ``log B`` with the operator's measured steepness,
    crossing at ``B*_s`` proportional to ``L_s ** slope`` around the grid's middle (slope 1: true;
    0 and 2: null), its steepness the measured fall per doubling across the crossover
    (``_steepness``)."""
    keep = [k for k, u in enumerate(units) if u is not None]
    if not keep:
        return None
    c = np.asarray(curves, float)[:, :, keep]
    mu = np.nanmean(c, axis=0)  # (S, K, m)
    logb = np.log2(np.asarray(budgets, float))
    steep = _steepness(mu, logb)
    L = np.log2(np.asarray(lengths, float))
    mid = (logb[0] + logb[-1]) / 2

    def world(slope):
        log_bstar = mid + slope * (L - L.mean())  # (S,)
        return {"c": steep[None, :, None] * (logb[None, None, :] - log_bstar[:, None, None])}

    def rule(d):
        return slope_verdict(
            jax.random.key(0),
            d["c"],
            budgets,
            lengths,
            [f"u{k}" for k in keep],
            n_resamples=OC5_RESAMPLES,
        )[0].verdict

    return operating_characteristics(
        rule,
        c.shape[0],
        group_values={"c": c},
        true_means=world(1.0),
        null_means={"slope 0": world(0.0), "slope 2": world(2.0)},
        key=key,
        n_datasets=n_datasets,
        true_world="slope 1 (B*/L constant), curves of LoCoMo's steepness and spread",
        half_means=world(0.5),
        half_world="slope 0.5 (half of slope 1's dependence on L)",
    )


def conditions(conds: dict) -> dict:
    """``{condition: Estimate}`` of per-group ``U(merge) - U(abstract)`` with Bonferroni t-intervals
    (level ``1 - 0.05 / n_conditions``): "some condition favours merge" and "some favours
    abstract" each hold a family-wise 2.5% over the conditions."""
    level = 1 - 0.05 / max(len(conds), 1)
    return {k: t_estimate(v, level) for k, v in conds.items()}


def cross_note_oc(key, beats: dict, conds: dict, *, n_datasets: int = N_DATASETS):
    """Claim 6's rule (``verdict_cross_note`` of t-intervals) in a true world at the paper's stated
    effects (``_effects.cross_note_effects``: Table 4's ``o - rewrite`` per operator, Table 7's
    per-type ``merge - abstract`` size with the signs taking turns), and null worlds where one
    operator ties rewrite or every condition favours merge (one dominates), with the data's
    spread."""
    data = {f"b:{k}": v for k, v in beats.items()} | {f"c:{k}": v for k, v in conds.items()}
    true = cross_note_effects(beats, conds)
    ck = [k for k in data if k.startswith("c:")]
    nulls = {}
    bk = [k for k in data if k.startswith("b:")]
    if bk:
        nulls["an operator ties rewrite"] = {**true, bk[0]: 0.0}
    if ck:
        nulls["merge never behind"] = {**true, **{k: max(true[k], 0.0) for k in ck}}

    def rule(d):
        return verdict_cross_note(
            {k[2:]: t_estimate(v) for k, v in d.items() if k.startswith("b:")},
            conditions({k[2:]: v for k, v in d.items() if k.startswith("c:")}),
        ).verdict

    return _halved_oc(
        rule,
        data,
        true,
        nulls,
        key,
        n_datasets,
        (
            f"the paper's effects: o - rewrite {CROSS_NOTE_BEATS['abstract']:+.3f} (abstract), "
            f"{CROSS_NOTE_BEATS['merge']:+.3f} (merge) from Table 4; merge - abstract "
            f"+-{CROSS_NOTE_CONDITION:.3f} per query type from Table 7; the data's spread",
            "those effects halved",
        ),
    )


def positive_oc(key, units: dict, *, n_datasets: int = N_DATASETS):
    """Claim 7's "positive in every unit" rule (``verdict_router_gain`` of t-intervals) in a true
    world at the paper's gain over the best fixed policy (``_effects.ROUTER_GAIN``: Table 8 at the
    budget-stressed budgets) in every unit, and null worlds with one unit at 0, with the
    measured spread."""
    mu = dict.fromkeys(units, ROUTER_GAIN)
    return _halved_oc(
        lambda d: verdict_router_gain({k: t_estimate(v) for k, v in d.items()}).verdict,
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


def equivalence_oc(key, diff, margin: float, *, n_datasets: int = N_DATASETS):
    """Claim 8's rule in a true world at the paper's ``acc(mlp) - acc(ridge)``
    (``_effects.MLP_MINUS_RIDGE``, Table 11's mean) and null worlds at the margin (MLP better or
    worse by ``margin``), with the measured spread. Where ``margin`` is below the paper's 1.55
    points the true world lies outside the equivalence region: the claim holds there, the rule's
    PASS (equivalence) does not, and its power is low by construction."""
    return operating_characteristics(
        lambda d: (
            verdict_no_reliable_improvement(
                {"u": (t_interval(d["d"], 0.90), t_interval(d["d"], 0.95))}, margin=margin
            ).verdict
        ),
        np.asarray(diff).shape[0],
        group_values={"d": np.asarray(diff, float)},
        true_means={"d": MLP_MINUS_RIDGE},
        null_means={"MLP better by the margin": {"d": margin}, "MLP worse by it": {"d": -margin}},
        key=key,
        n_datasets=n_datasets,
        true_world=f"the paper's MLP - ridge {MLP_MINUS_RIDGE:+.4f} (Table 11), the data's spread",
        half_means={"d": MLP_MINUS_RIDGE / 2},
        half_world="half the paper's difference",
    )


def harm_verdict(harm, cost, max_cost, missing=(), inconclusive=None) -> Verdict:
    return verdict_harm_calibration(
        harm, cost, max_cost=max_cost, missing=missing, inconclusive=inconclusive
    )


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
    unit's harm is unchanged or its cost sits at twice the bound, with the measured spread."""
    bound = max_cost
    data = {f"h:{k}": v for k, v in harm_g.items()} | {f"c:{k}": v for k, v in cost_g.items()}
    true = {f"h:{k}": -HARM_CUT * float(base_harm) for k in harm_g}
    true |= {f"c:{k}": HARM_COST for k in cost_g}
    first = next(iter(harm_g))
    nulls = {
        "harm unchanged": {**true, f"h:{first}": 0.0},
        "cost at twice the bound": {**true, f"c:{first}": 2 * bound},
    }

    def rule(d):
        h = {k[2:]: t_interval(v) for k, v in d.items() if k.startswith("h:")}
        c = {k[2:]: t_interval(v) for k, v in d.items() if k.startswith("c:")}
        return harm_verdict(h, c, bound).verdict

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
