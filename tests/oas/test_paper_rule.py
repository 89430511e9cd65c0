"""``alpha = 0`` calibration is the paper's rule read exactly (MODEL §8): candidates are the
observed calibration margins plus abstain-all, zero observed harmful choices, the highest accuracy,
ties to the larger threshold. Checked against a brute force written here, on random data with ties
in the margins, in the outcomes and between operators."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oas._policy import calibrate_accuracy, calibrate_crc, calibrated_policy


def test_crc_at_alpha_zero_retains():
    mu = np.array([[0.0, 0.5, -1, -1]])
    y = np.array([[0.0, 1.0, 0, 0]])
    assert calibrate_crc(mu, y, np.full(1, 32.0), 0.0).tau[0] == np.inf


GRID = [-0.2, -0.1, 0.0, 0.1, 0.2, 0.3]


def brute_force_paper_tau(mu, y):
    """One budget: loop over every candidate, count harms and correct answers by hand."""
    n = len(mu)
    best_op = []
    adv = []
    for i in range(n):
        # best generative action, first on ties (operators 1..3)
        j = max(range(1, 4), key=lambda a: (mu[i][a], -a))
        best_op.append(j)
        adv.append(mu[i][j] - mu[i][0])
    candidates = sorted(set(adv)) + [math.inf]
    best = None  # (accuracy, tau)
    for t in candidates:
        harms = 0
        correct = 0.0
        for i in range(n):
            a = best_op[i] if adv[i] > t else 0
            harms += y[i][a] < y[i][0]
            correct += y[i][a]
        if harms:
            continue
        acc = correct / n
        if best is None or acc > best[0] + 1e-12 or (abs(acc - best[0]) <= 1e-12 and t > best[1]):
            best = (acc, t)
    assert best is not None  # abstain-all never harms
    return best[1], best[0]


@st.composite
def calibration_sets(draw):
    """Rows over one or two budgets; utilities and outcomes from small grids so ties are common."""
    n = draw(st.integers(1, 30))
    mu = np.array(
        draw(
            st.lists(
                st.lists(st.sampled_from(GRID), min_size=4, max_size=4), min_size=n, max_size=n
            )
        )
    )
    y = np.array(
        draw(
            st.lists(
                st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=4, max_size=4),
                min_size=n,
                max_size=n,
            )
        )
    )
    budget = np.array(draw(st.lists(st.sampled_from([16.0, 64.0]), min_size=n, max_size=n)))
    return mu, y, budget


@given(calibration_sets())
def test_alpha_zero_is_the_papers_rule(data):
    mu, y, budget = data
    th = calibrate_accuracy(mu, y, budget, 0.0)
    policy = calibrated_policy(mu, budget, th)
    for k, b in enumerate(th.budgets):
        rows = budget == b
        tau, acc = brute_force_paper_tau(mu[rows].tolist(), y[rows].tolist())
        assert th.tau[k] == tau
        chosen = policy[rows]
        y_b = y[rows]
        picked = y_b[np.arange(len(y_b)), chosen]
        assert not np.any(picked < y_b[:, 0])  # zero observed harmful choices
        assert abs(picked.mean() - acc) <= 1e-12


def test_a_negative_margin_can_be_the_papers_threshold():
    """The candidates include negative margins: with no harm anywhere, consolidating even the
    rows the utility model ranks below retention is the most accurate zero-harm choice."""
    mu = np.array([[0.0, -0.1, -1, -1], [0.0, -0.2, -1, -1], [0.0, 0.1, -1, -1]])
    y = np.array([[0.0, 1.0, 0, 0], [0.0, 0.0, 0, 0], [0.0, 1.0, 0, 0]])
    th = calibrate_accuracy(mu, y, np.full(3, 32.0), 0.0)
    # tau = -0.2 consolidates rows 0 and 2 (accuracy 2/3, no harm); -0.1 and above lose row 0
    assert th.tau[0] == -0.2


def test_a_harm_at_the_largest_margin_forces_abstain_all():
    """Any finite candidate below 0.5 consolidates the harmful row; 0.5 and +inf tie on accuracy,
    and the tie goes to the larger threshold."""
    mu = np.array([[0.0, 0.5, -1, -1], [0.0, 0.1, -1, -1]])
    y = np.array([[1.0, 0.0, 0, 0], [0.0, 1.0, 0, 0]])
    th = calibrate_accuracy(mu, y, np.full(2, 32.0), 0.0)
    assert th.tau[0] == np.inf


@pytest.mark.slow
def test_a_zero_alpha_router_saves_and_loads_with_a_negative_tau(tmp_path):
    """A router fitted with the paper's rule round-trips, negative thresholds included; a
    negative tau in a router with alpha > 0 is still refused."""
    import dataclasses
    import json

    import jax

    import oas
    from oas._fit import fit_router
    from oas._policy import Thresholds
    from oas._simulate import paired_from_instances
    from retcon.errors import InputError
    from tests._toy import toy_instances

    toy = paired_from_instances(
        jax.random.key(1), toy_instances(jax.random.key(0), 12, 4, [64, 256])
    )
    router = fit_router(jax.random.key(2), toy, alpha=0.0, n_folds=2)
    assert router.alpha == 0.0
    neg = Thresholds(
        router.calibrated.budgets,
        np.full(len(router.calibrated.budgets), -0.25),
        router.calibrated.n,
    )
    router = (
        dataclasses.replace(router, calibrated=neg)
        if dataclasses.is_dataclass(router)
        else router._replace(calibrated=neg)
    )
    back = oas.load_router(oas.save_router(tmp_path / "r.json", router))
    np.testing.assert_array_equal(back.calibrated.tau, neg.tau)
    obj = json.loads((tmp_path / "r.json").read_text())
    obj["alpha"] = 0.1
    (tmp_path / "bad.json").write_text(json.dumps(obj))
    with pytest.raises(InputError, match="tau"):
        oas.load_router(tmp_path / "bad.json")
