"""Operating characteristics of the verdict rules in synthetic worlds where the truth is known
(paper_checks.operating; docs/statistics.md). The fast tests check the machinery on small
worlds; the slow ones are the issue's acceptance checks at LoCoMo's size and shape: the reversal
rule of claims 1 and 4 under the null world (every operator equal to retention), and the coverage
of crossover intervals from 10 groups."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import theory
from paper_checks import operating as O
from paper_checks._curves import curves_from_outcomes
from paper_checks._types import FAIL, PASS
from paper_checks.rules import _grades as V
from paper_checks.rules._reversal import endpoint_test
from retcon.inference import group_delta_curves as group_curves

B = np.array(O.LOCOMO_BUDGETS)


def test_gaussian_datasets_keep_the_data_covariance():
    rng = np.random.default_rng(0)
    data = {"a": rng.normal(0, 1, (10, 3)), "b": rng.normal(0, 1, (10,))}
    data["b"] = data["a"][:, 0] + 0.1 * data["b"]  # correlated with a's first column
    sets = O.gaussian_datasets(jax.random.PRNGKey(0), data, {"a": np.zeros(3)}, 10, 200)
    a = np.stack([d["a"] for d in sets]).reshape(-1, 3)
    b = np.stack([d["b"] for d in sets]).reshape(-1)
    np.testing.assert_allclose(a.mean(0), 0.0, atol=0.1)  # the world's mean, not the data's
    assert b.mean() == pytest.approx(data["b"].mean(), abs=0.1)  # absent key: the measured mean
    cov = np.cov(np.column_stack([a, b]).T)
    want = np.cov(np.column_stack([data["a"], data["b"]]).T)
    np.testing.assert_allclose(cov, want, atol=0.15)
    assert sets[0]["a"].shape == (10, 3) and sets[0]["b"].shape == (10,)


def test_operating_characteristics_of_a_one_sided_t_rule():
    """The rule "mean of 10 groups significantly > 0" at its boundary (mean 0) passes at about
    2.5%; a world far above 0 passes always and never fails."""
    rng = np.random.default_rng(1)
    values = {"g": rng.normal(0, 0.05, 10)}

    def rule(d):
        return V.combine({"u": V.grade_positive(_t(d["g"]))}).verdict

    def oc_at(effect):
        return O.operating_characteristics(
            rule,
            10,
            group_values=values,
            true_means={"g": effect},
            null_means={"zero": {"g": 0.0}},
            key=jax.random.PRNGKey(0),
            n_datasets=200,
        )

    oc = oc_at(0.2)
    assert oc.false_pass_rate <= 0.06 and oc.power == 1.0 and oc.false_fail_rate == 0.0
    assert oc.meets_targets and oc.reason() == "" and "G = 10" in oc.fmt()
    # the same rule against a small effect misses the power target and says so
    weak = oc_at(0.01)
    assert not weak.meets_targets and "power" in weak.reason()


def _t(v):
    from paper_checks._curves import t_estimate

    return t_estimate(v)


@pytest.mark.slow
def test_locomo_shaped_data_has_the_requested_curve():
    y, g, b = O.locomo_shaped_data(jax.random.PRNGKey(0), np.array(O.LOCOMO_DELTA))
    assert y.shape == (10 * 50 * 7, 4) and set(np.unique(y)) <= {0.0, 1.0}
    d = group_curves(y, g, b, B).mean(0)
    np.testing.assert_allclose(d, np.array(O.LOCOMO_DELTA), atol=0.05)


@pytest.mark.slow
def test_claims_1_and_4_rarely_pass_in_the_null_world():
    """The review's null world: LoCoMo-sized paired data (10 groups x 50 questions x 7 budgets)
    with every operator equal to retention at every budget. The reversal rule (claim 1: one
    reader; claim 4: every second reader) gives PASS in at most 5% of 200 data sets (the old rule:
    7 of 60), and FAIL rarely where the paper's reversal holds."""
    verdicts_1, verdicts_4 = [], []
    for i in range(200):
        k = jax.random.fold_in(jax.random.PRNGKey(20), i)
        readers = []
        for r in range(2):
            y, g, b = O.locomo_shaped_data(jax.random.fold_in(k, r), 0.0)
            readers.append(int(endpoint_test(B, group_curves(y, g, b, B)).grades.max()))
        verdicts_1.append(V.combine({"lexical": readers[0]}).verdict)
        verdicts_4.append(V.combine({"sentence": readers[0], "topk": readers[1]}).verdict)
    assert np.mean([v == PASS for v in verdicts_1]) <= 0.05
    assert np.mean([v == PASS for v in verdicts_4]) <= 0.05
    fails = []
    for i in range(100):
        y, g, b = O.locomo_shaped_data(
            jax.random.fold_in(jax.random.PRNGKey(21), i), np.array(O.PAPER_DELTA)
        )
        fails.append(
            V.combine({"x": int(endpoint_test(B, group_curves(y, g, b, B)).grades.max())}).verdict
        )
    assert np.mean([v == FAIL for v in fails]) <= 0.05


