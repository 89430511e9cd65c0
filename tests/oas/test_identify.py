"""Identification of the MODEL §2 reader from paired data, and the predicted crossover (MODEL §6).

The simulation knows the truth: ``g``, ``a_t``, ``phi_{o,t}`` of the scenario and every row's true
success probabilities (``meta_p_*``), hence the true ``dU(B)`` and crossover of the held-out rows.
"""

import json

import jax
import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import oas
import sim
from oas._structure import check_structure, paired_structure
from retcon.errors import InputError
from retcon.vocab import ACTIONS, OPERATORS


def _truth(d):
    return np.stack([d.meta[f"meta_p_{a}"].astype(float) for a in ACTIONS], axis=1)


def _true_params(sc):
    by = {t.name: t for t in sc.types}
    slots = [i for i, n in enumerate(sc.query_types) if n in by]
    a = np.full(4, np.nan)
    phi = np.full((3, 4), np.nan)
    for i in slots:
        t = by[sc.query_types[i]]
        a[i] = t.acc_raw
        phi[:, i] = t.fidelity
    return sc.acc_guess, a, phi


def _covers(lo, hi, x, tol=2e-3):
    return bool(lo - tol <= x <= hi + tol)


@pytest.fixture(scope="module")
def locomo_small():
    return oas.simulate_paired(jax.random.key(3), "locomo-like", 2900)


def test_support_of_stored_structure_reproduces_the_kernel(locomo_small):
    """MODEL §2: the packing support computed from the stored structure, put through the reader
    with the scenario's true parameters, gives the kernel's success probability of every row."""
    d = locomo_small
    sc = sim.load_scenario("locomo-like")
    g, a, phi = _true_params(sc)
    frac = oas.support_fractions(paired_structure(d), d.budget)
    slot = d.query_type_slot
    s = np.concatenate([frac[:, :1], phi[:, slot].T * frac[:, 1:]], axis=1)
    p = np.clip(g + (a[slot] - g)[:, None] * s, 0, 1)
    np.testing.assert_allclose(p, _truth(d), atol=1e-6)
    assert frac[:, 0].min() == 0 and frac[:, 0].max() == 1  # tight and loose budgets both present


def test_structure_roundtrips_through_the_paired_file(tmp_path, locomo_small):
    d = locomo_small.take(np.arange(60))
    path = tmp_path / "p.jsonl"
    oas.write_paired(path, d)
    back = oas.read_paired(path)
    a, b = paired_structure(d), paired_structure(back)
    np.testing.assert_array_equal(a.lengths, b.lengths)
    np.testing.assert_array_equal(a.evidence, b.evidence)
    csv = tmp_path / "p.csv"
    oas.write_paired(csv, d)
    np.testing.assert_array_equal(paired_structure(oas.read_paired(csv)).lengths, a.lengths)


@pytest.mark.parametrize(
    "cell, msg",
    [
        ({"packing": "tight"}, "packing must be one of"),
        (
            {"packing": "prefix", "lengths": {"ret": [1.0]}, "evidence": {"ret": [1]}},
            "lengths must map each of",
        ),
        (
            {
                "packing": "prefix",
                "lengths": {a: [3.0, -1.0] for a in ACTIONS},
                "evidence": {a: [1, 0] for a in ACTIONS},
            },
            "token lengths > 0",
        ),
        (
            {
                "packing": "prefix",
                "lengths": {a: [3.0, 1.0] for a in ACTIONS},
                "evidence": {a: [1] for a in ACTIONS},
            },
            "one flag per record",
        ),
        (
            {
                "packing": "cut",
                "lengths": {a: [3.0] for a in ACTIONS},
                "evidence": {a: [int(a != "ret")] for a in ACTIONS},
            },
            "flags no record",
        ),
        ("{not json", "must be a JSON object"),
    ],
)
def test_bad_structure_cell_names_the_field(cell, msg):
    with pytest.raises(InputError, match=msg) as e:
        check_structure(cell, "p.jsonl", 7)
    assert "p.jsonl:7: field 'evidence_structure'" in str(e.value)


def test_structure_required_for_identification(locomo_small):
    d = locomo_small.take(np.arange(10))
    d = d._replace(meta={k: v for k, v in d.meta.items() if k != "evidence_structure"})
    with pytest.raises(InputError, match="no 'evidence_structure' column"):
        paired_structure(d)


def _single_scenario(a, g, phi, rho, scale):
    return sim.scenario_from_dict(
        {
            "vocabulary": "locomo",
            "packing": "prefix",
            "budgets": {"min": 8.0, "max": 40.0 * scale, "count": 20, "spacing": "log"},
            "types": {
                "single-hop": {
                    "weight": 1.0,
                    "records": 1,
                    "length": {"dist": "gamma", "shape": 2.0, "scale": scale},
                }
            },
            "operators": {
                o: {"compress_ratio": r, "fidelity": f} for o, r, f in zip(OPERATORS, rho, phi)
            },
            "reader": {"acc_raw": a, "acc_guess": g},
            "retriever": {"order": "oracle", "distractors": 0, "noise": 0.0},
        }
    )


