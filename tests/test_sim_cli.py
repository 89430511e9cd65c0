"""``retcon simulate``: tables, ``--json`` keys, ``--out`` figures and sidecar."""

import json

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


def test_json_only_one_object_on_stdout(capsys, outdir):
    assert main(ARGS + ["--json", "--out", str(outdir)]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)  # exactly one JSON object, nothing else
    assert out.count("\n") == 1
    assert set(report["operators"]) == {"merge", "abstract", "rewrite"}
    for op in report["operators"].values():
        assert set(op) >= KEYS
        assert op["status"] in ("unique", "none", "multiple")
        d, c, r = map(np.asarray, (op["delta"], op["coverage"], op["replacement"]))
        assert np.array_equal(c + r, d)
        if op["crossover_budget"] is not None:
            lo, hi = op["crossover_ci"]
            assert lo <= op["crossover_budget"] <= hi
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
