"""``retcon timeline``: memory over time (MODEL §10; docs/timeline.md), one subcommand per form.

* ``simulate [--scenario S] [--policy P ...] [--budgets B ...] [--queries N] [--resamples R]``: a
  stream scenario (``sim.STREAM_PRESETS`` or a TOML file with a ``[stream]`` table).
* ``locomo --data F [--passes K] [--policy P ...] [--llm-* ...]``: LoCoMo as a stream.
* ``identify --data F [--passes K]``: leave one conversation out, predicted ``t*`` and ``k*``.

``retcon timeline [options]`` without a subcommand is ``timeline simulate`` (existing scripts).
The library builds the report (``oas.simulated_report`` / ``oas.real.locomo_report``: a
``TimelineReport``) and its text (``oas.timeline_text``); this module reads the options,
checks them before any work, and prints or writes the result.
"""

from __future__ import annotations

import argparse
import math
from functools import partial
from pathlib import Path

from retcon.commands import _progress, common
from retcon.errors import InputError, check_choice

ROUTER = "router"
_IDENTIFY = "--identify is now a subcommand: use `retcon timeline identify --data F`"


def _budget(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tokens; got {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"expected a budget in (0, inf) tokens; got {text!r}")
    return v


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "timeline",
        help="memory over time: utility per policy against time, crossover times (MODEL §10)",
        description="Memory over time (MODEL §10; docs/timeline.md): `simulate` a stream of "
        "sessions under the policies retain-all, overflow, periodic, budget-aware and tiered; "
        "run `locomo` as a stream; `identify` t* and k* on LoCoMo, leaving one conversation out. "
        "`retcon timeline [options]` with no subcommand runs `timeline simulate [options]` (kept).",
    )
    _simulate_form(p)  # the form without a subcommand: hidden, `timeline simulate`'s
    p.add_argument(
        "--data", action=common.Moved, const="--data is read by `retcon timeline locomo|identify`"
    )
    p.add_argument("--identify", nargs=0, action=common.Moved, const=_IDENTIFY)
    for action in p._actions:
        if action.option_strings and action.dest != "help":
            action.help = argparse.SUPPRESS
    forms = p.add_subparsers(dest="timeline_command", metavar="FORM", title="forms")
    s = forms.add_parser(
        "simulate",
        help="simulate a stream scenario (the default form)",
        description="Simulate a stream of sessions and print utility against time with CIs, each "
        "operator's crossover time with its interval (beside theory's t* where theory applies) "
        "and utility against the number of passes. Default scenario: locomo-stream.",
    )
    _simulate_form(s)
    loc = forms.add_parser(
        "locomo",
        help="LoCoMo as a stream: survival against passes, crossover times",
        description="LoCoMo as a stream (docs/timeline.md): answer survival against passes, "
        "each operator's crossover time and utility per policy, intervals over conversations.",
    )
    _add_locomo_options(loc, least=1)
    _add(loc, "--policy", action="append", metavar="P")
    _add(loc, "--resamples", type=int, default=1000, metavar="R")
    loc.add_argument(
        "--identify", nargs=0, action=common.Moved, const=_IDENTIFY, help=argparse.SUPPRESS
    )
    _add_llm_pass_options(loc)
    common.add_common(loc, figures=True)
    loc.set_defaults(func=run_locomo)
    ident = forms.add_parser(
        "identify",
        help="LoCoMo, leave one conversation out: predicted t* and k* beside the observed",
        description="Leave one conversation out: predict each held-out conversation's crossover "
        "time t* and best number of passes k* from the pass chain fitted on the others, beside "
        "the observed ones (docs/timeline.md).",
    )
    _add_locomo_options(ident, least=2)
    common.add_common(ident)
    ident.set_defaults(func=run_identify)


_HELP = {
    "--scenario": "stream preset (locomo-stream, single-cluster-stream, low-fidelity-stream) or "
    "a .toml file with a [stream] table (docs/timeline.md)",
    "--policy": "policy to report, repeatable: retain-all, overflow, periodic, budget-aware, "
    "tiered, router (the router over time; default: all but router)",
    "--queries": "simulated streams (default 4096)",
    "--resamples": "bootstrap resamples of the crossover interval (default 1000)",
    "--data": "the locomo10.json file",
    "--llm-sessions": "llm passes on each conversation's first N sessions (default: all)",
    "--llm-conversations": "llm passes on the first G conversations (default: all)",
    "--llm-operators": "comma-separated operators for the llm passes (default: all three)",
}


