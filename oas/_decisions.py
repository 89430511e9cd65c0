"""The router-decisions figure of ``retcon evaluate``: what the fitted router chose, where.

Per query type, the share of held-out rows on which a policy (default ``oas-calibrated``) chose
each action, against the budget (MODEL §8: the router picks an action per query and budget);
in the last panel the harm-calibration threshold ``tau_B`` per budget of both calibrated
variants (MODEL §8, ``oas._policy``), with ``tau_B = +inf`` (always retain) drawn at the top.
Colours are the operators' (``retcon.plots.OPERATOR_COLORS``) and the calibrations' policy
colours; nothing here computes: the choices come from ``Evaluation.choices``.
"""

from __future__ import annotations

import numpy as np

from oas._evaluate import Evaluation
from retcon.vocab import ACTIONS


def decision_shares(ev: Evaluation, data, policy: str = "oas-calibrated"):
    """``(types, shares)``: the query types of the test rows (sorted) and ``shares[t, b, a]``,
    the share of test rows of type ``types[t]`` at budget ``ev.budgets[b]`` on which ``policy``
    chose ``ACTIONS[a]`` (NaN where a type has no row at a budget).

    Args:
      ev: an ``evaluate`` result.
      data: the ``PairedData`` that was evaluated (its ``query_type`` and ``budget``); the test
        rows are ``ev.info["test_index"]``.
      policy: one of ``ev.policies``.
    """
    from retcon.errors import InputError

    if policy not in ev.policies:
        raise InputError(
            f"decisions figure: policy must be one of {', '.join(ev.policies)}; got {policy!r}."
        )
    test = np.asarray(ev.info["test_index"])
    chosen = np.asarray(ev.choices[ev.policies.index(policy)])
    if test.shape != chosen.shape or (len(test) and test.max() >= data.n):
        raise InputError(
            f"decisions figure: the evaluation scored {len(chosen)} test rows that are not rows "
            f"of this data ({data.n} rows); pass the data that was evaluated."
        )
    qt = np.asarray(data.query_type).astype(str)[test]
    budget = np.asarray(data.budget, float)[test]
    types = sorted(set(qt.tolist()))
    shares = np.full((len(types), len(ev.budgets), len(ACTIONS)), np.nan)
    for t, name in enumerate(types):
        for b, value in enumerate(ev.budgets):
            rows = (qt == name) & (budget == value)
            if rows.any():
                shares[t, b] = np.bincount(chosen[rows], minlength=len(ACTIONS)) / rows.sum()
    return types, shares


def decisions_figure(ev: Evaluation, data, policy: str = "oas-calibrated"):
    """The figure: one panel per query type (stacked shares of the actions chosen by ``policy``
    against the budget), then ``tau_B`` per budget; returns a ``matplotlib.figure.Figure``."""
    from matplotlib.patches import Patch

    from retcon.plots import OPERATOR_COLORS, budget_axis, new_figure, policy_style

    types, shares = decision_shares(ev, data, policy)
    n = len(types) + 1
    ncols = min(n, 3)
    fig, axes = new_figure(ncols, -(-n // ncols), width=3.9, height=3.1)
    fig.set_layout_engine("constrained")
    for ax in axes[n:]:
        ax.set_visible(False)
    b = np.asarray(ev.budgets, float)
    colors = [OPERATOR_COLORS[a] for a in ACTIONS]
    for ax, name, s in zip(axes, types, shares):
        ok = ~np.isnan(s[:, 0])
        ax.stackplot(b[ok], s[ok].T, colors=colors, alpha=0.85, linewidth=0)
        budget_axis(ax)
        ax.set_xlim(b.min(), b.max())
        ax.set_ylim(0, 1)
        ax.set_ylabel("share of queries")
        ax.set_title(f"{name}: action chosen by {policy}", fontsize=9)
    ax = axes[len(types)]
    finite_max = 0.0
    taus = {}
    for variant, key in (("oas-calibrated", "tau_calibrated"), ("oas-crc", "tau_crc")):
        tau = ev.info.get(key) or {}
        x = np.asarray([float(k) for k in tau], float)
        y = np.asarray([np.inf if v is None else float(v) for v in tau.values()], float)
        taus[variant] = (x, y)
        if np.isfinite(y).any():
            finite_max = max(finite_max, float(np.max(y[np.isfinite(y)])))
    top = 1.15 * finite_max if finite_max > 0 else 1.0
    for variant, (x, y) in taus.items():
        style = policy_style(variant)
        shown = np.where(np.isfinite(y), y, top)
        ax.plot(
            x,
            shown,
            color=style["color"],
            ls=style["ls"],
            marker=style["marker"],
            ms=4,
            label=variant,
        )
        inf = ~np.isfinite(y)
        if inf.any():
            ax.scatter(
                x[inf],
                shown[inf],
                marker="^",
                s=40,
                facecolors="none",
                edgecolors=style["color"],
                zorder=3,
            )
    ax.axhline(top, color="0.6", lw=0.8, ls=":")
    ax.annotate(
        "+inf (always retain)",
        (0.02, top),
        xycoords=("axes fraction", "data"),
        xytext=(0, 7),
        textcoords="offset points",
        fontsize=7,
        color="0.35",
    )
    budget_axis(ax)
    ax.set_ylim(bottom=min(0.0, ax.get_ylim()[0]), top=top * 1.25)
    ax.set_ylabel("threshold tau_B")
    ax.set_title("harm-calibration threshold tau_B", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.legend(
        handles=[Patch(color=c, label=a) for a, c in zip(ACTIONS, colors)],
        loc="outside lower center",
        ncol=len(ACTIONS),
        frameon=False,
        title="action chosen",
    )
    fig.suptitle(f"router decisions on the held-out groups ({int(ev.info['n_test'])} rows)")
    return fig
