"""Figures of ``retcon timeline``; palette, figures and ``save`` from ``retcon.plots``.

References: MODEL §10; docs/timeline.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from oas._survival import SURVIVAL_MODELS
from retcon.plots import REFERENCE_COLOR, TIMELINE_MARKERS, TIMELINE_STYLES, new_figure, save


def _arr(values) -> np.ndarray:
    """JSON numbers as floats, ``None`` (a non-finite value) as NaN."""
    return np.asarray([np.nan if v is None else v for v in values], float)


def plot_utility(report: dict, path: Path) -> Path:
    """Utility against time, one panel per budget, a line per policy (operator ``merge`` and
    ``retain-all``), 95% bands; the verticals: the simulated crossover time (``crossover_policy``
    with ``merge`` against ``retain-all``).

    Policies whose curves coincide stay visible: each has its own colour, line style and marker,
    the markers staggered along the curve; the crossover mark takes ``REFERENCE_COLOR``, which no
    policy uses; the legend sits below the panels, off the data."""
    from matplotlib.lines import Line2D

    budgets = report["budgets"]
    n = len(budgets)
    ncols = min(n, 3)
    fig, axes = new_figure(ncols, -(-n // ncols), width=4.2, height=3.3, sharey=True)
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.set_layout_engine("constrained")
    t = np.asarray(report["times"], float)
    names = list(TIMELINE_STYLES)
    for ax, b in zip(axes, budgets):
        rows = [
            u for u in report["utility"] if u["budget"] == b and u["operator"] in (None, "merge")
        ]
        for u in rows:
            color, ls = TIMELINE_STYLES[u["policy"]]
            i = names.index(u["policy"]) if u["policy"] in names else 0
            y = _arr(u["utility"])
            ax.plot(
                t,
                y,
                color=color,
                linestyle=ls,
                marker=TIMELINE_MARKERS.get(u["policy"], "."),
                markevery=(i % max(1, len(t)), max(1, len(names))) if len(t) > 1 else None,
                markersize=4,
                label=u["policy"],
            )
            lo, hi = _arr(u["lower"]), _arr(u["upper"])
            ax.fill_between(t, lo, hi, color=color, alpha=0.12, linewidth=0)
        for c in report["crossover"]:
            x = c["crossover_time"]
            if c["budget"] == b and c["operator"] == "merge" and x is not None and np.isfinite(x):
                ax.axvline(x, color=REFERENCE_COLOR, linestyle=":", linewidth=1.4)
        ax.set_title(f"B = {b:g}")
        ax.set_xlabel("session t")
    for ax in axes[:n:ncols]:
        ax.set_ylabel("utility (operator merge)")
    handles, labels = axes[0].get_legend_handles_labels()
    handles.append(Line2D([], [], color=REFERENCE_COLOR, linestyle=":", linewidth=1.4))
    policy = report.get("crossover_policy", "periodic")
    labels.append(f"crossover time ({policy}, merge, vs retain-all)")
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 6), frameon=False)
    fig.suptitle(f"{report['scenario']}: utility against time")
    return save(fig, path, dpi=110)


def plot_by_generation(report: dict, path: Path) -> Path:
    """Utility at the last session against the number of passes ``k``: one panel per operator,
    a line per budget (a sequential colour: darker is larger), the legend outside the data."""
    from matplotlib import colormaps

    budgets = report["budgets"]
    ops = list(dict.fromkeys(g["operator"] for g in report["by_generation"]))
    fig, axes = new_figure(max(1, len(ops)), width=3.8, height=3.4, sharey=True)
    fig.set_layout_engine("constrained")
    shades = colormaps["viridis_r"](np.linspace(0.2, 0.95, max(1, len(budgets))))
    for ax, op in zip(axes, ops):
        for g in report["by_generation"]:
            if g["operator"] != op:
                continue
            i = budgets.index(g["budget"])
            k = np.asarray(g["generations"], float)
            ax.plot(
                k,
                g["utility"],
                color=shades[i],
                marker="o",
                markersize=3,
                label=f"B = {g['budget']:g}",
            )
            if "lower" in g and "upper" in g:
                ax.fill_between(
                    k, _arr(g["lower"]), _arr(g["upper"]), color=shades[i], alpha=0.15, linewidth=0
                )
        ax.set_title(op)
        ax.set_xlabel("passes k")
    axes[0].set_ylabel("utility at the last session")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", frameon=False, title="budget")
    fig.suptitle(f"{report['scenario']}: utility against the number of passes (95% bands)")
    return save(fig, path, dpi=110)


def plot_survival(report: dict, path: Path) -> Path:
    """Answer survival against passes per first-pass backend and operator, with per-conversation
    t-intervals, and the curve of the model the command chose for it (dotted: its ``verdict``,
    ``geometric`` where that was not rejected or undecided; ``SURVIVAL_MODELS``), named in the
    legend."""

    fig, (ax,) = new_figure(width=7.5, height=4.2)
    for i, (key, s) in enumerate(report["survival"].items()):
        k = [c["passes"] for c in s["survival"]]
        m = [c["mean"] for c in s["survival"]]
        lo = [c["lower"] if c["lower"] is not None else c["mean"] for c in s["survival"]]
        hi = [c["upper"] if c["upper"] is not None else c["mean"] for c in s["survival"]]
        color = f"C{i}"
        model = s["verdict"] if s["verdict"] in SURVIVAL_MODELS else "geometric"
        ax.errorbar(
            k,
            m,
            yerr=[np.subtract(m, lo), np.subtract(hi, m)],
            color=color,
            marker="o",
            markersize=3,
            capsize=2,
            label=f"{key} (fit: {model})",
        )
        fit = s["fits"][model]
        kk = np.linspace(1, max(k), 50) if max(k) >= 1 else np.array([])
        curve = SURVIVAL_MODELS[model](kk, fit["phi"], fit.get("c", 0.0))
        ax.plot(kk, curve, color=color, linestyle=":")
    ax.set_xlabel("passes k")
    ax.set_ylabel("answer survival")
    ax.set_ylim(0, 1.05)
    ax.set_title(
        "LoCoMo: survival against passes (dotted: the model chosen per curve)", fontsize=10
    )
    ax.legend(fontsize=6, loc="lower left")
    fig.tight_layout()
    return save(fig, path, dpi=110)
