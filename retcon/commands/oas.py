"""Subcommands of the OAS router: ``pair`` (paired data), ``fit``, ``evaluate``, ``predict``.

``retcon pair simulate`` is defined here; ``retcon.commands.real.register_pair`` adds ``pair locomo``
and ``pair longmemeval`` under the same ``pair`` parser when it exists. Heavy imports (JAX, sim,
matplotlib) happen inside each ``run``; ``retcon predict`` never imports JAX.

References: MODEL §8; docs/oas.md; docs/paired-data.md.
"""

from __future__ import annotations

import sys

from retcon.commands.common import (
    add_common,
    add_moved_out,
    check_out,
    emit,
    enable_compile_cache,
    list_type,
    verbosity,
    write_set,
    wrote,
)
from retcon.vocab import ACTIONS, EVALUATE_INTERVALS
from theory import PACKINGS


def register(subparsers) -> None:
    pair = subparsers.add_parser(
        "pair",
        help="make paired data: outcomes of all four actions per instance",
        description="Make paired data (docs/paired-data.md): for every instance "
        "(query, cluster, budget) the outcomes of ret, merge, abstract "
        "and rewrite.",
    )
    pair_sub = pair.add_subparsers(dest="pair_command", metavar="SOURCE")
    pair.set_defaults(func=lambda args: _help(pair))

    p = pair_sub.add_parser(
        "simulate",
        help="simulated paired data from a sim scenario",
        description="Simulated paired data: instances from sim.simulate_instances, "
        "Bernoulli outcomes of all four actions on the same draw.",
    )
    p.add_argument(
        "--scenario",
        default=None,
        metavar="NAME",
        help="a sim preset name (sim.PRESETS) or a scenario .toml file (default locomo-like, "
        "the same as `retcon simulate`)",
    )
    p.add_argument("--instances", type=int, required=True, help="number of instances")
    p.add_argument(
        "--output", required=True, metavar="FILE", help="paired-data file: .jsonl, .csv or .parquet"
    )
    add_moved_out(p, "--output FILE")
    p.add_argument(
        "--budgets",
        type=list_type(what="budgets in tokens", example="32,64,128"),
        default=None,
        help="comma-separated budget grid in tokens (default: the scenario's)",
    )
    p.add_argument(
        "--packing",
        default=None,
        choices=PACKINGS,
        help="packing for feature 3, budget_fit_fraction (MODEL §2); default the scenario's",
    )
    p.add_argument(
        "--coupling",
        default="shared",
        choices=("shared", "independent"),
        help="one uniform per instance for the four outcomes (shared) or one per action",
    )
    p.add_argument(
        "--groups",
        type=int,
        default=None,
        metavar="G",
        help="spread the questions over G groups (conversations), every row of a question in "
        "one group, round-robin in order of first appearance, so a verdict rule can be checked "
        "at G groups (default: the scenario's own grouping)",
    )
    p.add_argument(
        "--no-structure",
        action="store_true",
        help="leave the evidence_structure column out of the rows (smaller files; "
        "retcon identify and the magnitude checks need it)",
    )
    add_common(p, out=False)
    p.set_defaults(func=_run_pair_simulate)

    from retcon.commands import real as real_cli

    real_cli.register_pair(pair_sub)
    from retcon.commands import pair_import

    pair_import.register_pair(pair_sub)

    p = subparsers.add_parser(
        "fit",
        help="fit the OAS router on paired data; write router JSON",
        description="Fit the ridge OAS router (MODEL §8) on paired data: grouped "
        "train/calibration split, penalty by grouped K-fold CV, tau_B "
        "by max accuracy s.t. harm <= alpha and by conformal risk control.",
    )
    p.add_argument(
        "--data", required=True, metavar="FILE", help="paired data (.jsonl/.csv/.parquet)"
    )
    p.add_argument("--router-out", required=True, metavar="FILE", help="router JSON to write")
    add_moved_out(p, "--router-out FILE")
    _add_alpha_folds(p)
    p.add_argument(
        "--calibration-fraction",
        type=float,
        default=0.3,
        help="share of groups held out to fit tau_B (default 0.3)",
    )
    p.add_argument(
        "--packing",
        default="prefix",
        choices=PACKINGS,
        help="packing for feature 3 of raw-field rows",
    )
    add_common(p, out=False)
    p.set_defaults(func=_run_fit)

    p = subparsers.add_parser(
        "evaluate",
        help="evaluate OAS vs fixed policies, oracle and MLP with grouped CIs",
        description="Score always-ret/merge/abstract/rewrite, best-fixed, oracle, oas, "
        "oas-calibrated, oas-crc and mlp on held-out groups (docs/oas.md), and the theory router "
        "(docs/identify.md) when the data carry evidence_structure. Prints a short summary; "
        "-v prints the full tables, --out DIR writes them with the figure and the JSON.",
    )
    p.add_argument(
        "--data", required=True, metavar="FILE", help="paired data (.jsonl/.csv/.parquet)"
    )
    p.add_argument(
        "--router",
        default=None,
        metavar="FILE",
        help="use this fitted router for the oas policies (else fit one on the train groups)",
    )
    _add_alpha_folds(p)
    p.add_argument(
        "--split",
        type=list_type(what="shares", example="0.5,0.2,0.3"),
        default="0.5,0.2,0.3",
        help="shares of groups for train,calibration,test (default 0.5,0.2,0.3)",
    )
    p.add_argument(
        "--interval",
        default="t",
        choices=EVALUATE_INTERVALS,
        help="t: means over test groups with the Student-t interval on G - 1 df (default; the "
        "few-groups protocol, docs/statistics.md); percentile: pooled mean with the grouped "
        "percentile bootstrap (under-covers with few test groups)",
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=2000,
        help="bootstrap replicates of --interval percentile (default 2000)",
    )
    p.add_argument(
        "--packing",
        default="prefix",
        choices=PACKINGS,
        help="packing for feature 3 of raw-field rows",
    )
    p.add_argument("--allow-overlap", action="store_true", help=_ALLOW_OVERLAP_HELP)
    add_common(p, figures=True)
    p.set_defaults(func=_run_evaluate)

    p = subparsers.add_parser(
        "predict",
        help="choose actions with a fitted router (numpy only, no JAX)",
        description="Predict utilities and actions for paired-data rows (outcome "
        "columns optional) with a router JSON.",
    )
    p.add_argument("--router", required=True, metavar="FILE", help="router JSON from `retcon fit`")
    p.add_argument(
        "--data",
        required=True,
        metavar="FILE",
        help="instances (.jsonl/.csv/.parquet); y_* optional",
    )
    p.add_argument(
        "--decisions",
        required=True,
        metavar="FILE",
        help="per-row utilities and actions to write (.jsonl or .csv)",
    )
    add_moved_out(p, "--decisions FILE")
    p.add_argument("--allow-overlap", action="store_true", help=_ALLOW_OVERLAP_HELP)
    add_common(p, out=False, seed=False)
    p.set_defaults(func=_run_predict)


