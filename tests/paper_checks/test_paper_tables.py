"""``--design paper``'s tables block (MODEL §11): Table 4 and Table 8 beside the paper's values,
grouped five-fold cross-fitting, and ``retcon paper-checks --design paper`` on real LoCoMo."""

import json

import jax
import numpy as np
import pytest

from oas import paired_from_rows
from oas._features import FEATURE_NAMES
from paper_checks._published import TABLE_2, TABLE_4, TABLE_8, TABLE_11, TABLE_11_RIDGE
from paper_checks.tables._crossfit import POLICIES, crossfit_evaluate, deal_folds
from paper_checks.tables._design import paper_tables, tables_markdown
from retcon.errors import InputError
from tests._cli import run_cli
from tests._data import LOCOMO_PATH, needs_locomo


def _rows(seed=0, n_conv=10, per_conv=5, budgets=(16, 32, 64, 128)):
    """Paired rows where consolidation helps when the evidence does not fit and harms when it does."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_conv):
        for q in range(per_conv):
            cost = int(rng.integers(8, 200))
            for b in budgets:
                fit = float(cost <= b)
                y_ret = float(rng.random() < (0.8 if fit else 0.1))
                y_op = float(rng.random() < (0.5 if fit else 0.45))
                feats: dict[str, float] = dict.fromkeys(FEATURE_NAMES, 0.0)
                feats |= {
                    "budget_over_512": b / 512,
                    "token_pressure": cost / b,
                    "budget_fit_fraction": fit,
                    "constituent_count": 1.0 + q % 3,
                    "session_count": 1.0,
                    "embedding_inconsistency": float(rng.random()) * 0.3,
                    "mean_pairwise_cosine": 1.0,
                    "query_type_1": 1.0,
                }
                rows.append(
                    {
                        "instance_id": f"c{c}q{q}@{b}",
                        "query_id": f"c{c}q{q}",
                        "group_id": f"conv-{c}",
                        "query_type": "multi-hop",
                        "budget": b,
                        "y_ret": y_ret,
                        "y_merge": y_op,
                        "y_abstract": float(rng.random() < 0.3),
                        "y_rewrite": float(rng.random() < 0.3),
                        **feats,
                    }
                )
    return paired_from_rows(rows, source="test rows")


def test_deal_folds_keeps_a_question_in_one_fold_and_balances():
    units = np.repeat([f"q{i}" for i in range(23)], 4)
    fold = deal_folds(jax.random.key(0), units)
    for u in np.unique(units):
        assert len(set(fold[units == u])) == 1
    counts = np.bincount(fold[::4], minlength=5)
    assert counts.max() - counts.min() <= 1 and counts.sum() == 23
    with pytest.raises(InputError, match="at least 5 units"):
        deal_folds(jax.random.key(0), ["a", "b", "a"])


@pytest.mark.slow  # the tables test below runs cross-fitting in the fast tier
def test_crossfit_scores_every_row_once_with_each_policy():
    p = _rows()
    ev = crossfit_evaluate(jax.random.key(1), p)
    assert set(ev.chosen) == set(POLICIES) and len(ev.groups) == 5
    assert np.all(ev.chosen["always-ret"] == 0)
    fits = np.asarray(p.features)[:, FEATURE_NAMES.index("budget_fit_fraction")]
    op = ev.chosen["fixed-operator"]
    assert set(np.unique(op)) <= {1, 2, 3}
    # the evidence-fit rule retains exactly where all the evidence fits
    assert np.all((ev.chosen["evidence-fit"] == 0) == (fits >= 1.0))
    for f in range(5):  # each test fold's question ids are disjoint from the others'
        qs = set(np.asarray(p.query_id)[ev.fold == f].tolist())
        assert qs.isdisjoint(np.asarray(p.query_id)[ev.fold != f].tolist())


def test_tables_block_holds_the_papers_values_and_our_intervals():
    p = _rows()
    t = paper_tables(jax.random.key(2), p, n_resamples=300)
    cells = t["table_4"]["cells"]
    assert [(c["operator"], c["budget"]) for c in cells] == list(TABLE_4)
    for c in cells:
        assert c["paper"] == TABLE_4[(c["operator"], c["budget"])].value  # read, never computed
        for iv, flag in (
            (c["question_interval"], c["paper_in_question_interval"]),
            (c["conversation_interval"], c["paper_in_conversation_interval"]),
        ):
            assert iv[0] <= c["ours"] <= iv[1]
            assert flag == (iv[0] <= c["paper"] <= iv[1])
        assert c["difference"] == pytest.approx(c["ours"] - c["paper"], abs=1e-5)
    q = t["table_4"]["paper_in_question_interval"]
    assert q == {"in": sum(c["paper_in_question_interval"] for c in cells), "of": 12}
    rows = t["table_8"]["rows"]
    assert len(rows) == 6 * 4
    assert {r["row"] for r in rows} >= {"evidence-fit rule", "k-NN utility router"}
    y = np.asarray(p.outcomes)
    b = np.asarray(p.budget)
    for r in rows:
        pub = TABLE_8.get((r["row"], r["budget"]))
        assert (r["paper"] is None) == (pub is None) == (r["budget"] == 16)
        if r["row"] == "retention":  # retention's accuracy, computed here
            assert r["accuracy"] == pytest.approx(y[b == r["budget"], 0].mean(), abs=1e-6)
            assert r["harms"] == 0
        assert r["question_interval"][0] <= r["accuracy"] <= r["question_interval"][1]
    assert {x["table"] for x in t["not_made"]} == {"3", "5", "6", "7", "12"}
    # Table 2 from Table 8's cross-fitted choices: OAS's gain is its accuracy less retention's,
    # its harms Table 8's; the paper's values read from _published
    acc = {(r["policy"], r["budget"]): r for r in rows}
    t2 = t["table_2"]["cells"]
    assert [(c["row"], c["budget"]) for c in t2] == [
        (row, b) for row in ("direct", "calibrated") for b in (16, 32, 64, 128)
    ]
    for c in t2:
        r8 = acc[(c["policy"], c["budget"])]
        ret = acc[("always-ret", c["budget"])]["accuracy"]
        assert c["ours"] == pytest.approx(r8["accuracy"] - ret, abs=2e-6)
        assert c["harms"] == r8["harms"] and c["n"] == r8["n"]
        pub = TABLE_2.get((c["row"], c["budget"]))
        assert c["paper"] == (None if pub is None else pub.value)
        assert c["paper_harms"] == (None if pub is None else pub.harmed)
    # Table 11 (MODEL §8 MLP control, §11): the MLP's accuracy less direct OAS's, from Table 8's
    # cross-fitted choices; the paper's LongMemEval values read from _published at shared budgets
    t11 = t["table_11"]["cells"]
    assert [(c["row"], c["budget"]) for c in t11] == [("mlp - ridge", b) for b in (16, 32, 64, 128)]
    ev = crossfit_evaluate(jax.random.fold_in(jax.random.fold_in(jax.random.key(2), 8), 0), p)
    for c in t11:
        rows = ev.budget == c["budget"]
        mlp_acc = ev.outcome("mlp")[rows].mean()
        assert c["ridge_accuracy"] == pytest.approx(acc[("oas", c["budget"])]["accuracy"], abs=1e-6)
        assert c["ours"] == pytest.approx(mlp_acc - c["ridge_accuracy"], abs=2e-6)
        assert c["question_interval"][0] <= c["ours"] <= c["question_interval"][1]
        pub = TABLE_11.get(("mlp - ridge", c["budget"]))
        assert c["paper"] == (None if pub is None else pub.value)
        assert c["paper_interval"] == (None if pub is None else [pub.lo, pub.hi])
        assert c["paper_ridge_accuracy"] == TABLE_11_RIDGE.get(c["budget"])
    assert "not the same experiment" in t["table_11"]["note"]
    # Tables 1, 9 and 10 are made on LoCoMo (the paper's LongMemEval values as a reference); 7 is
    # LongMemEval's (its types, 256 tokens)
    assert "table_7" not in t
    assert len(t["table_1"]["cells"]) == 12 and len(t["table_10"]["cells"]) == 3 * 4
    assert {c["row"] for c in t["table_9"]["cells"]} == {"mean fit", "full fit", "zero fit"}
    assert "not the same experiment" in t["table_9"]["note"]
    assert all(c["paper"] is None for c in t["table_10"]["cells"] if c["budget"] == 16)
    md = tables_markdown(t)
    assert "## Table 4" in md and "## Table 8" in md and "evidence-fit rule" in md
    assert "## Table 2: direct and calibrated OAS" in md
    assert "## Table 1: fit-stratified" in md and "## Table 10: operator against" in md
    assert md.count("| merge - rewrite |") == 4
    assert "## Table 11: MLP - ridge accuracy" in md and md.count("| mlp - ridge |") == 4
    lines = md.splitlines()
    for head, rule in zip(lines, lines[1:], strict=False):  # GFM: a rule cell per header cell
        if rule.startswith("|---"):
            assert head.count("|") == rule.count("|"), head
    assert f"in {q['in']} of 12 cells" in md


@needs_locomo
def test_design_paper_refuses_limit(capsys):
    argv = ["paper-checks", "--design", "paper", "--data", str(LOCOMO_PATH), "--limit", "20"]
    rc, _, err = run_cli(argv, capsys)
    assert rc == 2 and "--limit: --design paper uses the paper's 75-question sample" in err


@pytest.mark.slow
@needs_locomo
def test_paper_checks_design_paper_on_real_locomo(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["-q", "paper-checks", "--design", "paper", "--data", str(LOCOMO_PATH)]
    argv += ["--no-figures", "--json", "--out", str(out), "--claims", "1,7"]
    rc, stdout, _ = run_cli(argv, capsys)
    assert rc == 0
    obj = json.loads(stdout)
    t = obj["tables"]
    assert t["n_questions"] == 75 and t["n_conversations"] == 10
    assert len(t["table_4"]["cells"]) == 12 and len(t["table_8"]["rows"]) == 24
    assert all(c["n"] == 75 for c in t["table_4"]["cells"])
    assert "verdicts use it" in t["verdict_interval"]
    assert (out / "TABLES.md").is_file()
    assert json.loads((out / "report.json").read_text())["tables"] == t
