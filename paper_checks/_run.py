"""Run the claim checks and write the report with its figures."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from paper_checks._config import CheckConfig
from paper_checks._types import SKIPPED, ClaimResult, Estimate
from paper_checks.claims._all import CHECKS
from paper_checks.claims._sources import DataMissing, DependencyMissing, Workspace
from paper_checks.report._designs import designs_summary
from paper_checks.report._figures import report_figures
from paper_checks.report._html import write_html
from paper_checks.report._report import write_report
from paper_checks.rules._oc import rule_operating_characteristics
from retcon.errors import InputError


def claim_ids(claims: Sequence[str] | None) -> list[str]:
    """The claim ids ``claims`` names (all, in order, for None), each checked against ``CHECKS``.

    Raises:
      InputError: naming ``--claims``, the unknown id and the ids there are.
    """
    ids = list(CHECKS) if claims is None else [str(c) for c in claims]
    unknown = [c for c in ids if c not in CHECKS]
    if unknown:
        raise InputError(
            f"--claims: unknown claim {unknown[0]!r}; expected ids among {list(CHECKS)}."
        )
    return ids


def run_checks(
    config: CheckConfig | None = None,
    *,
    seed: int = 0,
    claims: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    workspace: Workspace | None = None,
) -> tuple[list[ClaimResult], Workspace]:
    """Check the paper's claims (all, or the ids in ``claims``) and return the results in order.

    Args:
      config: scale and thresholds; default ``CheckConfig.fast()``.
      seed: root JAX key of the run (each source folds in its own id).
      claims: ids ``"1"`` .. ``"9"``; None means all.
      progress: called with the name of each source as it starts (for a progress line).
      workspace: reuse a workspace (its memoized sources) instead of building one.

    Returns:
      ``(results, workspace)``; the workspace holds the measured sources, for figures, and the
      tokens beside accuracy of each real-data source (``Workspace.token_tables``).
    """
    config = config or CheckConfig.fast()
    ids = claim_ids(claims)
    ws = workspace or Workspace(config, seed, progress=progress)
    results = []
    for cid in ids:
        if progress:
            progress(f"claim {cid}")
        result = ws.timed(f"claim {cid}", lambda cid=cid: CHECKS[cid](ws))
        results.append(
            ws.timed(
                f"operating characteristics {cid}",
                lambda r=result: with_operating_characteristics(r, ws),
            )
        )
    ws.token_tables()  # tokens beside accuracy of the real data read (timed, once per source)
    if ws.config.design == "paper":  # the paper's tables beside ours (paper_checks.tables._design)
        if progress:
            progress("tables")
        ws.paper_tables()
    return results, ws


#: The sources no LoCoMo design reads (theory, the simulations): ``--design both`` measures each
#: once and the two designs' workspaces share it (``design_workspaces``).
DESIGN_FREE = ("theory:", "sim:", "sim-paired:")

#: The designs ``--design both`` runs, in the order they run and are shown.
BOTH_DESIGNS = ("ours", "paper")


class _SharingWorkspace(Workspace):
    """A ``Workspace`` whose design-free sources (``DESIGN_FREE``) come from ``shared`` when
    another design's workspace measured them, and go there when this one measures them first.

    A source enters this workspace's memo when a claim first asks for it, as in a workspace of
    its own, so the memo's order (the figures' panels) and every byte written are a
    single-design run's; the shared source's seconds are counted once, where it was measured."""

    def __init__(self, config: CheckConfig, seed: int, *, shared: dict, progress=None):
        super().__init__(config, seed, progress=progress)
        self._shared = shared

    def _get(self, name, make):
        free = name.startswith(DESIGN_FREE)
        if free and name not in self._memo and name in self._shared:
            self._memo[name] = self._shared[name]
        try:
            return super()._get(name, make)
        finally:
            if free and name in self._memo:
                self._shared.setdefault(name, self._memo[name])


def design_workspaces(
    config: CheckConfig,
    seed: int = 0,
    *,
    designs: Sequence[str] = BOTH_DESIGNS,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Workspace]:
    """One workspace per LoCoMo design (``config`` with ``design`` replaced), sharing the sources
    that read no LoCoMo (theory and the simulations): ``--design both``.

    Each workspace, given to ``run_checks``, measures what a run of its design alone measures at
    the same seed (the shared sources are the same arrays, from the same keys), so its outputs
    are that run's, byte for byte.

    Raises:
      InputError: ``config`` grades ``--paired`` files (their rows carry one design) or asks for
        what only the paper's design makes (``protocol``, ``second_reader``).
    """
    if config.paired:
        raise InputError(
            "CheckConfig.design 'both': paired files carry the design that made their rows; "
            "grade them under that one design."
        )
    shared: dict = {}
    return {
        d: _SharingWorkspace(config.replace(design=d), seed, shared=shared, progress=progress)
        for d in designs
    }


def design_crossovers(ws: Workspace) -> dict:
    """The main reader's LoCoMo crossover ``B*`` per operator under ``ws``'s design (MODEL §6.1;
    the curves claim 1 grades, measured now if no claim asked for them).

    Returns:
      ``{"design", "unit", "data", "budgets": [lo, hi], "operators": {op: {"crossover_budget":
      Estimate, "status"}}}``; ``{"design", "skipped": reason}`` when LoCoMo is absent.
    """
    reader = ws.config.readers[0]
    design = ws.config.design
    try:
        curves = ws.real_curves(reader)
        label = ws.real_label(reader)
    except (DataMissing, DependencyMissing) as e:
        return {"design": design, "skipped": str(e)}
    ops = curves.operators
    budgets = next(iter(ops.values())).budgets
    return {
        "design": design,
        "unit": ws.unit(reader),
        "data": label,
        "budgets": [float(min(budgets)), float(max(budgets))],
        "operators": {
            op: {"crossover_budget": Estimate(*c.crossover), "status": str(c.status)}
            for op, c in ops.items()
        },
    }


def designs_side_by_side(runs: dict[str, tuple[Sequence[ClaimResult], Workspace]]) -> dict:
    """The ``--design both`` summary (``paper_checks.report._designs.designs_summary``) of
    ``{design: (results, workspace)}``: per operator the crossover under each design
    (``design_crossovers``) and each claim's verdicts. Call it after the designs' reports are
    written: a crossover no claim asked for is measured here."""
    return designs_summary(
        {d: design_crossovers(ws) for d, (_, ws) in runs.items()},
        {d: results for d, (results, _) in runs.items()},
    )


def stage_timings(ws: Workspace) -> list[tuple[str, float]]:
    """Where a run's wall time went: ``(stage, seconds)`` in the order the stages ended.

    A stage is a claim (``"claim 4"``: its own work, without the sources it built), the operating
    characteristics added to a claim that carries none (``"operating characteristics 4"``), or
    a source built once and shared (its memo name: ``"locomo:sentence"``, the LoCoMo pairing of
    one reader; ``"sim-paired:<preset>"``; ``"loco:<reader>"``, ...), each without the sources
    it started itself, so the seconds add up to the run's time in ``run_checks``. Timings are
    never written to report.json (same seed, same bytes)."""
    return [(stage, float(seconds)) for stage, seconds in ws.stages]


def with_operating_characteristics(result: ClaimResult, ws: Workspace) -> ClaimResult:
    """``result`` with ``details["operating_characteristics"]``: its rule's false-PASS rate and
    power at the graded data's group count G (claim 4: the second reader's; SKIPPED: no G).

    A graded claim carries them already, simulated at its data's G by its rule's home in ``paper_checks.rules``
    (``paper_checks.operating``); they are kept. Otherwise (nothing graded) the hook
    ``paper_checks.rules._oc.rule_operating_characteristics`` says they were not measured."""
    if (result.details.get("operating_characteristics") or {}).get("false_pass_rate") is not None:
        return result
    readers = list(ws.config.readers)
    reader = readers[1] if result.claim_id == "4" and len(readers) > 1 else readers[0]
    g = None if result.verdict == SKIPPED else ws.n_groups(reader)
    oc = rule_operating_characteristics(g)
    return result._replace(details={**result.details, "operating_characteristics": oc})


def write_run(
    out_dir,
    results: Sequence[ClaimResult],
    ws: Workspace,
    *,
    figures: bool = True,
    command: str = "retcon paper-checks",
    figure_format: str = "png",
    command_line: str | None = None,
) -> dict:
    """Draw the report's figures (in ``figure_format``: png, pdf or svg) from the workspace's
    sources, then write REPORT.md, report.json and report.html (its provenance names
    ``command_line``, the whole command with its options, when given; else ``command``)."""

    out = Path(out_dir)
    paths = report_figures(out, ws, figure_format) if figures else []
    report = write_report(
        out,
        results,
        config=ws.config,
        seed=ws.seed,
        figures=paths,
        command=command,
        data=ws.data_sources(),
        tables=ws.paper_tables(),
        tokens=ws.token_tables(),
    )

    write_html(out, results, report, figures=paths, command=command_line or command)
    return report


def append_sections(
    out_dir,
    results: Sequence[ClaimResult],
    ws: Workspace,
    *,
    magnitude: bool = False,
    end_to_end: bool = False,
    locomo_audit: str | Path | None = None,
    audit_mode: str = "drop,cite",
    over_time: bool = False,
    claims: Sequence[str] | None = None,
    note: Callable[[str], None] | None = None,
) -> dict:
    """Append the optional sections to ``out_dir/REPORT.md`` after ``write_run``, in this order:
    the identified reader's magnitude (``paper_checks.studies._magnitude``), end to end
    (``paper_checks.studies._end_to_end``), robustness (``locomo_audit``: the same ``claims`` rerun on
    LoCoMo with the audit applied, ``paper_checks.studies._robustness``; its statement goes to ``note``)
    and memory over time (``paper_checks.studies._timeline``). Each writes its own JSON beside REPORT.md.

    Returns:
      ``{"end_to_end": section, "robustness": section}``, each key present when written.
    """
    log = logging.getLogger("paper_checks")
    written: dict = {}
    if magnitude:
        from paper_checks.studies._magnitude import append_magnitude

        append_magnitude(out_dir, ws)
    if end_to_end:
        from paper_checks.studies._end_to_end import append_end_to_end

        log.info("paper-checks: beyond the paper: end to end")
        written["end_to_end"] = append_end_to_end(out_dir, ws)
    if locomo_audit is not None:
        from paper_checks.studies._robustness import (
            append_robustness,
            audited_workspace,
            robustness,
        )

        log.info("paper-checks: robustness: the audited LoCoMo")
        ws_a = audited_workspace(ws, locomo_audit, audit_mode)
        after, ws_a = run_checks(ws_a.config, seed=ws.seed, claims=claims, workspace=ws_a)
        log.info("paper-checks: robustness: the audited LoCoMo, sample drawn again")
        ws_r = audited_workspace(ws, locomo_audit, audit_mode, sample="redrawn")
        redrawn, ws_r = run_checks(ws_r.config, seed=ws.seed, claims=claims, workspace=ws_r)
        section = robustness(results, ws, after, ws_a, resampled=redrawn, ws_resampled=ws_r)
        append_robustness(out_dir, section)
        written["robustness"] = section
        if note is not None:
            note(section["statement"])
    if over_time:
        from paper_checks.studies._timeline import append_timeline, locomo_or_none

        log.info("paper-checks: beyond the paper: memory over time")
        append_timeline(out_dir, locomo_or_none(ws.config.data))
    return written
