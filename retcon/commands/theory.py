"""``retcon crossover``: the crossover budget of the single-cluster model, with its decomposition.

References: docs/model.md §6 (Proposition 2).
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

# With no --dist at all, the embedded example: it shows the sign reversal (B* ~ 530 tokens).
DEFAULT_DIST = ("exponential", {"mean": 300.0})
DIST_OPTIONS = ("length", "max", "mean", "shape", "scale", "sigma")


def register(subparsers) -> None:
    """Add ``retcon crossover`` to the ``retcon`` command line."""
    from retcon.commands.common import JoinLists, add_common, list_type

    p = subparsers.add_parser(
        "crossover",
        help="crossover budget B* of the single-cluster model (docs/model.md §6)",
        description=(
            "Crossover budget B* of the single-cluster model (docs/model.md §6): below B* "
            "consolidating the cluster (compress_ratio rho, fidelity phi) beats retaining it "
            "raw; above B* retention wins. Prints kappa, the tight-budget condition, the "
            "loose-budget limit, the closed form where one exists (§6.6) and a table of "
            "dU = coverage + replacement over the budgets. Without --dist: an exponential "
            "length with mean 300 tokens. Infinite values are null in JSON (status says why)."
        ),
    )
    p.add_argument(
        "--dist",
        default=None,
        metavar="NAME",
        help="law of the cluster's raw length: point, uniform, exponential, gamma, "
        "lognormal, weibull (default: exponential with --mean 300)",
    )
    p.add_argument("--length", type=float, default=None, help="point: the length l (tokens)")
    p.add_argument("--max", type=float, default=None, help="uniform: U(0, max) (tokens)")
    p.add_argument("--mean", type=float, default=None, help="exponential: the mean (tokens)")
    p.add_argument("--shape", type=float, default=None, help="gamma, weibull: shape")
    p.add_argument(
        "--scale", type=float, default=None, help="gamma, weibull, lognormal: scale (tokens)"
    )
    p.add_argument("--sigma", type=float, default=None, help="lognormal: sigma of log L")
    p.add_argument(
        "--lengths",
        default=None,
        metavar="FILE",
        help="your own raw cluster lengths (tokens): one number per line, a JSON list, or a CSV "
        "column (--lengths-column); the empirical law theory.empirical_lengths of the sample "
        "(docs/model.md §6.7), instead of --dist",
    )
    p.add_argument(
        "--lengths-column",
        default=None,
        metavar="NAME",
        help="with --lengths: read the CSV column NAME (the file then has a header row)",
    )
    add_model_options(p)
    p.add_argument(
        "--budgets",
        nargs="+",
        type=list_type(what="budgets in tokens", example="100,200"),
        action=JoinLists,
        default=None,
        metavar="B",
        help="budgets in tokens (space- or comma-separated); default: 13 budgets, "
        "geometric from median/16 to 8 x median of the length",
    )
    add_common(p, seed=False, figures=True)
    p.set_defaults(func=run)


def add_model_options(p) -> None:
    """The cluster model's parameters of MODEL §6 (rho, phi, a, g), one set of defaults and help
    texts for every command that evaluates the closed form (``crossover``, ``advise``)."""
    p.add_argument("--compress-ratio", type=float, default=0.3, help="rho in (0, 1) (default 0.3)")
    p.add_argument("--fidelity", type=float, default=0.85, help="phi >= 0 (default 0.85)")
    p.add_argument(
        "--acc-raw", type=float, default=0.9, help="a: accuracy with raw evidence (default 0.9)"
    )
    p.add_argument(
        "--acc-guess", type=float, default=0.1, help="g: accuracy with none, < a (default 0.1)"
    )


def default_budgets(dist, given: str = ""):
    """13 budgets, geometric from ``median/16`` to ``8 median``, rounded to 3 significant digits.

    Args:
      dist: the length law.
      given: the options that made it, as typed (``--mean 1e308``), for the error message.
    """
    import numpy as np

    from retcon.errors import InputError

    med = float(dist.ppf(0.5))
    lo, hi = med / 16.0, med * 8.0
    if not (math.isfinite(lo) and math.isfinite(hi) and lo >= 1e-300 and hi <= 1e300):
        raise InputError(
            f"{given or 'the length law'} puts the median length at {med:g} tokens, so the default "
            f"budget grid (median/16 to 8 x median) is not finite; give lengths between 1e-290 "
            f"and 1e290 tokens, or list the budgets with --budgets."
        )
    grid = np.geomspace(lo, hi, 13)
    digits = 2 - np.floor(np.log10(grid)).astype(int)
    return np.array([round(float(b), int(d)) for b, d in zip(grid, digits)])


def _num(v):
    """A plain float (infinities stay; ``to_jsonable`` writes them as ``null`` in JSON)."""
    return None if v is None else float(v)


def lengths_sample(args) -> list[float] | None:
    """The ``--lengths`` sample, read and checked (``None`` without ``--lengths``)."""
    from retcon.errors import InputError

    path = getattr(args, "lengths", None)
    column = getattr(args, "lengths_column", None)
    if path is None:
        if column is not None:
            raise InputError("--lengths-column NAME needs --lengths FILE; got no --lengths.")
        return None
    given = [f"--{k}" for k in DIST_OPTIONS if getattr(args, k, None) is not None]
    if args.dist is not None or given:
        raise InputError(
            f"--lengths FILE replaces the length law; got it together with "
            f"{' '.join((['--dist'] if args.dist is not None else []) + given)}."
        )
    from retcon.commands.lengths_file import read_lengths

    return read_lengths(path, column)


def answer(res: dict) -> str:
    """``retcon crossover``'s conclusion in plain words: which side wins below and above B*."""
    b = res["crossover_budget"]
    status = res["status"]
    if status == "none" or b is None:
        first, last = res["table"][0], res["table"][-1]
        if first["delta"] > 0 and last["delta"] > 0:
            side = "consolidating the cluster wins at every budget of the table"
        elif first["delta"] <= 0 and last["delta"] <= 0:
            side = "retaining the raw records wins at every budget of the table"
        else:
            side = "read the table for the sign of dU"
        return f"Answer: no crossover ({res['reason']}); {side}."
    text = (
        f"Answer: below B* = {b:.4g} tokens consolidating the cluster (compress_ratio "
        f"{res['compress_ratio']:g}) wins (dU > 0); above it retaining the raw records wins "
        f"(dU < 0)."
    )
    if status == "multiple":
        lo, hi = res["sign_change_between"]
        text += (
            f"\n  status multiple: dU changes sign more than once (roots from {_fmt(lo)} to "
            f"{_fmt(hi)} tokens); B* is the largest + -> - root, above which retention wins for "
            "good. "
            + (
                "An empirical sample has a step CDF, so dU jumps at each observed length and can "
                "cross zero again in the sparse lower tail (docs/model.md §6.7)."
                if res["dist"]["name"] == "empirical"
                else "See docs/model.md §6.7 for what breaks uniqueness."
            )
        )
    return text