_ALLOW_OVERLAP_HELP = (
    "score groups the --router was fitted or calibrated on, with a warning (refused by default: "
    "such scores are in-sample)"
)


# Messages of the fitted models, in the user's terms (they name the data, not a class).
_FITTED_WORDS = {
    "Router.": "the router fitted on it: ",
    "TheoryRouter.": "the theory router identified on it: ",
    "fit_router: ": "",
    "evaluate: ": "",
    "group_split: ": "",
}


def _add_alpha_folds(p) -> None:
    """``--alpha`` and ``--folds`` of ``fit`` and ``evaluate``."""
    p.add_argument(
        "--alpha",
        type=float,
        default=0.1,
        help="harm bound for tau_B in [0, 1); 0 is the paper's zero-harm rule (default 0.1)",
    )
    p.add_argument(
        "--folds", type=int, default=5, help="grouped K-fold for the ridge penalty (default 5)"
    )


def _help(parser) -> int:
    parser.print_help(sys.stdout)
    return 2


# Rough peak bytes per simulated paired instance (instances, outcomes, rows, the written file).
_BYTES_PER_INSTANCE = 4096
# Disk bytes per written paired row, rounded up from `pair simulate --instances 400` (locomo-like,
# 2 and 8 budgets): 1,874 bytes a row on average in .jsonl (the longest 1,965), 1,316 in .csv. The
# file is written whole beside its final name, then renamed; `--output` needs this times
# --instances free (retcon.output.check_free_space).
_DISK_BYTES_PER_ROW = 2048
_CHUNK_ROWS = 2048  # pair simulate: rows built and written at a time (JSONL)


