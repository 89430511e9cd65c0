"""``retcon paper-checks``: the claim-by-claim reproduction report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NamedTuple

from retcon.vocab import READERS


def register(subparsers) -> None:
    from retcon.commands.common import add_common, list_type

    p = subparsers.add_parser(
        "paper-checks",
        help="check the paper's claims one by one; write REPORT.md, report.json, figures",
        description="Check the paper's nine claims on LoCoMo, with theory and simulation shown "
        "beside them, each with its 95% CI and a verdict computed from the real data (PASS / "
        "PARTIAL / FAIL; INCONCLUSIVE when the data cannot decide; SKIPPED when the data is "
        "absent). Fast by default (minutes); --full for paper scale.",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="paper scale (large simulations, all of LoCoMo, 2000 resamples; with --paired: the "
        "2000 resamples)",
    )
    p.add_argument(
        "--data",
        metavar="PATH",
        default=None,
        help="LoCoMo locomo10.json (default: $RETCON_DATA_DIR/locomo10.json or the data cache)",
    )
    p.add_argument(
        "--sim-only",
        action="store_true",
        help="go on when no LoCoMo file is found: theory and simulation only, the LoCoMo claims "
        "SKIPPED (without it, paper-checks stops at once with an error when LoCoMo is missing)",
    )
    p.add_argument(
        "--claims",
        type=list_type(str, what="claim ids", example="1,4,7"),
        metavar="IDS",
        default=None,
        help="comma-separated claim ids (default: all)",
    )
    p.add_argument(
        "--limit",
        metavar="N",
        type=int,
        default=None,
        help="LoCoMo questions to use, spread over the conversations (default: 500; all with --full)",
    )
    p.add_argument("--no-figures", action="store_true", help="skip the figures")
    p.add_argument(
        "--timing",
        action="store_true",
        help="the wall-clock seconds of each stage (each claim, each data source built): as "
        "`timing` in --json, else on stderr; never in report.json, so the same seed gives the "
        "same bytes",
    )
    p.add_argument(
        "--magnitude",
        action="store_true",
        help="add the ungraded section 'beyond the paper: magnitude' (needs --out): the "
        "identified reader's predicted vs observed crossover (retcon identify)",
    )
    p.add_argument(
        "--end-to-end",
        action="store_true",
        help="add the section 'beyond the paper: end to end' (needs --out): LoCoMo paired with "
        "the gold evidence, with BM25-retrieved evidence, and with retrieved evidence and a "
        "predicted type, side by side; does OAS's gain over best-fixed survive? (minutes)",
    )
    p.add_argument(
        "--over-time",
        action="store_true",
        help="add the ungraded section 'beyond the paper: memory over time' (needs --out): "
        "inverted U in passes, geometric loss per pass, budget-aware vs overflow and retain-all",
    )
    p.add_argument(
        "--paired",
        metavar="FILE",
        action="append",
        default=None,
        help="grade this paired-data file (docs/paired-data.md) instead of LoCoMo: claims 1-3 and "
        "5-9 on the first file, claim 4 on the others (a second file is a second reader); "
        "repeatable",
    )
    p.add_argument(
        "--reader-name",
        metavar="NAME",
        action="append",
        default=None,
        help="the reader's name for each --paired file, in order (default: the file's stem)",
    )
    p.add_argument(
        "--locomo-audit",
        metavar="FILE",
        default=None,
        help="add the section 'robustness' (needs --out): the claims and crossovers on LoCoMo "
        "and on LoCoMo with this audit (errors.json of dial481/locomo-audit) applied, side by side",
    )
    p.add_argument(
        "--audit-mode",
        metavar="MODES",
        default=None,
        help="with --locomo-audit: drop|correct|cite, comma-combinable (default drop,cite)",
    )
    p.add_argument(
        "--design",
        choices=["ours", "paper", "both"],
        default="ours",
        help="paper: LoCoMo under the paper's design (75-question stratified sample, budgets "
        "16-128, cheapest-first packing, alphanumeric tokens, capped records, its features 3 and "
        "6) and a 'tables' block (TABLES.md with --out): Tables 4 and 8 beside the paper's; "
        "both: ours and paper on the same --data, each design's report in its own folder of --out "
        "(ours/, paper/) and DESIGNS.md, designs.json above them: per operator the crossover "
        "under each design and how the designs differ",
    )
    p.add_argument(
        "--protocol",
        choices=["oracle", "end-to-end"],
        default="oracle",
        help="with --design paper: oracle (default, the controlled design) or end-to-end (the "
        "paper's full-history design: BM25 top 20 turns of the whole conversation capped at "
        "2,048 tokens, retention in rank order; makes Tables 6 and 12)",
    )
    p.add_argument(
        "--tables-only",
        action="store_true",
        help="with --design paper: the paper's tables beside ours and no claim (no simulation "
        "of the claims' rules); seconds on a small file",
    )
    p.add_argument(
        "--second-reader",
        metavar="FILE",
        default=None,
        help="with --design paper: a paired file of the same design, dataset, question ids and "
        "budgets made with a second answer model (e.g. `retcon pair longmemeval --design paper "
        "--reader llm` with another model, or another --reader); makes Table 5 from its rows "
        "beside the paper's GLM-5.2 values",
    )
    from retcon.commands.eee_export import add_export_option

    add_export_option(p)
    add_common(p, figures=True)
    p.set_defaults(func=run)


def run_config(args: argparse.Namespace):
    """The run's ``CheckConfig`` from its options. The config checks its own fields (a positive
    ``--limit``, ``--protocol`` and ``--second-reader`` only under ``--design paper``, one
    ``--reader-name`` per ``--paired`` file, names that differ) and, on the command line, names
    the option (``paper_checks._config.CONFIG_SPELL``); the rules checked here are the command's
    own. ``--design both`` gives the config of ours (``paper_checks.design_workspaces`` makes
    both)."""
    from paper_checks import CheckConfig
    from retcon.errors import InputError

    second = getattr(args, "second_reader", None)
    if args.paired:
        overrides = paired_overrides(args)
    else:
        if args.design == "paper" and args.limit is not None:
            raise InputError(
                "--limit: --design paper uses the paper's 75-question sample; got --limit "
                f"{args.limit}. Drop --limit, or use --design ours."
            )
        overrides = {"data": args.data, "protocol": args.protocol}
        if args.design == "paper":
            overrides["design"] = "paper"
        if args.limit is not None:
            overrides["locomo_limit"] = args.limit
    if second is not None:  # absent: the config as before
        overrides["second_reader"] = second
    return CheckConfig.full_scale(**overrides) if args.full else CheckConfig.fast(**overrides)


def paired_overrides(args: argparse.Namespace) -> dict:
    """The ``CheckConfig`` fields of a ``--paired`` run: the files, one reader name each, no
    LoCoMo and no simulation shown (the report is about the files)."""
    from retcon.errors import InputError

    for opt, bad in (
        ("--data", args.data is not None),
        ("--limit", args.limit is not None),
        ("--magnitude", args.magnitude),
        ("--end-to-end", args.end_to_end),
    ):
        if bad:
            raise InputError(
                f"{opt} applies to LoCoMo paired by paper-checks itself; with --paired the "
                "files are the data. Drop one of them."
            )
    files = list(args.paired)
    names = list(args.reader_name) if args.reader_name else [Path(f).stem for f in files]
    return dict(paired=tuple(files), readers=tuple(names), scenarios=(), design=args.design)


def check_paper_design(option: str, path, data) -> None:
    """Refuse paired rows not made by the paper's design (``meta_design``, ``"ours"`` where the
    column is absent) for ``--design paper``: its tables would be filled from another protocol.

    Raises:
      InputError: naming ``option`` and the file, the design expected and the one found.
    """
    import numpy as np

    from retcon.errors import InputError

    col = (getattr(data, "meta", None) or {}).get("meta_design")
    names = sorted(set(np.asarray(col).astype(str).tolist())) if col is not None else ["ours"]
    if names != ["paper"]:
        raise InputError(
            f"{option} {path}: its rows are of design {'/'.join(names)}; --design paper makes the "
            "paper's tables from rows of the paper's design (retcon pair ... --design paper)."
        )


def _check_locomo_data(data) -> None:
    """``--data`` (a file, or a folder holding ``locomo10.json``) read and refused when the checks
    cannot run on it: not LoCoMo, fewer than 2 conversations, one without sessions or questions.

    Raises:
      InputError: one line naming ``--data``.
    """
    from oas.real import check_locomo_stream, load_locomo
    from retcon.errors import InputError

    p = Path(data)
    path = p / "locomo10.json" if p.is_dir() else p
    try:
        convs = load_locomo(path).conversations
    except InputError as e:
        raise InputError(f"--data: {e}") from None
    # the LoCoMo claims and tables cross-fit over conversations, each with questions
    check_locomo_stream(
        convs,
        data,
        least=2,
        each_asked=True,
        user="paper-checks",
        why_each="the checks fold and resample conversations by their questions",
    )


def check_locomo_given(data, sim_only: bool) -> None:
    """Before anything heavy is imported: ``--data`` names an existing file (or folder holding
    ``locomo10.json``), or LoCoMo is found in ``$RETCON_DATA_DIR`` or the data cache, or
    ``--sim-only`` says to go on without it (the LoCoMo claims SKIPPED).

    Raises:
      InputError: one line naming what is missing and the fix.
    """
    import os

    from oas.real import cached_path
    from retcon.errors import InputError

    name = "locomo10.json"
    if data is not None:
        if sim_only:
            raise InputError("--sim-only runs without LoCoMo; got --data too. Drop one of them.")
        p = Path(data)
        if not (p / name if p.is_dir() else p).is_file():
            raise InputError(
                f"--data: no such LoCoMo file {str(data)!r}; expected a path to {name}."
            )
        return
    env = os.environ.get("RETCON_DATA_DIR")
    found = [
        p for p in ([Path(env) / name] if env else []) + [cached_path("locomo")] if p.is_file()
    ]
    if not found and not sim_only:
        raise InputError(
            f"no LoCoMo file: expected --data PATH/{name}, $RETCON_DATA_DIR/{name} or the cache "
            "of `retcon data fetch locomo`; got none. Pass --sim-only to check theory and "
            "simulation only (the LoCoMo claims SKIPPED)."
        )


def run(args: argparse.Namespace) -> int:

    from retcon.commands.common import check_out
    from retcon.errors import InputError

    if args.design == "both":
        _check_both(args)
    from retcon.commands.eee_export import check_export

    check_export(args)
    claims = args.claims
    if claims is not None:  # before any work: run_checks's own check (claim_ids)
        from paper_checks import claim_ids

        claim_ids(claims)
    if getattr(args, "tables_only", False):
        if args.design != "paper":
            raise InputError(
                f"--tables-only makes the paper's tables, which need --design paper; got "
                f"--design {args.design}."
            )
        if claims is not None:
            raise InputError(
                f"--tables-only measures no claim; got --claims {','.join(claims)}. Drop one "
                "of them."
            )
        claims = []
    if args.reader_name and not args.paired:
        raise InputError("--reader-name names --paired files; give --paired FILE too.")
    if args.protocol != "oracle" and args.paired:
        raise InputError(
            f"--protocol {args.protocol} applies to LoCoMo paired by paper-checks itself; a "
            "--paired file's rows say which design made them (meta_candidates). Drop one of "
            "them."
        )
    config = run_config(args)  # the config's own checks, before any file is read
    second = config.second_reader
    if second is not None:
        if not Path(second).is_file():
            raise InputError(
                f"--second-reader: no such file {second!r}; expected a paired-data file of a "
                "second answer model (retcon pair ... --design paper --reader ...)."
            )
        from oas import read_paired

        try:  # read and its design checked before any work (the rest once the main rows exist)
            second_rows = read_paired(second)
        except InputError as e:
            raise InputError(f"--second-reader {second}: {e}") from None
        check_paper_design("--second-reader", second, second_rows)
    for flag, given in (
        ("--magnitude", args.magnitude),
        ("--end-to-end", args.end_to_end),
        ("--over-time", args.over_time),
    ):
        if given and args.out is None:
            raise InputError(f"{flag} needs --out DIR (it appends a section to DIR/REPORT.md).")
    inputs = [("--data", args.data)] + [("--paired", f) for f in args.paired or ()]
    check_out(args, inputs + ([("--second-reader", second)] if second is not None else []))
    _check_audit(args)
    from retcon.commands import _progress

    n_claims = _claims_phrase(claims)
    if args.paired:  # announced once the files are read (a refusal of one stays one line)
        return _run(args, claims, config)
    check_locomo_given(args.data, getattr(args, "sim_only", False))
    if args.data is not None:  # an odd --data refused in one line, before the announcement
        _check_locomo_data(args.data)
    on = f"LoCoMo ({args.data})" if args.data else "the simulations only (--sim-only)"
    if args.design == "both":
        on = f"LoCoMo ({args.data or 'the data cache'}) under both designs (ours, then paper)"
    _progress.announce(
        args,
        f"{n_claims} on {on} and the simulations ({'full' if args.full else 'fast'} scale); "
        "JAX compiles first, then a bar of claims with a line per stage",
    )
    from paper_checks import llm_configured  # loads the sources (JAX): after the announcement

    if llm_configured():  # claim 4: the llm reader too, when an endpoint is configured
        config = config.replace(readers=READERS)
    if args.design == "both":
        return _run_both(args, claims, config)
    return _run(args, claims, config)


def _claims_phrase(claims) -> str:
    """What the progress line says is checked: ``[]`` the tables only, a list its count, ``None``
    every claim."""
    if claims == []:
        return "the paper's tables (no claim)"
    return f"{len(claims)} claims" if claims else "the claims"


def _check_audit(args: argparse.Namespace) -> None:
    """``--locomo-audit``/``--audit-mode``: refused without --out, with --paired, or malformed."""
    from retcon.errors import InputError

    audit, mode = getattr(args, "locomo_audit", None), getattr(args, "audit_mode", None)
    if audit is None:
        if mode is not None:
            raise InputError("--audit-mode needs --locomo-audit FILE (the audit's errors.json).")
        return
    if args.paired:
        raise InputError(
            "--locomo-audit applies to LoCoMo paired by paper-checks itself; with --paired the "
            "files are the data. Drop one of them."
        )
    if args.out is None:
        raise InputError("--locomo-audit needs --out DIR (it appends a section to DIR/REPORT.md).")
    from oas.real import load_audit, parse_audit_modes

    args.audit_mode = ",".join(parse_audit_modes(mode or "drop,cite"))
    if not Path(audit).is_file():
        raise InputError(f"--locomo-audit {audit!r}: no such file.")
    load_audit(audit)  # fail early on a malformed file, before any simulation


#: The options a run of one design needs, refused with ``--design both``: (option, given?).
_ONE_DESIGN = (
    ("--tables-only", lambda a: getattr(a, "tables_only", False)),
    ("--protocol", lambda a: a.protocol != "oracle"),
    ("--second-reader", lambda a: getattr(a, "second_reader", None) is not None),
    ("--limit", lambda a: a.limit is not None),
    ("--paired", lambda a: bool(a.paired)),
    ("--sim-only", lambda a: getattr(a, "sim_only", False)),
)


def _check_both(args: argparse.Namespace) -> None:
    """``--design both`` runs the two LoCoMo designs on one ``--data``: an option that needs one
    design (``_ONE_DESIGN``) is refused in one line naming it."""
    from retcon.errors import InputError

    for opt, given in _ONE_DESIGN:
        if given(args):
            raise InputError(
                f"{opt} needs one design; --design both runs ours and paper on the same LoCoMo. "
                "Drop one of them."
            )


class _Progress:
    """The workspace's progress lines: held back until the run's files pass their checks (so a
    refusal is one line), then written above the bar."""

    def __init__(self) -> None:
        self.held: list[str] | None = []
        self.bar = None

    def __call__(self, msg: str) -> None:
        if self.held is not None:
            self.held.append(msg)
        elif self.bar is not None:
            self.bar.write(f"paper-checks: {msg}")

    def release(self, bar) -> None:
        self.bar = bar
        for msg in self.held or ():
            bar.write(f"paper-checks: {msg}")
        self.held = None


def _measure(args: argparse.Namespace, claims, ws, relay: _Progress):
    """Check the run's files, then measure the claims on the workspace ``ws`` (its progress goes
    to ``relay``). Returns ``(results, ws, flagged)``, flagged: the lenient-judge warnings."""
    from paper_checks import CHECKS, run_checks
    from retcon.commands import _progress

    config = ws.config
    bar = _progress.bar(args, unit="claim")
    for reader, path in zip(config.readers, config.paired) if config.paired else ():
        # every file read and validated before any claim is measured
        check_paired_groups(ws.paired_source(reader))
        if config.design == "paper":  # the paper's tables from rows of another design: refused
            check_paper_design("--paired", path, ws.paired_source(reader).data)
    if config.second_reader is not None:  # Table 5's file checked before any claim is measured
        ws.second_reader()
    flagged = ws.judge_flags()
    for line in flagged:  # a lenient judge's accuracies: said before and after the verdicts
        print(f"retcon paper-checks: warning: {line}", file=sys.stderr)
    if config.paired:
        n_claims = _claims_phrase(claims)
        _progress.announce(args, f"{n_claims} on the --paired files; a bar of claims follows")
    relay.release(bar)
    total = len(CHECKS) if claims is None else len(claims)
    started = [0]

    def claim_started(msg: str) -> None:  # run_checks: "claim N" as each claim starts
        if msg.startswith("claim "):
            bar.update(started[0], total)
            started[0] += 1
        bar.note(msg)

    with bar:
        results, ws = run_checks(
            config, seed=args.seed, claims=claims, workspace=ws, progress=claim_started
        )
        bar.update(total, total)
    return results, ws, flagged


def _write(args: argparse.Namespace, out_dir, results, ws, claims, command: str):
    """Write one design's report set under ``out_dir`` (REPORT.md, report.json, report.html,
    figures, the optional sections), atomically as one ``OutputSet``; report.html names
    ``command``. Returns ``(report, end_to_end section or None, names written)``."""
    from paper_checks import append_sections, write_run
    from retcon.output import OutputSet

    with OutputSet(out_dir, last=("report.json", "REPORT.md")) as out:
        report = write_run(
            out.stage,
            results,
            ws,
            figures=not args.no_figures,
            figure_format=getattr(args, "format", "png"),
            command_line=command,
        )
        sections = append_sections(
            out.stage,
            results,
            ws,
            magnitude=args.magnitude,
            end_to_end=args.end_to_end,
            locomo_audit=getattr(args, "locomo_audit", None),
            audit_mode=getattr(args, "audit_mode", None) or "drop,cite",
            over_time=args.over_time,
            claims=claims,
            note=lambda statement: print(statement, file=sys.stderr),
        )
    return report, sections.get("end_to_end"), out.names


def _wrote_line(names, folder) -> str:
    figs = [n for n in names if n.endswith((".png", ".pdf", ".svg"))]
    rest = [n for n in names if n not in figs]
    return f"wrote {', '.join(rest)} and {len(figs)} figures to {folder}"


def _result_lines(results, design: str, flagged, end_to_end) -> list[str]:
    """The verdicts as ``retcon paper-checks`` prints them, with the LoCoMo crossovers and the
    line on the other design, the judge warnings and the end-to-end verdicts."""
    from paper_checks import crossover_lines, format_claims

    lines = format_claims(results) + crossover_lines(results, design) + flagged
    if end_to_end is not None:
        if "skipped" in end_to_end:
            lines.append(f"end to end: skipped ({end_to_end['skipped']})")
        for v in end_to_end.get("verdicts", []):
            lines.append(f"end to end: {v['answer']:<9}  {v['statement']}: {v['evidence']}")
    return lines


def _timing(args: argparse.Namespace, ws) -> dict | None:
    """``--timing``: each stage's seconds (on stderr without --json); None without it."""
    if not args.timing:
        return None
    from paper_checks import stage_timings

    stages = stage_timings(ws)
    if not args.json:
        for name, sec in stages:
            print(f"timing: {name:<40} {sec:8.2f} s", file=sys.stderr)
    return {
        "stages": [{"stage": name, "seconds": round(sec, 3)} for name, sec in stages],
        "total_s": round(sum(sec for _, sec in stages), 3),
    }


