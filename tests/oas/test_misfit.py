"""The misfit test of the identified reader (MODEL §2) and the predictive crossover interval.

Fast tier: the randomisation test against the one-dimensional sign-flip test (an independent
reference), the closed-form scores against JAX's derivative, and one world of each kind. Slow
tier: size in well-specified worlds, power in the misspecified one (fidelity 1.25 -> 0.75 over
8..1024 tokens), and the predictive interval's coverage, with the numbers docs/identify.md
reports.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oas
from oas._identify import N_PARAMS, success_prob
from oas._misfit import _row_scores, format_misfit, misfit_tests
from retcon.inference import sign_flip_quadratic_test, sign_flip_test
from tests._identify_worlds import make_world, misfit_args, random_reader, strata_of


def _misfit(w, seed=0):
    return misfit_tests(*misfit_args(w, seed), stratum_names=["short", "middle", "long"])


def test_quadratic_sign_flip_is_the_sign_flip_test_in_one_dimension():
    v = np.random.default_rng(0).normal(0.3, 1.0, 10)
    stat, p = sign_flip_quadratic_test(v)
    assert p == pytest.approx(float(sign_flip_test(v)[0]))
    assert stat == pytest.approx(v.sum() ** 2 / (v**2).sum())
    # two dimensions: a pattern set by brute force over all 2**8 sign vectors
    u = np.random.default_rng(1).normal(0.0, 1.0, (8, 2))
    stat, p = sign_flip_quadratic_test(u)
    vi = np.linalg.inv(u.T @ u)
    ts = []
    for k in range(2**8):
        e = np.array([1 - 2 * ((k >> i) & 1) for i in range(8)], float)
        s = e @ u
        ts.append(s @ vi @ s)
    assert p == pytest.approx(np.mean(np.array(ts) >= ts[0] - 1e-9))
    with pytest.raises(ValueError, match="pass key"):
        sign_flip_quadratic_test(np.ones((20, 1)))


def test_closed_form_scores_match_jax():
    """MODEL §2 reader: the misfit test's closed-form dp/dtheta equals JAX's (cut packing)."""
    rng = np.random.default_rng(1)
    w = make_world(rng, random_reader(rng), n_queries=20, packing="cut")
    th = rng.normal(0.0, 0.3, N_PARAMS)
    jac, *_ = _row_scores(th, oas.reader_rows(w.structure, w.budget, w.slot, w.outcomes, w.groups))
    fr = jnp.asarray(oas.support_fractions(w.structure, w.budget))
    sl = jnp.asarray(w.slot)
    ref = jax.jit(jax.jacfwd(lambda t: success_prob(t, fr, sl)))(jnp.asarray(th))
    np.testing.assert_allclose(jac, np.asarray(ref), atol=1e-5)


@pytest.mark.slow  # two fits of 7,800 rows: compilation is the cost
def test_misfit_flags_the_drifting_fidelity_and_passes_a_fitting_one():
    """One misspecified world (phi 1.25 -> 0.75 over 8..1024 tokens) is flagged, naming a budget
    drift with phi falling; one well-specified world is not."""
    rng = np.random.default_rng(3)
    reader = random_reader(rng)
    bad = _misfit(make_world(rng, reader, n_queries=600, drift=(1.25, 0.75)))
    assert bad["misfit"] and bad["p_value"] <= 0.05
    worst = min(bad["tests"], key=lambda t: t["p_holm"])
    assert worst["test"] == "budget" and worst["estimate"]["phi_factor_per_doubling"] < 1
    assert format_misfit(bad).startswith("misfit: yes (p = ")
    good = _misfit(make_world(rng, reader, n_queries=600))
    assert not good["misfit"]
    assert format_misfit(good).startswith("misfit: no (p = ")
    assert {t["operator"] for t in good["tests"]} == {"merge", "abstract", "rewrite"}
    assert {t["test"] for t in good["tests"]} == {"budget", "stratum"}


@pytest.mark.slow
def test_misfit_size_and_power():
    """Size: 100 well-specified hidden-style worlds (10 groups x 1500 queries x 13 budgets, a
    random reader each, prefix and cut packing), the misfit verdict (Holm over 6 tests at 5%)
    fires in at most 5% + sampling slack. Power: 30 worlds whose fidelity drifts 1.25 -> 0.75 over
    8..1024 tokens, flagged in at least 90%."""
    rng = np.random.default_rng(2026)
    null = []
    for i in range(100):
        w = make_world(rng, random_reader(rng), packing="cut" if i % 2 else "prefix")
        null.append(_misfit(w, i)["misfit"])
    power = []
    for i in range(30):
        w = make_world(rng, random_reader(rng), drift=(1.25, 0.75))
        power.append(_misfit(w, 1000 + i)["misfit"])
    size, pw = float(np.mean(null)), float(np.mean(power))
    print(f"misfit size {size:.3f} (100 worlds), power {pw:.3f} (30 worlds)")
    assert size <= 0.08, size  # 5% target; 0.08 is the binomial 90% bound at n = 100
    assert pw >= 0.9, pw


def _covers(x: dict, v) -> float:
    lo, hi = x["lower"], x["upper"]
    if v is None or lo is None:
        return np.nan
    return float(lo <= v <= (np.inf if hi is None else hi))


@pytest.mark.slow
def test_predictive_interval_covers_the_held_out_crossover():
    """Hidden-style worlds (a random reader each, rewrite's fidelity near 1; 10 groups x 1500
    queries x 13 budgets), 5 group folds, 40 refits: in every cell (operator x all rows and three
    strata of evidence length) the 95% predictive interval of the out-of-fold crossover covers
    the crossover of the held-out rows' true dU in >= 90% of cells, and the crossover their data
    show in >= 85% (target 90%; the slack is for 8 worlds' correlated cells). The parameter-only
    interval, for comparison, is printed."""
    rng = np.random.default_rng(11)
    cells = []
    for i in range(8):
        w = make_world(rng, random_reader(rng))
        key = jax.random.key(i)
        oof = oas.out_of_fold(
            key,
            oas.reader_rows(w.structure, w.budget, w.slot, w.outcomes, w.groups),
            folds=5,
            n_resamples=40,
        )
        st = strata_of(w)
        for s in (-1, 0, 1, 2):
            m = np.ones(w.budget.size, bool) if s < 0 else st == s
            c = oas.compare_crossovers(
                key,
                oof.p[m],
                oof.p_boot[:, m],
                w.budget[m],
                w.outcomes[m],
                w.groups[m],
                truth=w.truth[m],
                n_resamples=40,
            )
            for x in c.crossover.values():
                t = x["truth"]["budget"]
                if t is not None:
                    cells.append(
                        [
                            _covers(x["predicted"], t),
                            _covers(x["predictive"], t),
                            _covers(x["predictive"], x["observed"]["budget"]),
                        ]
                    )
    param, truth, observed = np.nanmean(np.array(cells), axis=0)
    print(
        f"{len(cells)} cells: parameter-only covers the truth {param:.3f}; predictive covers "
        f"the truth {truth:.3f}, the observed crossover {observed:.3f}"
    )
    assert truth >= 0.9 and observed >= 0.85, (param, truth, observed)
