"""``retcon paper-checks --paired FILE``: any valid paired file is graded by the same claim checks
as LoCoMo (docs/paper-checks.md, "Your own model").

A file made in a world where a claim holds grades it PASS; one where it is false (every operator's
outcome a copy of ``y_ret``) never grades claim 1 PASS; a file without ``len(C)`` makes claim 5
INCONCLUSIVE naming the column; malformed files get the paired reader's one-line errors (exit 2).
The worlds are the single-cluster reader models of ``test_paper_checks_claims`` (MODEL §6).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import oas
import paper_checks as pc
from paper_checks._paired import fill_cluster_tokens, load_paired_source
from paper_checks.rules._oc import rule_operating_characteristics
from paper_checks.rules._requirements import Needs, gate, unmet
from retcon.cli import main
from retcon.vocab import ACTIONS
from tests.paper_checks.test_paper_checks_claims import HOLDS, world_paired

SMALL = dict(n_q=60, n_groups=12, **HOLDS)


def _world(seed):
    """``world_paired`` with features 8-11 the one-hot of the query type, as the format requires."""
    data = world_paired(seed, **SMALL)
    feats = data.features.copy()
    feats[:, 7:11] = np.eye(4)[data.query_type_slot]
    return data._replace(features=feats)


def _cli(capsys, *args) -> dict:
    assert main(["paper-checks", *args, "--json", "--no-figures"]) == 0
    return json.loads(capsys.readouterr().out)


def _check(files, names, claims, out=None) -> dict:
    """The claims on the files through the same path as the CLI (``run_checks``, ``write_run``),
    at the resample count of ``test_paper_checks_claims`` (shared compilation in one run)."""
    cfg = pc.CheckConfig(
        paired=tuple(str(files[n]) for n in names),
        readers=tuple(f"r{i}" for i in range(len(names))),
        scenarios=(),
        n_resamples=200,
    )
    results, ws = pc.run_checks(cfg, claims=claims)
    if out is None:
        return {"verdicts": {r.claim_id: r.verdict for r in results}}
    return pc.write_run(out, results, ws, figures=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Paired files of one world: ``holds`` (consolidation reverses), ``null`` (every operator
    equals ret on every row), ``no_length`` (no cluster_tokens) and ``second`` (another reader)."""
    d = tmp_path_factory.mktemp("paired")
    holds = _world(1)
    y = holds.outcomes.copy()
    y[:, 1:] = y[:, :1]
    out = {
        "holds": holds,
        "null": holds._replace(outcomes=y),
        "no_length": holds._replace(cluster_tokens=None),
        "second": _world(2),
    }
    paths = {}
    for name, data in out.items():
        paths[name] = d / f"{name}.jsonl"
        oas.write_paired(paths[name], data)
    return paths


def test_a_file_where_the_claims_hold_grades_them_pass(files, tmp_path):
    """MODEL §6.1-6.3: strong compression reverses the sign; claim 4 reads the second file. The
    report names the file, its sha256, its group count and each rule's operating
    characteristics at that group count."""
    obj = _check(files, ["holds", "second"], ["1", "4"], tmp_path)
    assert obj["verdicts"]["1"] == "PASS", obj["claims"][0]["details"]["reason"]
    # the second world's gain at the tightest budget (16 tokens) is 0-5 points: the primary
    # contrast sees its reversal on the points only (PARTIAL, which does not stand), never FAIL
    assert obj["verdicts"]["4"] in ("PASS", "INCONCLUSIVE"), obj["claims"][1]["details"]["reason"]
    assert "paired:r0" in obj["claims"][0]["details"]["grades"]
    # the crossover's two intervals (issue 30 item 6): the continuous one holds the grid one
    cov = obj["claims"][0]["details"]["crossover_covers"]
    (g, c) = (cov["grid_truth"], cov["continuous"])
    assert c["lower"] <= g["lower"] <= g["upper"] <= c["upper"], cov
    data = {d["name"]: d for d in obj["data"]}
    assert set(data) == {"r0", "r1"}
    sha = hashlib.sha256(files["holds"].read_bytes()).hexdigest()
    assert data["r0"]["sha256"] == sha and data["r0"]["n_groups"] == SMALL["n_groups"]
    assert data["r0"]["provenance"]["kind"] == "unknown"  # no sidecar, no meta_p_* columns
    oc = obj["operating_characteristics"]["1"]
    assert oc["n_groups"] == SMALL["n_groups"] and set(oc) >= {"false_pass_rate", "power"}
    md = (tmp_path / "REPORT.md").read_text()
    assert sha in md and f"G = {SMALL['n_groups']} groups" in md
    assert "Rule's operating characteristics: " in md


