"""``retcon simulate``: tables, ``--json`` keys, ``--out`` figures and sidecar."""

import json
import math

import numpy as np
import pytest

from retcon.cli import main

ARGS = ["simulate", "--scenario", "single-cluster", "--queries", "65536", "--resamples", "200"]
KEYS = {
    "budgets",
    "delta",
    "delta_se",
    "coverage",
    "replacement",
    "crossover_budget",
    "crossover_ci",
    "status",
}


@pytest.fixture(scope="module")
def outdir(tmp_path_factory):
    return tmp_path_factory.mktemp("simout")


_FIRST: dict[str, str] = {}  # the first run's stdout, for the same-bytes test


def test_json_only_one_object_on_stdout(capsys, outdir):
    assert main(ARGS + ["--json", "--out", str(outdir)]) == 0
    out = _FIRST["stdout"] = capsys.readouterr().out
    report = json.loads(out)  # exactly one JSON object, nothing else
    assert out.count("\n") == 1
    assert set(report["operators"]) == {"merge", "abstract", "rewrite"}
    for op in report["operators"].values():
        assert set(op) >= KEYS
        assert op["status"] in ("unique", "none", "multiple")
        d, c, r = map(np.asarray, (op["delta"], op["coverage"], op["replacement"]))
        assert np.array_equal(c + r, d)
        if op["crossover_budget"] is not None:
            lo, hi = op["crossover_ci"]  # an upper end beyond the grid is null (inf)
            assert lo <= op["crossover_budget"] <= (math.inf if hi is None else hi)
    assert json.loads((outdir / "simulate.json").read_text()) == report


def test_out_writes_figures_and_sidecar(outdir):
    for name in ("delta.png", "decomposition.png", "simulate.txt", "sidecar.json"):
        assert (outdir / name).stat().st_size > 0
    side = json.loads((outdir / "sidecar.json").read_text())
    assert (
        side["seed"] == 0
        and side["command"] == "retcon simulate"
        and side["config"]["name"] == "single-cluster"
    )
    assert "retcon_version" in side


def test_table_lists_every_operator_and_crossover(capsys):
    assert main(ARGS) == 0
    out = capsys.readouterr().out
    for op in ("merge", "abstract", "rewrite"):
        assert f"\n{op} (compress_ratio" in out
    assert "U_ret" in out and "SE(dU)" in out and "crossover_budget" in out
    # a newcomer's reading: the conclusion in words and where --out would put the figures
    conclusion = out.split("Conclusion:")[1]
    for op in ("merge", "abstract", "rewrite"):
        assert f"  {op}: " in conclusion
    assert "consolidation wins below the crossover budget, retention above" in conclusion
    assert "--out DIR" in out and "delta.png" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["simulate", "--scenario", "nope"], "unknown scenario 'nope'"),
        (["simulate", "--queries", "0"], "--queries"),
        (["simulate", "--config", "/nonexistent/x.toml"], "cannot read scenario file"),
    ],
)
def test_bad_options_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


@pytest.mark.filterwarnings("error")  # drawn unclipped, inf makes matplotlib warn
def test_delta_figure_draws_an_interval_that_reaches_beyond_the_grid(tmp_path):
    """docs/model.md §6.4: an interval end below (0) or above (inf) the grid is drawn at its edge."""
    from types import SimpleNamespace

    from sim._crossover import SimulatedCrossover
    from sim._plots import plot_delta

    b = np.array([32.0, 64.0, 128.0, 256.0])
    d = np.array([[0.1, 0.05, -0.01, -0.02]] * 3)
    result = SimpleNamespace(budgets=b, delta=d, delta_se=np.full_like(d, 0.01))
    cx = SimulatedCrossover(
        np.array([120.0, 120.0, 120.0]),
        np.array([0.0, 90.0, 0.0]),
        np.array([math.inf, 150.0, 200.0]),
        np.ones(3, int),
        np.ones(3),
        ("unique",) * 3,
    )
    path = plot_delta(result, cx, "t", tmp_path / "delta.png")
    assert path.stat().st_size > 0


def test_same_seed_prints_the_same_bytes(capsys):
    """A second identical run prints the same bytes as test_json_only_one_object_on_stdout's:
    wall-clock seconds appear only with --timing (issue 23 item 4)."""
    if "stdout" not in _FIRST:
        assert main(ARGS + ["--json"]) == 0
        _FIRST["stdout"] = capsys.readouterr().out
    assert main(ARGS + ["--json"]) == 0
    out = capsys.readouterr().out
    assert out == _FIRST["stdout"] and "timing" not in json.loads(out)


@pytest.mark.slow
def test_same_seed_writes_the_same_files_and_timing_only_on_request(capsys, outdir, tmp_path):
    if not (outdir / "simulate.json").exists():
        assert main(ARGS + ["--json", "--out", str(outdir)]) == 0
    assert main(ARGS + ["--json", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    for name in ("simulate.json", "sidecar.json", "simulate.txt"):
        assert (tmp_path / name).read_bytes() == (outdir / name).read_bytes(), name
    assert main(ARGS + ["--json", "--timing"]) == 0
    timing = json.loads(capsys.readouterr().out)["timing"]
    assert set(timing) == {"compile_s", "kernel_s", "bootstrap_ci_s", "plot_s", "total_s"}
