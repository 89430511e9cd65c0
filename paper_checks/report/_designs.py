"""``--design both``: the two LoCoMo designs side by side (issue 46 item 7).

Each design's full report is its own folder (``ours/``, ``paper/``), the same files a run of that
design alone writes; this module writes the summary above them: per operator the crossover
``B*`` with its interval under each design and one line on how the designs differ, then each
claim's verdict under each. What sets the designs apart comes from one place,
``paper_checks._config.DESIGN_TRAITS`` (claim 1's summary says it too).

References: MODEL §6.1 (``B*``), §9 (LoCoMo), §11 (the paper's design).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from paper_checks._config import DESIGN_OPTION, DESIGN_TRAITS, other_design
from paper_checks._types import ClaimResult, Estimate
from paper_checks.report._report import plain
from retcon.output import sidecar, write_json_atomic, write_text_atomic

#: The files of the summary, written above the designs' folders.
DESIGNS_MD, DESIGNS_JSON = "DESIGNS.md", "designs.json"


def _fmt(op: dict | None) -> str:
    """``838 [341, 1443]``, or ``none (status none)`` when the design's curve has no crossover."""
    if op is None:
        return "-"
    cb = op["crossover_budget"]
    vals = cb.values() if isinstance(cb, dict) else cb  # plain JSON (None for NaN) or Estimate
    est = Estimate(*(float("nan") if v is None else float(v) for v in vals))
    return est.fmt() if est.defined else f"no crossover (status {op['status']})"


def operator_line(op: str, crossovers: Mapping[str, dict]) -> str:
    """One line for operator ``op``: its ``B*`` under each design with the tokens, packing and
    budget grid it is measured on (``DESIGN_TRAITS``)."""
    parts = []
    for design, cx in crossovers.items():
        name = DESIGN_OPTION[design][0]
        if "skipped" in cx:
            parts.append(f"not measured under {name} ({cx['skipped']})")
            continue
        traits, (lo, hi) = DESIGN_TRAITS[design], cx["budgets"]
        parts.append(
            f"{_fmt(cx['operators'].get(op))} under {name} ({traits['tokens']}, "
            f"{traits['packing']}, budgets {lo:g}-{hi:g})"
        )
    return f"{op}: B* {' vs '.join(parts)}"


#: Said once under the operators' lines: why their crossovers differ.
DIFFER = (
    "the designs differ in questions, budgets, packing and tokens, so their crossovers are on "
    "different scales and neither stands in for the other"
)


def designs_summary(
    crossovers: Mapping[str, dict], results: Mapping[str, Sequence[ClaimResult]]
) -> dict:
    """The side-by-side summary as JSON.

    Args:
      crossovers: per design, ``paper_checks.design_crossovers`` of its workspace.
      results: per design, the claims' results in order.

    Returns:
      ``{"designs": {design: {"folder", "traits", ...crossovers}}, "operators": [{"operator",
      <design>: {"crossover_budget", "status"} or None, "line"}], "claims": [{"claim_id",
      <design>: verdict}], "differ": {aspect: {design: trait}}}``.
    """
    designs = list(crossovers)
    ops: list[str] = []
    for cx in crossovers.values():
        ops += [op for op in cx.get("operators", {}) if op not in ops]
    ids: list[str] = []
    for rs in results.values():
        ids += [r.claim_id for r in rs if r.claim_id not in ids]
    verdict = {d: {r.claim_id: r.verdict for r in results.get(d, ())} for d in designs}
    return plain(
        {
            "designs": {
                d: {"folder": d, "traits": DESIGN_TRAITS[d], **crossovers[d]} for d in designs
            },
            "operators": [
                {
                    "operator": op,
                    **{d: crossovers[d].get("operators", {}).get(op) for d in designs},
                    "line": operator_line(op, crossovers),
                }
                for op in ops
            ],
            "claims": [{"claim_id": c, **{d: verdict[d].get(c) for d in designs}} for c in ids],
            "differ": {
                aspect: {d: DESIGN_TRAITS[d][aspect] for d in designs}
                for aspect in DESIGN_TRAITS[designs[0]]
            },
        }
    )


