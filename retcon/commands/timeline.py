"""``retcon timeline``: memory over time (MODEL §10), simulated and on LoCoMo.

``retcon timeline [--scenario S] [--policy P ...] [--budgets B ...] [--queries N] [--resamples R]
[--json] [--out DIR] [--seed S]`` simulates a stream scenario (``sim.STREAM_PRESETS`` or a TOML
file with a ``[stream]`` table) and prints, per policy, utility against time with CIs; per
operator, the crossover time with its interval (and theory's ``t*`` where theory applies); and the
utility against the number of passes ``k``.

``retcon timeline locomo --data F [--passes K]`` runs LoCoMo as a stream (docs/timeline.md).

``--policy router`` adds the router over time (``oas.TimelineRouter``, MODEL §10; issue 21 item 5):
in simulation with the scenario's own parameters, on LoCoMo fitted leave one conversation out;
the report gains a ``router`` block with its gains over the other policies.

Its ``locomo`` form reads real data (``oas.real``); its
simulation form imports only ``sim`` and ``theory``.
"""

from __future__ import annotations

import argparse
import math

from retcon.errors import InputError

SOURCES = ("locomo",)
ROUTER = "router"


def _policies(chosen, allowed) -> tuple[tuple[str, ...], bool]:
    """``(policies for the timeline, router asked for)``; bad names exit 2 naming --policy."""
    from retcon.errors import check_choice

    for pol in chosen:
        check_choice("--policy", pol, (*allowed, ROUTER))
    return tuple(p for p in chosen if p != ROUTER), ROUTER in chosen


