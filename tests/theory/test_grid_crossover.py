"""The crossover of a sampled ``dU(B)`` curve (docs/model.md §6.4): one estimator, its invariants.

Every command that reads a crossover off a budget grid calls ``theory.grid_crossover``; these
tests pin its documented answer and check it against the exact model of MODEL §6.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import theory
from sim._crossover import bootstrap_crossover
from theory import grid_crossover
from theory._grid import crossover_status, sign_changes

BUDGETS = [32, 64, 128, 256, 512]


def test_regression_curve_down_up_down():
    """[-.02, .05, -.03, -.04, -.05]: one - -> + then one + -> - change; B* is the + -> - root."""
    g = grid_crossover(BUDGETS, [-0.02, 0.05, -0.03, -0.04, -0.05])
    # log-linear between 64 (+.05) and 128 (-.03): 64 * 2^(.05 / .08)
    assert g.crossover_budget == pytest.approx(64 * 2 ** (0.05 / 0.08), rel=1e-12)
    assert str(g.status) == "multiple"
    assert int(g.n_sign_changes) == 2
    assert g.direction.tolist() == [1, -1, 0, 0]


def test_regression_curve_with_three_changes_reports_the_largest_down_root():
    """[.05, -.01, .02, -.03, -.04]: + -> -, - -> +, + -> -; B* is the last + -> - root."""
    g = grid_crossover(BUDGETS, [0.05, -0.01, 0.02, -0.03, -0.04])
    assert g.crossover_budget == pytest.approx(128 * 2 ** (0.02 / 0.05), rel=1e-12)
    assert str(g.status) == "multiple"
    assert int(g.n_sign_changes) == 3
    finite = g.roots[np.isfinite(g.roots)]
    assert finite == pytest.approx(
        [32 * 2 ** (0.05 / 0.06), 64 * 2 ** (0.01 / 0.03), 128 * 2 ** (0.02 / 0.05)]
    )


REGRESSION = ([-0.02, 0.05, -0.03, -0.04, -0.05], [0.05, -0.01, 0.02, -0.03, -0.04])


def test_sim_reports_the_grid_crossover_of_its_point_curve():
    """sim's bootstrap: block sums whose pooled mean is each regression curve give theory's B*."""
    import jax

    curves = np.asarray(REGRESSION)  # (n_ops, nB)
    count = np.array([3.0, 1.0, 2.0, 4.0])  # queries per block; the pooled mean is the curve
    noise = np.array([1.0, -1.0, 2.0, -2.0])[:, None, None] * 1e-3  # sums to 0 over blocks
    blocks = count[:, None, None] * curves[None] + noise
    cx = bootstrap_crossover(jax.random.key(0), BUDGETS, blocks, count, n_resamples=50)
    g = grid_crossover(BUDGETS, curves)
    np.testing.assert_allclose(cx.crossover_budget, g.crossover_budget, rtol=1e-9)
    assert cx.status == ("multiple", "multiple")
    assert cx.n_crossings.tolist() == [2, 3]


def test_oas_real_summary_reports_the_grid_crossover():
    """oas.real's summary of paired data whose dU curves are the regression curves gives theory's B*."""
    import oas
    from oas.real import summarize

    n = len(BUDGETS)
    y = np.full((n, 4), 0.5)
    y[:, 1] += REGRESSION[0]  # merge
    y[:, 3] += REGRESSION[1]  # rewrite
    ids = np.array([f"q@{b}" for b in BUDGETS], dtype=object)
    data = oas.PairedData(
        instance_id=ids,
        query_id=np.full(n, "q", dtype=object),
        group_id=np.full(n, "g", dtype=object),
        query_type=np.full(n, "single-hop", dtype=object),
        budget=np.asarray(BUDGETS, dtype=np.float64),
        outcomes=y,
        features=np.zeros((n, len(oas.FEATURE_NAMES))),
        vocabulary="locomo",
    )
    s = summarize(data)
    for op, curve in (("merge", REGRESSION[0]), ("rewrite", REGRESSION[1])):
        g = grid_crossover(BUDGETS, curve)
        assert s["crossover"][op]["crossover_budget"] == pytest.approx(
            float(g.crossover_budget), rel=1e-9
        )
        assert s["crossover"][op]["status"] == str(g.status) == "multiple"
    assert s["crossover"]["abstract"]["status"] == "none"
    assert s["crossover"]["abstract"]["crossover_budget"] is None


def test_unique_none_and_zeros():
    g = grid_crossover(BUDGETS, [0.1, 0.05, -0.01, -0.02, -0.03])
    assert str(g.status) == "unique" and 64 < g.crossover_budget < 128
    g = grid_crossover(BUDGETS, [0.0, 0.0, 0.0, 0.0, 0.0])
    assert str(g.status) == "none" and math.isnan(g.crossover_budget)
    # a lone - -> + change is not a crossover of the model: status multiple, no B*
    g = grid_crossover(BUDGETS, [-0.1, -0.1, 0.1, 0.2, 0.3])
    assert str(g.status) == "multiple" and math.isnan(g.crossover_budget)
    # exact zeros and missing values are passed over: +.1 at 32, -.1 at 128 -> geometric mean 64
    g = grid_crossover(BUDGETS, [0.1, 0.0, -0.1, np.nan, -0.2])
    assert str(g.status) == "unique" and g.crossover_budget == pytest.approx(64.0)


def test_batch_equals_one_curve_at_a_time():
    rng = np.random.default_rng(0)
    curves = rng.normal(size=(50, len(BUDGETS)))
    batch = grid_crossover(BUDGETS, curves)
    for i, c in enumerate(curves):
        one = grid_crossover(BUDGETS, c)
        np.testing.assert_equal(batch.crossover_budget[i], one.crossover_budget)
        assert batch.status[i] == one.status
        np.testing.assert_equal(batch.roots[i], one.roots)


def test_status_rule_is_shared_with_sign_changes():
    for c in (
        [0.1, -0.1, 0.1, -0.1, -0.2],
        [0.1, 0.2, 0.3, 0.4, 0.5],
        [0.2, 0.1, -0.1, -0.1, -0.1],
    ):
        dirs = [d for _, _, d in sign_changes(c)]
        assert crossover_status(dirs) == str(grid_crossover(BUDGETS, c).status)


@pytest.mark.parametrize(
    "bad",
    [
        dict(budgets=[64, 32], delta=[1, -1]),
        dict(budgets=[0, 32], delta=[1, -1]),
        dict(budgets=[32, 64], delta=[1, -1, 2]),
    ],
)
def test_bad_input_names_the_argument(bad):
    with pytest.raises(ValueError, match="grid_crossover: (budgets|delta)"):
        grid_crossover(**bad)


curve = st.lists(
    st.floats(-1, 1, allow_nan=False).filter(lambda x: x == 0 or abs(x) > 1e-6),
    min_size=2,
    max_size=12,
)


@given(curve, st.floats(0.01, 100.0), st.floats(0.01, 100.0))
def test_equivariance_and_invariance(values, s, c):
    """§6.5 on a grid: scaling the budgets by s scales B* by s; scaling dU by c > 0 changes nothing."""
    b = 8.0 * 2.0 ** np.arange(len(values))
    g = grid_crossover(b, values)
    gs = grid_crossover(s * b, c * np.asarray(values))
    assert gs.status == g.status
    np.testing.assert_allclose(gs.crossover_budget, s * g.crossover_budget, rtol=1e-9)


@given(curve)
def test_roots_lie_in_their_brackets_and_signs_agree(values):
    """Each root lies between its bracketing budgets; unique means dU > 0 below B*, < 0 above."""
    b = 8.0 * 2.0 ** np.arange(len(values))
    v = np.asarray(values)
    g = grid_crossover(b, v)
    for i, j, _ in sign_changes(v):
        r = g.roots[j - 1]
        assert b[i] <= r <= b[j]
    if g.status == "unique":
        assert np.all(v[b < g.crossover_budget] >= 0) and np.all(v[b > g.crossover_budget] <= 0)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("exponential", dict(mean=300.0)),
        ("uniform", dict(max=1000.0)),
        ("gamma", dict(shape=2.0, scale=150.0)),
    ],
)
def test_sampled_exact_curve_matches_theory(name, params):
    """A fine grid on the exact §6 curve gives theory's root (interpolation error only)."""
    dist = theory.make_length_dist(name, **params)
    model = dict(compress_ratio=0.3, fidelity=0.85, acc_raw=0.9, acc_guess=0.1)
    exact = theory.crossover(dist, **model)
    b = np.geomspace(4.0, 20_000.0, 400)
    d = theory.delta_curve(dist, b, **model).delta
    g = grid_crossover(b, d)
    assert g.status == exact.status == "unique"
    assert g.crossover_budget == pytest.approx(exact.crossover_budget, rel=2e-3)


