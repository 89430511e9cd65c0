"""Figures shared by the report and ``experiments/``: each function draws on axes it is given.

Plotting only; the numbers come from the sources (``paper_checks.claims._sources``) or the experiment
assemblers (``paper_checks.studies.scripts._experiments``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from paper_checks._types import SourceCurves
from retcon.plots import (
    DECOMPOSITION_STYLES,
    OPERATOR_COLORS,
    OPERATOR_DASHES,
    budget_axis,
    figure_name,
    grid,
    new_figure,
    policy_style,
    save,
)

__all__ = [
    "delta_curves_legend",
    "grid",
    "new_figure",
    "plot_coverage_replacement",
    "plot_crossover_vs_length",
    "plot_delta_curves",
    "plot_harm_tradeoff",
    "plot_phase_diagram",
    "plot_policy_accuracy",
    "report_figures",
]


# Line widths per operator, widest drawn first: on real data two operators can give equal
# curves (merge and rewrite on LoCoMo), and the wider one then shows around the narrower.
_WIDTHS = {"merge": 2.8, "abstract": 1.9, "rewrite": 1.3}


def plot_delta_curves(ax, source: SourceCurves, *, legend: bool = True) -> None:
    """``dU_o(B)`` per operator with its 95% band and crossover markers (MODEL §6); with
    ``legend=False`` the caller draws one legend for the figure (``delta_curves_legend``)."""
    for op, c in source.operators.items():
        col = OPERATOR_COLORS.get(op)
        ls = OPERATOR_DASHES.get(op, "-")
        ax.plot(c.budgets, c.delta, color=col, ls=ls, lw=_WIDTHS.get(op, 1.6), label=op)
        if np.any(c.lower != c.upper):
            ax.fill_between(c.budgets, c.lower, c.upper, color=col, alpha=0.2, lw=0)
        if c.crossover.defined:
            ax.axvline(c.crossover.point, color=col, ls=":", lw=1)
    ax.plot([], [], color="gray", ls=":", lw=1, label="crossover B*")
    ax.axhline(0, color="k", lw=0.8)
    budget_axis(ax)
    ax.set_ylabel("dU = U(o) - U(ret)")
    ax.set_title(source.name, fontsize=9)
    if legend:
        ax.legend(fontsize=7)


def delta_curves_legend(fig, ax) -> None:
    """One legend for a figure of ``plot_delta_curves`` panels, below them, off the data."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), frameon=False)


def plot_coverage_replacement(ax, source: SourceCurves, op: str) -> None:
    """Coverage ``C`` and replacement ``R`` of one operator against the budget (MODEL §4)."""
    c = source.operators[op]
    for term, y, label in (
        ("coverage", c.coverage, "coverage C"),
        ("replacement", c.replacement, "replacement R"),
        ("delta", c.delta, "dU = C + R"),
    ):
        color, ls = DECOMPOSITION_STYLES[term]
        ax.plot(c.budgets, y, color=color, ls=ls, label=label)
    ax.axhline(0, color="k", lw=0.8)
    budget_axis(ax)
    ax.set_ylabel("effect on accuracy vs retain")
    ax.set_title(f"{source.name}: {op}", fontsize=9)
    ax.legend(fontsize=7)


def plot_crossover_vs_length(ax, points: Sequence[Mapping]) -> None:
    """Crossover budget against mean evidence length, per operator, with intervals (MODEL §6.5).

    Args:
      points: dicts with ``operator``, ``length``, ``crossover`` (Estimate), ``label``.
    """
    ops = sorted({p["operator"] for p in points})
    for op in ops:
        pts = sorted(
            (p for p in points if p["operator"] == op and p["crossover"].defined),
            key=lambda p: p["length"],
        )
        if not pts:
            continue
        L = np.array([p["length"] for p in pts])
        e = np.array([tuple(p["crossover"]) for p in pts], float)
        hi = np.where(np.isfinite(e[:, 2]), e[:, 2], e[:, 0])
        ax.errorbar(
            L,
            e[:, 0],
            yerr=[e[:, 0] - e[:, 1], hi - e[:, 0]],
            color=OPERATOR_COLORS.get(op),
            marker="o",
            capsize=3,
            label=op,
        )
    lim = [p["length"] for p in points]
    if lim:
        xs = np.geomspace(min(lim) / 1.5, max(lim) * 1.5, 10)
        ax.plot(xs, xs, color="gray", lw=0.8, ls=":", label="B* = L")
    budget_axis(ax, axis="x", label=False)  # lengths and budgets: one token axis
    budget_axis(ax, axis="y", label=False)
    ax.set_xlabel("mean evidence length L (tokens)")
    ax.set_ylabel("crossover budget B* (tokens)")
    ax.legend(fontsize=7, loc="upper left")


