"""OAS gain over best-fixed against retriever recall and type-classifier accuracy (simulation):
the analysis of ``python -m experiments.end_to_end_sim`` (options and outputs in its docstring)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from oas.real import recall_accuracy_sweep
from paper_checks.studies.scripts._args import numbers
from retcon import plots
from retcon.errors import InputError
from retcon.output import check_out_dir, sidecar, write_json_atomic
from sim import load_scenario

RECALLS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)  # the defaults of --recalls and --accuracies
ACCURACIES = (1.0, 0.85, 0.7, 0.55, 0.4, 0.25)


def _floats(option: str, text: str) -> tuple[float, ...]:
    vals = numbers(option, text)
    if vals[0] != 1.0:
        raise InputError(f"{option} must start with 1 (the slices go through it); got {text!r}.")
    return vals


def main(doc: str | None, argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.end_to_end_sim", description=doc)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--preset", default="locomo-like", help="a sim preset name or a .toml path")
    p.add_argument("--instances", type=int, default=8000, help="paired rows per cell")
    p.add_argument(
        "--budgets",
        type=int,
        default=8,
        help="budgets: this many log-spaced over the preset's range",
    )
    p.add_argument("--recalls", default=",".join(map(str, RECALLS)))
    p.add_argument("--accuracies", default=",".join(map(str, ACCURACIES)))
    p.add_argument(
        "--groups", type=int, default=10, help="questions are dealt into this many groups"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resamples", type=int, default=500)
    args = p.parse_args(argv)

    recalls = _floats("--recalls", args.recalls)
    accuracies = (
        (None,) if args.accuracies == "scenario" else _floats("--accuracies", args.accuracies)
    )
    if args.budgets < 2:
        raise InputError(f"--budgets must be at least 2; got {args.budgets}.")
    if args.groups < 3:
        raise InputError(f"--groups must be at least 3; got {args.groups}.")
    import jax

    out = check_out_dir("--out", args.out)
    out.mkdir(parents=True, exist_ok=True)
    scenario = load_scenario(args.preset)
    lo, hi = scenario.budgets[0], scenario.budgets[-1]
    budgets = np.geomspace(lo, hi, args.budgets)
    res = recall_accuracy_sweep(
        jax.random.key(args.seed),
        scenario,
        recalls=recalls,
        accuracies=accuracies,
        n_instances=args.instances,
        budgets=budgets,
        n_groups=args.groups,
        n_resamples=args.resamples,
    )
    _figure(res, Path(out) / "end_to_end_sim.png", f"{scenario.name}, {args.instances} rows/cell")
    meta = sidecar(vars(args), seed=args.seed, command="python -m experiments.end_to_end_sim")
    meta["budgets"] = budgets.tolist()
    meta["data"] = res
    write_json_atomic(Path(out) / "end_to_end_sim.json", meta)
    sys.stdout.write(_table(res))
    return 0


def _label(a) -> str:
    return "scenario" if a is None else f"{a:g}"


def _cell(c: dict, policy: str = "oas") -> str:
    g = c["gain"][policy]
    return f"{g['point']:+.3f} [{g['lower']:+.3f}, {g['upper']:+.3f}]"


def _table(res: dict) -> str:
    """Markdown: OAS - best-fixed per cell [95% CI], then the oracle headroom per cell."""
    acc = res["accuracies"]
    lines = []
    for policy in ("oas", "oracle"):
        lines.append(f"\n{policy} - best-fixed (rows: recall, columns: type accuracy)\n")
        lines.append("| recall | " + " | ".join(_label(a) for a in acc) + " |")
        lines.append("|---" * (len(acc) + 1) + "|")
        for r, row in zip(res["recalls"], res["cells"]):
            lines.append(f"| {r:g} | " + " | ".join(_cell(c, policy) for c in row) + " |")
    lines.append("\nintact share (queries with all evidence retrieved) per recall: ")
    lines.append(
        ", ".join(
            f"{r:g}: {row[0]['intact_share']:.3f}" for r, row in zip(res["recalls"], res["cells"])
        )
    )
    lines.append("\nrealized type accuracy per setting: ")
    lines.append(
        ", ".join(
            f"{_label(c['accuracy_setting'])}: {c['type_accuracy']:.3f}" for c in res["cells"][0]
        )
    )
    return "\n".join(lines) + "\n"


def _figure(res: dict, path: Path, title: str) -> None:
    rec, acc = res["recalls"], res["accuracies"]
    # a "scenario" column (the scenario's own classifier) sits at its realized type accuracy
    acc_x = [c["type_accuracy"] if a is None else a for a, c in zip(acc, res["cells"][0])]
    gain = np.asarray([[c["gain"]["oas"]["point"] for c in row] for row in res["cells"]])
    fig, axes = plots.new_figure(3, width=13 / 3, height=3.8)
    lim = float(np.max(np.abs(gain))) or 1.0
    im = axes[0].imshow(gain, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto", origin="upper")
    axes[0].set_xticks(range(len(acc)), [_label(a) for a in acc])
    axes[0].set_yticks(range(len(rec)), [f"{r:g}" for r in rec])
    axes[0].set_xlabel("type-classifier accuracy")
    axes[0].set_ylabel("retriever recall")
    for i in range(len(rec)):
        for j in range(len(acc)):
            axes[0].text(j, i, f"{gain[i, j]:+.3f}", ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=axes[0], label="OAS - best-fixed")
    slices = (
        (axes[1], rec, [row[0] for row in res["cells"]], "retriever recall (type exact)"),
        (axes[2], acc_x, res["cells"][0], "type-classifier accuracy (recall 1)"),
    )
    base = res["cells"][0][0]["gain"]["oas"]["point"]
    axes[1].plot(
        rec,
        [base * row[0]["intact_share"] for row in res["cells"]],
        ":",
        color="gray",
        label="oas gain x intact share (dilution only)",
    )
    axes[2].sharey(axes[1])
    for ax, x, cells, label in slices:
        for policy in ("oas", "oracle"):
            g = [c["gain"][policy] for c in cells]
            style = plots.policy_style(policy)
            ax.plot(x, [v["point"] for v in g], label=f"{policy} - best-fixed", **style)
            ax.fill_between(
                x,
                [v["lower"] for v in g],
                [v["upper"] for v in g],
                color=style["color"],
                alpha=0.25,
            )
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xlabel(label)
        ax.invert_xaxis()
    axes[1].set_ylabel("gain over best-fixed (accuracy)")
    axes[1].legend(fontsize=8)
    fig.suptitle(f"OAS under retriever misses and type errors ({title})")
    fig.tight_layout()
    plots.save(fig, path, dpi=120)