def _cell(text) -> str:
    return "-" if text is None else str(text).replace("|", "\\|")


def designs_markdown(summary: dict) -> str:
    """``DESIGNS.md``: the crossovers table, the per-operator lines, the aspects in which the
    designs differ, and the claims' verdicts under each design."""
    designs = list(summary["designs"])
    names = [DESIGN_OPTION[d][0] for d in designs]
    lines = [
        "# Paper checks: the two LoCoMo designs side by side",
        "",
        "Each design's full report is in its folder ("
        + ", ".join(f"`{summary['designs'][d]['folder']}/`" for d in designs)
        + "), the same files a run of that design alone writes.",
        "",
    ]
    for d, name in zip(designs, names):
        info = summary["designs"][d]
        lines.append(f"- {name}: {info.get('data') or 'not measured: ' + str(info.get('skipped'))}")
    operators = summary["operators"]
    lines += [
        "",
        "## Crossover budget B* (tokens, 95% CI) per operator",
        "",
        *_table(
            "operator",
            [f"B* {n}" for n in names],
            ((row["operator"], [_fmt(row[d]) for d in designs]) for row in operators),
        ),
        "",
        *(f"- {row['line']}." for row in operators),
        "",
        f"{DIFFER[0].upper()}{DIFFER[1:]}.",
        "",
        "## How the designs differ",
        "",
        *_table(
            "aspect", names, ((k, [by[d] for d in designs]) for k, by in summary["differ"].items())
        ),
        "",
        "## Verdicts",
        "",
        *_table(
            "claim", names, ((r["claim_id"], [r[d] for d in designs]) for r in summary["claims"])
        ),
        "",
    ]
    return "\n".join(lines)


def _table(head: str, columns: list[str], rows) -> list[str]:
    """A markdown table: ``head`` over the rows' names, ``columns`` over their cells; ``rows``
    are ``(name, cells)``, one cell per column."""
    return [
        f"| {head} | " + " | ".join(columns) + " |",
        "| --- | " + " | ".join("---" for _ in columns) + " |",
        *(f"| {name} | " + " | ".join(_cell(c) for c in cells) + " |" for name, cells in rows),
    ]


def designs_text(summary: dict) -> list[str]:
    """The lines ``retcon paper-checks --design both`` prints after each design's verdicts."""
    designs = list(summary["designs"])
    out = ["both designs, crossover B* (tokens) per operator:"]
    out += [f"  {row['line']}" for row in summary["operators"]] + [f"  ({DIFFER})"]
    out.append(
        "verdicts: "
        + "; ".join(
            f"claim {row['claim_id']} "
            + " / ".join(f"{_cell(row[d])} ({DESIGN_OPTION[d][0]})" for d in designs)
            for row in summary["claims"]
        )
    )
    return out


def crossover_lines(results: Sequence[ClaimResult], design: str) -> list[str]:
    """The two lines a run of ``design`` prints after its verdicts: claim 1's LoCoMo crossover
    ``B*`` per operator, and how the other design differs (issue 46 item 7); none when claim 1
    graded no LoCoMo (``--paired``, ``--sim-only``, or claim 1 not run)."""
    for r in results:
        curves = r.details.get("curves") or {} if r.claim_id == "1" else {}
        unit = next((u for u in curves if u.startswith("locomo:")), None)
        if unit is not None:
            ops = ", ".join(f"{op} {_fmt(c)}" for op, c in curves[unit].items())
            return [
                f"crossover B* (tokens) on {unit} under {DESIGN_OPTION[design][0]}: {ops}",
                other_design(design),
            ]
    return []


def write_designs(out_dir, summary: dict, *, config, seed: int, command: str) -> None:
    """Write ``DESIGNS.md`` and ``designs.json`` under ``out_dir`` (atomically), the JSON with the
    run's sidecar: ``config`` (a ``CheckConfig`` of either design) recorded with design ``both``."""
    out = Path(out_dir)
    cfg = {**plain(config), "design": "both"}
    obj = {**summary, "sidecar": plain(sidecar(cfg, seed=seed, command=command))}
    write_text_atomic(out / DESIGNS_MD, designs_markdown(summary))
    write_json_atomic(out / DESIGNS_JSON, obj)
