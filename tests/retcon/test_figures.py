"""The figures of issue 36, checked on what a reader sees: panels, legends outside the data,
to-scale axes, reference marks in a colour no data line uses, and every format on the CLI."""

from types import SimpleNamespace

import numpy as np
import pytest

from retcon.plots import REFERENCE_COLOR, TIMELINE_STYLES


def _rendered(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    return fig


def _timeline_report():
    t = list(range(1, 13))
    budgets = [256.0, 1024.0, 4096.0]
    utility = []
    for b in budgets:
        for policy in TIMELINE_STYLES:
            if policy == "router":
                continue
            # overflow and tiered give the same curve: one would hide the other
            y = [0.5 - 0.01 * k for k in t] if policy in ("overflow", "tiered") else [0.3] * 12
            op = None if policy == "retain-all" else "merge"
            utility.append(
                dict(
                    policy=policy,
                    operator=op,
                    budget=b,
                    utility=y,
                    lower=[v - 0.02 for v in y],
                    upper=[v + 0.02 for v in y],
                )
            )
    gens = [
        dict(
            operator=op,
            budget=b,
            generations=[0, 1, 2],
            utility=[0.1, 0.2, 0.3],
            lower=[0.05, 0.15, 0.25],
            upper=[0.15, 0.25, 0.35],
        )
        for op in ("merge", "abstract", "rewrite")
        for b in budgets
    ]
    cross = [dict(operator="merge", budget=b, crossover_time=4.5) for b in budgets]
    return dict(
        scenario="toy",
        budgets=budgets,
        times=t,
        utility=utility,
        by_generation=gens,
        crossover=cross,
        crossover_policy="periodic",
    )


def test_by_generation_has_one_panel_per_operator_and_its_legend_outside(tmp_path, monkeypatch):
    import oas._timeline_plots as tp

    figs = []
    monkeypatch.setattr(tp, "save", lambda fig, path, **kw: figs.append(fig) or path)
    tp.plot_by_generation(_timeline_report(), tmp_path / "g.png")
    fig = _rendered(figs[0])
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["merge", "abstract", "rewrite"]
    assert all(len(ax.get_lines()) == 3 for ax in panels)  # a line per budget
    assert all(ax.get_legend() is None for ax in panels) and len(fig.legends) == 1
    legend_box = fig.legends[0].get_window_extent()
    assert all(not legend_box.overlaps(ax.get_window_extent()) for ax in panels)


def test_utility_keeps_every_policy_visible_and_marks_the_crossover_apart(tmp_path, monkeypatch):
    import oas._timeline_plots as tp

    figs = []
    monkeypatch.setattr(tp, "save", lambda fig, path, **kw: figs.append(fig) or path)
    tp.plot_utility(_timeline_report(), tmp_path / "u.png")
    fig = _rendered(figs[0])
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}
    over, tiered = lines["overflow"], lines["tiered"]
    # the same curve: told apart by colour, line style and markers at different points
    assert over.get_color() != tiered.get_color() and over.get_marker() != tiered.get_marker()
    assert over.get_markevery() != tiered.get_markevery()
    policy_colours = {ln.get_color() for ln in lines.values()}
    verticals = [ln for ln in ax.get_lines() if ln.get_label().startswith("_")]
    assert verticals and {ln.get_color() for ln in verticals} == {REFERENCE_COLOR}
    assert REFERENCE_COLOR not in policy_colours
    assert len(fig.legends) == 1 and ax.get_legend() is None


