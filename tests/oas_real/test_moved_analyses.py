"""The analyses that lived in ``experiments/`` scripts, each against a reference written here on a
tiny input: the ``--top-k`` choice of ``k`` inside the folds (``oas.real._topk``), recall at ``k``
and its summary (``oas.real._recall_at_k``), the expected intact share of the recall sweep
(``oas.real._recall_sweep``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def _t(values, level=0.95):
    """Reference Student-t interval of a mean, written out."""
    v = np.asarray(values, float)
    m, se = v.mean(), v.std(ddof=1) / np.sqrt(len(v))
    q = stats.t.ppf(0.5 + level / 2, len(v) - 1)
    return m, m - q * se, m + q * se


def test_group_accuracy_is_the_mean_hit_of_the_chosen_action_per_group():
    from oas.real._topk import group_accuracy

    y = np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0]], float)
    chosen = np.array([0, 0, 1, 1, 0])
    groups = np.array(["a", "a", "b", "b", "b"])
    # by hand: a: rows 0 (1), 1 (0) -> 0.5; b: rows 2 (1), 3 (0), 4 (1) -> 2/3
    assert group_accuracy(y, chosen, groups, ["b", "a"]) == pytest.approx([2 / 3, 0.5])


def test_k_is_chosen_on_the_training_conversations_only():
    """Held-out conversation g picks the k whose in-sample best-fixed accuracy, averaged over the
    other conversations, is highest (ties to the earlier k); it is then scored against each k."""
    from oas.real._topk import select_k

    rng = np.random.default_rng(5)
    g, labels = 4, ["s1", "s2", "s4"]
    insample = {lab: rng.uniform(size=(g, g)) for lab in labels}
    # conversation 0's own column favours s4 strongly: it must not count for held-out 0
    insample["s4"][:, 0] = 10.0
    insample["s2"][0] = insample["s1"][0]  # a tie for held-out 0: s1 (earlier) wins
    acc = {
        lab: {p: rng.uniform(size=g) for p in ("best-fixed", "deployable", "oracle")}
        for lab in labels
    }
    out = select_k(acc, insample, labels, g)
    ref = []
    for h in range(g):
        others = [j for j in range(g) if j != h]
        means = [np.mean([insample[lab][h, j] for j in others]) for lab in labels]
        ref.append(labels[int(np.argmax(means))])  # argmax keeps the first of equal values
    assert out["picked"] == ref
    for p in ("best-fixed", "deployable"):
        sel = np.array([acc[ref[h]][p][h] for h in range(g)])
        assert out["accuracy"][p] == pytest.approx(sel.mean())
        for lab in labels:
            m, lo, hi = _t(sel - acc[lab][p])
            v = out["versus"][f"{p} vs {lab}"]
            assert (v["point"], v["lower"], v["upper"]) == pytest.approx((m, lo, hi))


def test_recall_at_k_counts_gold_turns_in_the_top_k_units():
    from oas.real import load_locomo, rank_units, recall_at_k
    from oas.real._retrieval import memory_units

    convs = load_locomo(FIX / "locomo_tiny.json").conversations
    res = recall_at_k(convs, "bm25", "turn", (1, 3))
    rows = []
    for conv in convs:
        units = memory_units(conv, "turn")
        for q in conv.queries:
            order = rank_units(q.text, units, "bm25", None)
            gold = set(q.evidence_ids)
            row = []
            for k in (1, 3):
                top = {units[i].record_id for i in order[:k]}
                row.append(len(gold & top) / len(gold) if gold else 1.0)
            rows.append(row)
    assert res["k"] == [1, 3] and np.allclose(res["recall"], rows)
    assert len(res["group"]) == len(res["type"]) == len(rows)


def test_recall_summary_means_intervals_and_the_bm25_difference():
    from oas.real import recall_at_k_summary

    groups = ["c1", "c1", "c2", "c3", "c3", "c3"]
    types = ["single-hop", "temporal", "single-hop", "single-hop", "temporal", "temporal"]
    bm = np.array([[0, 1], [1, 1], [0, 0], [1, 1], [0, 1], [0, 0]], float)
    dense = np.array([[1, 1], [1, 1], [0, 1], [0, 1], [1, 1], [0, 1]], float)
    cell = lambda r: {"k": [1, 2], "recall": r.tolist(), "group": groups, "type": types}  # noqa: E731
    out = recall_at_k_summary({"turn": {"bm25": cell(bm), "dense": cell(dense)}})["turn"]
    g = np.asarray(groups)
    for name, r in (("bm25", bm), ("dense", dense)):
        s = out[name]
        assert s["mean"] == pytest.approx(r.mean(axis=0))
        assert s["n_questions"] == 6
        per = np.array([r[g == c].mean(axis=0) for c in ("c1", "c2", "c3")])
        for j in range(2):
            _, lo, hi = _t(per[:, j])
            assert (s["lower"][j], s["upper"][j]) == pytest.approx((lo, hi))
        t = np.asarray(types)
        assert s["by_type"]["temporal"] == pytest.approx(r[t == "temporal"].mean(axis=0))
    d = out["dense"]["minus_bm25"]
    assert d["mean"] == pytest.approx((dense - bm).mean(axis=0))
    per_d = np.array([(dense - bm)[g == c].mean(axis=0) for c in ("c1", "c2", "c3")])
    _, lo, hi = _t(per_d[:, 0])
    assert (d["lower"][0], d["upper"][0]) == pytest.approx((lo, hi))
    assert "minus_bm25" not in out["bm25"]


def test_intact_share_is_the_weighted_chance_that_every_record_is_found():
    import dataclasses

    from oas.real._recall_sweep import intact_share
    from sim import load_scenario

    sc = load_scenario("locomo-like")
    sc = dataclasses.replace(sc, retriever=dataclasses.replace(sc.retriever, recall=0.7))
    w = np.array([t.weight for t in sc.types], float)
    k = np.array([t.records for t in sc.types], float)
    assert intact_share(sc) == pytest.approx(float((w / w.sum() * 0.7**k).sum()))
    one = dataclasses.replace(sc, retriever=dataclasses.replace(sc.retriever, recall=1.0))
    assert intact_share(one) == 1.0
