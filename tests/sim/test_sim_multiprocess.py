"""The simulation over two JAX processes on 127.0.0.1 (``jax.distributed``, CPU collectives via
gloo) returns the one-process numbers bit for bit.

The query axis is cut into small chunks so both processes work (every other chunk each); the
block sums are exact integers, so the totals cannot depend on who added what (MODEL §3-§4: every
``U``, ``dU``, ``C``, ``R`` and standard error derives from them).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest

from retcon.errors import InputError

REPO = Path(__file__).resolve().parents[2]
N_QUERIES, SEED, CHUNK = 5000, 3, 1024

WORKER = textwrap.dedent(
    """
    import sys, numpy as np, jax
    from sim._multiprocess import initialize_from_env
    assert initialize_from_env()
    import sim._simulate as S
    from sim import load_scenario
    S.CHUNK_QUERIES = {chunk}  # several chunks: both processes take some
    res = S.simulate(jax.random.key({seed}), load_scenario("locomo-like"), {n})
    assert jax.process_count() == 2
    if jax.process_index() == 0:
        np.savez(sys.argv[1], **{{k: np.asarray(v) for k, v in res._asdict().items()}})
    jax.distributed.shutdown()
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra) -> dict:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("RETCON_") or k == "RETCON_DATA_DIR"
    }
    env.update(PYTHONPATH=str(REPO), JAX_PLATFORMS="cpu", **extra)
    env.pop("XLA_FLAGS", None)  # one CPU device per process
    return env


@pytest.mark.slow
def test_two_processes_give_the_one_process_numbers_bit_for_bit(tmp_path):
    from sim import load_scenario, simulate

    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(chunk=CHUNK, seed=SEED, n=N_QUERIES))
    coord = f"127.0.0.1:{_free_port()}"
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / "two.npz")],
            cwd=REPO,
            env=_env(RETCON_COORDINATOR=coord, RETCON_NUM_PROCESSES="2", RETCON_PROCESS_ID=str(i)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for p in procs:
        try:
            _, err = p.communicate(timeout=600)
        finally:
            if p.poll() is None:
                p.kill()
        assert p.returncode == 0, err[-3000:]
    two = np.load(tmp_path / "two.npz")
    one = simulate(jax.random.key(SEED), load_scenario("locomo-like"), N_QUERIES, backend="jax")
    assert int(two["n_queries"]) == one.n_queries == N_QUERIES
    for name, value in one._asdict().items():
        a, b = np.asarray(value), two[name]
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name  # bit for bit, NaNs included


@pytest.mark.slow
def test_cli_processes_2_prints_the_one_process_report(capsys):
    from retcon.cli import main

    args = ["simulate", "--queries", "3000", "--resamples", "20", "--seed", "1", "--json"]
    r = subprocess.run(
        [sys.executable, "-m", "retcon", *args, "--processes", "2"],
        check=False,
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "[Gloo]" not in r.stderr + r.stdout  # gloo's connection lines reach no user stream
    assert main([*args, "--backend", "jax"]) == 0  # processes run the JAX kernel
    one, two = json.loads(capsys.readouterr().out), json.loads(r.stdout)  # stdout: the report only
    assert "timing" not in one and "timing" not in two  # wall-clock seconds only with --timing
    assert one == two
    assert two["n_queries"] == 3000


def test_partial_environment_is_an_input_error(monkeypatch):
    from sim._multiprocess import initialize_from_env

    for k in ("RETCON_DISTRIBUTED", "RETCON_COORDINATOR", "RETCON_NUM_PROCESSES"):
        monkeypatch.delenv(k, raising=False)
    assert initialize_from_env() is False
    monkeypatch.setenv("RETCON_COORDINATOR", "127.0.0.1:1")
    monkeypatch.setenv("RETCON_PROCESS_ID", "0")
    with pytest.raises(InputError, match="RETCON_NUM_PROCESSES and RETCON_PROCESS_ID"):
        initialize_from_env()
    monkeypatch.setenv("RETCON_NUM_PROCESSES", "2")
    monkeypatch.setenv("RETCON_PROCESS_ID", "2")
    with pytest.raises(InputError, match=r"RETCON_PROCESS_ID must be in \[0, RETCON_NUM"):
        initialize_from_env()


def test_bad_processes_option(capsys):
    from retcon.cli import main

    assert main(["simulate", "--processes", "0", "--queries", "10"]) == 2
    assert "--processes must be an integer >= 1; got 0" in capsys.readouterr().err