def test_operator_outcomes_copied_from_ret_never_pass_claim_1(files):
    """The claim is false when every operator equals retention on every row: dU = 0 at every
    budget, so no reversal (and no tight-budget gain) can be graded PASS."""
    v = _check(files, ["null"], ["1", "2"])["verdicts"]
    assert v["1"] != "PASS" and v["2"] != "PASS"


def test_a_file_without_cluster_tokens_makes_the_length_claims_inconclusive(files, capsys):
    """Claims 5-7 need len(C) per row (cluster_tokens or evidence_structure): without it they are
    INCONCLUSIVE and name the column, before anything is measured; claim 1 does not need it."""
    obj = _cli(capsys, "--paired", str(files["no_length"]), "--claims", "5,6,7")
    assert obj["verdicts"] == {"5": "INCONCLUSIVE", "6": "INCONCLUSIVE", "7": "INCONCLUSIVE"}
    n = 9 * SMALL["n_q"]  # 9 budgets per question
    for c in obj["claims"]:
        assert "needs column 'cluster_tokens' in every row" in c["details"]["reason"]
        assert f"lacks it in {n} of {n} rows" in c["details"]["reason"]
    (src,) = obj["data"]
    assert src["name"] == "no_length" and src["length_source"]["missing"] == n
    assert src["sha256"] == hashlib.sha256(files["no_length"].read_bytes()).hexdigest()
    assert _check(files, ["no_length"], ["1"])["verdicts"] == {"1": "PASS"}


def test_len_c_is_read_from_evidence_structure_when_cluster_tokens_is_absent(files, tmp_path):
    """len(C) = the summed lengths of ret's evidence records (MODEL §6.5), row by row."""
    data = oas.read_paired(files["no_length"])
    assert np.isnan(data.cluster_tokens).all()
    lengths = world_paired(1, **SMALL).cluster_tokens
    structure = np.array(
        [
            {
                "packing": "prefix",
                "lengths": {
                    a: [L / 2, 7.0, L / 2] for a in ("ret", "merge", "abstract", "rewrite")
                },
                "evidence": {a: [1, 0, 1] for a in ("ret", "merge", "abstract", "rewrite")},
            }
            for L in lengths
        ],
        dtype=object,
    )
    filled, counts = fill_cluster_tokens(data._replace(meta={"evidence_structure": structure}))
    np.testing.assert_allclose(filled.cluster_tokens, lengths)
    assert counts == {"cluster_tokens": 0, "evidence_structure": data.n, "missing": 0}
    assert unmet(filled, Needs(columns=("cluster_tokens",)), "u") == []
    few = Needs(min_groups=20, min_budgets=20)
    assert [g.split(";")[0] for g in unmet(filled, few, "u")] == [
        "needs at least 20 distinct budgets (column 'budget')",
    ]
    # too few groups is a data gate: NOT TESTABLE with the count (paper_checks.rules._gates)
    g = gate(filled, few, "u")
    assert not g.testable and "this claim's rule needs at least 20" in g.reason


def test_simulated_files_say_so(files, tmp_path):
    """Provenance: the meta_p_<action> columns of `retcon pair simulate` mark simulated data."""
    data = oas.read_paired(files["holds"]).take(np.arange(48))
    meta = {f"meta_p_{a}": np.full(data.n, 0.5, dtype=object) for a in ACTIONS}
    path = tmp_path / "sim.jsonl"
    oas.write_paired(path, data._replace(meta=meta))
    src = load_paired_source(path, "s")
    assert src.provenance["kind"] == "simulated" and "SIMULATED" in src.provenance["statement"]
    assert src.n_groups == SMALL["n_groups"] and src.n_rows == 48


