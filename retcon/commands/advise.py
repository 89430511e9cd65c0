"""``retcon advise``: retain or consolidate at your budgets, from your own evidence lengths.

The answer first, in words, with the paper's direction (consolidate under tight budgets, retain
under loose ones); then the rule in the form memory systems configure (a trigger in tokens and as
a share of the context window); ``--policy FILE`` writes it for a memory system to load.

References: MODEL §6 (crossover), §6.7 (empirical law), §8 (paired data); docs/advise.md.
"""

from __future__ import annotations

import argparse
import math


def register(subparsers) -> None:
    """Add ``retcon advise`` to the ``retcon`` command line."""
    from retcon.commands.common import JoinLists, add_common, list_type
    from retcon.commands.theory import add_model_options

    p = subparsers.add_parser(
        "advise",
        help="retain or consolidate at your budgets: the action, the rule, a policy file",
        description=(
            "Advice for a memory system (docs/advise.md): at each --budget, whether to retain the "
            "raw records or consolidate them, from the single-cluster model (docs/model.md §6) "
            "with your evidence lengths (--lengths, as `retcon crossover --lengths` reads them). "
            "The paper's direction: consolidate under tight budgets (below the crossover B*), "
            "retain under loose ones (above it). --paired FILE measures the gain on your own "
            "paired data instead (conversation-clustered intervals)."
        ),
    )
    p.add_argument(
        "--budget",
        "--budgets",
        dest="budgets",
        nargs="+",
        required=True,
        type=list_type(what="budgets in tokens", example="4096,8192"),
        action=JoinLists,
        metavar="B",
        help="the memory's budget(s) in tokens (space- or comma-separated)",
    )
    p.add_argument(
        "--lengths",
        required=True,
        metavar="FILE",
        help="your raw candidate-evidence lengths (tokens): one number per line, a JSON list, or "
        "a CSV column (--lengths-column); the same reader as `retcon crossover --lengths`",
    )
    p.add_argument(
        "--lengths-column",
        default=None,
        metavar="NAME",
        help="with --lengths: read the CSV column NAME (the file then has a header row)",
    )
    p.add_argument(
        "--operator",
        default="merge",
        choices=("merge", "abstract", "rewrite"),
        help="the consolidating operator the advice names (default merge)",
    )
    p.add_argument(
        "--window",
        type=float,
        default=None,
        metavar="W",
        help="your model's context window in tokens, for the trigger's share (default: each "
        "budget, i.e. the share of the memory's budget)",
    )
    add_model_options(p)
    p.add_argument(
        "--paired",
        default=None,
        metavar="FILE",
        help="a paired-data file (docs/paired-data.md): the action then follows the gain "
        "measured at its budget nearest yours, with a conversation-clustered interval",
    )
    p.add_argument(
        "--router",
        default=None,
        metavar="FILE",
        help="a fitted router JSON with the identified reader's theory block: its g, a, the "
        "operator's fidelity and compression ratio replace --acc-guess, --acc-raw, --fidelity "
        "and --compress-ratio (docs/advise.md)",
    )
    p.add_argument(
        "--policy",
        default=None,
        metavar="FILE",
        help="write the policy (budget ranges -> action, the trigger, the model and data it came "
        "from) as JSON for a memory system to load (docs/advise.md)",
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=200,
        metavar="R",
        help="bootstrap resamples of the length sample for the intervals (default 200; 0: none)",
    )
    add_common(p, out=False)
    p.set_defaults(func=run)


def _fmt(v: float) -> str:
    return "n/a" if not math.isfinite(v) else f"{v:.4g}"


def to_json(adv, policy: dict) -> dict:
    """The ``--json`` object: the answer and rule per budget, the crossover, the policy."""
    from oas import advice_answer, advice_rule

    return {
        "direction": policy["direction"],
        "crossover_budget": adv.crossover_budget if math.isfinite(adv.crossover_budget) else None,
        "crossover_interval": policy["model"]["crossover_interval"],
        "status": adv.status,
        "reason": adv.reason,
        "budgets": [
            {
                "budget": a.budget,
                "action": a.action,
                "source": a.source,
                "answer": advice_answer(adv, a),
                "rule": advice_rule(adv, a),
                "gain_over_retention": a.gain,
                "gain_interval": [a.lower, a.upper],
                "trigger_tokens": a.trigger_tokens,
                "window": a.window,
                "measured": None
                if a.measured is None
                else dict(zip(("grid_budget", "gain", "lower", "upper", "groups"), a.measured)),
            }
            for a in adv.budgets
        ],
        "policy": policy,
    }


def format_text(adv, policy: dict) -> str:
    """Answer and rule of each budget first, then the crossover and the gains."""
    from oas import advice_answer, advice_rule

    lines = []
    for a in adv.budgets:
        lines.append(advice_answer(adv, a))
        lines.append("  Rule: " + advice_rule(adv, a))
    lines.append("The paper's direction: " + policy["direction"] + ".")
    b = adv.crossover_budget
    lines.append(
        f"crossover budget B* = {_fmt(b)} tokens "
        f"[{_fmt(adv.crossover_lower)}, {_fmt(adv.crossover_upper)}] over {adv.resamples} "
        f"resamples of your {adv.lengths['n']} lengths (median {adv.lengths['median']:.4g}); "
        f"status {adv.status}" + (f" ({adv.reason})" if adv.reason else "")
    )
    p = adv.params
    lines.append(
        f"model: rho {p['compress_ratio']:g}, phi {p['fidelity']:g}, a {p['acc_raw']:g}, "
        f"g {p['acc_guess']:g} (docs/model.md §6)"
    )
    lines.append(
        f"{'budget':>10}  {'action':>8}  {'gain over ret (model)':<26}  measured (paired file)"
    )
    for a in adv.budgets:
        m = (
            "-"
            if a.measured is None
            else f"{a.measured[1]:+.3f} [{a.measured[2]:+.3f}, {a.measured[3]:+.3f}] at "
            f"B={a.measured[0]:g}, {a.measured[4]} groups"
        )
        model = f"{a.gain:+.3f} [{a.lower:+.3f}, {a.upper:+.3f}]"
        lines.append(f"{a.budget:>10g}  {a.action:>8}  {model:<26}  {m}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Read the lengths (and paired file), advise, print, and write ``--policy``."""
    from retcon.commands.common import emit
    from retcon.commands.lengths_file import read_lengths
    from retcon.errors import InputError
    from retcon.output import check_out_file, file_sha256, write_json_atomic

    inputs = [("--lengths", args.lengths), ("--paired", args.paired), ("--router", args.router)]
    if args.policy is not None:
        check_out_file("--policy", args.policy, inputs=inputs, suffixes=[".json"])
    if not 0 <= args.resamples <= 10000:
        raise InputError(f"--resamples must be in [0, 10000]; got {args.resamples}.")
    if args.window is not None and not (math.isfinite(args.window) and args.window > 0):
        raise InputError(f"--window must be a number of tokens > 0; got {args.window}.")
    bad = [b for b in args.budgets if not (math.isfinite(b) and b > 0)]
    if bad:
        raise InputError(f"--budget: expected budgets in tokens > 0; got {bad[0]!r}.")
    sample = read_lengths(args.lengths, args.lengths_column)

    import oas

    paired = None if args.paired is None else oas.read_paired(args.paired)
    model = {
        "compress_ratio": args.compress_ratio,
        "fidelity": args.fidelity,
        "acc_raw": args.acc_raw,
        "acc_guess": args.acc_guess,
    }
    if args.router is not None:
        model = oas.model_from_router(
            oas.load_router(args.router, option="--router"), args.operator
        )
    adv = oas.advise(
        sample,
        args.budgets,
        operator=args.operator,
        **model,
        window=args.window,
        paired=paired,
        resamples=args.resamples,
        seed=args.seed,
    )
    data = {
        "lengths_file": {"path": str(args.lengths), "sha256": file_sha256(args.lengths)},
        "lengths_column": args.lengths_column,
    }
    if args.paired is not None:
        data["paired_file"] = {"path": str(args.paired), "sha256": file_sha256(args.paired)}
    if args.router is not None:
        data["router_file"] = {"path": str(args.router), "sha256": file_sha256(args.router)}
    policy = oas.advice_policy(adv, data=data)
    if args.policy is not None:
        write_json_atomic(args.policy, policy)
    emit(
        args,
        to_json(adv, policy),
        lambda: format_text(adv, policy) + (f"\nwrote {args.policy}" if args.policy else ""),
    )
    return 0
