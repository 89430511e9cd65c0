"""Error rates of the simulation statements of `paper-checks --over-time` (MODEL §10): the null
worlds have the truth they claim, and the measured rates behave as the rules say."""

import jax
import numpy as np
import pytest

from paper_checks.studies._timeline_oc import (
    cell_z,
    centred_policy,
    operating_timeline,
    plateau_null,
)
from retcon.vocab import OPERATORS
from sim import TimelineResult

POLICIES = ("periodic", "overflow", "budget-aware", "tiered")


def _pool(effect: float, q: int = 60, seed: int = 0) -> TimelineResult:
    rng = np.random.default_rng(seed)
    rows = (("retain-all", None),) + tuple((p, o) for o in OPERATORS for p in POLICIES)
    b = np.array([256.0, 1024.0, 4096.0])
    out = rng.uniform(0.2, 0.6, (q, len(rows), b.size, 4))
    for i, (p, _) in enumerate(rows):
        if p == "budget-aware":
            out[:, i] = out[:, 0] + effect + rng.normal(0, 0.05, (q, b.size, 4))
    ks = np.arange(5)
    curve = 0.3 + 0.1 * ks - 0.03 * ks**2  # an inverted U peaking at k = 2
    gen = curve[None, None, :, None] + rng.normal(0, 0.05, (q, len(OPERATORS), 5, b.size))
    return TimelineResult(np.arange(1.0, 5.0), b, rows, out, gen)


def test_null_worlds_hold_their_truth():
    """The plateau null has no inverted U (mean non-decreasing in k, the peak kept); the centred
    policy has mean paired difference 0 in every cell."""
    r = _pool(0.1)
    m = plateau_null(r.by_generation).mean(0)
    assert (np.diff(m, axis=1) >= -1e-12).all()
    np.testing.assert_allclose(m.max(1), r.by_generation.mean(0).max(1))
    c = centred_policy(r, "budget-aware", "overflow")
    for op in OPERATORS:
        i, j = c.rows.index(("budget-aware", op)), c.rows.index(("overflow", op))
        np.testing.assert_allclose((c.outcome[:, i] - c.outcome[:, j]).mean((0, -1)), 0, atol=1e-12)


def test_operating_characteristics():
    """A clear effect: power 1; the simultaneous rule's false-YES rate is at most the marginal's
    (a larger z on the same data sets can only remove YES)."""
    oc = operating_timeline(_pool(0.1), key=jax.random.key(0), n_datasets=12)
    assert cell_z(9, "simultaneous") > cell_z(9, "marginal") == pytest.approx(1.96, abs=1e-3)
    for name in ("inverted_u", "budget_aware_beats_overflow", "budget_aware_beats_retain_all"):
        m, s = oc[name]["marginal"], oc[name]["simultaneous"]
        assert s["power"] == 1.0 and s["false_no"] == 0.0
        assert s["false_yes"] <= m["false_yes"]
        assert s["meets_targets"] == (s["false_yes"] <= 0.05)
