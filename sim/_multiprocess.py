"""The simulation over several JAX processes (``jax.distributed``): same numbers as one process.

Each process runs every ``P``-th chunk of the query axis on its own devices; the per-block integer
sums of all processes are then gathered and added (``multihost_utils.process_allgather``). Integer
addition is exact and order-free and block membership depends on the query index only (query ``i``
is in block ``i % n_blocks``), so the totals, and every number derived from them, equal the
single-process run's bit for bit, whatever the number of processes or devices.

Start a multi-process run in one of three ways:

* ``retcon simulate --processes N`` on one host: ``launch`` starts ``N`` worker processes that
  talk over 127.0.0.1 (CPU collectives via gloo); process 0 prints and writes the outputs.
* explicitly, one command per process (any hosts): ``RETCON_COORDINATOR=host:port
  RETCON_NUM_PROCESSES=N RETCON_PROCESS_ID=i retcon simulate ...``.
* on a cluster whose environment JAX recognises (Slurm, Open MPI, ...): ``RETCON_DISTRIBUTED=auto``
  makes ``jax.distributed.initialize()`` read the process layout from it (docs/scale.md).

References: MODEL §3 (``U``, ``dU``), §4 (the partition by ``G_B``).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

from retcon.errors import InputError
from sim._chunks import add_chunks

ENV_COORDINATOR = "RETCON_COORDINATOR"
ENV_NUM_PROCESSES = "RETCON_NUM_PROCESSES"
ENV_PROCESS_ID = "RETCON_PROCESS_ID"
ENV_DISTRIBUTED = "RETCON_DISTRIBUTED"


def initialize(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    timeout_s: int = 300,
) -> None:
    """``jax.distributed.initialize`` with CPU collectives over gloo (needed for CPU devices).

    With no arguments JAX reads the process layout from the cluster's environment.
    """
    import jax

    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except (AttributeError, KeyError, ValueError):  # an older JAX without the option
        pass
    if coordinator is None:
        jax.distributed.initialize(initialization_timeout=timeout_s)
    else:
        jax.distributed.initialize(
            coordinator_address=coordinator,
            num_processes=num_processes,
            process_id=process_id,
            initialization_timeout=timeout_s,
        )


def initialize_from_env() -> bool:
    """Join a multi-process run described by the environment; ``False`` when there is none.

    ``RETCON_COORDINATOR``, ``RETCON_NUM_PROCESSES`` and ``RETCON_PROCESS_ID`` name it explicitly;
    ``RETCON_DISTRIBUTED=auto`` leaves it to JAX's cluster detection.

    Raises:
      InputError: a partial or malformed setting.
    """
    env = os.environ
    if env.get(ENV_DISTRIBUTED, "").lower() in ("auto", "1", "true"):
        initialize()
        return True
    coord = env.get(ENV_COORDINATOR)
    if not coord:
        return False
    try:
        n, i = int(env[ENV_NUM_PROCESSES]), int(env[ENV_PROCESS_ID])
    except (KeyError, ValueError):
        raise InputError(
            f"{ENV_COORDINATOR} is set ({coord!r}): {ENV_NUM_PROCESSES} and {ENV_PROCESS_ID} "
            f"must be integers; got {env.get(ENV_NUM_PROCESSES)!r} and {env.get(ENV_PROCESS_ID)!r}."
        ) from None
    if not (n >= 1 and 0 <= i < n):
        raise InputError(
            f"{ENV_PROCESS_ID} must be in [0, {ENV_NUM_PROCESSES}); got {i} of {n} processes."
        )
    initialize(coord, n, i)
    return True


def _gather_int64(x: np.ndarray) -> np.ndarray:
    """``(P, *x.shape)``: ``x`` of every process, exact (int64 sent as two int32 halves, so the
    gather is exact with or without ``jax_enable_x64``)."""
    from jax.experimental import multihost_utils

    x = np.ascontiguousarray(x, dtype=np.int64)
    lo = (x & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    hi = (x >> 32).astype(np.int32)
    g_lo = np.asarray(multihost_utils.process_allgather(lo), dtype=np.int32)
    g_hi = np.asarray(multihost_utils.process_allgather(hi), dtype=np.int32)
    return (g_hi.astype(np.int64) << 32) | g_lo.view(np.uint32).astype(np.int64)


def run_chunks_multiprocess(fn, n: int, chunk: int):
    """``run_chunks`` for a multi-process run, chunks of ``chunk`` queries (its ``layout`` over all
    devices): this process's chunks on its local devices, then the sums of all processes added.
    Returns ``(sums int64, counts int64)``."""
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    P, p = jax.process_count(), jax.process_index()
    local = jax.local_devices()
    if chunk % len(local):
        raise InputError(
            f"process {p} has {len(local)} devices; a chunk of {chunk} queries does not split "
            "over them (give every process the same number of devices)."
        )
    sharding = NamedSharding(Mesh(np.asarray(local), ("q",)), PartitionSpec("q"))
    total, counts = add_chunks(fn, range(0, n, chunk)[p::P], chunk, n, sharding)
    if total is None or counts is None:  # more processes than chunks: this one had none
        s, c = jax.eval_shape(
            fn,
            jax.ShapeDtypeStruct((chunk,), np.int32),
            jax.ShapeDtypeStruct((chunk,), np.bool_),
        )
        total, counts = np.zeros(s.shape, np.int64), np.zeros(c.shape, np.int64)
    # gloo announces its connections ("[Gloo] Rank 0 is connected to ...") on stdout: keep stdout
    # for results and stderr for messages meant for the user; its failures still raise.
    with _stdout_to_devnull():
        sums, cnt = _gather_int64(total).sum(0), _gather_int64(counts).sum(0)
    return sums, cnt


@contextlib.contextmanager
def _stdout_to_devnull():
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask; ``os.cpu_count()`` elsewhere)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_processes(option: str, processes) -> int:
    """``--processes P`` for one host: an integer in [1, cores]; refused before any process starts.

    Each process is a full JAX runtime (hundreds of MiB and its own thread pool), so more
    processes than cores only adds memory and contention; the numbers do not change with P.
    ``$RETCON_MAX_PROCESSES`` raises the cap for a user who knows better.

    Raises:
      InputError: naming ``option``, the value and the cap.
    """
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise InputError(f"{option} must be an integer >= 1; got {processes!r}.")
    cores = available_cores()
    cap = cores
    env = os.environ.get("RETCON_MAX_PROCESSES")
    if env:
        try:
            cap = int(env)
        except ValueError:
            raise InputError(f"$RETCON_MAX_PROCESSES must be an integer; got {env!r}.") from None
        if cap < 1:
            raise InputError(f"$RETCON_MAX_PROCESSES must be an integer >= 1; got {env!r}.")
    if processes > cap:
        raise InputError(
            f"{option} {processes}: this machine lets the run use {cores} CPU core"
            f"{'s' if cores != 1 else ''}; use at most {cap} processes on one host (the numbers "
            f"are the same for every P; more hosts: docs/scale.md)."
        )
    return processes


def launch(command: str, options: dict, processes: int, *, timeout_s: float | None = None) -> int:
    """Run ``retcon <command>`` as ``processes`` JAX processes on this host; returns the exit code.

    Process 0 inherits stdout and stderr and writes the outputs; the others stay quiet unless they
    fail. A failed process stops the others.

    Args:
      command: ``"simulate"`` or ``"stress"``.
      options: the parsed options (``vars(args)`` without the function), JSON-serializable.
      processes: the number of processes, >= 2.
    """
    env = {
        **os.environ,
        ENV_COORDINATOR: f"127.0.0.1:{_free_port()}",
        ENV_NUM_PROCESSES: str(processes),
    }
    env.pop(ENV_DISTRIBUTED, None)
    spec = json.dumps({"command": command, "options": options})
    procs = []
    for i in range(processes):
        quiet = subprocess.DEVNULL if i else None
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "retcon.commands.sim_worker", spec],
                env={**env, ENV_PROCESS_ID: str(i)},
                stdout=quiet,
            )
        )
    t0 = time.monotonic()
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [c for c in codes if c not in (None, 0)]
            if failed or all(c == 0 for c in codes):
                break
            if timeout_s is not None and time.monotonic() - t0 > timeout_s:
                failed = [124]
                break
            time.sleep(0.1)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    return failed[0] if failed else 0