@settings(max_examples=3, derandomize=True, deadline=None, phases=[Phase.explicit, Phase.generate])
@pytest.mark.slow  # ~12 s of refits: the fast tier keeps the fixed-scenario checks
@given(
    a=st.floats(0.6, 0.95),
    g=st.floats(0.02, 0.3),
    phi=st.tuples(st.floats(0.5, 0.95), st.floats(0.5, 0.95), st.floats(0.5, 0.95)),
    rho=st.tuples(st.floats(0.2, 0.6), st.floats(0.1, 0.5), st.floats(0.4, 0.8)),
    scale=st.floats(50.0, 400.0),
    seed=st.integers(0, 2**16),
)
def test_recovered_reader_and_crossover_cover_the_truth(a, g, phi, rho, scale, seed):
    """MODEL §2 + §6, random single-type scenarios: the bootstrap CIs of g, a and phi_o cover the
    scenario's values, and the out-of-fold predicted crossover's CI covers the crossover of the
    true dU(B) of the held-out rows. Intervals at 99% (each example checks 8 intervals); the
    crossover is allowed 2% for the linear interpolation on a 20-point log grid."""
    sc = _single_scenario(a, g, phi, rho, scale)
    d = oas.simulate_paired(jax.random.key(seed), sc, 8000)
    s = paired_structure(d)
    key = jax.random.key(seed + 1)
    fit = oas.identify(
        key,
        oas.reader_rows(s, d.budget, d.query_type_slot, d.outcomes, d.group_id),
        n_resamples=40,
        level=0.99,
    )
    # 40 refits make a narrow percentile interval; 0.02 absolute is the slack for it
    assert _covers(fit.lower.acc_guess, fit.upper.acc_guess, g, tol=0.02)
    assert _covers(fit.lower.acc_raw[0], fit.upper.acc_raw[0], a, tol=0.02)
    for j in range(3):
        assert _covers(fit.lower.fidelity[j, 0], fit.upper.fidelity[j, 0], phi[j], tol=0.02)
    np.testing.assert_allclose(fit.compress_ratio[:, 0], rho, rtol=1e-5)
    oof = oas.out_of_fold(
        key,
        oas.reader_rows(s, d.budget, d.query_type_slot, d.outcomes, d.group_id),
        folds=2,
        n_resamples=40,
    )
    c = oas.compare_crossovers(
        key,
        oof.p,
        oof.p_boot,
        d.budget,
        d.outcomes,
        d.group_id,
        truth=_truth(d),
        n_resamples=200,
        level=0.99,
    )
    for o in OPERATORS:
        x = c.crossover[o]
        t, p = x["truth"]["budget"], x["predicted"]
        if t is None:
            assert p["budget"] is None or p["share_with_crossover"] < 1
            continue
        assert _covers(p["lower"], p["upper"], t, tol=0.02 * t), (o, p, t)


def test_identify_input_errors(locomo_small):
    d = locomo_small.take(np.arange(20))
    s = paired_structure(d)
    with pytest.raises(InputError, match="outcomes must have shape"):
        oas.identify(
            jax.random.key(0),
            oas.reader_rows(s, d.budget, d.query_type_slot, d.outcomes[:, :3], d.group_id),
        )
    with pytest.raises(InputError, match="level must be in"):
        oas.identify(
            jax.random.key(0),
            oas.reader_rows(s, d.budget, d.query_type_slot, d.outcomes, d.group_id),
            level=1.5,
        )
    with pytest.raises(InputError, match="n_folds must be at most the number of groups"):
        oas.grouped_folds(jax.random.key(0), d.group_id, 99)


