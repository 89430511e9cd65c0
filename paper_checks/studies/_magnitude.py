"""Beyond the paper: magnitude. The identified reader predicts the crossover budget (MODEL §2, §6).

The paper's model explains the direction of the budget effect, not its size: its fidelities are
never identified. This section fits the reader of MODEL §2 to the run's paired data
(``oas.identify_report``: ``g``, ``a_t``, ``phi_{o,t}`` by maximum likelihood with grouped-bootstrap
CIs), predicts every operator's crossover budget on held-out groups and sets it beside the
observed one. It is reported, never graded: no claim of the paper is at stake.

References: MODEL §2, §6, §8.
"""

from __future__ import annotations

import numpy as np

from oas import identify_report
from paper_checks.report._report import append_section
from retcon.vocab import OPERATORS
from theory import format_crossover

SOURCES = (
    ("sim:locomo-like", "sim_paired", "locomo-like"),
    ("locomo:lexical", "locomo_paired", "lexical"),
)


def magnitude_section(ws, *, folds: int = 5, n_resamples: int = 100) -> dict:
    """``{source: report}`` for the simulated and the LoCoMo paired data of the workspace.

    A source that cannot be built (no data, a missing dependency) is recorded as skipped.
    """
    out: dict = {}
    for name, method, arg in SOURCES:
        try:
            data = getattr(ws, method)(arg)
            groups = np.unique(np.asarray(data.group_id).astype(str)).size
            out[name] = identify_report(
                data,
                key=ws.key(f"magnitude:{name}"),
                folds=min(folds, groups),
                n_resamples=n_resamples,
                n_strata=3,
                diagnostics=False,
            )
        except Exception as e:
            out[name] = {"skipped": f"{type(e).__name__}: {e}"}
    return out


def magnitude_markdown(section: dict) -> str:
    """The REPORT.md section: predicted vs observed crossover per source, operator and stratum."""
    lines = [
        "## Beyond the paper: magnitude",
        "",
        "The reader of MODEL §2 identified from the paired data (out of fold, group folds) "
        "predicts each operator's crossover budget; observed = the data's own curve "
        "(`theory.grid_crossover`). 95% intervals: predicted from bootstrap refits of the reader, "
        "observed from resampled groups. Not graded.",
        "",
        "| source | rows | operator | predicted B* | observed B* |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, rep in section.items():
        if "skipped" in rep:
            lines.append(f"| {name} | - | - | skipped: {rep['skipped']} | - |")
            continue
        sets = [("all", rep["overall"])] + [(s["label"], s) for s in rep["strata"]]
        for label, c in sets:
            for o in OPERATORS:
                x = c["crossover"][o]
                lines.append(
                    f"| {name} {label} | {c['n_rows']} | {o} | {_fmt(x['predicted'])} "
                    f"| {_fmt(x['observed'])} |"
                )
    return "\n".join(lines) + "\n"


def _fmt(x: dict) -> str:

    return format_crossover(x.get("budget"), x.get("lower"), x.get("upper"), str(x.get("status")))


def append_magnitude(out_dir, ws, **kwargs) -> dict:
    """Write ``magnitude.json`` and append the section to ``REPORT.md`` under ``out_dir``."""

    section = magnitude_section(ws, **kwargs)
    append_section(out_dir, "magnitude.json", section, magnitude_markdown(section))
    return section


__all__ = ["append_magnitude", "magnitude_markdown", "magnitude_section"]