# ---------------------------------------------------------------- the crossover's interval


def _reference_interval(budgets, point, reps, level):
    """An independent loop: each replicate's B* from ``sign_changes``; no root -> 0 or inf."""
    b = np.log(np.asarray(budgets, float))

    def root(curve):
        downs = [(i, j) for i, j, d in sign_changes(curve) if d < 0]
        if not downs:
            return 0.0 if not np.any(np.nan_to_num(curve, nan=-1.0) > 0) else math.inf
        i, j = downs[-1]
        return math.exp(b[i] + (b[j] - b[i]) * curve[i] / (curve[i] - curve[j]))

    bstar = root(np.asarray(point, float))
    if bstar in (0.0, math.inf):
        return math.nan, math.nan, math.nan
    r = sorted(root(np.asarray(c, float)) for c in reps)
    a = (1 - level) / 2
    lo = r[math.floor((len(r) - 1) * a)]
    hi = r[math.ceil((len(r) - 1) * (1 - a))]
    return bstar, min(lo, bstar), max(hi, bstar)


@given(
    st.lists(
        st.lists(st.floats(-1, 1, allow_nan=False), min_size=5, max_size=5), min_size=1, max_size=30
    ),
    st.lists(st.floats(-1, 1, allow_nan=False).filter(lambda x: x != 0), min_size=5, max_size=5),
)
def test_crossover_interval_matches_an_independent_loop(reps, point):
    """docs/model.md §6.4: the interval is the order statistics of the replicates' B*, a replicate
    without a + -> - root placed below (0, never positive) or above (inf) the grid, widened to
    hold the point."""
    c = theory.crossover_interval(BUDGETS, np.asarray(point), np.asarray(reps), level=0.9)
    bstar, lo, hi = _reference_interval(BUDGETS, point, reps, 0.9)
    if math.isnan(bstar):
        assert np.isnan(c.crossover_budget) and np.isnan(c.lower) and np.isnan(c.upper)
        return
    assert float(c.crossover_budget) == pytest.approx(bstar, rel=1e-9)
    assert float(c.lower) == pytest.approx(lo, rel=1e-9)
    assert float(c.upper) == pytest.approx(hi, rel=1e-9)
    assert c.lower <= c.crossover_budget <= c.upper