def _check_split_option(fractions: list[float]) -> list[float]:
    from retcon.errors import InputError

    if len(fractions) != 3 or not all(0 < f < float("inf") for f in fractions):
        raise InputError(
            f"--split must give three positive finite shares train,calibration,test; got "
            f"{_joined(fractions)!r}."
        )
    return fractions


def _joined(values) -> str:
    """A parsed list option as a user would type it: ``0.5,0.2,0.3``."""
    return ",".join(f"{v:g}" for v in values)


def _check_alpha(alpha: float) -> None:
    from retcon.errors import check_range

    check_range("--alpha", alpha, 0.0, 1.0, low_open=False)


def _check_folds(folds: int, data, fractions, part: int, split_option: str, path: str) -> None:
    """``--folds`` against the groups the split leaves for training, in CLI words."""
    from oas import split_sizes
    from retcon.errors import InputError, check_at_least

    check_at_least("--folds", folds, 2)
    n_groups = len(set(map(str, data.group_id)))
    if n_groups < len(fractions):
        raise InputError(
            f"--data {path}: {n_groups} groups (distinct group_id); {split_option} needs "
            f"at least {len(fractions)}."
        )
    train = split_sizes(n_groups, fractions)[part]
    if train >= folds:
        return
    need = n_groups
    while split_sizes(need, fractions)[part] < folds and need < 10**7:
        need += 1
    fix = (
        f"--folds {train} or less, or data with at least {need} groups"
        if train >= 2
        else f"data with at least {need} groups"
    )
    raise InputError(
        f"--folds {folds} needs at least {folds} training groups; --data has {n_groups} groups "
        f"(distinct group_id) and {split_option} leaves {train} for training. Use {fix}."
    )


def _spread_over_groups(data, n_groups: int):
    """``data`` with its questions dealt round-robin over ``n_groups`` groups ``g0``, ``g1``, ...
    in order of first appearance (every row of a question in one group); an error naming
    ``--groups`` when there are fewer questions than groups."""
    import numpy as np

    from retcon.errors import InputError

    _, first, inverse = np.unique(data.query_id, return_index=True, return_inverse=True)
    if first.size < n_groups:
        raise InputError(
            f"--groups {n_groups}: the data has only {first.size} questions; use --groups <= "
            f"{first.size} or more --instances."
        )
    rank = np.argsort(np.argsort(first))  # order of first appearance of each question
    width = len(str(n_groups - 1))
    names = np.array([f"g{j:0{width}d}" for j in range(n_groups)])
    return data._replace(group_id=names[rank[inverse] % n_groups])