def compute(args) -> dict:
    """Everything ``retcon crossover`` reports, as one JSON-ready dict."""
    import numpy as np

    import theory
    from retcon.errors import Spell
    from theory import check_model

    params = {k: getattr(args, k) for k in DIST_OPTIONS}
    sample = lengths_sample(args)
    if sample is not None:
        name, params = "empirical", {}
    elif args.dist is None and all(v is None for v in params.values()):
        name, params = DEFAULT_DIST
    else:
        name = "exponential" if args.dist is None else args.dist
    rho, phi, a, g = check_model(
        args.compress_ratio, args.fidelity, args.acc_raw, args.acc_guess, Spell("crossover")
    )
    if sample is not None:
        dist = theory.empirical_lengths(sample)
    else:
        dist = theory.make_length_dist(name, **params)
    budgets = args.budgets
    given = " ".join(f"--{k} {v:g}" for k, v in params.items() if v is not None)
    budgets = default_budgets(dist, given) if budgets is None else budgets
    kw = dict(compress_ratio=rho, fidelity=phi, acc_raw=a, acc_guess=g)
    dec = theory.delta_curve(dist, budgets, **kw)
    cross = theory.crossover(dist, **kw)
    tight = theory.tight_budget_condition(dist, **kw)
    return {
        "crossover_budget": _num(cross.crossover_budget),
        "status": cross.status,
        "reason": cross.reason,
        # the two scan budgets between which dU changes sign (where the root finder looked;
        # a numerical location, not a confidence interval: the model here is exact)
        "sign_change_between": None if cross.bracket is None else [_num(b) for b in cross.bracket],
        "kappa": _num(cross.kappa),
        "tight_budget": {
            "holds": tight.holds,
            "value": _num(tight.value),
            "kappa": _num(tight.kappa),
            "tail_exponent": _num(tight.tail_exponent),
            "limit_ratio": _num(tight.limit_ratio),
        },
        "loose_budget_limit": theory.loose_budget_limit(fidelity=phi, acc_raw=a, acc_guess=g),
        "closed_form_crossover": _num(theory.closed_form_crossover(dist, **kw)),
        "elasticity_nonincreasing": theory.elasticity_nonincreasing(dist)
        if dist.continuous
        else None,
        "dist": {"name": dist.name, "params": dist.params, "mean": dist.mean},
        "compress_ratio": rho,
        "fidelity": phi,
        "acc_raw": a,
        "acc_guess": g,
        # `+ 0.0` turns the -0.0 of an exact zero into 0.0
        "table": [
            {
                "budget": float(b),
                "delta": float(d) + 0.0,
                "coverage": float(c) + 0.0,
                "replacement": float(r) + 0.0,
            }
            for b, d, c, r in zip(np.ravel(budgets), dec.delta, dec.coverage, dec.replacement)
        ],
    }


