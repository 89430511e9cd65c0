"""``retcon simulate`` and ``retcon stress``: the Monte Carlo from the command line.

``retcon simulate [--scenario NAME | --config FILE.toml] [--queries N] [--seed S] [--out DIR] [--json]``
prints, per operator, the table (budget, U_ret, U_op, dU, C, R, SE) and the crossover with its CI.
``retcon stress`` sweeps the Assumption-1 spillover knobs against the budget grid (MODEL §5).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from contextlib import contextmanager

from retcon.errors import InputError, check_at_least, check_memory, memory_limit


def _scenario_options(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--scenario",
        metavar="NAME",
        default=None,
        help="preset: locomo-like (default), single-cluster, longmemeval-like",
    )
    g.add_argument(
        "--config", metavar="FILE.toml", default=None, help="scenario file (docs/simulation.md)"
    )


def register(subparsers) -> None:
    from retcon.commands.common import add_common, list_type

    p = subparsers.add_parser(
        "simulate",
        help="Monte Carlo of dU, coverage and replacement per operator and budget",
        description="Simulate U, dU = C + R per operator and budget and the crossover budget with a "
        "bootstrap CI (MODEL §2-§7). Default scenario: locomo-like.",
    )
    _scenario_options(p)
    p.add_argument(
        "--queries",
        type=int,
        default=None,
        metavar="N",
        help="simulated queries (default: the scenario's `queries`, 65536 for presets)",
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=2000,
        metavar="R",
        help="bootstrap resamples (default 2000)",
    )
    p.add_argument(
        "--processes",
        type=int,
        default=1,
        metavar="P",
        help="split the queries over P JAX processes on this host (jax.distributed over "
        "127.0.0.1); same numbers as one process (default 1). Only for many cores or "
        "accelerators: one XLA process already uses every core, and on 2 cores 2 processes are "
        "slower (docs/scale.md)",
    )
    p.add_argument(
        "--backend",
        choices=("auto", "jax", "numpy"),
        default="auto",
        help="simulation kernel: numpy (sim.numpy_kernel, prefix packing and recall 1; the faster "
        "on a CPU), jax (sim.kernel: any scenario, accelerators, --processes) or auto (numpy "
        "where it applies on a CPU in one process, else jax; default). The two draw different "
        "streams that agree in distribution; the report names the one that ran",
    )
    p.add_argument(
        "--print-scenario",
        metavar="NAME",
        default=None,
        help="print the preset NAME (locomo-like, single-cluster, longmemeval-like) as TOML and "
        "exit: save it (`> my-scenario.toml`), edit it, run it with --config",
    )
    p.add_argument(
        "--timing",
        action="store_true",
        help="add the run's wall-clock seconds (compile, kernel, bootstrap, plots) as `timing` to "
        "--json and simulate.json; without it the same seed gives the same bytes",
    )
    add_common(p, figures=True)
    p.set_defaults(func=run_simulate)

    s = subparsers.add_parser(
        "stress",
        help="Assumption-1 stress test: budget and rank spillover in shared memories",
        description="Sweep the budget-spillover and rank-spillover knobs against the budget grid in "
        "memories shared by many queries; report S, |S|/|dU|, the crossover shift against "
        "the Assumption-1 prediction and whether the sign reversal survives (MODEL §5). "
        + STRESS_BASELINE_NOTE,
    )
    _scenario_options(s)
    s.add_argument(
        "--memories", type=int, default=512, metavar="N", help="shared memories (default 512)"
    )
    s.add_argument(
        "--memory-size",
        type=int,
        default=8,
        metavar="M",
        help="queries (clusters) per memory, 1..64 (default 8)",
    )
    for kind, symbol, bounds in (("budget", "x_b", "in [0, 1]"), ("rank", "x_r", ">= 0")):
        s.add_argument(
            f"--{kind}-spillover",
            type=list_type(example="0,0.1,0.2"),
            default="0,0.05,0.1,0.2,0.4",
            metavar="LIST",
            help=f"comma-separated {symbol} values {bounds} (default 0,0.05,0.1,0.2,0.4)",
        )
    add_common(s, figures=True)
    s.set_defaults(func=run_stress)


def _load(args):
    from sim import load_scenario

    return load_scenario(args.config if args.config is not None else args.scenario)


def _num(x):
    if x is None:
        return None
    x = float(x)
    return None if not math.isfinite(x) else x


def _list(a) -> list:
    return [_num(v) for v in a]


# The per-budget curves of each operator, with their standard errors, in the order --json lists them.
_SIMULATE_CURVES = ("delta", "delta_se", "coverage", "coverage_se", "replacement", "replacement_se")


def simulate_report(scenario, result, cx, seed: int, backend: str = "jax") -> dict:
    """The ``--json`` object of ``retcon simulate`` (``backend``: the kernel that ran)."""
    from retcon.vocab import OPERATORS

    ops = {}
    for i, op in enumerate(OPERATORS):
        ci = (
            None
            if not math.isfinite(cx.ci_lower[i])
            else [float(cx.ci_lower[i]), float(cx.ci_upper[i])]
        )
        ops[op] = {
            "compress_ratio": scenario.operator(op).compress_ratio,
            "budgets": _list(result.budgets),
            "utility_ret": _list(result.utility[0]),
            "utility_op": _list(result.utility[i + 1]),
            **{k: _list(getattr(result, k)[i]) for k in _SIMULATE_CURVES},
            "crossover_budget": _num(cx.crossover_budget[i]),
            "crossover_ci": ci,
            "status": cx.status[i],
            "n_crossings": int(cx.n_crossings[i]),
            "crossover_found_share": float(cx.found_share[i]),
        }
    return {
        "scenario": scenario.name,
        "seed": seed,
        "backend": backend,
        "n_queries": int(result.n_queries),
        "packing": scenario.packing,
        "raw_grounded": _list(result.raw_grounded),
        "operators": ops,
    }


def simulate_table(scenario, result, cx, backend: str = "jax") -> str:
    """The human-readable tables of ``retcon simulate`` (``backend``: the kernel that ran)."""
    from retcon.vocab import OPERATORS

    lines = [
        f"scenario {scenario.name}: {result.n_queries} queries, packing {scenario.packing}, "
        f"retriever {scenario.retriever.order}"
        + (f", recall {scenario.retriever.recall:g}" if scenario.retriever.recall < 1 else "")
        + f"; {backend} kernel"
    ]
    for i, op in enumerate(OPERATORS):
        b = cx.crossover_budget[i]
        if math.isfinite(b):
            ci = (
                f"95% CI [{cx.ci_lower[i]:.1f}, {cx.ci_upper[i]:.1f}]"
                if math.isfinite(cx.ci_lower[i])
                else "95% CI n/a"
            )
            cross = f"crossover_budget {b:.1f} tokens, {ci}, status {cx.status[i]}"
        else:
            cross = "crossover_budget none (no sign change on the grid), status none"
        lines += [
            "",
            f"{op} (compress_ratio {scenario.operator(op).compress_ratio:g}): {cross}",
            f"{'budget':>10} {'U_ret':>8} {'U_op':>8} {'dU':>9} {'C':>9} {'R':>9} {'SE(dU)':>8}",
        ]
        for j, bud in enumerate(result.budgets):
            lines.append(
                f"{bud:10.1f} {result.utility[0, j]:8.4f} {result.utility[i + 1, j]:8.4f} "
                f"{result.delta[i, j]:+9.4f} {result.coverage[i, j]:+9.4f} "
                f"{result.replacement[i, j]:+9.4f} {result.delta_se[i, j]:8.4f}"
            )
    return "\n".join(lines)


SIMULATE_FILES = ("delta.png", "decomposition.png", "simulate.json", "simulate.txt", "sidecar.json")

# Peak bytes of one bootstrap resample of the crossover: the (R, G) draws, weights and flat index
# over at most MAX_BLOCKS blocks, and the (R, 3, nB) curves, with room to spare.
_BYTES_PER_RESAMPLE = 1024 * (4 + 8 + 8 + 8) + 3 * 64 * 8 * 2


def check_resamples(option: str, n: int) -> int:
    """``--resamples`` of ``retcon simulate`` / ``stress``: at least 10, and small enough to fit."""

    check_at_least(option, n, 10)
    check_memory(
        f"{option} {n}",
        n * _BYTES_PER_RESAMPLE,
        fix=f"use at most {memory_limit() // _BYTES_PER_RESAMPLE} resamples",
    )
    return n


def conclusion(result, cx) -> str:
    """The simulate run in words: each operator's crossover, its CI, and what it means."""
    from retcon.vocab import OPERATORS

    lines = ["Conclusion:"]
    for i, op in enumerate(OPERATORS):
        d = result.delta[i]
        b = cx.crossover_budget[i]
        if math.isfinite(b):
            ci = (
                f" (95% CI {cx.ci_lower[i]:.0f} to {cx.ci_upper[i]:.0f})"
                if math.isfinite(cx.ci_lower[i])
                else " (no CI: too few resamples cross)"
            )
            cons, ret = f"consolidating with {op}", "retaining the raw records"
            below, above = (cons, ret) if d[0] > 0 else (ret, cons)
            extra = (
                f"; dU changes sign {int(cx.n_crossings[i])} times, so read the table"
                if cx.status[i] == "multiple"
                else ""
            )
            lines.append(
                f"  {op}: crossover at {b:.0f} tokens{ci}. Below it, {below} wins; "
                f"above it, {above} wins{extra}."
            )
        else:
            winner = f"consolidating with {op}" if d.mean() > 0 else "retaining the raw records"
            lines.append(
                f"  {op}: no crossover between {result.budgets[0]:g} and {result.budgets[-1]:g} "
                f"tokens; {winner} wins at every simulated budget."
            )
    lines.append(
        "  (dU = U(operator) - U(retain); dU > 0: consolidation wins. MODEL §6: consolidation "
        "wins below the crossover budget, retention above.)"
    )
    return "\n".join(lines)


