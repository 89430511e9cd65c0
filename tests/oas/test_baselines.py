"""The paper's routing baselines (MODEL §8, Table 8) on small synthetic data, each against an
expectation computed here independently (by hand or by a plain loop)."""

import numpy as np
import pytest

from oas._baselines import (
    FIT_COLUMN,
    evidence_fit_rule,
    knn_router,
    nearest_neighbours,
    training_selected_operator,
)
from oas._features import FEATURE_NAMES
from retcon.errors import InputError


def test_training_selected_operator_is_the_best_generative_mean_never_ret():
    # ret is best on average, but the baseline picks among operators: rewrite (column 3) wins
    y = np.array([[1, 0, 0, 1], [1, 1, 0, 1], [1, 0, 1, 0.5]], float)
    assert training_selected_operator(y) == 3
    # tie between merge and abstract: the first in ACTIONS order
    y = np.array([[0, 1, 1, 0], [0, 0, 0, 0]], float)
    assert training_selected_operator(y) == 1


def test_evidence_fit_rule_consolidates_only_below_full_fit():
    x = np.zeros((4, len(FEATURE_NAMES)))
    x[:, FIT_COLUMN] = [0.0, 0.5, 1.0, 0.9999999999999]
    np.testing.assert_array_equal(evidence_fit_rule(x, 2), [2, 2, 0, 0])
    with pytest.raises(InputError, match="operator"):
        evidence_fit_rule(x, 0)
    with pytest.raises(InputError, match="features"):
        evidence_fit_rule(x[:, :3], 1)


def _loop_knn(train_x, train_y, test_x, k):
    """Independent k-NN: standardise by hand, sort each row's distances in a Python loop."""
    mean = [sum(c) / len(c) for c in zip(*train_x)]
    sd = []
    for j, c in enumerate(zip(*train_x)):
        v = (sum((a - mean[j]) ** 2 for a in c) / len(c)) ** 0.5
        sd.append(v if v > 0 else 1.0)

    def z(row):
        return [(a - m) / s for a, m, s in zip(row, mean, sd)]

    tr = [z(r) for r in train_x]
    out = []
    for row in test_x:
        q = z(row)
        dist = sorted((sum((a - b) ** 2 for a, b in zip(q, t)), i) for i, t in enumerate(tr))
        near = [i for _, i in dist[:k]]
        means = [sum(train_y[i][a] for i in near) / k for a in range(4)]
        best = max(means)
        out.append(means.index(best))  # first maximum: ret on ties
    return out


def test_knn_router_matches_a_loop_and_picks_k_by_grouped_cv():
    rng = np.random.default_rng(3)
    n, p = 60, 3
    x = rng.normal(size=(n, p))
    # utility depends on the sign of the first feature: operator 2 helps where x0 > 0
    y = np.zeros((n, 4))
    y[:, 0] = 0.5
    y[:, 2] = (x[:, 0] > 0).astype(float)
    groups = np.repeat(np.arange(6), 10).astype(str)
    xt = rng.normal(size=(25, p))
    got = knn_router(x, y, groups, xt, ks=(1, 5, 9), n_folds=3)
    assert got.k in (1, 5, 9)
    assert got.cv_accuracy.shape == (3,)
    np.testing.assert_array_equal(
        got.actions, _loop_knn(x.tolist(), y.tolist(), xt.tolist(), got.k)
    )
    # the k chosen is the best held-out accuracy, by an independent inner CV loop
    labels = sorted(set(groups))
    fold = np.array([labels.index(gr) % 3 for gr in groups])
    scores = []
    for k in (1, 5, 9):
        total = 0.0
        for f in range(3):
            fit, held = fold != f, fold == f
            pick = _loop_knn(x[fit].tolist(), y[fit].tolist(), x[held].tolist(), k)
            total += sum(y[held][i, a] for i, a in enumerate(pick))
        scores.append(total / n)
    np.testing.assert_allclose(got.cv_accuracy, scores)
    assert got.k == (1, 5, 9)[int(np.argmax(scores))]
    # the signal is learnable: the chosen actions follow the sign of x0 on most test rows
    assert np.mean((got.actions == 2) == (xt[:, 0] > 0)) > 0.8


def test_knn_router_rets_on_ties_and_refuses_bad_shapes():
    x = np.zeros((4, 2))
    y = np.full((4, 4), 0.5)
    got = knn_router(x, y, ["a", "a", "b", "b"], np.zeros((2, 2)), ks=(1, 2))
    np.testing.assert_array_equal(got.actions, [0, 0])
    assert got.k == 1  # every k ties: the smaller
    with pytest.raises(InputError, match="test_features"):
        knn_router(x, y, ["a"] * 4, np.zeros((2, 3)))
    with pytest.raises(InputError, match="ks"):
        knn_router(x, y, ["a"] * 4, np.zeros((2, 2)), ks=(0,))


