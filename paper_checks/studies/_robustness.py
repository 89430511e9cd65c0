"""Robustness to LoCoMo's annotation errors: the claims and crossovers on LoCoMo and on the
audited LoCoMo side by side (``retcon paper-checks --locomo-audit FILE``; issue 32).

The audited run is the same run (config, seed, so the same bootstrap keys) with
``CheckConfig.locomo_audit`` set: ``paper_checks.claims._sources.locomo_conversations`` applies the audit
(``oas.real.apply_audit``) wherever paper-checks pairs LoCoMo under the oracle protocol. The
theory and simulation sources do not read LoCoMo; the audited workspace reuses them.

The comparison is on the same sample by construction (``CheckConfig.audit_sample="same"``): the
questions are chosen on LoCoMo as released and the audit then applies to them (drop: the same
sample less the dropped questions; correct and cite: the same questions), so a change is the
annotations' and nothing else. A sample drawn again on the audited file (``"redrawn"``: under
``--design paper`` another stratified draw, under ours another first-N per conversation) is a
separate line, labelled as a resample. The statement is computed from the per-claim rows.

References: MODEL §6 (crossovers), §9 (LoCoMo); docs/real-data.md "annotation errors and what
they change".
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

import theory
from paper_checks._types import ClaimResult
from paper_checks.claims._sources import DataMissing, DependencyMissing, Workspace
from paper_checks.report._report import append_section
from retcon.output import to_jsonable, write_json_atomic
from retcon.vocab import ACTIONS, OPERATORS


def audited_workspace(ws, audit: str | Path, mode: str = "drop,cite", sample: str = "same"):
    """A workspace like ``ws`` (config, seed) on the audited LoCoMo; the theory and simulation
    sources already measured in ``ws`` are shared (they do not read LoCoMo). ``sample``:
    ``"same"`` (the questions of ``ws``, less those the audit drops) or ``"redrawn"``."""

    config = dataclasses.replace(
        ws.config, locomo_audit=str(audit), audit_mode=mode, audit_sample=sample
    )
    new = Workspace(config, ws.seed, progress=ws._progress)
    for name, value in ws._memo.items():
        if name.startswith(("sim", "theory")):
            new._memo[name] = value
    return new


def _num(x) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _change(a, b) -> float | None:
    a, b = _num(a), _num(b)
    return None if a is None or b is None else b - a


def _crossovers(ws) -> dict[str, dict]:
    """``{"<reader>/<operator>": {point, lower, upper, status}}`` of the real-data curves
    measured in ``ws`` (readers whose data is missing are left out)."""

    out = {}
    for reader in ws.config.readers:
        try:
            curves = ws.real_curves(reader)
        except (DataMissing, DependencyMissing):
            continue
        for op, c in curves.operators.items():
            e = c.crossover
            out[f"{reader}/{op}"] = {
                "point": _num(e.point),
                "lower": _num(e.lower),
                "upper": _num(e.upper),
                "status": c.status,
            }
    return out


#: The least share of bootstrap replicates in which both runs cross for a change's joint interval
#: to be given: the percentile interval over the replicates that cross says little about a
#: change when many do not.
MIN_DEFINED = 0.95


def joint_crossover_change(
    key,
    budgets,
    groups_before,
    per_group_before,
    groups_after,
    per_group_after,
    *,
    n_resamples: int = 1000,
    level: float = 0.95,
) -> dict[str, dict]:
    """The change of each operator's crossover, audited minus original, with a joint interval.

    A paired cluster bootstrap: the conversations both runs share are resampled with replacement,
    the same draw for both, so a replicate's change compares the two annotations on the same
    conversations. Each replicate's mean ``dU`` curves give a crossover per run
    (``theory.grid_crossover``); the interval is the percentile interval of the replicates'
    differences where both runs cross, and ``share_defined`` is the share of replicates where
    both do; below ``MIN_DEFINED`` (95%) no interval is given.

    Args:
      key: JAX PRNG key.
      budgets: ``(nB,)`` the grid of both runs.
      groups_before, groups_after: the group ids of the rows of ``per_group_*`` (``(G,)``).
      per_group_before, per_group_after: ``(G, n_operators, nB)`` per-group ``dU`` curves.

    Returns:
      ``{operator: {change, lower, upper, share_defined, n_groups}}`` (``OPERATORS`` order);
      ``change`` is that of the point curves (``None`` where either has no crossover), ``lower``
      and ``upper`` ``None`` when fewer than ``MIN_DEFINED`` of the replicates have both.

    References: MODEL §6 (crossover; docs/model.md §6.4 for a sampled curve); docs/statistics.md.
    """
    b = np.asarray(budgets, dtype=np.float64)
    gb = [str(g) for g in np.asarray(groups_before).reshape(-1)]
    ga = [str(g) for g in np.asarray(groups_after).reshape(-1)]
    shared = sorted(set(gb) & set(ga))
    xb = np.asarray(per_group_before, dtype=np.float64)[[gb.index(g) for g in shared]]
    xa = np.asarray(per_group_after, dtype=np.float64)[[ga.index(g) for g in shared]]
    n = len(shared)
    draw = np.asarray(jax.random.randint(key, (int(n_resamples), n), 0, n))  # (R, G)
    with np.errstate(invalid="ignore"):
        pb, pa = np.nanmean(xb, axis=0), np.nanmean(xa, axis=0)  # (no, nB)
        rb, ra = np.nanmean(xb[draw], axis=1), np.nanmean(xa[draw], axis=1)  # (R, no, nB)
    cross = lambda d: np.asarray(theory.grid_crossover(b, d).crossover_budget, float)  # noqa: E731
    point = cross(pa) - cross(pb)
    reps = cross(ra) - cross(rb)  # (R, no)
    alpha = (1.0 - float(level)) / 2.0
    out = {}
    for k, op in enumerate(OPERATORS):
        r = reps[:, k][np.isfinite(reps[:, k])]
        ok = r.size > 0 and r.size >= MIN_DEFINED * len(reps)
        lo, hi = np.quantile(r, [alpha, 1.0 - alpha]) if ok else (np.nan, np.nan)
        out[op] = {
            "change": _num(point[k]),
            "lower": _num(lo),
            "upper": _num(hi),
            "share_defined": float(r.size) / float(len(reps)),
            "n_groups": n,
        }
    return out


def _joint_crossovers(ws_before, ws_after) -> dict[str, dict]:
    """``joint_crossover_change`` of every reader both workspaces measured, keyed like
    ``_crossovers`` (``"<reader>/<operator>"``)."""

    out = {}
    for reader in ws_before.config.readers:
        try:
            cb, ca = ws_before.real_curves(reader), ws_after.real_curves(reader)
            pb, pa = ws_before.real_paired(reader), ws_after.real_paired(reader)
        except (DataMissing, DependencyMissing):
            continue
        first = next(iter(cb.operators.values()))
        if not np.array_equal(first.budgets, next(iter(ca.operators.values())).budgets):
            continue  # not the same grid: no joint interval
        if cb.group_delta is None or ca.group_delta is None:
            continue
        joint = joint_crossover_change(
            ws_before.key(f"robustness-joint:{reader}"),
            first.budgets,
            np.unique(np.asarray(pb.group_id).astype(str)),
            cb.group_delta,
            np.unique(np.asarray(pa.group_id).astype(str)),
            ca.group_delta,
            n_resamples=ws_before.config.n_resamples,
        )
        for op, v in joint.items():
            out[f"{reader}/{op}"] = v
    return out


def joint_mean_change(
    key,
    groups_before,
    values_before,
    groups_after,
    values_after,
    *,
    n_resamples: int = 1000,
    level: float = 0.95,
) -> tuple[float | None, float | None, float | None]:
    """``(change, lower, upper)`` of the mean of ``values_after`` minus that of ``values_before``
    (rows of two runs on the same conversations), with a paired cluster bootstrap: the
    conversations of either run are resampled, the same draw for both runs, and each run's mean is
    taken over its rows of the drawn conversations. ``None`` for an undefined figure."""
    gb = np.asarray(groups_before).astype(str)
    ga = np.asarray(groups_after).astype(str)
    vb, va = np.asarray(values_before, float), np.asarray(values_after, float)
    # every conversation of either run: one with no row in a run adds nothing to that run's mean
    shared = sorted(set(gb.tolist()) | set(ga.tolist()))
    if not shared or not vb.size or not va.size:
        return None, None, None

    def sums(g, v):
        s = np.array([v[g == c].sum() for c in shared])
        n = np.array([float((g == c).sum()) for c in shared])
        return s, n

    (sb, nb), (sa, na) = sums(gb, vb), sums(ga, va)
    draw = np.asarray(jax.random.randint(key, (int(n_resamples), len(shared)), 0, len(shared)))
    w = np.stack([np.bincount(d, minlength=len(shared)) for d in draw]).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (w @ sa) / (w @ na) - (w @ sb) / (w @ nb)
    reps = reps[np.isfinite(reps)]
    change = float(sa.sum() / na.sum() - sb.sum() / nb.sum())
    if not reps.size:
        return _num(change), None, None
    a = (1.0 - float(level)) / 2.0
    lo, hi = np.quantile(reps, [a, 1.0 - a])
    return _num(change), _num(lo), _num(hi)


def _table_4_change(ws_before, ws_after) -> list[dict] | None:
    """Table 4 (``--design paper``) on LoCoMo and on the audited LoCoMo, cell by cell, with the
    change and its joint interval (``joint_mean_change`` of the per-question gains); ``None``
    under our design or without the data."""
    if ws_before.config.design != "paper":
        return None

    tb, ta = ws_before.paper_tables(), ws_after.paper_tables()
    if not tb or not ta or "table_4" not in tb or "table_4" not in ta:
        return None
    reader = ws_before.config.readers[0]
    try:
        pb, pa = ws_before.real_paired(reader), ws_after.real_paired(reader)
    except (DataMissing, DependencyMissing):
        return None

    def gains(p, op, b):
        y, rows = np.asarray(p.outcomes, float), np.asarray(p.budget, float) == b
        diff = y[rows, ACTIONS.index(op)] - y[rows, 0]
        return np.asarray(p.group_id).astype(str)[rows], diff

    after = {(c["operator"], c["budget"]): c for c in ta["table_4"]["cells"]}
    out = []
    for i, c in enumerate(tb["table_4"]["cells"]):
        a = after.get((c["operator"], c["budget"])) or {}
        key = jax.random.fold_in(ws_before.key("robustness-table-4"), i)
        change, lo, hi = joint_mean_change(
            key,
            *gains(pb, c["operator"], c["budget"]),
            *gains(pa, c["operator"], c["budget"]),
            n_resamples=ws_before.config.n_resamples,
        )
        out.append(
            {
                "operator": c["operator"],
                "budget": c["budget"],
                "paper": c["paper"],
                "ours": c["ours"],
                "ours_audited": a.get("ours"),
                "interval": c["conversation_interval"],
                "interval_audited": a.get("conversation_interval"),
                "change": change,
                "change_joint": [lo, hi],
                "n": c["n"],
                "n_audited": a.get("n"),
            }
        )
    return out


def _questions(ws) -> set[str] | None:
    """The question ids of the main reader's real rows in ``ws`` (None when absent)."""
    try:
        paired = ws.real_paired(ws.config.readers[0])
    except (DataMissing, DependencyMissing, IndexError, AttributeError):
        return None
    return set(np.asarray(paired.query_id).astype(str).tolist())


