"""Hostile input and faults through the CLI: the contract every command keeps.

Contract: bad input exits with status 2 and exactly one line on stderr that names the option, file,
line or field (in the words the user typed), with what was expected and what came; no traceback;
nothing on stdout; nothing half-written or left behind; all inputs and output targets are checked
before the long work.

The table ``CASES`` is the place where every option gets its bad-input case: one row per case,
``(command id, argv, words the message must hold)``. Placeholders in ``argv`` (``{file}``,
``{paired}``, ``{router}``...) are files the ``env`` fixture makes in a temporary folder. Each
case runs in the default (fast) tier: it must fail before any heavy work.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from retcon.cli import main

FIX = Path(__file__).parent / "fixtures"

# A valid router file's JSON; cases below break one field at a time.
_ROUTER = {
    "format": "retcon-oas-router",
    "format_version": 1,
    "feature_names": None,  # filled from oas
    "actions": ["ret", "merge", "abstract", "rewrite"],
    "vocabulary": "locomo",
    "packing": "prefix",
    "standardization": {"mean": [0.0] * 11, "scale": [1.0] * 11},
    "coefficients": [[0.0] * 11] * 4,
    "intercepts": [0.5, 0.4, 0.3, 0.2],
    "penalties": [1.0] * 4,
    "thresholds": {
        "calibrated": {"budgets": [64.0, 256.0], "tau": [0.1, None], "n": [10, 10]},
        "crc": {"budgets": [64.0, 256.0], "tau": [0.2, 0.0], "n": [10, 10]},
    },
    "alpha": 0.1,
    "provenance": {},
}


def _router(**change) -> dict:
    import copy

    from oas import FEATURE_NAMES

    r = copy.deepcopy(_ROUTER)
    r["feature_names"] = list(FEATURE_NAMES)
    for path, value in change.items():
        cur = r
        keys = path.split("__")
        for k in keys[:-1]:
            cur = cur[k]
        cur[keys[-1]] = value
    return r


def _paired_row(i: int, groups: int) -> dict:
    return {
        "instance_id": f"i{i}",
        "query_id": f"q{i // 2}",
        "group_id": f"g{i % groups}",
        "query_type": ["single-hop", "multi-hop", "temporal", "open-domain"][i % 4],
        "budget": [64, 256][i % 2],
        "y_ret": i % 2,
        "y_merge": (i // 2) % 2,
        "y_abstract": 0.5,
        "y_rewrite": 1,
        "cluster_lengths": [40 + i, 90, 25],
        "session_ids": ["s1", "s2", "s1"],
        "embeddings": [[1.0, 0.0, 0.5], [0.0, 1.0, 0.2], [1.0, 1.0, float(i % 7)]],
    }


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Files the cases refer to, by placeholder name."""
    monkeypatch.setenv("RETCON_DATA_DIR", str(tmp_path / "cache"))
    files = {"tmp": tmp_path}
    f = tmp_path / "a_file.txt"
    f.write_text("x\n")
    files["file"] = f
    files["under_file"] = f / "sub"
    d = tmp_path / "a_dir"
    d.mkdir()
    files["dir"] = d
    paired = tmp_path / "paired.jsonl"
    paired.write_text("".join(json.dumps(_paired_row(i, 3)) + "\n" for i in range(24)))
    files["paired"] = paired
    many = tmp_path / "paired_many.jsonl"
    many.write_text("".join(json.dumps(_paired_row(i, 40)) + "\n" for i in range(160)))
    files["paired_many"] = many
    bad = tmp_path / "nonutf8.jsonl"
    bad.write_bytes(
        (json.dumps(_paired_row(0, 3)) + "\n").encode() + b'{"instance_id": "\xff\xfe"}\n'
    )
    files["nonutf8"] = bad
    nested = tmp_path / "nested.jsonl"
    nested.write_text("[" * 100000 + "]" * 100000 + "\n")
    files["nested"] = nested
    toml = tmp_path / "bad.toml"
    toml.write_bytes(b'name = "x\xff"\n')
    files["nonutf8_toml"] = toml
    files["router"] = tmp_path / "router.json"
    files["router"].write_text(json.dumps(_router()))
    for name, obj in ROUTER_BREAKS.items():
        p = tmp_path / f"router_{name}.json"
        p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
        files[f"router_{name}"] = p
    nested_router = tmp_path / "router_nested.json"
    nested_router.write_text("[" * 100000 + "]" * 100000)
    files["router_nested"] = nested_router
    return files


