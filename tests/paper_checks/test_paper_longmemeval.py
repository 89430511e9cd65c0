"""``retcon pair longmemeval --design paper`` on a generated LongMemEval-shaped fixture (oracle
format, the four types, 48 questions; ``tests/fixtures/make_longmemeval_paper.py``)."""

import collections
import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests._cli import run_cli

FIX = Path(__file__).resolve().parents[1] / "fixtures"
#: How the report names the paper's LongMemEval router protocol (MODEL §11).
SPLIT_PROTOCOL = "split 350/75/75: fit train, calibrate dev, test"


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
    from paper_checks._published import TABLE_3
    from paper_checks.tables._design import paper_tables

    lme = paired_fixture[1]
    t = paper_tables(jax.random.key(0), read_paired(lme), n_resamples=200)
    assert t["dataset"] == "longmemeval" and "table_4" not in t
    assert [(c["operator"], c["budget"]) for c in t["table_3"]["cells"]] == list(TABLE_3)
    assert {r["budget"] for r in t["table_8"]["rows"]} == {32, 64, 128, 256}
    assert all(r["paper"] is not None for r in t["table_8"]["rows"])  # the paper's own grid


def test_paper_checks_design_paper_grades_the_longmemeval_file(paired_fixture, capsys, tmp_path):
    """MODEL §11 (Tables 3, 7, 8, 2): the fixture through ``pair longmemeval --design paper`` and
    ``paper-checks --design paper --tables-only``; fast tier (no claim's rule is simulated, the
    ridge runs in numpy, the question bootstrap draws with numpy). The router tables (8, 2, 11)
    follow MODEL §11's LongMemEval split: scored on the 7 test questions, and the report says so;
    the gain tables (3, 7) use all 48."""
    from paper_checks._published import TABLE_3, TABLE_7, TABLE_11

    lme = paired_fixture[1]
    argv = ["-q", "paper-checks", "--design", "paper", "--paired", str(lme), "--tables-only"]
    argv += ["--out", str(tmp_path / "out")]
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
    # MODEL §11: router tables by the split protocol, on the test questions only
    assert t["router_protocol"] == SPLIT_PROTOCOL and SPLIT_PROTOCOL in t["table_8"]["note"]
    assert "cross-fitting" not in t["table_8"]["note"]
    assert all(r["n"] == 7 for r in t["table_8"]["rows"])
    assert all(c["n"] == 7 for c in t["table_2"]["cells"])
    assert "split-protocol choices" in t["table_2"]["note"]
    md = (tmp_path / "out" / "TABLES.md").read_text()
    assert f"Router tables (8, 2, 11 and 12 where made): {SPLIT_PROTOCOL} (MODEL §11)" in md
    assert "4" in {x["table"] for x in t["not_made"]}
    assert not {"1", "2", "7", "9", "10", "11"} & {x["table"] for x in t["not_made"]}
    # Table 11 (MODEL §8 MLP control, §11) on the paper's own grid: every budget has its value
    t11 = t["table_11"]["cells"]
    assert [c["budget"] for c in t11] == [32, 64, 128, 256]
    assert all(c["paper"] == TABLE_11[("mlp - ridge", c["budget"])].value for c in t11)
    assert all(c["n"] == 7 for c in t11)  # the test questions (MODEL §11 split)
    assert all(c["paper"] is not None for c in t["table_2"]["cells"])  # the paper's own grid
    assert [(c["type"], c["operator"]) for c in t["table_7"]["cells"]] == list(TABLE_7)
    assert sum(c["n"] for c in t["table_7"]["cells"] if c["operator"] == "merge") == 2 * 48


def _split_of(paired) -> np.ndarray:
    return np.asarray(paired.meta["meta_split"]).astype(str)