def _run_pair_simulate(args) -> int:
    import numpy as np

    from retcon.errors import InputError, check_at_least, check_memory, memory_limit
    from retcon.output import MIN_FREE_BYTES, check_out_file

    check_at_least("--instances", args.instances, 1)
    check_memory(
        f"--instances {args.instances}",
        args.instances * _BYTES_PER_INSTANCE,
        fix=f"use at most {memory_limit() // _BYTES_PER_INSTANCE} instances per file",
    )
    budgets = None
    if args.budgets is not None:
        budgets = np.asarray(args.budgets)
        if not np.all((budgets > 0) & np.isfinite(budgets)):
            raise InputError(
                f"--budgets must be finite numbers > 0 (tokens); got {_joined(args.budgets)!r}."
            )
        if np.any(np.diff(budgets) <= 0):
            raise InputError(
                f"--budgets must be strictly increasing; got {_joined(args.budgets)!r}."
            )
    try:
        import sim

        sim.load_scenario  # noqa: B018
    except (ImportError, AttributeError):
        raise InputError(
            "retcon pair simulate needs the sim package (sim.load_scenario, "
            "sim.simulate_instances), which is not available."
        ) from None
    scenario = args.scenario if args.scenario is not None else sim.DEFAULT_PRESET
    from oas import format_of  # simulate_paired (JAX) after the checks and the progress line

    check_out_file(
        "--output",
        args.output,
        inputs=[("--scenario", scenario)],
        min_free=max(MIN_FREE_BYTES, args.instances * _DISK_BYTES_PER_ROW),
    )
    try:
        format_of(args.output)
    except InputError as e:
        raise InputError(f"--output: {e}") from None
    if args.groups is not None and not 1 <= args.groups <= args.instances:
        raise InputError(
            f"--groups must be an integer in [1, --instances = {args.instances}]; got "
            f"{args.groups}."
        )
    config = sim.load_scenario(scenario)  # a bad --scenario fails here, before the work
    if args.groups is not None:
        # one question per ceil(--instances / budgets) rows (sim.simulate_instances)
        n_budgets = len(budgets) if budgets is not None else len(config.budgets)
        n_questions = -(-args.instances // n_budgets)
        if n_questions < args.groups:
            raise InputError(
                f"--groups {args.groups}: {args.instances} instances over {n_budgets} budgets "
                f"hold only {n_questions} questions; use --groups <= {n_questions} or at least "
                f"{args.groups * n_budgets} --instances."
            )
    from retcon.commands import _progress

    _progress.announce(
        args,
        f"{args.instances} paired instances of {scenario} to {args.output}; JAX compiles first "
        "(seconds to a minute), then the instances",
    )
    import jax

    from oas import STRUCTURE_COLUMN, simulate_paired_chunks, write_paired, write_paired_chunks

    enable_compile_cache()  # XLA's compiled kernels kept across runs, as `simulate` does

    # JSONL is written a chunk of rows at a time (the same bytes; peak memory bounded by a chunk's
    # Python objects); --groups relabels over the whole draw and CSV/Parquet write whole tables
    chunked = args.groups is None and format_of(args.output) == "jsonl"
    chunks = simulate_paired_chunks(
        jax.random.key(args.seed),
        scenario,
        args.instances,
        budgets,
        packing=args.packing,
        coupling=args.coupling,
        rows=_CHUNK_ROWS if chunked else None,
    )
    n, groups, budget_values, outcome_sums = 0, set(), set(), np.zeros(4)

    def tallied(chunks):
        nonlocal n
        for data in chunks:
            if args.groups is not None:
                data = _spread_over_groups(data, args.groups)
            if args.no_structure:
                data = data._replace(
                    meta={k: v for k, v in data.meta.items() if k != STRUCTURE_COLUMN}
                )
            n += data.n
            groups.update(data.group_id.tolist())
            budget_values.update(np.unique(data.budget).tolist())
            outcome_sums[:] += data.outcomes.sum(axis=0)  # 0/1 sums: exact in float64
            yield data

    if chunked:
        write_paired_chunks(args.output, tallied(chunks))
    else:
        (data,) = tallied(chunks)
        write_paired(args.output, data)
    summary = {
        "output": args.output,
        "n": n,
        "groups": len(groups),
        "budgets": sorted(float(b) for b in budget_values),
        "scenario": scenario,
        "seed": args.seed,
        "mean_outcome": dict(
            zip(("ret", "merge", "abstract", "rewrite"), (outcome_sums / n).round(4).tolist())
        ),
    }
    emit(
        args,
        summary,
        f"wrote {n} paired instances ({summary['groups']} groups, scenario {scenario}) "
        f"to {args.output}",
    )
    return 0


def _run_fit(args) -> int:
    from oas import read_paired  # fit_router (JAX) after the checks and the progress line
    from retcon.errors import check_at_least, check_range
    from retcon.output import check_out_file, sidecar

    _check_alpha(args.alpha)
    check_range("--calibration-fraction", args.calibration_fraction, 0.0, 1.0)
    check_at_least("--folds", args.folds, 2)
    check_out_file("--router-out", args.router_out, inputs=[("--data", args.data)])
    data = read_paired(args.data, packing=args.packing)
    fractions = (1 - args.calibration_fraction, args.calibration_fraction)
    _check_folds(
        args.folds,
        data,
        fractions,
        0,
        f"--calibration-fraction {args.calibration_fraction:g}",
        args.data,
    )
    from retcon.commands import _progress

    _progress.announce(
        args,
        f"{data.n} rows of {args.data}: the ridge penalty by {args.folds}-fold grouped "
        "cross-validation, then the calibrated thresholds (JAX compiles first)",
    )
    prov = sidecar(
        {
            "data": args.data,
            "alpha": args.alpha,
            "folds": args.folds,
            "calibration_fraction": args.calibration_fraction,
            "packing": args.packing,
        },
        seed=args.seed,
        command="retcon fit",
    )
    import jax

    from oas import fit_router, save_router
    from retcon.errors import worded_for

    with worded_for(f"--data {args.data}", _FITTED_WORDS):
        router = fit_router(
            jax.random.key(args.seed),
            data,
            alpha=args.alpha,
            n_folds=args.folds,
            calibration_fraction=args.calibration_fraction,
            packing=args.packing,
            provenance=prov,
        )
    save_router(args.router_out, router)
    summary = {
        "router_out": args.router_out,
        "n": data.n,
        "penalties": router.penalty.tolist(),
        "tau_calibrated": router.to_json()["thresholds"]["calibrated"],
        "tau_crc": router.to_json()["thresholds"]["crc"],
        "calibration_harm": router.provenance["calibration_harm"],
    }
    emit(args, summary, fit_summary(router, args.router_out))
    return 0


def fit_summary(router, path) -> str:
    """What ``retcon fit`` prints: the split, the ridge penalty per action, the tau_B range of
    each calibration and the calibration harm against alpha."""
    import numpy as np

    prov = router.provenance
    lines = [
        f"wrote router to {path}: {prov['n_train']} training rows ({prov['groups_train']} groups), "
        f"{prov['n_calibration']} calibration rows ({prov['groups_calibration']} groups)",
        "ridge penalty per action: "
        + ", ".join(f"{a} {p:g}" for a, p in zip(ACTIONS, router.penalty)),
    ]
    for name in ("calibrated", "crc"):
        tau = getattr(router, name).tau
        finite = tau[np.isfinite(tau)]
        if not finite.size:
            span = f"none finite on {tau.size} budgets"
        elif finite.min() == finite.max():
            span = f"{finite.min():.3g} on {finite.size} of {tau.size} budgets"
        else:
            span = (
                f"{finite.min():.3g} to {finite.max():.3g} on {finite.size} of {tau.size} budgets"
            )
        retain = tau.size - finite.size
        lines.append(
            f"tau_B ({name}): {span}" + (f"; {retain} budgets always retain" if retain else "")
        )
    harm = prov["calibration_harm"]
    lines.append(
        f"calibration harm (worst budget) vs alpha {router.alpha:g}: "
        + ", ".join(f"{v} {harm[v]['max_per_budget']:.3f}" for v in ("calibrated", "crc"))
        + f" (overall {harm['calibrated']['overall']:.3f}, {harm['crc']['overall']:.3f})"
    )
    return "\n".join(lines)


def evaluation_summary(ev) -> str:
    """The default output of ``retcon evaluate``: overall metrics and the differences to best-fixed."""
    from oas import DIFFERENCES, evaluation_table

    table = evaluation_table(ev)
    head = table.split("\n\nAccuracy per budget")[0]
    lines = [head, "", "Accuracy minus best-fixed (all budgets, 95% CI):"]
    for d, name in enumerate(ev.info.get("differences", DIFFERENCES)):
        lines.append(
            f"  {name}: {ev.diff_point[d, -1]:+.3f} "
            f"[{ev.diff_lower[d, -1]:+.3f}, {ev.diff_upper[d, -1]:+.3f}]"
        )
    lines.append("")
    return "\n".join(lines)


EVALUATE_FILES = (
    "evaluation.md",
    "accuracy_by_budget.png",
    "accuracy_by_budget.pdf",
    "router_decisions.png",
    "evaluation.json",
    "sidecar.json",
)


def _evaluate_files(fmt: str) -> list[str]:
    """``EVALUATE_FILES`` with the figures in ``--format`` (the PDF of the accuracy figure is
    always written, once)."""
    from retcon.plots import with_format

    return list(dict.fromkeys(with_format(EVALUATE_FILES, fmt)))


def _run_evaluate(args) -> int:
    from functools import partial

    from oas import load_router, read_paired  # JAX after the checks and the progress line
    from retcon.errors import check_at_least, check_memory, memory_limit
    from retcon.output import sidecar
    from retcon.plots import save

    fractions = _check_split_option(args.split)
    _check_alpha(args.alpha)
    check_at_least("--folds", args.folds, 2)
    check_at_least("--resamples", args.resamples, 10)
    check_out(args, [("--data", args.data), ("--router", args.router)])
    router = load_router(args.router, option="--router") if args.router else None
    data = read_paired(args.data, packing=args.packing)
    from retcon.commands import _progress

    n_groups = len(set(map(str, data.group_id)))
    per_resample = 12 * n_groups + 16 * 1024  # (R, G) draws and weights, (R, statistics)
    check_memory(
        f"--resamples {args.resamples}",
        args.resamples * per_resample,
        fix=f"use at most {memory_limit() // per_resample} resamples",
    )
    if router is None:
        _check_folds(args.folds, data, fractions, 0, f"--split {_joined(fractions)}", args.data)
    elif n_groups < 3:
        _check_folds(2, data, fractions, 0, f"--split {_joined(fractions)}", args.data)
    fitted = "the given router" if args.router else f"a {args.folds}-fold ridge fit"
    _progress.announce(
        args,
        f"{data.n} rows of {args.data}: a split by group, {fitted}, every policy scored on "
        "the test groups (JAX compiles first, then a bar of stages)",
    )
    import jax

    from oas import accuracy_figure, decisions_figure, evaluate, evaluation_json, evaluation_table
    from retcon.errors import worded_for

    enable_compile_cache()  # XLA's compiled kernels kept across runs, as `simulate` does

    with worded_for(f"--data {args.data}", _FITTED_WORDS), _progress.bar(args, unit="stage") as bar:

        def report(done: int, total: int, stage: str) -> None:
            bar.note(stage)
            bar.update(done, total)

        ev = evaluate(
            jax.random.key(args.seed),
            data,
            router=router,
            alpha=args.alpha,
            n_folds=args.folds,
            fractions=fractions,
            n_resamples=args.resamples,
            allow_overlap=args.allow_overlap,
            interval=args.interval,
            progress=report,
        )
    obj = evaluation_json(ev)
    table = evaluation_table(ev)
    from oas import token_json, token_markdown, token_table

    tokens = token_table(data)  # tokens beside accuracy (docs/oas.md)
    obj = {**obj, "tokens": token_json(tokens)}
    table = table + ("" if table.endswith("\n") else "\n") + "\n" + token_markdown(tokens)
    files = _evaluate_files(getattr(args, "format", "png"))
    if args.out:
        fig = accuracy_figure(ev)
        written: dict = {"evaluation.md": table}
        for name in files:
            if name.startswith("accuracy_by_budget."):
                written[name] = partial(
                    save, fig, **({} if name.endswith(".pdf") else {"dpi": 150})
                )
        written[files[-3]] = lambda path: save(decisions_figure(ev, data), path, dpi=130)
        config = {
            "data": args.data,
            "router": args.router,
            "alpha": args.alpha,
            "folds": args.folds,
            "split": fractions,
            "interval": args.interval,
            "resamples": args.resamples,
            "packing": args.packing,
            "allow_overlap": args.allow_overlap,
        }
        written["evaluation.json"] = obj
        meta = sidecar(config, seed=args.seed, command="retcon evaluate", outputs=files[:-1])
        write_set(args.out, {**written, "sidecar.json": meta})

    def text() -> str:
        body = table if verbosity(args) > 0 else evaluation_summary(ev)
        body += "" if body.endswith("\n") else "\n"
        if args.out:
            return body + f"{wrote(files, args.out)} (evaluation.md: the full tables)"
        if verbosity(args) <= 0:
            return body + (
                "Full tables (per budget, harm, paired differences): -v, or --out DIR to write them."
            )
        return body

    emit(args, obj, text)
    return 0


def _run_predict(args) -> int:
    import numpy as np

    from oas import check_router_overlap, load_router, predict_rows, read_paired, write_predictions
    from retcon.output import check_out_file

    check_out_file(
        "--decisions",
        args.decisions,
        inputs=[("--data", args.data), ("--router", args.router)],
        suffixes=(".jsonl", ".ndjson", ".csv"),
    )
    router = load_router(args.router, option="--router")
    data = read_paired(
        args.data, packing=router.packing, vocabulary=router.vocabulary, outcomes=False
    )
    check_router_overlap(
        router, data.group_id, allow_overlap=args.allow_overlap, where="groups of --data"
    )
    rows = predict_rows(router, data)
    write_predictions(args.decisions, rows)
    rate = {
        v: float(np.mean([r[f"action_{v}"] != "ret" for r in rows]))
        for v in ("argmax", "calibrated", "crc")
    }
    emit(
        args,
        {"decisions": args.decisions, "n": data.n, "consolidation_rate": rate},
        f"wrote {data.n} decisions to {args.decisions}",
    )
    return 0
