"""Ctrl-C ends a run with status 130 and one line, never a crash or a traceback (issue 48, item 1).

Each test runs the real entry point (``python -m retcon``, i.e. ``retcon.cli.entry``) in its own
process group and sends SIGINT to the group, as a terminal's Ctrl-C does. Before the fix an
interrupt in the JAX phase of ``pair simulate`` died with SIGSEGV in the interpreter's shutdown
(``main`` returned 130 while XLA's threads still ran), an interrupt during the shutdown printed a
``KeyboardInterrupt`` traceback from an exit hook (JAX's ``clear_backends``) with status 0, and an
interrupt that landed in JAX's garbage-collector callback was printed and ignored: the run went
on to the end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from retcon.cli import INTERRUPTED

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def _start(args: list[str], tmp_path, *, code: str | None = None) -> subprocess.Popen:
    """``python -m retcon ARGS`` (or ``python -c CODE``) in a new session, with Python's own
    SIGINT handler (a background job inherits SIGINT ignored) and a fresh cache (a cold JAX
    compile)."""
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "RETCON_DATA_DIR": str(tmp_path / "data"),
        "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "jax"),
    }
    body = code or (
        f"import runpy, sys\nsys.argv = ['retcon', *{args!r}]\n"
        "runpy.run_module('retcon', run_name='__main__', alter_sys=True)\n"
    )
    prog = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n" + body
    return subprocess.Popen(
        [sys.executable, "-c", prog],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _check_interrupted(proc: subprocess.Popen, name: str) -> str:
    """Wait for ``proc``; its status is 130 and stderr ends in the one interrupted line, with no
    traceback or fatal error anywhere. Returns its stdout."""
    out, err = proc.communicate(timeout=120)
    lines = err.strip().splitlines()
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert lines and lines[-1] == f"{name}: {INTERRUPTED}", err[-2000:]
    assert sum(INTERRUPTED in line for line in lines) == 1, err
    assert not [x for x in lines if "Traceback" in x or "Fatal" in x or "Exception" in x], err
    return out


def test_ctrl_c_in_the_jax_phase_of_pair_simulate(tmp_path):
    """The issue's case: SIGINT to the group a few seconds into ``pair simulate`` (JAX compiling
    and running). Before the fix: SIGSEGV (status -11) in 4 of 5 tries from 3 s on."""
    out = tmp_path / "p.jsonl"
    proc = _start(
        ["pair", "simulate", "--instances", "3000", "--groups", "7", "--output", str(out)],
        tmp_path,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the announcement: the arguments are checked, JAX comes next
    assert first.startswith("retcon pair simulate: "), first
    time.sleep(3.0)
    os.killpg(proc.pid, signal.SIGINT)
    _check_interrupted(proc, "retcon pair simulate")
    assert not out.exists()  # nothing partial: the file is renamed into place whole
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("p.jsonl")]


# A stand-in command: `retcon crossover` run through the entry point with a hook that sends
# SIGINT to the process at a chosen moment.
_GC_CALLBACK = """
import gc, os, signal, sys
from retcon import cli

def callback(phase, info):
    # the interrupt lands inside the garbage collector's callback, as in JAX's _xla_gc_callback
    if phase == "start" and signal.getsignal(signal.SIGINT) is cli._interrupt_once:
        gc.callbacks.remove(callback)
        os.kill(os.getpid(), signal.SIGINT)

gc.callbacks.append(callback)
sys.argv = ["retcon", "crossover", "--json"]
cli.entry()
"""

_AT_EXIT = """
import atexit, os, signal, sys
from retcon import cli

run = cli.main

def main():
    # an exit hook registered while the command runs (as JAX's clear_backends is, at its import)
    # that is interrupted after the command finished
    atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))
    return run()

cli.main = main
sys.argv = ["retcon", "crossover", "--json"]
cli.entry()
"""


def test_ctrl_c_inside_a_garbage_collector_callback_still_stops_the_run(tmp_path):
    """An interrupt swallowed where Python only prints exceptions is raised again in the command:
    status 130, one line, no "Exception ignored" (before: printed, and the run went on to 0)."""
    proc = _start([], tmp_path, code=_GC_CALLBACK)
    out = _check_interrupted(proc, "retcon")  # it lands while the parser is built
    assert out == ""  # the run did not go on


def test_ctrl_c_during_the_shutdown_after_a_finished_run(tmp_path):
    """A late Ctrl-C (in an exit hook): 130 and the one line, no traceback (before: a
    ``KeyboardInterrupt`` traceback from the hook and status 0). The answer was printed."""
    proc = _start([], tmp_path, code=_AT_EXIT)
    out = _check_interrupted(proc, "retcon crossover")
    assert out.startswith("{")