@pytest.mark.slow  # moved from the fast tier to keep it under 3 minutes on 2 cores
def test_cli_identify_json_and_files(tmp_path, capsys, locomo_small):
    from retcon.cli import main

    path = tmp_path / "p.jsonl"
    oas.write_paired(path, locomo_small)
    rc = main(
        [
            "identify",
            "--data",
            str(path),
            "--folds",
            "2",
            "--resamples",
            "20",
            "--strata",
            "2",
            "--no-diagnostics",
            "--json",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 0
    rep = json.loads(capsys.readouterr().out)
    assert {r["parameter"] for r in rep["parameters"]} >= {"g", "a", "phi_merge"}
    assert set(rep["overall"]["crossover"]) == set(OPERATORS)
    assert len(rep["strata"]) == 2
    m = rep["misfit"]  # the score tests (oas._misfit), one per operator and kind
    assert isinstance(m["misfit"], bool) and 0 < m["p_value"] <= 1
    assert {(t["operator"], t["test"]) for t in m["tests"]} == {
        (o, k) for o in OPERATORS for k in ("budget", "stratum")
    }
    assert all(0 < t["p_value"] <= t["p_holm"] <= 1 for t in m["tests"])
    assert set(m["operators"]) == set(OPERATORS)
    x = rep["overall"]["crossover"]["merge"]["predictive"]
    assert x["lower"] <= x["budget"] <= x["upper"]
    from oas._magnitude import format_report

    text = format_report(rep)
    assert f"misfit: {'yes' if m['misfit'] else 'no'} (p = " in text
    assert "merge" in text.split("misfit:")[1]
    assert (tmp_path / "o" / "identify.json").is_file()
    assert (tmp_path / "o" / "identify_curves.png").is_file()
    side = json.loads((tmp_path / "o" / "sidecar.json").read_text())  # as every --out set
    assert side["command"] == "retcon identify" and "identify.json" in side["files_sha256"]
    assert main(["identify", "--data", str(path), "--folds", "1"]) == 2
    assert "--folds must be" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(sim.PRESETS))
def test_presets_predicted_crossover_covers_the_simulated_one(preset):
    """Every sim preset: parameters' CIs cover the scenario's values; each operator's predicted
    crossover CI covers the crossover of the true dU(B) of the held-out rows."""
    sc = sim.load_scenario(preset)
    d = oas.simulate_paired(jax.random.key(0), preset, 30000)
    s = paired_structure(d)
    key = jax.random.key(1)
    fit = oas.identify(
        key,
        oas.reader_rows(s, d.budget, d.query_type_slot, d.outcomes, d.group_id),
        n_resamples=100,
    )
    g, a, phi = _true_params(sc)
    # up to 17 95% intervals per preset: 0.02 absolute slack so one expected miss does not fail
    assert _covers(fit.lower.acc_guess, fit.upper.acc_guess, g, tol=0.02)
    for t in np.flatnonzero(np.isfinite(a)):
        assert _covers(fit.lower.acc_raw[t], fit.upper.acc_raw[t], a[t], tol=0.02), t
        for j in range(3):
            assert _covers(
                fit.lower.fidelity[j, t], fit.upper.fidelity[j, t], phi[j, t], tol=0.02
            ), (j, t)
    oof = oas.out_of_fold(
        key,
        oas.reader_rows(s, d.budget, d.query_type_slot, d.outcomes, d.group_id),
        folds=3,
        n_resamples=100,
    )
    c = oas.compare_crossovers(
        key, oof.p, oof.p_boot, d.budget, d.outcomes, d.group_id, truth=_truth(d), n_resamples=300
    )
    for o in OPERATORS:
        x = c.crossover[o]
        assert _covers(x["predicted"]["lower"], x["predicted"]["upper"], x["truth"]["budget"], 0), o


def _theta_of(g, a, phi):
    from jax.scipy.special import logit

    a = np.where(np.isfinite(a), a, 0.5)
    phi = np.where(np.isfinite(phi), phi, 1.0)
    return np.concatenate(
        [[float(logit(g))], np.asarray(logit((a - g) / (1 - g))), np.log(phi).ravel()]
    )


@pytest.mark.slow  # moved from the fast tier to keep it under 3 minutes on 2 cores
def test_theory_router_with_true_parameters_predicts_the_true_probabilities():
    """MODEL §2, single-cluster scenario: the router's pre-generation structure (raw context and
    rho) is the true one, so with the scenario's reader it predicts every row's true p_a."""
    from oas._theory_router import TheoryRouter

    sc = _single_scenario(0.8, 0.1, (0.9, 0.7, 0.95), (0.5, 0.25, 0.7), 300.0)
    d = oas.simulate_paired(jax.random.key(5), sc, 2000)
    g, a, phi = 0.1, np.array([0.8, np.nan, np.nan, np.nan]), np.full((3, 4), np.nan)
    phi[:, 0] = (0.9, 0.7, 0.95)
    cr = np.ones((3, 4))
    cr[:, 0] = (0.5, 0.25, 0.7)
    r = TheoryRouter(_theta_of(g, a, phi), cr)
    p = r.success(paired_structure(d), d.budget, d.query_type_slot)
    np.testing.assert_allclose(p, _truth(d), atol=1e-5)
    np.testing.assert_array_equal(
        r.choose(paired_structure(d), d.budget, d.query_type_slot),
        oas.argmax_policy(p),
    )


@pytest.mark.slow
def test_router_json_carries_the_theory_block(tmp_path, locomo_small):
    from oas._router import load_router, save_router

    router = oas.fit_router(jax.random.key(0), locomo_small)
    assert router.theory is not None and router.theory.n_params == 17
    path = tmp_path / "r.json"
    save_router(path, router)
    back = load_router(path)
    np.testing.assert_allclose(back.theory.theta, router.theory.theta)
    s = paired_structure(locomo_small)
    np.testing.assert_array_equal(
        back.theory.choose(s, locomo_small.budget, locomo_small.query_type_slot),
        router.theory.choose(s, locomo_small.budget, locomo_small.query_type_slot),
    )
    obj = json.loads(path.read_text())
    obj["theory"]["theory_version"] = 9
    path.write_text(json.dumps(obj))
    with pytest.raises(InputError, match="theory.theory_version"):
        load_router(path)


@pytest.mark.slow  # moved from the fast tier to keep it under 3 minutes on 2 cores
def test_evaluate_scores_the_theory_router(locomo_small):
    from oas._evaluate import evaluation_json

    ev = oas.evaluate(jax.random.key(0), locomo_small, n_resamples=100)
    assert ev.policies[-1] == "theory"
    out = evaluation_json(ev)
    assert "theory - best-fixed" in out["differences"]
    assert out["info"]["theory_params"] == 17
    acc = out["policies"]["theory"]["accuracy"]
    assert (
        out["policies"]["always-ret"]["accuracy"] - 0.05
        <= acc
        <= out["policies"]["oracle"]["accuracy"]
    )


def test_real_pairing_writes_the_structure(tmp_path):
    """MODEL §2, real data: the rows of `retcon pair locomo` carry each action's packed records,
    and the support computed from them under `cut` packing lies in [0, 1] and grows with B."""
    from pathlib import Path

    from retcon.cli import main

    fix = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_tiny.json"
    out = tmp_path / "p.jsonl"
    assert main(["pair", "locomo", "--data", str(fix), "--output", str(out), "--no-progress"]) == 0
    d = oas.read_paired(out)
    s = paired_structure(d)
    assert set(s.packing.tolist()) == {"cut"}
    assert (s.lengths[:, 0][s.evidence[:, 0]] > 0).all()
    frac = oas.support_fractions(s, d.budget)
    assert ((frac >= 0) & (frac <= 1)).all()
    for q in np.unique(d.query_id):
        rows = np.flatnonzero(d.query_id == q)
        order = rows[np.argsort(d.budget[rows])]
        assert (np.diff(frac[order, 0]) >= 0).all()


def test_magnitude_section_markdown():
    from paper_checks.studies._magnitude import magnitude_markdown

    cross = {"budget": 120.0, "lower": 100.0, "upper": 140.0, "status": "unique"}
    none = {"budget": None, "status": "none"}
    c = {
        "n_rows": 10,
        "crossover": {o: {"predicted": cross, "observed": none, "truth": None} for o in OPERATORS},
    }
    md = magnitude_markdown({"a": {"overall": c, "strata": []}, "b": {"skipped": "no data"}})
    assert "## Beyond the paper: magnitude" in md
    assert "| a all | 10 | merge | 120 [100, 140] | none (none) |" in md
    assert "skipped: no data" in md


def test_predicted_band_is_over_resamples():
    """The pointwise band of the predicted curve is a percentile over bootstrap refits: with every
    refit equal to the point fit it collapses onto the predicted curve."""
    rng = np.random.default_rng(0)
    n = 40
    budget = np.repeat([10.0, 20.0, 40.0, 80.0], n // 4)
    p = rng.uniform(size=(n, 4))
    y = (rng.uniform(size=(n, 4)) < p).astype(float)
    groups = np.arange(n) % 5
    c = oas.compare_crossovers(
        jax.random.key(0), p, np.stack([p] * 7), budget, y, groups, n_resamples=50
    )
    np.testing.assert_allclose(c.predicted_lower, c.predicted)
    np.testing.assert_allclose(c.predicted_upper, c.predicted)
    assert c.predicted.shape == (3, 4) and c.observed_lower.shape == (3, 4)


@pytest.mark.parametrize("lead", [(), (7,)])
def test_curve_by_budget_has_the_bits_of_the_one_hot_contraction(lead):
    """``_curve``'s masked sums per grid budget equal the one-hot ``einsum`` it replaced, bit for
    bit (the same additions in row order), NaN where a grid budget has no row (MODEL §3, dU)."""
    from oas._out_of_fold import _curve

    rng = np.random.default_rng(5)
    grid = np.array([8.0, 16.0, 32.0, 64.0, 128.0])
    budget = rng.choice(grid[:4], size=500)  # 128 has no row
    values = rng.normal(size=(*lead, 500, 3))
    onehot = (budget[:, None] == grid[None, :]).astype(np.float64)
    counts = onehot.sum(0)
    want = (
        np.einsum("nm,...nk->...mk", onehot, values) / np.where(counts > 0, counts, np.nan)[:, None]
    )
    got = _curve(values, budget, grid)
    assert got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
    assert np.isnan(got[..., 4, :]).all()