def _json(done: _Done) -> dict:
    """The ``--json`` object of one design's run: report.json's body, the end-to-end verdicts and
    the timings."""
    from paper_checks import report_json

    ws = done.ws
    obj = done.report or report_json(
        done.results, ws.data_sources(), ws.paper_tables(), ws.token_tables()
    )
    if done.end_to_end is not None:
        obj = {**obj, "end_to_end": _end_to_end_json(done.end_to_end)}
    if done.timing is not None:
        obj = {**obj, "timing": done.timing}
    return obj


class _Done(NamedTuple):
    """One design's run: its results and workspace, the judge warnings, what ``--out`` got (the
    report, the end-to-end section, the files' names) and its ``--timing``."""

    results: list
    ws: Any
    flagged: list[str]
    report: dict | None
    end_to_end: dict | None
    names: list[str]
    timing: dict | None


def _one_design(args, claims, ws, relay: _Progress, out_dir, command: str) -> _Done:
    """Measure the claims on ``ws`` and, with ``out_dir``, write its report set there."""
    results, ws, flagged = _measure(args, claims, ws, relay)
    report, end_to_end, names = None, None, []
    if out_dir is not None:
        report, end_to_end, names = _write(args, out_dir, results, ws, claims, command)
    return _Done(results, ws, flagged, report, end_to_end, names, _timing(args, ws))


