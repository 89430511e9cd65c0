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
``retcon.commands.common``, below them; nothing imports this module but ``retcon.__main__``: it
sits on top of every layer (docs/architecture.md).
"""

from __future__ import annotations

import _thread
import argparse
import atexit
import importlib
import logging
import os
import signal
import sys
from typing import NoReturn

from retcon.commands import _progress, common
from retcon.commands._progress import quiet_xla
from retcon.commands.common import add_verbosity, verbosity
from retcon.errors import InputError, cli_spelling

# Modules whose `register(subparsers)` adds subcommands, in the order `--help` lists them.
_COMMAND_MODULES = (
    "retcon.commands.theory",
    "retcon.commands.advise",
    "retcon.commands.sim",
    "retcon.commands.oas",
    "retcon.commands.real",
    "retcon.commands.fidelity",
    "retcon.commands.llm_check",
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


# The line of an interrupted run (after ``retcon CMD: ``); the run's exit status is 130.
INTERRUPTED = "interrupted; finished outputs and caches are kept."


class _Interrupt:
    """The process's Ctrl-C state, read by ``entry``'s signal handlers: the command's name for
    the line, and whether the line was written (it is written once)."""

    name = "retcon"
    said = False
    redeliver = False  # a swallowed KeyboardInterrupt is being raised again (``_unraisable``)


def _say_interrupted(*, raw: bool = False) -> None:
    """Flush stdout and stderr, then write the interrupted line once: through ``sys.stderr``, or
    with ``raw`` (from a signal handler, which may run inside a write) straight to fd 2."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError):
            pass
    if _Interrupt.said:
        return
    _Interrupt.said = True
    line = f"{_Interrupt.name}: {INTERRUPTED}\n"
    try:
        if raw:
            os.write(2, line.encode())
        else:
            sys.stderr.write(line)
            sys.stderr.flush()
    except (OSError, ValueError, RuntimeError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Run ``retcon ARGV`` (``sys.argv[1:]`` by default) in this process; return its exit status.

    Callers in Python (the tests) use it; the ``retcon`` script runs ``entry``, which ends the
    process at once after an interrupted run. Ctrl-C at any point (parsing, imports, the work, the
    error handlers) writes one line and returns 130.
    """
    _Interrupt.name, _Interrupt.said = "retcon", False
    try:
        return _main(argv)
    except KeyboardInterrupt:
        _say_interrupted()
        return 130


def _main(argv: list[str] | None) -> int:
    common.ARGV[:] = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stdout)
        return 2
    v = verbosity(args)
    quiet_xla()  # before any command imports JAX: XLA's compile alarms are not failures
    configure_logging(logging.DEBUG if v > 0 else logging.WARNING if v < 0 else logging.INFO)
    name = _progress.command_name(args)  # retcon pair locomo, retcon timeline identify, ...
    _Interrupt.name = name
    try:
        try:
            with cli_spelling():  # messages name options (--compress-ratio), not arguments
                status = int(args.func(args) or 0)
        except BaseException:
            # A refusal (or an interrupt) before the first stage is its one line: the pending
            # announcement of what the command would have done is dropped.
            _progress.drop()
            raise
        _progress.show()  # a run quicker than the announcement's grace still says it
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except InputError as e:
        sys.stderr.write(f"{name}: error: {e}\n")
        return 2
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
        sys.stderr.write(f"{name}: error: {os_error_line(e, _option_of(parser, args, e))}\n")
        return 2


def _interrupt_now(signum, frame) -> None:
    """SIGINT after the first one, or after the command finished: the line, then exit 130 at
    once (nothing of the run is left to finish: its files are in place or never staged)."""
    _say_interrupted(raw=True)
    os._exit(130)


def _interrupt_once(signum, frame) -> None:
    """The first SIGINT: a ``KeyboardInterrupt`` in the command, so its ``with`` blocks remove
    what they staged; another Ctrl-C while it unwinds ends the process at once."""
    if not _Interrupt.redeliver:
        signal.signal(signal.SIGINT, _interrupt_now)
    _Interrupt.redeliver = False
    raise KeyboardInterrupt


def _unraisable(hook):
    """``sys.unraisablehook`` that delivers a swallowed ``KeyboardInterrupt`` again.

    The interrupt can land in code whose exceptions Python only prints ("Exception ignored in"),
    JAX's garbage-collector callback above all (3 of 13 early Ctrl-Cs of ``pair simulate``); the
    run then went on to the end with a traceback on stderr. Here it is raised again in the
    command (``_thread.interrupt_main``), where it unwinds as any other.
    """

    def unraisable(u) -> None:
        if isinstance(u.exc_value, KeyboardInterrupt):
            _Interrupt.redeliver = True
            _thread.interrupt_main(signal.SIGINT)
            return
        hook(u)

    return unraisable


def entry() -> NoReturn:
    """The ``retcon`` script and ``python -m retcon``: ``main``, then an exit that Ctrl-C cannot
    turn into a crash.

    An interrupted run ends with ``os._exit(130)`` once ``main`` has written its line and stdout
    and stderr are flushed: returning through the interpreter's shutdown while XLA's threads were
    still at work crashed it (SIGSEGV) or made JAX's exit hook print a ``KeyboardInterrupt``
    traceback. The files a run finished are in place by then (each is renamed into place whole,
    an ``--out`` set with its sidecar last; an interrupted set leaves none of its files); an LLM
    cache's journal, left by the exit, is replayed by the next run. A second Ctrl-C while the
    command unwinds, or one during the exit hooks after a finished run, ends the process at once
    with the same line and status 130; one in the last instants of the interpreter's teardown,
    after every exit hook, is ignored (the run has finished; its status stands).
    """
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not ignored (nohup, &)
        signal.signal(signal.SIGINT, _interrupt_once)
        sys.unraisablehook = _unraisable(sys.unraisablehook)
        # Registered before any library's exit hook, so it runs after all of them: past them the
        # interpreter resets Python's handlers to the default, and a Ctrl-C there killed the
        # finished run by the signal (status -2, no line); it is ignored there instead.
        atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)
    try:
        status = main()
    except SystemExit as e:  # argparse: help, --version, a refused option
        status = e.code
    if status == 130:
        _say_interrupted(raw=True)
        os._exit(130)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupt_now)
    sys.exit(status)


def os_error_line(e: OSError, option: tuple[str, str] | None = None) -> str:
    """``'PATH': STRERROR [ENAME]`` for an ``OSError``, the words a user can act on; with
    ``option`` (the option and its path, ``_option_of``) the line starts with them."""
    import errno
    import re

    code = errno.errorcode.get(e.errno or 0, "")
    what = e.strerror or str(e) or type(e).__name__
    # A file of an --out set is named where it was going, not in the hidden staging folder.
    name = re.sub(r"[/\\]\.retcon-staging-\d+(?=[/\\])", "", str(e.filename))
    where = f"{name!r}: " if e.filename is not None else ""
    if e.filename2 is not None:
        where = f"{str(e.filename)!r} -> {str(e.filename2)!r}: "
    if option is not None:
        flag, value = option
        where = f"{flag} {where}" if name == value else f"{flag} {value!r}: {where}"
    return f"{where}{what}" + (f" [{code}]" if code else "") + "."


def _option_of(
    parser: argparse.ArgumentParser, args: argparse.Namespace, e: OSError
) -> tuple[str, str] | None:
    """The option of the run whose path is the file of ``e`` or a folder above it (the nearest),
    and that path: ``("--out", "d")`` for a write that failed in ``d/.retcon-staging-1/a.json``,
    ``("--output", "p.jsonl")`` for ``p.jsonl`` or a file it keeps beside it (``p.jsonl.lock``,
    ``p.jsonl.partial``). ``None`` when no option names it."""
    if e.filename is None:
        return None
    try:
        target = os.path.abspath(os.fsdecode(e.filename))
    except (TypeError, ValueError):
        return None
    best: tuple[int, str, str] | None = None
    todo = [parser]
    while todo:  # the parsers of the command run: the top one, then each chosen subcommand's
        p = todo.pop()
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(args, action.dest or "", None) or "")
                if chosen is not None:
                    todo.append(chosen)
                continue
            value = getattr(args, action.dest, None) if action.option_strings else None
            if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
                continue
            root = os.path.abspath(os.fspath(value))
            inside = target.startswith(root.rstrip(os.sep) + os.sep)
            beside = target.startswith(root + ".") and not os.path.isdir(root)  # p.jsonl.lock
            nearer = best is None or len(root) > best[0]
            if (target == root or inside or beside) and nearer:
                flag = max(action.option_strings, key=len)  # --output, not -o
                best = (len(root), flag, str(os.fspath(value)))
    return None if best is None else (best[1], best[2])


if __name__ == "__main__":
    entry()