@pytest.mark.slow
def test_evaluate_scores_the_baselines_on_the_test_groups():
    """``oas.evaluate`` scores the three baselines: its choices are the functions' own, fitted on
    the train + calibration groups and applied to the test rows."""
    import jax

    import oas
    from oas._evaluate import POLICIES
    from oas._simulate import paired_from_instances
    from tests._toy import toy_instances

    toy = paired_from_instances(
        jax.random.key(1), toy_instances(jax.random.key(0), 12, 6, [64, 256])
    )
    ev = oas.evaluate(jax.random.key(2), toy, n_folds=2)
    test = np.asarray(ev.info["test_index"])
    seen = np.setdiff1d(np.arange(toy.n), test)
    op = training_selected_operator(toy.outcomes[seen])
    assert ev.info["fixed_operator"] == ("ret", "merge", "abstract", "rewrite")[op]
    ch = dict(zip(ev.policies, ev.choices, strict=True))
    np.testing.assert_array_equal(ch["fixed-operator"], np.full(len(test), op))
    np.testing.assert_array_equal(ch["evidence-fit"], evidence_fit_rule(toy.features[test], op))
    knn = knn_router(
        toy.features[seen], toy.outcomes[seen], toy.group_id[seen], toy.features[test], n_folds=2
    )
    np.testing.assert_array_equal(ch["knn"], knn.actions)
    assert ev.info["knn_k"] == knn.k
    acc = ev.point[POLICIES.index("knn"), 0, -1]
    assert 0.0 <= acc <= 1.0


@pytest.mark.slow
def test_leave_one_out_adds_the_baselines_when_asked():
    import jax

    from oas._simulate import paired_from_instances
    from paper_checks._loco import loco_evaluate
    from tests._toy import toy_instances

    toy = paired_from_instances(
        jax.random.key(1), toy_instances(jax.random.key(0), 6, 6, [64, 256])
    )
    plain = loco_evaluate(jax.random.key(2), toy, mlp=False)
    both = loco_evaluate(jax.random.key(2), toy, mlp=False, baselines=True)
    assert not {"fixed-operator", "evidence-fit", "knn"} & set(plain.chosen)
    for name in ("fixed-operator", "evidence-fit", "knn"):
        assert both.chosen[name].shape == (toy.n,)
        assert set(np.unique(both.chosen[name])) <= {0, 1, 2, 3}
    # each held-out group's fixed operator is the best operator on the other groups
    groups = np.asarray(toy.group_id).astype(str)
    for label in np.unique(groups):
        rows = groups == label
        op = training_selected_operator(toy.outcomes[~rows])
        np.testing.assert_array_equal(both.chosen["fixed-operator"][rows], op)
        np.testing.assert_array_equal(
            both.chosen["evidence-fit"][rows], evidence_fit_rule(toy.features[rows], op)
        )
    for name in plain.chosen:  # the other policies are untouched
        np.testing.assert_array_equal(plain.chosen[name], both.chosen[name])


@pytest.mark.parametrize("chunk_cells", [7, 64, 1 << 21])
def test_chunked_knn_search_is_the_dense_stable_sort_bit_for_bit_ties_included(
    monkeypatch, chunk_cells
):
    """The chunked argpartition search returns the neighbours of the dense stable argsort
    (``tests/_references/knn_dense.py``), in the same order, so the means keep their bits; on
    integer-valued features and duplicated rows most k-th places are tied (MODEL §8)."""
    from oas import _baselines
    from tests._references.knn_dense import knn_mean_outcomes_dense, nearest_dense

    monkeypatch.setattr(_baselines, "_CHUNK_CELLS", chunk_cells)
    rng = np.random.default_rng(47)
    tied = rng.integers(0, 3, size=(80, 3)).astype(float)  # 27 points for 80 rows: ties
    tied[40:50] = tied[0]  # ten copies of one row
    smooth = rng.normal(size=(70, 5))
    ks = (1, 3, 5, 9, 15, 25)
    for train in (tied, smooth):
        y = rng.uniform(size=(len(train), 4))
        test = np.concatenate([train[:13], rng.normal(size=(9, train.shape[1]))])
        got_means = _baselines._knn_mean_outcomes(train, y, test, ks)
        for k, means in zip(ks, got_means):
            np.testing.assert_array_equal(
                nearest_neighbours(train, test, k), nearest_dense(train, test, k)
            )
            assert means.tobytes() == knn_mean_outcomes_dense(train, y, test, k).tobytes()
    # k at least the training size: every row, in stable order
    np.testing.assert_array_equal(
        nearest_neighbours(tied[:6], tied, 10), nearest_dense(tied[:6], tied, 10)
    )
    # the tie path is taken: some row has more than k candidates at its k-th distance
    d2 = ((tied[:, None, :] - tied[None, :, :]) ** 2).sum(-1)
    kth = np.sort(d2, axis=1)[:, 4:5]
    assert ((d2 <= kth).sum(axis=1) > 5).any()
