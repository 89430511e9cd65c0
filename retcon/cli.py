"""The ``retcon`` command line: one subcommand per job, registered by the package that owns it.

Conventions every subcommand follows:
  * ``--json`` prints exactly one JSON object on stdout and nothing else there; NaN and infinities
    are ``null`` with the reason in a ``status`` field (``retcon.output.to_jsonable``);
  * ``--out DIR`` is always a folder for figures, tables and a JSON sidecar (config, seed,
    version), written as one set (``retcon.output.OutputSet``); a single output file has its own
    option (``--output FILE``, ``--router-out FILE``, ``--decisions FILE``); every output target is
    checked before the work starts, and the command says what it wrote where;
  * ``--seed S`` (default 0, an integer in [0, 2**32)) is the root JAX key of the run;
  * ``-v`` / ``-q`` make the progress messages on stderr more or less verbose;
  * help goes to stdout; bad input exits with status 2 and one line on stderr naming the option,
    file, row or field, what was expected and what came; never a traceback.

This module is the dispatcher: it builds the parser from the command modules and runs one command,
turning its refusals, interrupts and OS errors into one line and an exit status. Each package's
command line is a module of ``retcon.commands`` (``retcon.commands.theory`` for ``crossover``,
``retcon.commands.sim`` for ``simulate`` and ``stress``, ...) with ``register(subparsers)``; it
adds its parsers and sets ``func`` to a ``run(args) -> int`` that imports the package it drives
inside the function, so ``retcon --help`` stays fast. The helpers the command modules share (the
common options, list parsing, ``emit``, ``write_set``) are the plumbing,
``retcon.commands._common``, below them; nothing imports this module but ``retcon.__main__``: it
sits on top of every layer (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from retcon.commands._common import add_verbosity, verbosity
from retcon.commands._progress import quiet_xla
from retcon.errors import InputError, cli_spelling

# Modules whose `register(subparsers)` adds subcommands, in the order `--help` lists them.
_COMMAND_MODULES = (
    "retcon.commands.theory",
    "retcon.commands.sim",
    "retcon.commands.oas",
    "retcon.commands.real",
    "retcon.commands.timeline",
    "retcon.commands.identify",
    "retcon.commands.paper_checks",
    "retcon.commands.bench",
)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``retcon crossover: error: ...`` and exit status 2."""

    def error(self, message: str):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


class _VersionAction(argparse.Action):
    """``--version``: print ``retcon VERSION`` on stdout and exit; the version is read only then."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        kwargs.setdefault("help", "show the version and exit")
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from retcon import __version__

        sys.stdout.write(f"retcon {__version__}\n")
        parser.exit()


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="retcon",
        description="Retain or consolidate: budget-dependent memory operator selection (theory, simulation, OAS router).",
    )
    parser.add_argument("--version", action=_VersionAction)
    add_verbosity(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


# The top-level packages whose module loggers (`logging.getLogger(__name__)`) the CLI shows.
_LOGGERS = ("retcon", "theory", "sim", "oas", "paper_checks", "experiments")


def configure_logging(level: int) -> None:
    """One stderr handler for the package loggers; INFO by default, WARNING with -q, DEBUG with -v."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for name in _LOGGERS:
        log = logging.getLogger(name)
        for h in list(log.handlers):
            if getattr(h, "_retcon_cli", False):
                log.removeHandler(h)
        handler._retcon_cli = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.setLevel(level)
        log.propagate = False


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stdout)
        return 2
    v = verbosity(args)
    quiet_xla()  # before any command imports JAX: XLA's compile alarms are not failures
    configure_logging(logging.DEBUG if v > 0 else logging.WARNING if v < 0 else logging.INFO)
    sub = getattr(args, "pair_command", None) or getattr(args, "data_command", None)
    name = f"{parser.prog} {args.command}" + (f" {sub}" if sub else "")
    try:
        with cli_spelling():  # messages name options (--compress-ratio), not arguments
            status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except InputError as e:
        sys.stderr.write(f"{name}: error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{name}: interrupted; finished outputs and caches are kept.\n")
        return 130
    except BrokenPipeError:
        # The reader of stdout went away (`| head`): not an error of the run. Point stdout at
        # devnull so the interpreter's final flush does not raise again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except OSError as e:
        # The machine refused a read or write (disk full, permission, a folder where a file
        # should be...): one line naming the path and the OS error; -v logs the traceback.
        logging.getLogger("retcon").debug("OS error", exc_info=True)
        sys.stderr.write(f"{name}: error: {os_error_line(e)}\n")
        return 2


def os_error_line(e: OSError) -> str:
    """``'PATH': STRERROR [ENAME]`` for an ``OSError``, the words a user can act on."""
    import errno

    code = errno.errorcode.get(e.errno or 0, "")
    what = e.strerror or str(e) or type(e).__name__
    where = f"{str(e.filename)!r}: " if e.filename is not None else ""
    if e.filename2 is not None:
        where = f"{str(e.filename)!r} -> {str(e.filename2)!r}: "
    return f"{where}{what}" + (f" [{code}]" if code else "") + "."


if __name__ == "__main__":
    raise SystemExit(main())