def _done_lines(done: _Done, design: str, out_dir) -> list[str]:
    """What a design's run prints: its verdicts and lines, then the files it wrote."""
    lines = _result_lines(done.results, design, done.flagged, done.end_to_end)
    if out_dir is not None and done.report is not None:  # every file: TABLES.md, sections...
        lines.append(_wrote_line(done.names, out_dir))
    return lines


def _run(args: argparse.Namespace, claims, config) -> int:
    """Measure the claims on ``config``'s data, write the report, print the verdicts."""
    from paper_checks import Workspace, report_json
    from retcon.commands.common import command_line, emit, enable_compile_cache

    enable_compile_cache()  # XLA's compiled kernels kept across runs, as `simulate` does
    relay = _Progress()
    ws = Workspace(config, args.seed, progress=relay)
    done = _one_design(args, claims, ws, relay, args.out, command_line())
    if getattr(args, "export", None) is not None:
        from retcon.commands.eee_export import export

        ws = done.ws
        full = done.report or report_json(done.results, ws.data_sources(), ws.paper_tables())
        names = export(args, ws, full, config.readers[0])
        print(f"retcon paper-checks: wrote {', '.join(names)}", file=sys.stderr)
    obj = _json(done) if args.json else None
    emit(args, obj, lambda: "\n".join(_done_lines(done, config.design, args.out)))
    return 0


