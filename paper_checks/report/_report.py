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

from oas import token_json, token_markdown
from paper_checks._paired import judge_flag_lines
from paper_checks._types import VERDICTS, ClaimResult, Estimate
from paper_checks.rules._acceptance import ACCEPTANCE_RULE, answer
from paper_checks.rules._grades import RULES
from paper_checks.tables._design import tables_markdown
from retcon.output import sidecar, to_jsonable, write_json_atomic, write_text_atomic


def plain(obj: Any) -> Any:
    """JSON-ready copy: NamedTuples -> dicts, arrays -> lists, NaN/inf -> None, keys -> str."""
    if hasattr(obj, "_asdict"):  # NamedTuples (``Estimate``, ``ClaimResult``): by field name
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


def format_oc_cell(r: ClaimResult) -> str:
    """``1.0% / 86.0%``: the rule's false-PASS rate and power, for the claim table; ``-`` when
    they were not measured."""
    oc = r.details.get("operating_characteristics") or {}
    fp, pw = oc.get("false_pass_rate"), oc.get("power")
    if fp is None or pw is None:
        return "-"
    return f"{100 * fp:.1f}% / {100 * pw:.1f}%"


def format_claims(results: Sequence[ClaimResult]) -> list[str]:
    """One line per claim, as ``retcon paper-checks`` prints them: id, verdict, measured value
    with its CI, the headline and the rule's false-PASS rate and power; ``[judge FLAGGED]`` when
    the claim was graded on a ``--paired`` file whose LLM judge was flagged."""
    width = max((len(r.verdict) for r in results), default=0)
    return [
        f"claim {r.claim_id}: {r.verdict:<{width}}  {format_measured(r):<28} "
        f"{r.details.get('headline', '')}  [false PASS / power: {format_oc_cell(r)}]"
        + ("  [judge FLAGGED]" if "judge FLAGGED" in str(r.data) else "")
        for r in results
    ]


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def format_oc(oc: dict | None) -> str:
    """``false PASS 0.040, power 0.850 at G=10 (tabled)``, or the hook's ``not measured: ...``
    with G."""
    if not oc:
        return "-"
    g = "no graded data" if oc.get("n_groups") is None else f"G={oc['n_groups']}"
    if oc.get("false_pass_rate") is None:
        return f"{oc.get('method', 'not measured')} ({g})"
    out = (
        f"false PASS {oc['false_pass_rate']:.3f}, power {oc['power']:.3f} at {g} "
        f"({oc.get('method', '-')})"
    )
    if oc.get("false_fail_rate") is not None:
        out += (
            f"; false FAIL {oc['false_fail_rate']:.3f}; worst null: {oc.get('worst_null', '-')}; "
            f"true world: {oc.get('true_world', '-')}"
        )
    return out


def data_lines(data: Sequence[dict]) -> list[str]:
    """REPORT.md's data section: per real-data file its path, sha256, size, G and provenance."""
    if not data:
        return []
    lines = ["Data graded:", ""]
    for d in data:
        lines.append(
            f"- `{d['name']}`: `{d['path']}` (sha256 `{d['sha256']}`): {d['n_rows']} rows, "
            f"{d['n_queries']} questions, **G = {d['n_groups']} groups**, {len(d['budgets'])} "
            f"budgets. Provenance: {d['provenance']['statement']}."
        )
        src = d.get("length_source")
        if src and (src.get("evidence_structure") or src.get("missing")):
            lines.append(
                f"  len(C): from cluster_tokens in {src['cluster_tokens']} rows, from "
                f"evidence_structure in {src['evidence_structure']}, missing in {src['missing']}."
            )
    return [*lines, ""]