def test_split_protocol_fits_on_train_calibrates_on_dev_scores_on_test(paired_fixture, monkeypatch):
    """MODEL §11 (LongMemEval split before modelling into train / dev / test): the ridge router is
    fitted on the train questions only, ``tau_B`` calibrated on the dev questions only (MODEL §8,
    the zero-harm rule), every policy chooses on the test questions only. Changing the test rows'
    outcomes changes no choice and no threshold; changing the dev rows' outcomes changes tau_B
    and the calibrated choices, and nothing else."""
    import jax

    import paper_checks._policies as policies
    import paper_checks.tables._crossfit as crossfit
    from oas import read_paired

    paired = read_paired(paired_fixture[1])
    part, qid = _split_of(paired), np.asarray(paired.query_id).astype(str)
    fitted, taus = [], []
    fit, cal = policies.fit_ridge_on, crossfit.calibrate_accuracy

    def fit_spy(key, data, **kw):
        fitted.append(set(np.asarray(data.query_id).astype(str).tolist()))
        return fit(key, data, **kw)

    def cal_spy(mu, outcomes, budget, alpha):
        taus.append((len(outcomes), th := cal(mu, outcomes, budget, alpha)))
        return th

    monkeypatch.setattr(policies, "fit_ridge_on", fit_spy)
    monkeypatch.setattr(crossfit, "calibrate_accuracy", cal_spy)
    key = jax.random.key(0)
    ev = crossfit.split_protocol(key, paired)
    assert fitted == [set(qid[part == "train"].tolist())]
    assert [n for n, _ in taus] == [int((part == "dev").sum())]  # calibrated on dev rows only
    np.testing.assert_array_equal(ev.index, np.flatnonzero(part == "test"))
    np.testing.assert_array_equal(ev.outcomes, paired.outcomes[part == "test"])

    y = np.array(paired.outcomes)
    y[part == "test"] = 1.0 - y[part == "test"]  # every test outcome flipped
    ev_test = crossfit.split_protocol(key, paired._replace(outcomes=y))
    assert ev_test.chosen.keys() == ev.chosen.keys()
    for name, c in ev.chosen.items():
        np.testing.assert_array_equal(ev_test.chosen[name], c, err_msg=name)
    np.testing.assert_array_equal(taus[1][1].tau, taus[0][1].tau)

    y = np.array(paired.outcomes)
    y[part == "dev"] = [0.0, 1.0, 1.0, 1.0]  # on dev every operator helps: no harm to avoid
    ev_dev = crossfit.split_protocol(key, paired._replace(outcomes=y))
    assert fitted[2] == fitted[0]
    assert not np.array_equal(taus[2][1].tau, taus[0][1].tau)
    changed = {n for n, c in ev.chosen.items() if not np.array_equal(ev_dev.chosen[n], c)}
    assert changed == {"oas-calibrated@0"}


def test_split_protocol_refuses_a_split_it_cannot_use(paired_fixture):
    """MODEL §11: each of train, dev and test needs a question; an unknown part or a question in
    two parts is refused, naming the row, the question or the part and its count."""
    import jax

    from oas import read_paired
    from paper_checks.tables._crossfit import split_protocol
    from retcon.errors import InputError

    paired = read_paired(paired_fixture[1])
    key = jax.random.key(0)

    def with_split(values):
        return paired._replace(meta={**paired.meta, "meta_split": np.asarray(values, object)})

    part = _split_of(paired)
    with pytest.raises(InputError, match=r"part 'dev' has 0 questions \(train 41, dev 0, test 7\)"):
        split_protocol(key, with_split(np.where(part == "dev", "train", part)))
    odd = part.astype(object)
    odd[3] = "val"
    with pytest.raises(InputError, match=r"row 3 .* has meta_split 'val'; expected one of train"):
        split_protocol(key, with_split(odd))
    q0 = np.asarray(paired.query_id) == paired.query_id[0]
    mixed = part.astype(object)
    mixed[np.flatnonzero(q0)[0]] = "test" if part[q0][0] != "test" else "dev"
    with pytest.raises(InputError, match="has rows in meta_split"):
        split_protocol(key, with_split(mixed))


def test_rows_without_a_split_keep_cross_fitting(paired_fixture):
    """MODEL §11: without ``meta_split`` (LoCoMo's rows) the router tables stay grouped
    five-fold cross-fitted, on every question, and the tables say so."""
    import jax

    from oas import read_paired
    from paper_checks.tables._design import paper_tables, tables_markdown

    paired = read_paired(paired_fixture[1])
    meta = {k: v for k, v in paired.meta.items() if k != "meta_split"}
    t = paper_tables(jax.random.key(0), paired._replace(meta=meta), n_resamples=50)
    assert "router_protocol" not in t
    assert "grouped five-fold cross-fitting" in t["table_8"]["note"]
    assert all(r["n"] == 48 for r in t["table_8"]["rows"])
    assert "cross-fitted choices" in t["table_2"]["note"]
    assert "Router tables" not in tables_markdown(t)
