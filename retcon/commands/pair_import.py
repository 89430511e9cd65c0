"""``retcon pair import FILE``: paired data from your own per-sample evaluation logs.

Any per-sample JSONL, JSON or CSV (``--map`` gives where each field sits), Inspect AI eval logs
(``--from inspect``, read by Inspect's own reader) and Every Eval Ever instance-level samples
(``--from eee``). ``register_pair(pair_subparsers)`` adds it under ``retcon pair``.

References: MODEL §8; docs/import.md; docs/paired-data.md.
"""

from __future__ import annotations

import argparse


def register_pair(pair_subparsers) -> None:
    """Add ``import`` under ``retcon pair``."""
    from retcon.commands.common import add_common

    p = pair_subparsers.add_parser(
        "import",
        help="paired data from your own per-sample eval logs (JSONL/JSON/CSV, Inspect, EEE)",
        description="Paired data (docs/paired-data.md) from per-sample evaluation logs with one "
        "record per (question, budget, action): --map says where each field sits, as dotted "
        "paths into nested records (docs/import.md). Records that do not pair (an action "
        "missing for a question and budget) are refused, the first few named.",
    )
    p.add_argument("file", metavar="FILE", help="the per-sample log")
    p.add_argument(
        "--map",
        dest="mapping",
        default=None,
        metavar="FIELD=PATH,...",
        help="where the fields sit: group, question, budget, action, correct (required, unless "
        "--from gives them), query_type and lengths (optional); e.g. "
        "group=metadata.conv,question=id,budget=metadata.budget,action=metadata.op,"
        "correct=scores.match.value",
    )
    p.add_argument(
        "--from",
        dest="source",
        choices=("file", "inspect", "eee"),
        default="file",
        help="file: a JSONL/JSON/CSV (default); inspect: an Inspect AI eval log (needs "
        "pip install 'retcon[inspect]'); eee: Every Eval Ever instance-level samples (JSONL). "
        "inspect and eee come with default paths (docs/import.md); --map overrides them",
    )
    p.add_argument(
        "--action-names",
        default=None,
        metavar="NAME=ACTION,...",
        help="your log's action names -> ret, merge, abstract, rewrite (e.g. raw=ret,summary=merge)",
    )
    p.add_argument(
        "--repeats",
        choices=("refuse", "mean"),
        default="refuse",
        help="a second record of one (question, budget, action): refuse it (default) or average "
        "(epochs, realisations)",
    )
    p.add_argument(
        "--output", required=True, metavar="FILE", help="paired-data file: .jsonl, .csv or .parquet"
    )
    add_common(p, out=False, seed=False)
    p.set_defaults(func=run)


def _action_names(text: str | None) -> dict[str, str]:
    from retcon.errors import InputError

    out: dict[str, str] = {}
    for piece in (p.strip() for p in (text or "").split(",")):
        if not piece:
            continue
        name, sep, action = piece.partition("=")
        if not sep or not name.strip() or not action.strip():
            raise InputError(f"--action-names: expected NAME=ACTION (e.g. raw=ret); got {piece!r}.")
        out[name.strip()] = action.strip()
    return out


def run(args: argparse.Namespace) -> int:
    """Read the log, pivot it into paired rows, write them (validated) to ``--output``."""
    from oas import (
        IMPORT_PRESETS,
        IMPORT_REQUIRED_FIELDS,
        import_records,
        inspect_records,
        parse_import_map,
        read_sample_records,
        write_paired,
    )
    from retcon.commands.common import emit
    from retcon.output import check_out_file

    check_out_file("--output", args.output, inputs=[("FILE", args.file)])
    given = parse_import_map(args.mapping)
    mapping = {**IMPORT_PRESETS[args.source], **given}
    # a preset's optional paths may be absent from a record; the user's never
    required = IMPORT_REQUIRED_FIELDS + tuple(k for k in given if k not in IMPORT_REQUIRED_FIELDS)
    names = _action_names(args.action_names)
    records = (
        inspect_records(args.file) if args.source == "inspect" else read_sample_records(args.file)
    )
    rows = import_records(
        records,
        mapping,
        source=str(args.file),
        action_names=names,
        repeats=args.repeats,
        required=required,
    )
    write_paired(args.output, rows)
    groups = len({r["group_id"] for r in rows})
    questions = len({r["query_id"] for r in rows})
    budgets = sorted({r["budget"] for r in rows})
    placeholder = sum(r["meta_cluster_features"] == "placeholder" for r in rows)
    summary = {
        "output": str(args.output),
        "rows": len(rows),
        "questions": questions,
        "groups": groups,
        "budgets": budgets,
        "placeholder_cluster_features": placeholder,
    }
    note = (
        f"\n  {placeholder} rows have no 'lengths': their cluster features are placeholders "
        "(docs/import.md); budget and query type are real."
        if placeholder
        else ""
    )
    emit(
        args,
        summary,
        lambda: (
            f"wrote {len(rows)} paired rows ({questions} questions, {groups} groups, "
            f"budgets {', '.join(f'{b:g}' for b in budgets)}) to {args.output}" + note
        ),
    )
    return 0
