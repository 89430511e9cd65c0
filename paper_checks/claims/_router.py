"""Claims 7-9, the learned router (OAS) on LoCoMo: its gain over the best fixed policy (7), the MLP
control (8) and harm calibration (9), all from one leave-one-conversation-out evaluation
(``paper_checks._loco``).

References: MODEL §9; docs/paper-checks.md "Claims and how each verdict is computed".
"""

from __future__ import annotations

import numpy as np

from paper_checks._curves import t_estimate
from paper_checks._loco import calibrated_name
from paper_checks._types import INCONCLUSIVE, ClaimResult, Estimate, Verdict
from paper_checks.claims._base import (
    attempt,
    claim_result,
    data_label,
    graded,
    main_reader,
    needs,
    real_missing,
)
from paper_checks.claims._sources import Workspace
from paper_checks.rules._requirements import Needs
from paper_checks.rules._router import (
    equivalence_oc,
    equivalence_verdict,
    harm_oc,
    harm_verdict,
    router_gain_oc,
    router_gain_verdict,
)


def _loco(ws: Workspace, skipped: dict):
    reader = main_reader(ws)
    return reader, attempt(lambda: ws.loco(reader), ws.unit(reader), skipped)


def _loco_data(ws, reader, ev, skipped) -> str:
    if ev is None:
        return data_label((), skipped)
    loco = (
        f"{ws.real_label(reader)}; leave-one-conversation-out over {len(ev.groups)} "
        "conversations, t-interval over per-conversation estimates"
    )
    return data_label((), skipped, labels=[loco])


def _router_gain_groups(ev) -> np.ndarray:
    """Per held-out conversation ``acc(oas) - acc(best-fixed)`` on budget-stressed rows."""
    return ev.per_group(ev.outcome("oas") - ev.outcome("best-fixed"), ev.grounded == 0)


@needs("7", Needs(columns=("cluster_tokens",), min_groups=4))
def check_router_gain(ws: Workspace) -> ClaimResult:
    """Claim 7: "OAS improves the when-which decision under budget-stressed conditions over the best
    fixed policy; report too where it does not".

    Budget-stressed instances: retention cannot fit the cluster (``q not in G_B``). Real unit:
    LoCoMo, leave-one-conversation-out; per held-out conversation the mean of
    ``acc(oas) - acc(best-fixed)`` over its stressed rows, combined with a t-interval (95% shown;
    the size decided on the 90% interval, ``rules._router.router_gain_verdict``). Per budget
    as well; the budgets where OAS is not ahead are listed. Headline: the stressed gain.

    References: MODEL §8.
    """
    skipped: dict = {}
    reader, ev = _loco(ws, skipped)
    gains, gain_g, per_budget, not_ahead, oc = {}, {}, {}, [], None
    src = ws.unit(reader)
    if ev is not None:
        d = ev.outcome("oas") - ev.outcome("best-fixed")
        gain_groups = _router_gain_groups(ev)
        gains[src] = t_estimate(gain_groups)
        gain_g[src] = gain_groups
        oc = router_gain_oc(ws.key("oc:7"), {src: gain_groups}, n_datasets=ws.config.oc_datasets)
        for b in np.unique(ev.budget):
            per_budget[float(b)] = t_estimate(ev.per_group(d, ev.budget == b))
        not_ahead = [b for b, e in per_budget.items() if not e.point > 0]
    verdict = graded(ws, "7", router_gain_verdict, gain_g, missing=real_missing(skipped))
    summary = "; ".join(
        f"{s}: {g.fmt(100, 1)} pts on stressed instances; OAS not ahead (point <= 0) at "
        f"{len(not_ahead)}/{len(per_budget)} budgets: B = "
        + (", ".join(f"{b:.0f}" for b in not_ahead) or "none")
        + f"; the size is decided on the 90% interval {t_estimate(gain_g[s], 0.90).fmt(100, 1)} "
        "pts (two one-sided tests at 5%)"
        for s, g in gains.items()
    )
    return claim_result(
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
    tests, diffs, oc, m, diff = {}, {}, None, float("nan"), None
    if ev is not None:
        gain = t_estimate(_router_gain_groups(ev))
        m = ws.config.equivalence_share * gain.point if gain.defined else float("nan")
        if "mlp" not in ev.chosen:
            skipped[f"{src}:mlp"] = "dependency not available: oas MLP policy"
        else:
            diff = ev.per_group(ev.outcome("mlp") - ev.outcome("oas"))
            tests[src] = (t_estimate(diff, 0.90), t_estimate(diff, 0.95))
            diffs[src] = diff
    if tests and not m > 0:
        verdict = Verdict(
            INCONCLUSIVE,
            "claim 7 measures no positive OAS gain, so no margin can tie 'no reliable improvement' "
            "to it",
        )
    else:
        verdict = graded(
            ws, "8", equivalence_verdict, diffs, margin=m, missing=real_missing(skipped)
        )
        if diff is not None:
            oc = equivalence_oc(ws.key("oc:8"), diff, m, n_datasets=ws.config.oc_datasets)
    summary = "; ".join(
        f"{s}: {e95.fmt(100, 1)} pts (90% interval {e90.fmt(100, 1)}); equivalence margin "
        f"+-{100 * m:.2g} pts ({ws.config.equivalence_share:g} x claim 7's OAS gain)"
        for s, (e90, e95) in tests.items()
    )
    return claim_result(
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
    harm_g, cost_g, base_harm = {}, {}, float("nan")
    if ev is not None:
        h_oas, a_oas = ev.harm("oas"), ev.outcome("oas")
        base_harm = float(np.nanmean(ev.per_group(h_oas)))
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
                harm[unit], cost[unit] = t_estimate(harm_g[unit]), t_estimate(cost_g[unit])
        crc = {f"{a:g}": crc_bound_check(ev, a) for a in ev.alphas}
    verdict = graded(
        ws,
        "9",
        harm_verdict,
        harm_g,
        cost_g,
        ws.config.max_accuracy_cost,
        base_harm=base_harm,
        missing=real_missing(skipped),
        inconclusive=inconclusive,
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
    return claim_result(
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
        oc=harm_oc(
            ws.key("oc:9"),
            harm_g,
            cost_g,
            ws.config.max_accuracy_cost,
            base_harm=base_harm,
            n_datasets=ws.config.oc_datasets,
        )
        if harm_g
        else None,
        headline=f"harm(calibrated) - harm(oas) ({head})",
        summary="; ".join(parts) or "-",
        skipped=skipped,
    )
