"""Figures for ``retcon simulate`` and ``retcon stress``; palette, budget axis and ``save`` from
``retcon.plots``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retcon.plots import (
    DECOMPOSITION_STYLES,
    OPERATOR_COLORS,
    REFERENCE_COLOR,
    budget_axis,
    new_figure,
    save,
)
from retcon.vocab import OPERATORS


def plot_delta(result, cx, title: str, path: Path) -> Path:
    """``dU_o(B)`` per operator with a 95% band (1.96 SE) and the crossover with its CI."""
    fig, (ax,) = new_figure(width=7, height=4.2)
    b = result.budgets
    for i, op in enumerate(OPERATORS):
        d, se = result.delta[i], result.delta_se[i]
        ax.plot(b, d, color=OPERATOR_COLORS[op], label=op)
        ax.fill_between(
            b, d - 1.96 * se, d + 1.96 * se, color=OPERATOR_COLORS[op], alpha=0.25, linewidth=0
        )
        if np.isfinite(cx.crossover_budget[i]):
            ax.axvline(
                cx.crossover_budget[i], color=OPERATOR_COLORS[op], linestyle=":", linewidth=1
            )
            if np.isfinite(cx.ci_lower[i]):
                # an end beyond the grid (0 or inf, docs/model.md §6.4) is drawn at the grid's edge
                lo = max(float(cx.ci_lower[i]), float(b[0]))
                hi = min(float(cx.ci_upper[i]), float(b[-1]))
                ax.axvspan(lo, hi, color=OPERATOR_COLORS[op], alpha=0.1)
    ax.axhline(0, color="black", linewidth=0.8)
    budget_axis(ax)
    ax.set_ylabel("dU = U(o) - U(ret)")
    ax.set_title(f"{title}: dU per operator (95% bands; dotted: crossover)")
    ax.legend()
    fig.tight_layout()
    out = save(fig, path, dpi=130)
    return out


def plot_decomposition(result, title: str, path: Path) -> Path:
    """Coverage C, replacement R and their sum dU against the budget, one panel per operator.

    C and R are drawn as separate lines, each with its 95% band, never stacked: R is usually
    negative, and a stacked area would hide it under C (MODEL §4, dU = C + R).
    """
    fig, axes = new_figure(3, width=4, height=3.8, sharey=True)
    b = result.budgets
    series = (
        (
            "coverage C (gain from fitting more)",
            result.coverage,
            result.coverage_se,
            *DECOMPOSITION_STYLES["coverage"],
        ),
        (
            "replacement R (loss from the summary)",
            result.replacement,
            result.replacement_se,
            *DECOMPOSITION_STYLES["replacement"],
        ),
        ("dU = C + R", result.delta, result.delta_se, *DECOMPOSITION_STYLES["delta"]),
    )
    for i, (op, ax) in enumerate(zip(OPERATORS, axes)):
        ax.axhline(0, color="gray", linewidth=0.8)
        for label, y, se, color, ls in series:
            ax.fill_between(
                b, y[i] - 1.96 * se[i], y[i] + 1.96 * se[i], color=color, alpha=0.2, linewidth=0
            )
            ax.plot(b, y[i], color=color, linestyle=ls, linewidth=1.6, label=label)
        budget_axis(ax)
        ax.set_title(op)
    axes[0].set_ylabel("effect on accuracy vs retain")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle(f"{title}: dU = coverage + replacement per operator (95% bands)")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    out = save(fig, path, dpi=130)
    return out


def plot_phase(res, title: str, path: Path) -> Path:
    """Phase diagrams: budget x spillover knob, colour = sign and size of ``dU`` (MODEL §5).

    The knob axis is to scale (0, 0.05, 0.1, 0.2, 0.4 sit at their values). Per panel: the
    simulated ``dU = 0`` contour, the Assumption-1 prediction's crossover at each condition
    (``C_loc + R_loc``, ignoring ``S``), and a fixed reference: the crossover simulated with no
    spillover at all (both knobs 0), a vertical that does not move, in ``REFERENCE_COLOR``.
    The legend sits below the panels, the colour bar at their right."""
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.lines import Line2D

    b = res.budgets
    panels = [
        ("budget spillover x_b", res.rank_spillover == 0, res.budget_spillover),
        ("rank spillover x_r", res.budget_spillover == 0, res.rank_spillover),
    ]
    fig, flat = new_figure(2, 3, width=5.2, height=2.7, sharex=True)
    fig.set_layout_engine("constrained")
    axes = flat.reshape(3, 2)
    vmax = float(np.nanmax(np.abs(res.delta))) or 1.0
    norm = TwoSlopeNorm(vmin=-vmax, vcenter=0.0, vmax=vmax)
    base = np.flatnonzero((res.budget_spillover == 0) & (res.rank_spillover == 0))
    mesh = None
    for col, (label, sel, knob) in enumerate(panels):
        rows = np.flatnonzero(sel)
        rows = rows[np.argsort(knob[rows])]
        y = knob[rows]
        for i, op in enumerate(OPERATORS):
            ax = axes[i, col]
            z = res.delta[rows, i]
            mesh = ax.pcolormesh(b, y, z, cmap="RdBu", norm=norm, shading="nearest")
            if len(y) > 1:
                ax.contour(b, y, z, levels=[0.0], colors="black", linewidths=1.0)
            ax.plot(
                res.predicted_crossover[rows, i],
                y,
                color="gold",
                linestyle="--",
                linewidth=1.8,
                marker="o",
                markersize=3.5,
                path_effects=_outline(),
            )
            if len(base) and np.isfinite(res.crossover_budget[base[0], i]):
                ax.axvline(res.crossover_budget[base[0], i], color=REFERENCE_COLOR, linewidth=1.6)
            ax.set_yticks(y)
            ax.set_yticklabels([f"{v:g}" for v in y])
            budget_axis(ax, label=i == 2)
            ax.set_title(f"{op}: dU vs budget and {label}", fontsize=9)
            ax.set_ylabel(label, fontsize=9)
    handles = [
        Line2D([], [], color="black", linewidth=1.0, label="simulated dU = 0"),
        Line2D(
            [],
            [],
            color="gold",
            linestyle="--",
            marker="o",
            markersize=3.5,
            path_effects=_outline(),
            label="Assumption-1 prediction's crossover (C_loc + R_loc, per condition)",
        ),
        Line2D(
            [],
            [],
            color=REFERENCE_COLOR,
            linewidth=1.6,
            label="simulated crossover with no spillover (x_b = x_r = 0)",
        ),
    ]
    fig.legend(handles=handles, loc="outside lower center", fontsize=8, ncol=2, frameon=False)
    assert mesh is not None  # every panel has at least one condition
    fig.colorbar(mesh, ax=axes, label="dU (blue: consolidate wins, red: retain wins)")
    fig.suptitle(f"{title}: Assumption-1 stress test")
    out = save(fig, path, dpi=130)
    return out


def _outline() -> list:
    """A dark outline under a light line, so it reads on both ends of the diverging colormap."""
    from matplotlib import patheffects

    return [patheffects.Stroke(linewidth=3.4, foreground="black"), patheffects.Normal()]
