"""Scale-out: the same numbers on 8 (forced host) devices as on one."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import sim
from tests._sim_helpers import two_type

REPO = Path(__file__).resolve().parents[2]
N = 4096

SCRIPT = f"""
import json, jax, numpy as np, sim
from tests._sim_helpers import two_type
assert len(jax.devices()) == 8, jax.devices()
r = sim.simulate(jax.random.key(3), two_type(), {N}, backend='jax')
cx = sim.simulated_crossover(jax.random.key(1), r, n_resamples=200)
print(json.dumps({{"delta": r.delta.tolist(), "coverage": r.coverage.tolist(), "se": r.delta_se.tolist(),
                  "utility": r.utility.tolist(), "cross": np.nan_to_num(cx.crossover_budget).tolist(),
                  "lo": np.nan_to_num(cx.ci_lower).tolist()}}))
"""


@pytest.mark.slow
def test_eight_devices_give_the_one_device_numbers():
    """Integer block sums are order-free, so sharding the query axis changes no bit."""
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
        "JAX_PLATFORMS": "cpu",
        "PYTHONPATH": str(REPO),
    }
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=True,
    )
    eight = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(jax.devices()) == 1
    r = sim.simulate(jax.random.key(3), two_type(), N, backend="jax")
    cx = sim.simulated_crossover(jax.random.key(1), r, n_resamples=200)
    assert np.array_equal(np.asarray(eight["delta"]), r.delta)
    assert np.array_equal(np.asarray(eight["coverage"]), r.coverage)
    assert np.array_equal(np.asarray(eight["utility"]), r.utility)
    assert np.array_equal(np.asarray(eight["se"]), r.delta_se)
    assert np.array_equal(np.asarray(eight["cross"]), np.nan_to_num(cx.crossover_budget))
    assert np.array_equal(np.asarray(eight["lo"]), np.nan_to_num(cx.ci_lower))


@pytest.mark.slow
def test_chunking_changes_nothing(monkeypatch):
    """Chunks of any size give the same totals (queries are keyed by their global index)."""
    from sim import _simulate

    r1 = sim.simulate(jax.random.key(3), two_type(), N, backend="jax")
    monkeypatch.setattr(_simulate, "CHUNK_QUERIES", 1024)
    r2 = sim.simulate(jax.random.key(3), two_type(), N, backend="jax")
    assert np.array_equal(r1.delta, r2.delta) and np.array_equal(r1.delta_se, r2.delta_se)