def test_crossover_interval_places_rootless_replicates_outside_the_grid():
    """A resample still positive at the loosest budget crosses above the grid, not below it."""
    point = np.array([0.1, 0.05, 0.02, -0.01, -0.02])
    above = np.tile([0.1, 0.08, 0.06, 0.04, 0.02], (30, 1))  # operator ahead everywhere
    below = np.tile([-0.1, -0.1, -0.1, -0.1, -0.1], (30, 1))  # retention ahead everywhere
    c = theory.crossover_interval(BUDGETS, point, np.vstack([above, point[None]]))
    assert c.upper == math.inf and c.lower == pytest.approx(c.crossover_budget)
    c = theory.crossover_interval(BUDGETS, point, np.vstack([below, point[None]]))
    assert c.lower == 0.0 and c.upper == pytest.approx(c.crossover_budget)
    assert float(c.found_share) == pytest.approx(1 / 31)


def test_every_command_reports_the_same_crossover_interval():
    """One home: paper_checks, oas.real and retcon.inference + theory give the same interval from
    the same paired data and key (the wild cluster bootstrap of docs/statistics.md)."""
    import jax

    from oas.real import crossover_ci
    from paper_checks._curves import crossover_estimate, curves_from_outcomes
    from retcon.inference import wild_delta_curve_replicates as delta_curve_replicates

    rng = np.random.default_rng(3)
    n_q, budgets = 60, np.array(BUDGETS, float)
    b = np.tile(budgets, n_q)
    tight = (b[:, None] < 100).astype(float)
    p = np.clip(0.4 + np.array([0.0, 0.2, 0.1, 0.15]) * (1.5 * tight - 0.7), 0, 1)
    y = (rng.random((b.size, 4)) < p).astype(float)
    groups = np.repeat([f"g{i % 8}" for i in range(n_q)], budgets.size)
    key = jax.random.PRNGKey(5)
    point, reps = delta_curve_replicates(key, y, groups, b, budgets, n_resamples=200)
    ref = theory.crossover_interval(budgets, point, reps)

    class Data:  # the fields crossover_ci reads
        outcomes, budget, group_id = y, b, groups

    got = crossover_ci(key, Data, n_resamples=200)
    for j, o in enumerate(("merge", "abstract", "rewrite")):
        est, _ = crossover_estimate(budgets, point[j], reps[:, j])
        if np.isnan(ref.crossover_budget[j]):
            assert got[o]["crossover_budget"] is None and not est.defined
            continue
        assert got[o]["crossover_budget"] == pytest.approx(ref.crossover_budget[j])
        assert (got[o]["lower"], got[o]["upper"]) == (ref.lower[j], ref.upper[j])
        assert (est.lower, est.upper) == (ref.lower[j], ref.upper[j])
    s = curves_from_outcomes(key, y, groups, b, name="x", data="x", n_resamples=200)
    for j, o in enumerate(("merge", "abstract", "rewrite")):
        if not np.isnan(ref.crossover_budget[j]):
            c = s.operators[o].crossover
            assert (c.point, c.lower, c.upper) == pytest.approx(
                (ref.crossover_budget[j], ref.lower[j], ref.upper[j])
            )


def test_grid_crossover_stays_finite_at_huge_values():
    """docs/model.md §6.4: the root interpolated between two budgets lies between them.

    The slow fuzz found ``dU = (1.3e305, -1)`` on budgets ``(1e-300, 1e300)`` giving ``B* = inf``
    (the log-budget span times ``dU`` passed the float range before the division).
    """
    out = theory.grid_crossover([1e-300, 1e300], [1.301213681043437e305, -1.0])
    assert out.status == "unique" and 1e-300 <= out.crossover_budget <= 1e300
