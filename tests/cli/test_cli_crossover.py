"""``retcon crossover``: output keys, agreement with docs/model.md §6.6, bad input as exit 2."""

import json
import math
import os
import subprocess
import sys

import pytest
import scipy.stats as sst

import theory
from retcon.cli import main
from tests._cli import run_cli


def run_json(capsys, *argv):
    assert main(["crossover", *argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # exactly one JSON object, nothing else on stdout
    return json.loads(out)


def kappa_of(phi=0.85, a=0.9, g=0.1):
    return (a - g) / (a * phi - g)


def test_default_shows_sign_reversal(capsys):
    """docs/model.md §6.2-6.4: the embedded default has dU > 0 at small budgets, < 0 at large ones."""
    res = run_json(capsys)
    assert {
        "crossover_budget",
        "status",
        "kappa",
        "table",
        "tight_budget",
        "reason",
        "sign_change_between",
    } <= set(res)
    assert res["status"] == "unique" and res["reason"] is None
    assert res["kappa"] == pytest.approx(kappa_of(), rel=1e-12)
    assert res["tight_budget"]["holds"] is True
    table = res["table"]
    assert len(table) == 13
    assert set(table[0]) == {"budget", "delta", "coverage", "replacement"}
    assert table[0]["delta"] > 0 > table[-1]["delta"]
    b = res["crossover_budget"]
    assert all((row["delta"] > 0) == (row["budget"] < b) for row in table)
    for row in table:
        assert row["coverage"] + row["replacement"] == pytest.approx(row["delta"], abs=1e-12)
    assert res["loose_budget_limit"] == pytest.approx(-0.9 * 0.15)


def test_text_output(capsys):
    """The human report names kappa, the tight-budget condition and the crossover budget."""
    assert main(["crossover"]) == 0
    out = capsys.readouterr().out
    for needle in (
        "kappa = (a - g)/(a phi - g) = 1.20301",
        "tight-budget condition",
        "holds",
        "crossover budget B* = 529.72",
        "status unique",
        "coverage",
        "replacement",
    ):
        assert needle in out


def test_uniform_matches_closed_form(capsys):
    """docs/model.md §6.6: U(0, 1000) with rho = 0.3 < 1/kappa gives B* = 1000 / kappa."""
    res = run_json(capsys, "--dist", "uniform", "--max", "1000")
    assert res["crossover_budget"] == pytest.approx(1000.0 / kappa_of(), rel=1e-6)
    assert res["closed_form_crossover"] == pytest.approx(1000.0 / kappa_of(), rel=1e-12)


def test_exponential_half_matches_closed_form(capsys):
    """docs/model.md §6.6: exponential mean 200, rho = 1/2 gives B* = -200 ln(kappa - 1)."""
    res = run_json(capsys, "--dist", "exponential", "--mean", "200", "--compress-ratio", "0.5")
    assert res["crossover_budget"] == pytest.approx(-200.0 * math.log(kappa_of() - 1.0), rel=1e-6)


def test_point_mass_matches_closed_form(capsys):
    """docs/model.md §6.6: L = 400 tokens gives B* = 400."""
    res = run_json(
        capsys, "--dist", "point", "--length", "400", "--budgets", "100,200", "390", "410"
    )
    assert res["crossover_budget"] == pytest.approx(400.0, rel=1e-6)
    assert [r["budget"] for r in res["table"]] == [100.0, 200.0, 390.0, 410.0]
    assert [r["delta"] > 0 for r in res["table"]] == [False, True, True, False]


@pytest.mark.parametrize(
    "argv,frozen",
    [
        (["--dist", "gamma", "--shape", "2", "--scale", "150"], sst.gamma(2.0, scale=150.0)),
        (
            ["--dist", "weibull", "--shape", "1.5", "--scale", "300"],
            sst.weibull_min(1.5, scale=300.0),
        ),
        (["--dist", "lognormal", "--sigma", "1", "--scale", "300"], sst.lognorm(1.0, scale=300.0)),
    ],
)
def test_other_distributions_solve_delta(capsys, argv, frozen):
    """docs/model.md §6.1, §6.4: the reported B* is a root of dU computed from scipy's CDF."""
    res = run_json(capsys, *argv)
    b, rho, phi, a, g = res["crossover_budget"], 0.3, 0.85, 0.9, 0.1

    def d(x):
        return (a * phi - g) * frozen.cdf(x / rho) - (a - g) * frozen.cdf(x)

    assert res["status"] == "unique"
    assert d(b * (1 - 1e-6)) > 0 > d(b * (1 + 1e-6))


def test_compression_too_weak(capsys):
    """docs/model.md §6.3: rho^(-1) = 1.11 < kappa = 1.20 -> no crossover; dU < 0 on every budget."""
    res = run_json(capsys, "--compress-ratio", "0.9")
    assert (res["status"], res["reason"], res["crossover_budget"]) == (
        "none",
        "compression too weak",
        None,
    )
    assert res["tight_budget"]["holds"] is False
    assert all(r["delta"] < 0 for r in res["table"])


def test_out_writes_table_figure_sidecar(tmp_path, capsys):
    """--out DIR writes the table, a figure, the result and a sidecar."""
    assert main(["crossover", "--out", str(tmp_path)]) == 0
    names = sorted(os.listdir(tmp_path))
    assert names == ["crossover.json", "crossover.png", "crossover_table.csv", "sidecar.json"]
    side = json.loads((tmp_path / "sidecar.json").read_text())
    assert side["command"] == "retcon crossover" and side["config"]["compress_ratio"] == 0.3
    assert (tmp_path / "crossover_table.csv").read_text().splitlines()[
        0
    ] == "budget,delta,coverage,replacement"
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--compress-ratio", "1.3"], "--compress-ratio must be in (0, 1); got 1.3."),
        (
            ["--acc-raw", "0.1", "--acc-guess", "0.2"],
            "--acc-raw must be greater than --acc-guess (0.2), in (0.2, 1]; got 0.1.",
        ),
        (["--fidelity", "-0.5"], "--fidelity must be in [0, inf); got -0.5."),
        (["--budgets", "100", "-5"], "--budgets must be in (0, inf) tokens; got -5."),
        (
            ["--budgets", "100,abc"],
            "argument --budgets: expected budgets in tokens separated by commas (e.g. 100,200); "
            "got 'abc'",
        ),
        (
            ["--dist", "cauchy"],
            "--dist must be one of point, uniform, exponential, gamma, lognormal, weibull; got 'cauchy'.",
        ),
        (
            ["--dist", "gamma", "--shape", "2"],
            "--scale is required for --dist gamma: a number in (0, inf); got nothing.",
        ),
        (
            ["--dist", "exponential"],
            "--mean is required for --dist exponential: a number in (0, inf); got nothing.",
        ),
        (
            ["--dist", "uniform", "--max", "10", "--mean", "3"],
            "--mean does not apply to --dist uniform (it takes --max); got 3.0.",
        ),
    ],
)
def test_bad_input_exit_2_one_line(capsys, argv, message):
    """Bad input: status 2, one line on stderr naming the option, the range and the value; no traceback."""
    status, out, err = run_cli(["crossover", *argv], capsys)  # argparse: SystemExit(2)
    assert status == 2
    assert out == ""
    assert err == f"retcon crossover: error: {message}\n"


def test_console_script_exit_status():
    """The installed entry point exits 2 with one line and no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "retcon", "crossover", "--compress-ratio", "1.3"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "retcon crossover: error: --compress-ratio must be in (0, 1); got 1.3."
    ]
    assert "Traceback" not in proc.stderr


def test_json_equals_api(capsys):
    """The CLI reports what the Python API computes."""
    res = run_json(
        capsys, "--dist", "weibull", "--shape", "2", "--scale", "500", "--fidelity", "0.7"
    )
    api = theory.crossover(
        theory.make_length_dist("weibull", shape=2, scale=500),
        compress_ratio=0.3,
        fidelity=0.7,
        acc_raw=0.9,
        acc_guess=0.1,
    )
    assert res["crossover_budget"] == api.crossover_budget and res["status"] == api.status
