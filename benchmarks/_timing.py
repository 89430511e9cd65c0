"""Timing and peak memory: interleaved best-of-r timings, and one subprocess per measured size.

Ratios are taken between implementations timed alternately in the same run (A, B, A, B, ...), so
a load spike on a shared machine hits both; each figure is the best (least disturbed) repeat.
Peak memory is the resident set high-water mark (``ru_maxrss``) of a fresh subprocess, which sees
XLA's buffers as well as numpy's (``tracemalloc`` sees neither XLA nor every numpy allocation).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time


def block(x):
    """Wait for JAX arrays in ``x`` (any pytree) so a timing covers the computation. Where JAX is
    not imported, ``x`` holds no JAX array and is returned as it is: a numpy timing does not
    import JAX."""
    jax = sys.modules.get("jax")
    return x if jax is None else jax.block_until_ready(x)


def interleaved(
    fns: dict, repeats: int, *, first: dict | None = None, slow_s: float = 10.0
) -> dict:
    """Best wall time in seconds of each callable in ``fns``, timed alternately ``repeats`` times.

    Args:
      fns: name -> callable (its result is waited for when it holds JAX arrays).
      repeats: rounds; the best (least disturbed) time of each callable is kept.
      first: times already measured (e.g. during the agreement check), counted as the first round.
      slow_s: a callable that has once taken this long is not repeated (its figure is one run:
        at that length the noise is small against the time, and repeats would cost minutes).
    """
    best = {k: float("inf") for k in fns}
    runs = dict.fromkeys(fns, 0)
    for k, v in (first or {}).items():
        if k in fns:
            best[k], runs[k] = v, 1
    for _ in range(max(repeats, 1)):
        for k, fn in fns.items():
            if runs[k] >= max(repeats, 1) or (runs[k] and best[k] >= slow_s):
                continue
            t0 = time.perf_counter()
            block(fn())
            best[k] = min(best[k], time.perf_counter() - t0)
            runs[k] += 1
    return best


def alternate(fns: dict, rounds: int, *, warmup: bool = True, each_round=None) -> tuple:
    """Wall and process CPU seconds of every run of each callable in ``fns``, run in turn (A, B,
    C, A, ...) ``rounds`` times, so a load change hits every one alike; with ``warmup``, each once
    first (it compiles). Results holding JAX arrays are waited for. ``each_round(r)`` is called
    before round ``r`` (0-based). Returns ``(wall, cpu)``: name -> list of seconds.
    """
    if warmup:
        for fn in fns.values():
            block(fn())
    wall: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    for r in range(rounds):
        if each_round is not None:
            each_round(r)
        for k, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            block(fn())
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
    return wall, cpu


def rss_peak_mib() -> float:
    """This process's resident set high-water mark in MiB.

    ``VmHWM`` of ``/proc/self/status`` belongs to this process's own address space (a new one at
    ``exec``); ``ru_maxrss`` is used only where ``/proc`` is missing, and it can carry the parent's
    figure over a fork.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def reset_rss_peak() -> bool:
    """Reset the high-water mark to the current resident set (Linux >= 4.0); False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def rss_now_mib() -> float:
    """This process's current resident set in MiB (``/proc/self/statm``; 0 where unavailable)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def run_worker(
    task: str,
    spec: dict,
    *,
    env: dict | None = None,
    unset: tuple[str, ...] = (),
    timeout: float | None = None,
) -> dict:
    """Run ``benchmarks._worker`` for one task in a fresh Python; return the JSON it prints last.

    Args:
      task: the worker task name (``sim_jax``, ``sim_numpy``, ``scaleout``).
      spec: JSON-serializable arguments of the task.
      env: extra environment variables (e.g. ``XLA_FLAGS`` forcing host devices).
      unset: environment variables removed in the worker only (e.g. ``OPENBLAS_CORETYPE``).
      timeout: seconds before the subprocess is stopped.
    """
    full_env = dict(os.environ)
    full_env.update(env or {})
    for name in unset:
        full_env.pop(name, None)
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks._worker", task, json.dumps(spec)],
        check=False,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"benchmark worker {task} {spec} failed (exit {proc.returncode}):\n"
            f"{proc.stderr[-4000:]}"
        )
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    return json.loads(lines[-1])