def single_design_command(argv: list[str], design: str) -> list[str]:
    """``argv`` of a ``--design both`` run as the run of ``design`` alone that writes the same
    folder: ``--design both`` becomes ``--design <design>``, ``--out DIR`` ``--out DIR/<design>``.
    Its report.html names this command, so a design's folder is that run's, byte for byte."""
    out, it = [], iter(argv)
    for a in it:
        if a in ("--design", "--out"):
            v = next(it, "")
            out += [a, design if a == "--design" else str(Path(v) / design)]
        elif a.startswith("--design="):
            out.append(f"--design={design}")
        elif a.startswith("--out="):
            out.append(f"--out={Path(a[len('--out=') :]) / design}")
        else:
            out.append(a)
    return out


def _run_both(args: argparse.Namespace, claims, config) -> int:
    """``--design both``: the claims under ours and under the paper's design on the same LoCoMo,
    the design-free sources (theory, the simulations) measured once; each design's report set in
    ``--out``'s folder of its name, the side-by-side summary (DESIGNS.md, designs.json) above."""
    import shlex

    from paper_checks import design_workspaces, designs_side_by_side, designs_text, write_designs
    from retcon.commands.common import ARGV, command_line, emit, enable_compile_cache
    from retcon.output import OutputSet

    enable_compile_cache()
    relay = _Progress()
    runs: dict[str, _Done] = {}
    for design, ws in design_workspaces(config, args.seed, progress=relay).items():
        relay.held = []  # each design's lines above its own bar
        out_dir = None if args.out is None else Path(args.out) / design
        cmd = shlex.join(["retcon", *single_design_command(list(ARGV), design)])
        runs[design] = _one_design(args, claims, ws, relay, out_dir, cmd)
    summary = designs_side_by_side({d: (r.results, r.ws) for d, r in runs.items()})
    top = []
    if args.out:
        with OutputSet(args.out, last=("designs.json",)) as out:  # its sidecar last
            write_designs(out.stage, summary, config=config, seed=args.seed, command=command_line())
        top = out.names

    def text() -> str:
        lines = []
        for design, done in runs.items():
            out_dir = None if args.out is None else Path(args.out) / design
            lines += [f"== --design {design} ==", *_done_lines(done, design, out_dir)]
        lines += designs_text(summary)
        if args.out:
            lines.append(f"wrote {', '.join(top)} to {args.out}")
        return "\n".join(lines)

    obj = None
    if args.json:
        obj = {"designs": {d: _json(r) for d, r in runs.items()}, "side_by_side": summary}
    emit(args, obj, text)
    return 0


