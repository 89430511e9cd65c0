"""Oracle protocol vs end to end on real paired data, side by side: the analysis of
``python -m experiments.end_to_end`` (its options and outputs in that script's docstring)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jax

from oas.real import end_to_end_report, gap_split, side_by_side
from paper_checks.claims._sources import stable_id
from retcon import plots
from retcon.errors import InputError
from retcon.output import check_out_dir, sidecar, write_json_atomic, write_text_atomic
from retcon.vocab import ACTIONS


def _figure(results: dict, path: Path) -> None:
    """Accuracy per action against budget: one line style and marker per run, one colour per action."""

    fig, (ax,) = plots.new_figure(width=6.5, height=4)
    styles = ("-", "--", ":", "-.")
    markers = ("o", "s", "^", "v", "D", "x", "+", "*")
    for i, (name, r) in enumerate(results.items()):  # every run drawn, however many
        s = r["summary"]
        for a in ACTIONS:
            ax.plot(
                s["budgets"],
                s["accuracy"][a],
                styles[i % len(styles)],
                color=plots.OPERATOR_COLORS[a],
                marker=markers[i % len(markers)],
                ms=3,
                label=f"{a} ({name})",
            )
    plots.budget_axis(ax)
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=6, ncol=len(results))
    fig.tight_layout()
    plots.save(fig, path, dpi=120)


def main(doc: str | None, argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.end_to_end", description=doc)
    p.add_argument("--run", action="append", required=True, metavar="NAME=FILE")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resamples", type=int, default=1000)
    args = p.parse_args(argv)
    runs = {}
    for spec in args.run:
        name, sep, path = spec.partition("=")
        if not sep or not name or not Path(path).is_file():
            raise InputError(f"--run must be NAME=FILE with an existing paired file; got {spec!r}.")
        runs[name] = path
    out = check_out_dir("--out", args.out)
    out.mkdir(parents=True, exist_ok=True)

    key = jax.random.PRNGKey(args.seed)
    # One key per run from its name, so a run's numbers do not depend on the other runs listed.
    results = {
        name: end_to_end_report(
            jax.random.fold_in(key, stable_id(name)), path, n_resamples=args.resamples
        )
        for name, path in runs.items()
    }
    table = side_by_side(results)
    gap = gap_split(results)
    meta = sidecar(
        {"runs": runs, "resamples": args.resamples},
        seed=args.seed,
        command="python -m experiments.end_to_end",
    )
    meta.update(results=results, gap=gap, table=table)
    write_json_atomic(Path(out) / "end_to_end.json", meta)
    text = table + "\n"
    if gap:
        text += (
            f"\nOAS gain over best-fixed lost to retrieval: {gap['gain_lost_to_retrieval']:+.3f}; "
            f"to type errors: {gap['gain_lost_to_type']:+.3f}.\n"
        )
    write_text_atomic(Path(out) / "end_to_end.md", text)
    _figure(results, Path(out) / "end_to_end.png")
    sys.stdout.write(text)
    return 0
