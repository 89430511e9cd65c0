"""experiments/: every script runs at tiny size, writes its figure and a sidecar, and reruns from the
sidecar to the same numbers; bad configs exit 2 with one line."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import experiments
from paper_checks.studies.scripts._run_experiment import KEYS

REPO = Path(__file__).resolve().parents[2]

TINY = {
    "crossover_curves": 'sources = ["theory"]\n',
    "coverage_replacement": 'sources = ["theory"]\n',
    "crossover_vs_length": "theory_scales = [0.5, 1.0, 2.0]\nsources = []\n",
}
TINY_SLOW = {
    "phase_diagram": "levels = [0.0, 0.2]\nmemories = 16\nmemory_size = 2\n",
    "oas_vs_fixed": 'sources = ["sim:locomo-like"]\ninstances = 400\nn_resamples = 50\n',
    "harm_tradeoff": 'source = "sim:locomo-like"\ninstances = 400\nalphas = [0.05, 0.2]\nn_resamples = 50\n',
}


def run(name, tmp_path, toml):
    cfg = tmp_path / f"{name}.toml"
    cfg.write_text("seed = 3\n" + toml)
    out = tmp_path / "out"
    mod = importlib.import_module(f"experiments.{name}")
    assert mod.main(["--config", str(cfg), "--out", str(out)]) == 0
    side = json.loads((out / f"{name}.json").read_text())
    assert (out / f"{name}.png").stat().st_size > 0
    return mod, out, side


def rerun_matches(mod, name, out, side, tmp_path):
    """The sidecar alone reproduces the figure's numbers (same config, same seed)."""
    out2 = tmp_path / "again"
    assert mod.main(["--from-sidecar", str(out / f"{name}.json"), "--out", str(out2)]) == 0
    side2 = json.loads((out2 / f"{name}.json").read_text())
    assert side2["config"] == side["config"] and side2["seed"] == side["seed"] == 3
    assert side2["data"] == side["data"]


@pytest.mark.parametrize("name", sorted(TINY))
def test_theory_experiments_write_and_reproduce(name, tmp_path):
    mod, out, side = run(name, tmp_path, TINY[name])
    assert side["command"] == f"python -m experiments.{name}" and "retcon_version" in side
    rerun_matches(mod, name, out, side, tmp_path)


def test_crossover_vs_length_is_proportional_in_theory(tmp_path):
    """MODEL §6.5: scaling the lengths by s scales B* by s, so B*/L is the same at every scale."""
    _, _, side = run("crossover_vs_length", tmp_path, TINY["crossover_vs_length"])
    for op in ("merge", "abstract", "rewrite"):
        ratios = [
            p["crossover"]["point"] / p["length"]
            for p in side["data"]["points"]
            if p["operator"] == op
        ]
        assert len(ratios) == 3
        assert max(ratios) == pytest.approx(min(ratios), rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TINY_SLOW))
def test_sim_and_oas_experiments(name, tmp_path):
    mod, out, side = run(name, tmp_path, TINY_SLOW[name])
    assert side["data"]
    if (
        name == "oas_vs_fixed"
    ):  # fitting, MLP and bootstrap included, the sidecar reproduces the numbers
        rerun_matches(mod, name, out, side, tmp_path)
    if name == "harm_tradeoff":
        d = side["data"]
        for e in d["oas-calibrated"] + d["oas-crc"] + [d["oas"]]:
            for lo_p_hi in (e["accuracy"], e["harm"]):
                assert lo_p_hi[1] - 1e-6 <= lo_p_hi[0] <= lo_p_hi[2] + 1e-6


def test_every_experiment_has_a_script_and_a_config_with_known_keys():
    import tomllib

    from paper_checks.studies.scripts._run_experiment import check_config

    for name in experiments.NAMES:
        assert (REPO / "experiments" / f"{name}.py").is_file()
        cfg = tomllib.loads((REPO / "experiments" / f"{name}.toml").read_text())
        check_config(cfg, name)
        assert "seed" in cfg
    assert set(TINY) | set(TINY_SLOW) == set(experiments.NAMES)


@pytest.mark.parametrize(
    "toml, message",
    [
        ("bogus = 1\n", "unknown key 'bogus'"),
        ('queries = "many"\n', "key 'queries' must be a int"),
        ('sources = ["nowhere"]\n', "source must be"),
        ("seed = [\n", "not valid TOML"),
    ],
)
def test_bad_config_exits_2_with_one_line(toml, message, tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(toml)
    mod = importlib.import_module("experiments.crossover_curves")
    assert mod.main(["--config", str(cfg), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_missing_sidecar_exits_2(tmp_path, capsys):
    mod = importlib.import_module("experiments.crossover_curves")
    assert mod.main(["--from-sidecar", str(tmp_path / "none.json"), "--out", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert set(KEYS) >= {"seed", "sources"}


def test_end_to_end_report_key_depends_on_the_run_name_not_its_position(tmp_path, monkeypatch):
    """Listing another run, or reordering them, leaves each run's key (so its numbers) unchanged."""
    import jax
    import numpy as np

    import oas.real
    import paper_checks.studies.scripts._end_to_end as e2e
    from experiments.end_to_end import main

    seen: dict = {}

    def fake_report(key, path, *, n_resamples):
        seen.setdefault(path, []).append(np.asarray(jax.random.key_data(key)).tolist())
        return {"path": path}

    monkeypatch.setattr(oas.real, "end_to_end_report", fake_report)
    monkeypatch.setattr(oas.real, "side_by_side", lambda results: "| table |")
    monkeypatch.setattr(e2e, "_figure", lambda results, path: None)
    files = {n: tmp_path / f"{n}.jsonl" for n in ("a", "b", "c")}
    for f in files.values():
        f.write_text("")
    runs = [f"{n}={f}" for n, f in files.items()]
    main([*(f"--run={r}" for r in runs), "--out", str(tmp_path / "o1")])
    main([*(f"--run={r}" for r in runs[::-1][:2]), "--out", str(tmp_path / "o2")])
    assert seen[str(files["b"])][0] == seen[str(files["b"])][1]
    assert seen[str(files["c"])][0] == seen[str(files["c"])][1]
    assert seen[str(files["b"])][0] != seen[str(files["c"])][0]


def test_end_to_end_figure_draws_every_run(tmp_path, monkeypatch):
    """Six runs, four actions: 24 curves (more runs than line styles must not drop any)."""
    import paper_checks.studies.scripts._end_to_end as e2e
    import retcon.plots

    drawn = {}

    def keep(fig, path, **kw):
        drawn["lines"] = fig.axes[0].get_lines()

    monkeypatch.setattr(retcon.plots, "save", keep)
    acc = {a: [0.1, 0.2] for a in ("ret", "merge", "abstract", "rewrite")}
    runs = {f"run{i}": {"summary": {"budgets": [32, 64], "accuracy": acc}} for i in range(6)}
    e2e._figure(runs, tmp_path / "f.png")
    labels = [line.get_label() for line in drawn["lines"]]
    assert len(labels) == 24 and "rewrite (run5)" in labels
