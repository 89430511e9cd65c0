"""The router over time (MODEL §10; issue 21 item 5): its choice against a brute-force search, its
invariants, its parameters, the simulation's pairing with the timeline kernel, LoCoMo leave one
conversation out, and `retcon timeline --policy router`'s bad input."""

import json
from pathlib import Path

import numpy as np
import pytest

from retcon.errors import InputError
from tests._cli import run_cli as _run
from tests._toy import stream_toml

T, K = 6, 3  # one compiled shape for the fast tests
LOCOMO = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "locomo" / "locomo10.json"


def _reference_levels(current, ratio, value, budget):
    """MODEL §10 router, written out: after each session, enumerate every state along overflow's
    order one pass at a time (fewest passes, oldest first; at most K), score each by
    sum of v(k_s) over the units that fit most recent first (prefix packing), take the best, the
    fewest passes among ties."""
    from oas._timeline_router import TIE, predicted_lengths

    n_units, k1 = current.shape
    kmax = k1 - 1
    pred = predicted_lengths(current, ratio)
    k = np.zeros(n_units, int)
    out = []
    for t in range(n_units):
        n = t + 1
        k0 = k.copy()
        states = [k.copy()]
        kk = k.copy()
        while True:
            cand = [s for s in range(n) if kk[s] < kmax]
            if not cand:
                break
            low = min(kk[s] for s in cand)
            s = min(s for s in cand if kk[s] == low)
            kk = kk.copy()
            kk[s] += 1
            states.append(kk)
        scores = []
        for st in states:
            lens = np.array([pred[s, k0[s], st[s]] for s in range(n)])[::-1]
            fit = np.cumsum(lens) <= budget
            scores.append(float(np.sum(value[st[:n][::-1]] * fit)))
        scores = np.array(scores)
        best = scores.max()
        k = states[int(np.argmax(scores >= best - TIE * (1 + abs(best))))]
        out.append([int((k[:n] >= lv).sum()) for lv in range(1, kmax + 1)])
    return np.array(out)


def _levels(current, ratio, value, budget):
    import jax.numpy as jnp

    from oas._timeline_router import _router_levels_jit, predicted_lengths

    return np.asarray(
        _router_levels_jit(
            jnp.asarray(predicted_lengths(current, ratio), jnp.float32),
            jnp.asarray(value, jnp.float32),
            jnp.float32(budget),
        )
    )


def _case(rng, h10: bool):
    lengths = rng.lognormal(5.0, 0.6, T)
    ratio = rng.uniform(0.2, 0.95, K)
    steps = ratio if h10 else rng.uniform(0.2, 0.95, K)  # observed lengths off the prediction
    current = lengths[:, None] * np.concatenate([[1.0], np.cumprod(steps)])[None]
    return current, ratio, float(rng.uniform(0.3, 3.0) * lengths.mean() * 2)


def test_router_equals_brute_force_search():
    """MODEL §10 router: the O(K T log T) scoring picks the state a search over every state along
    the pass order picks, for decreasing and arbitrary v(k), H10 and observed lengths."""
    rng = np.random.default_rng(3)
    for trial in range(12):
        current, ratio, budget = _case(rng, h10=trial % 2 == 0)
        value = rng.uniform(0, 1, K + 1)
        if trial % 3:
            value = np.sort(value)[::-1]
        want = _reference_levels(current, ratio, value, budget)
        got = _levels(current, ratio, value, budget)
        np.testing.assert_array_equal(got, want, err_msg=f"trial {trial}")


def test_router_invariants():
    """MODEL §10: when all raw units fit the router never passes one; when a pass destroys the
    answer (v(k) = 0 for k >= 1) it never consolidates (retain-all); when passes lose nothing
    (v constant) it makes every unit fit when the passes allow it, with the fewest passes."""
    rng = np.random.default_rng(5)
    current, ratio, _ = _case(rng, h10=True)
    total = current[:, 0].sum()
    flat = np.full(K + 1, 0.5)
    assert not _levels(current, ratio, flat, total * 1.01).any()
    dead = np.array([0.7] + [0.0] * K)
    assert not _levels(current, ratio, dead, total * 0.3).any()
    budget = total * 0.6
    lv = _levels(current, ratio, flat, budget)
    for t in range(T):
        k = (np.arange(T)[:, None] < lv[t][None, :]).sum(1)[: t + 1]
        size = current[np.arange(t + 1), k].sum()
        assert size <= budget * (1 + 1e-6)
        if k.any():  # one pass fewer (undo the last pass in overflow order) would not fit
            top = k.min() if (k == k.min()).all() else k.min() + 1
            s = int(np.max(np.flatnonzero(k == top)))
            k2 = k.copy()
            k2[s] -= 1
            assert current[np.arange(t + 1), k2].sum() > budget