ROUTER_BREAKS = {
    "alpha_str": _router(alpha="0.1"),
    "alpha_list": _router(alpha=[0.1]),
    "alpha_null": _router(alpha=None),
    "alpha_big": _router(alpha=1.5),
    "tau_str": _router(thresholds__calibrated__tau=["0.1", None]),
    "tau_neg": _router(thresholds__calibrated__tau=[-0.5, None]),
    "tau_nan": json.dumps(_router(thresholds__calibrated__tau=[float("nan"), None])),
    "tau_short": _router(thresholds__crc__tau=[0.1]),
    "n_short": _router(thresholds__calibrated__n=[10]),
    "vocab_list": _router(vocabulary=["locomo"]),
    "vocab_bad": _router(vocabulary="klingon"),
    "version": _router(format_version=2),
    "version_missing": _router(format_version=None),
    "coef_shape": _router(coefficients=[[0.0] * 11] * 3),
    "coef_str": _router(intercepts=[0.5, "a", 0.3, 0.2]),
    "scale_zero": _router(standardization__scale=[0.0] * 11),
    "mean_inf": json.dumps(_router(standardization__mean=[float("inf")] + [0.0] * 10)),
    "packing": _router(packing=3),
    "budgets_neg": _router(thresholds__calibrated__budgets=[-64.0, 256.0]),
    "not_object": [1, 2, 3],
}

BIG_SEED = str(2**63)