@pytest.mark.parametrize(
    ("row", "expect"),
    [
        ({"y_ret": 1.5}, "field 'y_ret' must be in [0, 1]"),
        ({"y_merg": 1.0}, "unknown column 'y_merg'"),
    ],
)
def test_malformed_files_give_the_paired_readers_one_line_error(
    files, tmp_path, capsys, row, expect
):
    lines = files["holds"].read_text().splitlines()
    bad = {**json.loads(lines[2]), **row}
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([*lines[:2], json.dumps(bad), *lines[3:]]) + "\n")
    assert main(["paper-checks", "--paired", str(path), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"bad.jsonl:3: {expect}" in err


def test_bad_paired_options_exit_2_with_one_line(files, tmp_path, capsys):
    for args, expect in (
        (["--paired", str(tmp_path / "none.jsonl")], "--paired: no such file"),
        (["--paired", str(files["holds"]), "--data", str(files["holds"])], "--data applies"),
        (["--paired", str(files["holds"]), "--reader-name", "a", "--reader-name", "b"], "2 names"),
        (["--paired", str(files["holds"]), "--paired", str(files["holds"])], "must differ"),
        (["--reader-name", "a"], "--reader-name names --paired files"),
    ):
        assert main(["paper-checks", *args, "--json"]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and expect in err, err


@pytest.mark.slow
def test_simulated_paired_data_through_the_cli(tmp_path, capsys):
    """`retcon pair simulate` then `retcon paper-checks --paired`: graded verdicts, the file
    reported as simulated; the same file with every operator's outcome a copy of y_ret never
    grades claim 1 PASS."""
    sim = tmp_path / "p.jsonl"
    args = ["pair", "simulate", "--scenario", "locomo-like", "--instances", "1600"]
    args += ["--budgets", "8,16,32,64,128,256,512,1024", "--output", str(sim), "--json"]
    assert main(args) == 0
    capsys.readouterr()
    obj = _cli(capsys, "--paired", str(sim), "--claims", "1,2,3,5,6")
    assert set(obj["verdicts"].values()) <= set(pc.VERDICTS) - {"SKIPPED"}
    (src,) = obj["data"]
    assert src["provenance"]["kind"] == "simulated" and src["n_groups"] == 25
    data = oas.read_paired(sim)
    y = data.outcomes.copy()
    y[:, 1:] = y[:, :1]
    null = tmp_path / "null.jsonl"
    oas.write_paired(null, data._replace(outcomes=y))
    assert _cli(capsys, "--paired", str(null), "--claims", "1")["verdicts"]["1"] != "PASS"


def test_operating_characteristics_hook_says_they_were_not_measured():
    """A result that carries no rates gets none from the hook, with G stated and the reason."""
    for g in (10, 26, None):
        oc = rule_operating_characteristics(g)
        assert oc["false_pass_rate"] is None and oc["power"] is None and oc["n_groups"] == g
        assert oc["method"].startswith("not measured")


def _judge_sidecar(path, flagged: bool) -> None:
    """A `retcon pair --llm-judge llm` sidecar for ``path``: its judge check, flagged or not."""
    probe = {"n_decoys": 11, "n_accepted": 11 if flagged else 0, "rate": 1.0 if flagged else 0.0}
    probe.update(threshold=0.1, flagged=flagged)
    line = "judge check: made-up line " + ("FLAGGED" if flagged else "ok")
    meta = {
        "command": "retcon pair locomo",
        "config": {"dataset": "locomo", "reader": "llm", "operators": "llm"},
        "judge_check": {"probe": probe, "line": line},
    }
    path.with_name(path.name + ".meta.json").write_text(json.dumps(meta))


def _judged_report(files, tmp_path, capsys, flagged: bool, claim: str = "2"):
    """``paper-checks --paired judged.jsonl --claims CLAIM --out DIR`` on the ``holds`` file with a
    judge-check sidecar: (stdout, stderr, REPORT.md, the file's report.json data block, said)."""
    path = tmp_path / "judged.jsonl"
    path.write_bytes(files["holds"].read_bytes())
    _judge_sidecar(path, flagged)
    out = tmp_path / "report"
    args = ["paper-checks", "--paired", str(path), "--claims", claim, "--no-figures"]
    assert main([*args, "--out", str(out)]) == 0
    text, err = capsys.readouterr()
    md = (out / "REPORT.md").read_text()
    (src,) = json.loads((out / "report.json").read_text())["data"]
    said = f"judge FLAGGED for --paired {path} (reader judged): judge check: made-up line FLAGGED"
    return text, err, md, src, said


@pytest.mark.parametrize("flagged", [True, False])
def test_a_flagged_judge_is_said_in_the_verdicts_and_on_stderr(
    files, tmp_path, capsys, monkeypatch, flagged
):
    """docs/llm.md "Checking the judge": a paired file whose sidecar carries a flagged judge check
    (false acceptance above --judge-threshold) is named on stderr, in every verdict line graded
    on it, in REPORT.md's plain-words verdicts, its data column and its provenance; a judge
    within its threshold is not mentioned. The claim itself is a canned result on the file's
    label (the slow test below measures one), so only the reporting is under test."""

    def canned(config, *, seed, claims, workspace, progress):
        label = workspace.real_label(config.readers[0])
        r = pc.ClaimResult("2", "made up", 0.5, (0.4, 0.6), "-", label, "PASS", {})
        return [r], workspace

    monkeypatch.setattr(pc, "run_checks", canned)
    text, err, md, src, said = _judged_report(files, tmp_path, capsys, flagged)
    verdict = next(line for line in text.splitlines() if line.startswith("claim 2:"))
    if flagged:
        assert f"retcon paper-checks: warning: {said}" in err
        assert verdict.endswith("[judge FLAGGED]") and said in text
        assert f"- **{said}" in md and "; paired; judge FLAGGED |" in md
        assert src["provenance"]["judge_flagged"] == "judge check: made-up line FLAGGED"
    else:
        assert "FLAGGED" not in err + text + md and "judge_flagged" not in src["provenance"]
        assert "judge check: made-up line ok" not in src["provenance"]["statement"]


@pytest.mark.slow
def test_a_measured_claim_on_a_flagged_judges_file_says_so(files, tmp_path, capsys):
    """The same through a measured claim (claim 2 on the ``holds`` world)."""
    text, err, md, _, said = _judged_report(files, tmp_path, capsys, True)
    assert said in err and said in text and f"- **{said}" in md
    assert next(x for x in text.splitlines() if x.startswith("claim 2:")).endswith("FLAGGED]")


@pytest.mark.parametrize(("value", "words"), [(0.0, "no question correctly"), (1.0, "every")])
def test_never_right_and_always_right_files_are_not_testable(files, tmp_path, value, words):
    """The stand-in reader that answers "unknown" to everything (and one right on every row):
    every claim needs outcome variance, so every claim reads NOT TESTABLE with the reason in one
    line, never FAIL and never PASS (issue 46 item 1; MODEL §3: every contrast is 0)."""
    data = oas.read_paired(files["holds"])
    flat = data._replace(outcomes=np.full_like(data.outcomes, value))
    path = tmp_path / "flat.jsonl"
    oas.write_paired(path, flat)
    second = tmp_path / "flat2.jsonl"
    oas.write_paired(second, flat)
    obj = _check({"a": path, "b": second}, ["a", "b"], list("123456789"), tmp_path / "out")
    assert set(obj["verdicts"].values()) == {"NOT TESTABLE"}, obj["verdicts"]
    for c in obj["claims"]:
        assert words in c["details"]["reason"] and "\n" not in c["details"]["reason"]
    md = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    assert md.count("**not testable**: these rows cannot test it") == 9


def test_a_flat_second_reader_is_named_not_graded(files, tmp_path):
    """Claim 4 with one second reader that can test it and one right on no row: the flat one is
    named as not testable and left out of the grade, never counted as a reader that does not
    reverse (issue 46 item 1)."""
    data = oas.read_paired(files["second"])
    flat = tmp_path / "flat.jsonl"
    oas.write_paired(flat, data._replace(outcomes=np.zeros_like(data.outcomes)))
    cfg = pc.CheckConfig(
        paired=(str(files["holds"]), str(files["second"]), str(flat)),
        readers=("r0", "r1", "r2"),
        scenarios=(),
        n_resamples=200,
        oc_datasets=40,
    )
    (r,), _ = pc.run_checks(cfg, claims=["4"])
    assert "paired:r2" not in r.details["grades"] and "paired:r1" in r.details["grades"]
    assert "not testable" in r.details["not_graded"]["paired:r2"]
    assert "answered no question correctly" in r.details["not_graded"]["paired:r2"]