def test_predicted_lengths_and_router_validation():
    """The predicted length table is the observed length times the later passes' ratios; bad
    router parameters raise one-line errors naming the field."""
    from oas import TimelineRouter
    from oas._timeline_router import predicted_lengths

    cur = np.array([[100.0, 40.0, 30.0], [10.0, 9.0, 1.0]])
    pred = predicted_lengths(cur, [0.5, 0.25])
    np.testing.assert_allclose(pred[0, 0], [100.0, 50.0, 12.5])
    np.testing.assert_allclose(pred[0, 1, 1:], [40.0, 10.0])
    np.testing.assert_allclose(pred[1, 2, 2], 1.0)
    for kw, word in [
        ({"value": [1.0], "ratio": []}, "value"),
        ({"value": [1.0, np.nan], "ratio": [0.5]}, "value"),
        ({"value": [1.0, 0.5], "ratio": [0.5, 0.5]}, "ratio"),
        ({"value": [1.0, 0.5], "ratio": [0.0]}, "ratio"),
    ]:
        with pytest.raises(InputError, match=word):
            TimelineRouter(**kw)
    with pytest.raises(InputError, match="current"):
        predicted_lengths(np.ones((2, 2)), [0.5, 0.5])


def test_fit_timeline_router_pools_training_sums():
    """LoCoMo fit: ratios of pooled lengths, v(k) = share correct from the evidence after k passes
    minus g, g = share correct with the evidence out of context (oas.real._timeline_router)."""
    from oas.real._timeline_router import _Stats, fit_timeline_router

    a, b = _Stats(2), _Stats(2)
    a.len_sum[:] = [100.0, 50.0, 40.0]
    b.len_sum[:] = [300.0, 100.0, 40.0]
    a.hits[:], a.asked = [8.0, 6.0, 4.0], 10.0
    b.hits[:], b.asked = [10.0, 6.0, 6.0], 10.0
    a.guess_hits, a.guess_n, b.guess_hits, b.guess_n = 1.0, 10.0, 1.0, 10.0
    r = fit_timeline_router([a, b])
    np.testing.assert_allclose(r.ratio, [150 / 400, 80 / 150])
    np.testing.assert_allclose(r.guess, 0.1)
    np.testing.assert_allclose(r.value, [0.9 - 0.1, 0.6 - 0.1, 0.5 - 0.1])
    with pytest.raises(InputError, match="training"):
        fit_timeline_router([])


@pytest.mark.parametrize(
    "argv",
    [
        ["timeline", "--policy", "routr"],
        ["timeline", "--policy", "router", "--queries", "1"],
        ["timeline", "locomo", "--policy", "router"],
        ["timeline", "locomo", "--data", "{missing}", "--policy", "router"],
    ],
)
def test_timeline_router_bad_input(argv, tmp_path, capsys):
    """`retcon timeline --policy router`: bad input exits 2 with one line, nothing on stdout."""
    argv = [a.format(missing=str(tmp_path / "no.json")) for a in argv]
    rc, out, err = _run(argv, capsys)
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert out == ""
    if "routr" in argv:
        assert "router" in err and "--policy" in err


STREAM = (
    stream_toml((300.0, 900.0), acc_guess=0.1)
    + """[stream]
sessions = 8
session_length = {dist = "exponential", mean = 100.0}
cap = 600.0
max_generation = 12
"""
)


