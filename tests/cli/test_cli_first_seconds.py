"""The user's first seconds (issue 36 items 2, 3, 5): the answer in the first 5 lines of stdout,
bad files reported before JAX or matplotlib is imported, and presets printed as TOML."""

import json
import os
import subprocess
import sys

import pytest

from retcon.cli import main
from sim import PRESETS, load_scenario

HEAVY = ("jax", "matplotlib")


def fresh(code: str, env_extra: dict | None = None) -> dict:
    """Run ``code`` (which calls retcon.cli.main) in a fresh interpreter; its exit code and the
    heavy modules in sys.modules at the failure."""
    prog = (
        "import json, sys\n"
        "from retcon.cli import main\n"
        f"rc = main({code})\n"
        f"print(json.dumps({{'rc': rc, 'heavy': [m for m in {HEAVY!r} if m in sys.modules]}}))\n"
    )
    env = {**os.environ, **(env_extra or {})}
    out = subprocess.run(
        [sys.executable, "-c", prog], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1]) | {"err": out.stderr}


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["simulate", "--config", "{tmp}/missing.toml"], "cannot read scenario file"),
        (["stress", "--config", "{tmp}/missing.toml"], "cannot read scenario file"),
        (["paper-checks", "--data", "{tmp}/locomo10.json"], "no such LoCoMo file"),
        (
            ["pair", "locomo", "--data", "{tmp}/locomo10.json", "--output", "{tmp}/p.jsonl"],
            "--data",
        ),
        (["paper-checks"], "--sim-only"),
        (["crossover", "--lengths", "{tmp}/l.txt"], "no such file"),
    ],
)
def test_bad_input_before_heavy_imports(tmp_path, argv, needle):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    env = {"RETCON_DATA_DIR": str(tmp_path / "cache"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    res = fresh(repr(argv), env)
    assert res["rc"] == 2 and res["heavy"] == []
    assert needle in res["err"] and res["err"].count("\n") == 1


def test_simulate_conclusion_first(capsys):
    assert (
        main(["simulate", "--scenario", "single-cluster", "--queries", "2048", "--resamples", "20"])
        == 0
    )
    head = capsys.readouterr().out.splitlines()[:5]
    assert head[0] == "Conclusion:"
    for op in ("merge", "abstract", "rewrite"):
        assert any(line.startswith(f"  {op}: ") and "wins" in line for line in head)


@pytest.mark.slow  # moved to the slow tier: the fast tier measured 184 s on 2 cores
def test_stress_conclusion_first(capsys):
    argv = ["stress", "--scenario", "single-cluster", "--memories", "16", "--memory-size", "4"]
    assert main([*argv, "--budget-spillover", "0,0.2", "--rank-spillover", "0"]) == 0
    head = capsys.readouterr().out.splitlines()[:5]
    assert head[0] == "Conclusion:"
    for op in ("merge", "abstract", "rewrite"):
        line = next(s for s in head if s.startswith(f"  {op}: "))
        assert "the reversal survives in" in line and "of 2 conditions" in line
        assert "B* moves by up to" in line or "no B* to compare" in line


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_print_scenario_loads_back(tmp_path, capsys, name):
    assert main(["simulate", "--print-scenario", name]) == 0
    f = tmp_path / "my-scenario.toml"
    f.write_text(capsys.readouterr().out)
    assert load_scenario(f) == load_scenario(name)


def test_print_scenario_unknown(capsys):
    assert main(["simulate", "--print-scenario", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--print-scenario" in err and "'nope'" in err and "locomo-like" in err


def test_default_simulate_never_imports_jax(tmp_path):
    """Issue 34: the default ``retcon simulate`` on a CPU runs the numpy kernel, its keys derived
    in numpy (JAX's threefry, bit for bit, ``sim.kernel.key_of_seed``), so JAX is never imported
    (``tests/sim/test_sim_kernel.py`` pins the numpy keys to JAX's)."""
    argv = ["-q", "simulate", "--json", "--seed", "3", "--queries", "4096", "--resamples", "50"]
    res = fresh(repr(argv), {"JAX_PLATFORMS": ""})
    assert res["rc"] == 0 and "jax" not in res["heavy"], res
