"""``retcon pair longmemeval --design paper`` on a generated LongMemEval-shaped fixture (oracle
format, the four types, 48 questions; ``tests/fixtures/make_longmemeval_paper.py``)."""

import collections
import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

from tests._cli import run_cli

FIX = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def paired_fixture(tmp_path_factory):
    """``(summary, path)``: the fixture paired once per module by ``retcon pair longmemeval
    --design paper`` (its ``--json`` summary and the paired file the other tests read)."""
    from retcon.cli import main

    out = tmp_path_factory.mktemp("lme") / "lme.jsonl"
    argv = ["-q", "pair", "longmemeval", "--design", "paper", "--operators", "extractive"]
    argv += ["--data", str(FIX / "longmemeval_paper.json"), "--output", str(out), "--json"]
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        rc = main([*argv, "--no-progress"])
    assert rc == 0, stderr.getvalue()
    return json.loads(stdout.getvalue()), out


def test_fixture_is_what_its_script_writes():
    sys.path.insert(0, str(FIX))
    try:
        from make_longmemeval_paper import make  # pyright: ignore[reportMissingImports]
    finally:
        sys.path.remove(str(FIX))
    data = make()
    assert (FIX / "longmemeval_paper.json").read_text() == json.dumps(data, indent=1) + "\n"
    kinds = collections.Counter(d["question_id"].split("-")[1] for d in data)
    assert kinds == {"ss": 12, "ms": 12, "tr": 12, "ku": 12}


def test_pair_longmemeval_design_paper_runs_the_papers_grid_and_split(paired_fixture):
    summary, out = paired_fixture
    assert summary["budgets"] == [32.0, 64.0, 128.0, 256.0] and summary["n_queries"] == 48
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["meta_design"] for r in rows} == {"paper"}
    assert collections.Counter(r["query_type"] for r in rows) == dict.fromkeys(
        ("single-session", "multi-session", "temporal-reasoning", "knowledge-update"), 48
    )
    split = {r["query_id"]: r["meta_split"] for r in rows}
    assert len({(r["query_id"], r["meta_split"]) for r in rows}) == 48  # one split per question
    # 350 / 75 / 75 scaled to 48 questions: 75 * 48 // 500 = 7 each for dev and test
    assert collections.Counter(split.values()) == {"train": 34, "dev": 7, "test": 7}
    # the evidence costs span the grid: some clusters fit at 32, some not even at 64
    cost = {r["query_id"]: r["cluster_tokens"] for r in rows}
    assert min(cost.values()) <= 32 and max(cost.values()) > 64


@pytest.mark.slow
def test_tables_of_the_papers_design_on_the_longmemeval_file(paired_fixture):
    """The tables block on the fixture's paired rows through the API (fewer bootstrap
    replicates); slow tier: the fast test below runs the same tables through the CLI."""
    import jax

    from oas import read_paired
    from paper_checks._design import paper_tables
    from paper_checks._published import TABLE_3

    lme = paired_fixture[1]
    t = paper_tables(jax.random.key(0), read_paired(lme), n_resamples=200)
    assert t["dataset"] == "longmemeval" and "table_4" not in t
    assert [(c["operator"], c["budget"]) for c in t["table_3"]["cells"]] == list(TABLE_3)
    assert {r["budget"] for r in t["table_8"]["rows"]} == {32, 64, 128, 256}
    assert all(r["paper"] is not None for r in t["table_8"]["rows"])  # the paper's own grid


def test_paper_checks_design_paper_grades_the_longmemeval_file(paired_fixture, capsys):
    """MODEL §11 (Tables 3, 7, 8, 2): the fixture through ``pair longmemeval --design paper`` and
    ``paper-checks --design paper --tables-only``; fast tier (no claim's rule is simulated, the
    cross-fitted ridge runs in numpy, the question bootstrap draws with numpy)."""
    from paper_checks._published import TABLE_3, TABLE_7, TABLE_11

    lme = paired_fixture[1]
    argv = ["-q", "paper-checks", "--design", "paper", "--paired", str(lme), "--tables-only"]
    rc, stdout, err = run_cli(argv + ["--no-figures", "--json"], capsys)
    assert rc == 0, err
    report = json.loads(stdout)
    assert report["claims"] == []
    t = report["tables"]
    assert t["dataset"] == "longmemeval" and t["n_questions"] == 48
    cells = t["table_3"]["cells"]
    assert [(c["operator"], c["budget"]) for c in cells] == list(TABLE_3)
    assert all(c["paper"] == TABLE_3[(c["operator"], c["budget"])].value for c in cells)
    assert all(c["n"] == 48 for c in cells) and len(t["table_8"]["rows"]) == 24
    assert "4" in {x["table"] for x in t["not_made"]}
    assert not {"1", "2", "7", "9", "10", "11"} & {x["table"] for x in t["not_made"]}
    # Table 11 (MODEL §8 MLP control, §11) on the paper's own grid: every budget has its value
    t11 = t["table_11"]["cells"]
    assert [c["budget"] for c in t11] == [32, 64, 128, 256]
    assert all(c["paper"] == TABLE_11[("mlp - ridge", c["budget"])].value for c in t11)
    assert all(c["n"] == 48 for c in t11)
    assert all(c["paper"] is not None for c in t["table_2"]["cells"])  # the paper's own grid
    assert [(c["type"], c["operator"]) for c in t["table_7"]["cells"]] == list(TABLE_7)
    assert sum(c["n"] for c in t["table_7"]["cells"] if c["operator"] == "merge") == 2 * 48