class _CompileClock:
    """Seconds JAX spends compiling or loading compiled code (``jax.monitoring`` duration events)."""

    def __init__(self):
        import jax

        self.seconds = 0.0
        jax.monitoring.register_event_duration_secs_listener(self._on)

    def _on(self, event: str, duration_secs: float, **_kwargs) -> None:
        if event.endswith(("backend_compile_duration", "cache_retrieval_time_sec")):
            self.seconds += duration_secs


def print_scenario(name: str) -> str:
    """The TOML text of the preset ``name`` (``sim/presets/NAME.toml``), to start a scenario from.

    Raises:
      InputError: ``name`` is no preset.
    """
    from importlib import resources

    from sim import PRESETS

    if name not in PRESETS:
        raise InputError(f"--print-scenario takes a preset, one of {list(PRESETS)}; got {name!r}.")
    return resources.files("sim").joinpath("presets", f"{name}.toml").read_text(encoding="utf-8")


def run_simulate(args) -> int:
    import sys
    import time

    from retcon.commands.common import check_out, emit, write_sidecar, wrote
    from retcon.output import OutputSet, write_json_atomic, write_text_atomic
    from retcon.plots import with_format

    if getattr(args, "print_scenario", None) is not None:
        sys.stdout.write(print_scenario(args.print_scenario))
        return 0
    t_start = time.perf_counter()
    from sim import check_processes  # numpy only: before the scenario is read and JAX loads

    processes = check_processes("--processes", getattr(args, "processes", 1))
    if args.queries is not None and not 1 <= args.queries < 2**31:
        raise InputError(f"--queries must be an integer in [1, 2**31); got {args.queries}.")
    check_resamples("--resamples", args.resamples)
    check_out(args, [("--config", args.config)])
    scenario = _load(args)  # a bad scenario file is reported before JAX is imported

    from sim import choose_backend, initialize_from_env, launch, simulate, simulated_crossover

    asked = getattr(args, "backend", "auto")
    if asked == "numpy" and processes > 1:
        raise InputError("--backend numpy runs in one process; use --backend jax with --processes.")
    if processes > 1:
        options = {k: v for k, v in vars(args).items() if k not in ("func", "processes")}
        return launch("simulate", options, processes)
    initialize_from_env()  # one process of a multi-process run started by the environment
    # The run's two keys as uint32 words, derived in numpy (JAX's threefry, bit for bit): the
    # numpy kernel then runs without importing JAX at all, the JAX kernel takes the same words.
    from sim.kernel import key_of_seed, split_key

    k_sim, k_boot = split_key(key_of_seed(args.seed))
    from retcon.commands.common import enable_compile_cache, verbosity

    quiet = verbosity(args) < 0
    backend = choose_backend(scenario, None if asked == "auto" else asked)
    clock = None
    if backend == "jax":
        enable_compile_cache()
        clock = _CompileClock()
    t0, c0 = time.perf_counter(), (clock.seconds if clock else 0.0)
    result = simulate(
        k_sim, scenario, args.queries, progress=False if quiet else None, backend=backend
    )
    t1 = time.perf_counter()
    compile_s = (clock.seconds - c0) if clock else 0.0
    cx = simulated_crossover(k_boot, result, n_resamples=args.resamples)
    t2 = time.perf_counter()
    report = simulate_report(scenario, result, cx, args.seed, backend)
    # seconds of this run: compiling (or loading from the persistent cache) the kernel, running
    # it, the bootstrap CI of the crossover, the plots, and the whole command so far. Only with
    # --timing: results carry no wall-clock numbers, so two runs give the same bytes.
    timing = {
        "compile_s": compile_s,
        "kernel_s": (t1 - t0) - compile_s,
        "bootstrap_ci_s": t2 - t1,
        "plot_s": 0.0,
        "total_s": 0.0,
    }
    if getattr(args, "timing", False):
        report["timing"] = timing
    table = simulate_table(scenario, result, cx, backend)
    words = conclusion(result, cx)
    if "jax" in sys.modules and sys.modules["jax"].process_index() != 0:
        return 0  # multi-process (JAX only): process 0 reports
    files = with_format(SIMULATE_FILES, getattr(args, "format", "png"))
    if args.out:
        from sim import plot_decomposition, plot_delta

        with OutputSet(args.out, last=("sidecar.json",)) as out:
            t3 = time.perf_counter()
            plot_delta(result, cx, scenario.name, out / files[0])
            plot_decomposition(result, scenario.name, out / files[1])
            timing["plot_s"] = time.perf_counter() - t3
            timing["total_s"] = time.perf_counter() - t_start
            write_json_atomic(out / "simulate.json", report)
            write_text_atomic(out / "simulate.txt", words + "\n\n" + table + "\n")
            write_sidecar(
                out,
                scenario.to_dict(),
                seed=args.seed,
                command="retcon simulate",
                n_queries=int(result.n_queries),
                resamples=args.resamples,
                outputs=files[:-1],
            )
    if not args.out:  # with --out, the figure written to simulate.json
        timing["total_s"] = time.perf_counter() - t_start
    after = (
        wrote(files, args.out)
        if args.out
        else "Figures: rerun with --out DIR to write DIR/delta.png (dU per operator with the "
        "crossovers) and DIR/decomposition.png (coverage and replacement), with "
        "simulate.json, simulate.txt and sidecar.json."
    )
    emit(args, report, f"{words}\n\n{table}\n\n{after}")
    return 0


# The per-budget curves and the budgets of each stress condition, in the order --json lists them.
_STRESS_CURVES = (
    "delta",
    "delta_se",
    "coverage_loc",
    "replacement_loc",
    "spillover",
    "spillover_se",
    "spill_ratio",
)
_STRESS_BUDGETS = ("crossover_budget", "predicted_crossover", "crossover_shift")


def stress_report(scenario, res) -> dict:
    """The ``--json`` object of ``retcon stress``."""
    import numpy as np

    from retcon.vocab import OPERATORS
    from sim import spillover_summary

    summary = spillover_summary(res)
    conds = []
    for c in range(len(res.budget_spillover)):
        ops = {}
        for i, op in enumerate(OPERATORS):
            sig = np.abs(res.delta[c, i]) > 2 * res.delta_se[c, i]
            ratio = res.spill_ratio[c, i][sig]
            ops[op] = {
                **{k: _list(getattr(res, k)[c, i]) for k in _STRESS_CURVES},
                "max_spill_ratio": _num(ratio.max()) if ratio.size else None,
                "spill_relative": _num(summary.relative[c, i]),
                "spill_ratio_away": _num(summary.away[c, i]),
                **{k: _num(getattr(res, k)[c, i]) for k in _STRESS_BUDGETS},
                "n_crossings": int(res.n_crossings[c, i]),
                "sign_reversal": bool(res.sign_reversal[c, i]),
                "predicted_reversal": bool(res.predicted_reversal[c, i]),
            }
        conds.append(
            {
                "budget_spillover": float(res.budget_spillover[c]),
                "rank_spillover": float(res.rank_spillover[c]),
                "operators": ops,
            }
        )
    return {
        "scenario": scenario.name,
        "n_memories": res.n_memories,
        "memory_size": res.memory_size,
        "budgets": _list(res.budgets),
        "conditions": conds,
    }


