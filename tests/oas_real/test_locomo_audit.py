"""The audited LoCoMo (oas.real._audit, ``retcon pair locomo --locomo-audit``): three known ids of
the audit file, one of each kind, the pinned download, and bad input (docs/real-data.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oas.real import DATASETS, fetch, load_locomo
from oas.real._audit import apply_audit, parse_audit_modes
from retcon.cli import main
from retcon.errors import InputError
from tests._data import LOCOMO_PATH, needs_locomo

AUDIT = (
    Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo-audit" / "errors.json"
)
needs_audit = pytest.mark.skipif(
    not AUDIT.is_file(), reason=f"the LoCoMo audit not found ({AUDIT})"
)
pytestmark = [needs_locomo, needs_audit]

# One of each kind, in conversation 0 (conv-26): an answer error, a wrong citation; and an answer
# error whose corrected answer the audit gives (all 99 have one).
ANSWER_ERROR = "locomo_0_qa2"
CITATION = "locomo_0_qa1"
CORRECTED = "locomo_0_qa5"


@pytest.fixture(scope="module")
def entries():
    return {e["question_id"]: e for e in json.loads(AUDIT.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def loaded():
    return load_locomo(LOCOMO_PATH)


def _queries(loaded):
    return {q.query_id: q for c in loaded.conversations for q in c.queries}


def test_three_known_ids_one_of_each_kind(entries, loaded):
    assert entries[CITATION]["error_type"] == "WRONG_CITATION"
    assert entries[ANSWER_ERROR]["error_type"] != "WRONG_CITATION"
    assert entries[CORRECTED]["error_type"] != "WRONG_CITATION"
    base = _queries(loaded)
    cited = base["conv-26/q1"]
    assert list(cited.evidence_ids) == entries[CITATION]["cited_evidence"]
    assert entries[CITATION]["correct_evidence"] != entries[CITATION]["cited_evidence"]

    dc = apply_audit(loaded, AUDIT, ("drop", "cite"))
    got = _queries(dc.loaded)
    assert "conv-26/q2" not in got and "conv-26/q5" not in got
    assert list(got["conv-26/q1"].evidence_ids) == entries[CITATION]["correct_evidence"]
    assert got["conv-26/q1"].answer == cited.answer
    assert got["conv-26/q0"] == base["conv-26/q0"]  # not in the audit: untouched
    n_answer = sum(e["error_type"] != "WRONG_CITATION" for e in entries.values())
    assert (n_answer, len(entries) - n_answer) == (99, 57)
    assert len(got) == len(base) - 99
    assert dc.report.changes["conv-26/q2"] == "dropped"
    assert dc.report.changes["conv-26/q1"] == "evidence"
    assert (dc.report.n_dropped, dc.report.n_evidence_replaced) == (99, 57)

    co = _queries(apply_audit(loaded, AUDIT, ("correct",)).loaded)
    assert co["conv-26/q5"].answer == entries[CORRECTED]["correct_answer"]
    assert co["conv-26/q5"].answer != base["conv-26/q5"].answer
    assert co["conv-26/q1"].evidence_ids == cited.evidence_ids  # no cite: citations kept
    assert len(co) == len(base)


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_pair_cli_drops_and_cites_with_provenance(tmp_path, capsys, entries):
    out = tmp_path / "audited.jsonl"
    plain = tmp_path / "plain.jsonl"
    args = ["pair", "locomo", "--first", "3", "--budgets", "32,256", "--granularity", "turn"]
    args += ["--no-progress", "--json"]
    assert main([*args, "--output", str(plain)]) == 0
    audit = ["--locomo-audit", str(AUDIT), "--audit-mode", "cite,drop"]
    assert main([*args, "--output", str(out), *audit]) == 0
    capsys.readouterr()
    rows, before = _rows(out), _rows(plain)
    assert {r["query_id"] for r in before} == {"conv-26/q0", "conv-26/q1", "conv-26/q2"}
    # q2 is an answer error: dropped; the third question kept is the next one not dropped
    kept = [
        i
        for i in range(10)
        if entries.get(f"locomo_0_qa{i}", {}).get("error_type") in (None, "WRONG_CITATION")
    ][:3]
    assert kept[:2] == [0, 1] and 2 not in kept
    assert {r["query_id"] for r in rows} == {f"conv-26/q{i}" for i in kept}
    assert {r["meta_audit"] for r in rows} == {"drop,cite"}
    change = {r["query_id"]: r["meta_audit_change"] for r in rows}
    assert change["conv-26/q1"] == "evidence" and change["conv-26/q0"] == ""
    # turn clusters: the corrected citation packs another turn, so its cluster differs
    c_new = {r["cluster_tokens"] for r in rows if r["query_id"] == "conv-26/q1"}
    c_old = {r["cluster_tokens"] for r in before if r["query_id"] == "conv-26/q1"}
    assert c_new != c_old
    meta = json.loads(Path(f"{out}.meta.json").read_text(encoding="utf-8"))
    assert meta["locomo_audit"]["modes"] == ["drop", "cite"]
    assert meta["locomo_audit"]["sha256"] == DATASETS["locomo-audit"]["sha256"]
    assert meta["config"]["locomo_audit"]["modes"] == "drop,cite"
    assert {r["meta_protocol"] for r in rows}.isdisjoint({r["meta_protocol"] for r in before})


def test_pinned_download_checks_the_sha256(tmp_path, monkeypatch):
    monkeypatch.setenv("RETCON_DATA_DIR", str(tmp_path / "cache"))
    got = fetch("locomo-audit", url=AUDIT.as_uri())
    assert got.downloaded and got.path.read_bytes() == AUDIT.read_bytes()
    assert not fetch("locomo-audit", url=AUDIT.as_uri()).downloaded
    bad = tmp_path / "bad.json"
    bad.write_text("[]\n", encoding="utf-8")
    monkeypatch.setenv("RETCON_DATA_DIR", str(tmp_path / "other"))
    with pytest.raises(InputError, match="does not match the pinned"):
        fetch("locomo-audit", url=bad.as_uri())
    assert not (tmp_path / "other" / got.path.name).exists()


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "one or more of"),
        ("drop,fix", "unknown mode 'fix'"),
        ("drop,correct", "exclude each other"),
    ],
)
def test_bad_modes(text, message):
    with pytest.raises(InputError, match=message):
        parse_audit_modes(text)


def _one_line_error(capsys, argv, *needles):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, err


def test_cli_bad_input_one_line(tmp_path, capsys, entries):
    base = ["pair", "locomo", "--output", str(tmp_path / "o.jsonl"), "--no-progress"]
    missing = str(tmp_path / "nope.json")
    _one_line_error(capsys, [*base, "--locomo-audit", missing], "--locomo-audit", "no such file")
    _one_line_error(
        capsys,
        [*base, "--locomo-audit", str(AUDIT), "--audit-mode", "drop,oops"],
        "--audit-mode",
        "'oops'",
    )
    _one_line_error(capsys, [*base, "--audit-mode", "drop"], "--audit-mode needs --locomo-audit")
    stray = dict(entries[CITATION], question_id="locomo_0_qa9999")
    bad = tmp_path / "stray.json"
    bad.write_text(json.dumps([stray]), encoding="utf-8")
    _one_line_error(
        capsys,
        [*base, "--locomo-audit", str(bad)],
        "locomo_0_qa9999",
        "names no loaded LoCoMo question",
    )
    far = dict(entries[CITATION], question_id="locomo_42_qa1")
    bad.write_text(json.dumps([far]), encoding="utf-8")
    _one_line_error(capsys, [*base, "--locomo-audit", str(bad)], "conversation 42 is not in LoCoMo")
    other = dict(entries[CITATION], question="Something else entirely?")
    bad.write_text(json.dumps([other]), encoding="utf-8")
    _one_line_error(capsys, [*base, "--locomo-audit", str(bad)], "audit is of another file")
    assert not (tmp_path / "o.jsonl").exists()
