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
from tests._cli import error_lines
from tests._cli import run_cli as _run

FIX = Path(__file__).resolve().parents[1] / "fixtures"

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
    # fitted on groups other than the fixture's (so predict neither refuses nor warns)
    "fitted_groups": {"digest": "sha256-16", "train": ["0" * 16], "calibration": ["1" * 16]},
}


_THEORY = {
    "theory_version": 1,
    "theta": [0.0] * 17,
    "compress_ratio": [[0.5] * 4] * 3,
    "n_params": 17,
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
    from oas import FEATURE_NAMES

    huge = {c: float(c == "query_type_0") for c in FEATURE_NAMES} | {"token_pressure": 1e308}
    big = tmp_path / "huge_feature.jsonl"
    row = {
        k: v
        for k, v in _paired_row(0, 3).items()
        if k not in ("cluster_lengths", "session_ids", "embeddings")
    }
    big.write_text(json.dumps(row | huge) + "\n")
    files["huge_feature"] = big
    toml = tmp_path / "bad.toml"
    toml.write_bytes(b'name = "x\xff"\n')
    files["nonutf8_toml"] = toml
    import sim

    preset = (Path(sim.__file__).parent / "presets" / "locomo-like.toml").read_text()
    files["recall_toml"] = tmp_path / "recall.toml"
    files["recall_toml"].write_text(preset.replace("[retriever]\n", "[retriever]\nrecall = 0.8\n"))
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
    # issue 23 item 2: an edited file that the field checks alone let through
    "budgets_reversed": _router(thresholds__calibrated__budgets=[256.0, 64.0]),
    "crc_budgets_reversed": _router(thresholds__crc__budgets=[256.0, 64.0]),
    "theory_ratio": _router(theory=_THEORY | {"compress_ratio": [[5.0] * 4] * 3}),
    "theory_ratio_zero": _router(theory=_THEORY | {"compress_ratio": [[0.0] * 4] * 3}),
    "theory_theta_big": _router(theory=_THEORY | {"theta": [1e6] + [0.0] * 16}),
    "theory_theta_str": _router(theory=_THEORY | {"theta": ["1"] + [0.0] * 16}),
    "theory_theta_short": _router(theory=_THEORY | {"theta": [0.0] * 3}),
    "theory_n_params": _router(theory=_THEORY | {"n_params": 99}),
}

BIG_SEED = str(2**63)