STRESS_BASELINE_NOTE = (
    "Its baseline world (both knobs 0) is not that of `retcon simulate`: the scenario's retriever "
    "noise and distractors are replaced by the other queries' clusters in each memory, so dU and "
    "B* at zero spillover differ from `retcon simulate` on the same scenario; compare rows of "
    "this table with each other."
)


def stress_table(scenario, res, report) -> str:
    from retcon.vocab import OPERATORS

    lines = [
        f"note: {STRESS_BASELINE_NOTE}",
        f"stress test, scenario {scenario.name}: {res.n_memories} memories x {res.memory_size} queries; "
        f"dU = C_loc + R_loc + S; B*: largest + -> - root of dU (model.md §6.4), B*_A1: of C_loc + R_loc; "
        f"|S| relative to the curve's scale (max|S|/max|dU|) and |S|/|dU| at budgets >= 2x away "
        f"from B* (|S|/|dU| near B* is unbounded: dU passes through 0 there)",
        f"{'x_b':>5} {'x_r':>5} {'operator':>9} {'max|S|/max|dU|':>14} {'|S|/|dU| away':>13} "
        f"{'max|S|':>8} {'B*':>9} "
        f"{'B*_A1':>9} {'shift':>9} {'crossings':>9} {'reversal':>9}",
    ]

    def f(x, w=9, p=1):
        return f"{'-':>{w}}" if x is None else f"{x:{w}.{p}f}"

    for c, cond in enumerate(report["conditions"]):
        for i, op in enumerate(OPERATORS):
            o = cond["operators"][op]
            lines.append(
                f"{cond['budget_spillover']:5g} {cond['rank_spillover']:5g} {op:>9} "
                f"{f(o['spill_relative'], 14, 3)} {f(o['spill_ratio_away'], 13, 3)} "
                f"{abs(res.spillover[c, i]).max():8.4f} "
                f"{f(o['crossover_budget'])} {f(o['predicted_crossover'])} {f(o['crossover_shift'])} "
                f"{o['n_crossings']:9d} {'survives' if o['sign_reversal'] else 'LOST':>9}"
            )
    return "\n".join(lines)