def sample_overlap(ws_before, ws_after) -> dict | None:
    """``{"questions", "questions_audited", "shared"}``: how many questions each run grades and
    how many both do (None when either has no real rows)."""
    qb, qa = _questions(ws_before), _questions(ws_after)
    if qb is None or qa is None:
        return None
    return {"questions": len(qb), "questions_audited": len(qa), "shared": len(qb & qa)}


def _claim_rows(before: Sequence[ClaimResult], after: Sequence[ClaimResult]) -> list[dict]:
    by_id = {r.claim_id: r for r in after}
    rows = []
    for r in before:
        a = by_id[r.claim_id]
        rows.append(
            {
                "claim_id": r.claim_id,
                "verdict": r.verdict,
                "verdict_audited": a.verdict,
                "verdict_changed": r.verdict != a.verdict,
                "measured": _num(r.measured),
                "measured_audited": _num(a.measured),
                "change": _change(r.measured, a.measured),
                "ci": None if r.ci is None else [_num(x) for x in r.ci],
                "ci_audited": None if a.ci is None else [_num(x) for x in a.ci],
            }
        )
    return rows


def statement(claims: Sequence[dict], *, resampled: bool = False) -> str:
    """The summary sentence, computed from the per-claim rows: every claim whose verdict changes,
    or that none does (``resampled``: the line of a sample drawn again, not the annotations)."""
    changed = [c for c in claims if c["verdict_changed"]]
    words = "; ".join(
        f"claim {c['claim_id']} {c['verdict']} -> {c['verdict_audited']}" for c in changed
    )
    if resampled:
        if changed:
            return f"On a sample drawn again from the audited file, verdicts change: {words}."
        return (
            f"On a sample drawn again from the audited file, all {len(claims)} claims keep "
            "their verdict."
        )
    if changed:
        return f"On the same sample, verdicts depend on LoCoMo's annotation errors: {words}."
    return (
        f"On the same sample, no verdict depends on LoCoMo's annotation errors: all "
        f"{len(claims)} claims checked keep their verdict on the audited LoCoMo."
    )


