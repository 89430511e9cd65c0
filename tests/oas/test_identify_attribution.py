"""Whose misfit (issue 30 item 4): a reader that degrades with context size is told from the
operators' fidelity drifting with the budget, by retention's rows (``oas._identify_misfit``).

Fast tier: one world of each kind and the retention test against JAX's derivative. Slow tier:
the rates of docs/identify.md ("Whose misfit")."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oas
from oas._identify import N_PARAMS, success_prob
from oas._identify_misfit import (
    _context_x,
    _reader_direction,
    format_misfit_attribution,
    misfit_attribution,
    reader_context_test,
)
from tests._identify_worlds import make_world, misfit_args, random_reader


def degrade(rng, w, reader, per_doubling: float):
    """``w`` with a reader whose every action's accuracy above chance shrinks by ``per_doubling``
    per doubling of that action's packed context (``min(B, its records' tokens)``, 1 at 256
    tokens); outcomes redrawn with one uniform per row (paired actions)."""
    total = w.structure.lengths.sum(-1)  # (n, 4)
    ctx = np.maximum(np.minimum(w.budget[:, None], total), 1.0)
    f = np.exp(np.log(per_doubling) * (np.log2(ctx) - np.log2(256.0)))
    g = reader.acc_guess
    p = np.clip(g + (w.truth - g) * f, 0.0, 1.0)
    u = rng.uniform(size=(p.shape[0], 1))
    return w._replace(outcomes=(u < p).astype(float), truth=p)


def world(kind: str, seed: int):
    rng = np.random.default_rng(seed)
    r = random_reader(rng)
    w = make_world(rng, r, drift=(1.25, 0.75) if kind == "fidelity" else None)
    return degrade(rng, w, r, 0.9) if kind == "reader" else w


def attribute(w, seed: int = 0) -> dict:
    return misfit_attribution(*misfit_args(w, seed))


@pytest.mark.parametrize(
    ("kind", "want"),
    [pytest.param("fidelity", "operators", marks=pytest.mark.slow), ("reader", "reader")],
)
def test_one_world_of_each_kind_is_attributed(kind, want):
    m = attribute(world(kind, 100))
    assert m["misfit"] and m["looks_like"] == want, m["reader_test"]
    line = format_misfit_attribution(m).splitlines()[-1]
    assert line.startswith(f"  looks like: {want} (")
    if want == "reader":
        assert m["reader_test"]["estimate"]["a_factor_per_doubling"] < 1.0


def test_retention_score_matches_jax():
    """The tested direction is d p_ret / d gamma of ``g + (a_t - g) exp(gamma x) s_ret`` at 0."""
    w = world("well", 3)
    theta = jnp.asarray(np.random.default_rng(0).normal(0, 0.3, N_PARAMS))
    frac = jnp.asarray(oas.support_fractions(w.structure, w.budget))
    x = jnp.asarray(_context_x(w.structure, w.budget))
    slot = jnp.asarray(w.slot)

    def p_ret(gamma):
        g = jax.nn.sigmoid(theta[0])
        a = g + (1 - g) * jax.nn.sigmoid(theta[1:5])[slot]
        return g + (a - g) * jnp.exp(gamma * x) * frac[:, 0]

    want = jax.jacfwd(p_ret)(0.0)
    base = jnp.asarray(success_prob(theta, frac, slot))[:, 0]
    assert np.allclose(p_ret(0.0), base, atol=1e-6)
    rows = oas.reader_rows(w.structure, w.budget, w.slot, w.outcomes, w.groups)
    got = _reader_direction(np.asarray(theta), rows)
    assert np.any(got != 0)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-4, atol=1e-6)
    r = reader_context_test(jax.random.key(0), rows, np.asarray(theta))
    assert np.isfinite(r["p_value"]) and 0 < r["p_value"] <= 1


@pytest.mark.slow
def test_attribution_rates():
    """20 data sets per world (docs/identify.md): well specified, no misfit in at least 17 and
    never a reader attribution in more than 2; fidelity drift, "operators" in at least 18;
    a reader losing 10% of its accuracy above chance per doubling of context, "reader" in at
    least 18."""
    res = {
        k: [attribute(world(k, 100 + i), i) for i in range(20)]
        for k in ("well", "fidelity", "reader")
    }
    looks = {k: [m["looks_like"] for m in v] for k, v in res.items()}
    assert looks["well"].count("none") >= 17 and looks["well"].count("reader") <= 2
    assert looks["fidelity"].count("operators") >= 18
    assert looks["reader"].count("reader") >= 18