# (command, argv, words the one-line message must contain)
CASES = [
    # theory: retcon crossover
    ("crossover", ["crossover", "--dist", "uniform", "--max", "1e-300"], ["--max"]),
    ("crossover", ["crossover", "--mean", "1e308"], ["--mean", "--budgets"]),
    ("crossover", ["crossover", "--compress-ratio", "1.5"], ["--compress-ratio", "(0, 1)"]),
    ("crossover", ["crossover", "--budgets", "abc"], ["--budgets", "abc"]),
    ("crossover", ["crossover", "--budgets", "0"], ["--budgets", "(0, inf)"]),
    ("crossover", ["crossover", "--acc-guess", "0.95"], ["--acc-raw", "--acc-guess"]),
    ("crossover", ["crossover", "--dist", "bogus"], ["--dist", "bogus"]),
    ("crossover", ["crossover", "--dist", "point"], ["--length"]),
    ("crossover", ["crossover", "--dist", "gamma", "--shape", "-1", "--scale", "3"], ["--shape"]),
    ("crossover", ["crossover", "--out", "{file}"], ["--out", "is a file"]),
    ("crossover", ["crossover", "--out", "{under_file}"], ["--out", "is a file"]),
    # sim: retcon simulate / stress
    ("simulate", ["simulate", "--resamples", "100000000"], ["--resamples", "memory", "limit"]),
    ("simulate", ["simulate", "--resamples", "5"], ["--resamples", ">= 10"]),
    ("simulate", ["simulate", "--queries", "0"], ["--queries"]),
    ("simulate", ["simulate", "--seed", BIG_SEED], ["--seed", "2**32"]),
    ("simulate", ["simulate", "--seed", "-1"], ["--seed", "2**32"]),
    ("simulate", ["simulate", "--seed", "1.5"], ["--seed"]),
    ("simulate", ["simulate", "--out", "{file}"], ["--out", "is a file"]),
    ("simulate", ["simulate", "--out", "{under_file}"], ["--out", "is a file"]),
    ("simulate", ["simulate", "--config", "{nonutf8_toml}"], ["bad.toml:1", "UTF-8"]),
    ("simulate", ["simulate", "--config", "{tmp}/missing.toml"], ["missing.toml"]),
    ("simulate", ["simulate", "--scenario", "bogus"], ["bogus", "locomo-like"]),
    ("simulate", ["simulate", "--config", "{paired}"], ["paired.jsonl", "TOML"]),
    ("simulate", ["simulate", "--queries", "3000000000"], ["--queries", "2**31"]),
    ("stress", ["stress", "--budget-spillover", "x"], ["--budget-spillover"]),
    ("stress", ["stress", "--memory-size", "0"], ["--memory-size", "[1, 64]"]),
    ("stress", ["stress", "--memories", "0"], ["--memories"]),
    ("stress", ["stress", "--budget-spillover", "2"], ["--budget-spillover", "[0, 1]"]),
    ("stress", ["stress", "--rank-spillover", "-1"], ["--rank-spillover", ">= 0"]),
    ("stress", ["stress", "--out", "{file}"], ["--out", "is a file"]),
    ("stress", ["stress", "--seed", BIG_SEED], ["--seed"]),
    # oas: retcon pair simulate / fit / evaluate / predict
    (
        "pair simulate",
        ["pair", "simulate", "--instances", "300000000", "--output", "{tmp}/p.jsonl"],
        ["--instances", "memory"],
    ),
    (
        "pair simulate",
        ["pair", "simulate", "--instances", "0", "--output", "{tmp}/p.jsonl"],
        ["--instances"],
    ),
    (
        "pair simulate",
        ["pair", "simulate", "--instances", "5", "--output", "{dir}"],
        ["--output", "folder"],
    ),
    (
        "pair simulate",
        ["pair", "simulate", "--instances", "5", "--output", "{tmp}/p.txt"],
        ["--output", ".txt"],
    ),
    (
        "pair simulate",
        ["pair", "simulate", "--instances", "5", "--out", "{tmp}/p.jsonl"],
        ["--output FILE"],
    ),
    (
        "pair simulate",
        [
            "pair",
            "simulate",
            "--instances",
            "5",
            "--scenario",
            "bogus",
            "--output",
            "{tmp}/p.jsonl",
        ],
        ["bogus"],
    ),
    (
        "pair simulate",
        ["pair", "simulate", "--instances", "5", "--budgets", "0,-1", "--output", "{tmp}/p.jsonl"],
        ["--budgets"],
    ),
    (
        "pair simulate",
        ["pair", "simulate", "--instances", "5", "--seed", BIG_SEED, "--output", "{tmp}/p.jsonl"],
        ["--seed"],
    ),
    ("fit", ["fit", "--data", "{paired}", "--router-out", "{paired}"], ["--router-out", "--data"]),
    ("fit", ["fit", "--data", "{paired}", "--router-out", "{dir}"], ["--router-out", "folder"]),
    (
        "fit",
        ["fit", "--data", "{paired}", "--router-out", "{under_file}"],
        ["--router-out", "is a file"],
    ),
    ("fit", ["fit", "--data", "{paired}", "--out", "{tmp}/r.json"], ["--router-out FILE"]),
    (
        "fit",
        ["fit", "--data", "{paired}", "--router-out", "{tmp}/r.json", "--alpha", "nan"],
        ["--alpha"],
    ),
    (
        "fit",
        ["fit", "--data", "{paired}", "--router-out", "{tmp}/r.json", "--alpha", "1.5"],
        ["--alpha", "(0, 1)"],
    ),
    (
        "fit",
        ["fit", "--data", "{paired}", "--router-out", "{tmp}/r.json", "--folds", "1"],
        ["--folds", ">= 2"],
    ),
    (
        "fit",
        [
            "fit",
            "--data",
            "{paired}",
            "--router-out",
            "{tmp}/r.json",
            "--calibration-fraction",
            "0",
        ],
        ["--calibration-fraction"],
    ),
    (
        "fit",
        ["fit", "--data", "{paired}", "--router-out", "{tmp}/r.json", "--folds", "5"],
        ["--folds 5", "groups", "--calibration-fraction"],
    ),
    (
        "fit",
        ["fit", "--data", "{nonutf8}", "--router-out", "{tmp}/r.json"],
        ["nonutf8.jsonl:2", "UTF-8"],
    ),
    (
        "fit",
        ["fit", "--data", "{nested}", "--router-out", "{tmp}/r.json"],
        ["nested.jsonl:1", "nested"],
    ),
    (
        "fit",
        ["fit", "--data", "{paired}", "--router-out", "{tmp}/r.json", "--seed", BIG_SEED],
        ["--seed"],
    ),
    ("evaluate", ["evaluate", "--data", "{paired}", "--split", "inf,1,1"], ["--split", "finite"]),
    ("evaluate", ["evaluate", "--data", "{paired}", "--split", "1,1"], ["--split"]),
    ("evaluate", ["evaluate", "--data", "{paired}", "--split", "1,0,1"], ["--split"]),
    (
        "evaluate",
        ["evaluate", "--data", "{paired_many}", "--resamples", "100000000"],
        ["--resamples", "memory"],
    ),
    ("evaluate", ["evaluate", "--data", "{paired}"], ["--folds 5", "groups", "--split"]),
    ("evaluate", ["evaluate", "--data", "{paired}", "--out", "{file}"], ["--out", "is a file"]),
    ("evaluate", ["evaluate", "--data", "{paired}", "--out", "{paired}"], ["--out"]),
    ("evaluate", ["evaluate", "--data", "{nonutf8}"], ["nonutf8.jsonl:2", "UTF-8"]),
    ("evaluate", ["evaluate", "--data", "{paired}", "--alpha", "0"], ["--alpha"]),
    ("evaluate", ["evaluate", "--data", "{paired}", "--resamples", "3"], ["--resamples"]),
    *[
        (
            "evaluate",
            ["evaluate", "--data", "{paired}", "--router", f"{{router_{name}}}"],
            ["--router", words],
        )
        for name, words in (
            ("alpha_str", "'alpha'"),
            ("alpha_list", "'alpha'"),
            ("alpha_null", "'alpha'"),
            ("alpha_big", "'alpha'"),
            ("tau_str", "thresholds.calibrated.tau"),
            ("tau_neg", "thresholds.calibrated.tau"),
            ("tau_nan", "thresholds.calibrated.tau"),
            ("tau_short", "thresholds.crc.tau"),
            ("n_short", "thresholds.calibrated.n"),
            ("vocab_list", "'vocabulary'"),
            ("vocab_bad", "'vocabulary'"),
            ("version", "format_version"),
            ("version_missing", "format_version"),
            ("coef_shape", "'coefficients'"),
            ("coef_str", "'intercepts'"),
            ("scale_zero", "standardization.scale"),
            ("mean_inf", "standardization.mean"),
            ("packing", "'packing'"),
            ("budgets_neg", "thresholds.calibrated.budgets"),
            ("not_object", "JSON object"),
            ("nested", "nested"),
        )
    ],
    (
        "predict",
        ["predict", "--router", "{router}", "--data", "{paired}", "--decisions", "{paired}"],
        ["--decisions", "--data"],
    ),
    (
        "predict",
        ["predict", "--router", "{router}", "--data", "{paired}", "--decisions", "{router}"],
        ["--decisions"],
    ),
    (
        "predict",
        ["predict", "--router", "{router}", "--data", "{paired}", "--decisions", "{dir}"],
        ["--decisions", "folder"],
    ),
    (
        "predict",
        ["predict", "--router", "{router}", "--data", "{paired}", "--decisions", "{tmp}/d.txt"],
        ["--decisions", ".jsonl"],
    ),
    (
        "predict",
        ["predict", "--router", "{router}", "--data", "{paired}", "--out", "{tmp}/d.jsonl"],
        ["--decisions FILE"],
    ),
    (
        "predict",
        [
            "predict",
            "--router",
            "{router_tau_nan}",
            "--data",
            "{paired}",
            "--decisions",
            "{tmp}/d.jsonl",
        ],
        ["--router", "tau"],
    ),
    (
        "predict",
        [
            "predict",
            "--router",
            "{router_tau_neg}",
            "--data",
            "{paired}",
            "--decisions",
            "{tmp}/d.jsonl",
        ],
        ["--router", "tau", ">= 0"],
    ),
    (
        "predict",
        [
            "predict",
            "--router",
            "{tmp}/none.json",
            "--data",
            "{paired}",
            "--decisions",
            "{tmp}/d.jsonl",
        ],
        ["--router", "no such"],
    ),
    # oas.real: retcon pair locomo / longmemeval, retcon data
    (
        "pair locomo",
        ["pair", "locomo", "--data", str(FIX / "locomo_tiny.json"), "--output", "{dir}"],
        ["--output", "folder"],
    ),
    (
        "pair locomo",
        ["pair", "locomo", "--data", str(FIX / "locomo_tiny.json"), "--output", "{under_file}"],
        ["--output", "is a file"],
    ),
    (
        "pair locomo",
        ["pair", "locomo", "--data", str(FIX / "locomo_tiny.json"), "--out", "{tmp}/p.jsonl"],
        ["--output FILE"],
    ),
    (
        "pair locomo",
        [
            "pair",
            "locomo",
            "--data",
            str(FIX / "locomo_malformed.json"),
            "--output",
            "{tmp}/p.jsonl",
        ],
        ["locomo_malformed.json"],
    ),
    (
        "pair locomo",
        ["pair", "locomo", "--data", "{tmp}/x.jsonl", "--output", "{tmp}/x.jsonl"],
        ["--output", "--data"],
    ),
    (
        "pair locomo",
        [
            "pair",
            "locomo",
            "--data",
            str(FIX / "locomo_tiny.json"),
            "--output",
            "{tmp}/p.jsonl",
            "--seed",
            BIG_SEED,
        ],
        ["--seed"],
    ),
    *[
        (
            "pair locomo",
            [
                "pair",
                "locomo",
                "--data",
                str(FIX / "locomo_tiny.json"),
                "--output",
                "{tmp}/p.jsonl",
                *opt,
            ],
            words,
        )
        for opt, words in (
            (["--limit", "0"], ["--limit"]),
            (["--sentence-threshold", "2"], ["--sentence-threshold", "(0, 1]"]),
            (["--budgets", "0"], ["--budgets"]),
            (["--budgets", "32,abc"], ["--budgets", "abc"]),
            (["--tokenizer", "bogus"], ["--tokenizer", "bogus"]),
            (["--embedder", "bogus"], ["--embedder", "bogus"]),
        )
    ],
    (
        "pair longmemeval",
        ["pair", "longmemeval", "--data", str(FIX / "longmemeval_tiny.json"), "--output", "{dir}"],
        ["--output", "folder"],
    ),
    (
        "data fetch",
        ["data", "fetch", "locomo", "--url", "file:///nonexistent/locomo10.json"],
        ["retcon data fetch locomo --url"],
    ),
    # paper_checks
    ("paper-checks", ["paper-checks", "--claims", ","], ["--claims"]),
    ("paper-checks", ["paper-checks", "--claims", ",", "--json"], ["--claims"]),
    ("paper-checks", ["paper-checks", "--claims", "12"], ["--claims", "'12'"]),
    ("paper-checks", ["paper-checks", "--limit", "0"], ["--limit"]),
    ("paper-checks", ["paper-checks", "--out", "{file}"], ["--out", "is a file"]),
    (
        "paper-checks",
        ["paper-checks", "--data", str(FIX / "locomo_malformed.json")],
        ["--data", "locomo_malformed.json"],
    ),
    ("paper-checks", ["paper-checks", "--seed", BIG_SEED], ["--seed"]),
    # retcon bench
    ("bench", ["bench", "--sizes", "1e12"], ["--sizes", "2**31"]),
    ("bench", ["bench", "--sizes", "inf"], ["--sizes", "inf"]),
    ("bench", ["bench", "--sizes", "nan"], ["--sizes"]),
    ("bench", ["bench", "--scenario", "bogus"], ["--scenario", "bogus"]),
    ("bench", ["bench", "--only", "bogus"], ["--only"]),
    ("bench", ["bench", "--sizes", "10"], ["--sizes", ">= 70", "--only"]),
    ("bench", ["bench", "--only", "bootstrap", "--sizes", "5"], ["--sizes", ">= 10"]),
    ("bench", ["bench", "--out", "{file}"], ["--out", "is a file"]),
    ("bench", ["bench", "--seed", BIG_SEED], ["--seed"]),
]