def test_phase_axis_is_to_scale_and_the_no_spillover_line_does_not_move(tmp_path, monkeypatch):
    import sim._plots as sp

    knobs = [0.0, 0.05, 0.1, 0.2, 0.4]
    xb = np.array(knobs + [0.0] * 4)
    xr = np.array([0.0] * 5 + knobs[1:])
    b = np.array([16.0, 32, 64, 128, 256, 512])
    n = len(xb)
    delta = np.broadcast_to(np.linspace(0.2, -0.2, len(b)), (n, 3, len(b))).copy()
    base = np.array([100.0, 120.0, 140.0])
    pred = base + 200 * (xb + xr)[:, None]  # the prediction moves with the knob
    res = SimpleNamespace(
        budgets=b,
        budget_spillover=xb,
        rank_spillover=xr,
        delta=delta,
        predicted_crossover=pred,
        crossover_budget=np.where((xb + xr)[:, None] == 0, base, pred + 5),
    )
    figs = []
    monkeypatch.setattr(sp, "save", lambda fig, path, **kw: figs.append(fig) or path)
    sp.plot_phase(res, "toy", tmp_path / "p.png")
    fig = _rendered(figs[0])
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 6
    for i, ax in enumerate(panels):
        assert list(ax.get_yticks()) == knobs  # ticks at their values: a numeric axis
        refs = [ln for ln in ax.get_lines() if ln.get_color() == REFERENCE_COLOR]
        assert len(refs) == 1
        x = refs[0].get_xdata()
        assert x[0] == x[1] == base[i // 2]  # vertical at the zero-spillover crossover
    assert len(fig.legends) == 1
    box = fig.legends[0].get_window_extent()
    assert all(not box.overlaps(ax.get_window_extent()) for ax in panels)


def _evaluation():
    from oas import POLICIES, Evaluation
    from oas._evaluate import METRICS

    budgets = np.array([64.0, 256.0, 1024.0])
    m, P = len(budgets), len(POLICIES)
    n = 12
    budget = np.tile(budgets, n // m)
    choices = np.zeros((P, n), int)
    choices[POLICIES.index("oas-calibrated")] = np.where(budget < 1024, 2, 0)  # abstract, ret
    pt = np.zeros((P, len(METRICS), m + 1))
    diff = np.zeros((4, m + 1))
    info = dict(
        test_index=np.arange(n),
        n_test=n,
        tau_calibrated={"64": 0.1, "256": 0.2, "1024": None},
        tau_crc={"64": 0.3, "256": None, "1024": None},
    )
    ev = Evaluation(
        POLICIES, budgets, pt, pt, pt, diff, diff, diff, np.full(m + 1, n), choices, info
    )
    data = SimpleNamespace(
        n=n, budget=budget, query_type=np.where(np.arange(n) % 2, "single-hop", "multi-hop")
    )
    return ev, data


def test_router_decisions_shares_and_figure():
    from oas import decision_shares, decisions_figure
    from retcon.errors import InputError

    ev, data = _evaluation()
    types, shares = decision_shares(ev, data)
    assert types == ["multi-hop", "single-hop"]
    np.testing.assert_allclose(shares[:, :, 2], [[1, 1, 0], [1, 1, 0]])  # abstract below 1024
    np.testing.assert_allclose(shares[:, 2, 0], [1, 1])  # ret at 1024
    np.testing.assert_allclose(shares.sum(-1), 1.0)
    fig = _rendered(decisions_figure(ev, data))
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles[:2] == [f"{t}: action chosen by oas-calibrated" for t in types]
    assert titles[2] == "harm-calibration threshold tau_B"
    with pytest.raises(InputError, match="policy must be one of .*; got 'nope'"):
        decision_shares(ev, data, "nope")
    with pytest.raises(InputError, match="not rows of this data"):
        decision_shares(ev, SimpleNamespace(n=3, budget=data.budget, query_type=data.query_type))


@pytest.mark.parametrize("fmt", ["pdf", "svg"])
def test_format_option_writes_the_figure_in_that_format(tmp_path, capsys, fmt):
    from tests._cli import run_cli

    out = tmp_path / "cx"
    rc, stdout, err = run_cli(["crossover", "--out", str(out), "--format", fmt], capsys)
    assert rc == 0, err
    assert (out / f"crossover.{fmt}").is_file() and not (out / "crossover.png").exists()
    assert f"crossover.{fmt}" in stdout


def test_every_drawing_command_offers_the_shared_format_option(capsys):
    from tests._cli import run_cli

    for argv in (
        ["simulate"],
        ["stress"],
        ["crossover"],
        ["evaluate"],
        ["identify"],
        ["timeline", "simulate"],
        ["timeline", "locomo"],
        ["paper-checks"],
    ):
        rc, stdout, _ = run_cli([*argv, "--help"], capsys)
        assert rc == 0 and "--format {png,pdf,svg}" in stdout, argv
    rc, _, err = run_cli(["crossover", "--format", "jpg"], capsys)
    assert rc == 2 and "invalid choice: 'jpg'" in err
