"""The acceptance rule per direction (paper_checks.rules._acceptance; docs/statistics.md §6) and the
paper's effects as the rules' true worlds (paper_checks._effects; MODEL §11)."""

from __future__ import annotations

import numpy as np
import pytest

from paper_checks import _effects as E
from paper_checks import operating as O
from paper_checks._types import FAIL, INCONCLUSIVE, PARTIAL, PASS, ClaimResult, Verdict
from paper_checks.rules._acceptance import ACCEPTANCE_RULE, accept, answer, power_words


def _oc(fp=0.01, pw=0.41, ff=0.0, half=0.2, fpart=0.0):
    return O.OperatingCharacteristics(fp, pw, ff, 10, 200, "null", "paper", False, half, fpart)


def test_a_pass_stands_on_its_level_whatever_the_power():
    v = accept(Verdict(PASS, "holds"), _oc(fp=0.03, pw=0.2))
    assert v.verdict == PASS and "false PASS 3.0%" in v.reason
    bad = accept(Verdict(PASS, "holds"), _oc(fp=0.08, pw=0.99))
    assert bad.verdict == INCONCLUSIVE and "false PASS 8.0%" in bad.reason


def test_a_fail_stands_on_its_false_fail_rate():
    assert accept(Verdict(FAIL, "no"), _oc(ff=0.05)).verdict == FAIL
    v = accept(Verdict(FAIL, "no"), _oc(ff=0.3, pw=0.41))
    assert v.verdict == INCONCLUSIVE
    assert "at G = 10 this rule detects the paper's effect with probability 0.41" in v.reason
    assert "very likely" not in v.reason


def test_a_partial_needs_its_own_null_rate():
    assert accept(Verdict(PARTIAL, "part"), _oc(fpart=0.02)).verdict == PARTIAL
    assert accept(Verdict(PARTIAL, "part"), _oc(fpart=0.6)).verdict == INCONCLUSIVE
    assert accept(Verdict(PARTIAL, "part"), _oc(fpart=float("nan"))).verdict == INCONCLUSIVE


def test_high_power_reads_as_evidence_of_absence():
    assert "very likely have been seen" in power_words(_oc(pw=0.85))
    assert "very likely" not in power_words(_oc(pw=0.79))
    v = accept(Verdict(INCONCLUSIVE, "nothing graded"), _oc(pw=0.9))
    assert v.verdict == INCONCLUSIVE and "very likely have been seen" in v.reason
    assert "Hoenig & Heisey 2001" in ACCEPTANCE_RULE


def test_answer_words_each_verdict():
    def res(verdict, **d):
        return ClaimResult("1", "c", None, None, "-", "x", verdict, d)

    rates = dict(
        false_pass_rate=0.01,
        false_fail_rate=0.4,
        false_partial_rate=0.0,
        power_paper_effect=0.41,
        power_half_effect=0.1,
        operating_characteristics={"n_groups": 10},
    )
    assert "**holds**" in answer(res(PASS, **rates))
    cant = answer(res(INCONCLUSIVE, rule_verdict=FAIL, **rates))
    assert "**cannot tell from this data**" in cant and "effect 41% of the time" in cant
    assert "false FAIL rate is 40.0%" in cant
    assert "G = 10" in cant
    assert "not checked" in answer(res("SKIPPED", reason="absent"))
    # every graded line names what the data can detect, PASS and FAIL included
    for v in (PASS, FAIL):
        assert "detects a paper-sized effect 41% of the time (half of it: 10%)" in answer(
            res(v, **rates)
        )
    flat = answer(res("NOT TESTABLE", reason="the reader answered no question correctly"))
    assert "**not testable**" in flat and "answered no question correctly" in flat


def test_paper_curves_on_the_data_grid():
    b = np.array(O.LOCOMO_BUDGETS)
    c = E.paper_curves(b, ["abstract", "merge", "unknown"], "Table 3")
    assert c.shape == (3, 7)
    np.testing.assert_allclose(c[0, [0, 2, 4, 6]], E.TABLE3["abstract"])
    np.testing.assert_allclose(c[2], c[0])  # an operator the paper does not name: abstract
    # the grid's order is kept
    fwd = E.on_grid((1, 2, 3, 4), (1, 2, 4, 8), b)
    np.testing.assert_allclose(E.on_grid((1, 2, 3, 4), (1, 2, 4, 8), b[::-1]), fwd[::-1])
    np.testing.assert_allclose(fwd[[0, 6]], (1, 4))


@pytest.mark.parametrize("table", ["Table 3", "Table 4"])
def test_reversal_oc_measures_both_powers_at_the_paper_effect(table):
    import jax

    from paper_checks.rules import _reversal as R

    rng = np.random.default_rng(0)
    b = np.array(O.LOCOMO_BUDGETS)
    data = {"r": rng.normal(0, 0.05, (10, 2, 7))}
    oc = R.reversal_oc(
        jax.random.PRNGKey(0),
        b,
        data,
        operators={"r": ["merge", "abstract"]},
        table=table,
        n_datasets=40,
    )
    assert oc is not None
    assert table in oc.true_world and "half" in oc.half_world
    assert 0 <= oc.power_half <= oc.power + 0.15 and 0 <= oc.false_partial_rate <= 1