def _add(p, flag: str, help: str | None = None, **kw) -> None:
    p.add_argument(flag, help=help or _HELP[flag], **kw)


def _simulate_form(p) -> None:
    """The options of ``timeline simulate`` (and of ``timeline`` without a form), its ``run``."""
    _add(p, "--scenario", metavar="S")
    _add(p, "--policy", action="append", metavar="P")
    budgets = "budgets in tokens, increasing (default: the scenario's)"
    _add(p, "--budgets", budgets, nargs="+", type=_budget, metavar="B")
    _add(p, "--queries", type=int, metavar="N")
    _add(p, "--resamples", type=int, default=1000, metavar="R")
    common.add_common(p, figures=True)
    p.set_defaults(func=run_simulated)


def _add_locomo_options(p, *, least: int) -> None:
    _add(p, "--data", metavar="F", required=True)
    passes = f"consolidation passes, {least}..8 (default 4)"
    _add(p, "--passes", passes, type=int, default=4, metavar="K")
    _add(p, "--budgets", "budgets in tokens, increasing", nargs="+", type=_budget, metavar="B")


def _add_llm_pass_options(p) -> None:
    """Passes 2 and later with the ``llm`` operator too, when an endpoint is configured (flags,
    else ``RETCON_LLM_BASE_URL`` / ``OPENAI_BASE_URL``)."""
    g = p.add_argument_group(
        "llm passes", "with an endpoint, passes 2..K are also made by the llm operator"
    )
    common.add_llm_options(g)
    _add(g, "--llm-sessions", type=int, metavar="N")
    _add(g, "--llm-conversations", type=int, metavar="G")
    _add(g, "--llm-operators", default="merge,abstract,rewrite", metavar="OPS")


def _llm_backend(args):
    """``(backend, oas.real.LLMPasses)`` for the llm passes, or None without an endpoint; checks
    the options before any work."""
    from oas.real import chat_urls

    opts = common.llm_options(args)  # checks --llm-cache up front, as `pair`
    if not chat_urls(opts["base_url"]):
        for opt in ("llm_sessions", "llm_conversations", "llm_model"):
            if getattr(args, opt) is not None:
                raise InputError(
                    f"--{opt.replace('_', '-')} needs an LLM endpoint (--llm-base-url or "
                    "$RETCON_LLM_BASE_URL)."
                )
        return None
    from oas.real import LLMPasses, make_operators, resolve_endpoint

    plan = LLMPasses.checked(
        args.llm_operators, args.passes, args.llm_sessions, args.llm_conversations
    )
    return make_operators("llm", endpoint=resolve_endpoint(**opts)), plan


#: The most budgets ``timeline locomo`` / ``identify`` take (their work is linear in them).
MAX_DATA_BUDGETS = 64


def _checked(args, *, inputs, least_passes: int | None = None) -> tuple[float, ...] | None:
    """The checks of every form before any work: ``--policy`` names, ``--resamples``,
    ``--passes`` (``oas.real.check_passes``), ``--budgets`` strictly increasing (at most
    ``MAX_DATA_BUDGETS`` on a dataset), ``--out`` usable, ``--data`` a file. Returns the
    budgets (None: the default)."""

    from retcon.vocab import TIMELINE_POLICIES

    for pol in getattr(args, "policy", None) or ():
        check_choice("--policy", pol, (*TIMELINE_POLICIES, ROUTER))
    if least_passes is not None:  # the forms on a dataset; numpy only, no JAX yet
        from oas.real import check_passes

        check_passes(args.passes, least_passes)
    if not 0 <= getattr(args, "resamples", 0) <= 100_000:
        raise InputError(f"--resamples must be an integer in [0, 100000]; got {args.resamples}.")
    if (b := args.budgets) is not None and any(y <= x for x, y in zip(b, b[1:])):
        raise InputError(f"--budgets must be strictly increasing; got {b}.")
    if b is not None and least_passes is not None and len(b) > MAX_DATA_BUDGETS:
        # locomo / identify: every budget repeats every pass of every policy over every question
        raise InputError(
            f"--budgets takes at most {MAX_DATA_BUDGETS} budgets on a dataset (each one repeats "
            f"every pass of every policy over every question); got {len(b)}."
        )
    common.check_out(args, inputs)
    data = getattr(args, "data", None)
    if data is not None and not Path(data).is_file():
        raise InputError(f"--data {data!r}: no such file (expected locomo10.json).")
    return None if b is None else tuple(b)