def robustness(
    before: Sequence[ClaimResult],
    ws_before,
    after: Sequence[ClaimResult],
    ws_after,
    *,
    resampled: Sequence[ClaimResult] | None = None,
    ws_resampled=None,
) -> dict[str, Any]:
    """The section: per claim and per crossover, LoCoMo and the audited LoCoMo side by side with
    the change, on the same sample (``after``, ``ws_after``), and whether any verdict depends on
    the annotation errors; ``resampled`` (with ``ws_resampled``), the audited run on a sample
    drawn again, is a separate labelled line with its own statement."""
    claims = _claim_rows(before, after)
    xb, xa = _crossovers(ws_before), _crossovers(ws_after)
    joint = _joint_crossovers(ws_before, ws_after) if xb else {}
    crossovers = [
        {
            "curve": k,
            "before": xb[k],
            "audited": xa.get(k),
            "change": _change(xb[k]["point"], (xa.get(k) or {}).get("point")),
            "change_joint": joint.get(k),
        }
        for k in xb
    ]
    changed = any(c["verdict_changed"] for c in claims)
    cfg = ws_after.config
    table_4 = _table_4_change(ws_before, ws_after) if getattr(cfg, "design", None) else None
    out = {
        "audit": {"path": cfg.locomo_audit, "modes": cfg.audit_mode},
        "sample": sample_overlap(ws_before, ws_after),
        "claims": claims,
        "crossovers": crossovers,
        **({"table_4": table_4} if table_4 is not None else {}),
        "verdicts_depend_on_annotation_errors": changed,
        "statement": statement(claims),
    }
    if resampled is not None:
        rows = _claim_rows(before, resampled)
        out["resampled"] = {
            "sample": None if ws_resampled is None else sample_overlap(ws_before, ws_resampled),
            "claims": rows,
            "statement": statement(rows, resampled=True),
        }
    return out


