"""The one plotting module (retcon.plots): one palette, one budget axis, one save, no backend."""

import re
from pathlib import Path

import numpy as np
import pytest

from retcon.plots import (
    FORMATS,
    POLICY_STYLES,
    REFERENCE_COLOR,
    STYLE,
    TIMELINE_STYLES,
    budget_axis,
    budget_label,
    figure_name,
    new_figure,
    policy_style,
    save,
)

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


def test_budget_ticks_of_a_wide_grid_stay_short_and_few():
    """The longmemeval-like grid (1024 .. 131072) once printed 1024204840968192... as one run of
    digits: its labels are now 1k .. 128k, at most nine ticks, each a power of two."""
    _, (ax,) = new_figure()
    budget_axis(ax)
    ax.set_xlim(1024, 131072)
    ticks = [t for t in ax.xaxis.get_major_locator()() if 1024 <= t <= 131072]
    labels = [budget_label(t) for t in ticks]
    assert labels == ["1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k"]
    assert budget_label(512.0) == "512" and budget_label(0.5) == "0.5"
    ax.set_xlim(2, 2**20)  # 19 doublings: every other power or sparser
    wide = [t for t in ax.xaxis.get_major_locator()() if 2 <= t <= 2**20]
    assert 4 <= len(wide) <= 10


def test_rendered_tick_labels_do_not_overlap():
    """Rendered, the labels of a 4-inch panel over 1k .. 128k sit apart (no run-together)."""
    fig, (ax,) = new_figure(width=4.0, height=3.0)
    ax.plot([1024, 131072], [0, 1])
    budget_axis(ax)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    boxes = sorted(
        (t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()),
        key=lambda b: b.x0,
    )
    assert len(boxes) >= 5
    assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:]))


def test_reference_colour_is_no_policy_or_operator_colour():
    used = {c for c, _, _ in POLICY_STYLES.values()} | {c for c, _ in TIMELINE_STYLES.values()}
    assert REFERENCE_COLOR not in used


def test_style_file_is_shipped_and_usable_by_path_and_by_name(tmp_path):
    import matplotlib
    import matplotlib.style

    from retcon import plots

    assert STYLE.is_file() and STYLE.suffix == ".mplstyle"
    before = matplotlib.rcParams["axes.spines.top"]
    with matplotlib.style.context(STYLE):
        assert matplotlib.rcParams["axes.spines.top"] is False
        assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][1] == "#1f77b4"
    assert matplotlib.rcParams["axes.spines.top"] == before
    plots.register_style()
    plots.register_style()  # twice is harmless
    assert "retcon" in matplotlib.style.available
    with matplotlib.style.context("retcon"):
        assert matplotlib.rcParams["axes.grid"] is True
    with plots.style():
        _, (ax,) = new_figure()
        assert not ax.spines["top"].get_visible()
    assert matplotlib.rcParams["axes.spines.top"] == before


def test_importing_the_packages_registers_no_style():
    """The style is registered only by ``register_style()``, never as a side effect of import."""
    import subprocess
    import sys

    code = (
        "import retcon, retcon.plots, theory, sim, oas, paper_checks\n"
        "import matplotlib.style\n"
        "assert 'retcon' not in matplotlib.style.library, 'registered at import'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_save_writes_every_format_deterministically(tmp_path, fmt):
    magic = {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<?xml"}[fmt]
    blobs = []
    for i in range(2):
        fig, (ax,) = new_figure()
        ax.plot([1, 2, 3], [3, 1, 2])
        blobs.append(save(fig, tmp_path / f"{i}" / figure_name("f", fmt)).read_bytes())
    assert blobs[0] == blobs[1] and blobs[0].startswith(magic)
    with pytest.raises(ValueError, match="one of png, pdf, svg; got 'jpg'"):
        figure_name("f", "jpg")


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
        style = policy_style(str(line.get_label()))
        assert line.get_marker() == style["marker"], line.get_label()
    best = [ln for ln in right.get_lines() if ln.get_label() == "mlp (best learned)"]
    assert len(best) == 1 and best[0].get_linewidth() == max(
        ln.get_linewidth() for ln in right.get_lines()
    )
    assert "best: mlp" in right.get_title()