def plot_phase_diagram(ax, budgets, knob, delta, *, knob_label: str = "spillover") -> None:
    """``dU`` over budget x spillover knob, diverging colours: sign and size (MODEL §5)."""
    import matplotlib.colors as mcolors

    delta = np.asarray(delta, float)
    m = float(np.nanmax(np.abs(delta))) or 1.0
    mesh = ax.pcolormesh(
        np.asarray(budgets, float),
        np.asarray(knob, float),
        delta,
        cmap="RdBu",
        norm=mcolors.TwoSlopeNorm(0.0, -m, m),
        shading="nearest",
    )
    try:
        ax.contour(
            np.asarray(budgets, float),
            np.asarray(knob, float),
            delta,
            levels=[0.0],
            colors="k",
            linewidths=1,
        )
    except (ValueError, TypeError):  # a constant sign has no zero contour
        pass
    budget_axis(ax)
    ax.set_ylabel(knob_label)
    ax.figure.colorbar(mesh, ax=ax, label="dU")


def plot_policy_accuracy(
    ax, budgets, accuracy: Mapping[str, np.ndarray], lower=None, upper=None, *, title: str = ""
) -> None:
    """Accuracy per budget of each policy, with bands where given (MODEL §8).

    Ten overlapping bands read as one grey cloud, so only the two the comparison hinges on
    (best-fixed and oas-calibrated) are shaded; the others are lines.
    """
    banded = ("best-fixed", "oas-calibrated")
    for name, acc in accuracy.items():
        style = policy_style(name)
        lw = 2.0 if name in banded else 1.2
        ax.plot(budgets, acc, lw=lw, label=name, ms=4, **style)
        if lower is not None and upper is not None and name in lower and name in banded:
            ax.fill_between(
                budgets, lower[name], upper[name], color=style["color"], alpha=0.15, lw=0
            )
    budget_axis(ax)
    ax.set_ylabel("accuracy of chosen action")
    ax.set_title(title + (" (bands: 95% CI)" if lower is not None else ""), fontsize=9)
    ax.legend(fontsize=6, ncol=2)


def plot_harm_tradeoff(ax, harm, accuracy, labels, *, ref_harm=None, ref_accuracy=None) -> None:
    """Harm rate against accuracy over calibration targets (MODEL §8, calibrated variant)."""
    if len(harm):
        ax.plot(
            harm,
            accuracy,
            marker="o",
            color=policy_style("oas-calibrated")["color"],
            label="calibrated (alpha sweep)",
        )
    for h, a, lab in zip(harm, accuracy, labels):
        ax.annotate(str(lab), (h, a), fontsize=6, xytext=(3, 3), textcoords="offset points")
    if ref_harm is not None:
        ax.scatter(
            [ref_harm],
            [ref_accuracy],
            color=policy_style("oas")["color"],
            marker="*",
            s=80,
            label="oas (uncalibrated)",
            zorder=3,
        )
    ax.set_xlabel("harm rate")
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=7)


def report_figures(out_dir, ws, fmt: str = "png") -> list[str]:
    """Figures of the sources this run already measured (nothing new is computed), in ``fmt``
    (``retcon.plots.FORMATS``)."""
    out = Path(out_dir)
    paths = []
    done = ws.measured()
    curves = [
        v
        for k, v in done.items()
        if isinstance(v, SourceCurves)
        and (k.startswith(("sim:", "locomo-curves:", "paired-curves:")) or k == "theory:1")
    ]
    if curves:
        fig, axes = grid(len(curves))
        fig.set_layout_engine("constrained")
        for ax, s in zip(axes, curves):
            plot_delta_curves(ax, s, legend=False)
        delta_curves_legend(fig, axes[0])
        paths.append(str(save(fig, out / figure_name("fig_delta_curves", fmt), dpi=120)))
    loco = {k[5:]: v for k, v in done.items() if k.startswith("loco:")}
    if loco:
        fig, axes = grid(len(loco), width=5.0, height=4.0)
        for ax, (reader, ev) in zip(axes, loco.items()):
            for var in ("oas-calibrated", "oas-crc"):
                col = policy_style(var)["color"]
                names = [f"{var}@{a:g}" for a in ev.alphas]
                h = [ev.harm(n).mean() for n in names]
                acc = [ev.outcome(n).mean() for n in names]
                ax.plot(h, acc, marker="o", color=col, label=var)
                for hh, aa, a in zip(h, acc, ev.alphas):
                    ax.annotate(
                        f"a={a:g}", (hh, aa), fontsize=6, xytext=(3, 3), textcoords="offset points"
                    )
            plot_harm_tradeoff(
                ax,
                [],
                [],
                [],
                ref_harm=float(ev.harm("oas").mean()),
                ref_accuracy=float(ev.outcome("oas").mean()),
            )
            data = "paired file" if ws.config.paired else "LoCoMo"
            ax.set_title(f"{data} {reader}, leave-one-group-out", fontsize=9)
        fig.tight_layout()
        paths.append(str(save(fig, out / figure_name("fig_harm_tradeoff", fmt), dpi=120)))
    return paths