def _emit(args, report: dict, text: str, name: str, plots, meta=None):
    """Print the report (``--json``: the JSON, else the text) and, with ``--out``, write its
    plots, ``name``.json, ``name``.txt and the sidecar (``meta``, default the ``--data`` file's
    name), the sidecar last."""

    from retcon.output import sidecar
    from retcon.plots import figure_name

    if args.out:
        fmt = getattr(args, "format", "png")
        files: dict = {figure_name(Path(f).stem, fmt): partial(plot, d) for plot, f, d in plots}
        files.update({f"{name}.json": report, f"{name}.txt": text + "\n"})
        command = f"timeline {args.timeline_command or 'simulate'}"
        meta = meta or {"data": Path(args.data).name}
        files["sidecar.json"] = sidecar(meta, seed=args.seed, command=command)
        out = common.write_set(args.out, files)
        if common.verbosity(args) >= 0 and not args.json:  # say what was written
            print(common.wrote(sorted(out.names), out.dir))
    common.emit(args, report, text)
    return 0


def run_simulated(args) -> int:
    """``retcon timeline simulate`` (and ``retcon timeline`` without a subcommand)."""
    _checked(args, inputs=[("--scenario", args.scenario)])
    from sim import check_timeline_size, load_stream

    ss = load_stream(args.scenario)
    check_timeline_size(ss, args.budgets, args.queries, scenario=args.scenario)
    _progress.announce(
        args,
        f"the stream {ss.name}: every policy simulated over its generations at each budget, "
        "then the bootstrap (JAX compiles first; a minute or more at the defaults)",
    )
    common.enable_compile_cache()
    from oas import plot_by_generation, plot_utility, simulated_report, timeline_text

    rep = simulated_report(
        ss,
        policies=args.policy,
        budgets=args.budgets,
        queries=args.queries,
        resamples=args.resamples,
        seed=args.seed,
    )
    d = rep.as_json()
    plots = [(plot_utility, "utility.png", d), (plot_by_generation, "by_generation.png", d)]
    return _emit(args, d, timeline_text(rep), "timeline", plots, {"scenario": ss.name})


def _locomo(args, least_passes: int, doing: str):
    """The start of ``locomo`` and ``identify``: the checks, the conversations (at least 2,
    identify 3 with each asked a question), the llm passes' backend (locomo), the progress line."""
    budgets = _checked(args, inputs=[("--data", args.data)], least_passes=least_passes)
    from oas import real

    llm = _llm_backend(args) if least_passes == 1 else None
    convs = real.load_locomo(args.data).conversations
    router = ROUTER in (getattr(args, "policy", None) or ())
    least = max(least_passes + 1, 3 if router else 0)  # the router: leave one conversation out
    why = (
        "identify observes each held-out conversation's questions"
        if least_passes > 1
        else "the bootstrap resamples conversations and scores each one's questions"
    )
    user = "--policy router" if router and least_passes == 1 else "the stream"
    real.check_locomo_stream(
        convs, args.data, least=least, each_asked=True, user=user, why_each=why
    )
    _progress.announce(
        args, f"{len(convs)} conversations of {args.data}{doing.format(args.passes)}"
    )
    return budgets, convs, llm


def run_locomo(args) -> int:
    """``retcon timeline locomo --data F``: LoCoMo as a stream."""
    import oas
    from oas import real

    budgets, convs, llm = _locomo(
        args, 1, " as a stream: {} passes of every policy, then the bootstrap"
    )
    rep = real.locomo_report(
        convs,
        real.pass_chains(convs, args.passes),
        budgets=budgets or real.LOCOMO_BUDGETS,
        policies=args.policy,
        resamples=args.resamples,
        seed=args.seed,
        llm=llm,
    )
    d = rep.as_json()
    plots = [(oas.plot_survival, "survival.png", d)]
    plots.append((oas.plot_utility, "utility.png", dict(d, scenario="locomo")))
    return _emit(args, d, oas.timeline_text(rep), "timeline_locomo", plots)


def run_identify(args) -> int:
    """``retcon timeline identify --data F``: leave-one-conversation-out ``t*`` and ``k*``."""
    budgets, convs, _ = _locomo(
        args, 2, ": {} passes, then t* and k* leaving one conversation out at a time"
    )
    import oas
    from oas import real
    from retcon.output import to_jsonable

    chains = real.pass_chains(convs, args.passes, firsts=("extractive",))
    budgets = budgets or real.IDENTIFY_BUDGETS
    d = to_jsonable(
        real.timeline_identify(convs, passes=args.passes, budgets=budgets, chains=chains)
    )
    return _emit(args, d, oas.identify_text(d), "timeline_identify", [])