def format_text(res: dict) -> str:
    """The human-readable report of `compute`'s result."""
    t = res["tight_budget"]
    dist = res["dist"]
    desc = dist["name"] + "(" + ", ".join(f"{k}={v:g}" for k, v in dist["params"].items()) + ")"
    lines = [
        answer(res),
        "Single-cluster model (docs/model.md §6)",
        f"  raw length L ~ {desc}, mean {dist['mean']:.4g} tokens",
        f"  compress_ratio rho = {res['compress_ratio']:g}, fidelity phi = {res['fidelity']:g}, "
        f"acc_raw a = {res['acc_raw']:g}, acc_guess g = {res['acc_guess']:g}",
        f"kappa = (a - g)/(a phi - g) = {_fmt(res['kappa'])}",
        f"tight-budget condition (§6.3): rho^(-k) = {_fmt(t['value'])} "
        f"{'>' if t['holds'] else '<='} kappa = {_fmt(t['kappa'])} (k = {_fmt(t['tail_exponent'])}): "
        f"{'holds' if t['holds'] else 'fails'}",
        f"loose-budget limit (§6.2): dU -> -a(1 - phi) = {res['loose_budget_limit']:.6g}",
    ]
    if res["elasticity_nonincreasing"] is not None:
        lines.append(
            f"elasticity x f(x)/F(x) non-increasing (§6.4, numeric check): "
            f"{'yes' if res['elasticity_nonincreasing'] else 'no'}"
        )
    if res["status"] == "none":
        lines.append(f"crossover budget: none ({res['reason']})")
    else:
        lo, hi = res["sign_change_between"]
        lines.append(
            f"crossover budget B* = {_fmt(res['crossover_budget'])} tokens  "
            f"[status {res['status']}; root found where dU changes sign between scan budgets "
            f"{_fmt(lo)} and {_fmt(hi)}]" + (f"  ({res['reason']})" if res["reason"] else "")
        )
    if res["closed_form_crossover"] is not None:
        cf, num = res["closed_form_crossover"], res["crossover_budget"]
        gap = (
            f"; numeric root differs by {abs(num - cf) / cf:.1e} relative"
            if isinstance(num, float) and math.isfinite(num)
            else ""
        )
        lines.append(f"closed form (§6.6): B* = {_fmt(cf)} tokens{gap}")
    lines.append(f"{'budget':>10}  {'dU':>10}  {'coverage':>10}  {'replacement':>11}")
    for row in res["table"]:
        lines.append(
            f"{row['budget']:>10.4g}  {row['delta']:>+10.5f}  {row['coverage']:>+10.5f}  "
            f"{row['replacement']:>+11.5f}"
        )
    return "\n".join(lines)


