"""The one plotting module (retcon.plots): one palette, one budget axis, one save, no backend."""

import re
from pathlib import Path

import numpy as np

from retcon.plots import POLICY_STYLES, budget_axis, new_figure, policy_style

REPO = Path(__file__).resolve().parents[2]


def test_every_policy_has_its_own_colour_and_marker():
    colours = [c for c, _, _ in POLICY_STYLES.values()]
    markers = [m for _, _, m in POLICY_STYLES.values()]
    assert len(set(colours)) == len(colours) and len(set(markers)) == len(markers)
    from oas._evaluate import POLICIES

    assert set(POLICIES) | {"theory"} <= set(POLICY_STYLES)
    assert policy_style("oas-calibrated@0.05") == policy_style("oas-calibrated")


def test_budget_axis_ticks_are_powers_of_two():
    _, (ax,) = new_figure()
    budget_axis(ax)
    ticks = ax.xaxis.get_major_locator().tick_values(32, 2048)
    assert {32, 256, 2048} <= set(ticks) and all(float(np.log2(t)).is_integer() for t in ticks)
    assert ax.xaxis.get_major_formatter()(256.0, 0) == "256"
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "budget B (tokens)"


def test_no_module_sets_a_backend_or_uses_pyplot():
    """Figures are made outside pyplot, so no library module touches matplotlib's global state."""
    pattern = re.compile(r"^\s*(import matplotlib\.pyplot|from matplotlib import pyplot|"
                         r"from matplotlib\.pyplot import|matplotlib\.use\()", re.M)  # fmt: skip
    offenders = [
        str(path.relative_to(REPO))
        for pkg in ("retcon", "theory", "sim", "oas", "paper_checks", "experiments")
        for path in (REPO / pkg).rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_evaluate_figure_styles_and_best_learned_policy():
    """Each policy keeps its palette colour and marker; the right panel names the best learned
    policy (here mlp, the largest overall difference) and draws it thickest."""
    from oas._evaluate import DIFFERENCES, METRICS, POLICIES, Evaluation, accuracy_figure

    m, P = 3, len(POLICIES)
    point = np.linspace(0.2, 0.8, P * len(METRICS) * (m + 1)).reshape(P, len(METRICS), m + 1)
    diff = np.array([[0.01] * (m + 1), [0.02] * (m + 1), [-0.01] * (m + 1), [0.05] * (m + 1)])
    ev = Evaluation(
        POLICIES, np.array([64.0, 256.0, 1024.0]), point, point - 0.1, point + 0.1,
        diff, diff - 0.02, diff + 0.02, np.full(m + 1, 10), np.zeros((P, 4), int),
        {"differences": DIFFERENCES},
    )  # fmt: skip
    fig = accuracy_figure(ev)
    left, right = fig.axes
    for line in left.get_lines():
        style = policy_style(line.get_label())
        assert line.get_marker() == style["marker"], line.get_label()
    best = [ln for ln in right.get_lines() if ln.get_label() == "mlp (best learned)"]
    assert len(best) == 1 and best[0].get_linewidth() == max(
        ln.get_linewidth() for ln in right.get_lines()
    )
    assert "best: mlp" in right.get_title()
