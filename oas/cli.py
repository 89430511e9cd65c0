"""Subcommands of the OAS router: ``pair`` (paired data), ``fit``, ``evaluate``, ``predict``.

``retcon pair simulate`` is defined here; ``oas.real.cli.register_pair`` adds ``pair locomo``
and ``pair longmemeval`` under the same ``pair`` parser when it exists. Heavy imports (JAX, sim,
matplotlib) happen inside each ``run``; ``retcon predict`` never imports JAX.

References: MODEL §8; docs/oas.md; docs/paired-data.md.
"""

from __future__ import annotations

import json
import sys

from retcon.cli import add_common


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
        "--scenario", required=True, help="a sim preset name (sim.PRESETS) or a scenario .toml file"
    )
    p.add_argument("--instances", type=int, required=True, help="number of instances")
    p.add_argument("--out", required=True, metavar="FILE", help="output .jsonl, .csv or .parquet")
    p.add_argument(
        "--budgets",
        default=None,
        help="comma-separated budget grid in tokens (default: the scenario's)",
    )
    p.add_argument(
        "--packing",
        default=None,
        choices=("prefix", "skip", "cut"),
        help="packing for feature 3, budget_fit_fraction (MODEL §2); default the scenario's",
    )
    p.add_argument(
        "--coupling",
        default="shared",
        choices=("shared", "independent"),
        help="one uniform per instance for the four outcomes (shared) or one per action",
    )
    add_common(p, out=False)
    p.set_defaults(func=_run_pair_simulate)

    from oas.real import cli as real_cli

    real_cli.register_pair(pair_sub)

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
    p.add_argument("--out", required=True, metavar="FILE", help="router JSON to write")
    p.add_argument("--alpha", type=float, default=0.1, help="harm bound for tau_B (default 0.1)")
    p.add_argument(
        "--folds", type=int, default=5, help="grouped K-fold for the ridge penalty (default 5)"
    )
    p.add_argument(
        "--calibration-fraction",
        type=float,
        default=0.3,
        help="share of groups held out to fit tau_B (default 0.3)",
    )
    p.add_argument(
        "--packing",
        default="prefix",
        choices=("prefix", "skip", "cut"),
        help="packing for feature 3 of raw-field rows",
    )
    add_common(p, out=False)
    p.set_defaults(func=_run_fit)

    p = subparsers.add_parser(
        "evaluate",
        help="evaluate OAS vs fixed policies, oracle and MLP with grouped CIs",
        description="Score always-ret/merge/abstract/rewrite, best-fixed, oracle, oas, "
        "oas-calibrated, oas-crc and mlp on held-out groups (docs/oas.md).",
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
    p.add_argument("--alpha", type=float, default=0.1, help="harm bound for tau_B (default 0.1)")
    p.add_argument(
        "--folds", type=int, default=5, help="grouped K-fold for the ridge penalty (default 5)"
    )
    p.add_argument(
        "--split",
        default="0.5,0.2,0.3",
        help="shares of groups for train,calibration,test (default 0.5,0.2,0.3)",
    )
    p.add_argument(
        "--resamples", type=int, default=2000, help="bootstrap replicates (default 2000)"
    )
    p.add_argument(
        "--packing",
        default="prefix",
        choices=("prefix", "skip", "cut"),
        help="packing for feature 3 of raw-field rows",
    )
    add_common(p)
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
        "--out", required=True, metavar="FILE", help="predictions to write (.jsonl or .csv)"
    )
    add_common(p, out=False, seed=False)
    p.set_defaults(func=_run_predict)