def render_markdown(
    results: Sequence[ClaimResult],
    *,
    config: Any,
    seed: int,
    figures: Sequence[str] = (),
    data: Sequence[dict] = (),
    tokens: dict | None = None,
) -> str:
    """REPORT.md: the data graded, the claim table, then per claim its headline, numbers, reason,
    its rule's operating characteristics and skipped parts; with ``tokens``
    (``Workspace.token_tables``) the tokens beside accuracy of each real-data source."""

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
        "",
        "| # | claim | paper's figure | ours (95% CI) | verdict | false PASS / power | data |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r.claim_id} | {_cell(r.claim)} | {_cell(r.paper_figure)} | {_cell(format_measured(r))} "
            f"| **{r.verdict}** | {format_oc_cell(r)} | {_cell(r.data)} |"
        )
    lines += [
        "",
        "In plain words:",
        "",
        *(answer(r) for r in results),
        *(f"- **{line}**." for line in judge_flag_lines(data)),
        "",
        ACCEPTANCE_RULE,
        "",
        "Intervals follow the few-groups protocol of docs/statistics.md: statistics per group "
        "(conversation), Student-t intervals on G - 1 df for means, the exact max-T sign-flip "
        "test where several cells stand behind one decision, a wild cluster bootstrap (Webb's "
        "weights) for crossovers. Beside each verdict: its rule's measured false-PASS rate and "
        "power at the data's group count (paper_checks.operating).",
        "",
        *data_lines(data),
        "Verdict rules:",
        "",
        *(f"{i}. {rule}" for i, rule in enumerate(RULES, 1)),
        "",
    ]
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
            f"- Rule's operating characteristics: {format_oc(d.get('operating_characteristics'))}",
        ]
        for k, v in (d.get("skipped") or {}).items():
            lines.append(f"- Not measured: `{k}`: {v}")
        lines.append("")
    if tokens:
        lines.append(tokens_markdown(tokens))
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
    data: Sequence[dict] = (),
    tables: dict | None = None,
    tokens: dict | None = None,
) -> dict:
    """Write ``REPORT.md`` and ``report.json`` under ``out_dir``; return the JSON object.

    ``data``: the real data graded (``Workspace.data_sources``: file, sha256, G, provenance).
    ``tables``: the paper's tables beside ours (``--design paper``), also written as ``TABLES.md``.
    ``tokens``: tokens beside accuracy per real-data source (``Workspace.token_tables``)."""
    out = Path(out_dir)
    if tables is not None:
        write_text_atomic(out / "TABLES.md", tables_markdown(tables))
    cfg = plain(config)
    if isinstance(cfg, dict) and cfg.get("protocol") == "oracle":
        del cfg["protocol"]  # the default: report.json stays what it was before --protocol
    if isinstance(cfg, dict) and cfg.get("second_reader", "") is None:
        del cfg["second_reader"]  # the default: report.json as before --second-reader
    obj = {
        **report_json(results, data, tables, tokens),
        "figures": [Path(f).name for f in figures],
        "sidecar": plain(sidecar(cfg, seed=seed, command=command)),
    }
    write_json_atomic(out / "report.json", obj)
    write_text_atomic(
        out / "REPORT.md",
        render_markdown(
            results, config=config, seed=seed, figures=figures, data=data, tokens=tokens
        ),
    )
    return obj


def report_json(
    results: Sequence[ClaimResult],
    data: Sequence[dict] = (),
    tables: dict | None = None,
    tokens: dict | None = None,
) -> dict:
    """The claims, verdicts, data graded and every rule's operating characteristics, as JSON
    (``report.json`` and ``retcon paper-checks --json`` share it); with ``tables`` (``--design
    paper``, ``Workspace.paper_tables``) a ``tables`` block too, with ``tokens``
    (``Workspace.token_tables``) a ``tokens`` block (``tokens_json``)."""
    obj = {
        "claims": [
            {**plain(r._asdict()), **{k: plain(r.details.get(k)) for k in _RATE_KEYS}}
            for r in results
        ],
        "verdicts": {r.claim_id: r.verdict for r in results},
        "data": plain(list(data)),
        "operating_characteristics": {
            r.claim_id: plain(r.details.get("operating_characteristics")) for r in results
        },
    }
    if tables is not None:
        obj["tables"] = plain(tables)
    if tokens is not None:
        obj["tokens"] = tokens_json(tokens)
    return obj


def tokens_json(tokens: dict) -> dict:
    """The ``tokens`` block: per real-data source (``paired:<reader>``, ``locomo:<reader>``)
    ``{"rows": oas.token_json(rows)}`` (one row per action and budget; NaN as ``null``), or
    ``{"skipped": reason}`` where the source's rows carry no ``evidence_structure``."""
    return {
        unit: {"skipped": v} if isinstance(v, str) else {"rows": plain(token_json(v))}
        for unit, v in tokens.items()
    }


def tokens_markdown(tokens: dict) -> str:
    """REPORT.md's tokens beside accuracy: ``oas.token_markdown`` per real-data source, its
    heading naming the source; a skipped source says why."""
    parts = []
    for unit, v in tokens.items():
        head = f"## Tokens beside accuracy: `{unit}`"
        if isinstance(v, str):
            parts.append(f"{head}\n\nNot measured: {v}.\n")
        else:
            parts.append(token_markdown(v).replace("## Tokens beside accuracy", head, 1))
    return "\n".join(parts)


#: Each claim's rates, lifted to the claim's top level in the JSON (None: not measured).
_RATE_KEYS = ("false_pass_rate", "false_fail_rate", "power_paper_effect", "power_half_effect")


def append_section(out_dir, json_name: str, section: dict, markdown: str) -> None:
    """Write ``section`` as ``out_dir/json_name`` and append ``markdown`` to ``out_dir/REPORT.md``
    (both atomically); the ungraded "beyond the paper" sections use it."""

    out = Path(out_dir)
    write_json_atomic(out / json_name, to_jsonable(section))
    report = out / "REPORT.md"
    text = report.read_text(encoding="utf-8") if report.is_file() else ""
    write_text_atomic(report, text.rstrip("\n") + "\n\n" + markdown)
