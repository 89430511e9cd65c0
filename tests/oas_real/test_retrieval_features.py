"""Post-retrieval features 12-15 (docs/oas.md, "Post-retrieval features"; MODEL §8 extension).

The LoCoMo computation (retriever scores over text units, word overlap) and the ``sim`` one (the
retriever's noisy scores of found evidence and distractors) must give the same numbers on a case
built so both see the same scores and the same overlapping units; both are checked against the
definitions written out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from oas import (
    fit_recall_calibration,
    predict_recall,
    retrieval_features_batch,
    sim_retrieval_features,
)
from oas.real._bm25 import bm25_scores
from oas.real._instances import render
from oas.real._retrieval_features import unit_retrieval_features
from oas.real._types import Record
from retcon.errors import InputError


def _units():
    texts = [
        "Alice adopted a puppy named Rex",
        "The weather was rainy all week",
        "Rex the puppy loves the park",
        "Bob cooked pasta for dinner",
        "Alice walked Rex to the park",
    ]
    return [Record(f"D{i}", f"S{i}", "", t) for i, t in enumerate(texts)]


def test_locomo_and_sim_paths_agree_on_a_constructed_case():
    units = _units()
    question = "What is the name of Alice's puppy?"
    top_k = 2
    scores = np.asarray(bm25_scores(question, [render(u) for u in units]), dtype=np.float64)
    order = sorted(range(len(units)), key=lambda i: (-scores[i], i))
    kept, rest = order[:top_k], order[top_k:]
    # the case is built so that the units sharing a content word are exactly those scoring >= 0.5
    # (the sim's stand-in for word overlap) and the others score 0
    assert all(scores[i] >= 0.5 for i in (0, 2, 4)) and all(scores[i] == 0 for i in (1, 3))
    real = unit_retrieval_features(question, units, top_k)
    sim, found = sim_retrieval_features(
        scores[kept][None], np.ones((1, top_k), bool), scores[rest][None]
    )
    np.testing.assert_allclose(real, sim[0], rtol=0, atol=1e-12)
    # the definitions, by hand
    span = scores.max() - scores.min()
    margin = (scores[kept].min() - scores[rest].max()) / span
    mass = scores[kept].sum() / scores.sum()
    np.testing.assert_allclose(real, [margin, mass, 2.0], atol=1e-12)
    assert found.all()


def test_edge_cases_of_the_batch_definition():
    # nothing left out: margin 0; no positive score: mass is the cluster's share of units
    f = retrieval_features_batch(
        np.array([[1.0, 2.0], [-1.0, -2.0]]),
        np.array([[True, True], [True, True]]),
        np.array([[True, True], [True, False]]),
        np.array([[True, False], [False, False]]),
    )
    np.testing.assert_allclose(f, [[0.0, 1.0, 1.0], [1.0, 0.5, 0.0]])
    with pytest.raises(InputError, match="in_cluster"):
        retrieval_features_batch(
            np.zeros((1, 2)),
            np.array([[True, False]]),
            np.array([[False, True]]),
            np.ones((1, 2), bool),
        )


def test_recall_calibration_recovers_a_linear_truth_and_clips():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(200, 3))
    r = 0.2 + 0.5 * x[:, 0] - 0.1 * x[:, 2]
    cal = fit_recall_calibration(x, r)
    np.testing.assert_allclose(cal.coef, [0.2, 0.5, 0.0, -0.1], atol=1e-4)
    assert predict_recall(cal, np.array([[10.0, 0.0, 0.0]]))[0] == 1.0


@pytest.mark.slow  # compiles the simulator (a minute on a loaded machine)
def test_sim_rows_carry_the_features_and_the_recall_target():
    import dataclasses

    import jax

    import sim
    from oas import simulate_paired

    sc = sim.load_scenario("locomo-like")
    sc = dataclasses.replace(sc, retriever=dataclasses.replace(sc.retriever, recall=0.6))
    data = simulate_paired(jax.random.key(0), sc, 64, budgets=np.array([64.0, 256.0]))
    m = data.meta
    recall = np.asarray(m["meta_retrieval_recall_cluster"], dtype=np.float64)
    assert np.all((recall >= 0) & (recall <= 1)) and np.any(recall < 1)  # 0: all missed
    count = np.asarray(m["meta_overlap_count"], dtype=np.float64)
    assert np.all(count <= np.asarray(data.features)[:, 3])  # at most |C| units overlap
    mass = np.asarray(m["meta_score_mass"], dtype=np.float64)
    assert np.all((mass >= 0) & (mass <= 1))


def _world(seed: int = 0, n_groups: int = 5, per_group: int = 60):
    """Paired rows whose best action is set by the score margin (feature 12), not by the base
    features: ``ret`` succeeds when the margin is positive, ``merge`` otherwise."""
    from oas import PairedData

    rng = np.random.default_rng(seed)
    n = n_groups * per_group
    extra = np.stack([rng.uniform(-1, 1, n), rng.uniform(0, 1, n), rng.integers(0, 4, n)], 1)
    good_ret = extra[:, 0] > 0
    y = np.zeros((n, 4))
    y[:, 0] = good_ret
    y[:, 1] = ~good_ret
    y[:, 2] = rng.uniform(size=n) < 0.3
    feats = np.zeros((n, 11))
    feats[:, 0] = np.tile([0.25, 0.5], n // 2)
    feats[:, 1:7] = rng.normal(size=(n, 6))
    feats[np.arange(n), 7 + rng.integers(0, 4, n)] = 1.0
    data = PairedData(
        instance_id=np.asarray([f"i{i}" for i in range(n)], dtype=object),
        query_id=np.asarray([f"q{i}" for i in range(n)], dtype=object),
        group_id=np.asarray([f"g{i // per_group}" for i in range(n)], dtype=object),
        query_type=np.asarray(["single-hop"] * n, dtype=object),
        budget=feats[:, 0] * 512.0,
        outcomes=y,
        features=feats,
        vocabulary="locomo",
    )
    return data, extra, good_ret.astype(float)


@pytest.mark.slow  # about 40 grouped ridge fits (12 s on a loaded machine)
def test_loco_deployable_finds_a_signal_only_the_retrieval_features_carry():
    import jax

    from oas.real import loco_deployable

    data, extra, recall = _world()
    res = loco_deployable(
        jax.random.key(0), data, extra, recall, feature_groups={"base": (), "+scores": (0, 1)}
    )
    gain = {p: g["point"] for p, g in res["gain"].items()}
    assert gain["+scores"] > gain["base"] + 0.2  # the margin tells ret from merge
    assert all(s["selected"] == "+scores" for s in res["selected_groups"])  # chosen in the folds
    assert gain["selected"] == pytest.approx(gain["+scores"])
    for p in gain:  # MODEL §8: the oracle selector bounds every policy, group by group
        assert np.all(np.asarray(res["per_group"]["oracle"]) >= np.asarray(res["per_group"][p]))
    assert gain["best-fixed"] == 0.0
    g = res["gain"]["+scores"]
    assert g["lower"] < g["point"] < g["upper"]