@pytest.mark.slow
def test_crossover_intervals_from_10_groups_cover_the_grid_truth():
    """The wild cluster bootstrap (Webb's weights, docs/statistics.md) gives crossover intervals
    that cover the grid truth (the crossover of the population dU curve on the grid) in at least
    93% of 200 LoCoMo-shaped data sets (the percentile cluster bootstrap: 87-93%)."""
    delta = np.array(O.LOCOMO_DELTA)
    truth = float(theory.grid_crossover(B, delta[0]).crossover_budget)
    hits = []
    for i in range(200):
        y, g, b = O.locomo_shaped_data(jax.random.fold_in(jax.random.PRNGKey(30), i), delta)
        s = curves_from_outcomes(
            jax.random.fold_in(jax.random.PRNGKey(31), i),
            y,
            g,
            b,
            name="w",
            data="w",
            n_resamples=400,
        )
        c = s.operators["merge"].crossover
        hits.append(bool(c.defined and c.lower <= truth <= c.upper))
    assert np.mean(hits) >= 0.93, np.mean(hits)


def test_null_shapes_keep_the_worlds_means_and_spread():
    """The operating-characteristics library's shapes (normal, heterogeneous conversations, heavy
    tails, one outlier conversation) change only the shape of the groups' deviations: weights
    symmetric about 0 with unit variance, so every null world stays null (MODEL §8: groups are
    the units); the outlier carries half of the variance."""
    for shape in O.SHAPES:
        z = O.null_shape_draws(jax.random.PRNGKey(3), shape, 4000, 10, 10)
        assert abs(z.mean()) < 0.02 and abs((z**2).mean() - 1.0) < 0.06, shape
    out = O.null_shape_draws(jax.random.PRNGKey(4), "one outlier", 4000, 10, 10)
    assert (out[:, 0] ** 2).mean() == pytest.approx(5.0, rel=0.05)
    with pytest.raises(Exception, match="shape"):
        O.null_shape_draws(jax.random.PRNGKey(0), "cubic", 2, 10, 10)


def _loose_spread(seed: int = 46) -> dict:
    """Two sources of ``(10, 3)`` per-conversation margins with LoCoMo's spread at the loosest
    budget: merge and rewrite the same text, about 5 points per conversation; abstract about 10,
    correlated with them; the chance-corrected source nearly the raw one (the same answers).
    Only the spread enters the worlds; their means are set there."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((10, 1))
    b = 0.6 * a + 0.8 * rng.standard_normal((10, 1))
    raw = np.concatenate([0.05 * a, 0.10 * b, 0.05 * a], axis=1)
    return {"raw": raw, "chance-corrected": raw + 0.01 * rng.standard_normal((10, 3))}


@pytest.mark.slow  # 10 worlds x 1,000 data sets of three sign-flip tests each: about 30 s
def test_claim_3_false_pass_is_at_most_5_percent_in_every_shape():
    """Claim 3's rule (MODEL §6.2, the loose-budget margin) in its null worlds (an operator ties
    retention; every margin 4 points, half the paper's 8) in all four shapes (normal,
    heterogeneous, heavy tails, one outlier): PASS in at most 5% of 1,000 data sets each (the
    95%-interval rule this replaced: 5.9% here, 6.2-6.9% at LoCoMo's own spread), and FAIL in
    at most 5% where every margin is the paper's 9.5 points."""
    from paper_checks.rules._reversal import loose_oc

    oc = loose_oc(
        jax.random.PRNGKey(46), _loose_spread(), ["merge", "abstract", "rewrite"], n_datasets=1000
    )
    assert oc.false_pass_rate <= 0.05, oc.worst_null
    assert oc.false_fail_rate <= 0.05
    assert oc.power > 0.2  # the rule is not blind at the paper's effect
