"""The end-to-end router rule (issue 24 item 6): "a router beats best-fixed end to end" answered
YES / NO / UNDECIDED from the deployable router's interval, its synthetic worlds (the truth known),
the deployable policy chosen inside the training folds, and the post-retrieval features 12-14
written by ``retcon pair --protocol end-to-end``.

References: MODEL §8 (best fixed policy, oracle selector, grouped inference), docs/statistics.md
(few groups, step 6: every decision ships with its error rates), docs/end-to-end.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np
import pytest

from paper_checks.operating import LOCOMO_BUDGETS
from paper_checks.studies import _router_oc as R
from paper_checks.studies._end_to_end import router_statement
from paper_checks.studies._router_oc import (
    router_rule_records,
    router_verdict,
    router_world,
    summarize_rule_records,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def test_router_verdict_reads_the_interval():
    assert router_verdict(0.001, 0.01) == R.YES
    assert router_verdict(-0.02, -0.001) == R.NO
    assert router_verdict(-0.01, 0.01) == R.UNDECIDED
    assert router_verdict(0.0, 0.01) == R.UNDECIDED  # touching 0 is not above it
    assert router_verdict(float("nan"), 0.01) == R.UNDECIDED


def _router(point, lo, hi, n_groups=10):
    choice = {"features": "all", "margin": 0.05, "plays": "anchored"}
    return {
        "groups": [f"g{i}" for i in range(n_groups)],
        "gain": {"deployable": {"point": point, "lower": lo, "upper": hi}},
        "deployable_choices": [choice, {**choice, "plays": "best-fixed", "margin": None}],
    }


def _results():
    def run(p, lo, hi):
        g = {"point": [p], "lower": [lo], "upper": [hi]}
        return {"policies": {"gain": {"oas": g, "oracle": g}}}

    return {"oracle": run(0.014, 0.009, 0.018), "e2e": run(0.051, 0.045, 0.056)}


def test_router_statement_answers_only_where_the_rule_is_measured(monkeypatch):
    """YES / NO need the rule's measured error rates at the data's G within 5% (docs/statistics.md
    step 6); otherwise the answer is UNDECIDED and says why."""
    oc = {"false_yes": 0.02, "power": 0.9, "power_gain": 0.014, "false_no": 0.0, "coverage": 0.95}
    monkeypatch.setattr(R, "ROUTER_RULE_OC", {10: oc})
    yes = router_statement(_router(0.01, 0.002, 0.018), _results())
    assert yes["answer"] == R.YES and "false YES 2.0%" in yes["evidence"]
    assert "oracle protocol OAS - best-fixed +0.014" in yes["evidence"]
    assert "oracle selector headroom end to end +0.051" in yes["evidence"]
    assert "all margin 0.05, best-fixed" in yes["evidence"]  # the choices made in the folds
    assert router_statement(_router(-0.01, -0.02, -0.001), _results())["answer"] == R.NO
    assert router_statement(_router(0.0, -0.01, 0.01), _results())["answer"] == R.UNDECIDED
    monkeypatch.setattr(R, "ROUTER_RULE_OC", {10: {**oc, "false_yes": 0.08}})
    s = router_statement(_router(0.01, 0.002, 0.018), _results())
    assert s["answer"] == R.UNDECIDED and "false YES 8% > 5%" in s["evidence"]
    s = router_statement(_router(0.01, 0.002, 0.018, n_groups=7), _results())
    assert s["answer"] == R.UNDECIDED and "not measured at G = 7" in s["evidence"]


@pytest.mark.slow  # JAX's random draws compile per shape (8 s of CPU)
def test_router_world_probabilities_follow_the_definition():
    """``p_a = acc_a(b) + u_g + v_ga(b) + signal * s * w_a`` (clipped): with no conversation
    spread the null world's probabilities are the measured accuracies, and the signal moves
    ``ret`` against the operators by ``2 * signal`` per unit of the observed score margin."""
    acc = np.asarray(R.E2E_ACCURACY)
    budgets = np.asarray(LOCOMO_BUDGETS)
    data, extra, recall, prob = router_world(
        jax.random.key(0), 0.0, n_groups=4, n_questions=3, group_sd=0.0
    )
    col = np.searchsorted(budgets, data.budget)
    assert np.allclose(prob, acc[:, col].T)
    assert data.n == 4 * 3 * budgets.size and extra.shape == (data.n, 3)
    assert np.all((recall >= 0.5) & (recall <= 1)) and set(np.unique(data.outcomes)) <= {0, 1}
    _, extra2, _, prob2 = router_world(
        jax.random.key(0), 0.02, n_groups=4, n_questions=3, group_sd=0.0
    )
    inside = np.all((prob2 > 0.01) & (prob2 < 0.99), axis=1)
    diff = (prob2[:, 0] - prob2[:, 1]) - (acc[0, col] - acc[1, col])
    assert np.allclose(diff[inside], 2 * 0.02 * extra2[inside, 0])


def test_summaries_count_verdicts_and_coverage():
    def rec(sig, verdict, lo, hi, truth):
        g = {"point": (lo + hi) / 2, "lower": lo, "upper": hi, "verdict": verdict, "truth": truth}
        return {"signal": sig, "index": 0, "oracle": 0.05, "deployable": g}

    rows = [
        rec(0.0, R.UNDECIDED, -0.01, 0.01, 0.0),
        rec(0.0, R.YES, 0.001, 0.01, -0.001),
        rec(0.1, R.YES, 0.01, 0.03, 0.02),
        rec(0.1, R.NO, -0.03, -0.01, 0.02),
    ]
    out = summarize_rule_records(rows, policies=("deployable",))
    assert [(o["signal"], o["yes"], o["no"], o["coverage"]) for o in out] == [
        (0.0, 0.5, 0.0, 0.5),
        (0.1, 0.5, 0.5, 0.5),
    ]


def test_a_resumed_run_measures_only_the_data_sets_not_done(monkeypatch):
    """``done`` (the script's cache) is reused as it is; only the rest is measured and reported."""
    measured = []

    def fake(key, signal, index, **kw):
        measured.append((signal, index))
        g = {"point": 0.0, "lower": -1.0, "upper": 1.0, "verdict": R.UNDECIDED, "truth": 0.0}
        return {"signal": signal, "index": index, "oracle": 0.0, "deployable": g, "anchored": g}

    monkeypatch.setattr(R, "router_rule_records", fake)
    cached = fake(None, 0.0, 1)
    cached["deployable"] = {**cached["deployable"], "verdict": R.YES}
    measured.clear()
    seen = []
    out = R.router_rule_characteristics(
        jax.random.key(0), (0.0,), n_datasets=3, progress=seen.append, done={(0.0, 1): cached}
    )
    assert measured == [(0.0, 0), (0.0, 2)]
    assert [r["index"] for r in seen] == [0, 2]
    dep = next(o for o in out if o["policy"] == "deployable")
    assert dep["n_datasets"] == 3 and dep["yes"] == 1 / 3


def test_pair_writes_the_post_retrieval_features(tmp_path):
    """``retcon pair --protocol end-to-end`` rows carry features 12-14, equal to the post-hoc
    computation from the texts; rows without them (older files) are computed."""
    from oas import RETRIEVAL_META_COLUMNS, read_paired
    from oas.real import PairJob, load_locomo, locomo_retrieval_features, run_pair_job

    out = tmp_path / "e2e.jsonl"
    job = PairJob(
        "locomo",
        str(out),
        data=str(FIX / "locomo_tiny.json"),
        budgets=(16, 256),
        pair_protocol="end-to-end",
        type_source="gold",
        top_k=1,
    )
    run_pair_job(job, progress=False)
    paired = read_paired(out)
    stored = np.stack([np.asarray(paired.meta[c], float) for c in RETRIEVAL_META_COLUMNS], 1)
    conversations = load_locomo(FIX / "locomo_tiny.json").conversations
    old = paired._replace(
        meta={k: v for k, v in paired.meta.items() if k not in RETRIEVAL_META_COLUMNS}
    )
    assert np.allclose(locomo_retrieval_features(old, conversations, top_k=1), stored)
    marked = dict(paired.meta)
    marked["meta_score_margin"] = np.asarray([7.0] + [None] * (paired.n - 1), dtype=object)
    got = locomo_retrieval_features(paired._replace(meta=marked), conversations, top_k=1)
    assert got[0, 0] == 7.0 and np.allclose(got[1:], stored[1:])  # stored value wins
    line = json.loads(out.read_text().splitlines()[0])
    assert all(c in line for c in RETRIEVAL_META_COLUMNS)


@pytest.mark.slow  # about 80 grouped ridge fits (10-30 s on a loaded machine)
def test_deployable_router_in_the_null_and_in_a_world_with_signal():
    """The truth is known (the outcome probabilities): in the null world no router beats
    best-fixed in expectation; with a strong signal the deployable router, chosen in the folds,
    finds it and its interval says YES. MODEL §8: the oracle selector bounds every policy."""
    groups = {"base": (), "+scores": (0, 1)}
    null = router_rule_records(
        jax.random.key(3), 0.0, 0, n_groups=5, n_questions=30, feature_groups=groups
    )
    assert null["deployable"]["truth"] < 0.005
    strong = router_rule_records(
        jax.random.key(3), 0.3, 0, n_groups=5, n_questions=30, feature_groups=groups
    )
    d = strong["deployable"]
    assert d["truth"] > 0.05 and d["verdict"] == R.YES
    assert d["lower"] <= d["truth"] <= d["upper"]
    assert strong["oracle"] >= d["point"]
