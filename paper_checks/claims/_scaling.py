"""Claims 5-6, which operator and which budget: the crossover's scaling with evidence length (5) and
cross-note operators against local rewrite (6). Each measures, then asks its verdict
(``claims._base.graded``: claim 5's home is ``paper_checks.rules._slope``, claim 6's
``paper_checks.rules._cross_note``) and that same rule's operating characteristics.

References: MODEL §6, §8; docs/paper-checks.md "Claims and how each verdict is computed".
"""

from __future__ import annotations

import numpy as np

from oas import length_strata
from paper_checks._curves import bounded, evidence_length, raw_grounded, t_estimate
from paper_checks._types import ClaimResult, Estimate
from paper_checks.claims._base import (
    admission_check,
    attempt,
    claim_result,
    data_label,
    graded,
    main_reader,
    needs,
    real_missing,
    sim_sources,
)
from paper_checks.claims._sources import Workspace
from paper_checks.rules._cross_note import conditions, cross_note_oc, cross_note_verdict
from paper_checks.rules._gates import identical_actions
from paper_checks.rules._requirements import Needs
from paper_checks.rules._slope import (
    slope_oc,
    slope_verdict,
    stratified_group_curves,
    verdict_crossover_scaling,
)
from retcon.inference import group_means
from retcon.vocab import ACTIONS, OPERATORS

# ---- claim 5 ---------------------------------------------------------------------------------------


@needs("5", Needs(columns=("cluster_tokens",), min_budgets=2))
def check_crossover_scaling(ws: Workspace) -> ClaimResult:
    """Claim 5: "the crossover comes at a smaller absolute budget for shorter evidence ... and B*
    divided by the evidence length is roughly constant (relative pressure governs)".

    Real units: LoCoMo under the main reader (when admissible), questions split into
    ``config.length_strata`` evidence-length strata; per stratum and operator ``B*`` with a
    wild-cluster-bootstrap interval; per operator the slope of ``log B*`` on ``log L`` over the
    strata with a point crossover (at least 3), graded by ``grade_slope`` (``_rules.slope_verdict``)
    and its operating characteristics (``_rules.slope_oc``). An operator identical to another on
    every row is one unit. Shown: ``B*/L`` per stratum, the sim presets' ``B*/L`` and the exact
    model at lengths x1 and x2 (scale equivariance: ratio 2). Headline: merge's slope.

    References: MODEL §6.5.
    """
    skipped: dict = {}
    cfg = ws.config
    reader = main_reader(ws)
    sims = sim_sources(ws, skipped)
    theory = [
        t
        for t in (attempt(lambda s=s: ws.theory_curves(s), "theory", skipped) for s in (1.0, 2.0))
        if t is not None
    ]
    paired = attempt(lambda: ws.real_paired(reader), ws.unit(reader), skipped)
    chk, bad = admission_check(ws, reader, skipped) if paired is not None else (None, None)
    slopes, inconclusive, strata_rows, oc = {}, {}, {}, None
    if paired is not None:
        strata, _, _, med = length_strata(
            evidence_length(paired), paired.query_id, cfg.length_strata
        )
        budgets = np.unique(np.asarray(paired.budget, float))
        curves = stratified_group_curves(
            paired.outcomes, paired.group_id, paired.budget, strata, budgets
        )
        # operators only: one identical to an earlier operator is not graded (merge = rewrite)
        same = identical_actions(np.asarray(paired.outcomes)[:, 1:], ACTIONS[1:]).first
        units = [None if (op in same or bad) else f"{ws.unit(reader)}:{op}" for op in OPERATORS]
        if bad:
            inconclusive.update(
                {f"{ws.unit(reader)}:{op}": bad for op in OPERATORS if op not in same}
            )
        verdict, slopes, est = graded(
            ws,
            "5",
            slope_verdict,
            ws.key("c5:strata"),
            curves,
            budgets,
            med,
            units,
            n_resamples=cfg.n_resamples,
            missing=real_missing(skipped),
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
            oc = slope_oc(
                ws.key("oc:5"),
                curves,
                budgets,
                med,
                units,
                n_datasets=max(ws.config.oc_datasets // 2, 10),
            )
    else:
        verdict = verdict_crossover_scaling({}, missing=real_missing(skipped))
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
    real = (
        [f"{ws.real_label(reader)}, {cfg.length_strata} evidence-length strata"]
        if paired is not None
        else []
    )
    return claim_result(
        "5",
        verdict,
        measured=head,
        data=data_label(sims, skipped, labels=real),
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
        p = attempt(lambda scen=scen: ws.sim_paired(scen), f"sim:{scen}", skipped)
        if p is not None:
            tables[f"sim:{scen}"] = p
    reader = main_reader(ws)
    real = attempt(lambda: ws.real_paired(reader), ws.unit(reader), skipped)
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
    conds = conditions(conds)
    verdict = graded(
        ws,
        "6",
        cross_note_verdict,
        arrays_b,
        arrays_c,
        missing=real_missing(skipped),
        inconclusive=inconclusive,
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
    return claim_result(
        "6",
        verdict,
        measured=measured,
        data=data_label(
            (), skipped, labels=[f"{k} paired, rows with q not in G_B" for k in tables]
        ),
        details={
            "beats_rewrite": beats,
            "merge_minus_abstract": conds,
            "not_graded": inconclusive,
            "sim": shown,
        },
        headline=f"U(abstract) - U(rewrite) where compression is necessary ({head})",
        summary="; ".join(parts) or "-",
        skipped=skipped,
        oc=cross_note_oc(ws.key("oc:6"), arrays_b, arrays_c, n_datasets=ws.config.oc_datasets)
        if arrays_b or arrays_c
        else None,
    )