def check_paired_groups(src) -> None:
    """Refuse a ``--paired`` file whose groups cannot carry the claims' cluster inference (MODEL
    §6): at least 2 groups (G), and at least one group of 2 or more rows (a file of groups of one
    row each has no within-group variation for the wild cluster bootstrap).

    Args:
      src: the file's ``paper_checks.PairedSource``.

    Raises:
      InputError: naming ``--paired``, the file, what is needed and what it holds.
    """
    import numpy as np

    from retcon.errors import InputError

    where = f"--paired {src.path}"
    if src.n_groups < 2:
        raise InputError(
            f"{where}: needs at least 2 groups (group_id) for the cluster bootstrap; the file "
            f"holds {src.n_groups} group(s) in {src.n_rows} row(s)."
        )
    _, counts = np.unique(np.asarray(src.data.group_id).astype(str), return_counts=True)
    if counts.max() < 2:
        raise InputError(
            f"{where}: every one of its {src.n_groups} groups (group_id) holds a single row; the "
            "claims need groups of at least 2 rows (rows of one conversation share its group_id)."
        )


def _end_to_end_json(section: dict) -> dict:
    """The end-to-end section for ``--json``: its verdicts and gap (the full runs are in
    ``end_to_end.json``)."""
    return {k: section[k] for k in ("skipped", "data", "verdicts", "gap") if k in section}
