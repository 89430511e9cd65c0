"""``python -m benchmarks``: every benchmark from one command, ratios measured side by side.

Run from a clone of the repository (the benchmarks are not part of the installed package):
``python -m benchmarks [--quick] [--full] [--only LIST] [--sizes N ...] [--json] [--out DIR]
[--seed S]`` prints Markdown tables (machine and its limits, simulation kernel JAX vs numpy with
peak memory, cost against budgets and devices, the kernel's stage profile, OAS ridge grid JAX vs
numpy and scikit-learn, grouped bootstrap JAX vs numpy, the data commands against their floors)
and the targets; ``--out DIR`` writes ``bench.json`` (with the sidecar) and ``bench.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys

# The largest size a sweep accepts: the simulation kernel counts queries in int32.
MAX_SIZE = 2**31 - 1
# Rough peak bytes per unit of size (query, instance or row) of the heaviest benchmark.
_BYTES_PER_UNIT = 1024


def _sizes(text: str) -> int:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v >= 1 and v == int(v)):
        raise argparse.ArgumentTypeError(
            f"expected a positive integer such as 100000 or 1e5; got {text!r}"
        )
    if v > MAX_SIZE:
        raise argparse.ArgumentTypeError(f"must be at most 2**31 - 1 = {MAX_SIZE}; got {text!r}")
    return int(v)


def build_parser():
    from retcon.cli import ArgumentParser
    from retcon.commands.common import JoinLists, add_common, list_type

    p = ArgumentParser(
        prog="python -m benchmarks",
        description="Run the performance benchmarks (docs/performance.md) from a clone of the "
        "repository: simulation kernel JAX vs numpy with peak memory, its cost against budgets "
        "and forced host devices, OAS ridge grid JAX vs numpy and scikit-learn, grouped "
        "bootstrap JAX vs numpy, the data commands (pair simulate, read, evaluate, identify) "
        "against their floors, and the machine's memory bandwidth and matmul throughput, all "
        "in one run. Outputs are checked equal before anything is timed. The full default run "
        "takes tens of minutes on 2 cores.",
    )
    scale = p.add_mutually_exclusive_group()
    scale.add_argument(
        "--quick", action="store_true", help="tiny sizes (about a minute): a smoke run"
    )
    scale.add_argument(
        "--full",
        action="store_true",
        help="also run numpy at 10^7 queries and scikit-learn at 10^6 instances (slow on few cores)",
    )
    p.add_argument(
        "--only",
        type=list_type(str, what="benchmark names", example="sim,oas"),
        default=None,
        metavar="LIST",
        help="comma-separated subset of bootstrap,oas,sim,budgets,scaleout,profile,timeline,floors (default: all)",
    )
    p.add_argument(
        "--sizes",
        type=list_type(_sizes, what="sizes"),
        nargs="+",
        action=JoinLists,
        default=None,
        metavar="N",
        help="sizes for every selected size sweep (queries, instances, rows), e.g. 1e4 1e5",
    )
    p.add_argument(
        "--scenario",
        default=None,
        metavar="NAME",
        help="simulation preset or TOML (default locomo-like)",
    )
    add_common(p)
    return p


def run(args) -> int:
    import logging

    from benchmarks import BENCHMARKS, BenchConfig, quick_config, render_report, run_bench
    from retcon.commands.common import check_out, emit, verbosity, write_set, wrote
    from retcon.errors import InputError, check_memory, memory_limit
    from retcon.output import sidecar, to_jsonable

    changes = {}
    if args.only is not None:  # BenchConfig checks the names
        changes["only"] = tuple(args.only)
    if args.sizes is not None:
        s = tuple(sorted(set(args.sizes)))
        check_memory(
            f"--sizes {s[-1]}",
            s[-1] * _BYTES_PER_UNIT,
            fix=f"use sizes up to {memory_limit() // _BYTES_PER_UNIT}",
        )
        selected = changes.get("only", BENCHMARKS)
        # (benchmark, its size sweep, the smallest size it can run, why)
        for name, field, least, why in (
            ("sim", "sim_sizes", 1, "one query"),
            ("oas", "oas_sizes", 70, "10 instances per budget, 7 budgets"),
            ("bootstrap", "bootstrap_sizes", 10, "10 groups"),
        ):
            if name not in selected:
                continue
            if s[0] < least:
                raise InputError(
                    f"--sizes must be >= {least} for the {name} benchmark ({why}); got {s[0]}. "
                    f"Use larger sizes, or --only to leave {name} out."
                )
            changes[field] = s
    if args.full:
        changes.update(numpy_max=None, sklearn_max=None)
    if args.scenario is not None:
        import sim

        try:
            loaded = sim.load_scenario(args.scenario)  # before any benchmark runs
            if "sim" in changes.get("only", BENCHMARKS):
                from tests._references.sim_numpy import params_of

                params_of(loaded)  # the numpy kernel's own refusals (retriever.recall < 1)
        except InputError as e:
            raise InputError(f"--scenario: {e}") from None
        changes["scenario"] = args.scenario
    check_out(args)
    config = quick_config(**changes) if args.quick else BenchConfig(**changes)

    if not args.json and verbosity(args) >= 0:
        print(
            f"python -m benchmarks: the benchmarks {', '.join(config.only)} "
            f"({'quick' if args.quick else 'full'} sizes); a line as each starts",
            file=sys.stderr,
        )
    log = logging.getLogger("benchmarks")

    def say(msg):
        log.info(f"retcon bench: {msg}")

    result = run_bench(args.seed, config, progress=say)
    text = render_report(result)
    command = " ".join(["python -m benchmarks", *sys.argv[1:]])
    if args.out is not None:
        meta = sidecar(dataclasses.asdict(config), seed=args.seed, command=command)
        md = f"Command: `{command}`\n\n{text}\n"
        files = {"bench.md": md, "bench.json": {**meta, "result": to_jsonable(result)}}
        write_set(args.out, files, last=("bench.json",))
    tail = f"\n{wrote(['bench.md', 'bench.json'], args.out)}" if args.out is not None else ""
    emit(args, {"config": dataclasses.asdict(config), "seed": args.seed, **result}, text + tail)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks [options]``: exit 0, or 2 with one stderr line on bad input."""
    import logging

    from retcon.cli import configure_logging
    from retcon.commands.common import verbosity
    from retcon.errors import InputError, cli_spelling

    args = build_parser().parse_args(argv)
    v = verbosity(args)
    configure_logging(logging.DEBUG if v > 0 else logging.WARNING if v < 0 else logging.INFO)
    try:
        with cli_spelling():  # messages name options (--only), not fields
            return run(args)
    except InputError as e:
        sys.stderr.write(f"python -m benchmarks: error: {e}\n")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