def _budget(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tokens; got {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"expected a budget in (0, inf) tokens; got {text!r}")
    return v


def register(subparsers) -> None:
    from retcon.cli import add_common

    p = subparsers.add_parser(
        "timeline",
        help="memory over time: utility per policy against time, crossover times (MODEL §10)",
        description="Simulate a stream of sessions under the policies of MODEL §10 (retain-all, "
        "overflow, periodic, budget-aware, tiered) and print utility against time with CIs, each "
        "operator's crossover time with its interval (beside theory's t* where theory applies) "
        "and utility against the number of passes. `retcon timeline locomo --data F` runs "
        "LoCoMo as a stream. Default scenario: locomo-stream.",
    )
    p.add_argument(
        "source",
        nargs="?",
        choices=SOURCES,
        default=None,
        help="real data instead of a simulation: locomo (needs --data)",
    )
    p.add_argument(
        "--scenario",
        metavar="S",
        default=None,
        help="stream preset (locomo-stream, single-cluster-stream, low-fidelity-stream) or a .toml "
        "file with a "
        "[stream] table (docs/timeline.md)",
    )
    p.add_argument(
        "--policy",
        action="append",
        default=None,
        metavar="P",
        help="policy to report, repeatable: retain-all, overflow, periodic, budget-aware, tiered, "
        "router (the router over time; default: all but router)",
    )
    p.add_argument(
        "--budgets",
        nargs="+",
        type=_budget,
        default=None,
        metavar="B",
        help="budgets in tokens, increasing (default: the scenario's)",
    )
    p.add_argument(
        "--queries", type=int, default=None, metavar="N", help="simulated streams (default 4096)"
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=1000,
        metavar="R",
        help="bootstrap resamples of the crossover interval (default 1000)",
    )
    p.add_argument("--data", metavar="F", default=None, help="locomo: the locomo10.json file")
    p.add_argument(
        "--passes",
        type=int,
        default=4,
        metavar="K",
        help="locomo: consolidation passes, 1..8 (default 4)",
    )
    p.add_argument(
        "--identify",
        action="store_true",
        help="locomo: leave one conversation out, predict each held-out conversation's "
        "crossover time t* and best number of passes k* from the pass chain fitted on the "
        "others, beside the observed ones (docs/timeline.md)",
    )
    _add_llm_pass_options(p)
    add_common(p)
    p.set_defaults(func=run_timeline)


def _add_llm_pass_options(p) -> None:
    """``retcon timeline locomo``: passes 2 and later with the ``llm`` operator too, when an
    endpoint is configured (flags, else ``RETCON_LLM_BASE_URL`` / ``OPENAI_BASE_URL``)."""
    g = p.add_argument_group(
        "llm passes",
        "locomo: with an endpoint, passes 2..K are also made by the llm operator (docs/timeline.md)",
    )
    g.add_argument(
        "--llm-base-url",
        action="append",
        default=None,
        metavar="URL",
        help="OpenAI-compatible endpoint, repeatable (default $RETCON_LLM_BASE_URL)",
    )
    g.add_argument("--llm-model", default=None, help="default $RETCON_LLM_MODEL")
    g.add_argument("--llm-api-key", default=None, help="as in `retcon pair` (docs/llm.md)")
    g.add_argument(
        "--llm-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds per response before a retry (default 300)",
    )
    from retcon.commands.real import add_transport_options

    add_transport_options(g)
    g.add_argument("--llm-cache", metavar="DIR", default=None, help="response cache folder")
    g.add_argument(
        "--concurrency",
        type=int,
        default=None,
        metavar="N",
        help="LLM requests in flight at once (default 8)",
    )
    g.add_argument(
        "--llm-sessions",
        type=int,
        default=None,
        metavar="N",
        help="llm passes on each conversation's first N sessions (default: all)",
    )
    g.add_argument(
        "--llm-conversations",
        type=int,
        default=None,
        metavar="G",
        help="llm passes on the first G conversations (default: all)",
    )
    g.add_argument(
        "--llm-operators",
        default="merge,abstract,rewrite",
        metavar="OPS",
        help="comma-separated operators for the llm passes (default: all three)",
    )


def _llm_backend(args):
    """``(backend, operators)`` for the llm passes, or None without an endpoint; checks the
    options before any work."""
    from retcon.commands.real import llm_options
    from retcon.vocab import OPERATORS

    opts = llm_options(args)
    if not opts["base_url"]:
        for opt in ("llm_sessions", "llm_conversations", "llm_model"):
            if getattr(args, opt) is not None:
                raise InputError(
                    f"--{opt.replace('_', '-')} needs an LLM endpoint (--llm-base-url or "
                    "$RETCON_LLM_BASE_URL)."
                )
        return None
    for opt in ("llm_sessions", "llm_conversations"):
        v = getattr(args, opt)
        if v is not None and v < 1:
            raise InputError(f"--{opt.replace('_', '-')} must be an integer >= 1; got {v}.")
    ops = [o.strip() for o in args.llm_operators.split(",") if o.strip()]
    if not ops or any(o not in OPERATORS for o in ops):
        raise InputError(
            f"--llm-operators must list operators of {list(OPERATORS)}; got {args.llm_operators!r}."
        )
    if args.passes < 2:
        raise InputError(f"the llm passes need --passes >= 2; got {args.passes}.")
    from oas.real import make_operators

    return make_operators("llm", **opts), ops


def _llm_passes(args, llm, conversations, budgets) -> dict:
    """The ``llm_passes`` section of the report (``oas.real.llm_pass_survival``)."""
    from oas.real import llm_pass_survival

    backend, ops = llm
    convs = conversations[: args.llm_conversations] if args.llm_conversations else conversations
    report = llm_pass_survival(
        convs,
        backend,
        operators=ops,
        passes=args.passes,
        sessions=args.llm_sessions,
        budgets=budgets,
    )
    report["llm_calls"] = backend.stats._asdict()
    return report


def run_timeline(args) -> int:
    if args.source == "locomo":
        return run_locomo(args)
    if args.data is not None:
        raise InputError("--data is read by `retcon timeline locomo` only; drop it or add locomo.")
    if args.identify:
        raise InputError("--identify is for `retcon timeline locomo --data F`; add locomo.")
    return run_simulated(args)


def _locomo_inputs(args, default_budgets) -> tuple[float, ...]:
    """The checks both LoCoMo forms make before any work: the budgets (``default_budgets`` when
    none are given) strictly increasing, ``--out`` usable, ``--data`` a file. Returns the budgets."""
    from pathlib import Path

    from retcon.output import check_out_dir

    budgets = tuple(args.budgets) if args.budgets else tuple(default_budgets)
    if any(y <= x for x, y in zip(budgets, budgets[1:])):
        raise InputError(f"--budgets must be strictly increasing; got {list(budgets)}.")
    if args.out is not None:
        check_out_dir("--out", args.out, inputs=[("--data", args.data)])
    if not Path(args.data).is_file():
        raise InputError(f"--data {args.data!r}: no such file (expected locomo10.json).")
    return budgets


def check_locomo_stream(conversations, path, *, least: int = 1, each_asked: bool = False) -> None:
    """Refuse, before any work, a LoCoMo file the stream cannot be run on (docs/timeline.md):
    fewer than ``least`` conversations, a conversation without sessions, or no question at all
    (``each_asked``: a conversation without questions, which ``--identify`` cannot observe).

    Raises:
      InputError: naming ``--data``, the conversation and what is needed.
    """
    where = f"--data {str(path)!r}"
    if len(conversations) < least:
        need = "a conversation" if least == 1 else f"at least {least} conversations (leave one out)"
        raise InputError(f"{where}: needs {need}; got {len(conversations)}.")
    for c in conversations:
        if not c.sessions:
            raise InputError(
                f"{where}: conversation {c.conversation_id!r} has no sessions (session_1, ...); "
                "the stream needs at least one."
            )
    if each_asked:
        for c in conversations:
            if not c.queries:
                raise InputError(
                    f"{where}: conversation {c.conversation_id!r} has no questions (its 'qa' is "
                    "empty or excluded); --identify observes each held-out conversation's "
                    "questions, so each needs at least one."
                )
    if not any(c.queries for c in conversations):
        raise InputError(
            f"{where}: no questions to score (every 'qa' list is empty or excluded); "
            "the stream needs at least one."
        )


def run_locomo(args) -> int:
    from pathlib import Path

    from retcon.cli import print_json
    from retcon.output import (
        OutputSet,
        sidecar,
        to_jsonable,
        write_json_atomic,
        write_text_atomic,
    )

    if args.data is None:
        raise InputError("retcon timeline locomo needs --data F (the locomo10.json file).")
    for opt, val in (("--scenario", args.scenario), ("--queries", args.queries)):
        if val is not None:
            raise InputError(f"{opt} is for the simulation; `retcon timeline locomo` reads --data.")
    from oas.real import MAX_PASSES

    if not 1 <= args.passes <= MAX_PASSES:
        raise InputError(f"--passes must be an integer in [1, {MAX_PASSES}]; got {args.passes}.")
    if not 0 <= args.resamples <= 100_000:
        raise InputError(f"--resamples must be an integer in [0, 100000]; got {args.resamples}.")
    from sim import TIMELINE_POLICIES

    if args.identify:
        if args.llm_base_url or args.llm_sessions or args.llm_conversations:
            raise InputError("the llm passes (--llm-*) are not used by --identify; drop one.")
        return run_identify(args)
    policies, with_router = _policies(args.policy or TIMELINE_POLICIES, TIMELINE_POLICIES)
    # retain-all is the baseline and periodic defines the crossover time: always run (as simulated)
    policies = tuple(
        p for p in TIMELINE_POLICIES if p in policies or p in ("retain-all", "periodic")
    )
    budgets = _locomo_inputs(args, (256.0, 1024.0, 4096.0))
    llm = _llm_backend(args)
    from oas.real import load_locomo, timeline_report

    loaded = load_locomo(args.data)
    check_locomo_stream(loaded.conversations, args.data)
    report = timeline_report(
        loaded.conversations,
        passes=args.passes,
        budgets=budgets,
        policies=policies,
        resamples=args.resamples,
        seed=args.seed,
    )
    if llm is not None:
        report["llm_passes"] = _llm_passes(args, llm, loaded.conversations, budgets)
    if with_router:
        from oas.real import timeline_router_report

        report["router"] = timeline_router_report(
            loaded.conversations, passes=args.passes, budgets=budgets
        )
    report["seed"] = args.seed
    report = to_jsonable(report)
    text = locomo_table(report)
    if with_router:
        text += "\n\n" + router_table(report["router"], "conversations")
    if args.out:
        from oas.real import plot_survival, plot_utility

        with OutputSet(args.out, last=("sidecar.json",)) as out:
            plot_survival(report, out / "survival.png")
            plot_utility(dict(report, scenario="locomo"), out / "utility.png")
            write_json_atomic(out / "timeline_locomo.json", report)
            write_text_atomic(out / "timeline_locomo.txt", text + "\n")
            write_json_atomic(
                out / "sidecar.json",
                sidecar({"data": Path(args.data).name}, seed=args.seed, command="timeline locomo"),
            )
    if args.json:
        print_json(report)
    else:
        print(text)
    return 0


def run_identify(args) -> int:
    """``retcon timeline locomo --data F --identify``: leave-one-conversation-out t* and k*."""
    from pathlib import Path

    from retcon.cli import print_json
    from retcon.output import (
        OutputSet,
        sidecar,
        to_jsonable,
        write_json_atomic,
        write_text_atomic,
    )

    if args.policy:
        raise InputError("--policy is not used by --identify (it compares periodic and k passes).")
    if args.passes < 2:
        raise InputError(f"--passes must be at least 2 with --identify; got {args.passes}.")
    from oas.real import IDENTIFY_BUDGETS

    budgets = _locomo_inputs(args, IDENTIFY_BUDGETS)
    from oas.real import load_locomo, timeline_identify

    loaded = load_locomo(args.data)
    check_locomo_stream(loaded.conversations, args.data, least=3, each_asked=True)
    report = to_jsonable(
        timeline_identify(loaded.conversations, passes=args.passes, budgets=budgets)
    )
    text = identify_table(report)
    if args.out:
        with OutputSet(args.out, last=("sidecar.json",)) as out:
            write_json_atomic(out / "timeline_identify.json", report)
            write_text_atomic(out / "timeline_identify.txt", text + "\n")
            write_json_atomic(
                out / "sidecar.json",
                sidecar(
                    {"data": Path(args.data).name},
                    seed=args.seed,
                    command="timeline locomo --identify",
                ),
            )
    if args.json:
        print_json(report)
    else:
        print(text)
    return 0


def _mean(xs) -> str:
    vals = [x for x in xs if x is not None]
    return f"{sum(vals) / len(vals):.1f}" if vals else "none"


def identify_table(report: dict) -> str:
    """The leave-one-conversation-out comparison as text (one row per chain, quantity, cell)."""
    lines = [
        f"timeline locomo --identify: {report['conversations']} conversations, leave one out, "
        f"{report['passes']} passes ({report['first_pass']}), lexical reader, ages "
        f"{report['age_law']}",
        "pass chains fitted on all conversations (S_k survival, R_k length ratio, k = 0..K):",
    ]
    for op, f in report["fits"].items():
        s = " ".join(f"{x:.3f}" for x in f["support"])
        r = " ".join(f"{x:.3f}" for x in f["ratio"])
        lines.append(
            f"  {op:<9} S = {s}   R = {r}   H10: phi = {f['phi']:.3f}, rho = {f['rho']:.3f}"
        )
    names = {"crossover_time": "crossover time t*", "best_generation": "best passes k*"}
    for key, m in report["misfit"].items():
        chain, q = key.split("/")
        lines += [
            "",
            f"{names[q]}, chain {chain}: mean over conversations, predicted vs observed; "
            "agree = share equal; bias = observed - predicted [95% t interval], Holm p; "
            "coverage of the held-out predictive intervals",
        ]
        for c in report["cells"]:
            if c["chain"] != chain or c["quantity"] != q:
                continue
            bias = (
                "-"
                if c["bias"] is None
                else f"{c['bias']:+.2f} [{c['lower']:+.2f}, {c['upper']:+.2f}]"
            )
            ph = "-" if c["p_holm"] is None else f"{c['p_holm']:.3f}"
            lines.append(
                f"  {c['operator']:<9}{c['budget']:>7g}  pred {_mean(c['predicted']):>5}  "
                f"obs {_mean(c['observed']):>5}  agree {c['agree']:.1f}  bias {bias:<22} "
                f"p_holm {ph:<6} covered {c['covered']}/{c['with_interval']}"
            )
        cov = m["coverage"]
        verdict = (
            f"misfit: yes (Holm p = {m['p_holm']:.3f}, {m['operator']} at {m['budget']:g})"
            if m["misfit"]
            else f"misfit: no (smallest Holm p = {_p(m['p_holm'])})"
        )
        lines.append(
            f"  {verdict}; exact agreement {m['agree']:.2f}; predictive intervals cover "
            f"{cov['covered']}/{cov['intervals']}"
        )
    return "\n".join(lines)


def _p(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def _num(x) -> str:
    """A number for tables; ``None`` (JSON's non-finite: an end beyond the last session) is inf."""
    return "inf" if x is None else f"{x:.2f}"


def _end(x) -> str:
    """An interval end for the simulated table; ``None`` (no resamples: ``--resamples 0``) is -."""
    return "-" if x is None else f"{x:.2f}"


def locomo_table(report: dict) -> str:
    """Survival against passes, the geometric-or-not answer, crossover times, as text."""
    lines = [
        f"timeline locomo: {report['conversations']} conversations, {report['passes']} passes, "
        f"lexical reader; intervals: Student-t over conversations",
        "",
        "Answer survival against passes (share of raw-answerable questions still answerable):",
    ]
    for key, s in report["survival"].items():
        cells = "  ".join(
            f"k={c['passes']}: {c['mean']:.3f} [{c['lower']:.3f}, {c['upper']:.3f}]"
            for c in s["survival"][1:]
        )
        lines.append(f"  {key:<22} {cells}")
        fits = "; ".join(
            f"{m}: phi={v['phi']:.3f}" + ("" if m == "geometric" else f", c={v['c']:.3f}")
            for m, v in s["fits"].items()
        )
        gains = "; ".join(
            f"{m} {v['mean']:+.2f} [{_num(v['lower'])}, {_num(v['upper'])}]"
            for m, v in s["loco_gain_over_geometric"].items()
        )
        lines.append(f"  {'':<22} fits: {fits}")
        lines.append(f"  {'':<22} held-out gain over geometric: {gains} -> {s['verdict']}")
    lines += ["", "Crossover time (periodic, every session passed once, vs retain-all):"]
    for c in report["crossover"]:
        t = c["crossover_time"]
        cell = (
            f"{t:.2f} [{_num(c['lower'])}, {_num(c['upper'])}]"
            if t is not None
            else "from session 1"
            if c["first_win"] == 1
            else f"none ({c['status']})"
        )
        fw = c["first_win"]
        first = "never" if fw is None else f"session {fw:.0f}"
        lines.append(f"  {c['operator']:<10}{c['budget']:>8g}  {cell:<28} first win: {first}")
    lines += ["", "Utility (lexical accuracy), mean over the sessions, per policy and budget:"]
    for u in report["utility"]:
        vals = [x for x in u["utility"] if x is not None]
        name = u["policy"] + ("" if u["operator"] is None else "/" + u["operator"])
        if vals:
            lines.append(f"  {name:<24}{u['budget']:>8g}  {sum(vals) / len(vals):.3f}")
    if "llm_passes" in report:
        lines += _llm_table(report["llm_passes"])
    return "\n".join(lines)


def _llm_table(r: dict) -> list[str]:
    """The ``llm_passes`` section as text: survival and utility against passes, per later backend."""
    sub = f"first {r['sessions']} sessions of each" if r["sessions"] else "all sessions"
    lines = [
        "",
        f"Passes 2..{r['passes']} by the llm operator beside extractive ({r['conversations']} "
        f"conversations, {sub}; pass 1: {r['first']}; LLM calls: {r.get('llm_calls')}):",
    ]
    for key, v in r["results"].items():
        s = v["survival"]
        cells = "  ".join(
            f"k={c['passes']}: {c['mean']:.3f} [{_num(c['lower'])}, {_num(c['upper'])}]"
            for c in s["survival"][1:]
        )
        lines.append(f"  {key:<30} at risk {s['questions_at_risk']:>3}  survival {cells}")
        lines.append(f"  {'':<30} verdict: {s['verdict']}")
        for u in v["utility"]:
            cells = "  ".join(
                f"k={c['passes']}: " + ("nan" if c["mean"] is None else f"{c['mean']:.3f}")
                for c in u["cells"]
            )
            lines.append(f"  {'':<30} utility B={u['budget']:g}: {cells}")
    return lines


TIMELINE_CHUNK = 256  # streams per compiled call of sim.simulate_timeline (its CHUNK; tested)
MAX_QUERIES = 2**20  # --queries and the scenario's ``queries``: the same cap
# Peak bytes of one compiled chunk per (stream, budget, session): XLA's intermediates for every
# policy row and pass, measured at about 4.6e2 B (256 budgets, 32 sessions: 1.2 GB peak) and
# rounded up.
_BYTES_PER_CHUNK_CELL = 512
# Bytes kept per (stream, row, budget, session) of the outcome: int result, float64, concatenation.
_BYTES_PER_OUTCOME_CELL = 3 * 8


def timeline_bytes(sessions: int, n_budgets: int, queries: int, n_rows: int, passes: int) -> float:
    """Estimated peak memory of ``sim.simulate_timeline`` (MODEL §10): one compiled chunk of
    ``sim._timeline.CHUNK`` streams plus the outcomes of every stream kept in numpy."""
    chunk = TIMELINE_CHUNK * n_budgets * sessions * _BYTES_PER_CHUNK_CELL
    kept = queries * n_budgets * (n_rows * sessions + 3 * (passes + 1)) * _BYTES_PER_OUTCOME_CELL
    return float(chunk + kept)


def check_timeline_size(ss, budgets, queries, *, scenario=None) -> None:
    """Refuse, before any work, a ``retcon timeline`` run whose streams or budgets cannot fit: the
    scenario's ``queries`` passes the cap of ``--queries``, and the memory estimate
    (``timeline_bytes``) the same ``check_memory`` refusal as ``retcon simulate``.

    Args:
      ss: the loaded ``sim.StreamScenario``. budgets, queries: the options (None: the scenario's).
      scenario: ``--scenario`` as given, to name the file when its own values are too large.
    """
    from retcon.errors import check_memory, memory_limit
    from retcon.vocab import TIMELINE_POLICIES

    src = f"--scenario {scenario}" if scenario else f"the scenario {ss.name!r}"
    q = ss.scenario.queries if queries is None else queries
    if queries is None and not 2 <= q <= MAX_QUERIES:
        raise InputError(
            f"{src}: queries must be an integer in [2, 2**20] (the cap of --queries); got {q}."
        )
    b = ss.scenario.budgets if budgets is None else budgets
    what_b = f"--budgets ({len(b)} values)" if budgets is not None else f"{src} ({len(b)} budgets)"
    what_q = f"--queries {q}" if queries is not None else f"{q} queries"
    rows = 1 + 3 * (len(TIMELINE_POLICIES) - 1)
    need = timeline_bytes(ss.stream.sessions, len(b), q, rows, ss.stream.max_generation)
    per_budget = timeline_bytes(ss.stream.sessions, 1, q, rows, ss.stream.max_generation)
    most = int(memory_limit() // per_budget)
    check_memory(
        f"{what_b} with {what_q}",
        need,
        fix=f"use at most {most} budgets with {q} queries, or fewer queries"
        if most >= 1
        else "use fewer queries",
    )


def run_simulated(args) -> int:
    from retcon.cli import print_json, verbosity
    from retcon.output import (
        OutputSet,
        check_out_dir,
        sidecar,
        to_jsonable,
        write_json_atomic,
        write_text_atomic,
    )
    from retcon.vocab import TIMELINE_POLICIES

    policies, with_router = (
        _policies(args.policy, TIMELINE_POLICIES) if args.policy else (None, False)
    )
    if args.budgets is not None:
        b = args.budgets
        if any(y <= x for x, y in zip(b, b[1:])):
            raise InputError(f"--budgets must be strictly increasing; got {b}.")
    if args.queries is not None and not 2 <= args.queries <= 2**20:
        raise InputError(f"--queries must be an integer in [2, 2**20]; got {args.queries}.")
    if not 0 <= args.resamples <= 100_000:
        raise InputError(f"--resamples must be an integer in [0, 100000]; got {args.resamples}.")
    if args.out is not None:
        check_out_dir("--out", args.out, inputs=[("--scenario", args.scenario)])
    from sim import load_stream

    ss = load_stream(args.scenario)
    check_timeline_size(ss, args.budgets, args.queries, scenario=args.scenario)
    from retcon.commands.sim import enable_compile_cache

    enable_compile_cache()
    from sim import simulate_timeline, summarize_timeline

    chosen = tuple(policies) if policies else TIMELINE_POLICIES
    result = simulate_timeline(
        ss, policies=chosen, budgets=args.budgets, queries=args.queries, seed=args.seed
    )
    gains = None
    if with_router:
        result, gains = _with_router(ss, result, args.seed)
        chosen = (*chosen, ROUTER)
    report = summarize_timeline(
        ss, result, policies=chosen, resamples=args.resamples, seed=args.seed
    )
    if gains is not None:
        report["router"] = {
            "parameters": "the scenario's own (H10 lengths, v(k) from the reader and fidelities)",
            "rule": "myopic: at each session, the state along overflow's pass order with the best "
            "predicted utility of the session's queries (oas.TimelineRouter)",
            "interval": "paired per stream, mean +- 1.96 SE of the time-averaged difference",
            "gains": gains,
        }
    report["seed"] = args.seed
    report = to_jsonable(report)  # plain lists; NaN -> None (the status says why)
    text = timeline_table(report)
    if gains is not None:
        text += "\n\n" + router_table(report["router"], "streams")
    if args.out:
        from oas.real import plot_by_generation, plot_utility

        with OutputSet(args.out, last=("sidecar.json",)) as out:
            plot_utility(report, out / "utility.png")
            plot_by_generation(report, out / "by_generation.png")
            write_json_atomic(out / "timeline.json", report)
            write_text_atomic(out / "timeline.txt", text + "\n")
            write_json_atomic(
                out / "sidecar.json",
                sidecar({"scenario": ss.name}, seed=args.seed, command="timeline"),
            )
        if verbosity(args) >= 0 and not args.json:
            print(f"wrote {', '.join(sorted(out.names)) or 'outputs'} to {out.dir}")
    if args.json:
        print_json(report)
    else:
        print(text)
    return 0


def _with_router(ss, result, seed: int):
    """``result`` with the router's rows appended (one per operator) and its paired gains."""
    import numpy as np

    from oas import scenario_router, simulate_router_timeline, simulated_router_gains
    from retcon.vocab import OPERATORS

    routers = [scenario_router(ss, i) for i in range(len(OPERATORS))]
    mine = simulate_router_timeline(
        ss, routers, budgets=result.budgets, queries=result.outcome.shape[0], seed=seed
    )
    gains = simulated_router_gains(mine, result)
    rows = result.rows + tuple((ROUTER, op) for op in OPERATORS)
    outcome = np.concatenate([result.outcome, mine], axis=1)
    return result._replace(rows=rows, outcome=outcome), gains


def router_table(router: dict, units: str) -> str:
    """The router's gains over each baseline, as text."""
    lines = [
        f"Router over time: gain of its time-averaged utility over each policy "
        f"(95% interval over {units}):"
    ]
    for g in router["gains"]:
        extra = (
            f"  sign-flip p = {g['sign_flip_p']:.3f}, Holm {g['holm_p']:.3f}"
            if "holm_p" in g
            else ""
        )
        lines.append(
            f"  {g['operator']:<10}{g['budget']:>8g}  vs {g['baseline']:<13}"
            f"{g['gain']:+.3f} [{g['lower']:+.3f}, {g['upper']:+.3f}]{extra}"
        )
    if "finding" in router:
        for policy, f in router["finding"].items():
            lines.append(
                f"  vs {policy}: {f['answer']} ({f['above']} of {f['cells']} cells better, "
                f"{f['below']} worse; sign-flip test, Holm over the cells, 5%)"
            )
    return "\n".join(lines)


def timeline_table(report: dict) -> str:
    """The report as text: utility against time per budget and policy, crossover times, ``U(k)``."""
    times = report["times"]
    t_show = sorted({1, *range(4, len(times) + 1, max(1, len(times) // 8)), len(times)})
    lines = [
        f"timeline: {report['scenario']}, {report['sessions']} sessions, {report['queries']} "
        f"streams, ages {report['age']}; theory {report['theory']}",
        "",
        "Utility against time (session t), 95% CI half-width in brackets:",
    ]
    for b in report["budgets"]:
        rows = [u for u in report["utility"] if u["budget"] == b]
        lines.append(f"  budget {b:g}:")
        head = "    " + f"{'policy/operator':<24}" + "".join(f"{'t=' + str(t):>14}" for t in t_show)
        lines.append(head)
        for u in rows:
            name = u["policy"] + ("" if u["operator"] is None else "/" + u["operator"])
            cells = "".join(
                f"{u['utility'][t - 1]:>8.3f} [{(u['upper'][t - 1] - u['lower'][t - 1]) / 2:.3f}]"
                for t in t_show
            )
            lines.append(f"    {name:<24}{cells}")
    lines += ["", "Crossover time (first session from which periodic beats retain-all):"]
    has_theory = any("theory_crossover_time" in c for c in report["crossover"])
    head = (
        f"  {'operator':<10}{'budget':>8}  {'t* [95% interval]':<26}{'status':<10}{'first win':>10}"
    )
    if has_theory:
        head += f"{'theory t*':>12}{'contains':>10}"
    lines.append(head)
    for c in report["crossover"]:
        t = c["crossover_time"]
        cell = (
            f"{t:.2f} [{_end(c['lower'])}, {_end(c['upper'])}]"
            if t is not None and math.isfinite(t)
            else "from session 1"
            if c["first_win"] == 1
            else f"none ({c['status']})"
        )
        fw = c["first_win"]
        line = (
            f"  {c['operator']:<10}{c['budget']:>8g}  {cell:<26}{c['status']:<10}"
            f"{(f'{fw:.0f}' if fw is not None and math.isfinite(fw) else '-'):>10}"
        )
        if has_theory:
            ts = c.get("theory_crossover_time")
            ok = c.get("contains_theory")
            line += f"{(f'{ts:.2f}' if ts is not None and math.isfinite(ts) else '-'):>12}"
            line += f"{('-' if ok is None else 'yes' if ok else 'NO'):>10}"
        lines.append(line)
    lines += [
        "",
        "Utility against the number of passes k (last session; every unit passed k times):",
    ]
    for g in report["by_generation"]:
        us = " ".join(f"{x:.3f}" for x in g["utility"])
        lines.append(
            f"  {g['operator']:<10}{g['budget']:>8g}  U(k=0..) = {us}   best k = {g['best_generation']}"
        )
    return "\n".join(lines)