def stress_conclusion(report: dict) -> str:
    """``retcon stress`` in words, per operator: in how many conditions the sign reversal
    survives, where it is lost, and how far B* moves from the Assumption-1 prediction (MODEL §5)."""
    from retcon.vocab import OPERATORS

    conds = report["conditions"]
    lines = ["Conclusion:"]
    for op in OPERATORS:
        rows = [(c["budget_spillover"], c["rank_spillover"], c["operators"][op]) for c in conds]
        kept = [r for r in rows if r[2]["sign_reversal"]]
        lost = [f"x_b={b:g} x_r={r:g}" for b, r, o in rows if not o["sign_reversal"]]
        text = f"  {op}: the reversal survives in {len(kept)} of {len(rows)} conditions"
        text += (
            f" (lost at {', '.join(lost[:3])}{', ...' if len(lost) > 3 else ''})" if lost else ""
        )
        shifts = [
            (o["crossover_shift"], b, r) for b, r, o in rows if o["crossover_shift"] is not None
        ]
        if shifts:
            big = max(shifts, key=lambda t: abs(t[0]))
            text += (
                f"; B* moves by up to {big[0]:+.0f} tokens from the Assumption-1 prediction "
                f"(at x_b={big[1]:g}, x_r={big[2]:g})."
            )
        else:
            text += "; no B* to compare with the Assumption-1 prediction."
        lines.append(text)
    lines.append(
        "  (reversal survives: dU > 2 SE at some budget and < -2 SE at the largest; shift: "
        "B* - B*_A1. The table follows.)"
    )
    return "\n".join(lines)


# `retcon stress`'s size, before any work (sim/_stress.py). Memory: one memory's evaluation at a
# time holds about four (nB, M, 7 contexts, M * k_max) float32/int32 arrays (the packings ranked,
# kept and put back in order). Work: memories x conditions x budgets x M**2 record placements
# (each of a memory's M queries ranks the M clusters' records). At the defaults (29 budgets,
# 9 conditions, M = 8) 8192 memories (1.4e8 placements) took 152 s on two busy cores, 512 took 76 s,
# so about 1e6 placements a second once compiled: the cap of 1e11 is about a day of work there.
_STRESS_BYTES_PER_CELL = 4 * 7 * 4
STRESS_MAX_PLACEMENTS = 1e11
_STRESS_RATE = 1e6  # placements a second, as measured above