def _fmt(v) -> str:
    return "n/a" if v is None else v if isinstance(v, str) else f"{v:.6g}"


def write_outputs(res: dict, out_dir: str | os.PathLike[str], args) -> list[str]:
    """Write the table (CSV), the figure (PNG), the result and the sidecar (JSON) under ``out_dir``."""

    import numpy as np

    import theory
    from retcon.output import sidecar, write_json_atomic, write_text_atomic
    from retcon.plots import DECOMPOSITION_STYLES, budget_axis, figure_name, new_figure, save

    out = Path(out_dir)  # a staging folder (retcon.output.OutputSet)
    csv = "budget,delta,coverage,replacement\n" + "".join(
        f"{r['budget']!r},{r['delta']!r},{r['coverage']!r},{r['replacement']!r}\n"
        for r in res["table"]
    )
    paths = [write_text_atomic(out / "crossover_table.csv", csv)]

    dist = (
        theory.make_length_dist(res["dist"]["name"], **res["dist"]["params"])
        if res["dist"]["name"] != "empirical"
        else None
    )
    budgets = np.array([r["budget"] for r in res["table"]])
    fig, (ax,) = new_figure(width=6.4, height=4.0)
    if dist is not None:
        dense = np.geomspace(budgets.min(), budgets.max(), 400)
        dec = theory.delta_curve(
            dist,
            dense,
            compress_ratio=res["compress_ratio"],
            fidelity=res["fidelity"],
            acc_raw=res["acc_raw"],
            acc_guess=res["acc_guess"],
        )
        for term, y, label in (
            ("delta", dec.delta, "dU = C + R"),
            ("coverage", dec.coverage, "coverage C"),
            ("replacement", dec.replacement, "replacement R"),
        ):
            color, ls = DECOMPOSITION_STYLES[term]
            ax.plot(dense, y, color=color, ls=ls, label=label)
    ax.plot(budgets, [r["delta"] for r in res["table"]], "ko", ms=3)
    ax.axhline(0.0, color="0.6", lw=0.8)
    if isinstance(res["crossover_budget"], float) and math.isfinite(res["crossover_budget"]):
        ax.axvline(
            res["crossover_budget"],
            color="tab:purple",
            lw=1.0,
            label=f"B* = {res['crossover_budget']:.4g} ({res['status']})",
        )
    budget_axis(ax)
    ax.set_ylabel("utility difference (accuracy)")
    ax.set_title(f"consolidate vs retain, rho={res['compress_ratio']:g}, phi={res['fidelity']:g}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(save(fig, out / figure_name("crossover", getattr(args, "format", "png")), dpi=120))
    paths.append(write_json_atomic(out / "crossover.json", res))
    config = {
        k: v
        for k, v in vars(args).items()
        if k not in ("func", "json", "out", "verbose", "quiet", "command", "format")
    }
    paths.append(
        write_json_atomic(
            out / "sidecar.json",
            sidecar(config, seed=None, command="retcon crossover", outputs=[p.name for p in paths]),
        )
    )
    return [p.name for p in paths]


def run(args: argparse.Namespace) -> int:
    """Compute, print (text or one JSON object), and write ``--out`` files."""
    from retcon.commands.common import check_out, emit, wrote
    from retcon.output import OutputSet

    check_out(args, [("--lengths", getattr(args, "lengths", None))])
    res = compute(args)
    written = []
    if args.out:
        with OutputSet(args.out, last=("sidecar.json",)) as out:
            written = write_outputs(res, out.stage, args)
    emit(args, res, lambda: format_text(res) + (f"\n{wrote(written, args.out)}" if written else ""))
    return 0
