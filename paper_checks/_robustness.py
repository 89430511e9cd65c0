"""Robustness to LoCoMo's annotation errors: the claims and crossovers on LoCoMo and on the
audited LoCoMo side by side (``retcon paper-checks --locomo-audit FILE``; issue 32).

The audited run is the same run (config, seed, so the same bootstrap keys) with
``CheckConfig.locomo_audit`` set: ``paper_checks._sources.locomo_conversations`` applies the audit
(``oas.real.apply_audit``) wherever paper-checks pairs LoCoMo under the oracle protocol. The
theory and simulation sources do not read LoCoMo; the audited workspace reuses them.

References: MODEL §6 (crossovers), §9 (LoCoMo); docs/real-data.md "annotation errors and what
they change".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paper_checks._types import ClaimResult


def audited_workspace(ws, audit: str | Path, mode: str = "drop,cite"):
    """A workspace like ``ws`` (config, seed) on the audited LoCoMo; the theory and simulation
    sources already measured in ``ws`` are shared (they do not read LoCoMo)."""
    from paper_checks._sources import Workspace

    config = dataclasses.replace(ws.config, locomo_audit=str(audit), audit_mode=mode)
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
    from paper_checks._sources import DataMissing, DependencyMissing

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


def robustness(
    before: Sequence[ClaimResult], ws_before, after: Sequence[ClaimResult], ws_after
) -> dict[str, Any]:
    """The section: per claim and per crossover, LoCoMo and the audited LoCoMo side by side with
    the change, and whether any verdict depends on the annotation errors."""
    by_id = {r.claim_id: r for r in after}
    claims = []
    for r in before:
        a = by_id[r.claim_id]
        claims.append(
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
    xb, xa = _crossovers(ws_before), _crossovers(ws_after)
    crossovers = [
        {
            "curve": k,
            "before": xb[k],
            "audited": xa.get(k),
            "change": _change(xb[k]["point"], (xa.get(k) or {}).get("point")),
        }
        for k in xb
    ]
    changed = [c for c in claims if c["verdict_changed"]]
    if changed:
        words = "; ".join(
            f"claim {c['claim_id']} {c['verdict']} -> {c['verdict_audited']}" for c in changed
        )
        statement = f"Verdicts depend on LoCoMo's annotation errors: {words}."
    else:
        statement = (
            f"No verdict depends on LoCoMo's annotation errors: all {len(claims)} claims checked "
            "keep their verdict on the audited LoCoMo."
        )
    cfg = ws_after.config
    return {
        "audit": {"path": cfg.locomo_audit, "modes": cfg.audit_mode},
        "claims": claims,
        "crossovers": crossovers,
        "verdicts_depend_on_annotation_errors": bool(changed),
        "statement": statement,
    }


def _fmt(x, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def _ci(ci) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return ""
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]"


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
        "| claim | verdict | audited | measured [95% CI] | audited [95% CI] | change |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in section["claims"]:
        lines.append(
            f"| {c['claim_id']} | {c['verdict']} | {c['verdict_audited']} | "
            f"{_fmt(c['measured'])}{_ci(c['ci'])} | {_fmt(c['measured_audited'])}"
            f"{_ci(c['ci_audited'])} | {_fmt(c['change'], '+.3f')} |"
        )
    if section["crossovers"]:
        lines += [
            "",
            "| crossover B* (reader/operator) | LoCoMo [95% CI] | audited [95% CI] | change |",
            "| --- | --- | --- | --- |",
        ]
        for x in section["crossovers"]:
            b, au = x["before"], x["audited"] or {}

            def cell(e):
                if not e or e.get("point") is None:
                    return f"none ({e.get('status', '-')})" if e else "-"
                return f"{e['point']:.0f} [{_fmt(e['lower'], '.0f')}, {_fmt(e['upper'], '.0f')}]"

            lines.append(f"| {x['curve']} | {cell(b)} | {cell(au)} | {_fmt(x['change'], '+.0f')} |")
    return "\n".join(lines) + "\n"


def append_robustness(out_dir, section: dict) -> None:
    """Write ``robustness.json``, add the section to ``report.json`` and append it to REPORT.md
    (each atomically)."""
    import json

    from paper_checks._report import append_section
    from retcon.output import to_jsonable, write_json_atomic

    out = Path(out_dir)
    append_section(out, "robustness.json", section, robustness_markdown(section))
    report = out / "report.json"
    if report.is_file():
        obj = json.loads(report.read_text(encoding="utf-8"))
        obj["robustness"] = to_jsonable(section)
        write_json_atomic(report, obj)