def check_stress_size(args, scenario) -> None:
    """Refuse a ``retcon stress`` run too large for this machine (memory, as ``simulate``) or for a
    day of work, before JAX is imported; the scenario's own budgets meet the same estimate."""

    if isinstance(args.memories, bool) or not 1 <= args.memories < 2**31:
        raise InputError(f"--memories must be an integer in [1, 2**31); got {args.memories}.")
    m = args.memory_size
    if not 1 <= m <= 64:  # sim.stress's MAX_MEMORY_SIZE
        raise InputError(f"--memory-size must be an integer in [1, 64]; got {m}.")
    # the conditions of sim.stress_conditions: (0, 0), then each knob value > 0 (bad values are
    # refused by sim.stress before any work)
    n_cond = 1 + sum(1 for x in (*args.budget_spillover, *args.rank_spillover) if float(x) > 0)
    nb = len(scenario.budgets)
    src = (
        f"--config {args.config}"
        if args.config is not None
        else f"--scenario {args.scenario}"
        if args.scenario is not None
        else f"the scenario {scenario.name!r}"
    )
    sizes = f"{nb} budgets of {src}, {n_cond} spillover conditions"
    per = _STRESS_BYTES_PER_CELL * nb * m * m * scenario.k_max
    check_memory(
        f"--memory-size {m} ({sizes})", per, fix="use a smaller --memory-size or fewer budgets"
    )
    work = float(args.memories) * n_cond * nb * m * m
    if work > STRESS_MAX_PLACEMENTS:
        most = int(STRESS_MAX_PLACEMENTS // (n_cond * nb * m * m))
        raise InputError(
            f"--memories {args.memories} (--memory-size {m}, {sizes}) needs about {work:.3g} "
            f"record placements of work, about {work / _STRESS_RATE / 3600:.3g} hours on two "
            f"cores; the limit here is {STRESS_MAX_PLACEMENTS:.3g} (about a day); use at most "
            f"{most} memories."
        )


@contextmanager
def _stress_words() -> Iterator[None]:
    """``sim.stress``'s refusals in the option names the user typed."""
    try:
        yield
    except InputError as e:
        msg = str(e)
        for name, opt in (
            ("n_memories", "--memories"),
            ("memory_size", "--memory-size"),
            ("budget_spillover", "--budget-spillover"),
            ("rank_spillover", "--rank-spillover"),
        ):
            msg = msg.replace(name, opt)
        raise InputError(msg) from None


def run_stress(args) -> int:
    from functools import partial

    from retcon.commands.common import check_out, emit, write_set, wrote
    from retcon.output import sidecar
    from retcon.plots import with_format

    xb, xr = args.budget_spillover, args.rank_spillover
    check_out(args, [("--config", args.config)])
    scenario = _load(args)  # a bad scenario file is reported before JAX is imported
    check_stress_size(args, scenario)
    # the knobs' values, before the announcement and without JAX (sim.stress checks them too)
    for opt, values, top in (("--budget-spillover", xb, 1.0), ("--rank-spillover", xr, math.inf)):
        if not all(math.isfinite(x) and 0 <= x <= top for x in values):
            expected = "in [0, 1]" if top == 1.0 else "finite and >= 0"
            raise InputError(f"{opt} values must be {expected}; got {[float(x) for x in values]}.")
    from retcon.commands import _progress

    _progress.announce(
        args,
        f"{1 + sum(x > 0 for x in xb) + sum(x > 0 for x in xr)} spillover conditions on "
        f"{scenario.name}, {args.memories} memories of {args.memory_size} queries; JAX "
        "compiles first, then a bar of queries (on a terminal)",
    )
    import jax

    from sim import stress

    with _stress_words():
        res = stress(
            jax.random.key(args.seed),
            scenario,
            n_memories=args.memories,
            memory_size=args.memory_size,
            budget_spillover=xb,
            rank_spillover=xr,
            progress=_progress.enabled(args),  # the bar of queries the announcement promises
        )
    report = stress_report(scenario, res)
    table = stress_conclusion(report) + "\n\n" + stress_table(scenario, res, report)
    files = with_format(
        ["phase.png", "stress.json", "stress.txt", "sidecar.json"], getattr(args, "format", "png")
    )
    if args.out:
        from sim import plot_phase

        meta = sidecar(
            scenario.to_dict(),
            seed=args.seed,
            command="retcon stress",
            memories=args.memories,
            memory_size=args.memory_size,
            budget_spillover=xb,
            rank_spillover=xr,
            outputs=files[:-1],
        )
        plot = partial(plot_phase, res, scenario.name)
        texts = {"stress.json": report, "stress.txt": table + "\n", "sidecar.json": meta}
        write_set(args.out, {files[0]: plot, **texts})
    after = (
        wrote(files, args.out)
        if args.out
        else "Figure: rerun with --out DIR to write DIR/phase.png (the phase diagrams)."
    )
    emit(args, report, f"{table}\n\n{after}")
    return 0
