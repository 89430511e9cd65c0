"""Builders shared by the sim tests: scenarios from a few numbers, in the TOML layout."""

import pytest

from sim._scenario import scenario_from_dict

# The three packings (MODEL §3), each a compile of its own: the slow tier.
SLOW_PACKINGS = [pytest.param(p, marks=pytest.mark.slow) for p in ("prefix", "skip", "cut")]


def make_scenario(
    *,
    records=1,
    redundancy=0.0,
    dist=None,
    rho=(0.5, 0.25, 0.7),
    phi=(0.9, 0.7, 0.95),
    acc_raw=0.8,
    acc_guess=0.0,
    packing="prefix",
    order="oracle",
    distractors=0,
    noise=0.0,
    budgets=(16.0, 8192.0, 24),
    queries=4096,
    vocabulary="locomo",
):
    """A one-type scenario (``single-hop`` / ``single-session``) from explicit values."""
    name = "single-hop" if vocabulary == "locomo" else "single-session"
    dist = dist or {"dist": "gamma", "shape": 2.0, "scale": 300.0}
    lo, hi, n = budgets
    return scenario_from_dict(
        {
            "name": "test",
            "vocabulary": vocabulary,
            "packing": packing,
            "queries": queries,
            "budgets": {"min": lo, "max": hi, "count": n},
            "types": {
                name: {"weight": 1.0, "records": records, "redundancy": redundancy, "length": dist}
            },
            "operators": {
                op: {"compress_ratio": r, "fidelity": f}
                for op, r, f in zip(("merge", "abstract", "rewrite"), rho, phi)
            },
            "reader": {"acc_guess": acc_guess, "acc_raw": acc_raw},
            "retriever": {"order": order, "distractors": distractors, "noise": noise},
        }
    )


def two_type(
    *,
    w1=0.5,
    w3=0.5,
    redundancy=0.2,
    rho=(0.55, 0.3, 0.7),
    phi=(0.9, 0.75, 0.95),
    packing="prefix",
    noise=0.7,
    distractors=6,
    acc_guess=0.1,
    budgets=(4.0, 1024.0, 24),
    recall=1.0,
):
    """single-hop clusters of one record and multi-hop clusters of three, lognormal turns, a noisy
    retriever among distractors: one kernel structure for most property tests (few compilations)."""
    lo, hi, n = budgets
    length = {"dist": "lognormal", "sigma": 0.5, "scale": 30.0}
    return scenario_from_dict(
        {
            "name": "two-type",
            "vocabulary": "locomo",
            "packing": packing,
            "queries": 4096,
            "budgets": {"min": lo, "max": hi, "count": n},
            "types": {
                "single-hop": {"weight": w1, "records": 1, "length": length},
                "multi-hop": {
                    "weight": w3,
                    "records": 3,
                    "redundancy": redundancy,
                    "length": length,
                },
            },
            "operators": {
                op: {"compress_ratio": r, "fidelity": f}
                for op, r, f in zip(("merge", "abstract", "rewrite"), rho, phi)
            },
            "reader": {"acc_guess": acc_guess, "acc_raw": {"single-hop": 0.85, "multi-hop": 0.7}},
            "retriever": {
                "order": "noisy" if noise > 0 else "oracle",
                "distractors": distractors,
                "noise": noise,
                "recall": recall,
            },
        }
    )


def frontier_equals_per_budget(scenario):
    """MODEL §2-§4: assert that the frontier path and the per-budget packing give the same m, G_B,
    H_B and block sums bit for bit on 3000 queries (10 of them padding); returns the frontier's
    per-query outcomes."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import sim

    K = sim.kernel
    st_, pr = K.split(scenario)
    b = jnp.asarray(scenario.budgets, jnp.float32)
    key, idx = jax.random.key(11), jnp.arange(3000, dtype=jnp.int32)
    _, a = K.query_outcomes(key, idx, b, pr, st=st_, method="frontier")
    _, c = K.query_outcomes(key, idx, b, pr, st=st_, method="per-budget")
    for x, y in zip(a, c):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    valid = idx < 2990  # padding rows count for nothing either way
    s1 = K.chunk_block_sums(key, idx, valid, b, pr, st=st_, n_blocks=8)
    s2 = K.chunk_block_sums(key, idx, valid, b, pr, st=st_, n_blocks=8, method="per-budget")
    for x, y in zip(s1, s2):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    return a