def _help(parser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _floats(option: str, text: str) -> list[float]:
    from retcon.errors import InputError

    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise InputError(f"{option} must be comma-separated numbers; got {text!r}.") from None
    if not values:
        raise InputError(f"{option} must list at least one number; got {text!r}.")
    return values


def _emit(args, obj: dict, text: str) -> None:
    if args.json:
        from retcon.output import to_jsonable

        print(json.dumps(to_jsonable(obj)))
    else:
        print(text, end="" if text.endswith("\n") else "\n")


def _run_pair_simulate(args) -> int:
    import jax
    import numpy as np

    from oas._paired import format_of, write_paired
    from oas._simulate import simulate_paired
    from retcon.errors import InputError

    if args.instances < 1:
        raise InputError(f"--instances must be an integer >= 1; got {args.instances}.")
    format_of(args.out)
    budgets = None
    if args.budgets is not None:
        budgets = np.asarray(_floats("--budgets", args.budgets))
        if np.any(budgets <= 0):
            raise InputError(f"--budgets must be > 0 tokens; got {args.budgets!r}.")
    try:
        import sim

        sim.load_scenario  # noqa: B018
    except (ImportError, AttributeError):
        raise InputError(
            "retcon pair simulate needs the sim package (sim.load_scenario, "
            "sim.simulate_instances), which is not available."
        ) from None
    data = simulate_paired(
        jax.random.key(args.seed),
        args.scenario,
        args.instances,
        budgets,
        packing=args.packing,
        coupling=args.coupling,
    )
    write_paired(args.out, data)
    summary = {
        "out": args.out,
        "n": data.n,
        "groups": len(np.unique(data.group_id)),
        "budgets": sorted(float(b) for b in np.unique(data.budget)),
        "scenario": args.scenario,
        "seed": args.seed,
        "mean_outcome": dict(
            zip(
                ("ret", "merge", "abstract", "rewrite"),
                data.outcomes.mean(axis=0).round(4).tolist(),
            )
        ),
    }
    _emit(
        args, summary, f"wrote {data.n} paired instances ({summary['groups']} groups) to {args.out}"
    )
    return 0


def _run_fit(args) -> int:
    import jax

    from oas._fit import fit_router
    from oas._paired import read_paired
    from oas._router import save_router
    from retcon.output import sidecar

    data = read_paired(args.data, packing=args.packing)
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
    router = fit_router(
        jax.random.key(args.seed),
        data,
        alpha=args.alpha,
        n_folds=args.folds,
        calibration_fraction=args.calibration_fraction,
        packing=args.packing,
        provenance=prov,
    )
    save_router(args.out, router)
    summary = {
        "out": args.out,
        "n": data.n,
        "penalties": router.penalty.tolist(),
        "tau_calibrated": router.to_json()["thresholds"]["calibrated"],
        "tau_crc": router.to_json()["thresholds"]["crc"],
    }
    _emit(args, summary, f"wrote router ({data.n} instances) to {args.out}")
    return 0


def _run_evaluate(args) -> int:
    import jax

    from oas._evaluate import accuracy_figure, evaluate, evaluation_json, evaluation_table
    from oas._paired import read_paired
    from oas._router import load_router
    from retcon.errors import InputError
    from retcon.output import save_figure_atomic, sidecar, write_json_atomic, write_text_atomic

    fractions = _floats("--split", args.split)
    if len(fractions) != 3 or min(fractions) <= 0:
        raise InputError(
            f"--split must give three positive shares train,calibration,test; got {args.split!r}."
        )
    if args.resamples < 10:
        raise InputError(f"--resamples must be an integer >= 10; got {args.resamples}.")
    router = load_router(args.router) if args.router else None
    data = read_paired(args.data, packing=args.packing)
    ev = evaluate(
        jax.random.key(args.seed),
        data,
        router=router,
        alpha=args.alpha,
        n_folds=args.folds,
        fractions=fractions,
        n_resamples=args.resamples,
    )
    obj = evaluation_json(ev)
    table = evaluation_table(ev)
    if args.out:
        from pathlib import Path

        out = Path(args.out)
        write_text_atomic(out / "evaluation.md", table)
        fig = accuracy_figure(ev)
        save_figure_atomic(fig, out / "accuracy_by_budget.png", dpi=150)
        save_figure_atomic(fig, out / "accuracy_by_budget.pdf")
        config = {
            "data": args.data,
            "router": args.router,
            "alpha": args.alpha,
            "folds": args.folds,
            "split": fractions,
            "resamples": args.resamples,
            "packing": args.packing,
        }
        write_json_atomic(
            out / "evaluation.json",
            {**obj, "sidecar": sidecar(config, seed=args.seed, command="retcon evaluate")},
        )
    _emit(args, obj, table)
    return 0


def _run_predict(args) -> int:
    import numpy as np

    from oas._paired import read_paired
    from oas._predict import predict_rows, write_predictions
    from oas._router import load_router

    router = load_router(args.router)
    data = read_paired(
        args.data, packing=router.packing, vocabulary=router.vocabulary, outcomes=False
    )
    rows = predict_rows(router, data)
    write_predictions(args.out, rows)
    rate = {
        v: float(np.mean([r[f"action_{v}"] != "ret" for r in rows]))
        for v in ("argmax", "calibrated", "crc")
    }
    _emit(
        args,
        {"out": args.out, "n": data.n, "consolidation_rate": rate},
        f"wrote {data.n} predictions to {args.out}",
    )
    return 0