# (command, argv, words the one-line message must contain)
# The argv every fit / predict case starts from, before the option under test.
FIT = ["fit", "--data", "{paired}", "--router-out", "{tmp}/r.json"]
PREDICT = ["predict", "--router", "{router}", "--data", "{paired}"]
PAIR_SIMULATE = ["pair", "simulate", "--instances"]
PAIR_LOCOMO = [
    "pair",
    "locomo",
    "--data",
    str(FIX / "locomo_tiny.json"),
    "--output",
    "{tmp}/p.jsonl",
]

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
    # issue 23 item 1: no process starts beyond the cores (refused before any process starts)
    ("simulate", ["simulate", "--processes", "100000"], ["--processes 100000", "core"]),
    ("simulate", ["simulate", "--processes", "0"], ["--processes", ">= 1"]),
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
        [*PAIR_SIMULATE, "300000000", "--output", "{tmp}/p.jsonl"],
        ["--instances", "memory"],
    ),
    ("pair simulate", [*PAIR_SIMULATE, "0", "--output", "{tmp}/p.jsonl"], ["--instances"]),
    ("pair simulate", [*PAIR_SIMULATE, "5", "--output", "{dir}"], ["--output", "folder"]),
    ("pair simulate", [*PAIR_SIMULATE, "5", "--output", "{tmp}/p.txt"], ["--output", ".txt"]),
    ("pair simulate", [*PAIR_SIMULATE, "5", "--out", "{tmp}/p.jsonl"], ["--output FILE"]),
    (
        "pair simulate",
        [*PAIR_SIMULATE, "5", "--scenario", "bogus", "--output", "{tmp}/p.jsonl"],
        ["bogus"],
    ),
    (
        "pair simulate",
        [*PAIR_SIMULATE, "5", "--budgets", "0,-1", "--output", "{tmp}/p.jsonl"],
        ["--budgets"],
    ),
    (
        "pair simulate",
        [*PAIR_SIMULATE, "5", "--seed", BIG_SEED, "--output", "{tmp}/p.jsonl"],
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
    ("fit", [*FIT, "--alpha", "nan"], ["--alpha"]),
    ("fit", [*FIT, "--alpha", "1.5"], ["--alpha", "[0, 1)"]),
    ("fit", [*FIT, "--folds", "1"], ["--folds", ">= 2"]),
    ("fit", [*FIT, "--calibration-fraction", "0"], ["--calibration-fraction"]),
    ("fit", [*FIT, "--folds", "5"], ["--folds 5", "groups", "--calibration-fraction"]),
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
    ("fit", [*FIT, "--seed", BIG_SEED], ["--seed"]),
    # issue 23 item 10: a value the fit cannot standardize names file, row and field
    (
        "fit",
        ["fit", "--data", "{huge_feature}", "--router-out", "{tmp}/r.json"],
        ["huge_feature.jsonl:1", "'token_pressure'", "1e+308"],
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
    ("evaluate", ["evaluate", "--data", "{paired}", "--alpha", "-0.1"], ["--alpha"]),
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
            ("budgets_reversed", "'thresholds.calibrated.budgets' must be increasing"),
            ("crc_budgets_reversed", "'thresholds.crc.budgets' must be increasing"),
            ("theory_ratio", "'theory.compress_ratio' must hold ratios in (0, 1]"),
            ("theory_ratio_zero", "'theory.compress_ratio'"),
            ("theory_theta_big", "'theory.theta' must hold numbers in"),
            ("theory_theta_str", "'theory.theta' must be a list of numbers"),
            ("theory_theta_short", "'theory.theta'"),
            ("theory_n_params", "'theory.n_params'"),
            ("not_object", "JSON object"),
            ("nested", "nested"),
        )
    ],
    ("predict", [*PREDICT, "--decisions", "{paired}"], ["--decisions", "--data"]),
    ("predict", [*PREDICT, "--decisions", "{router}"], ["--decisions"]),
    ("predict", [*PREDICT, "--decisions", "{dir}"], ["--decisions", "folder"]),
    ("predict", [*PREDICT, "--decisions", "{tmp}/d.txt"], ["--decisions", ".jsonl"]),
    ("predict", [*PREDICT, "--out", "{tmp}/d.jsonl"], ["--decisions FILE"]),
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
    *[
        (
            "predict",
            [
                "predict",
                "--router",
                f"{{router_{name}}}",
                "--data",
                "{paired}",
                "--decisions",
                "{tmp}/d.jsonl",
            ],
            ["--router", f"router_{name}.json", field],
        )
        for name, field in (
            ("budgets_reversed", "thresholds.calibrated.budgets"),
            ("theory_ratio", "theory.compress_ratio"),
        )
    ],
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
            *PAIR_LOCOMO,
            "--seed",
            BIG_SEED,
        ],
        ["--seed"],
    ),
    *[
        (
            "pair locomo",
            [
                *PAIR_LOCOMO,
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
            # issue 23 item 5: a file where the cache folder goes, refused before the work
            (["--llm-cache", "{file}"], ["--llm-cache", "is a file", "cached LLM responses"]),
            # issue 23 items 6 and 10: sizes and the per-request timeout
            (["--concurrency", "100000000"], ["--concurrency", "[1, 4096]"]),
            (["--llm-timeout", "0"], ["--llm-timeout", "(0, 86400]"]),
            (["--llm-timeout", "nan"], ["--llm-timeout"]),
            # issue 23 item 6: options the protocol or reader would ignore are refused
            (["--top-k", "5"], ["--top-k", "--protocol end-to-end"]),
            (["--retriever", "bm25"], ["--retriever", "--protocol end-to-end"]),
            (["--type-source", "gold"], ["--type-source", "--protocol end-to-end"]),
            (["--llm-judge", "llm"], ["--llm-judge", "--reader llm"]),
            (["--protocol", "end-to-end", "--top-k", "1000000000"], ["--top-k", "[1, 100000]"]),
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
    ("paper-checks", ["paper-checks", "--magnitude"], ["--magnitude", "--out DIR"]),
    ("paper-checks", ["paper-checks", "--tables-only"], ["--tables-only", "--design paper"]),
    (
        "paper-checks",
        ["paper-checks", "--tables-only", "--design", "paper", "--claims", "1"],
        ["--tables-only", "--claims 1"],
    ),
    # retcon identify (issue 23 item 7: a size that cannot fit is refused with its estimate)
    (
        "identify",
        ["identify", "--data", "{paired}", "--resamples", "1000000000"],
        ["--resamples 1000000000", "memory", "limit"],
    ),
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
    ("bench", ["bench", "--quick", "--full"], ["--full", "--quick"]),
    ("bench", ["bench", "--scenario", "{recall_toml}"], ["--scenario", "retriever.recall"]),
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


@pytest.mark.parametrize(("command", "argv", "words"), CASES, ids=_ids())
def test_bad_input_meets_the_contract(command, argv, words, env, capsys):
    """Exit 2, one line on stderr with the expected words, no traceback, nothing on stdout."""
    before = sorted(p.name for p in env["tmp"].rglob("*"))
    rc, out, err = _run(_fill(argv, env), capsys)
    assert rc == 2, (rc, err)
    assert "Traceback" not in err
    lines = error_lines(err)
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
    assert "--output" in err and "other options" in err and len(error_lines(err)) == 1
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


@pytest.mark.slow  # moved from the fast tier to keep it under 3 minutes on 2 cores
def test_pair_simulate_defaults_to_the_simulate_scenario(tmp_path, capsys):
    """`retcon pair simulate` without --scenario uses sim.DEFAULT_PRESET, as `retcon simulate`."""
    import sim

    out = tmp_path / "p.jsonl"
    assert main(["pair", "simulate", "--instances", "40", "--output", str(out), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["scenario"] == sim.DEFAULT_PRESET and obj["output"] == str(out) and out.is_file()


# ------------------------------------------------------- issue 23: symlinks, write-time OS errors


@pytest.mark.parametrize("planted", ["lock", "partial"])
def test_planted_symlink_at_lock_or_partial_is_refused(tmp_path, capsys, planted):
    """`<output>.lock` or `<output>.partial` planted as a symbolic link (to a file, or dangling):
    refused with one line; the link's target is neither written nor created (item 3)."""
    out = tmp_path / "out.jsonl"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    dangling = tmp_path / "elsewhere.jsonl"
    for target in (victim, dangling):
        link = Path(f"{out}.{planted}")
        link.symlink_to(target)
        rc, stdout, err = _run(_pair_args(out), capsys)
        assert rc == 2 and stdout == "" and "Traceback" not in err, err
        assert len(error_lines(err)) == 1 and "symbolic link" in err, err
        assert victim.read_text() == "precious\n" and not dangling.exists()
        assert not out.exists() and link.is_symlink()
        link.unlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.txt"]


def test_open_nofollow_refuses_a_link_planted_after_the_check(tmp_path):
    """The in-place opens use O_NOFOLLOW, so a link planted between check and open is refused."""
    from retcon.errors import InputError
    from retcon.output import open_nofollow

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "x.lock").symlink_to(victim)
    with pytest.raises(InputError, match="symbolic link"):
        open_nofollow("--output", tmp_path / "x.lock", os.O_RDWR)
    assert victim.read_text() == "precious\n"


def _enospc(*_a, **_k):
    import errno

    raise OSError(errno.ENOSPC, "No space left on device")


def _eperm(src, dst, *_a, **_k):
    import errno

    raise PermissionError(errno.EPERM, "Operation not permitted", src, dst)


@pytest.mark.parametrize("fault", ["ENOSPC", "EPERM"])
@pytest.mark.parametrize("command", ["crossover --out", "predict", "pair locomo"])
def test_os_error_at_write_time_is_one_line(tmp_path, env, capsys, monkeypatch, fault, command):
    """Disk full at the final flush, or a rename the OS refuses after os.access allowed it: exit 2,
    one line naming the path and the OS error, no traceback, no file under a final name (item 5).
    The faults are injected (os.fsync / os.replace raise), so no root and no real full disk."""
    target = {
        "crossover --out": (["crossover", "--budgets", "100,200", "--out", "{tmp}/o"], "{tmp}/o"),
        "predict": ([*PREDICT, "--decisions", "{tmp}/d.jsonl"], "{tmp}/d.jsonl"),
        "pair locomo": (_pair_args("{tmp}/p.jsonl"), "{tmp}/p.jsonl"),
    }[command]
    argv, final = _fill(target[0], env), _fill([target[1]], env)[0]
    before = {p.name for p in tmp_path.rglob("*")}
    monkeypatch.setattr(
        os, "fsync" if fault == "ENOSPC" else "replace", _enospc if fault == "ENOSPC" else _eperm
    )
    rc, out, err = _run(argv, capsys)
    monkeypatch.undo()
    assert rc == 2 and out == "" and "Traceback" not in err, err
    lines = error_lines(err)
    line = lines[-1] if lines else ""
    assert len(lines) == 1 and f"[{fault}]" in line, err
    assert Path(final).name in line, line
    option = {"crossover --out": "--out", "predict": "--decisions", "pair locomo": "--output"}
    assert f"error: {option[command]} {final!r}: " in line, line  # the option, then its path
    assert ".retcon-staging-" not in line, line  # an --out file is named where it was going
    assert not Path(final).exists() or (Path(final).is_dir() and not any(Path(final).iterdir()))
    left = {p.name for p in tmp_path.rglob("*")} - before
    assert not [n for n in left if n.endswith(".tmp") or "retcon-staging" in n], left


# ------------------------------------------------ issue 23 item 8: a retrieval miss in paired data


def _miss_instances():
    """Three queries of two evidence records: found whole, one record missed, both missed."""
    from sim import Instances

    found = np.array([[1, 1], [1, 0], [0, 0]], bool)
    lengths = np.where(found, 30.0, 0.0)
    ctx_len = np.zeros((3, 4, 3))
    ctx_len[:, 0, :2] = lengths  # ret: the found raw units, then one distractor
    ctx_len[:, 1:, 0] = np.where(found.any(1), 12.0, 0.0)[:, None]  # one generated record
    ctx_len[:, :, 2] = 20.0
    ctx_ev = np.zeros((3, 4, 3), bool)
    ctx_ev[:, 0, :2] = found
    ctx_ev[:, 1:, 0] = found.any(1)[:, None]
    p = np.array([[0.8, 0.7, 0.6, 0.7], [0.1] * 4, [0.1] * 4])  # a miss scores g = 0.1
    return Instances(
        budget=np.full(3, 64.0),
        query_type=np.array([0, 1, 2]),
        group=np.array([0, 1, 2]),
        query_id=np.arange(3),
        record_lengths=lengths,
        record_mask=found,
        session_ids=np.where(found, 0, -1),
        embeddings=np.where(found[..., None], 1.0, 0.0) * np.ones((3, 2, 4)),
        success_prob=p,
        context_lengths=ctx_len,
        context_evidence=ctx_ev,
        evidence_mask=np.ones((3, 2), bool),
    )


def test_retrieval_miss_rows_round_trip_with_support_zero(tmp_path):
    """A row whose retriever missed evidence (recall < 1) is written with no evidence flag under
    any action and len(C) = 0 when nothing was found; it reads back, grounds nothing and has
    support 0 under every action, as MODEL §2's reader scored it (docs/paired-data.md)."""
    import jax

    from oas import paired_structure, read_paired, support_fractions, write_paired
    from oas._simulate import paired_from_instances

    data = paired_from_instances(jax.random.key(0), _miss_instances())
    path = write_paired(tmp_path / "p.jsonl", data)
    back = read_paired(path)
    cells = back.meta["evidence_structure"]
    assert cells[0]["evidence"]["ret"] == [1, 1, 0]
    for i in (1, 2):
        assert not any(f for a in cells[i]["evidence"] for f in cells[i]["evidence"][a])
    assert back.cluster_tokens.tolist() == [60.0, 30.0, 0.0]
    assert back.raw_grounded.tolist() == [1.0, 1.0, 0.0]
    s = support_fractions(paired_structure(back), back.budget)
    assert np.all(s[1:] == 0.0) and np.all(s[0] > 0.0)


def test_retrieval_miss_cannot_flag_an_operator():
    from oas._structure import check_structure
    from retcon.errors import InputError

    cell = {
        "packing": "prefix",
        "lengths": {a: [3.0] for a in ("ret", "merge", "abstract", "rewrite")},
        "evidence": {"ret": [0], "merge": [1], "abstract": [0], "rewrite": [0]},
    }
    with pytest.raises(InputError, match=r"p.jsonl:3: .*retrieval miss.*'merge'"):
        check_structure(cell, "p.jsonl", 3)


@pytest.mark.slow
def test_pair_simulate_with_recall_below_one_feeds_fit(tmp_path, capsys):
    """`retcon pair simulate` on a recall = 0.8 scenario writes paired data that `retcon fit`
    reads (issue 23 item 8's repro, at a smaller size)."""
    import sim

    toml = Path(sim.__file__).parent / "presets" / "locomo-like.toml"
    text = toml.read_text().replace("[retriever]\n", "[retriever]\nrecall = 0.8\n", 1)
    assert "recall = 0.8" in text
    (tmp_path / "s.toml").write_text(text)
    p = tmp_path / "p.jsonl"
    argv = ["pair", "simulate", "--scenario", str(tmp_path / "s.toml"), "--instances", "600"]
    assert main([*argv, "--output", str(p)]) == 0
    rows = [json.loads(line) for line in p.read_text().splitlines()]
    misses = [r for r in rows if not any(r["evidence_structure"]["evidence"]["ret"])]
    assert misses and all(r["meta_p_ret"] == r["meta_p_merge"] for r in misses)
    r_out = tmp_path / "r.json"
    assert main(["fit", "--data", str(p), "--router-out", str(r_out), "--folds", "2"]) == 0
    assert json.loads(r_out.read_text())["format"] == "retcon-oas-router"
    capsys.readouterr()


# ------------------------------------------------------------ issue 23 item 9: keys and endpoints


def test_environment_keys_go_only_to_their_hosts(monkeypatch, tmp_path, caplog):
    """$OPENAI_API_KEY goes to api.openai.com and $OPENAI_BASE_URL's host only; $RETCON_LLM_API_KEY
    to $RETCON_LLM_BASE_URL's hosts only; a key given as an argument goes where it is told."""
    from oas.real.llm._config import resolve_endpoint

    for var in ("RETCON_LLM_BASE_URL", "OPENAI_BASE_URL", "RETCON_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    cfg = resolve_endpoint("http://evil.example:8080/v1", "m", None, tmp_path)
    assert cfg.api_key == ""
    assert "OPENAI_API_KEY is set but not sent to http://evil.example:8080" in caplog.text
    assert "sk-secret" not in caplog.text
    assert resolve_endpoint("https://api.openai.com/v1", "m", None, tmp_path).api_key == "sk-secret"
    assert resolve_endpoint("http://api.openai.com/v1", "m", None, tmp_path).api_key == ""  # http
    monkeypatch.setenv("RETCON_LLM_API_KEY", "rk")
    monkeypatch.setenv("RETCON_LLM_BASE_URL", "http://mine:1/v1,http://mine:2/v1")
    assert resolve_endpoint(None, "m", None, tmp_path).api_key == "rk"
    assert resolve_endpoint("http://mine:2/v1", "m", None, tmp_path).api_key == "rk"
    assert resolve_endpoint("http://other:1/v1", "m", None, tmp_path).api_key == ""
    assert resolve_endpoint("http://other:1/v1", "m", "typed", tmp_path).api_key == "typed"


def test_embeddings_keys_and_scheme_are_checked_when_made(monkeypatch, tmp_path):
    from oas.real import make_embedder
    from retcon.errors import InputError

    monkeypatch.setenv("RETCON_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("RETCON_EMBED_BASE_URL", "file:///etc/passwd")
    with pytest.raises(InputError, match=r"--embedder openai:e.*http:// or https://"):
        make_embedder("openai:e")
    monkeypatch.setenv("RETCON_EMBED_BASE_URL", "http://evil.example/v1")
    assert make_embedder("openai:e").api_key == ""
    monkeypatch.setenv("RETCON_EMBED_API_KEY", "ek")
    monkeypatch.setenv("RETCON_EMBED_BASE_URL", "http://emb.example/v1")
    assert make_embedder("openai:e").api_key == "ek"


def test_credentials_in_a_base_url_are_redacted_in_error_lines(tmp_path):
    """A base URL with user:password or ?key= is never echoed whole (failure, refusal, sidecar)."""
    from oas.real.llm._config import EndpointConfig, redact_url
    from oas.real.llm._http import EndpointPool, LLMEndpointError
    from retcon.errors import InputError

    assert redact_url("http://u:pw@h:1/v1?api_key=zz&x=1") == "http://***@h:1/v1?api_key=***&x=***"
    url = "http://user:hunter2@127.0.0.1:9/v1"  # port 9 (discard): nothing answers
    cfg = EndpointConfig(url, "m", cache_dir=tmp_path, max_retries=0, timeout=2)
    pool = EndpointPool(cfg, sleep=lambda s: None)
    with pytest.raises(LLMEndpointError) as e:
        pool.send(b"{}")
    assert "hunter2" not in str(e.value) and "***@127.0.0.1:9" in str(e.value)
    assert "hunter2" not in json.dumps(pool.endpoints)
    with pytest.raises(InputError) as e2:
        EndpointConfig("ftp://user:hunter2@h/v1", "m", cache_dir=tmp_path)
    assert "hunter2" not in str(e2.value)


def test_library_messages_are_reworded_for_the_user():
    """An error spelled for Python callers (a class or function name first) reaches the CLI with
    the file it is about instead (issue 23 item 10); other errors pass unchanged."""
    from retcon.errors import InputError, worded_for

    words = {"Router.": "the router fitted on it: "}
    with pytest.raises(InputError) as e, worded_for("--data p.jsonl", words):
        raise InputError("Router.mean must be finite.")
    assert str(e.value) == "--data p.jsonl: the router fitted on it: mean must be finite."
    with pytest.raises(InputError, match="^p.jsonl:3: field"), worded_for("--data p.jsonl", words):
        raise InputError("p.jsonl:3: field 'x' is bad.")


@pytest.mark.slow
def test_disk_full_after_pair_simulate_is_one_line(tmp_path, capsys, monkeypatch):
    """ENOSPC when `retcon pair simulate` writes its file, after the whole simulation (item 5)."""
    out = tmp_path / "p.jsonl"
    monkeypatch.setattr(os, "fsync", _enospc)
    rc, stdout, err = _run(["pair", "simulate", "--instances", "40", "--output", str(out)], capsys)
    monkeypatch.undo()
    assert rc == 2 and stdout == "" and "Traceback" not in err
    assert len(error_lines(err)) == 1 and "p.jsonl" in err and "[ENOSPC]" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []
