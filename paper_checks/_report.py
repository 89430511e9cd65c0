"""The report: ``REPORT.md`` (the claim table and a section per claim), ``report.json``, figures.

Everything is written atomically through ``retcon.output``; the JSON is strict (NaN and infinities
become ``null``) and carries the run's sidecar (config, seed, versions).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from paper_checks._types import ClaimResult, Estimate
from retcon.output import sidecar, write_json_atomic, write_text_atomic


def plain(obj: Any) -> Any:
    """JSON-ready copy: NamedTuples -> dicts, arrays -> lists, NaN/inf -> None, keys -> str."""
    if isinstance(obj, Estimate):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.ndarray) or type(obj).__module__.startswith("jax"):
        return plain(np.asarray(obj).tolist())
    if isinstance(obj, np.generic):
        return plain(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Path):
        return str(obj)
    return obj


def format_measured(r: ClaimResult) -> str:
    """``0.123 [0.100, 0.150]`` for the table's "ours" column; ``-`` when nothing was measured."""
    if r.measured is None:
        return "-"
    lo, hi = r.ci if r.ci is not None else (r.measured, r.measured)
    return Estimate(float(r.measured), float(lo), float(hi)).fmt()


def format_oc(r: ClaimResult) -> str:
    """``2.0% / 96.5%``: the rule's measured false-PASS rate and power; ``-`` when not graded."""
    fp, pw = r.details.get("false_pass_rate"), r.details.get("power")
    if fp is None or pw is None:
        return "-"
    return f"{100 * fp:.1f}% / {100 * pw:.1f}%"


def operating_summary(results: Sequence[ClaimResult]) -> dict:
    """``{claim id: {false_pass_rate, power, false_fail_rate, ...}}`` of every graded claim."""
    return {
        r.claim_id: plain(r.details["operating_characteristics"])
        for r in results
        if "operating_characteristics" in r.details
    }


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(
    results: Sequence[ClaimResult], *, config: Any, seed: int, figures: Sequence[str] = ()
) -> str:
    """REPORT.md: the claim table, then per claim its headline, numbers, reason and skipped parts."""
    from paper_checks._types import VERDICTS
    from paper_checks._verdicts import RULES

    counts = {v: sum(r.verdict == v for r in results) for v in VERDICTS}
    scale = (
        "full (paper scale)"
        if getattr(config, "full", False)
        else "fast (default; `--full` for paper scale)"
    )
    lines = [
        "# Paper checks: claim by claim",
        "",
        f"Scale: {scale}; seed {seed}. Verdicts: "
        + ", ".join(f"{v} {n}" for v, n in counts.items())
        + ".",
        "Intervals follow the few-groups protocol of docs/statistics.md: statistics per group "
        "(conversation), Student-t intervals on G - 1 df for means, a wild cluster bootstrap "
        "(Webb's weights) for crossovers. Beside each verdict: its rule's measured false-PASS "
        "rate and power at the data's group count (paper_checks.operating).",
        "",
        "Verdict rules:",
        "",
        *(f"{i}. {rule}" for i, rule in enumerate(RULES, 1)),
        "",
        "| # | claim | paper's figure | ours (95% CI) | verdict | false PASS / power | data |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r.claim_id} | {_cell(r.claim)} | {_cell(r.paper_figure)} | {_cell(format_measured(r))} "
            f"| **{r.verdict}** | {format_oc(r)} | {_cell(r.data)} |"
        )
    lines.append("")
    for r in results:
        d = r.details
        lines += [
            f"## Claim {r.claim_id}: {r.verdict}",
            "",
            f"> {r.claim}",
            "",
            f"- Headline ({d.get('headline', '-')}): {format_measured(r)}",
            f"- Measured: {d.get('summary', '-')}",
            f"- Verdict reason: {d.get('reason', '-')}",
        ]
        if "operating_characteristics" in d:
            oc = d["operating_characteristics"]
            lines.append(
                f"- Rule's operating characteristics (G = {oc['n_groups']}, "
                f"{oc['n_datasets']} synthetic data sets per world): false PASS "
                f"{100 * oc['false_pass_rate']:.1f}% (worst null: {oc['worst_null']}), power "
                f"{100 * oc['power']:.1f}%, false FAIL {100 * oc['false_fail_rate']:.1f}% (true "
                f"world: {oc['true_world']})"
            )
        for k, v in (d.get("skipped") or {}).items():
            lines.append(f"- Not measured: `{k}`: {v}")
        lines.append("")
    if figures:
        lines += ["## Figures", ""] + [f"![{Path(f).stem}]({Path(f).name})" for f in figures] + [""]
    return "\n".join(lines)


def write_report(
    out_dir,
    results: Sequence[ClaimResult],
    *,
    config: Any,
    seed: int,
    figures: Sequence[str] = (),
    command: str = "retcon paper-checks",
) -> dict:
    """Write ``REPORT.md`` and ``report.json`` under ``out_dir``; return the JSON object."""
    out = Path(out_dir)
    obj = {
        "claims": [plain(r._asdict()) for r in results],
        "verdicts": {r.claim_id: r.verdict for r in results},
        "operating_characteristics": operating_summary(results),
        "figures": [Path(f).name for f in figures],
        "sidecar": plain(sidecar(plain(config), seed=seed, command=command)),
    }
    write_json_atomic(out / "report.json", obj)
    write_text_atomic(
        out / "REPORT.md", render_markdown(results, config=config, seed=seed, figures=figures)
    )
    return obj


def append_section(out_dir, json_name: str, section: dict, markdown: str) -> None:
    """Write ``section`` as ``out_dir/json_name`` and append ``markdown`` to ``out_dir/REPORT.md``
    (both atomically); the ungraded "beyond the paper" sections use it."""
    from retcon.output import to_jsonable

    out = Path(out_dir)
    write_json_atomic(out / json_name, to_jsonable(section))
    report = out / "REPORT.md"
    text = report.read_text(encoding="utf-8") if report.is_file() else ""
    write_text_atomic(report, text.rstrip("\n") + "\n\n" + markdown)
