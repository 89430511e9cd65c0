"""One worker process of ``retcon simulate/stress --processes N`` (``sim._multiprocess.launch``).

Run as ``python -m retcon.commands.sim_worker SPEC``: it joins the run and runs the command with
the parsed options. It calls the command line's own functions (``retcon.commands.sim``), so it
sits at the CLI layer (docs/architecture.md), apart from the library module ``sim._multiprocess``
that starts it.
"""

from __future__ import annotations

import json
import os
import signal
import sys

import jax

from retcon.errors import InputError, cli_spelling
from sim import ENV_PROCESS_ID


def _worker(spec: str) -> int:
    """One process of ``launch``: join the run, then run the command with the parsed options."""
    import argparse

    d = json.loads(spec)
    # the command joins the run (initialize_from_env) before any JAX work
    from retcon.commands import sim as cli

    func = {"simulate": cli.run_simulate, "stress": cli.run_stress}[d["command"]]
    args = argparse.Namespace(**d["options"], processes=1)
    try:
        with cli_spelling():  # messages name options, as in the parent process
            rc = int(func(args) or 0)
    except InputError as e:
        if os.environ.get(ENV_PROCESS_ID) == "0":
            sys.stderr.write(f"retcon {d['command']}: error: {e}\n")
        rc = 2
    try:
        jax.distributed.shutdown()
    except Exception:  # never initialized (the options were refused first)
        pass
    return rc


if __name__ == "__main__":
    # Ctrl-C reaches every process of the group: the parent says the one line and stops the
    # others; a worker ends at once and quietly (its interpreter's shutdown under XLA's live
    # threads could crash or print a traceback, as the parent's could: ``retcon.cli.entry``).
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
    raise SystemExit(_worker(sys.argv[1]))
