"""Figures of ``retcon timeline``; palette, figures and ``save`` from ``retcon.plots``.

References: MODEL §10; docs/timeline.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retcon.plots import OPERATOR_DASHES, TIMELINE_STYLES, new_figure, save


def _arr(values) -> np.ndarray:
    """JSON numbers as floats, ``None`` (a non-finite value) as NaN."""
    return np.asarray([np.nan if v is None else v for v in values], float)


def plot_utility(report: dict, path: Path) -> Path:
    """Utility against time, one panel per budget, a line per policy (operator ``merge`` and
    ``retain-all``), 95% bands; dotted verticals: each operator's simulated crossover time."""
    budgets = report["budgets"]
    n = len(budgets)
    fig, axes = new_figure(n, width=4.2, height=3.6, sharey=True)
    t = np.asarray(report["times"], float)
    for ax, b in zip(axes, budgets):
        for u in report["utility"]:
            if u["budget"] != b or u["operator"] not in (None, "merge"):
                continue
            color, ls = TIMELINE_STYLES[u["policy"]]
            y = _arr(u["utility"])
            ax.plot(t, y, color=color, linestyle=ls, label=u["policy"])
            lo, hi = _arr(u["lower"]), _arr(u["upper"])
            ax.fill_between(t, lo, hi, color=color, alpha=0.15, linewidth=0)
        for c in report["crossover"]:
            x = c["crossover_time"]
            if c["budget"] == b and c["operator"] == "merge" and x is not None and np.isfinite(x):
                ax.axvline(x, color="tab:blue", linestyle=":", linewidth=1)
        ax.set_title(f"B = {b:g}")
        ax.set_xlabel("session t")
    axes[0].set_ylabel("utility (operator merge)")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{report['scenario']}: utility against time")
    fig.tight_layout()
    return save(fig, path, dpi=110)


def plot_by_generation(report: dict, path: Path) -> Path:
    """Utility against the number of passes ``k`` per operator and budget (95% bands)."""
    fig, (ax,) = new_figure(width=6.5, height=4.0)
    budgets = report["budgets"]
    cmap = [f"C{i}" for i in range(len(budgets))]
    for g in report["by_generation"]:
        i = budgets.index(g["budget"])
        ax.plot(
            g["generations"],
            g["utility"],
            color=cmap[i],
            linestyle=OPERATOR_DASHES[g["operator"]],
            marker="o",
            markersize=3,
            label=f"{g['operator']}, B={g['budget']:g}",
        )
    ax.set_xlabel("passes k")
    ax.set_ylabel("utility at the last session")
    ax.set_title(f"{report['scenario']}: utility against the number of passes")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return save(fig, path, dpi=110)


def plot_survival(report: dict, path: Path) -> Path:
    """Answer survival against passes per first-pass backend and operator, with per-conversation
    t-intervals, and the fitted geometric curve ``phi^k`` (dotted)."""
    fig, (ax,) = new_figure(width=6.5, height=4.0)
    for i, (key, s) in enumerate(report["survival"].items()):
        k = [c["passes"] for c in s["survival"]]
        m = [c["mean"] for c in s["survival"]]
        lo = [c["lower"] if c["lower"] is not None else c["mean"] for c in s["survival"]]
        hi = [c["upper"] if c["upper"] is not None else c["mean"] for c in s["survival"]]
        color = f"C{i}"
        ax.errorbar(
            k,
            m,
            yerr=[np.subtract(m, lo), np.subtract(hi, m)],
            color=color,
            marker="o",
            markersize=3,
            capsize=2,
            label=key,
        )
        ax.plot(k, [s["fits"]["geometric"]["phi"] ** j for j in k], color=color, linestyle=":")
    ax.set_xlabel("passes k")
    ax.set_ylabel("answer survival")
    ax.set_ylim(0, 1.05)
    ax.set_title("LoCoMo: survival against passes (dotted: geometric fit)")
    ax.legend(fontsize=6)
    fig.tight_layout()
    return save(fig, path, dpi=110)
