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
from oas.real import unit_retrieval_features
from oas.real._bm25 import bm25_scores
from oas.real._instances import render
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
    assert np.all((recall > 0) & (recall <= 1)) and np.any(recall < 1)
    count = np.asarray(m["meta_overlap_count"], dtype=np.float64)
    assert np.all(count <= np.asarray(data.features)[:, 3])  # at most |C| units overlap
    mass = np.asarray(m["meta_score_mass"], dtype=np.float64)
    assert np.all((mass >= 0) & (mass <= 1))