def _fill(argv, files):
    return [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]


def _ids():
    seen = {}
    out = []
    for cmd, _argv, _ in CASES:
        seen[cmd] = seen.get(cmd, 0) + 1
        out.append(f"{cmd.replace(' ', '-')}-{seen[cmd]}")
    return out


def _run(argv, capsys):
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse errors
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize(("command", "argv", "words"), CASES, ids=_ids())
def test_bad_input_meets_the_contract(command, argv, words, env, capsys):
    """Exit 2, one line on stderr with the expected words, no traceback, nothing on stdout."""
    before = sorted(p.name for p in env["tmp"].rglob("*"))
    rc, out, err = _run(_fill(argv, env), capsys)
    assert rc == 2, (rc, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert out == ""
    after = sorted(p.name for p in env["tmp"].rglob("*") if "cache" not in p.parts)
    assert [a for a in after if a not in before] == [], "a failed run left files behind"


# ----------------------------------------------------------------- classes that need a scenario


def test_out_dir_is_swapped_in_as_a_set_and_stale_files_are_cleaned(tmp_path):
    """A failed or killed run never leaves a new file beside an old sidecar, nor its temp files."""
    from retcon.output import OutputSet, check_out_dir, write_json_atomic

    out = tmp_path / "o"
    with OutputSet(out, last=("sidecar.json",)) as s:
        write_json_atomic(s / "a.json", {"seed": 1})
        write_json_atomic(s / "sidecar.json", {"seed": 1})
    with pytest.raises(RuntimeError), OutputSet(out, last=("sidecar.json",)) as s:
        write_json_atomic(s / "a.json", {"seed": 2})
        raise RuntimeError("killed")
    assert json.loads((out / "a.json").read_text()) == {"seed": 1}
    from retcon.output import file_sha256

    side = json.loads((out / "sidecar.json").read_text())
    assert side["files_sha256"] == {"a.json": file_sha256(out / "a.json")}
    assert sorted(p.name for p in out.iterdir()) == ["a.json", "sidecar.json"]
    dead = _dead_pid()
    (out / f".retcon-staging-{dead}").mkdir()
    (out / f".retcon-staging-{dead}" / "a.json").write_text("{}")
    (out / f".a.json.retcon-{dead}.xyz.tmp").write_text("half")
    (out / f".b.json.{dead}.xyz.tmp").write_text("not ours")
    (out / "user.tmp").write_text("mine")
    check_out_dir("--out", out)
    assert sorted(p.name for p in out.iterdir()) == [
        f".b.json.{dead}.xyz.tmp",
        "a.json",
        "sidecar.json",
        "user.tmp",
    ]


def _dead_pid() -> int:
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid -= 1


def test_json_policy_null_for_non_finite():
    """NaN and infinities are null in every JSON the package writes or prints."""
    from retcon.output import dumps, to_jsonable

    obj = {"a": float("inf"), "b": [float("nan"), 1.0], "c": np.array([np.inf, 2.0])}
    assert to_jsonable(obj) == {"a": None, "b": [None, 1.0], "c": [None, 2.0]}
    assert "Infinity" not in dumps(obj) and "NaN" not in dumps(obj)


def test_crossover_json_has_null_and_status(capsys):
    """An infinite kappa or crossover is null in --json, with the reason in status."""
    assert (
        main(["crossover", "--dist", "uniform", "--max", "100", "--fidelity", "0.05", "--json"])
        == 0
    )
    obj = json.loads(capsys.readouterr().out)
    assert obj["status"] == "none" and obj["crossover_budget"] is None


def test_figures_are_byte_reproducible(tmp_path):
    """PDF and PNG carry no timestamp: the same figure gives the same bytes."""
    from retcon.plots import new_figure, save

    fig, (ax,) = new_figure()
    ax.plot([1, 2, 3])
    for suffix in ("pdf", "png"):
        a = save(fig, tmp_path / f"a.{suffix}").read_bytes()
        b = save(fig, tmp_path / f"b.{suffix}").read_bytes()
        assert a == b
    assert b"CreationDate" not in (tmp_path / "a.pdf").read_bytes()


def test_help_goes_to_stdout(capsys):
    for argv in (["pair"], ["data"], []):
        _, out, err = _run(argv, capsys)
        assert "usage" in out and err == "", argv


def test_broken_pipe_prints_no_traceback():
    """`retcon crossover | head -1`: the closed pipe is not an error of the run."""
    proc = subprocess.run(
        f"{sys.executable} -m retcon crossover --budgets "
        + ",".join(str(b) for b in range(1, 4000))
        + " | head -1",
        shell=True,
        check=False,
        capture_output=True,
        text=True,
    )
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def _pair_args(out, *extra):
    return [
        "pair",
        "locomo",
        "--data",
        str(FIX / "locomo_tiny.json"),
        "--output",
        str(out),
        "--no-progress",
        *extra,
    ]


def test_resume_protocol_lives_in_the_file(tmp_path, capsys):
    """Deleting <out>.meta.json cannot make a rerun with other --budgets mix two protocols."""
    out = tmp_path / "p.jsonl"
    assert main(_pair_args(out, "--budgets", "32,64")) == 0
    Path(f"{out}.meta.json").unlink()
    capsys.readouterr()
    assert main(_pair_args(out, "--budgets", "32")) == 2
    err = capsys.readouterr().err
    assert "--output" in err and "other options" in err and len(err.strip().splitlines()) == 1
    assert main(_pair_args(out, "--budgets", "32,64")) == 0  # the same protocol resumes


def test_second_concurrent_run_is_refused(tmp_path, capsys):
    """Two runs on the same --output: the second exits 2 saying another run holds it."""
    out = tmp_path / "p.jsonl"
    with open(f"{out}.lock", "w") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        f.write("12345\n")
        f.flush()
        assert main(_pair_args(out)) == 2
    err = capsys.readouterr().err
    assert "another retcon pair run" in err and "12345" in err
    assert not out.exists() and not Path(f"{out}.partial").exists()


def test_unwritable_out_is_refused_before_the_work(tmp_path, capsys):
    """An --out under a folder the user cannot write: exit 2 naming the option."""
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        rc, out, err = _run(["crossover", "--out", str(locked / "o")], capsys)
    finally:
        locked.chmod(0o700)
    assert rc == 2 and "--out" in err and "permission denied" in err and out == ""


def test_verbosity_options_set_the_package_loggers(capsys):
    """-q and -v, on the command or before it, set the level of every package logger."""
    import logging

    for argv, level in (
        (["crossover", "-q", "--budgets", "100"], logging.WARNING),
        (["-v", "crossover", "--budgets", "100"], logging.DEBUG),
        (["crossover", "--budgets", "100"], logging.INFO),
    ):
        assert main(argv) == 0
        for name in ("sim", "oas", "paper_checks", "retcon"):
            assert logging.getLogger(name).level == level, (argv, name)
    capsys.readouterr()


def test_pair_simulate_defaults_to_the_simulate_scenario(tmp_path, capsys):
    """`retcon pair simulate` without --scenario uses sim.DEFAULT_PRESET, as `retcon simulate`."""
    import sim

    out = tmp_path / "p.jsonl"
    assert main(["pair", "simulate", "--instances", "40", "--output", str(out), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["scenario"] == sim.DEFAULT_PRESET and obj["output"] == str(out) and out.is_file()
