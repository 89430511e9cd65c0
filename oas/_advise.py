"""Advice for a memory system: retain or consolidate at the user's budgets, from their own lengths.

The answer comes from the single-cluster model (MODEL §6) with the user's evidence lengths as
its length law (``theory.empirical_lengths``, MODEL §6.7), optionally checked against a paired
file (MODEL §8) that measures the gain directly. The paper's direction: consolidation wins under
tight budgets (below the crossover ``B*``), retention under loose ones (above it).

The rule people configure is a trigger on the evidence's size, so the advice also states the
rule in that form. The model is scale-equivariant (MODEL §6: ``dU`` depends on the budget only
through ``B / L``): scaling every length by ``s`` scales ``B*`` by ``s``. At a budget ``B``, a
query whose candidate evidence is ``s`` times the sample's median therefore wants consolidation
iff ``B < s B*``, i.e. iff its evidence exceeds ``N = B median(L) / B*`` tokens: the trigger.

Pure numpy on top of ``theory``; the intervals of a paired file follow the few-groups protocol
(``retcon.inference``: one value per conversation, a Student-t interval on ``G - 1`` df).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

import theory
from retcon.errors import InputError, Spell, check_choice
from retcon.inference import group_delta_curves, group_t_interval
from retcon.vocab import ACTIONS

#: The consolidating operators ``advise`` can name (every action but ``ret``).
OPERATORS = tuple(a for a in ACTIONS if a != "ret")

#: The version tag of a policy file (``advice_policy``).
POLICY_FORMAT = "retcon-policy/1"


class BudgetAdvice(NamedTuple):
    """The advice at one budget (all token counts in tokens).

    Attributes:
      budget: ``B``, the tokens the memory gets in the reader's context.
      action: ``"ret"`` or the consolidating operator.
      source: ``"model"`` (the sign of the model's ``dU``) or ``"paired"`` (the measured gain).
      gain, lower, upper: the model's ``dU(B)`` (consolidate minus retain, MODEL §6) and its
        percentile interval over resamples of the length sample.
      trigger_tokens: ``N``: consolidate when the candidate evidence exceeds ``N`` tokens
        (``B median(L) / B*``; ``nan`` without a crossover).
      window: ``W``, the context window the trigger's share refers to.
      measured: ``None``, or the paired file's gain at its grid budget nearest ``B`` (log scale):
        ``(grid_budget, gain, lower, upper, groups)``.
    """

    budget: float
    action: str
    source: str
    gain: float
    lower: float
    upper: float
    trigger_tokens: float
    window: float
    measured: tuple | None


class Advice(NamedTuple):
    """``advise``'s result.

    Attributes:
      budgets: the per-budget advice, in the order given.
      crossover_budget: ``B*`` of the model on the length sample (``theory.crossover``; the same
        number as ``retcon crossover --lengths``), ``nan`` without one.
      crossover_lower, crossover_upper: its percentile interval over resamples of the lengths.
      status, reason: ``theory.crossover``'s status (``unique``, ``multiple``, ``none``) and why.
      direction_below: the action that wins at budgets below every sign change (``ret`` when
        retention wins at every budget).
      operator: the consolidating operator named.
      params: the model's ``compress_ratio``, ``fidelity``, ``acc_raw``, ``acc_guess``.
      lengths: ``n``, ``median`` and ``mean`` of the sample.
      resamples, seed: of the length bootstrap.
    """

    budgets: list[BudgetAdvice]
    crossover_budget: float
    crossover_lower: float
    crossover_upper: float
    status: str
    reason: str | None
    direction_below: str
    operator: str
    params: dict
    lengths: dict
    resamples: int
    seed: int


def measured_gains(data, operator: str, *, level: float = 0.95) -> dict[float, tuple]:
    """The paired file's gain of ``operator`` over ``ret`` at each of its budgets.

    Args:
      data: an ``oas.PairedData``.
      operator: ``merge``, ``abstract`` or ``rewrite``.

    Returns:
      ``{budget: (gain, lower, upper, groups)}``: the mean over groups of each group's mean
      ``y_operator - y_ret`` at that budget, with its Student-t interval on ``G - 1`` df
      (``retcon.inference``); NaN bounds with fewer than two groups.

    References: MODEL §3 (``dU``), §8 (paired data); docs/statistics.md.
    """
    check_choice("operator", operator, OPERATORS)
    j = ACTIONS.index(operator)
    y = np.asarray(data.outcomes, dtype=np.float64)
    outcomes = np.stack([y[:, 0], y[:, j]], axis=1)
    grid = np.unique(np.asarray(data.budget, dtype=np.float64))
    curves = group_delta_curves(outcomes, np.asarray(data.group_id), data.budget, grid)[:, 0, :]
    ci = group_t_interval(curves, level=level)
    groups = np.isfinite(curves).sum(axis=0)
    return {
        float(b): (float(ci.estimate[i]), float(ci.lower[i]), float(ci.upper[i]), int(groups[i]))
        for i, b in enumerate(grid)
    }


def _nearest(grid: list[float], budget: float) -> float:
    return min(grid, key=lambda g: (abs(math.log(g / budget)), g))


def advise(
    lengths,
    budgets,
    *,
    operator: str = "merge",
    compress_ratio: float = 0.3,
    fidelity: float = 0.85,
    acc_raw: float = 0.9,
    acc_guess: float = 0.1,
    window: float | None = None,
    paired=None,
    resamples: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> Advice:
    """Per budget: retain or consolidate, the model's gain with an interval, and the trigger.

    Args:
      lengths: ``(n,)`` positive raw evidence lengths (tokens), the user's sample.
      budgets: ``(m,)`` positive budgets (tokens).
      operator: the consolidating operator the advice names.
      compress_ratio, fidelity, acc_raw, acc_guess: the model's ``rho, phi, a, g`` (MODEL §6; the
        defaults are ``retcon crossover``'s).
      window: ``W``, the context window (tokens) the trigger's share is stated in; default each
        budget itself (the share is then of the memory's budget).
      paired: an ``oas.PairedData`` measuring the gain; when given, the action at each budget is
        the measured one (consolidate where the measured gain is > 0) at the nearest grid budget.
      resamples: length-sample bootstrap resamples for the intervals (0: none, NaN bounds).
      seed: seeds the ``numpy.random.Generator`` of the resamples.
      level: two-sided coverage of the intervals.

    Returns:
      ``Advice``.

    References: MODEL §6 (crossover, scale), §6.7 (empirical law), §8 (paired data).
    """
    check_choice("operator", operator, OPERATORS)
    sample = np.asarray(lengths, dtype=np.float64).reshape(-1)
    grid_b = np.asarray(budgets, dtype=np.float64).reshape(-1)
    if sample.size == 0 or not np.all(np.isfinite(sample) & (sample > 0)):
        raise InputError("advise: lengths must be finite and > 0, at least one.")
    if grid_b.size == 0 or not np.all(np.isfinite(grid_b) & (grid_b > 0)):
        raise InputError("advise: budgets must be finite and > 0, at least one.")
    if window is not None and not (math.isfinite(window) and window > 0):
        raise InputError(f"advise: window must be a finite number of tokens > 0; got {window}.")
    if resamples < 0:
        raise InputError(f"advise: resamples must be >= 0; got {resamples}.")
    kw = dict(
        compress_ratio=compress_ratio, fidelity=fidelity, acc_raw=acc_raw, acc_guess=acc_guess
    )
    theory.check_model(compress_ratio, fidelity, acc_raw, acc_guess, Spell("advise"))
    dist = theory.empirical_lengths(sample)
    cross = theory.crossover(dist, **kw)
    b_star = float(cross.crossover_budget) if cross.crossover_budget is not None else math.nan
    dec = theory.delta_curve(dist, grid_b, **kw)
    gains = np.asarray(dec.delta, dtype=np.float64) + 0.0

    rng = np.random.default_rng(seed)
    reps, cross_reps = [], []
    for _ in range(resamples):
        s = rng.choice(sample, size=sample.size, replace=True)
        d = theory.empirical_lengths(s)
        reps.append(np.asarray(theory.delta_curve(d, grid_b, **kw).delta, dtype=np.float64))
        c = theory.crossover(d, **kw).crossover_budget
        cross_reps.append(math.nan if c is None else float(c))
    q = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)
    if reps:
        lo, hi = np.quantile(np.stack(reps), q, axis=0)
        finite = np.asarray(cross_reps)[np.isfinite(cross_reps)]
        c_lo, c_hi = (
            (float(np.quantile(finite, q[0])), float(np.quantile(finite, q[1])))
            if finite.size
            else (math.nan, math.nan)
        )
    else:
        lo = hi = np.full(grid_b.shape, math.nan)
        c_lo = c_hi = math.nan

    # the side that wins below the crossover (or everywhere, without one)
    if math.isfinite(b_star):
        below = operator
    else:
        probe = theory.delta_curve(dist, [float(np.min(sample)) * compress_ratio], **kw).delta
        below = operator if float(np.asarray(probe)[0]) > 0 else "ret"
    measured = None if paired is None else measured_gains(paired, operator, level=level)
    median = float(np.median(sample))
    out = []
    for i, b in enumerate(grid_b):
        b = float(b)
        if math.isfinite(b_star):
            model_action = operator if b < b_star else "ret"
            trigger = b * median / b_star
        else:
            model_action, trigger = below, math.nan
        m = None
        action, source = model_action, "model"
        if measured:
            g = _nearest(sorted(measured), b)
            m = (g, *measured[g])
            action, source = (operator if m[1] > 0 else "ret"), "paired"
        out.append(
            BudgetAdvice(
                budget=b,
                action=action,
                source=source,
                gain=float(gains[i]),
                lower=float(lo[i]),
                upper=float(hi[i]),
                trigger_tokens=float(trigger),
                window=float(window) if window is not None else b,
                measured=m,
            )
        )
    return Advice(
        budgets=out,
        crossover_budget=b_star,
        crossover_lower=c_lo,
        crossover_upper=c_hi,
        status=cross.status,
        reason=cross.reason,
        direction_below=below,
        operator=operator,
        params=dict(kw),
        lengths={"n": int(sample.size), "median": median, "mean": float(np.mean(sample))},
        resamples=int(resamples),
        seed=int(seed),
    )


def advice_rule(adv: Advice, a: BudgetAdvice) -> str:
    """The rule at one budget in the form memory systems configure, in words.

    ``consolidate with merge when the candidate evidence exceeds N tokens, i.e. X% of a W-token
    window; retain below.`` Without a crossover: the one action that wins at every budget.
    """
    if not math.isfinite(a.trigger_tokens):
        if adv.direction_below == "ret":
            return "retain: the model finds no budget where consolidation wins on these lengths."
        return (
            f"consolidate with {adv.operator} at every budget: the model finds no budget where "
            "retention wins on these lengths."
        )
    share = 100.0 * a.trigger_tokens / a.window
    return (
        f"consolidate with {adv.operator} when the candidate evidence exceeds "
        f"{a.trigger_tokens:.0f} tokens, i.e. {share:.3g}% of a {a.window:.0f}-token window; "
        "retain below."
    )


def advice_answer(adv: Advice, a: BudgetAdvice) -> str:
    """The answer at one budget, first, with the paper's direction beside it: the side of ``B*``
    (tight or loose), and with a paired file the gain measured there."""
    verb = "retain" if a.action == "ret" else f"consolidate with {a.action}"
    if math.isfinite(adv.crossover_budget):
        side = (
            f"tight: {a.budget:.0f} < B* = {adv.crossover_budget:.0f} tokens"
            if a.budget < adv.crossover_budget
            else f"loose: {a.budget:.0f} >= B* = {adv.crossover_budget:.0f} tokens"
        )
    else:
        side = "no crossover on these lengths"
    if a.source == "paired" and a.measured is not None:
        grid, gain, lo, hi, _ = a.measured
        return (
            f"At a {a.budget:.0f}-token budget: {verb} (measured in the paired file at "
            f"B = {grid:g}: {adv.operator} {gain:+.3f} [{lo:+.3f}, {hi:+.3f}] over retention; "
            f"the model: {side})."
        )
    return f"At a {a.budget:.0f}-token budget: {verb} ({side})."


DIRECTION = "consolidate under tight budgets (below B*), retain under loose ones (above B*)"


def advice_policy(adv: Advice, *, data: dict | None = None) -> dict:
    """The policy file a memory system loads: budget ranges -> action, with provenance.

    Args:
      adv: ``advise``'s result.
      data: provenance of the inputs (files, their sha256), written under ``"data"``.

    Returns:
      A JSON-ready dict: ``format``, ``direction``, ``ranges`` (``[{"budget_min", "budget_max",
      "action"}]``: ``budget_min <= B < budget_max``, ``None`` for no bound), ``trigger``
      (``evidence_over_budget``: consolidate when evidence tokens exceed that many times ``B``),
      ``model`` (parameters, ``B*`` and its interval) and ``data``.
    """
    b = adv.crossover_budget
    if math.isfinite(b):
        ranges = [
            {"budget_min": 0.0, "budget_max": b, "action": adv.operator},
            {"budget_min": b, "budget_max": None, "action": "ret"},
        ]
        ratio = adv.lengths["median"] / b
    else:
        ranges = [{"budget_min": 0.0, "budget_max": None, "action": adv.direction_below}]
        ratio = None
    return {
        "format": POLICY_FORMAT,
        "direction": DIRECTION,
        "operator": adv.operator,
        "ranges": ranges,
        "trigger": {
            "evidence_over_budget": ratio,
            "meaning": "consolidate when the candidate evidence exceeds evidence_over_budget x "
            "the budget (tokens); retain below",
        },
        "model": {
            "name": "single-cluster model (MODEL §6), empirical length law (§6.7)",
            **adv.params,
            "crossover_budget": b if math.isfinite(b) else None,
            "crossover_interval": [
                v if math.isfinite(v) else None for v in (adv.crossover_lower, adv.crossover_upper)
            ],
            "status": adv.status,
            "resamples": adv.resamples,
            "seed": adv.seed,
        },
        "data": {"lengths": dict(adv.lengths), **(data or {})},
    }


def policy_action(policy: dict, budget: float, evidence_tokens: float | None = None) -> str:
    """The action a policy file prescribes at ``budget`` (and, with ``evidence_tokens``, for that
    query's candidate evidence through the trigger). The reference of docs/advise.md's loop."""
    ratio = policy["trigger"]["evidence_over_budget"]
    if evidence_tokens is not None and ratio is not None:
        return policy["operator"] if evidence_tokens > ratio * budget else "ret"
    for r in policy["ranges"]:
        if r["budget_min"] <= budget and (r["budget_max"] is None or budget < r["budget_max"]):
            return r["action"]
    raise InputError(f"policy: no range holds budget {budget}.")


def model_from_router(router, operator: str = "merge") -> dict:
    """The single-cluster model's ``rho, phi, a, g`` (MODEL §6) from a fitted router's theory
    block (``retcon fit`` with the identified reader, ``oas.TheoryRouter``).

    ``g`` and ``a`` (the mean of the per-type ``a_t``) are the reader's; ``rho`` is the operator's
    mean compression ratio over query types; the §2 support ``phi_2`` (its mean over types) is
    turned into §6's accuracy ratio by ``a phi_6 = g + (a - g) phi_2`` (MODEL §6,
    parametrization note).

    Raises:
      InputError: the router has no theory block.
    """
    check_choice("operator", operator, OPERATORS)
    tr = getattr(router, "theory", router)
    if tr is None or not hasattr(tr, "theta"):
        raise InputError(
            "--router: the router has no theory block (the identified reader); fit it with the "
            "theory router, or give --compress-ratio/--fidelity/--acc-raw/--acc-guess."
        )
    th = np.asarray(tr.theta, dtype=np.float64)
    n_types = 4
    g = 1.0 / (1.0 + math.exp(-th[0]))
    a_t = g + (1.0 - g) / (1.0 + np.exp(-th[1 : 1 + n_types]))
    phi2 = np.exp(th[1 + n_types :]).reshape(len(OPERATORS), n_types)
    j = OPERATORS.index(operator)
    a = float(np.mean(a_t))
    phi6 = (g + (a - g) * float(np.mean(phi2[j]))) / a
    rho = float(np.mean(np.asarray(tr.compress_ratio, dtype=np.float64)[j]))
    return {"compress_ratio": rho, "fidelity": phi6, "acc_raw": a, "acc_guess": g}
