"""Statement 2 of ``paper-checks --over-time`` ("the loss per pass is geometric") in nested
survival worlds with a floor (issue 30 item 4): a question lost at a pass stays lost
(``paper_checks.studies._timeline_oc.nested_survival``). The per-chain rule is
``oas.real.survival_report``; the figures are docs/statistics.md's ("Over time")."""

import numpy as np
import pytest

from paper_checks.studies._timeline_oc import geometric_rule_rates, nested_survival


def test_nested_survival_is_nested_and_has_the_stated_curve():
    rng = np.random.default_rng(1)
    s = nested_survival(rng, floor=0.15, phi=0.4, n_groups=3, at_risk=(20_000, 20_000), tilt=0.0)
    assert np.all(np.diff(s.survived, axis=1) <= 0)
    assert np.all(s.survived[:, 0] == s.at_risk)
    want = 0.15 + 0.85 * 0.4 ** np.arange(5)
    np.testing.assert_allclose((s.survived / s.at_risk[:, None]).mean(0), want, atol=0.01)
    s = nested_survival(rng, floor=0.0, phi=0.6, passes=8)
    assert s.survived.shape == (10, 9) and np.all((s.at_risk >= 10) & (s.at_risk <= 80))


@pytest.mark.slow
def test_per_chain_rates_in_nested_worlds():
    """40 data sets per world, G = 10, 40-80 questions at risk, 4 passes: the geometric world is
    not called non-geometric; a floor reached within the passes (phi 0.4) is found; a floor the
    four passes do not reach (phi 0.7) is kept as geometric in most data sets (the rule's
    documented per-chain false YES; eight passes find it in 67.5%, docs/statistics.md)."""
    geo = geometric_rule_rates(11, floor=0.0, phi=0.6, n_datasets=40)
    assert geo.get("geometric (not rejected)", 0.0) >= 0.95
    fast = geometric_rule_rates(11, floor=0.15, phi=0.4, n_datasets=40)
    assert fast.get("geometric (not rejected)", 0.0) <= 0.10
    slow = geometric_rule_rates(12, floor=0.15, phi=0.7, n_datasets=40)
    assert slow.get("geometric (not rejected)", 0.0) >= 0.5
