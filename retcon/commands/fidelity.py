"""``retcon fidelity``: what consolidation loses, by fact type, on LoCoMo (docs/fidelity.md).

Per operator and fact type (dates and times, numbers, proper names, identifiers and paths), the
share of the raw cluster's facts found again in the operator's record, with a conversation-
clustered interval; ``--require TYPES --min X`` exits 1 naming each type and operator below X.

References: MODEL §1 (fidelity), §9; oas/real/_fidelity.py.
"""

from __future__ import annotations

import argparse
import math
import sys


def register(subparsers) -> None:
    """Add ``retcon fidelity`` to the ``retcon`` command line."""
    from retcon.commands.common import add_common, list_type

    p = subparsers.add_parser(
        "fidelity",
        help="what consolidation loses, by fact type (dates, numbers, names, identifiers)",
        description="Fact survival (docs/fidelity.md): per operator and fact type, the share of "
        "the raw cluster's facts (dates and times, numbers, proper names, identifiers and "
        "paths, found by documented regular expressions) found again in the operator's record, "
        "on LoCoMo's oracle clusters, with a conversation-clustered 95%% interval. --require "
        "TYPES --min X fails loud: exit 1 naming each type and operator below X.",
    )
    p.add_argument(
        "--data",
        metavar="PATH",
        default=None,
        help="LoCoMo locomo10.json (default: the data cache; `retcon data fetch locomo`)",
    )
    p.add_argument(
        "--operators",
        type=list_type(str, what="operator backends", example="dataset,extractive"),
        default=["dataset"],
        metavar="NAMES",
        help="operator backends, comma-separated: dataset (LoCoMo's own observations and "
        "session summaries), extractive (default dataset)",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="the first N conversations only (default all ten)",
    )
    p.add_argument(
        "--paired",
        default=None,
        metavar="FILE",
        help="paired data of the same LoCoMo file with the dataset operators (retcon pair locomo "
        "--operators dataset): also relate each operator's date survival to the temporal "
        "questions' replacement loss (docs/fidelity.md)",
    )
    p.add_argument(
        "--require",
        type=list_type(str, what="fact types", example="dates,numbers"),
        default=None,
        metavar="TYPES",
        help="fact types that must survive: dates, numbers, names, identifiers (with --min)",
    )
    p.add_argument(
        "--min",
        type=float,
        default=None,
        metavar="X",
        help="with --require: the least share in [0, 1] each required type must keep under "
        "every operator; below it the command exits 1, naming each",
    )
    add_common(p, out=False, seed=False)
    p.set_defaults(func=run)


def _pct(v: float) -> str:
    return "  n/a" if not math.isfinite(v) else f"{100 * v:5.1f}"


def format_text(res) -> str:
    """One table: operator x type, share kept with its interval and the facts counted."""
    from oas.real import FACT_TYPES

    lines = [
        f"Fact survival on {res.conversations} LoCoMo conversations ({res.data}): share of the "
        "raw cluster's facts found in each operator's record, % [95% interval over "
        "conversations] (facts)"
    ]
    lines.append(f"{'operator':<22}" + "".join(f"{t:>28}" for t in FACT_TYPES))
    for op, by_type in res.summary.items():
        cells = []
        for t in FACT_TYPES:
            s = by_type[t]
            cells.append(f"{_pct(s.share)} [{_pct(s.lower)},{_pct(s.upper)}] ({s.facts})")
        lines.append(f"{op:<22}" + "".join(f"{c:>28}" for c in cells))
    return "\n".join(lines)


def relation_text(rels) -> str:
    lines = [
        "Does losing a date predict the replacement loss (y_ret - y_o where the raw cluster fits)?"
    ]
    for r in rels:
        lines.append(
            f"  {r.operator:<18} {r.query_type}: {r.questions} questions, {100 * r.lost_share:.0f}% "
            f"lost a date; loss {r.loss_lost:+.3f} (lost) vs {r.loss_kept:+.3f} (kept); per-"
            f"conversation difference {r.difference:+.3f} [{r.lower:+.3f}, {r.upper:+.3f}] "
            f"over {r.groups} conversations; Spearman {r.spearman:+.3f}"
        )
    return "\n".join(lines)


def to_json(res, failures, rels=()) -> dict:
    return {
        "relation": [r._asdict() for r in rels],
        "data": res.data,
        "conversations": res.conversations,
        "survival": {
            op: {t: s._asdict() for t, s in by_type.items()} for op, by_type in res.summary.items()
        },
        "below": [{"operator": op, "type": t, "share": s} for op, t, s in failures],
    }


def run(args: argparse.Namespace) -> int:
    """Measure, print, and exit 1 when a required type falls below ``--min``."""
    from retcon.commands.common import emit
    from retcon.errors import InputError

    if (args.require is None) != (args.min is None):
        raise InputError("--require TYPES and --min X go together; give both or neither.")
    if args.min is not None and not 0.0 <= args.min <= 1.0:
        raise InputError(f"--min must be a share in [0, 1]; got {args.min}.")
    from oas.real import FACT_TYPES, below_bar, locomo_fidelity

    if args.require is not None:
        bad = [t for t in args.require if t not in FACT_TYPES]
        if bad:
            raise InputError(
                f"--require: unknown fact type {bad[0]!r}; expected among {list(FACT_TYPES)}."
            )
    for name in args.operators:
        if name not in ("dataset", "extractive"):
            raise InputError(
                f"--operators: expected dataset or extractive; got {name!r} (llm operators: "
                "not measured by this command yet)."
            )
    if args.paired is not None and "dataset" not in args.operators:
        raise InputError(
            "--paired relates the dataset operators' survival; give --operators dataset."
        )
    paired = None
    if args.paired is not None:
        import oas

        paired = oas.read_paired(args.paired)
    res = locomo_fidelity(args.data, backends=tuple(args.operators), limit=args.limit)
    failures = []
    if args.require is not None and args.min is not None:
        failures = below_bar(res.summary, args.require, args.min)
    rels = []
    if paired is not None:
        from oas.real import survival_loss_relation

        rels = [
            survival_loss_relation(res.clusters, paired, operator=f"dataset:{a}", query_type=qt)
            for a in ("merge", "abstract")
            for qt in ("temporal", "single-hop")
        ]
    emit(
        args,
        to_json(res, failures, rels),
        lambda: format_text(res) + ("\n" + relation_text(rels) if rels else ""),
    )
    for op, t, s in failures:
        print(
            f"retcon fidelity: {op} keeps {100 * s:.1f}% of {t}, below --min {args.min:g}",
            file=sys.stderr,
        )
    return 1 if failures else 0