def _fmt(x, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def _ci(ci) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return ""
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]"


def _joint(j) -> str:
    if not j or j.get("lower") is None:
        return ""
    return f" [{j['lower']:+.0f}, {j['upper']:+.0f}; defined {j['share_defined']:.0%}]"


def _sample_line(sample: dict | None, label: str) -> list[str]:
    if not sample:
        return []
    return [
        f"{label}: LoCoMo grades {sample['questions']} questions, the audited run "
        f"{sample['questions_audited']}; {sample['shared']} are in both.",
        "",
    ]


def _claim_table(claims: Sequence[dict]) -> list[str]:
    return [
        f"| {c['claim_id']} | {c['verdict']} | {c['verdict_audited']} | "
        f"{_fmt(c['measured'])}{_ci(c['ci'])} | {_fmt(c['measured_audited'])}"
        f"{_ci(c['ci_audited'])} | {_fmt(c['change'], '+.3f')} |"
        for c in claims
    ]


def robustness_markdown(section: dict) -> str:
    a = section["audit"]
    lines = [
        "## Robustness: LoCoMo and the audited LoCoMo",
        "",
        f"The same run on LoCoMo with the audit `{Path(str(a['path'])).name}` applied "
        f'(modes `{a["modes"]}`: docs/real-data.md, "annotation errors and what they change").',
        "",
        f"**{section['statement']}**",
        "",
        *_sample_line(section.get("sample"), "Same sample"),
        "| claim | verdict | audited | measured [95% CI] | audited [95% CI] | change |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += _claim_table(section["claims"])
    res = section.get("resampled")
    if res:
        lines += [
            "",
            f"Resampled (a separate line, not the annotations' effect): {res['statement']}",
            "",
            *_sample_line(res.get("sample"), "Redrawn sample"),
            "| claim | verdict | audited, redrawn | measured [95% CI] | audited [95% CI] | change |",
            "| --- | --- | --- | --- | --- | --- |",
            *_claim_table(res["claims"]),
        ]
    if section["crossovers"]:
        lines += [
            "",
            "| crossover B* (reader/operator) | LoCoMo [95% CI] | audited [95% CI] | change "
            "[joint 95% CI] |",
            "| --- | --- | --- | --- |",
        ]
        for x in section["crossovers"]:
            b, au = x["before"], x["audited"] or {}

            def cell(e):
                if not e or e.get("point") is None:
                    return f"none ({e.get('status', '-')})" if e else "-"
                return f"{e['point']:.0f} [{_fmt(e['lower'], '.0f')}, {_fmt(e['upper'], '.0f')}]"

            lines.append(
                f"| {x['curve']} | {cell(b)} | {cell(au)} | {_fmt(x['change'], '+.0f')}"
                f"{_joint(x.get('change_joint'))} |"
            )
        lines += [
            "",
            "The joint interval of a change is a paired cluster bootstrap: the same resampled "
            "conversations for both annotations; `defined` is the share of replicates where both "
            "cross (no interval below 95%).",
        ]
    if section.get("table_4"):
        lines += [
            "",
            "Table 4 under `--design paper` (gain over retention, conversation-level 95% CI):",
            "",
            "| operator | budget | paper | LoCoMo | audited | change [joint 95% CI] |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for c in section["table_4"]:
            lo, hi = c["change_joint"]
            joint = "" if lo is None else f" [{lo:+.3f}, {hi:+.3f}]"
            lines.append(
                f"| {c['operator']} | {c['budget']} | {_fmt(c['paper'], '+.3f')} | "
                f"{_fmt(c['ours'], '+.3f')}{_ci(c['interval'])} | "
                f"{_fmt(c['ours_audited'], '+.3f')}{_ci(c['interval_audited'])} | "
                f"{_fmt(c['change'], '+.3f')}{joint} |"
            )
    return "\n".join(lines) + "\n"


def append_robustness(out_dir, section: dict) -> None:
    """Write ``robustness.json``, add the section to ``report.json`` and append it to REPORT.md
    (each atomically)."""
    out = Path(out_dir)
    append_section(out, "robustness.json", section, robustness_markdown(section))
    report = out / "report.json"
    if report.is_file():
        obj = json.loads(report.read_text(encoding="utf-8"))
        obj["robustness"] = to_jsonable(section)
        write_json_atomic(report, obj)
