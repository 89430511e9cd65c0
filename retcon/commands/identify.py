"""``retcon identify``: fit the reader of MODEL §2 to paired data and predict the crossover.

References: MODEL §2 (reader), §6 (crossover), §8 (paired data, grouped CIs).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    """Add ``retcon identify`` to the ``retcon`` command line."""
    from retcon.commands.common import add_common

    p = subparsers.add_parser(
        "identify",
        help="fit the MODEL §2 reader to paired data; predicted vs observed crossover",
        description=(
            "Identify the reader of MODEL §2 (g, a per query type, phi per operator and type) "
            "from paired data with the evidence_structure column (retcon pair simulate / "
            "retcon pair locomo write it) by maximum likelihood with grouped-bootstrap CIs; "
            "predict every operator's dU(B) and crossover budget on held-out groups (out of "
            "fold) and compare with the observed ones, overall and per stratum of raw evidence "
            "length; diagnose cut packing, multi-unit evidence and a budget-dependent phi."
        ),
    )
    p.add_argument("--data", required=True, metavar="FILE", help="paired-data file")
    p.add_argument(
        "--folds", type=int, default=5, help="group folds (default 5; 0 = leave one group out)"
    )
    p.add_argument(
        "--resamples", type=int, default=200, help="bootstrap refits per fit (default 200)"
    )
    p.add_argument(
        "--strata", type=int, default=3, help="strata of raw evidence length (default 3)"
    )
    p.add_argument("--no-diagnostics", action="store_true", help="skip the diagnostics")
    add_common(p, figures=True)
    p.set_defaults(func=run)


# Peak bytes per paired row and bootstrap resample of identification (weights, cell sums, the
# vmapped Fisher-scoring state), with room to spare.
_BYTES_PER_ROW_RESAMPLE = 1024


def run(args: argparse.Namespace) -> int:

    # identify_report (JAX) after the checks and the progress line
    from oas import check_identifiable, read_paired
    from retcon.commands.common import check_out, emit, write_set, wrote
    from retcon.errors import InputError, check_at_least
    from retcon.output import sidecar, to_jsonable

    for name, v in (("--resamples", args.resamples), ("--strata", args.strata)):
        check_at_least(name, v, 1)
    if args.folds != 0 and args.folds < 2:
        raise InputError(f"--folds must be 0 (leave one group out) or >= 2; got {args.folds}.")
    check_out(args, [("--data", args.data)])
    data = read_paired(args.data)
    from retcon.errors import check_memory, memory_limit

    # every resample is one vmapped refit: (R, n) weights, (R, cells, 17) Jacobians, ...
    per_resample = _BYTES_PER_ROW_RESAMPLE * data.n + 4096
    check_memory(
        f"--resamples {args.resamples}",
        args.resamples * per_resample,
        fix=f"use at most {memory_limit() // per_resample} resamples for {data.n} rows",
    )
    n_groups = check_identifiable(data, f"--data {args.data!r}")  # before the announcement
    from retcon.commands import _progress

    _progress.announce(
        args,
        f"{data.n} rows of {args.data}: identification by {args.folds or 'leave-one-group-out'} "
        f"folds and {args.resamples} bootstrap refits (JAX compiles first, then a bar of stages)",
    )
    folds = args.folds or n_groups
    import jax

    from retcon.commands.common import enable_compile_cache

    enable_compile_cache()  # XLA's compiled kernels kept across runs, as `simulate` does

    from oas import format_report, identify_report, plot_report

    with _progress.bar(args, unit="stage") as bar:

        def report(done: int, total: int, stage: str) -> None:
            bar.note(stage)
            bar.update(done, total)

        rep = identify_report(
            data,
            key=jax.random.key(args.seed),
            folds=folds,
            n_resamples=args.resamples,
            n_strata=args.strata,
            diagnostics=not args.no_diagnostics,
            progress=report,
        )
    from retcon.plots import with_format

    files = with_format(
        ["identify.json", "identify_curves.png", "sidecar.json"], getattr(args, "format", "png")
    )
    if args.out:
        config = {
            "data": str(args.data),
            "folds": folds,
            "resamples": args.resamples,
            "strata": args.strata,
        }
        meta = sidecar(config, seed=args.seed, command="retcon identify", outputs=files[:2])
        plot = lambda path: plot_report(rep, path)  # noqa: E731
        write_set(
            args.out, {files[1]: plot, "identify.json": to_jsonable(rep), "sidecar.json": meta}
        )
    tail = f"\n\n{wrote(files, Path(args.out))}" if args.out else ""
    emit(args, to_jsonable(rep), lambda: format_report(rep) + tail)
    return 0
