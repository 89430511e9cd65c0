"""``retcon llm check``: probe an OpenAI-compatible endpoint and estimate a planned run.

Lists the served models, sends a one-token chat, probes whether the seed is honoured at
temperature 0, reports latency and the usable context, and estimates the calls and time of the
``retcon pair`` run you plan (``--design``, ``--limit``, ``--realisations``, ``--concurrency``).
Exit 0 when the endpoint passes, 1 when it fails (docs/llm.md).
"""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    """Add ``retcon llm check``."""
    from retcon.commands.common import add_common, add_llm_options

    llm = subparsers.add_parser(
        "llm",
        help="check an OpenAI-compatible endpoint before a run (retcon llm check)",
        description="Tools for the LLM endpoint of `retcon pair --operators/--reader llm`.",
    )
    sub = llm.add_subparsers(dest="llm_command", metavar="ACTION")
    p = sub.add_parser(
        "check",
        help="probe the endpoint (models, one-token chat, seed, latency, context); estimate a run",
        description="Probe an OpenAI-compatible endpoint before an hours-long run: the models it "
        "lists, a one-token chat, whether two identical requests with one seed answer alike "
        "(temperature 0 and 1), the median latency, the usable context; then the calls and time "
        "of the planned `retcon pair locomo` run. Exit 1 when the endpoint cannot answer or does "
        "not serve the model (docs/llm.md).",
    )
    add_llm_options(p)
    p.add_argument(
        "--design",
        choices=["ours", "paper"],
        default="paper",
        help="the planned run: paper (75 questions x 4 budgets, the default) or ours (all "
        "questions x 25 budgets)",
    )
    p.add_argument("--limit", type=int, default=None, metavar="N", help="questions of the plan")
    p.add_argument(
        "--realisations", type=int, default=1, metavar="R", help="label realisations of the plan"
    )
    p.add_argument(
        "--llm-judge",
        choices=["none", "llm"],
        default="none",
        help="whether the planned run judges with the LLM (counts its calls)",
    )
    p.add_argument(
        "--data", metavar="PATH", default=None, help="LoCoMo file for the plan (default: cache)"
    )
    p.add_argument(
        "--max-context",
        type=int,
        default=16384,
        metavar="TOKENS",
        help="largest prompt of the context probe when /models does not give it (default 16384)",
    )
    p.add_argument("--no-seed-probe", action="store_true", help="skip the four seed requests")
    add_common(p, out=False, seed=False)
    p.set_defaults(func=run)
    llm.set_defaults(func=lambda args: (llm.print_help(), 2)[1])


def run(args: argparse.Namespace) -> int:
    from oas.real import (
        check_endpoint,
        estimate_run,
        format_check,
        format_estimate,
        locomo_plan,
        resolve_endpoint,
    )
    from retcon.commands.common import emit, llm_options
    from retcon.errors import InputError

    if args.limit is not None and args.limit < 1:
        raise InputError(f"--limit must be a positive number of questions; got {args.limit}.")
    if not 1024 <= args.max_context <= 262144:
        raise InputError(f"--max-context must be in [1024, 262144] tokens; got {args.max_context}.")
    if args.realisations < 1:
        raise InputError(f"--realisations must be >= 1; got {args.realisations}.")
    config = resolve_endpoint(**llm_options(args))
    chk = check_endpoint(config, seed=not args.no_seed_probe, max_context=args.max_context)
    est = None
    plan_note = None
    try:
        sizes, budgets = locomo_plan(args.data, design=args.design, limit=args.limit)
        est = estimate_run(
            sizes,
            budgets,
            realisations=args.realisations,
            llm_judge=args.llm_judge == "llm",
            concurrency=config.concurrency,
            latency_s=chk.latency_s,
        )
    except InputError as e:
        plan_note = f"no estimate: {e}"
    obj = {
        "check": {**chk._asdict(), "ok": chk.ok},
        "estimate": None if est is None else est._asdict(),
    }
    if plan_note:
        obj["estimate_note"] = plan_note
    emit(
        args,
        obj,
        lambda: (
            format_check(chk) + "\n" + (format_estimate(est) if est is not None else str(plan_note))
        ),
    )
    return 0 if chk.ok else 1