@pytest.mark.slow
def test_simulated_router_pairs_with_the_timeline(tmp_path):
    """MODEL §10: the router's streams are the timeline kernel's (same seed, same draws): a router
    whose passes destroy the answer is retain-all to the bit, and one whose passes lose nothing
    is budget-aware (every unit fits with the fewest passes: 8 units, 12 passes allowed)."""
    import sim
    from oas import TimelineRouter, simulate_router_timeline
    from retcon.vocab import OPERATORS

    p = tmp_path / "s.toml"
    p.write_text(STREAM, encoding="utf-8")
    ss = sim.load_stream(str(p))
    r = sim.simulate_timeline(ss, queries=64, seed=4)
    kmax = ss.stream.max_generation
    rhos = [o.compress_ratio for o in ss.scenario.operators]
    dead = [TimelineRouter(np.array([0.7] + [0.0] * kmax), np.full(kmax, rho)) for rho in rhos]
    out = simulate_router_timeline(ss, dead, budgets=r.budgets, queries=64, seed=4)
    ret = r.outcome[:, r.rows.index(("retain-all", None))]
    for oi in range(len(OPERATORS)):
        np.testing.assert_array_equal(out[:, oi], ret)
    flat = [TimelineRouter(np.full(kmax + 1, 0.7), np.full(kmax, rho)) for rho in rhos]
    out = simulate_router_timeline(ss, flat, budgets=r.budgets, queries=64, seed=4)
    for oi, op in enumerate(OPERATORS):
        ba = r.outcome[:, r.rows.index(("budget-aware", op))]
        np.testing.assert_array_equal(out[:, oi], ba)


@pytest.mark.slow
def test_timeline_router_cli_json(tmp_path, capsys):
    """`retcon timeline --scenario F --policy router --json`: router rows and paired gains."""
    p = tmp_path / "s.toml"
    p.write_text(STREAM, encoding="utf-8")
    argv = ["timeline", "--scenario", str(p), "--policy", "router", "--resamples", "0", "--json"]
    rc, out, err = _run(argv, capsys)
    assert rc == 0, err
    rep = json.loads(out)
    assert {u["policy"] for u in rep["utility"]} >= {"router", "retain-all"}
    gains = rep["router"]["gains"]
    assert {g["baseline"] for g in gains} == {
        "retain-all",
        "overflow",
        "periodic",
        "budget-aware",
        "tiered",
    }
    assert all(g["lower"] <= g["gain"] <= g["upper"] for g in gains)


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.is_file(), reason="LoCoMo not in ../shared/data/locomo")
def test_locomo_router_is_fitted_without_the_held_out_conversation():
    """Leave one conversation out: each fold's router equals the fit on the other conversations'
    sums alone, and the router never passes a unit more than --passes times."""
    from oas import route_stream
    from oas.real import load_locomo
    from oas.real._timeline import chain_tables, pass_chain, stream_steps
    from oas.real._timeline_router import (
        conversation_stats,
        fit_timeline_router,
        timeline_router_report,
    )

    convs = load_locomo(str(LOCOMO)).conversations[:3]
    rep = timeline_router_report(convs, passes=2, budgets=(1024.0,))
    assert rep["conversations"] == 3
    chains = [pass_chain(c, "merge", 2) for c in convs]
    stats = [conversation_stats(c, ch, 2, []) for c, ch in zip(convs, chains)]
    for i, fold in enumerate(rep["fits"]):
        want = fit_timeline_router([s for j, s in enumerate(stats) if j != i])
        got = fold["routers"]["merge"]
        np.testing.assert_allclose(got["ratio"], want.ratio)
        # v(k) + g is the share correct from the evidence: independent of the guess records
        np.testing.assert_allclose(np.asarray(got["value"]) + got["guess"], want.value + want.guess)
        order = list(stream_steps(convs[i])[-1].session_ids)
        _, length = chain_tables(chains[i], order, 2)
        router = fit_timeline_router([s for j, s in enumerate(stats) if j != i])
        gens = route_stream(length, router, 1024.0)
        assert gens.max() <= 2 and not np.triu(gens, 1).any()
    assert {g["baseline"] for g in rep["gains"]} >= {"retain-all", "budget-aware"}


@pytest.mark.slow
def test_timeline_router_finding_error_rates():
    """docs/statistics.md step 6: the LoCoMo finding's rule (exact sign-flip test, Holm over 9
    cells, G = 10) makes a false call in at most about 5% of symmetric null worlds and finds a
    large effect (about 2 sd) every time."""
    from oas.real._timeline_router import timeline_router_error_rates

    rows = timeline_router_error_rates(1, worlds=400, effects=(0.0, 3.0))
    null = next(r for r in rows if r["law"] == "normal" and r["effect"] == 0.0)
    assert 1.0 - null["no difference shown"] <= 0.05 + 3 * (0.05 * 0.95 / 400) ** 0.5
    big = next(r for r in rows if r["law"] == "normal" and r["effect"] == 3.0)
    assert big["beats"] >= 0.95
